#include "core/clock.h"

#include <cstdio>
#include <ctime>
#include <thread>
#include <type_traits>

namespace berth {

void RealClock::SleepUntil(Time deadline) { std::this_thread::sleep_until(deadline); }

RealClock& RealClock::Get() {
  static RealClock clock;
  return clock;
}

FakeClock::FakeClock() {
  Time t;
  ParseRfc3339("2026-01-01T00:00:00Z", &t);
  now_ = t;
}

Time FakeClock::Now() const {
  std::lock_guard<std::mutex> l(mu_);
  return now_;
}

void FakeClock::SleepUntil(Time deadline) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return now_ >= deadline; });
}

void FakeClock::Advance(Duration d) {
  {
    std::lock_guard<std::mutex> l(mu_);
    now_ += std::chrono::duration_cast<Time::duration>(d);
  }
  cv_.notify_all();
}

void FakeClock::Set(Time t) {
  {
    std::lock_guard<std::mutex> l(mu_);
    now_ = t;
  }
  cv_.notify_all();
}

namespace {
std::string FormatWith(Time t, bool micro) {
  auto secs = std::chrono::time_point_cast<std::chrono::seconds>(t);
  if (secs > t) secs -= std::chrono::seconds(1);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t - secs).count();
  std::time_t tt = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[64];
  if (micro) {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(us));
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}
}  // namespace

std::string FormatRfc3339(Time t) { return FormatWith(t, false); }
std::string FormatRfc3339Micro(Time t) { return FormatWith(t, true); }

bool ParseRfc3339(const std::string& s, Time* out) {
  int y, mo, d, h, mi, sec;
  int n = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
  size_t i = 19;
  long long frac_ns = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    long long scale = 100000000;
    size_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      frac_ns += (s[i] - '0') * scale;
      scale /= 10;
      ++i;
      ++digits;
    }
    if (digits == 0) return false;
  }
  long offset_s = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (std::sscanf(s.c_str() + i + 1, "%2d:%2d", &oh, &om) != 2) return false;
    offset_s = (oh * 3600 + om * 60) * (s[i] == '+' ? 1 : -1);
    i += 6;
  } else {
    return false;
  }
  if (i != s.size()) return false;
  std::tm tm{};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  const int64_t secs = static_cast<int64_t>(timegm(&tm)) - offset_s;
  // Time counts int64 nanoseconds: an instant outside it is refused rather than overflowed.
  static_assert(std::is_same_v<Time::duration, std::chrono::nanoseconds>);
  constexpr int64_t kMax = std::chrono::nanoseconds::max().count();
  constexpr int64_t kMin = std::chrono::nanoseconds::min().count();
  if (secs > kMax / 1'000'000'000 || (secs == kMax / 1'000'000'000 && frac_ns > kMax % 1'000'000'000) ||
      secs < kMin / 1'000'000'000) {
    return false;
  }
  *out = Time(std::chrono::seconds(secs)) + std::chrono::nanoseconds(frac_ns);
  return true;
}

std::string HumanDuration(Duration d) {
  using std::to_string;
  const int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 60 * 2) return to_string(seconds) + "s";
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    return s == 0 ? to_string(minutes) + "m" : to_string(minutes) + "m" + to_string(s) + "s";
  }
  if (minutes < 60 * 3) return to_string(minutes) + "m";
  const int64_t hours = seconds / 3600;
  if (hours < 8) {
    const int64_t m = minutes % 60;
    return m == 0 ? to_string(hours) + "h" : to_string(hours) + "h" + to_string(m) + "m";
  }
  if (hours < 48) return to_string(hours) + "h";
  if (hours < 24 * 8) {
    const int64_t h = hours % 24;
    return h == 0 ? to_string(hours / 24) + "d" : to_string(hours / 24) + "d" + to_string(h) + "h";
  }
  if (hours < 24 * 365 * 2) return to_string(hours / 24) + "d";
  if (hours < 24 * 365 * 8) {
    const int64_t dy = (hours / 24) % 365;
    const int64_t years = hours / 24 / 365;
    return dy == 0 ? to_string(years) + "y" : to_string(years) + "y" + to_string(dy) + "d";
  }
  return to_string(hours / 24 / 365) + "y";
}

}  // namespace berth
