#include "placement/messages.h"

#include <gtest/gtest.h>

namespace berth::placement {
namespace {

NodeFailure F(const char* node, std::vector<std::string> reasons,
              FilterCode code = FilterCode::kUnschedulable) {
  return {node, {code, std::move(reasons)}};
}

TEST(MessagesTest, HistogramCountsReasonsAndSortsAsStrings) {
  std::vector<NodeFailure> f = {
      F("a", {"Insufficient cpu"}),
      F("b", {"node(s) had untolerated taint {node-role: gpu}"}),
      F("c", {"node(s) had untolerated taint {node-role: gpu}"}),
  };
  EXPECT_EQ(FitErrorMessage(3, f),
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint "
            "{node-role: gpu}.");
}

TEST(MessagesTest, OneNodeContributesEveryReason) {
  std::vector<NodeFailure> f;
  for (const char* n : {"a", "b", "c", "d", "e", "f"}) {
    f.push_back(F(n, {"Insufficient cpu", "Insufficient ephemeral-storage", "Insufficient memory"}));
  }
  EXPECT_EQ(FitErrorMessage(6, f),
            "0/6 nodes are available: 6 Insufficient cpu, 6 Insufficient ephemeral-storage, 6 "
            "Insufficient memory.");
}

TEST(MessagesTest, CountsSortLexicographicallyNotNumerically) {
  std::vector<NodeFailure> f;
  for (int i = 0; i < 10; ++i) f.push_back(F("x", {"Too many pods"}));
  f.push_back(F("y", {"Insufficient cpu"}));
  f.push_back(F("z", {"Insufficient cpu"}));
  // "10 Too many pods" < "2 Insufficient cpu" as strings.
  EXPECT_EQ(FitErrorMessage(12, f), "0/12 nodes are available: 10 Too many pods, 2 Insufficient cpu.");
}

TEST(MessagesTest, PreemptionPartEndsInTwoDots) {
  std::vector<NodeFailure> f = {F("a", {"Insufficient cpu"})};
  EXPECT_EQ(FitErrorMessage(1, f, "preemption: not eligible due to preemptionPolicy=Never."),
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
            "preemptionPolicy=Never..");
  std::string inner = FitErrorMessage(
      3, {F("a", {"No preemption victims found for incoming pod"}),
          F("b", {"Preemption is not helpful for scheduling"}),
          F("c", {"Preemption is not helpful for scheduling"})});
  EXPECT_EQ(FitErrorMessage(3,
                            {F("a", {"Insufficient cpu"}),
                             F("b", {"node(s) had untolerated taint {node-role: gpu}"}),
                             F("c", {"node(s) had untolerated taint {node-role: gpu}"})},
                            "preemption: " + inner),
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint "
            "{node-role: gpu}. preemption: 0/3 nodes are available: 1 No preemption victims found "
            "for incoming pod, 2 Preemption is not helpful for scheduling..");
}

TEST(MessagesTest, EventTexts) {
  EXPECT_EQ(ScheduledMessage("default", "w0", "node-1"), "Successfully assigned default/w0 to node-1");
  EXPECT_EQ(PreemptedMessage("cf6837c9", "node-1"), "Preempted by pod cf6837c9 on node node-1");
  EXPECT_EQ(DisruptionTargetMessage(), "default-scheduler: preempting to accommodate a higher priority pod");
}

}  // namespace
}  // namespace berth::placement
