// Kueue's TestAssignFlavors cases (pkg/scheduler/flavorassigner/flavorassigner_test.go);
// RF tolerations cancel RF taints (kubernetes-sigs/kueue#4646); gang all-or-nothing across
// podSets.
#include "admission/flavor_assigner.h"

#include <gtest/gtest.h>

#include "admission/preemptor.h"
#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::ClusterQueueBuilder;
using testing::FlavorBuilder;
using testing::Q;
using testing::WorkloadBuilder;
using FQ = testing::FlavorQuotasBuilder;
using FP = FungibilityPolicy;

// The test oracle of F2: candidates always exist.
class AlwaysPreempt : public PreemptionOracle {
 public:
  std::pair<PreemptionPossibility, int> SimulatePreemption(Snapshot&, int, const Workload&, int, Amount) override {
    return {PreemptionPossibility::kPreempt, 0};
  }
};

class FlavorAssignerTest : public ::testing::Test {
 protected:
  ResourceNames names;
  std::vector<ResourceFlavor> flavors = {FlavorBuilder("one").Obj(), FlavorBuilder("two").Obj(),
                                         FlavorBuilder("default").Obj(),
                                         FlavorBuilder("tainted").Taint("key", "val").Obj(),
                                         FlavorBuilder("labelled").Label("type", "b").Obj()};
  std::unique_ptr<Snapshot> snap;

  void Build(std::vector<ClusterQueue> cqs, std::vector<Workload> admitted = {}) {
    snap = std::make_unique<Snapshot>(names, flavors, cqs, std::vector<Cohort>{});
    for (const auto& w : admitted) BERTH_CHECK_OK(snap->AddWorkload(w));
  }
  Assignment Assign(const Workload& w, PreemptionOracle* oracle) {
    return AssignFlavors(*snap, snap->ClusterQueueIndex(w.cluster_queue), w, oracle);
  }
  std::string FlavorOf(const Assignment& a, size_t ps, const std::string& res) {
    for (const auto& f : a.pod_sets.at(ps).flavors) {
      if (f.resource == names.Find(res)) return snap->FlavorName(f.flavor);
    }
    return "";
  }
  ClusterQueueBuilder TwoFlavors(FP borrow = FP::kMayStopSearch, FP preempt = FP::kTryNextFlavor) {
    return std::move(ClusterQueueBuilder(names, "cq").Fungibility(borrow, preempt).Group(
        {FQ("one").Resource("pods", "10").Resource("cpu", "10"), FQ("two").Resource("pods", "10").Resource("cpu", "10")}));
  }
  Workload Request9() { return WorkloadBuilder(names, "w").Queue("cq").Request("cpu", "9").Obj(); }
  Workload Usage2() { return WorkloadBuilder(names, "u").Request("cpu", "2").Admitted("cq", "one").Obj(); }
};

TEST_F(FlavorAssignerTest, F1PreemptTryNextFlavor) {
  Build({TwoFlavors().Obj()}, {Usage2()});
  AlwaysPreempt oracle;
  Assignment a = Assign(Request9(), &oracle);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kFit);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "two");
  EXPECT_EQ(FlavorOf(a, 0, "pods"), "two");
}

TEST_F(FlavorAssignerTest, F2PreemptBeforeTryNextFlavor) {
  Build({TwoFlavors(FP::kMayStopSearch, FP::kMayStopSearch).Obj()}, {Usage2()});
  AlwaysPreempt oracle;
  Assignment a = Assign(Request9(), &oracle);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kPreempt);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "one");
  EXPECT_EQ(a.Message(), "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor one, 1 more needed");
}

class CohortAssignerTest : public FlavorAssignerTest {
 protected:
  void BuildCohort(FP when_can_borrow, std::string two_cpu) {
    auto cq = ClusterQueueBuilder(names, "cq")
                  .Cohort("co")
                  .Fungibility(when_can_borrow, FP::kTryNextFlavor)
                  .Group({FQ("one").Resource("pods", "10").Resource("cpu", "10", "1"),
                          FQ("two").Resource("pods", "10").Resource("cpu", two_cpu)})
                  .Obj();
    auto secondary = ClusterQueueBuilder(names, "secondary").Cohort("co").Group({FQ("one").Resource("cpu", "1")}).Obj();
    Build({cq, secondary}, {Usage2()});
  }
};

TEST_F(CohortAssignerTest, F3BorrowBeforeTryNextFlavor) {
  BuildCohort(FP::kMayStopSearch, "10");
  Assignment a = Assign(Request9(), nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kFit);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "one");
  EXPECT_EQ(a.borrowing, 1);
}

TEST_F(CohortAssignerTest, F4BorrowTryNextFlavorFindsSecondFlavor) {
  BuildCohort(FP::kTryNextFlavor, "10");
  Assignment a = Assign(Request9(), nullptr);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "two");
  EXPECT_EQ(a.borrowing, 0);
}

TEST_F(CohortAssignerTest, F4bBorrowTryNextFlavorFallsBackToFirst) {
  BuildCohort(FP::kTryNextFlavor, "1");
  Assignment a = Assign(Request9(), nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kFit);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "one");
  EXPECT_EQ(a.borrowing, 1);
}

TEST_F(CohortAssignerTest, F5BorrowingLimitBeyondCohortCapacityIsNoFit) {
  BuildCohort(FP::kMayStopSearch, "10");
  Workload w = WorkloadBuilder(names, "w").Queue("cq").Request("cpu", "12").Obj();
  Assignment a = Assign(w, nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kNoFit);
  EXPECT_NE(a.Message().find("insufficient quota for cpu in flavor one, previously considered podsets requests (0) + "
                             "current podset request (12) > maximum capacity (11)"),
            std::string::npos)
      << a.Message();
  EXPECT_EQ(a.no_fit_reason, "ExceedsMaxQuota");
}

TEST_F(FlavorAssignerTest, F6NoCandidatesInFirstFlavorTriesSecondEvenWithMayStopSearch) {
  auto cq = ClusterQueueBuilder(names, "cq")
                .WithinClusterQueue(PreemptionPolicy::kLowerPriority)
                .Fungibility(FP::kMayStopSearch, FP::kMayStopSearch)
                .Group({FQ("one").Resource("cpu", "10"), FQ("two").Resource("cpu", "10")})
                .Obj();
  // The workload using "one" has a higher priority: no candidates.
  Build({cq}, {WorkloadBuilder(names, "u").Priority(10).Request("cpu", "2").Admitted("cq", "one").Obj()});
  Preemptor preemptor;
  Assignment a = Assign(Request9(), &preemptor);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kFit);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "two");
}

TEST_F(FlavorAssignerTest, F7NumPodsFitAndDontFit) {
  Build({ClusterQueueBuilder(names, "cq").Group({FQ("default").Resource("pods", "3").Resource("cpu", "10")}).Obj()});
  Workload w = WorkloadBuilder(names, "w").Queue("cq").Count(3).Request("cpu", "1").Obj();
  Assignment a = Assign(w, nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kFit);
  EXPECT_EQ(a.pod_sets[0].requests, (ResourceList{{names.Find("cpu"), Q("3")}, {names.Find("pods"), Q("3")}}));

  Build({ClusterQueueBuilder(names, "cq").Group({FQ("default").Resource("pods", "2").Resource("cpu", "10")}).Obj()});
  a = Assign(w, nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kNoFit);
  EXPECT_EQ(a.Message(),
            "couldn't assign flavors to pod set main: insufficient quota for pods in flavor default, previously "
            "considered podsets requests (0) + current podset request (3) > maximum capacity (2)");
}

TEST_F(FlavorAssignerTest, F8ReclaimablePodsReduceCount) {
  Build({ClusterQueueBuilder(names, "cq").Group({FQ("default").Resource("pods", "3").Resource("cpu", "10")}).Obj()});
  Workload w = WorkloadBuilder(names, "w").Queue("cq").Count(5).Reclaimable(2).Request("cpu", "1").Obj();
  Assignment a = Assign(w, nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kFit);
  EXPECT_EQ(a.pod_sets[0].count, 3);
  EXPECT_EQ(a.pod_sets[0].requests, (ResourceList{{names.Find("cpu"), Q("3")}, {names.Find("pods"), Q("3")}}));
}

TEST_F(FlavorAssignerTest, F9TaintsSelectorsAffinityAndUndeclaredResources) {
  auto cq = ClusterQueueBuilder(names, "cq")
                .Group({FQ("tainted").Resource("cpu", "10"), FQ("labelled").Resource("cpu", "10"),
                        FQ("default").Resource("cpu", "10")})
                .Obj();
  Build({cq});
  // Skips the tainted flavor, fits the labelled one.
  Assignment a = Assign(WorkloadBuilder(names, "w").Queue("cq").Request("cpu", "1").Obj(), nullptr);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "labelled");
  // Tolerating the taint makes the first flavor usable.
  a = Assign(WorkloadBuilder(names, "w")
                 .Queue("cq")
                 .Toleration("key", scheduling::Toleration::Operator::kEqual, "val")
                 .Request("cpu", "1")
                 .Obj(),
             nullptr);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "tainted");
  // A nodeSelector on a key the flavor labels must match it; keys the flavor
  // does not label are ignored.
  a = Assign(WorkloadBuilder(names, "w").Queue("cq").NodeSelector("type", "a").NodeSelector("zone", "x").Request("cpu", "1").Obj(),
             nullptr);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "default");
  a = Assign(WorkloadBuilder(names, "w").Queue("cq").NodeSelector("type", "b").Request("cpu", "1").Obj(), nullptr);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "labelled");
  // Required node affinity that the labelled flavor doesn't match.
  scheduling::NodeSelectorTerm term{{{"type", scheduling::NodeSelectorRequirement::Operator::kIn, {"a", "c"}}}, {}};
  a = Assign(WorkloadBuilder(names, "w").Queue("cq").AffinityTerm(term).Request("cpu", "1").Obj(), nullptr);
  EXPECT_EQ(FlavorOf(a, 0, "cpu"), "default");
  // Every flavor mismatching: NoMatchingFlavor with every reason.
  Build({ClusterQueueBuilder(names, "cq").Group({FQ("tainted").Resource("cpu", "10"), FQ("labelled").Resource("cpu", "10")}).Obj()});
  a = Assign(WorkloadBuilder(names, "w").Queue("cq").AffinityTerm(term).Request("cpu", "1").Obj(), nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kNoFit);
  EXPECT_EQ(a.no_fit_reason, "NoMatchingFlavor");
  EXPECT_EQ(a.Message(),
            "couldn't assign flavors to pod set main: flavor labelled doesn't match node affinity, untolerated taint "
            "{key val NoSchedule <nil>} in flavor tainted");
  // Resource not listed in the ClusterQueue; zero request is fine.
  a = Assign(WorkloadBuilder(names, "w").Queue("cq").Request("cpu", "1").Request("example.com/gpu", "1").Obj(), nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kNoFit);
  EXPECT_EQ(a.Message(), "couldn't assign flavors to pod set main: resource example.com/gpu unavailable in ClusterQueue");
  EXPECT_EQ(a.no_fit_reason, "NoMatchingFlavor");
  Build({cq});
  a = Assign(WorkloadBuilder(names, "w").Queue("cq").Request("cpu", "1").Request("example.com/gpu", "0").Obj(), nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kFit);
}

// kubernetes-sigs/kueue#4646: a ResourceFlavor's own tolerations cancel its matching
// taints; without them a workload lacking the toleration never gets the flavor.
TEST_F(FlavorAssignerTest, C21FlavorTolerationsCancelFlavorTaints) {
  flavors.push_back(FlavorBuilder("spot")
                        .Taint("spot", "true")
                        .Toleration("spot", scheduling::Toleration::Operator::kExists, "",
                                    scheduling::TaintEffect::kNoSchedule)
                        .Obj());
  flavors.push_back(FlavorBuilder("spot-untolerated").Taint("spot", "true", scheduling::TaintEffect::kNoExecute).Obj());
  flavors.push_back(FlavorBuilder("soft").Taint("x", "y", scheduling::TaintEffect::kPreferNoSchedule).Obj());
  Build({ClusterQueueBuilder(names, "a").Group({FQ("spot").Resource("cpu", "10")}).Obj(),
         ClusterQueueBuilder(names, "b").Group({FQ("spot-untolerated").Resource("cpu", "10")}).Obj(),
         ClusterQueueBuilder(names, "c").Group({FQ("soft").Resource("cpu", "10")}).Obj()});
  EXPECT_EQ(Assign(WorkloadBuilder(names, "w").Queue("a").Request("cpu", "1").Obj(), nullptr).RepresentativeMode(),
            FlavorAssignmentMode::kFit);
  Assignment b = Assign(WorkloadBuilder(names, "w").Queue("b").Request("cpu", "1").Obj(), nullptr);
  EXPECT_EQ(b.RepresentativeMode(), FlavorAssignmentMode::kNoFit);
  EXPECT_EQ(b.Message(), "couldn't assign flavors to pod set main: untolerated taint {spot true NoExecute <nil>} in flavor spot-untolerated");
  // PreferNoSchedule taints are not evaluated.
  EXPECT_EQ(Assign(WorkloadBuilder(names, "w").Queue("c").Request("cpu", "1").Obj(), nullptr).RepresentativeMode(),
            FlavorAssignmentMode::kFit);
}

// A gang is admitted whole or not at all: a later podSet that does not
// fit makes the whole workload NoFit, counting earlier podSets' usage.
TEST_F(FlavorAssignerTest, GangIsAllOrNothingAcrossPodSets) {
  Build({ClusterQueueBuilder(names, "cq").Group({FQ("default").Resource("cpu", "10")}).Obj()});
  Workload w = WorkloadBuilder(names, "w").Queue("cq").PodSets({{"launcher", 1}, {"workers", 3}}).Obj();
  w.pod_sets[0].requests = {{names.Intern("cpu"), Q("4")}};
  w.pod_sets[1].requests = {{names.Intern("cpu"), Q("3")}};
  Assignment a = Assign(w, nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kNoFit);
  EXPECT_EQ(a.Message(),
            "couldn't assign flavors to pod set workers: insufficient quota for cpu in flavor default, previously "
            "considered podsets requests (4) + current podset request (9) > maximum capacity (10)");
  w.pod_sets[1].requests = {{names.Intern("cpu"), Q("2")}};
  a = Assign(w, nullptr);
  EXPECT_EQ(a.RepresentativeMode(), FlavorAssignmentMode::kFit);
  ASSERT_EQ(a.usage.size(), 1u);
  EXPECT_EQ(a.usage[0].second, Q("10"));
}

}  // namespace
}  // namespace berth::admission
