#include "core/clock.h"

#include <gtest/gtest.h>
#include <thread>

namespace berth {
namespace {

TEST(ClockTest, FormatsAndParsesRfc3339) {
  Time t;
  ASSERT_TRUE(ParseRfc3339("2026-03-04T05:06:07Z", &t));
  EXPECT_EQ(FormatRfc3339(t), "2026-03-04T05:06:07Z");
  ASSERT_TRUE(ParseRfc3339("2026-03-04T05:06:07.123456Z", &t));
  EXPECT_EQ(FormatRfc3339Micro(t), "2026-03-04T05:06:07.123456Z");
  EXPECT_EQ(FormatRfc3339(t), "2026-03-04T05:06:07Z");
  ASSERT_TRUE(ParseRfc3339("2026-03-04T07:06:07+02:00", &t));
  EXPECT_EQ(FormatRfc3339(t), "2026-03-04T05:06:07Z");
  EXPECT_FALSE(ParseRfc3339("2026-03-04 05:06:07Z", &t));
  EXPECT_FALSE(ParseRfc3339("2026-13-04T05:06:07Z", &t));
  EXPECT_FALSE(ParseRfc3339("2026-03-04T05:06:07", &t));
  EXPECT_FALSE(ParseRfc3339("2026-03-04T05:06:07Zjunk", &t));
}

// Found by fuzz/admission_fuzzer (corpus: fuzz/corpus/admission/year-9795.txt): a
// date-time field in year 9795 overflowed the int64 nanoseconds of Time (UBSan: signed
// overflow in from_time_t). Instants Time cannot hold are malformed, at both ends,
// through the seconds, the fraction and the offset.
TEST(ClockTest, Rfc3339OutsideTheRangeOfTimeIsRefused) {
  Time t;
  for (const char* s : {"9795-12-21T10:15:42Z", "9999-12-31T23:59:59Z", "2263-01-01T00:00:00Z", "2262-04-11T23:47:17Z",
                        "2262-04-11T23:47:16.9Z", "2262-04-11T23:47:16-00:01", "1677-09-21T00:12:43Z",
                        "1000-01-01T00:00:00Z", "0000-01-01T00:00:00+01:00"}) {
    EXPECT_FALSE(ParseRfc3339(s, &t)) << s;
  }
  ASSERT_TRUE(ParseRfc3339("2262-04-11T23:47:16.854775807Z", &t));
  EXPECT_EQ(t, Time::max());
  ASSERT_TRUE(ParseRfc3339("2262-04-11T23:47:15Z", &t));
  EXPECT_EQ(FormatRfc3339(t), "2262-04-11T23:47:15Z");
  ASSERT_TRUE(ParseRfc3339("1677-09-21T00:12:44Z", &t));
  EXPECT_EQ(FormatRfc3339(t), "1677-09-21T00:12:44Z");
}

TEST(ClockTest, FakeClockAdvancesAndWakesSleepers) {
  FakeClock clock;
  EXPECT_EQ(FormatRfc3339(clock.Now()), "2026-01-01T00:00:00Z");
  Time deadline = clock.Now() + std::chrono::seconds(30);
  std::thread sleeper([&] { clock.SleepUntil(deadline); });
  clock.Advance(std::chrono::seconds(10));
  clock.Advance(std::chrono::seconds(20));
  sleeper.join();
  EXPECT_EQ(clock.Now(), deadline);
}

}  // namespace
}  // namespace berth
