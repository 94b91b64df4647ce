#include "core/hash.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(HashTest, Fnv1a64MatchesTheReferenceVectors) {
  // FNV-1a 64 test vectors (Fowler/Noll/Vo reference code, test_fnv.c).
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
  static_assert(Fnv1a64("a", 1) != Fnv1a64("a"));
}

}  // namespace
}  // namespace berth
