#include "core/ids.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace berth {
namespace {

TEST(IdsTest, UidIsVersion4Uuid) {
  std::regex re("^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string u = NewUid();
    EXPECT_TRUE(std::regex_match(u, re)) << u;
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(IdsTest, NameSuffixUsesKubernetesAlphabet) {
  std::string s = RandomNameSuffix();
  ASSERT_EQ(s.size(), 5u);
  for (char c : s) EXPECT_NE(std::string("bcdfghjklmnpqrstvwxz2456789").find(c), std::string::npos);
}

}  // namespace
}  // namespace berth
