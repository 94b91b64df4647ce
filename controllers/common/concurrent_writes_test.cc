// ConcurrentWrites: every index is written exactly once, the writes overlap
// (a step's writes reach the store together), an exception is rethrown after
// the others ran, and callers sharing the pool do not wait for each other's
// helpers.
#include "controllers/common/concurrent_writes.h"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <stdexcept>
#include <thread>
#include <vector>

namespace berth::controllers {
namespace {

using namespace std::chrono_literals;

TEST(ConcurrentWritesTest, EveryIndexIsWrittenOnceForAnyCount) {
  ConcurrentWrites pool("test-writes", 4);
  for (size_t n : {0, 1, 2, 3, 4, 5, 17, 1000}) {
    std::vector<std::atomic<int>> calls(n);
    pool.ForEach(n, [&](size_t i) { ++calls[i]; });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(calls[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ConcurrentWritesTest, TheWritesOfOneStepAreInFlightTogether) {
  // Each write waits until `n` writes are in flight at once (or gives up after 10 s):
  // with one thread after another they never would be.
  constexpr size_t n = 5;  // the caller and four helpers
  ConcurrentWrites pool("test-writes", 4);
  std::atomic<size_t> in_flight{0};
  std::atomic<size_t> saw_all{0};
  pool.ForEach(n, [&](size_t) {
    ++in_flight;
    const auto give_up = std::chrono::steady_clock::now() + 10s;
    while (in_flight.load() < n && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    if (in_flight.load() == n) ++saw_all;
  });
  EXPECT_EQ(saw_all.load(), n);
}

TEST(ConcurrentWritesTest, AThrowingWriteIsRethrownAfterTheOthersRan) {
  ConcurrentWrites pool("test-writes", 3);
  std::vector<std::atomic<int>> calls(50);
  EXPECT_THROW(pool.ForEach(calls.size(),
                            [&](size_t i) {
                              ++calls[i];
                              if (i == 7) throw std::runtime_error("write 7");
                            }),
               std::runtime_error);
  for (size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls[i].load(), 1) << i;
  // The pool is still whole.
  std::atomic<int> after{0};
  pool.ForEach(10, [&](size_t) { ++after; });
  EXPECT_EQ(after.load(), 10);
}

TEST(ConcurrentWritesTest, ACallDoesNotWaitForHelpersBusyWithAnotherCall) {
  // One helper thread, held by a slow call; a second call asking for help
  // does its writes on its own thread and returns without waiting for it.
  ConcurrentWrites pool("test-writes", 1);
  std::atomic<bool> release{false}, slow_started{false};
  std::thread slow([&] {
    pool.ForEach(2, [&](size_t) {
      slow_started = true;
      while (!release) std::this_thread::sleep_for(1ms);
    });
  });
  while (!slow_started) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(20ms);  // both participants of the slow call are in it
  std::atomic<int> fast_calls{0};
  const auto began = std::chrono::steady_clock::now();
  pool.ForEach(3, [&](size_t) { ++fast_calls; });
  EXPECT_EQ(fast_calls.load(), 3);
  EXPECT_FALSE(release.load());  // returned while the helper was still held
  EXPECT_LT(std::chrono::steady_clock::now() - began, 5s);
  release = true;
  slow.join();
}

}  // namespace
}  // namespace berth::controllers
