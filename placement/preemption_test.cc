// DefaultPreemption: eligibility, victim selection with reprieve, node
// choice, nominations, and kubernetes/kubernetes#92600 and #86680.
#include "placement/preemption.h"

#include <gtest/gtest.h>

#include "placement/scheduler.h"
#include "placement/testing/builders.h"

namespace berth::placement {
namespace {

using testing::At;
using testing::NodeBuilder;
using testing::PodBuilder;

std::vector<std::string> VictimKeys(const Decision& d) {
  std::vector<std::string> out;
  if (d.preemption) {
    for (const auto& v : d.preemption->victims) out.push_back(v.key);
  }
  return out;
}

TEST(PreemptionTest, OneNodeReprievesTheMostImportantPods) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("4").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("p1").Cpu("1").Priority(1).BoundTo("n").Started(At(0)).Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("p2").Cpu("1").Priority(2).BoundTo("n").Started(At(0)).Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("p3").Cpu("2").Priority(3).BoundTo("n").Started(At(0)).Build()).ok());
  Decision d = Schedule(s, PodBuilder("hp").Cpu("2").Priority(10).Build());
  EXPECT_FALSE(d.bound());
  ASSERT_TRUE(d.preemption.has_value());
  // All three removed leaves 4; p3 (2) is reprieved, then p2 and p1 are not.
  EXPECT_EQ(d.preemption->node_name, "n");
  EXPECT_EQ(d.preemption->victims,
            (std::vector<Victim>{{"default/p2", "uid-p2", 2, false}, {"default/p1", "uid-p1", 1, false}}));
  EXPECT_EQ(d.nominated_node_name, "n");
  // The message is the plain FitError: preemption succeeded.
  EXPECT_EQ(d.message, "0/1 nodes are available: 1 Insufficient cpu.");
}

TEST(PreemptionTest, LowestPriorityAndLatestStartedGoFirst) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("3").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("old").Cpu("1").Priority(1).BoundTo("n").Started(At(0)).Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("new").Cpu("1").Priority(1).BoundTo("n").Started(At(60)).Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("mid").Cpu("1").Priority(2).BoundTo("n").Started(At(90)).Build()).ok());
  Decision d = Schedule(s, PodBuilder("hp").Cpu("1").Priority(10).Build());
  EXPECT_EQ(VictimKeys(d), (std::vector<std::string>{"default/new"}));
}

TEST(PreemptionTest, EqualPriorityIsNeverPreempted) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("2").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("peer").Cpu("2").Priority(10).BoundTo("n").Build()).ok());
  Decision d = Schedule(s, PodBuilder("p").Cpu("1").Priority(10).Build());
  EXPECT_FALSE(d.preemption.has_value());
  EXPECT_EQ(d.message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
            "No preemption victims found for incoming pod..");
}

TEST(PreemptionTest, RemovingEveryLowerPodMustBeEnough) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("4").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("low").Cpu("1").Priority(0).BoundTo("n").Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("peer").Cpu("3").Priority(10).BoundTo("n").Build()).ok());
  Decision d = Schedule(s, PodBuilder("p").Cpu("2").Priority(10).Build());
  EXPECT_FALSE(d.preemption.has_value());
  EXPECT_EQ(d.message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
            "Insufficient cpu..");
}

TEST(PreemptionTest, MultipleNodesLowestHighestVictimThenFewestVictims) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("a").Cpu("2").Build());
  s.UpsertNode(NodeBuilder("b").Cpu("2").Build());
  s.UpsertNode(NodeBuilder("c").Cpu("2").Build());
  s.UpsertNode(NodeBuilder("tainted").Cpu("64").Taint("k", "v").Build());
  // a: one pod of priority 5; b: two pods of priority 1; c: one pod of 1 and one of 2.
  ASSERT_TRUE(s.AddPod(PodBuilder("a1").Cpu("2").Priority(5).BoundTo("a").Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("b1").Cpu("1").Priority(1).BoundTo("b").Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("b2").Cpu("1").Priority(1).BoundTo("b").Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("c1").Cpu("1").Priority(1).BoundTo("c").Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("c2").Cpu("1").Priority(2).BoundTo("c").Build()).ok());
  // Needs 2 cpu: a -> [a1] (highest 5); b -> [b1,b2] (highest 1, sum lower);
  // c -> [c2,c1] (highest 2). b has the lowest highest-victim priority.
  Decision d = Schedule(s, PodBuilder("hp").Cpu("2").Priority(10).Build());
  ASSERT_TRUE(d.preemption.has_value());
  EXPECT_EQ(d.preemption->node_name, "b");
  EXPECT_EQ(d.preemption->victims.size(), 2u);
  // Needs 1 cpu: a -> [a1] (5), b -> [b1] or [b2] (1), c -> [c1] (1):
  // b and c tie on priority, sum and count; the latest-started highest victim
  // wins: c1 started later than both b pods.
  Snapshot t;
  t.UpsertNode(NodeBuilder("b").Cpu("2").Build());
  t.UpsertNode(NodeBuilder("c").Cpu("2").Build());
  ASSERT_TRUE(t.AddPod(PodBuilder("b1").Cpu("1").Priority(1).BoundTo("b").Started(At(0)).Build()).ok());
  ASSERT_TRUE(t.AddPod(PodBuilder("b2").Cpu("1").Priority(1).BoundTo("b").Started(At(10)).Build()).ok());
  ASSERT_TRUE(t.AddPod(PodBuilder("c1").Cpu("1").Priority(1).BoundTo("c").Started(At(20)).Build()).ok());
  ASSERT_TRUE(t.AddPod(PodBuilder("c2").Cpu("1").Priority(3).BoundTo("c").Started(At(0)).Build()).ok());
  d = Schedule(t, PodBuilder("hp").Cpu("1").Priority(10).Build());
  ASSERT_TRUE(d.preemption.has_value());
  EXPECT_EQ(d.preemption->node_name, "c");
  EXPECT_EQ(VictimKeys(d), (std::vector<std::string>{"default/c1"}));
}

TEST(PreemptionTest, FullTieGoesToTheSmallestNodeName) {
  Snapshot s;
  for (const char* n : {"z", "m", "a"}) {
    s.UpsertNode(NodeBuilder(n).Cpu("1").Build());
    ASSERT_TRUE(s.AddPod(PodBuilder(std::string("low-") + n).Cpu("1").BoundTo(n).Started(At(0)).Build()).ok());
  }
  Decision d = Schedule(s, PodBuilder("hp").Cpu("1").Priority(1).Build());
  ASSERT_TRUE(d.preemption.has_value());
  EXPECT_EQ(d.preemption->node_name, "a");
}

TEST(PreemptionTest, UnresolvableNodesAreNotHelped) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("cordoned").Cpu("8").Unschedulable().Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("low").Cpu("8").BoundTo("cordoned").Build()).ok());
  Decision d = Schedule(s, PodBuilder("hp").Cpu("1").Priority(100).Build());
  EXPECT_FALSE(d.preemption.has_value());
  EXPECT_EQ(d.message,
            "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are "
            "available: 1 Preemption is not helpful for scheduling..");
}

// kubernetes/kubernetes#86680: Never evicts nothing, whatever the priority gap.
TEST(PreemptionTest, NeverPolicyPreemptsNothing) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("8").Resource("nvidia.com/gpu", "6").Build());
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(s.AddPod(PodBuilder("low-" + std::to_string(i)).Resource("nvidia.com/gpu", "1")
                             .BoundTo("n").Build()).ok());
  }
  Decision d = Schedule(s, PodBuilder("seventh").Resource("nvidia.com/gpu", "1").Priority(1000).Never().Build());
  EXPECT_FALSE(d.preemption.has_value());
  EXPECT_FALSE(d.nominated_node_name.has_value());
  EXPECT_EQ(d.message,
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: not eligible due "
            "to preemptionPolicy=Never..");
}

// kubernetes/kubernetes#92600: the nominated node became unusable while its victim terminates.
TEST(PreemptionTest, C08NominatedNodeUnusablePreemptsElsewhere) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("node-a").Cpu("2").Build());
  s.UpsertNode(NodeBuilder("node-b").Cpu("2").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("low").Cpu("2").Priority(1).BoundTo("node-a")
                           .Terminating(/*by_preemption=*/true).Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("mid").Cpu("2").Priority(5).BoundTo("node-b").Build()).ok());
  Pod high = PodBuilder("high").Cpu("2").Priority(10).Nominated("node-a").Build();
  // While node-a is usable, the pod waits for its victim: not eligible.
  Decision wait = Schedule(s, high);
  EXPECT_FALSE(wait.preemption.has_value());
  EXPECT_FALSE(wait.nominated_node_name.has_value());
  EXPECT_EQ(wait.message,
            "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to a "
            "terminating pod on the nominated node..");
  // node-a is tainted before the victim is gone: preempt mid on node-b.
  s.UpsertNode(NodeBuilder("node-a").Cpu("2").Taint("node.kubernetes.io/unschedulable", "").Build());
  Decision d = Schedule(s, high);
  ASSERT_TRUE(d.preemption.has_value());
  EXPECT_EQ(d.preemption->node_name, "node-b");
  EXPECT_EQ(VictimKeys(d), (std::vector<std::string>{"default/mid"}));
  EXPECT_EQ(d.nominated_node_name, "node-b");
}

TEST(PreemptionTest, TerminatingPodsNotPreemptedByTheSchedulerDoNotBlock) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("2").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("deleted").Cpu("1").Priority(1).BoundTo("n").Terminating(false).Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("low").Cpu("1").Priority(1).BoundTo("n").Started(At(0)).Build()).ok());
  Pod high = PodBuilder("high").Cpu("2").Priority(10).Nominated("n").Build();
  EXPECT_EQ(PreemptionIneligibility(s, high, nullptr), "");
  Decision d = Schedule(s, high);
  ASSERT_TRUE(d.preemption.has_value());
  // Both go: the terminating one is marked so it is not deleted twice.
  EXPECT_EQ(d.preemption->victims,
            (std::vector<Victim>{{"default/low", "uid-low", 1, false},
                                 {"default/deleted", "uid-deleted", 1, true}}));
}

TEST(PreemptionTest, NominationsOfLowerPriorityOnTheChosenNodeAreCleared) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("2").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("low").Cpu("2").Priority(1).BoundTo("n").Build()).ok());
  ASSERT_TRUE(s.AddNominatedPod(PodBuilder("waiting-low").Cpu("1").Priority(5).Nominated("n").Build()).ok());
  ASSERT_TRUE(s.AddNominatedPod(PodBuilder("waiting-high").Cpu("1").Priority(50).Nominated("other").Build()).code() ==
              Code::kNotFound);
  Decision d = Schedule(s, PodBuilder("hp").Cpu("2").Priority(10).Build());
  ASSERT_TRUE(d.preemption.has_value());
  EXPECT_EQ(d.preemption->nominations_to_clear, (std::vector<std::string>{"default/waiting-low"}));
}

TEST(PreemptionTest, HigherPriorityNominationsStillReserveDuringVictimSelection) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("4").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("l1").Cpu("1").Priority(1).BoundTo("n").Started(At(0)).Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("l2").Cpu("1").Priority(1).BoundTo("n").Started(At(5)).Build()).ok());
  ASSERT_TRUE(s.AddPod(PodBuilder("l3").Cpu("2").Priority(1).BoundTo("n").Started(At(9)).Build()).ok());
  ASSERT_TRUE(s.AddNominatedPod(PodBuilder("vip").Cpu("1").Priority(100).Nominated("n").Build()).ok());
  // 1 (vip) + 2 (hp) must fit in 4: one more cpu beyond the free 0 + ... ->
  // remove all (3 free after vip), reprieve l1 (2 free), then l2 (1 free, hp
  // needs 2: victim), then l3 (victim).
  Decision d = Schedule(s, PodBuilder("hp").Cpu("2").Priority(10).Build());
  EXPECT_EQ(VictimKeys(d), (std::vector<std::string>{"default/l2", "default/l3"}));
}

TEST(PreemptionTest, NoCandidateClearsAnExistingNomination) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("2").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("peer").Cpu("2").Priority(10).BoundTo("n").Build()).ok());
  Decision d = Schedule(s, PodBuilder("p").Cpu("1").Priority(10).Nominated("n").Build());
  EXPECT_EQ(d.nominated_node_name, "");
}

}  // namespace
}  // namespace berth::placement
