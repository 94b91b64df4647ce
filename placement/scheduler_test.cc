// Scheduling cycle: node choice by score, the FailedScheduling message,
// nominated-node handling, stale nominations (kubernetes/kubernetes#106780) and
// gang placement (volcano-sh/volcano#3373).
#include "placement/scheduler.h"

#include <gtest/gtest.h>

#include "placement/testing/builders.h"

namespace berth::placement {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

TEST(ScheduleTest, PicksTheLeastAllocatedNodeAndReportsScores) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("a").Cpu("4").Memory("8Gi").Build());
  s.UpsertNode(NodeBuilder("b").Cpu("8").Memory("16Gi").Build());
  s.UpsertNode(NodeBuilder("c").Cpu("4").Memory("8Gi").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("x").Cpu("2").Memory("4Gi").BoundTo("a").Build()).ok());
  Decision d = Schedule(s, PodBuilder("p").Cpu("1").Memory("2Gi").Build());
  ASSERT_TRUE(d.bound());
  EXPECT_EQ(d.node_name, "b");
  EXPECT_TRUE(d.message.empty());
  ASSERT_EQ(d.scores.size(), 3u);
  // b: least (7/8 -> 87, 14/16 -> 87) = 87, balanced 100, taint 100 x 3.
  EXPECT_EQ(d.scores[0], (NodeScore{"b", 87 + 100 + 300, 87, 100, 100}));
  // c: 75 + 100 + 300; a: (1/4 -> 25, 2/8 -> 25) 25 + 100 + 300.
  EXPECT_EQ(d.scores[1].node_name, "c");
  EXPECT_EQ(d.scores[1].total, 475);
  EXPECT_EQ(d.scores[2].node_name, "a");
  EXPECT_EQ(d.scores[2].total, 425);
}

TEST(ScheduleTest, EqualScoresGoToTheSmallestNodeName) {
  Snapshot s;
  for (const char* n : {"node-c", "node-a", "node-b"}) s.UpsertNode(NodeBuilder(n).Cpu("4").Memory("4Gi").Build());
  Decision d = Schedule(s, PodBuilder("p").Cpu("1").Build());
  EXPECT_EQ(d.node_name, "node-a");
}

TEST(ScheduleTest, PreferNoScheduleTaintSteersAway) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("a")
                   .Cpu("4")
                   .Memory("4Gi")
                   .Taint("spot", "true", scheduling::TaintEffect::kPreferNoSchedule)
                   .Build());
  s.UpsertNode(NodeBuilder("b").Cpu("4").Memory("4Gi").Build());
  EXPECT_EQ(Schedule(s, PodBuilder("p").Cpu("1").Build()).node_name, "b");
}

// Done-when (a): the admitted 6-cpu pod on a node with allocatable cpu 5.
TEST(ScheduleTest, SixCpuPodOnFiveCpuNode) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("node-1").Cpu("5").Memory("32Gi").Build());
  Decision d = Schedule(s, PodBuilder("trainer-node-0-0").Cpu("6").Build());
  EXPECT_FALSE(d.bound());
  EXPECT_EQ(d.message.rfind("0/1 nodes are available: 1 Insufficient cpu.", 0), 0u) << d.message;
  EXPECT_EQ(d.message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
            "No preemption victims found for incoming pod..");
  EXPECT_EQ(d.failures, (std::vector<NodeFailure>{
                            {"node-1", {FilterCode::kUnschedulable, {"Insufficient cpu"}}}}));
  EXPECT_FALSE(d.preemption.has_value());
  EXPECT_FALSE(d.nominated_node_name.has_value());
  // Without preemption the message stops after the histogram.
  PlacementOptions no_preemption;
  no_preemption.enable_preemption = false;
  EXPECT_EQ(Schedule(s, PodBuilder("p").Cpu("6").Build(), no_preemption).message,
            "0/1 nodes are available: 1 Insufficient cpu.");
}

TEST(ScheduleTest, MessageOfTheBrief) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("cpu-1").Cpu("2").Build());
  s.UpsertNode(NodeBuilder("gpu-1").Cpu("64").Taint("node-role", "gpu").Build());
  s.UpsertNode(NodeBuilder("gpu-2").Cpu("64").Taint("node-role", "gpu").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("same-prio").Cpu("1").Priority(5).BoundTo("cpu-1").Build()).ok());
  Decision d = Schedule(s, PodBuilder("p").Cpu("2").Priority(5).Build());
  EXPECT_EQ(d.message,
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint "
            "{node-role: gpu}. preemption: 0/3 nodes are available: 1 No preemption victims found "
            "for incoming pod, 2 Preemption is not helpful for scheduling..");
}

TEST(ScheduleTest, NoNodes) {
  Snapshot s;
  Decision d = Schedule(s, PodBuilder("p").Build());
  EXPECT_FALSE(d.bound());
  EXPECT_EQ(d.message, "no nodes available to schedule pods");
}

TEST(ScheduleTest, NominatedNodeIsTriedFirstWithoutScoring) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("big").Cpu("64").Memory("64Gi").Build());
  s.UpsertNode(NodeBuilder("small").Cpu("2").Memory("2Gi").Build());
  Decision d = Schedule(s, PodBuilder("p").Cpu("1").Nominated("small").Build());
  EXPECT_EQ(d.node_name, "small");
  EXPECT_TRUE(d.scores.empty());
  // A nominated node that no longer fits falls back to all nodes.
  ASSERT_TRUE(s.AddPod(PodBuilder("x").Cpu("2").BoundTo("small").Build()).ok());
  EXPECT_EQ(Schedule(s, PodBuilder("p").Cpu("1").Nominated("small").Build()).node_name, "big");
}

TEST(ScheduleTest, ExtendedResourcesAndTooManyPods) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("cpu-only").Cpu("32").Build());
  s.UpsertNode(NodeBuilder("gpu").Cpu("32").Resource("nvidia.com/gpu", "8").Pods(1).Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("x").BoundTo("gpu").Build()).ok());
  PlacementOptions no_preemption;
  no_preemption.enable_preemption = false;
  Decision d = Schedule(s, PodBuilder("p").Resource("nvidia.com/gpu", "1").Build(), no_preemption);
  EXPECT_EQ(d.message,
            "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, 1 Too many pods.");
  // A resource no node has is insufficient everywhere.
  d = Schedule(s, PodBuilder("q").Resource("example.com/fpga", "1").Build(), no_preemption);
  EXPECT_EQ(d.message, "0/2 nodes are available: 1 Too many pods, 2 Insufficient example.com/fpga.");
}

// kubernetes/kubernetes#106780: P1 (mid) is nominated to the node while P0 terminates; P2 (high)
// arrives, fits without preempting and is bound: P1 no longer fits.
TEST(StaleNominationsTest, C07HigherPriorityBindingMakesNominationStale) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("4").Build());
  ASSERT_TRUE(s.AddPod(PodBuilder("p0").Cpu("2").Priority(1).BoundTo("n").Terminating(true).Build()).ok());
  ASSERT_TRUE(s.AddNominatedPod(PodBuilder("p1").Cpu("3").Priority(5).Nominated("n").Build()).ok());
  EXPECT_TRUE(StaleNominations(s).empty());
  // P2 (1.5 cpu, highest priority) fits now: 4 - 2 (terminating p0) >= 1.5,
  // and p1's reservation does not count against a higher priority.
  Pod p2 = PodBuilder("p2").Cpu("1500m").Priority(10).Build();
  Decision d = Schedule(s, p2);
  ASSERT_EQ(d.node_name, "n");
  p2.node_name = "n";
  ASSERT_TRUE(s.AddPod(p2).ok());
  EXPECT_EQ(StaleNominations(s), (std::vector<std::string>{"default/p1"}));
  // Had P2 been small enough to leave room, the nomination would stand.
  Snapshot t;
  t.UpsertNode(NodeBuilder("n").Cpu("4").Build());
  ASSERT_TRUE(t.AddPod(PodBuilder("p0").Cpu("2").Priority(1).BoundTo("n").Terminating(true).Build()).ok());
  ASSERT_TRUE(t.AddNominatedPod(PodBuilder("p1").Cpu("3").Priority(5).Nominated("n").Build()).ok());
  ASSERT_TRUE(t.AddPod(PodBuilder("p2").Cpu("1").Priority(10).BoundTo("n").Build()).ok());
  EXPECT_TRUE(StaleNominations(t).empty());
}

TEST(StaleNominationsTest, MoreImportantNominationsKeepTheirPlace) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("n").Cpu("4").Build());
  ASSERT_TRUE(s.AddNominatedPod(PodBuilder("high").Cpu("3").Priority(9).Nominated("n").Build()).ok());
  ASSERT_TRUE(s.AddNominatedPod(PodBuilder("low").Cpu("2").Priority(1).Nominated("n").Build()).ok());
  EXPECT_EQ(StaleNominations(s), (std::vector<std::string>{"default/low"}));
  // A node that became unusable for the nominee makes the nomination stale too.
  s.UpsertNode(NodeBuilder("n").Cpu("8").Taint("maintenance", "true").Build());
  EXPECT_EQ(StaleNominations(s), (std::vector<std::string>{"default/high", "default/low"}));
}

// volcano-sh/volcano#3373: a gang gets every pod or nothing.
TEST(PlaceGangTest, AllOrNothing) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("a").Cpu("4").Build());
  s.UpsertNode(NodeBuilder("b").Cpu("4").Build());
  std::vector<Pod> gang;
  for (int i = 0; i < 4; ++i) gang.push_back(PodBuilder("w" + std::to_string(i)).Cpu("2").Build());
  GangDecision g = PlaceGang(s, gang);
  ASSERT_TRUE(g.placed);
  // Each assumed pod changes the scores for the next one: they alternate.
  EXPECT_EQ(g.bindings, (std::vector<std::pair<std::string, std::string>>{
                            {"default/w0", "a"}, {"default/w1", "b"}, {"default/w2", "a"}, {"default/w3", "b"}}));
  gang.push_back(PodBuilder("w4").Cpu("2").Build());
  g = PlaceGang(s, gang);
  EXPECT_FALSE(g.placed);
  EXPECT_TRUE(g.bindings.empty());
  EXPECT_EQ(g.failed_index, 4u);
  EXPECT_EQ(g.failed.message, "0/2 nodes are available: 2 Insufficient cpu.");
  // The snapshot itself is untouched by the trial.
  EXPECT_EQ(s.nodes()[0].usage().pod_count, 0);
}

}  // namespace
}  // namespace berth::placement
