// ConcurrentWrites: issues one step's independent API writes at once and waits
// for all of them, so that a durable store commits them together (the
// store's group commit, store/cached_store.h: one transaction and one fsync
// for every write queued meanwhile) instead of one fsync after another.
//
// What it is for: a step that has decided N writes to N different objects
// (a scheduling cycle's admissions or evictions) and must know each result
// before it goes on. Kueue's scheduler issues each admission's API call in
// its own goroutine and does not wait (pkg/scheduler/scheduler.go admit,
// routine.DefaultWrapper); here the step waits, so what follows a write
// (requeue on failure, Events, metrics) still runs in the step, in order.
//
// ForEach(n, write) calls write(i) once for each i in [0, n), on the pool's
// threads and on the calling thread, and returns when every call returned;
// n <= 1 runs on the caller alone. Calls for different i run concurrently,
// so `write` must be safe for that (different objects; a thread-safe
// client). An exception from a call is rethrown by ForEach after all calls
// ended (the first one, when several threw); the other calls still run.
//
// Threads: `threads` named `name`, started by the constructor, joined by the
// destructor; ForEach may be called from several threads at once (their
// calls share the pool; a call whose helpers have not started when the
// caller has taken every index withdraws them instead of waiting for them).
// Not reentrant from inside `write`.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace berth::controllers {

class ConcurrentWrites {
 public:
  ConcurrentWrites(std::string name, int threads);
  ~ConcurrentWrites();
  ConcurrentWrites(const ConcurrentWrites&) = delete;
  ConcurrentWrites& operator=(const ConcurrentWrites&) = delete;

  void ForEach(size_t n, const std::function<void(size_t)>& write);

 private:
  struct Call;  // one ForEach's shared state
  void Work();

  const std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Call*> tasks_;  // one entry per helper a ForEach asked for
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace berth::controllers
