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
