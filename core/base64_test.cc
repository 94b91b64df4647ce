#include "core/base64.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(Base64Test, Rfc4648Vectors) {
  // RFC 4648 section 10.
  const std::pair<const char*, const char*> kVectors[] = {{"", ""},
                                                          {"f", "Zg=="},
                                                          {"fo", "Zm8="},
                                                          {"foo", "Zm9v"},
                                                          {"foob", "Zm9vYg=="},
                                                          {"fooba", "Zm9vYmE="},
                                                          {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : kVectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    EXPECT_EQ(Base64Decode(encoded), plain);
  }
}

TEST(Base64Test, UrlAlphabetHasNoPadding) {
  const std::string bytes("\xfb\xff\xfe", 3);
  EXPECT_EQ(Base64Encode(bytes), "+//+");
  EXPECT_EQ(Base64Encode(bytes, Base64Alphabet::kUrl), "-__-");
  EXPECT_EQ(Base64Encode("f", Base64Alphabet::kUrl), "Zg");
  EXPECT_EQ(Base64Decode("Zg", Base64Alphabet::kUrl), "f");
  EXPECT_EQ(Base64Decode("-__-", Base64Alphabet::kUrl), bytes);
}

TEST(Base64Test, MalformedInputIsRefused) {
  for (const char* bad : {"Zg", "Zg=", "Z===", "Zm9v!", "Zm 9v", "+//+=", "Zg==Zg=="}) {
    EXPECT_FALSE(Base64Decode(bad).has_value()) << bad;
  }
  for (const char* bad : {"Z", "Zg==", "+//+"}) {
    EXPECT_FALSE(Base64Decode(bad, Base64Alphabet::kUrl).has_value()) << bad;
  }
}

TEST(Base64Test, EveryByteRoundTrips) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t n = 0; n <= all.size(); n += 37) {
    const std::string s = all.substr(0, n);
    EXPECT_EQ(Base64Decode(Base64Encode(s)), s);
    EXPECT_EQ(Base64Decode(Base64Encode(s, Base64Alphabet::kUrl), Base64Alphabet::kUrl), s);
  }
}

}  // namespace
}  // namespace berth
