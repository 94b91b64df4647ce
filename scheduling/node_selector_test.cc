#include "scheduling/node_selector.h"

#include <gtest/gtest.h>

#include <vector>

namespace berth::scheduling {
namespace {

struct TermCase {
  const char* name;
  NodeSelectorTerm term;
  bool matches;
};

TEST(NodeSelectorTermTest, OperatorsAndFieldsTable) {
  using Op = NodeSelectorRequirement::Operator;
  // Node "gpu-1" labelled zone=a, gpus=8.
  const Labels labels = {{"zone", "a"}, {"gpus", "8"}};
  const std::vector<TermCase> cases = {
      {"In match", {{{"zone", Op::kIn, {"b", "a"}}}, {}}, true},
      {"In miss", {{{"zone", Op::kIn, {"b"}}}, {}}, false},
      {"In absent key", {{{"rack", Op::kIn, {"a"}}}, {}}, false},
      {"NotIn other value", {{{"zone", Op::kNotIn, {"b"}}}, {}}, true},
      {"NotIn same value", {{{"zone", Op::kNotIn, {"a"}}}, {}}, false},
      {"NotIn absent key matches", {{{"rack", Op::kNotIn, {"a"}}}, {}}, true},
      {"Exists", {{{"zone", Op::kExists, {}}}, {}}, true},
      {"Exists absent", {{{"rack", Op::kExists, {}}}, {}}, false},
      {"DoesNotExist absent", {{{"rack", Op::kDoesNotExist, {}}}, {}}, true},
      {"DoesNotExist present", {{{"zone", Op::kDoesNotExist, {}}}, {}}, false},
      {"Gt numeric", {{{"gpus", Op::kGt, {"4"}}}, {}}, true},
      {"Gt equal is false", {{{"gpus", Op::kGt, {"8"}}}, {}}, false},
      {"Lt numeric", {{{"gpus", Op::kLt, {"10"}}}, {}}, true},
      {"Gt non-numeric label", {{{"zone", Op::kGt, {"1"}}}, {}}, false},
      {"Gt invalid value", {{{"gpus", Op::kGt, {"x"}}}, {}}, false},
      {"Gt two values invalid", {{{"gpus", Op::kGt, {"1", "2"}}}, {}}, false},
      {"In without values invalid", {{{"zone", Op::kIn, {}}}, {}}, false},
      {"expressions are ANDed",
       {{{"zone", Op::kIn, {"a"}}, {"gpus", Op::kLt, {"2"}}}, {}}, false},
      {"matchFields metadata.name In", {{}, {{"metadata.name", Op::kIn, {"gpu-1"}}}}, true},
      {"matchFields metadata.name NotIn", {{}, {{"metadata.name", Op::kNotIn, {"gpu-1"}}}}, false},
      {"matchFields other key invalid", {{}, {{"metadata.uid", Op::kIn, {"gpu-1"}}}}, false},
      {"empty term matches nothing", {{}, {}}, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(MatchesNodeSelectorTerm(c.term, labels, "gpu-1"), c.matches) << c.name;
  }
  // Terms are ORed; an invalid term does not stop the others.
  std::vector<NodeSelectorTerm> terms = {{{{"gpus", Op::kGt, {"x"}}}, {}},
                                         {{{"zone", Op::kIn, {"a"}}}, {}}};
  EXPECT_TRUE(MatchesNodeSelectorTerms(terms, labels, "gpu-1"));
  EXPECT_FALSE(MatchesNodeSelectorTerms({}, labels, "gpu-1"));
}

}  // namespace
}  // namespace berth::scheduling
