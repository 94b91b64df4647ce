#include "controllers/common/concurrent_writes.h"

#include <algorithm>
#include <atomic>
#include <exception>

#include "core/this_thread.h"

namespace berth::controllers {

struct ConcurrentWrites::Call {
  size_t n = 0;
  const std::function<void(size_t)>* write = nullptr;
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;
  size_t running = 0;  // helpers started and not yet done (under mu)

  // Takes the next index until none is left: a slow write holds up only the
  // participant that makes it.
  void Drain() {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        (*write)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
    }
  }
};

ConcurrentWrites::ConcurrentWrites(std::string name, int threads) : name_(std::move(name)) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

ConcurrentWrites::~ConcurrentWrites() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ConcurrentWrites::Work() {
  SetCurrentThreadName(name_);
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;
    Call* call = tasks_.front();
    tasks_.pop_front();
    {
      std::lock_guard<std::mutex> started(call->mu);  // taken under mu_: the caller sees it started
      ++call->running;
    }
    lock.unlock();
    call->Drain();
    {
      std::lock_guard<std::mutex> done(call->mu);
      if (--call->running == 0) call->cv.notify_all();
    }
    lock.lock();
  }
}

void ConcurrentWrites::ForEach(size_t n, const std::function<void(size_t)>& write) {
  if (n == 0) return;
  Call call;
  call.n = n;
  call.write = &write;
  const size_t helpers = std::min(threads_.size(), n - 1);
  if (helpers > 0) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.insert(tasks_.end(), helpers, &call);
    }
    cv_.notify_all();
  }
  call.Drain();
  if (helpers > 0) {
    // Every index is taken: helpers that have not started would find nothing.
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.erase(std::remove(tasks_.begin(), tasks_.end(), &call), tasks_.end());
  }
  std::unique_lock<std::mutex> lock(call.mu);
  call.cv.wait(lock, [&] { return call.running == 0; });
  if (call.error) std::rethrow_exception(call.error);
}

}  // namespace berth::controllers
