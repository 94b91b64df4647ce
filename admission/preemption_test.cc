// Classical preemption policies and ordering (Kueue's pkg/scheduler/preemption).
#include "admission/preemptor.h"

#include <gtest/gtest.h>

#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::ClusterQueueBuilder;
using testing::FlavorBuilder;
using testing::T;
using testing::WorkloadBuilder;
using FQ = testing::FlavorQuotasBuilder;
using Policy = PreemptionPolicy;

class PreemptionTest : public ::testing::Test {
 protected:
  ResourceNames names;
  std::unique_ptr<Snapshot> snap;
  void Build(std::vector<ClusterQueue> cqs, std::vector<Workload> admitted) {
    snap = std::make_unique<Snapshot>(names, std::vector<ResourceFlavor>{FlavorBuilder("f").Obj()}, cqs,
                                      std::vector<Cohort>{});
    for (const auto& w : admitted) BERTH_CHECK_OK(snap->AddWorkload(w));
  }
  std::vector<std::pair<std::string, std::string>> Targets(const Workload& w) {
    int cq = snap->ClusterQueueIndex(w.cluster_queue);
    Preemptor p;
    Assignment a = AssignFlavors(*snap, cq, w, &p);
    std::vector<std::pair<std::string, std::string>> out;
    if (a.RepresentativeMode() != FlavorAssignmentMode::kPreempt) return out;
    for (const auto& t : p.GetTargets(*snap, cq, w, a)) out.push_back({t.workload->workload.name, t.reason});
    std::sort(out.begin(), out.end());
    return out;
  }
  using Targets_ = std::vector<std::pair<std::string, std::string>>;
};

TEST_F(PreemptionTest, LowerOrNewerEqualPriorityTakesNewerEqualOnly) {
  Build({ClusterQueueBuilder(names, "q").WithinClusterQueue(Policy::kLowerOrNewerEqualPriority).Group({FQ("f").Resource("cpu", "2")}).Obj()},
        {WorkloadBuilder(names, "older").Created(T(0)).Request("cpu", "1").Admitted("q", "f").Obj(),
         WorkloadBuilder(names, "newer").Created(T(10)).Request("cpu", "1").Admitted("q", "f").Obj()});
  Workload w = WorkloadBuilder(names, "w").Queue("q").Created(T(5)).Request("cpu", "1").Obj();
  EXPECT_EQ(Targets(w), (Targets_{{"newer", "InClusterQueue"}}));
  // With LowerPriority, equal priority is never preempted.
  Build({ClusterQueueBuilder(names, "q").WithinClusterQueue(Policy::kLowerPriority).Group({FQ("f").Resource("cpu", "2")}).Obj()},
        {WorkloadBuilder(names, "newer").Created(T(10)).Request("cpu", "2").Admitted("q", "f").Obj()});
  EXPECT_TRUE(Targets(w).empty());
}

TEST_F(PreemptionTest, CandidateOrderPrefersLowestPriorityThenMostRecentlyAdmitted) {
  Build({ClusterQueueBuilder(names, "q").WithinClusterQueue(Policy::kLowerPriority).Group({FQ("f").Resource("cpu", "3")}).Obj()},
        {WorkloadBuilder(names, "p1-old").Priority(1).Request("cpu", "1").Admitted("q", "f", T(1)).Obj(),
         WorkloadBuilder(names, "p1-recent").Priority(1).Request("cpu", "1").Admitted("q", "f", T(9)).Obj(),
         WorkloadBuilder(names, "p2").Priority(2).Request("cpu", "1").Admitted("q", "f", T(20)).Obj()});
  EXPECT_EQ(Targets(WorkloadBuilder(names, "w").Queue("q").Priority(5).Request("cpu", "1").Obj()),
            (Targets_{{"p1-recent", "InClusterQueue"}}));
  EXPECT_EQ(Targets(WorkloadBuilder(names, "w").Queue("q").Priority(5).Request("cpu", "2").Obj()),
            (Targets_{{"p1-old", "InClusterQueue"}, {"p1-recent", "InClusterQueue"}}));
}

TEST_F(PreemptionTest, EvictingWorkloadsAreNeverCandidates) {
  Build({ClusterQueueBuilder(names, "q").WithinClusterQueue(Policy::kLowerPriority).Group({FQ("f").Resource("cpu", "2")}).Obj()},
        {WorkloadBuilder(names, "evicting").Request("cpu", "1").Admitted("q", "f").Evicting("someone").Obj(),
         WorkloadBuilder(names, "running").Request("cpu", "1").Admitted("q", "f").Obj()});
  EXPECT_EQ(Targets(WorkloadBuilder(names, "w").Queue("q").Priority(5).Request("cpu", "1").Obj()),
            (Targets_{{"running", "InClusterQueue"}}));
  EXPECT_TRUE(Targets(WorkloadBuilder(names, "w").Queue("q").Priority(5).Request("cpu", "2").Obj()).empty());
  EXPECT_EQ(snap->PendingVictims("someone").size(), 1u);
}

// Kueue's CandidatesOrdering "workloads with higher LQ usage first": with Admission Fair
// Sharing the busier LocalQueue's workload goes before the more recently admitted one of
// the quieter LocalQueue; without usage (or in one LocalQueue) the usual order holds.
TEST_F(PreemptionTest, AdmissionFairSharingTakesTheBusierLocalQueueFirst) {
  auto build = [&] {
    Build({ClusterQueueBuilder(names, "q").WithinClusterQueue(Policy::kLowerPriority).Group({FQ("f").Resource("cpu", "2")}).Obj()},
          {WorkloadBuilder(names, "busy-old").LocalQueue("ns", "busy").Request("cpu", "1").Admitted("q", "f", T(1)).Obj(),
           WorkloadBuilder(names, "quiet-recent").LocalQueue("ns", "quiet").Request("cpu", "1").Admitted("q", "f", T(9)).Obj()});
  };
  const Workload w = WorkloadBuilder(names, "w").Queue("q").Priority(5).Request("cpu", "1").Obj();
  build();
  EXPECT_EQ(Targets(w), (Targets_{{"quiet-recent", "InClusterQueue"}}));
  snap->SetLocalQueueUsage([](const std::string& cq, const Workload& x) -> std::optional<double> {
    EXPECT_EQ(cq, "q");
    return x.queue_name == "busy" ? 8.0 : 1.0;
  });
  EXPECT_EQ(Targets(w), (Targets_{{"busy-old", "InClusterQueue"}}));
  // Equal usage: the usual order.
  snap->SetLocalQueueUsage([](const std::string&, const Workload&) -> std::optional<double> { return 3.0; });
  EXPECT_EQ(Targets(w), (Targets_{{"quiet-recent", "InClusterQueue"}}));
  // LocalQueues of the same name in two namespaces are two LocalQueues.
  Build({ClusterQueueBuilder(names, "q").WithinClusterQueue(Policy::kLowerPriority).Group({FQ("f").Resource("cpu", "2")}).Obj()},
        {WorkloadBuilder(names, "busy-old").LocalQueue("team-a", "user-queue").Request("cpu", "1").Admitted("q", "f", T(1)).Obj(),
         WorkloadBuilder(names, "quiet-recent").LocalQueue("team-b", "user-queue").Request("cpu", "1").Admitted("q", "f", T(9)).Obj()});
  snap->SetLocalQueueUsage([](const std::string&, const Workload& x) -> std::optional<double> {
    return x.namespace_name == "team-a" ? 8.0 : 1.0;
  });
  EXPECT_EQ(Targets(w), (Targets_{{"busy-old", "InClusterQueue"}}));
  build();
  // A ClusterQueue without AFS (nullopt): the usual order.
  snap->SetLocalQueueUsage([](const std::string&, const Workload& x) -> std::optional<double> {
    if (x.queue_name == "busy") return 8.0;
    return std::nullopt;
  });
  EXPECT_EQ(Targets(w), (Targets_{{"quiet-recent", "InClusterQueue"}}));
}

TEST_F(PreemptionTest, BorrowWithinCohortReclaimsWhileBorrowingBelowThreshold) {
  auto cqs = [&](std::optional<int32_t> threshold) {
    return std::vector<ClusterQueue>{
        ClusterQueueBuilder(names, "a")
            .Cohort("co")
            .ReclaimWithinCohort(Policy::kLowerPriority)
            .BorrowWithinCohort(BorrowWithinCohort::Policy::kLowerPriority, threshold)
            .Group({FQ("f").Resource("cpu", "1")})
            .Obj(),
        ClusterQueueBuilder(names, "b").Cohort("co").Group({FQ("f").Resource("cpu", "1")}).Obj(),
        ClusterQueueBuilder(names, "c").Cohort("co").Group({FQ("f").Resource("cpu", "1")}).Obj()};
  };
  auto admitted = [&] {
    return std::vector<Workload>{
        WorkloadBuilder(names, "own").Priority(0).Request("cpu", "1").Admitted("a", "f").Obj(),
        WorkloadBuilder(names, "b-borrower").Priority(3).Request("cpu", "2").Admitted("b", "f").Obj()};
  };
  // a needs 2 (1 borrowed); b borrows 1 at priority 3 < 10.
  Workload w = WorkloadBuilder(names, "w").Queue("a").Priority(10).Request("cpu", "2").Obj();
  Build(cqs(std::nullopt), admitted());
  EXPECT_EQ(Targets(w), (Targets_{{"b-borrower", "InCohortReclaimWhileBorrowing"}}));
  // Above maxPriorityThreshold the candidate may only be reclaimed without
  // borrowing, which a needs: no targets.
  Build(cqs(2), admitted());
  EXPECT_TRUE(Targets(w).empty());
}

}  // namespace
}  // namespace berth::admission
