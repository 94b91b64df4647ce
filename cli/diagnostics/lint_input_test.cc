#include "cli/diagnostics/lint_input.h"

#include <gtest/gtest.h>

namespace berth::cli::diagnostics {
namespace {

TEST(LineIndexTest, DocumentsAndFields) {
  auto idx = LineIndex(
      "# c\n"
      "---\n"
      "kind: A\n"                 // 3
      "metadata:\n"               // 4
      "  name: a\n"               // 5
      "  labels:\n"               // 6
      "    x.io/y: z\n"           // 7
      "---\n"
      "# only a comment\n"
      "---\n"
      "kind: List\n"              // 11
      "items:\n"                  // 12
      "- kind: B\n"               // 13
      "  spec:\n"                 // 14
      "    list: [1, 2]\n");      // 15
  ASSERT_EQ(idx.size(), 2u);  // the empty document is skipped, the List expanded
  EXPECT_EQ(idx[0].at(""), 3);
  EXPECT_EQ(idx[0].at("metadata.name"), 5);
  EXPECT_EQ(idx[0].at("metadata.labels[x.io/y]"), 7);
  EXPECT_EQ(idx[1].at(""), 13);
  EXPECT_EQ(idx[1].at("spec.list[1]"), 15);
}

TEST(BuildLintInputTest, ConvertsAndDefaultsNamespace) {
  std::vector<ManifestObject> m = {
      {api::Object::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue",
                              "metadata":{"name":"q"},"spec":{"clusterQueue":"cq"}})"),
       "STDIN"},
      {api::Object::parse(R"({"apiVersion":"example.com/v1","kind":"Unknown","metadata":{"name":"u"}})"), "STDIN"}};
  auto input = BuildLintInput({}, m, "team-a");
  ASSERT_TRUE(input.ok()) << input.status().message();
  const api::Object* lq = input->view.LocalQueue("team-a", "q");
  ASSERT_NE(lq, nullptr);
  EXPECT_EQ((*lq)["apiVersion"], "kueue.x-k8s.io/v1beta2");
  auto origin = input->provenance.find(ObjectKey{"LocalQueue", "team-a", "q"});
  ASSERT_NE(origin, input->provenance.end());
  EXPECT_EQ(origin->second.api_version, "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(input->provenance.size(), 1u);  // the unknown kind is skipped
}

}  // namespace
}  // namespace berth::cli::diagnostics
