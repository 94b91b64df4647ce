// Clock: the only source of time in berth (timeouts, backoff, grace periods,
// creationTimestamps, lease renewals). Production code takes a Clock& and
// never calls std::chrono::system_clock directly, so tests and benchmarks
// run on virtual time with FakeClock.
//
// Units: Time is a std::chrono::system_clock::time_point (wall time, used for
// timestamps written into objects) and Duration is nanoseconds.
//
// Thread-safety: every method of RealClock and FakeClock is safe to call from
// any thread. FakeClock::Advance wakes SleepFor/SleepUntil callers whose
// deadline has passed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

namespace berth {

using Time = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time Now() const = 0;
  // Blocks the caller until Now() >= deadline (FakeClock: until advanced there).
  virtual void SleepUntil(Time deadline) = 0;
  void SleepFor(Duration d) { SleepUntil(Now() + d); }
};

class RealClock final : public Clock {
 public:
  Time Now() const override { return std::chrono::system_clock::now(); }
  void SleepUntil(Time deadline) override;
  // A process-wide instance for main() to inject.
  static RealClock& Get();
};

// Virtual time starting at a fixed instant (2026-01-01T00:00:00Z by default).
class FakeClock final : public Clock {
 public:
  FakeClock();
  explicit FakeClock(Time start) : now_(start) {}
  Time Now() const override;
  void SleepUntil(Time deadline) override;
  void Advance(Duration d);
  void Set(Time t);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Time now_;
};

// RFC 3339 with second precision in UTC ("2026-01-01T00:00:00Z"), as Kubernetes
// metav1.Time serialises.
std::string FormatRfc3339(Time t);
// RFC 3339 with microseconds ("2026-01-01T00:00:00.000000Z"), as metav1.MicroTime.
std::string FormatRfc3339Micro(Time t);
// Parses both forms above (and any fractional precision, and "+hh:mm" offsets).
// Returns false on malformed input and on an instant Time cannot hold (int64
// nanoseconds: from 1677-09-21T00:12:44Z to 2262-04-11T23:47:16.854775807Z; Go's
// time.Time, which metav1.Time wraps, reaches year 9999).
bool ParseRfc3339(const std::string& s, Time* out);

// k8s.io/apimachinery/pkg/util/duration.HumanDuration, the age kubectl and
// the API server's tables print: "33s", "2m3s", "5m", "179m", "3h5m", "47h",
// "2d3h", "729d", "2y10d", "9y"; below -1s "<invalid>", between -1s and 0 "0s".
std::string HumanDuration(Duration d);

}  // namespace berth
