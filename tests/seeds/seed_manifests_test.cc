// ExtractManifests on small synthetic texts: the extraction rules of seed_manifests.h.
#include "tests/seeds/seed_manifests.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace berth::seeds {
namespace {

using ::testing::ElementsAre;

std::vector<std::pair<int, std::string>> LinesAndTexts(const std::vector<SeedManifest>& ms) {
  std::vector<std::pair<int, std::string>> out;
  for (const SeedManifest& m : ms) out.emplace_back(m.line, m.text);
  return out;
}

// The one manifest ExtractManifests finds in `text` (a failure when it finds another number).
SeedManifest OnlyManifest(const std::string& file, const std::string& text) {
  const std::vector<SeedManifest> ms = ExtractManifests(file, text);
  EXPECT_EQ(ms.size(), 1u);
  return ms.size() == 1 ? ms[0] : SeedManifest{};
}

TEST(ExtractManifests, ManifestRunsUntilProse) {
  const std::string text =
      "Some prose.\n"
      "\n"
      "apiVersion: v1\n"
      "kind: Namespace\n"
      "metadata:\n"
      "  name: team-a\n"
      "\n"
      "適用後、確認する。\n";
  const SeedManifest m = OnlyManifest("a.txt", text);
  EXPECT_EQ(m.file, "a.txt");
  EXPECT_EQ(m.line, 3);
  EXPECT_EQ(m.end_line, 6);
  EXPECT_EQ(m.text, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n");
}

TEST(ExtractManifests, SeparatorsSplitDocumentsAcrossBlankLines) {
  const std::string text =
      "apiVersion: v1\n"
      "kind: A\n"
      "\n"
      "---\n"
      "# comment above the second document\n"
      "apiVersion: v1\n"
      "kind: B\n"
      "---\n"
      "# Jobに適用\n"
      "metadata:\n"
      "  labels:\n"
      "    x: y\n"
      "\n"
      "Volcano:\n";
  EXPECT_THAT(LinesAndTexts(ExtractManifests("b.txt", text)),
              ElementsAre(std::pair(1, std::string("apiVersion: v1\nkind: A\n")),
                          std::pair(6, std::string("apiVersion: v1\nkind: B\n")),
                          std::pair(10, std::string("metadata:\n  labels:\n    x: y\n"))));
}

TEST(ExtractManifests, BlankLineBeforeIndentedTextContinuesBlockScalar) {
  const std::string text =
      "apiVersion: v1\n"
      "description: |\n"
      "  first paragraph\n"
      "\n"
      "  second paragraph\n"
      "\n"
      "# 適用\n"
      "kubectl apply -f x.yaml\n";
  const SeedManifest m = OnlyManifest("c.txt", text);
  EXPECT_EQ(m.end_line, 5);
  EXPECT_EQ(m.text, "apiVersion: v1\ndescription: |\n  first paragraph\n\n  second paragraph\n");
}

TEST(ExtractManifests, HeredocEndsAtEofAndCommentThenManifestStartsANewBlock) {
  const std::string text =
      "cat <<EOF | kubectl apply -f -\n"
      "apiVersion: v1\n"
      "kind: Pod\n"
      "EOF\n"
      "\n"
      "# the generated object\n"
      "apiVersion: v1\n"
      "kind: Workload\n"
      "0\n";
  EXPECT_THAT(LinesAndTexts(ExtractManifests("d.txt", text)),
              ElementsAre(std::pair(2, std::string("apiVersion: v1\nkind: Pod\n")),
                          std::pair(7, std::string("apiVersion: v1\nkind: Workload\n"))));
}

TEST(ExtractManifests, TrailingCommentsAndSeparatorsAreTrimmed) {
  const std::string text =
      "apiVersion: v1\n"
      "kind: A\n"
      "# trailing note\n"
      "---\n"
      "\n"
      "prose\n";
  const SeedManifest m = OnlyManifest("e.txt", text);
  EXPECT_EQ(m.text, "apiVersion: v1\nkind: A\n");
  EXPECT_EQ(m.end_line, 2);
}

TEST(ExtractManifests, IndentedApiVersionAndCrlfLines) {
  // An indented apiVersion (inside another document) does not start a block; CR LF
  // line ends are accepted.
  const std::string text = "  apiVersion: v1\r\napiVersion: v2\r\nkind: K\r\n";
  const SeedManifest m = OnlyManifest("f.txt", text);
  EXPECT_EQ(m.line, 2);
  EXPECT_EQ(m.text, "apiVersion: v2\nkind: K\n");
}

}  // namespace
}  // namespace berth::seeds
