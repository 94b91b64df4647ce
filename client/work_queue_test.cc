#include "client/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace berth::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Drains every ready key (TryGet) without marking them Done.
std::vector<std::string> TakeAll(WorkQueue& q) {
  std::vector<std::string> keys;
  while (auto k = q.TryGet()) keys.push_back(*k);
  return keys;
}

TEST(WorkQueueTest, DeduplicatesQueuedKeysInFifoOrder) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("ns/b");
  q.Add("ns/a");
  q.Add("ns/b");
  q.Add("ns/c");
  q.Add("ns/a");
  EXPECT_EQ(q.Len(), 3u);
  EXPECT_EQ(TakeAll(q), (std::vector<std::string>{"ns/b", "ns/a", "ns/c"}));
}

TEST(WorkQueueTest, ProcessingKeyIsNotHandedOutTwiceAndRequeuedOnceOnDone) {
  // Table: the steps of client-go's TestAddWhileProcessing, on one key.
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("k");
  ASSERT_EQ(q.TryGet(), std::optional<std::string>("k"));
  // Added twice while processing: not queued now...
  q.Add("k");
  q.Add("k");
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.TryGet(), std::nullopt);
  // ...and queued exactly once when the worker is done.
  q.Done("k");
  EXPECT_EQ(q.Len(), 1u);
  ASSERT_EQ(q.TryGet(), std::optional<std::string>("k"));
  q.Done("k");
  EXPECT_EQ(q.Len(), 0u);
  EXPECT_EQ(q.TryGet(), std::nullopt);
}

TEST(WorkQueueTest, AddAfterWaitsForTheFakeClockAndKeepsTheEarlierTime) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("late", milliseconds(50));
  q.AddAfter("early", milliseconds(10));
  q.AddAfter("early", milliseconds(40));  // later time: ignored
  q.AddAfter("late", milliseconds(30));   // earlier time: wins
  q.AddAfter("now", Duration::zero());
  EXPECT_EQ(TakeAll(q), std::vector<std::string>{"now"});
  EXPECT_EQ(q.WaitingLen(), 2u);
  clock.Advance(milliseconds(9));
  EXPECT_EQ(q.Len(), 0u);
  clock.Advance(milliseconds(1));
  EXPECT_EQ(TakeAll(q), std::vector<std::string>{"early"});
  clock.Advance(milliseconds(20));
  EXPECT_EQ(TakeAll(q), std::vector<std::string>{"late"});
  EXPECT_EQ(q.WaitingLen(), 0u);
}

TEST(WorkQueueTest, KeysReadyTogetherComeInReadyTimeThenCallOrder) {
  FakeClock clock;
  WorkQueue q(clock);
  q.AddAfter("c", milliseconds(20));
  q.AddAfter("a", milliseconds(10));
  q.AddAfter("b", milliseconds(10));
  clock.Advance(seconds(1));
  EXPECT_EQ(TakeAll(q), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(WorkQueueTest, DelayedKeyAlreadyQueuedIsNotDuplicated) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("k");
  q.AddAfter("k", milliseconds(5));
  clock.Advance(milliseconds(5));
  EXPECT_EQ(TakeAll(q), std::vector<std::string>{"k"});
}

TEST(WorkQueueTest, AddRateLimitedBacksOffExponentiallyUntilForget) {
  FakeClock clock;
  WorkQueue q(clock);  // DefaultControllerRateLimiter: 5 ms, 10 ms, 20 ms, ...
  const int64_t expected_ms[] = {5, 10, 20, 40};
  for (int64_t ms : expected_ms) {
    q.AddRateLimited("k");
    clock.Advance(milliseconds(ms - 1));
    EXPECT_EQ(q.TryGet(), std::nullopt) << ms;
    clock.Advance(milliseconds(1));
    ASSERT_EQ(q.TryGet(), std::optional<std::string>("k")) << ms;
    q.Done("k");
  }
  EXPECT_EQ(q.NumRequeues("k"), 4);
  q.Forget("k");
  EXPECT_EQ(q.NumRequeues("k"), 0);
  q.AddRateLimited("k");
  clock.Advance(milliseconds(5));
  EXPECT_EQ(q.TryGet(), std::optional<std::string>("k"));
}

TEST(WorkQueueTest, ShutDownDrainsQueuedKeysDropsWaitingOnesAndIgnoresAdds) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("a");
  q.AddAfter("later", milliseconds(1));
  q.ShutDown();
  EXPECT_TRUE(q.ShuttingDown());
  q.Add("b");
  clock.Advance(seconds(1));
  EXPECT_EQ(q.Get(), std::optional<std::string>("a"));
  EXPECT_EQ(q.Get(), std::nullopt);  // shut down and empty: does not block
  EXPECT_EQ(q.WaitingLen(), 0u);
}

TEST(WorkQueueTest, BlockedGetIsWokenByAddAndByShutDown) {
  FakeClock clock;
  WorkQueue q(clock);
  std::optional<std::string> got;
  std::thread worker([&] { got = q.Get(); });
  q.Add("x");
  worker.join();
  EXPECT_EQ(got, std::optional<std::string>("x"));

  std::thread idle([&] { got = q.Get(); });
  q.ShutDown();
  idle.join();
  EXPECT_EQ(got, std::nullopt);
}

TEST(WorkQueueTest, BlockedGetSeesADelayedKeyAfterAFakeClockAdvance) {
  FakeClock clock;
  WorkQueueOptions options;
  options.clock_poll_interval = milliseconds(1);
  WorkQueue q(clock, nullptr, options);
  q.AddAfter("k", seconds(10));
  std::optional<std::string> got;
  std::thread worker([&] { got = q.Get(); });
  clock.Advance(seconds(10));
  worker.join();
  EXPECT_EQ(got, std::optional<std::string>("k"));
}

TEST(WorkQueueTest, ConcurrentWorkersNeverShareAKey) {
  FakeClock clock;
  WorkQueue q(clock);
  std::mutex mu;
  std::set<std::string> in_flight;
  bool overlap = false;
  int processed = 0;
  auto worker = [&] {
    while (auto k = q.Get()) {
      {
        std::lock_guard<std::mutex> l(mu);
        if (!in_flight.insert(*k).second) overlap = true;
        ++processed;
      }
      q.Add(*k == "stop" ? "unused" : *k);  // re-add while processing: must not be handed out
      {
        std::lock_guard<std::mutex> l(mu);
        in_flight.erase(*k);
      }
      q.Done(*k);
      q.Forget(*k);
      std::lock_guard<std::mutex> l(mu);
      if (processed >= 200) q.ShutDown();
    }
  };
  for (int i = 0; i < 4; ++i) q.Add("key-" + std::to_string(i));
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) workers.emplace_back(worker);
  for (auto& w : workers) w.join();
  EXPECT_FALSE(overlap);
  EXPECT_GE(processed, 200);
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForProcessingKeys) {
  FakeClock clock;
  WorkQueue q(clock);
  q.Add("k");
  ASSERT_EQ(q.TryGet(), std::optional<std::string>("k"));
  std::atomic<bool> drained{false};
  std::thread shutter([&] {
    q.ShutDownWithDrain();
    drained = true;
  });
  // Not drained while "k" is processing; ShuttingDown becomes true first.
  while (!q.ShuttingDown()) std::this_thread::yield();
  EXPECT_FALSE(drained.load());
  q.Done("k");
  shutter.join();
  EXPECT_TRUE(drained.load());
}

}  // namespace
}  // namespace berth::client
