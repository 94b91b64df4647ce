#include "core/rlimit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace berth {
namespace {

TEST(RlimitTest, SoftFileDescriptorLimitIsRaisedToTheHardLimit) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  const rlim_t hard = lim.rlim_max;
  if (hard <= 64) GTEST_SKIP() << "hard limit " << hard << " leaves nothing to raise";
  lim.rlim_cur = 64;  // lowering the soft limit needs no privilege
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);

  auto raised = RaiseFileDescriptorLimit();
  ASSERT_TRUE(raised.ok()) << raised.status().ToString();
  EXPECT_EQ(raised->before, 64u);
  EXPECT_EQ(raised->after, hard);
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  EXPECT_EQ(lim.rlim_cur, hard);
}

}  // namespace
}  // namespace berth
