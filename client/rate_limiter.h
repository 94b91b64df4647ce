// Rate limiters for work-queue retries, with the semantics of client-go's
// k8s.io/client-go/util/workqueue/default_rate_limiters.go.
//
// A RateLimiter answers "how long should this item wait before it is
// processed again" (When), counts the retries of an item (NumRequeues) and
// forgets an item that was processed successfully (Forget).
//
//   ItemExponentialFailureRateLimiter(base, max): the n-th When(item) since the
//     last Forget(item) returns base * 2^(n-1), capped at max (and max when the
//     product overflows). client-go's controller default: 5 ms .. 1000 s.
//   BucketRateLimiter(clock, qps, burst): an overall token bucket
//     (golang.org/x/time/rate's Reserve): it starts full with `burst` tokens,
//     refills at `qps` per second of Clock time up to `burst`, and every When
//     takes one token; when none is left the reservation goes into debt and
//     When returns the time until that token exists. Items are not
//     distinguished; Forget does nothing and NumRequeues is 0.
//   MaxOfRateLimiter(limiters): asks every limiter (so each records the
//     attempt) and returns the longest delay; NumRequeues is the maximum.
//   DefaultControllerRateLimiter(clock): MaxOf(ItemExponential(5 ms, 1000 s),
//     Bucket(10 qps, burst 100)), client-go's DefaultControllerRateLimiter.
//
// Items are work-queue keys ("namespace/name"). Time is the injected Clock's.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/clock.h"

namespace berth::client {

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // The delay before `item` may be processed again; records one attempt.
  virtual Duration When(const std::string& item) = 0;
  // Clears the item's failure history (after it was processed successfully).
  virtual void Forget(const std::string& item) = 0;
  // Attempts recorded for the item since its last Forget.
  virtual int NumRequeues(const std::string& item) = 0;
};

class ItemExponentialFailureRateLimiter final : public RateLimiter {
 public:
  ItemExponentialFailureRateLimiter(Duration base_delay, Duration max_delay)
      : base_delay_(base_delay), max_delay_(max_delay) {}
  Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  const Duration base_delay_;
  const Duration max_delay_;
  std::mutex mu_;
  std::map<std::string, int> failures_;
};

class BucketRateLimiter final : public RateLimiter {
 public:
  BucketRateLimiter(const Clock& clock, double qps, int burst);
  Duration When(const std::string& item) override;
  void Forget(const std::string& item) override {}
  int NumRequeues(const std::string& item) override { return 0; }

 private:
  const Clock& clock_;
  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;
  Time last_;
};

class MaxOfRateLimiter final : public RateLimiter {
 public:
  explicit MaxOfRateLimiter(std::vector<std::unique_ptr<RateLimiter>> limiters)
      : limiters_(std::move(limiters)) {}
  Duration When(const std::string& item) override;
  void Forget(const std::string& item) override;
  int NumRequeues(const std::string& item) override;

 private:
  std::vector<std::unique_ptr<RateLimiter>> limiters_;
};

std::unique_ptr<RateLimiter> DefaultControllerRateLimiter(const Clock& clock);

}  // namespace berth::client
