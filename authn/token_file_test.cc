#include "authn/token_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::authn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(TokenFileTest, RecordsAsKubeApiserverReadsThem) {
  auto file = TokenFile::Parse(
      "abc123,alice,u-1,\"team-a,ml\"\n"
      "def456,bob,u-2\n"
      "\n"
      ",nobody,u-3\n"
      "ghi789,\"carol, the admin\",u-4,system:masters\r\n");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->size(), 3u);
  auto alice = file->Authenticate("abc123");
  ASSERT_TRUE(alice.has_value());
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->uid, "u-1");
  EXPECT_THAT(alice->groups, ElementsAre("team-a", "ml"));
  auto bob = file->Authenticate("def456");
  ASSERT_TRUE(bob.has_value());
  EXPECT_TRUE(bob->groups.empty());
  auto carol = file->Authenticate("ghi789");
  ASSERT_TRUE(carol.has_value());
  EXPECT_EQ(carol->name, "carol, the admin");
  EXPECT_THAT(carol->groups, ElementsAre("system:masters"));
  // An empty token is never a credential, and neither is a prefix or an unknown one.
  EXPECT_FALSE(file->Authenticate("").has_value());
  EXPECT_FALSE(file->Authenticate("abc12").has_value());
  EXPECT_FALSE(file->Authenticate("nobody").has_value());
}

TEST(TokenFileTest, TheLastRecordOfATokenWins) {
  auto file = TokenFile::Parse("t,first,1\nt,second,2\n");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->Authenticate("t")->name, "second");
}

TEST(TokenFileTest, MalformedFilesAreRefusedWithTheReason) {
  auto short_record = TokenFile::Parse("t,alice\n", "/etc/berth/tokens.csv");
  ASSERT_FALSE(short_record.ok());
  EXPECT_EQ(short_record.status().message(),
            "token file '/etc/berth/tokens.csv' must have at least 3 columns (token, user name, user uid), found 2");
  auto open_quote = TokenFile::Parse("t,alice,1,\"team-a\n");
  ASSERT_FALSE(open_quote.ok());
  EXPECT_THAT(open_quote.status().message(), HasSubstr("extraneous or missing \" in quoted-field"));
  auto after_quote = TokenFile::Parse("t,\"alice\"x,1\n");
  ASSERT_FALSE(after_quote.ok());
  EXPECT_THAT(after_quote.status().message(), HasSubstr("line 1"));
}

TEST(TokenFileTest, OversizedTokensAndFilesAreRefused) {
  const std::string long_token(kMaxBearerTokenBytes + 1, 'x');
  auto file = TokenFile::Parse(long_token + ",alice,1\n");
  ASSERT_TRUE(file.ok());
  EXPECT_FALSE(file->Authenticate(long_token).has_value());
  EXPECT_FALSE(TokenFile::Parse(std::string(kMaxTokenFileBytes + 1, 'a')).ok());
  EXPECT_FALSE(TokenFile::Load("/nonexistent/tokens.csv").ok());
}

TEST(CsvTest, QuotedFieldsHoldCommasQuotesAndNewlines) {
  auto records = ParseCsv("a,\"b,c\",\"d\"\"e\",\"f\ng\"\nh\n");
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_THAT((*records)[0], ElementsAre("a", "b,c", "d\"e", "f\ng"));
  EXPECT_THAT((*records)[1], ElementsAre("h"));
}

}  // namespace
}  // namespace berth::authn
