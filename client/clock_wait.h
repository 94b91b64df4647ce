// Internal helper for client/: waiting on a condition variable for a deadline
// expressed in an injected Clock's time.
//
// A berth::Clock cannot wake a condition variable when (virtual) time moves,
// so a thread that needs "notified, or the clock reached T" waits on its
// condition variable in real time for at most `poll` (or the real time left
// when the clock advances in real time) and then re-reads the clock. With a
// RealClock the wait ends at the deadline; with a FakeClock an Advance() is
// noticed within `poll` of real time. Callers re-check their state after
// every return (spurious wake-ups are allowed).
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "core/clock.h"

namespace berth::client::internal {

// Waits once; returns after a notification, after `poll` of real time, or
// when the clock has (by real-time estimate) reached `deadline`. No deadline:
// waits for a notification only.
inline void WaitForClock(std::condition_variable& cv, std::unique_lock<std::mutex>& lock,
                         const Clock& clock, std::optional<Time> deadline, Duration poll) {
  if (!deadline) {
    cv.wait(lock);
    return;
  }
  Duration left = std::chrono::duration_cast<Duration>(*deadline - clock.Now());
  if (left <= Duration::zero()) return;
  cv.wait_for(lock, std::min(left, poll));
}

}  // namespace berth::client::internal
