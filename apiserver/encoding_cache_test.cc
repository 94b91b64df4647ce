#include "apiserver/encoding_cache.h"

#include <gtest/gtest.h>
#include <vector>

namespace berth::apiserver {
namespace {

store::WatchEvent Event(store::EventType type, store::ObjectPtr object) {
  store::WatchEvent ev;
  ev.type = type;
  ev.object = std::move(object);
  return ev;
}

store::ObjectPtr Obj(const std::string& name) {
  return std::make_shared<const api::Object>(api::Object{{"metadata", {{"name", name}}}});
}

// Encodes as "<name> <type> <n>" where n counts the calls, so a cached line is told
// apart from a fresh one.
struct CountingEncoder {
  int calls = 0;
  std::function<std::string(const store::WatchEvent&)> fn() {
    return [this](const store::WatchEvent& ev) {
      return (*ev.object)["metadata"]["name"].get<std::string>() + " " + store::EventTypeName(ev.type) + " " +
             std::to_string(++calls);
    };
  }
};

TEST(EncodingCacheTest, OneEncodingPerObjectTypeAndEncoding) {
  EncodingCache cache;
  CountingEncoder enc;
  auto a = Obj("a");
  const auto added = Event(store::EventType::kAdded, a);
  EXPECT_EQ(*cache.Line(added, "v1", enc.fn()), "a ADDED 1");
  EXPECT_EQ(*cache.Line(added, "v1", enc.fn()), "a ADDED 1");  // a second watcher: shared
  EXPECT_EQ(*cache.Line(Event(store::EventType::kModified, a), "v1", enc.fn()), "a MODIFIED 2");
  EXPECT_EQ(*cache.Line(added, "v2", enc.fn()), "a ADDED 3");
  // The same content in another object (another revision) is another event.
  EXPECT_EQ(*cache.Line(Event(store::EventType::kAdded, Obj("a")), "v1", enc.fn()), "a ADDED 4");
  EXPECT_EQ(enc.calls, 4);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().misses, 4u);
  EXPECT_EQ(cache.stats().entries, 4u);
}

TEST(EncodingCacheTest, OldestEntriesGoPastTheEntryBound) {
  EncodingCache cache(/*max_entries=*/2, /*max_bytes=*/1 << 20);
  CountingEncoder enc;
  std::vector<store::WatchEvent> events;
  for (const char* name : {"a", "b", "c"}) events.push_back(Event(store::EventType::kAdded, Obj(name)));
  for (const auto& ev : events) cache.Line(ev, "v1", enc.fn());
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(*cache.Line(events[2], "v1", enc.fn()), "c ADDED 3");  // kept
  EXPECT_EQ(*cache.Line(events[1], "v1", enc.fn()), "b ADDED 2");  // kept
  EXPECT_EQ(*cache.Line(events[0], "v1", enc.fn()), "a ADDED 4");  // evicted: encoded again
}

TEST(EncodingCacheTest, BytesAreBoundedAndALineOverTheBoundIsNotKept) {
  EncodingCache cache(/*max_entries=*/100, /*max_bytes=*/20);
  CountingEncoder enc;
  auto a = Event(store::EventType::kAdded, Obj("a"));  // "a ADDED n": 9 bytes
  auto b = Event(store::EventType::kAdded, Obj("b"));
  auto c = Event(store::EventType::kAdded, Obj("c"));
  cache.Line(a, "v1", enc.fn());
  cache.Line(b, "v1", enc.fn());
  EXPECT_EQ(cache.stats().bytes, 18u);
  cache.Line(c, "v1", enc.fn());  // 27 bytes > 20: a goes
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(cache.stats().bytes, 18u);

  auto big = Event(store::EventType::kAdded, Obj(std::string(30, 'x')));
  EXPECT_EQ(cache.Line(big, "v1", enc.fn())->size(), 38u);
  EXPECT_EQ(cache.stats().entries, 2u);  // too big to keep; nothing evicted for it
  EXPECT_EQ(cache.stats().bytes, 18u);
}

// The entry keeps its object alive, so a new object can never take the address of
// one whose line is cached.
TEST(EncodingCacheTest, AnEntryPinsItsObject) {
  EncodingCache cache;
  CountingEncoder enc;
  auto a = Obj("a");
  std::weak_ptr<const api::Object> weak = a;
  cache.Line(Event(store::EventType::kAdded, std::move(a)), "v1", enc.fn());
  EXPECT_FALSE(weak.expired());
}

// Objects answered by GET and LIST: one text per object and form; the first insert
// of a key wins, so two readers that both missed answer with the same text.
TEST(EncodingCacheTest, ObjectTextsAreFoundByObjectAndForm) {
  EncodingCache cache;
  auto a = Obj("a");
  EXPECT_EQ(cache.Find(a.get(), "v1"), nullptr);
  EXPECT_EQ(*cache.Insert(a, "v1", "a in v1"), "a in v1");
  EXPECT_EQ(*cache.Insert(a, "v1", "a in v1, again"), "a in v1");
  ASSERT_NE(cache.Find(a.get(), "v1"), nullptr);
  EXPECT_EQ(*cache.Find(a.get(), "v1"), "a in v1");
  EXPECT_EQ(cache.Find(a.get(), "v2"), nullptr);
  // Another revision of the same object is another stored object: not found.
  EXPECT_EQ(cache.Find(Obj("a").get(), "v1"), nullptr);
  // A watch line of the object is another form.
  CountingEncoder enc;
  EXPECT_EQ(*cache.Line(Event(store::EventType::kAdded, a), "v1", enc.fn()), "a ADDED 1");
  EXPECT_EQ(cache.stats().entries, 2u);
}

}  // namespace
}  // namespace berth::apiserver
