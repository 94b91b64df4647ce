#include "client/work_queue.h"

#include "client/clock_wait.h"

namespace berth::client {

WorkQueue::WorkQueue(Clock& clock, std::unique_ptr<RateLimiter> limiter, WorkQueueOptions options)
    : clock_(clock),
      limiter_(limiter ? std::move(limiter) : DefaultControllerRateLimiter(clock)),
      options_(std::move(options)) {}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_) return;
  if (!dirty_.insert(key).second) return;
  if (processing_.count(key)) return;  // Done() re-queues it
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::PromoteReadyLocked() {
  if (waiting_.empty()) return;
  Time now = clock_.Now();
  while (!waiting_.empty() && std::get<0>(*waiting_.begin()) <= now) {
    std::string key = std::get<2>(*waiting_.begin());
    waiting_.erase(waiting_.begin());
    waiting_at_.erase(key);
    AddLocked(key);
  }
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  PromoteReadyLocked();
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  std::lock_guard<std::mutex> l(mu_);
  if (shutting_down_) return;
  PromoteReadyLocked();
  if (delay <= Duration::zero()) {
    AddLocked(key);
    return;
  }
  Time ready = clock_.Now() + delay;
  auto it = waiting_at_.find(key);
  if (it != waiting_at_.end()) {
    if (it->second.first <= ready) return;  // keep the earlier time
    waiting_.erase({it->second.first, it->second.second, key});
    waiting_at_.erase(it);
  }
  uint64_t seq = next_seq_++;
  waiting_.insert({ready, seq, key});
  waiting_at_[key] = {ready, seq};
  cv_.notify_all();  // a blocked Get may need a shorter wait
}

void WorkQueue::AddRateLimited(const std::string& key) { AddAfter(key, limiter_->When(key)); }

void WorkQueue::Forget(const std::string& key) { limiter_->Forget(key); }

int WorkQueue::NumRequeues(const std::string& key) { return limiter_->NumRequeues(key); }

std::optional<std::string> WorkQueue::PopLocked() {
  if (queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    PromoteReadyLocked();
    if (!queue_.empty()) return PopLocked();
    if (shutting_down_) return std::nullopt;
    std::optional<Time> deadline;
    if (!waiting_.empty()) deadline = std::get<0>(*waiting_.begin());
    internal::WaitForClock(cv_, l, clock_, deadline, options_.clock_poll_interval);
  }
}

std::optional<std::string> WorkQueue::TryGet() {
  std::lock_guard<std::mutex> l(mu_);
  PromoteReadyLocked();
  return PopLocked();
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> l(mu_);
  processing_.erase(key);
  if (dirty_.count(key)) {
    queue_.push_back(key);
    cv_.notify_one();
  }
  if (processing_.empty()) cv_.notify_all();  // ShutDownWithDrain
}

size_t WorkQueue::Len() {
  std::lock_guard<std::mutex> l(mu_);
  PromoteReadyLocked();
  return queue_.size();
}

bool WorkQueue::Idle() {
  std::lock_guard<std::mutex> l(mu_);
  PromoteReadyLocked();
  return queue_.empty() && processing_.empty();
}

size_t WorkQueue::WaitingLen() {
  std::lock_guard<std::mutex> l(mu_);
  PromoteReadyLocked();
  return waiting_.size();
}

void WorkQueue::ShutDownLocked() {
  shutting_down_ = true;
  waiting_.clear();
  waiting_at_.clear();
  cv_.notify_all();
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> l(mu_);
  ShutDownLocked();
}

void WorkQueue::ShutDownWithDrain() {
  std::unique_lock<std::mutex> l(mu_);
  ShutDownLocked();
  cv_.wait(l, [&] { return processing_.empty(); });
}

bool WorkQueue::ShuttingDown() {
  std::lock_guard<std::mutex> l(mu_);
  return shutting_down_;
}

}  // namespace berth::client
