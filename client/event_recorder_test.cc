#include "client/event_recorder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "client/testing/fake_client.h"

namespace berth::client {
namespace {

const GroupVersionResource kEvents{"", "v1", "events"};

api::Object Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "team"}, {"uid", "uid-" + name}, {"resourceVersion", "7"}}}};
}

class EventRecorderTest : public ::testing::Test {
 protected:
  // The Events written once everything `recorder` queued is written.
  std::vector<api::Object> Events(EventRecorder& recorder) {
    recorder.Flush();
    auto list = client_.List(kEvents.Namespace("team"));
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    return list.ok() ? list->items : std::vector<api::Object>{};
  }
  FakeClock clock_{Time{} + std::chrono::hours(24 * 365 * 56)};
  testing::FakeClient client_{clock_};
};

TEST_F(EventRecorderTest, KubeletEventNamesTheContainerAndTheNode) {
  EventRecorder recorder(client_, clock_, "kubelet", "node-1");
  recorder.Event(Pod("p"), "spec.containers{main}", kEventTypeNormal, "Started", "Started container main");
  auto events = Events(recorder);
  ASSERT_EQ(events.size(), 1u);
  const api::Object& ev = events[0];
  EXPECT_EQ(ev["involvedObject"]["fieldPath"], "spec.containers{main}");
  EXPECT_EQ(ev["involvedObject"]["kind"], "Pod");
  EXPECT_EQ(ev["involvedObject"]["uid"], "uid-p");
  EXPECT_EQ(ev["source"], (api::Object{{"component", "kubelet"}, {"host", "node-1"}}));
  EXPECT_EQ(ev["reportingComponent"], "kubelet");
  EXPECT_EQ(ev["reportingInstance"], "node-1");
  EXPECT_EQ(ev["reason"], "Started");
  EXPECT_EQ(ev["count"], 1);
}

TEST_F(EventRecorderTest, ARepeatPatchesTheCountAndADifferentContainerIsAnotherEvent) {
  EventRecorder recorder(client_, clock_, "kubelet", "node-1");
  for (int i = 0; i < 3; ++i) {
    recorder.Event(Pod("p"), "spec.containers{a}", kEventTypeWarning, "BackOff", "Back-off a");
    clock_.Advance(std::chrono::seconds(10));
  }
  recorder.Event(Pod("p"), "spec.containers{b}", kEventTypeWarning, "BackOff", "Back-off a");
  auto events = Events(recorder);
  ASSERT_EQ(events.size(), 2u);
  int64_t counts = 0;
  for (const auto& ev : events) {
    if (ev["involvedObject"]["fieldPath"] == "spec.containers{a}") {
      counts = ev["count"].get<int64_t>();
      EXPECT_NE(ev["firstTimestamp"], ev["lastTimestamp"]);
    }
  }
  EXPECT_EQ(counts, 3);
}

// client-go's EventSourceObjectSpamFilter: 25 Events per source and object, then one
// per 5 minutes; a repeat that passes still patches the one Event.
TEST_F(EventRecorderTest, TheSpamFilterBoundsACrashLoop) {
  EventRecorder recorder(client_, clock_, "kubelet", "node-1");
  for (int i = 0; i < 100; ++i) {
    recorder.Event(Pod("p"), "spec.containers{a}", kEventTypeWarning, "BackOff", "Back-off restarting");
    clock_.Advance(std::chrono::seconds(1));
  }
  auto events = Events(recorder);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], kEventSpamBurst);
  // 100 s later the bucket has refilled by 100/300 of a token: still dropped.
  recorder.Event(Pod("p"), "spec.containers{a}", kEventTypeWarning, "BackOff", "Back-off restarting");
  EXPECT_EQ(Events(recorder)[0]["count"], kEventSpamBurst);
  clock_.Advance(kEventSpamRefill);
  recorder.Event(Pod("p"), "spec.containers{a}", kEventTypeWarning, "BackOff", "Back-off restarting");
  EXPECT_EQ(Events(recorder)[0]["count"], kEventSpamBurst + 1);
  // Another object has its own bucket.
  recorder.Event(Pod("q"), kEventTypeNormal, "Killing", "Stopping container a");
  EXPECT_EQ(Events(recorder).size(), 2u);
}

// events_cache.go EventAggregator: the 10th distinct message of one reason about one
// object within 10 minutes is combined.
TEST_F(EventRecorderTest, SimilarEventsAreCombined) {
  EventRecorder recorder(client_, clock_, "job-controller");
  for (int i = 0; i < kEventAggregateMaxEvents + 2; ++i) {
    recorder.Event(Pod("p"), kEventTypeNormal, "SuccessfulCreate", "Created pod: p-" + std::to_string(i));
  }
  auto events = Events(recorder);
  ASSERT_EQ(events.size(), static_cast<size_t>(kEventAggregateMaxEvents));
  int combined = 0;
  for (const auto& ev : events) {
    if (ev["message"].get<std::string>().starts_with("(combined from similar events): ")) {
      ++combined;
      EXPECT_EQ(ev["count"], 3);
    }
  }
  EXPECT_EQ(combined, 1);
}

TEST_F(EventRecorderTest, ClusterScopedObjectsGoToTheDefaultNamespace) {
  EventRecorder recorder(client_, clock_, "node-controller");
  recorder.Event({{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}, {"uid", "u"}}}},
                 kEventTypeNormal, "RegisteredNode", "Node n1 event: Registered Node n1");
  recorder.Flush();
  auto list = client_.List(kEvents.Namespace("default"));
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_FALSE(list->items[0]["involvedObject"].contains("namespace"));
  EXPECT_FALSE(list->items[0].contains("reportingInstance"));
}

// A caller never waits for the store (client-go's broadcaster): Event() returns while the
// write it queued is held up, and the write lands once the store answers.
TEST_F(EventRecorderTest, RecordingDoesNotWaitForTheWrite) {
  EventRecorder recorder(client_, clock_, "job-controller");
  std::mutex gate;
  std::unique_lock<std::mutex> held(gate);
  std::atomic<int> writes{0};
  // The first Event's create blocks inside the client until the gate opens.
  client_.BeforeWrite([&] {
    ++writes;
    std::lock_guard<std::mutex> wait(gate);
  });
  const auto start = std::chrono::steady_clock::now();
  recorder.Event(Pod("p"), kEventTypeNormal, "SuccessfulCreate", "Created pod: p-0");
  recorder.Event(Pod("p"), kEventTypeNormal, "Completed", "Job completed");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  held.unlock();
  auto events = Events(recorder);
  client_.BeforeWrite(nullptr);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(writes.load(), 2);
}

// The queue is bounded as client-go's (maxQueuedEvents): while the store does not answer,
// Events beyond kEventQueueLimit are dropped, not kept in memory; the rest are written.
TEST_F(EventRecorderTest, EventsBeyondTheQueueLimitAreDropped) {
  EventRecorder recorder(client_, clock_, "job-controller");
  std::mutex gate;
  std::unique_lock<std::mutex> held(gate);
  std::atomic<bool> in_write{false};
  client_.BeforeWrite([&] {
    in_write = true;
    std::lock_guard<std::mutex> wait(gate);
  });
  // Distinct objects, so the spam filter and the aggregation keep out of the way.
  recorder.Event(Pod("p-first"), kEventTypeNormal, "Started", "first");
  for (int i = 0; i < 200 && !in_write; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(in_write.load());  // the sender holds the first write: the queue is empty
  for (size_t i = 0; i < kEventQueueLimit + 50; ++i) {
    recorder.Event(Pod("p-" + std::to_string(i)), kEventTypeNormal, "Started", "more");
  }
  held.unlock();
  auto events = Events(recorder);
  client_.BeforeWrite(nullptr);
  EXPECT_EQ(events.size(), 1 + kEventQueueLimit);
}

// A write that throws (the client's encoding once did, on a probe's output that was not
// UTF-8) loses that Event only: the sender thread survives and writes the next ones.
TEST_F(EventRecorderTest, AWriteThatThrowsLosesOnlyItsEvent) {
  EventRecorder recorder(client_, clock_, "kubelet", "node-0");
  std::atomic<int> writes{0};
  client_.BeforeWrite([&] {
    if (++writes == 1) throw std::runtime_error("encoding failed");
  });
  recorder.Event(Pod("p-1"), kEventTypeWarning, "Unhealthy", "first");
  recorder.Event(Pod("p-2"), kEventTypeWarning, "Unhealthy", "second");
  auto events = Events(recorder);
  client_.BeforeWrite(nullptr);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["message"], "second");
  EXPECT_EQ(writes.load(), 2);
}

}  // namespace
}  // namespace berth::client
