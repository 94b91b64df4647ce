#include "api/schema_pattern.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace berth::api {
namespace {

constexpr const char* kQuantity =
    R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)";
constexpr const char* kDnsSubdomain = R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$)";
constexpr const char* kDnsLabel = R"(^[a-z0-9]([-a-z0-9]*[a-z0-9])?$)";

// Every string over `alphabet` of length 0..max_len.
std::vector<std::string> AllStrings(const std::string& alphabet, size_t max_len) {
  std::vector<std::string> out = {""};
  size_t begin = 0;
  for (size_t len = 1; len <= max_len; ++len) {
    const size_t end = out.size();
    for (size_t i = begin; i < end; ++i) {
      for (char c : alphabet) out.push_back(out[i] + c);
    }
    begin = end;
  }
  return out;
}

// The hand-written matcher accepts exactly what the general engine (RE2, Go's
// regexp) accepts.
void ExpectSameAsRegex(const char* pattern, const std::string& alphabet, size_t max_len) {
  auto p = SchemaPattern::Compile(pattern);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(p->builtin()) << pattern;
  auto re = Regexp::Compile(pattern);
  ASSERT_TRUE(re.ok()) << re.status().ToString();
  size_t accepted = 0;
  for (const std::string& s : AllStrings(alphabet, max_len)) {
    const bool want = re->Search(s);
    ASSERT_EQ(p->Search(s), want) << "pattern " << pattern << " on \"" << s << "\"";
    accepted += want;
  }
  // The corpus exercises both answers.
  EXPECT_GT(accepted, 0u);
}

TEST(SchemaPatternTest, QuantityMatchesRegexOnEveryShortString) {
  ExpectSameAsRegex(kQuantity, "0.+-eEKimu\nx", 5);
}

TEST(SchemaPatternTest, DnsSubdomainMatchesRegexOnEveryShortString) {
  ExpectSameAsRegex(kDnsSubdomain, "a0-.A_\n", 6);
}

TEST(SchemaPatternTest, DnsLabelMatchesRegexOnEveryShortString) { ExpectSameAsRegex(kDnsLabel, "a0-.A_\n", 6); }

TEST(SchemaPatternTest, KnownQuantities) {
  auto p = SchemaPattern::Compile(kQuantity);
  ASSERT_TRUE(p.ok());
  for (const char* s : {"1", "1Gi", "500m", "1.5", ".5", "+1e3", "-2E-1.5", "1E", "1Ei", "100Mi"}) {
    EXPECT_TRUE(p->Search(s)) << s;
  }
  for (const char* s : {"", "1.5.5", "1Gb", "Gi", "1 Gi", "1e", ".", "1ki", "1Ki "}) {
    EXPECT_FALSE(p->Search(s)) << s;
  }
}

TEST(SchemaPatternTest, OtherPatternsUseRegexSearch) {
  auto p = SchemaPattern::Compile("b+c");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->builtin());
  EXPECT_TRUE(p->Search("abbcd"));  // unanchored search
  EXPECT_FALSE(p->Search("acb"));
  EXPECT_EQ(p->pattern(), "b+c");
}

TEST(SchemaPatternTest, InvalidPatternIsInvalid) {
  auto p = SchemaPattern::Compile("[a-");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalid);
  EXPECT_EQ(p.status().message(), "error parsing regexp: missing closing ]: `[a-`");
}

// A pattern is searched in linear time without recursion: a string of a megabyte
// against patterns whose std::regex search recursed once per character (and took the
// stack) answers at once.
TEST(SchemaPatternTest, LongInputsMatchWithoutRecursion) {
  const std::string long_a(1 << 20, 'a');
  for (const char* pattern : {"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$", "^(a|aa)*$", "(a*)*b"}) {
    auto p = SchemaPattern::Compile(pattern);
    ASSERT_TRUE(p.ok()) << pattern;
    EXPECT_EQ(p->Search(long_a), std::string_view(pattern) != "(a*)*b") << pattern;
  }
}

// Compile errors read as Go's regexp.Compile's.
TEST(RegexpTest, CompileErrorsAreGoRegexpErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"(a", "error parsing regexp: missing closing ): `(a`"},
      {"a)", "error parsing regexp: unexpected ): `a)`"},
      {"[z-a]", "error parsing regexp: invalid character class range: `z-a`"},
      {"x{1001}", "error parsing regexp: invalid repeat count: `{1001}`"},
      {"\\", "error parsing regexp: trailing backslash at end of expression: ``"},
      {"*a", "error parsing regexp: missing argument to repetition operator: `*`"},
  };
  for (const auto& [pattern, want] : cases) {
    auto re = Regexp::Compile(pattern);
    ASSERT_FALSE(re.ok()) << pattern;
    EXPECT_EQ(re.status().code(), Code::kInvalid);
    EXPECT_EQ(re.status().message(), want) << pattern;
  }
  auto ok = Regexp::Compile("^node .* not ready$");
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->Search("node n1 is not ready"));
  EXPECT_FALSE(ok->Search("node n1 is not ready\n"));  // `$` is the end of the text
  EXPECT_TRUE(ok->FullMatch("node x not ready"));
  EXPECT_FALSE(ok->FullMatch("a node x not ready"));
}

}  // namespace
}  // namespace berth::api
