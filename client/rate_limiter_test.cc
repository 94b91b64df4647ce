#include "client/rate_limiter.h"

#include <gtest/gtest.h>

namespace berth::client {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ItemExponentialFailureRateLimiterTest, DoublesPerItemUntilMaxAndForgets) {
  ItemExponentialFailureRateLimiter limiter(milliseconds(1), seconds(1));
  // client-go's TestItemExponentialFailureRateLimiter table: 1, 2, 4, 8, 16 ms.
  const int64_t expected_ms[] = {1, 2, 4, 8, 16};
  for (int64_t ms : expected_ms) EXPECT_EQ(limiter.When("one"), milliseconds(ms));
  EXPECT_EQ(limiter.NumRequeues("one"), 5);
  // Another item has its own history.
  EXPECT_EQ(limiter.When("two"), milliseconds(1));
  EXPECT_EQ(limiter.When("two"), milliseconds(2));
  EXPECT_EQ(limiter.NumRequeues("two"), 2);
  limiter.Forget("one");
  EXPECT_EQ(limiter.NumRequeues("one"), 0);
  EXPECT_EQ(limiter.When("one"), milliseconds(1));
}

TEST(ItemExponentialFailureRateLimiterTest, CapsAtMaxAndSurvivesHugeExponents) {
  ItemExponentialFailureRateLimiter limiter(milliseconds(5), seconds(1000));
  Duration last{};
  for (int i = 0; i < 20; ++i) last = limiter.When("x");
  // 5 ms * 2^17 = 655.36 s; 2^18 would be 1310.72 s > 1000 s.
  EXPECT_EQ(last, seconds(1000));
  for (int i = 0; i < 2000; ++i) last = limiter.When("x");  // 2^2000 overflows a double to inf
  EXPECT_EQ(last, seconds(1000));
}

TEST(BucketRateLimiterTest, BurstThenQpsOnTheInjectedClock) {
  FakeClock clock;
  BucketRateLimiter limiter(clock, /*qps=*/10, /*burst=*/3);
  EXPECT_EQ(limiter.When("a"), Duration::zero());
  EXPECT_EQ(limiter.When("b"), Duration::zero());
  EXPECT_EQ(limiter.When("c"), Duration::zero());
  // Bucket empty: each reservation goes 1/10 s further into debt.
  EXPECT_EQ(limiter.When("d"), milliseconds(100));
  EXPECT_EQ(limiter.When("e"), milliseconds(200));
  // 300 ms later the debt of 2 tokens is paid and one token is back.
  clock.Advance(milliseconds(300));
  EXPECT_EQ(limiter.When("f"), Duration::zero());
  EXPECT_EQ(limiter.When("g"), milliseconds(100));
  // Refill never exceeds the burst.
  clock.Advance(seconds(3600));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(limiter.When("h"), Duration::zero());
  EXPECT_EQ(limiter.When("h"), milliseconds(100));
  EXPECT_EQ(limiter.NumRequeues("h"), 0);
}

TEST(MaxOfRateLimiterTest, DefaultControllerRateLimiter) {
  FakeClock clock;
  auto limiter = DefaultControllerRateLimiter(clock);
  // The per-item backoff dominates while the bucket (burst 100) has tokens.
  EXPECT_EQ(limiter->When("a"), milliseconds(5));
  EXPECT_EQ(limiter->When("a"), milliseconds(10));
  EXPECT_EQ(limiter->When("a"), milliseconds(20));
  EXPECT_EQ(limiter->NumRequeues("a"), 3);
  // 97 more distinct items drain the bucket to zero (100 reservations so far).
  for (int i = 0; i < 97; ++i) EXPECT_EQ(limiter->When("item-" + std::to_string(i)), milliseconds(5));
  // The 101st reservation waits 1/10 s for the bucket: more than a first failure's 5 ms.
  EXPECT_EQ(limiter->When("fresh"), milliseconds(100));
  limiter->Forget("a");
  EXPECT_EQ(limiter->NumRequeues("a"), 0);
}

}  // namespace
}  // namespace berth::client
