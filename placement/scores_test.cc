#include "placement/scores.h"

#include <gtest/gtest.h>

#include "placement/testing/builders.h"

namespace berth::placement {
namespace {

using scheduling::TaintEffect;
using scheduling::Toleration;
using testing::NodeBuilder;
using testing::PodBuilder;

struct Scored {
  int64_t least;
  int64_t balanced;
};

Scored ScoreOn(const Node& node, const Pod& pod, const std::vector<Pod>& bound = {}) {
  Snapshot s;
  s.UpsertNode(node);
  for (const auto& b : bound) EXPECT_TRUE(s.AddPod(b).ok());
  const NodeInfo& info = s.nodes()[0];
  PodUsage u = s.Compile(pod);
  return {LeastAllocatedScore(u, info, info.usage()), BalancedAllocationScore(u, info, info.usage())};
}

TEST(ScoresTest, LeastAllocatedAndBalancedOnAnEmptyNode) {
  Pod pod = PodBuilder("p").Cpu("1").Memory("2Gi").Build();
  // cpu (4-1)/4 -> 75, memory (8-2)/8 -> 75; fractions equal -> balanced 100.
  Scored a = ScoreOn(NodeBuilder("a").Cpu("4").Memory("8Gi").Build(), pod);
  EXPECT_EQ(a.least, 75);
  EXPECT_EQ(a.balanced, 100);
  // cpu 75, memory (4-2)/4 -> 50: (75+50)/2 = 62 (integer); std = |0.25-0.5|/2
  // = 0.125 -> int64(87.5) = 87.
  Scored b = ScoreOn(NodeBuilder("b").Cpu("4").Memory("4Gi").Build(), pod);
  EXPECT_EQ(b.least, 62);
  EXPECT_EQ(b.balanced, 87);
}

TEST(ScoresTest, BoundPodsCountAndFullNodesScoreZero) {
  Pod pod = PodBuilder("p").Cpu("1").Memory("1Gi").Build();
  Pod bound = PodBuilder("x").Cpu("2").Memory("1Gi").BoundTo("n").Build();
  // cpu (4-3)/4 -> 25, memory (4-2)/4 -> 50 -> 37; fractions 0.75, 0.5 -> 87.
  Scored s = ScoreOn(NodeBuilder("n").Cpu("4").Memory("4Gi").Build(), pod, {bound});
  EXPECT_EQ(s.least, 37);
  EXPECT_EQ(s.balanced, 87);
}

TEST(ScoresTest, BestEffortPodsUseNonZeroDefaultsAndSkipBalanced) {
  // A pod without requests counts as 100m cpu / 200Mi memory for
  // LeastAllocated: cpu (1000-100)/1000 -> 90, memory (1000Mi-200Mi)/1000Mi
  // -> 80 -> 85; BalancedAllocation skips it.
  Scored s = ScoreOn(NodeBuilder("n").Cpu("1").Memory("1000Mi").Build(), PodBuilder("p").Build());
  EXPECT_EQ(s.least, 85);
  EXPECT_EQ(s.balanced, 0);
  // Bound best-effort pods count with the same defaults: 3 x 100m + 100m.
  std::vector<Pod> bound;
  for (int i = 0; i < 3; ++i) bound.push_back(PodBuilder("b" + std::to_string(i)).BoundTo("n").Build());
  Scored t = ScoreOn(NodeBuilder("n").Cpu("1").Memory("1000Mi").Build(), PodBuilder("p").Build(), bound);
  // cpu (1000-400)/1000 -> 60, memory (1000-800)/1000 -> 20 -> 40.
  EXPECT_EQ(t.least, 40);
}

TEST(ScoresTest, TaintTolerationCountsIntolerablePreferNoScheduleAndNormalises) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("a").Cpu("1").Build());
  s.UpsertNode(NodeBuilder("b").Cpu("1").Taint("x", "1", TaintEffect::kPreferNoSchedule).Build());
  s.UpsertNode(NodeBuilder("c").Cpu("1").Taint("x", "1", TaintEffect::kPreferNoSchedule)
                   .Taint("y", "1", TaintEffect::kPreferNoSchedule).Taint("z", "1").Build());
  Pod pod = PodBuilder("p").Build();
  std::vector<int64_t> counts;
  for (const auto& n : s.nodes()) counts.push_back(IntolerablePreferNoScheduleTaints(pod, n));
  EXPECT_EQ(counts, (std::vector<int64_t>{0, 1, 2}));  // NoSchedule z is not counted
  NormalizeReverse(counts);
  EXPECT_EQ(counts, (std::vector<int64_t>{100, 50, 0}));
  // A toleration with effect NoSchedule does not help against PreferNoSchedule.
  Pod tolerant = PodBuilder("t").Tolerate({"x", Toleration::Operator::kExists, "", TaintEffect::kNoSchedule})
                     .Tolerate({"y", Toleration::Operator::kExists, "", std::nullopt}).Build();
  EXPECT_EQ(IntolerablePreferNoScheduleTaints(tolerant, s.nodes()[2]), 1);
  std::vector<int64_t> none = {0, 0};
  NormalizeReverse(none);
  EXPECT_EQ(none, (std::vector<int64_t>{100, 100}));
}

}  // namespace
}  // namespace berth::placement
