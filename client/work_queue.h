// WorkQueue: the rate-limited work queue controllers use between their
// informer event handlers and their reconcile workers, with the semantics of
// client-go's workqueue (Type + DelayingQueue + RateLimitingQueue) for string
// keys ("namespace/name").
//
// Semantics (client-go's queue.go, delaying_queue.go, rate_limiting_queue.go):
//   - Add(key): a key is queued at most once. It is "dirty" from Add until a
//     worker takes it with Get. Adding a key that is dirty does nothing.
//   - Get() hands out keys in FIFO order; the key is then "processing" until
//     the worker calls Done(key). A key is never handed to two workers at
//     once: Add(key) while it is processing only marks it dirty, and Done
//     re-queues it (once, however many Adds happened meanwhile).
//   - AddAfter(key, d): the key is added when the Clock reaches now + d (d <= 0:
//     now). A key already waiting keeps the earlier of its two ready times.
//     Keys that become ready together are added in (ready time, AddAfter
//     call order).
//   - AddRateLimited(key) = AddAfter(key, limiter.When(key)); Forget(key)
//     clears the limiter's history; NumRequeues(key) reads it. The default
//     limiter is DefaultControllerRateLimiter (client/rate_limiter.h).
//   - ShutDown(): later Adds are ignored, waiting (delayed) keys are dropped,
//     Get returns the keys already queued and then nullopt. ShutDownWithDrain()
//     additionally waits until every processing key is Done.
//
// Time: delays are measured on the injected Clock. Delayed keys move to the
// queue whenever any method looks at the queue and finds their time reached,
// so with a FakeClock a test advances the clock and then calls Len()/TryGet()
// with no thread and no real sleep. A Get() blocked on an empty queue while
// keys wait notices a FakeClock advance within options.clock_poll_interval of
// real time (a RealClock deadline is waited for exactly).
//
// Thread-safety: every method may be called from any thread; Get blocks.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "client/rate_limiter.h"
#include "core/clock.h"

namespace berth::client {

struct WorkQueueOptions {
  std::string name;  // for logs
  // Longest real-time wait of a blocked Get between two looks at the Clock
  // while delayed keys are waiting (see "Time" above).
  Duration clock_poll_interval = std::chrono::milliseconds(100);
};

class WorkQueue {
 public:
  // limiter: nullptr = DefaultControllerRateLimiter(clock).
  explicit WorkQueue(Clock& clock, std::unique_ptr<RateLimiter> limiter = nullptr,
                     WorkQueueOptions options = {});
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);
  void AddAfter(const std::string& key, Duration delay);
  void AddRateLimited(const std::string& key);
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key);

  // Blocks until a key is ready and returns it (now processing), or returns
  // nullopt once the queue is shut down and empty.
  std::optional<std::string> Get();
  // Like Get but never blocks: nullopt when no key is ready.
  std::optional<std::string> TryGet();
  // Marks the key processed; re-queues it when it was added meanwhile.
  void Done(const std::string& key);

  // Keys ready to be handed out (not counting processing or waiting keys).
  size_t Len();
  // Keys waiting for their AddAfter time.
  size_t WaitingLen();
  // No key ready and none handed out and not yet Done (waiting keys aside).
  bool Idle();

  void ShutDown();
  void ShutDownWithDrain();
  bool ShuttingDown();

 private:
  void AddLocked(const std::string& key);
  void PromoteReadyLocked();
  std::optional<std::string> PopLocked();
  // Marks the queue shutting down, drops the waiting keys and wakes every Get.
  void ShutDownLocked();

  Clock& clock_;
  std::unique_ptr<RateLimiter> limiter_;
  const WorkQueueOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;
  std::set<std::string> processing_;
  // Delayed keys ordered by (ready time, sequence); waiting_at_ finds a key's entry.
  std::set<std::tuple<Time, uint64_t, std::string>> waiting_;
  std::map<std::string, std::pair<Time, uint64_t>> waiting_at_;
  uint64_t next_seq_ = 0;
  bool shutting_down_ = false;
};

}  // namespace berth::client
