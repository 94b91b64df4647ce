// WatchHub: the history is bounded in bytes as well as in events.
#include "store/watch_hub.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>

namespace berth::store {
namespace {

const api::GroupResource kConfigMaps{"", "configmaps"};

// A ConfigMap whose data holds `bytes` bytes of 'x'.
ObjectPtr ConfigMap(const std::string& name, size_t bytes) {
  api::Object obj = {{"apiVersion", "v1"},
                     {"kind", "ConfigMap"},
                     {"metadata", {{"name", name}, {"namespace", "default"}}},
                     {"data", {{"big", std::string(bytes, 'x')}}}};
  return std::make_shared<const api::Object>(std::move(obj));
}

void PublishAdded(WatchHub& hub, int64_t revision, size_t bytes) {
  HistoryEvent ev;
  ev.revision = revision;
  ev.type = EventType::kAdded;
  ev.key = ObjectKey{kConfigMaps, "default", "cm-" + std::to_string(revision)};
  ev.object = ConfigMap(ev.key.name, bytes);
  std::vector<HistoryEvent> events;
  events.push_back(std::move(ev));
  hub.Publish(std::move(events), revision);
}

TEST(WatchHubTest, ApproxJsonBytesIsTheCompactJsonSizeOfStringsAndNesting) {
  api::Object obj = {{"a", {{"b", "ccc"}, {"d", {"e", "f", true, nullptr}}}}, {"g", api::Object::array()}};
  EXPECT_EQ(ApproxJsonBytes(obj), obj.dump().size());
  EXPECT_EQ(ApproxJsonBytes(api::Object::object()), 2u);
}

TEST(WatchHubTest, HistoryIsBoundedInBytesAndAWatchFromACompactedRevisionIsGone) {
  constexpr size_t kByteLimit = 100 * 1024;
  constexpr size_t kObjectBytes = 10 * 1024;
  // Room for 10,000 events, but only about 9 objects of 10 KiB fit in 100 KiB.
  auto hub = std::make_shared<WatchHub>(10000, 100, 0, kByteLimit);
  for (int64_t rev = 1; rev <= 50; ++rev) PublishAdded(*hub, rev, kObjectBytes);

  const size_t one = ApproxJsonBytes(*ConfigMap("cm-10", kObjectBytes));
  EXPECT_EQ(hub->HistorySize(), kByteLimit / one);
  EXPECT_LE(hub->HistoryBytes(), kByteLimit);
  EXPECT_EQ(hub->HistoryBytes(), hub->HistorySize() * one);
  const int64_t compacted = hub->CompactedRevision();
  EXPECT_EQ(compacted, 50 - static_cast<int64_t>(hub->HistorySize()));

  WatchOptions from_old;
  from_old.from_revision = 1;
  auto gone = hub->AddWatcher(kConfigMaps, from_old, 50);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::kGone);

  WatchOptions from_kept;
  from_kept.from_revision = compacted;
  auto w = hub->AddWatcher(kConfigMaps, from_kept, 50);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  int64_t next = compacted + 1;
  for (;;) {
    auto ev = (*w)->TryNext();
    ASSERT_TRUE(ev.ok());
    if (!ev->has_value()) break;
    EXPECT_EQ((*ev)->revision, next++);
  }
  EXPECT_EQ(next, 51);
}

TEST(WatchHubTest, AnEventLargerThanTheByteLimitIsKeptAlone) {
  auto hub = std::make_shared<WatchHub>(10000, 100, 0, 1024);
  PublishAdded(*hub, 1, 10);
  PublishAdded(*hub, 2, 4096);
  EXPECT_EQ(hub->HistorySize(), 1u);
  EXPECT_EQ(hub->CompactedRevision(), 1);
}

}  // namespace
}  // namespace berth::store
