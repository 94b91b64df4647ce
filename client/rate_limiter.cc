#include "client/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace berth::client {

Duration ItemExponentialFailureRateLimiter::When(const std::string& item) {
  int exp;
  {
    std::lock_guard<std::mutex> l(mu_);
    exp = failures_[item]++;
  }
  // base * 2^exp in floating point so that a large exponent cannot overflow.
  double backoff = static_cast<double>(base_delay_.count()) * std::pow(2.0, exp);
  if (!(backoff < static_cast<double>(std::numeric_limits<int64_t>::max()))) return max_delay_;
  Duration calculated(static_cast<int64_t>(backoff));
  return std::min(calculated, max_delay_);
}

void ItemExponentialFailureRateLimiter::Forget(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  failures_.erase(item);
}

int ItemExponentialFailureRateLimiter::NumRequeues(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = failures_.find(item);
  return it == failures_.end() ? 0 : it->second;
}

BucketRateLimiter::BucketRateLimiter(const Clock& clock, double qps, int burst)
    : clock_(clock), qps_(qps), burst_(burst), tokens_(burst), last_(clock.Now()) {}

Duration BucketRateLimiter::When(const std::string& item) {
  std::lock_guard<std::mutex> l(mu_);
  Time now = clock_.Now();
  // Refill for the time elapsed since the last reservation (never backwards).
  Time last = std::min(last_, now);
  double elapsed_s = std::chrono::duration<double>(now - last).count();
  double tokens = std::min(burst_, tokens_ + elapsed_s * qps_);
  tokens -= 1.0;
  Duration wait = Duration::zero();
  if (tokens < 0) {
    wait = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(-tokens / qps_));
  }
  tokens_ = tokens;
  last_ = now;
  return wait;
}

Duration MaxOfRateLimiter::When(const std::string& item) {
  Duration longest = Duration::zero();
  for (auto& l : limiters_) longest = std::max(longest, l->When(item));
  return longest;
}

void MaxOfRateLimiter::Forget(const std::string& item) {
  for (auto& l : limiters_) l->Forget(item);
}

int MaxOfRateLimiter::NumRequeues(const std::string& item) {
  int most = 0;
  for (auto& l : limiters_) most = std::max(most, l->NumRequeues(item));
  return most;
}

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(const Clock& clock) {
  std::vector<std::unique_ptr<RateLimiter>> limiters;
  limiters.push_back(std::make_unique<ItemExponentialFailureRateLimiter>(
      std::chrono::milliseconds(5), std::chrono::seconds(1000)));
  limiters.push_back(std::make_unique<BucketRateLimiter>(clock, 10.0, 100));
  return std::make_unique<MaxOfRateLimiter>(std::move(limiters));
}

}  // namespace berth::client
