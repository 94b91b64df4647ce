#include "store/continue_token.h"

#include <gtest/gtest.h>

namespace berth::store {
namespace {

TEST(ContinueTokenTest, RoundTripsAndHasTheApiserverShape) {
  for (const ContinueToken& t : {ContinueToken{42, "default", "pod-1"}, ContinueToken{7, "", "cq"},
                                 ContinueToken{1, "n", "a.b-c"}, ContinueToken{3, "n", "x", 500}}) {
    std::string enc = EncodeContinue(t);
    EXPECT_EQ(enc.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
              std::string::npos);
    auto dec = DecodeContinue(enc);
    ASSERT_TRUE(dec.ok()) << dec.status();
    EXPECT_EQ(*dec, t);
  }
  // base64url("{\"rv\":42,\"start\":\"default/pod-1\",\"v\":\"meta.k8s.io/v1\"}")
  EXPECT_EQ(EncodeContinue({42, "default", "pod-1"}),
            "eyJydiI6NDIsInN0YXJ0IjoiZGVmYXVsdC9wb2QtMSIsInYiOiJtZXRhLms4cy5pby92MSJ9");
}

TEST(ContinueTokenTest, RejectsForeignTokens) {
  for (const char* bad : {"", "!!!", "eyJydiI6NDJ9" /* {"rv":42} */, "bm90IGpzb24" /* not json */}) {
    auto dec = DecodeContinue(bad);
    EXPECT_EQ(dec.status().code(), Code::kBadRequest) << bad;
    EXPECT_EQ(dec.status().message().rfind("continue key is not valid: ", 0), 0u) << bad;
  }
}

TEST(ContinueTokenTest, InconsistentKeepsThePositionAtTheLatestRevision) {
  auto dec = DecodeContinue(InconsistentContinue(EncodeContinue({9, "ns", "b", 12})));
  ASSERT_TRUE(dec.ok());
  EXPECT_EQ(*dec, (ContinueToken{0, "ns", "b"}));
  EXPECT_EQ(InconsistentContinue("garbage?"), "");
}

}  // namespace
}  // namespace berth::store
