// The placement traps of examples/priority-pitfalls/ as data: pod-level
// preemption of one worker of a gang (pitfall/), the same scene with
// preemptionPolicy: Never (01-priority-classes.yaml), the globalDefault class,
// and the admitted-but-unplaceable job of the Done-when list.
#include <gtest/gtest.h>

#include "placement/scheduler.h"
#include "placement/testing/builders.h"

namespace berth::placement {
namespace {

using testing::At;
using testing::NodeBuilder;
using testing::PodBuilder;

// The PriorityClasses of examples/priority-pitfalls/ (01-priority-classes.yaml,
// pitfall/priority-classes.yaml) and two more, as the Priority admission plugin writes them
// into pods (spec.priority, spec.preemptionPolicy; api/priority_admission.h
// resolves them at pod creation, the engine only reads the result).
struct SeedClass {
  int32_t value;
  PreemptionPolicy policy;
};
const SeedClass kZeroNever{0, PreemptionPolicy::kNever};                 // pytorchjob-zero-priority
const SeedClass kLow{0, PreemptionPolicy::kPreemptLowerPriority};        // low-priority
const SeedClass kHigh{1000, PreemptionPolicy::kPreemptLowerPriority};    // high-priority
const SeedClass kHighNever{1000, PreemptionPolicy::kNever};              // high-priority-never
const SeedClass kDefault{100, PreemptionPolicy::kPreemptLowerPriority};  // default-priority (globalDefault)

// The pod as admitted with that class.
Pod Resolved(PodBuilder b, const SeedClass& c) {
  Pod p = b.Build();
  p.priority = c.value;
  p.preemption_policy = c.policy;
  return p;
}

// Node A with 8 GPUs, fully used by the 8 workers of a low-priority
// PyTorchJob (the starting state of the pod-preemption trap, pitfall/low-priority-train.yaml
// at 8 workers on one node).
Snapshot EightWorkersOnNodeA(const SeedClass& worker_class) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("node-a").Cpu("64").Memory("512Gi").Resource("nvidia.com/gpu", "8").Build());
  for (int i = 0; i < 8; ++i) {
    Pod w = Resolved(PodBuilder("low-priority-training-worker-" + std::to_string(i))
                         .Cpu("4").Memory("32Gi").Resource("nvidia.com/gpu", "1")
                         .BoundTo("node-a").Started(At(i)),
                     worker_class);
    EXPECT_TRUE(s.AddPod(std::move(w)).ok());
  }
  return s;
}

// Trap 1: a high-priority pod needing one GPU evicts exactly ONE worker; the
// other seven keep their GPUs while the gang cannot train.
TEST(SeedsTest, PreemptLowerPriorityEvictsExactlyOneWorkerOfTheGang) {
  Snapshot s = EightWorkersOnNodeA(kLow);
  Pod hp = Resolved(PodBuilder("high-priority-pod").Cpu("1").Resource("nvidia.com/gpu", "1"), kHigh);
  Decision d = Schedule(s, hp);
  EXPECT_FALSE(d.bound());
  ASSERT_TRUE(d.preemption.has_value());
  EXPECT_EQ(d.preemption->node_name, "node-a");
  ASSERT_EQ(d.preemption->victims.size(), 1u);
  // Equal priorities: the most recently started worker is the least important.
  EXPECT_EQ(d.preemption->victims[0].key, "default/low-priority-training-worker-7");
  EXPECT_EQ(d.nominated_node_name, "node-a");
  EXPECT_EQ(d.message, "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
}

// The recommended fix (01-priority-classes.yaml): with preemptionPolicy Never the pod waits
// and nothing is evicted.
TEST(SeedsTest, NeverPolicyEvictsNoWorkerAndThePodWaits) {
  Snapshot s = EightWorkersOnNodeA(kZeroNever);
  Pod hp = Resolved(PodBuilder("high-priority-pod").Cpu("1").Resource("nvidia.com/gpu", "1"), kHighNever);
  Decision d = Schedule(s, hp);
  EXPECT_FALSE(d.bound());
  EXPECT_FALSE(d.preemption.has_value());
  EXPECT_FALSE(d.nominated_node_name.has_value());
  EXPECT_EQ(d.message,
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: not eligible due "
            "to preemptionPolicy=Never..");
  // The workers' own class (Never, value 0) cannot be preempted by a peer either.
  Pod peer = Resolved(PodBuilder("other-job-worker-0").Resource("nvidia.com/gpu", "1"), kZeroNever);
  EXPECT_FALSE(Schedule(s, peer).preemption.has_value());
}

// Trap 3: a globalDefault class silently gives a pod that names no class
// priority 100 with PreemptLowerPriority (api/priority_admission_test.cc
// checks that admission does so), and it evicts a worker.
TEST(SeedsTest, GlobalDefaultClassTurnsAnUnnamedPodIntoAPreemptor) {
  Snapshot s = EightWorkersOnNodeA(kZeroNever);
  Pod unnamed = Resolved(PodBuilder("monitoring").Resource("nvidia.com/gpu", "1"), kDefault);
  Decision d = Schedule(s, unnamed);
  ASSERT_TRUE(d.preemption.has_value());
  EXPECT_EQ(d.preemption->victims.size(), 1u);
}

// Done-when (a): nominalQuota 7 admits a 6-cpu job, but the node has 5.
TEST(SeedsTest, AdmittedButUnplaceable) {
  Snapshot s;
  s.UpsertNode(NodeBuilder("node-1").Cpu("5").Memory("16Gi").Build());
  Decision d = Schedule(s, PodBuilder("job-6cpu").Cpu("6").Build());
  EXPECT_FALSE(d.bound());
  EXPECT_EQ(d.message.rfind("0/1 nodes are available: 1 Insufficient cpu.", 0), 0u) << d.message;
}

// After the victim is gone, the preemptor is placed on its nominated node.
TEST(SeedsTest, PreemptorLandsOnceTheVictimIsGone) {
  Snapshot s = EightWorkersOnNodeA(kLow);
  Pod hp = Resolved(PodBuilder("high-priority-pod").Cpu("1").Resource("nvidia.com/gpu", "1"), kHigh);
  Decision d = Schedule(s, hp);
  ASSERT_TRUE(d.preemption.has_value());
  // The victim terminates (still holding its GPU), the preemptor is nominated.
  const std::string victim = d.preemption->victims[0].key;
  Pod terminating = s.FindNode("node-a")->pods()[7].pod;
  ASSERT_EQ(terminating.Key(), victim);
  ASSERT_TRUE(s.RemovePod(victim).ok());
  terminating.terminating = true;
  terminating.terminating_by_preemption = true;
  ASSERT_TRUE(s.AddPod(terminating).ok());
  hp.nominated_node_name = *d.nominated_node_name;
  ASSERT_TRUE(s.AddNominatedPod(hp).ok());
  Decision waiting = Schedule(s, hp);
  EXPECT_FALSE(waiting.bound());
  EXPECT_FALSE(waiting.preemption.has_value());  // no second victim while the first leaves
  EXPECT_NE(waiting.message.find("not eligible due to a terminating pod on the nominated node."),
            std::string::npos);
  // The victim's object is gone: the preemptor fits on its nominated node.
  ASSERT_TRUE(s.RemovePod(victim).ok());
  Decision placed = Schedule(s, hp);
  EXPECT_EQ(placed.node_name, "node-a");
}

}  // namespace
}  // namespace berth::placement
