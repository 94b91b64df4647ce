// WatchHub: the history is kept per resource, bounded in events and bytes in all, the busiest resource giving way.
#include "store/watch_hub.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>
#include <vector>

namespace berth::store {
namespace {

const api::GroupResource kConfigMaps{"", "configmaps"};
const api::GroupResource kEvents{"", "events"};

// A ConfigMap whose data holds `bytes` bytes of 'x'.
ObjectPtr ConfigMap(const std::string& name, size_t bytes) {
  api::Object obj = {{"apiVersion", "v1"},
                     {"kind", "ConfigMap"},
                     {"metadata", {{"name", name}, {"namespace", "default"}}},
                     {"data", {{"big", std::string(bytes, 'x')}}}};
  return std::make_shared<const api::Object>(std::move(obj));
}

void PublishAdded(WatchHub& hub, int64_t revision, size_t bytes, const api::GroupResource& resource = kConfigMaps) {
  HistoryEvent ev;
  ev.revision = revision;
  ev.type = EventType::kAdded;
  ev.key = ObjectKey{resource, "default", "cm-" + std::to_string(revision)};
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
  const int64_t compacted = hub->CompactedRevision(kConfigMaps);
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
  EXPECT_EQ(hub->CompactedRevision(kConfigMaps), 1);
}

// The revisions a watch of `resource` from `from` replays, or {-1} when it is refused as too old.
std::vector<int64_t> Replayed(WatchHub& hub, const api::GroupResource& resource, int64_t from, int64_t current) {
  WatchOptions o;
  o.from_revision = from;
  auto w = hub.AddWatcher(resource, o, current);
  if (!w.ok()) return {w.status().code() == Code::kGone ? -1 : -2};
  std::vector<int64_t> out;
  for (;;) {
    auto ev = (*w)->TryNext();
    if (!ev.ok() || !ev->has_value()) return out;
    out.push_back((*ev)->revision);
  }
}

// A burst of writes to one resource (Events: 15 per Job) pushes out its own history, not that
// of a quieter resource: a watch of the quiet one resumes from before the burst.
TEST(WatchHubTest, ABurstOnOneResourceLeavesAnothersHistoryWhole) {
  auto hub = std::make_shared<WatchHub>(/*history_limit=*/5, 100, 0, kMaxWatchHistoryBytes);
  PublishAdded(*hub, 1, 10, kConfigMaps);
  PublishAdded(*hub, 2, 10, kConfigMaps);
  for (int64_t rev = 3; rev <= 100; ++rev) PublishAdded(*hub, rev, 10, kEvents);
  EXPECT_EQ(hub->HistorySize(), 5u);
  EXPECT_EQ(hub->CompactedRevision(kConfigMaps), 0);
  EXPECT_EQ(hub->CompactedRevision(kEvents), 97);
  EXPECT_EQ(Replayed(*hub, kConfigMaps, 0, 100), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Replayed(*hub, kConfigMaps, 1, 100), (std::vector<int64_t>{2}));
  EXPECT_EQ(Replayed(*hub, kEvents, 97, 100), (std::vector<int64_t>{98, 99, 100}));
  EXPECT_EQ(Replayed(*hub, kEvents, 96, 100), (std::vector<int64_t>{-1}));
  // Once the quiet resource holds as many events, it gives way in its turn (on a tie, the
  // resource whose oldest event is older): 3 ConfigMaps (1, 2, 101) against 3 Events drop
  // revision 1, then (2, 101, 102) drop 2; the Events keep theirs.
  PublishAdded(*hub, 101, 10, kConfigMaps);
  EXPECT_EQ(hub->CompactedRevision(kConfigMaps), 1);
  PublishAdded(*hub, 102, 10, kConfigMaps);
  EXPECT_EQ(hub->HistorySize(), 5u);
  EXPECT_EQ(Replayed(*hub, kConfigMaps, 2, 102), (std::vector<int64_t>{101, 102}));
  EXPECT_EQ(Replayed(*hub, kConfigMaps, 1, 102), (std::vector<int64_t>{-1}));
  EXPECT_EQ(Replayed(*hub, kEvents, 97, 102), (std::vector<int64_t>{98, 99, 100}));
  // A resource never written is watchable from the hub's start.
  EXPECT_EQ(Replayed(*hub, api::GroupResource{"batch", "jobs"}, 0, 100), (std::vector<int64_t>{}));
  // Consistent list pages read the same per-resource history.
  std::vector<int64_t> since;
  ASSERT_TRUE(hub->EventsSince(kConfigMaps, "", 2, [&](const HistoryEvent& ev) { since.push_back(ev.revision); }).ok());
  EXPECT_EQ(since, (std::vector<int64_t>{102, 101}));
  EXPECT_EQ(hub->EventsSince(kConfigMaps, "", 1, [](const HistoryEvent&) {}).code(), Code::kGone);
  EXPECT_EQ(hub->EventsSince(kEvents, "", 96, [](const HistoryEvent&) {}).code(), Code::kGone);
}

// Past the byte limit, the resource holding the most bytes gives up its oldest events; a small
// resource keeps its history, and every resource keeps its newest event.
TEST(WatchHubTest, OverTheByteLimitTheLargestResourceHistoryGivesWay) {
  constexpr size_t kByteLimit = 100 * 1024;
  auto hub = std::make_shared<WatchHub>(10000, 100, 0, kByteLimit);
  const size_t one = ApproxJsonBytes(*ConfigMap("cm-1", 10 * 1024));
  PublishAdded(*hub, 1, 10 * 1024, kConfigMaps);
  PublishAdded(*hub, 2, 10 * 1024, kConfigMaps);
  for (int64_t rev = 3; rev <= 60; ++rev) PublishAdded(*hub, rev, 10 * 1024, kEvents);
  EXPECT_LE(hub->HistoryBytes(), kByteLimit);
  EXPECT_EQ(hub->HistorySize(), kByteLimit / one);
  EXPECT_EQ(hub->CompactedRevision(kConfigMaps), 0);  // 2 events against the Events' 7: kept
  EXPECT_EQ(hub->CompactedRevision(kEvents), 60 - static_cast<int64_t>(kByteLimit / one - 2));
  // One huge ConfigMap: the ConfigMaps now hold the most bytes and give up their older events,
  // then the Events theirs down to the newest; each resource's newest event stays.
  PublishAdded(*hub, 61, 200 * 1024, kConfigMaps);
  EXPECT_EQ(hub->HistorySize(), 2u);
  EXPECT_EQ(hub->CompactedRevision(kEvents), 59);
  EXPECT_EQ(hub->CompactedRevision(kConfigMaps), 2);
  EXPECT_EQ(Replayed(*hub, kEvents, 59, 61), (std::vector<int64_t>{60}));
  EXPECT_EQ(Replayed(*hub, kConfigMaps, 2, 61), (std::vector<int64_t>{61}));
}

}  // namespace
}  // namespace berth::store
