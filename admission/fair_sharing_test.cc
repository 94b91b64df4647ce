// Fair Sharing: dominant resource shares, fair preemption and the admission
// tournament. The cases and their expected outcomes are Kueue's unit tests
// (names kept): pkg/cache/scheduler/fair_sharing_test.go
// (TestDominantResourceShare, TestIsBorrowingOn), pkg/scheduler/preemption/
// preemption_fair_test.go (TestFairPreemptions) and pkg/scheduler/
// scheduler_fs_test.go (TestScheduleForFairSharing).
#include "admission/fair_sharing.h"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <set>

#include "admission/preemptor.h"
#include "admission/scheduler.h"
#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::ClusterQueueBuilder;
using testing::CohortBuilder;
using testing::FlavorBuilder;
using testing::Harness;
using testing::T;
using testing::WorkloadBuilder;
using FQ = testing::FlavorQuotasBuilder;
using Policy = PreemptionPolicy;
using Strategy = FairSharingStrategy;

constexpr int64_t kMaxShare = std::numeric_limits<int64_t>::max();

// ---------------------------------------------------------------------------
// TestDominantResourceShare

struct Share {
  int64_t value = 0;
  std::string resource;
  bool borrowing = false;
  bool operator==(const Share&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Share& s) {
  return os << "{" << s.value << ", " << s.resource << ", " << s.borrowing << "}";
}

struct Usage {
  std::string flavor, resource, amount;
};

struct DrsCase {
  std::string name;
  std::function<std::vector<ClusterQueue>(ResourceNames&)> cqs;
  std::function<std::vector<Cohort>(ResourceNames&)> cohorts;
  std::vector<Usage> usage;    // admitted to "cq"
  std::vector<Usage> request;  // added to every node (flvResQ)
  std::map<std::string, Share> want;
};

// "cq" and, unless lending is empty, "lending-cq" in test-cohort with
// cpu/gpu nominals (gpu is example.com/gpu).
std::vector<ClusterQueue> TwoQueues(ResourceNames& n, double w, FQ cq, double lw, std::optional<FQ> lending) {
  std::vector<ClusterQueue> out{ClusterQueueBuilder(n, "cq").Cohort("test-cohort").FairWeight(w).Group({cq}).Obj()};
  if (lending) {
    out.push_back(ClusterQueueBuilder(n, "lending-cq").Cohort("test-cohort").FairWeight(lw).Group({*lending}).Obj());
  }
  return out;
}

const std::string kGpu = "example.com/gpu";

std::vector<DrsCase> DrsCases() {
  const Share zero;
  auto pair = [](const std::string& c, const std::string& g) {
    return FQ("default").Resource("cpu", c).Resource(kGpu, g);
  };
  auto gpu = [](const std::string& g) { return FQ("default").Resource(kGpu, g); };
  auto none = [](ResourceNames&) { return std::vector<Cohort>{}; };
  return {
      {"no cohort",
       [=](ResourceNames& n) {
         return std::vector<ClusterQueue>{ClusterQueueBuilder(n, "cq").Group({pair("2", "5")}).Obj()};
       },
       none,
       {{"default", "cpu", "1"}, {"default", kGpu, "2"}},
       {},
       {{"cq", zero}}},
      {"usage below nominal",
       [=](ResourceNames& n) { return TwoQueues(n, 1, pair("2", "5"), 1, pair("8", "5")); },
       none,
       {{"default", "cpu", "1"}, {"default", kGpu, "2"}},
       {},
       {{"cq", zero}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"usage above nominal",
       [=](ResourceNames& n) { return TwoQueues(n, 1, pair("2", "5"), 1, pair("8", "5")); },
       none,
       {{"default", "cpu", "3"}, {"default", kGpu, "7"}},
       {},
       // (7-5)*1000/10
       {{"cq", {200, kGpu, true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"usage slightly above nominal in a cohort with large quotas",
       [=](ResourceNames& n) { return TwoQueues(n, 1, gpu("500"), 300, gpu("1000")); },
       none,
       {{"default", kGpu, "501"}},
       {},
       {{"cq", {1, kGpu, true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"usage way above nominal in a cohort with large quotas and weights",
       [=](ResourceNames& n) { return TwoQueues(n, 300, gpu("500"), 300, gpu("1000")); },
       none,
       {{"default", kGpu, "800"}},
       {},
       {{"cq", {1, kGpu, true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"one resource above nominal",
       [=](ResourceNames& n) { return TwoQueues(n, 1, pair("2", "5"), 1, pair("8", "5")); },
       none,
       {{"default", "cpu", "3"}, {"default", kGpu, "3"}},
       {},
       // (3-2)*1000/10
       {{"cq", {100, "cpu", true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"usage with workload above nominal",
       [=](ResourceNames& n) { return TwoQueues(n, 1, pair("2", "5"), 1, pair("8", "5")); },
       none,
       {{"default", "cpu", "1"}, {"default", kGpu, "2"}},
       {{"default", "cpu", "4"}, {"default", kGpu, "4"}},
       // (1+4-2)*1000/10
       {{"cq", {300, "cpu", true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"A resource with zero lendable",
       [=](ResourceNames& n) {
         return TwoQueues(n, 1, FQ("default").Resource("cpu", "2").Resource(kGpu, "2", std::nullopt, "0"), 1,
                          FQ("default").Resource("cpu", "8").Resource(kGpu, "64", std::nullopt, "0"));
       },
       none,
       {{"default", "cpu", "1"}, {"default", kGpu, "1"}},
       {{"default", "cpu", "4"}, {"default", kGpu, "4"}},
       {{"cq", {300, "cpu", true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"multiple flavors",
       [=](ResourceNames& n) {
         return std::vector<ClusterQueue>{
             ClusterQueueBuilder(n, "cq")
                 .Cohort("test-cohort")
                 .Group({FQ("on-demand").Resource("cpu", "20"), FQ("spot").Resource("cpu", "80")})
                 .Obj(),
             ClusterQueueBuilder(n, "lending-cq")
                 .Cohort("test-cohort")
                 .Group({FQ("default").Resource("cpu", "100")})
                 .Obj()};
       },
       none,
       {{"on-demand", "cpu", "15"}, {"spot", "cpu", "5"}},
       {{"on-demand", "cpu", "10"}},
       // ((15+10-20)+0)*1000/200 (spot under nominal)
       {{"cq", {25, "cpu", true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"above nominal with integer weight",
       [=](ResourceNames& n) { return TwoQueues(n, 2, gpu("5"), 1, gpu("5")); },
       none,
       {{"default", kGpu, "7"}},
       {},
       {{"cq", {100, kGpu, true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"above nominal with decimal weight",
       [=](ResourceNames& n) { return TwoQueues(n, 0.5, gpu("5"), 1, gpu("5")); },
       none,
       {{"default", kGpu, "7"}},
       {},
       {{"cq", {400, kGpu, true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"above nominal with zero weight",
       [=](ResourceNames& n) { return TwoQueues(n, 0, gpu("5"), 1, gpu("10")); },
       none,
       {{"default", kGpu, "7"}},
       {},
       {{"cq", {kMaxShare, kGpu, true}}, {"lending-cq", zero}, {"test-cohort", zero}}},
      {"cohort has resource share",
       [=](ResourceNames& n) {
         return std::vector<ClusterQueue>{ClusterQueueBuilder(n, "cq").Cohort("child-cohort").Group({gpu("5")}).Obj()};
       },
       [=](ResourceNames& n) {
         return std::vector<Cohort>{CohortBuilder(n, "child-cohort").FairWeight(2).Parent("root").Obj(),
                                    CohortBuilder(n, "root").Group({gpu("45")}).Obj()};
       },
       {{"default", kGpu, "10"}},
       {},
       // (5/50)*1000, then /2
       {{"cq", {100, kGpu, true}}, {"child-cohort", {50, kGpu, true}}, {"root", zero}}},
      {"resource share defined for resources only available at the root cohort",
       [=](ResourceNames& n) {
         return std::vector<ClusterQueue>{ClusterQueueBuilder(n, "cq").Cohort("child-cohort").Group({gpu("0")}).Obj()};
       },
       [=](ResourceNames& n) {
         return std::vector<Cohort>{CohortBuilder(n, "child-cohort").FairWeight(2).Parent("root").Obj(),
                                    CohortBuilder(n, "root").Group({gpu("50")}).Obj()};
       },
       {{"default", kGpu, "10"}},
       {},
       {{"cq", {200, kGpu, true}}, {"child-cohort", {100, kGpu, true}}, {"root", zero}}},
      {"resource share affected by borrowing limit",
       [=](ResourceNames& n) {
         return std::vector<ClusterQueue>{ClusterQueueBuilder(n, "cq").Cohort("child-cohort").Group({gpu("0")}).Obj()};
       },
       [=](ResourceNames& n) {
         return std::vector<Cohort>{
             CohortBuilder(n, "child-cohort").Group({FQ("default").Resource(kGpu, "0", "10")}).Parent("root").Obj(),
             CohortBuilder(n, "root").Group({gpu("50")}).Obj()};
       },
       // Lendable seen from cq: 10; from child-cohort: 50.
       {{"default", kGpu, "10"}},
       {},
       {{"cq", {1000, kGpu, true}}, {"child-cohort", {200, kGpu, true}}, {"root", zero}}},
  };
}

TEST(DominantResourceShareTest, KueueTable) {
  for (const DrsCase& tc : DrsCases()) {
    SCOPED_TRACE(tc.name);
    ResourceNames names;
    std::vector<ResourceFlavor> flavors{FlavorBuilder("default").Obj(), FlavorBuilder("on-demand").Obj(),
                                        FlavorBuilder("spot").Obj()};
    Snapshot snap(names, flavors, tc.cqs(names), tc.cohorts(names));
    int i = 0;
    for (const Usage& u : tc.usage) {
      BERTH_CHECK_OK(snap.AddWorkload(WorkloadBuilder(names, "w" + std::to_string(i++))
                                          .Request(u.resource, u.amount)
                                          .Admitted("cq", u.flavor)
                                          .Obj()));
    }
    std::vector<FlavorResourceAmount> req;
    for (const Usage& u : tc.request) req.push_back({u.flavor, names.Intern(u.resource), testing::Q(u.amount)});
    FrUsage request = snap.ToFrUsage(req);
    std::sort(request.begin(), request.end());

    std::map<std::string, Share> got;
    for (int q = 0; q < snap.cluster_queue_count(); ++q) {
      for (int node = snap.ClusterQueueNode(q); node >= 0; node = snap.Parent(node)) {
        DominantResourceShare d = ComputeDRS(snap, node, request);
        got[snap.NodeName(node)] = {d.RoundedWeightedShare(), d.dominant_resource, d.borrowing};
      }
    }
    EXPECT_EQ(got, tc.want);
  }
}

TEST(DominantResourceShareTest, CompareOrdersZeroWeightBorrowersLast) {
  DominantResourceShare zero_small, zero_big, light, heavy, idle;
  zero_small.weight = zero_big.weight = 0;
  zero_small.unweighted_ratio = 100;
  zero_big.unweighted_ratio = 500;
  light.unweighted_ratio = 100;
  heavy.unweighted_ratio = 900;
  idle.weight = 0;                                  // weight 0 but not borrowing: share 0
  EXPECT_EQ(CompareDRS(zero_small, zero_big), -1);  // both infinite: by unweighted ratio
  EXPECT_EQ(CompareDRS(zero_small, heavy), 1);
  EXPECT_EQ(CompareDRS(heavy, zero_small), -1);
  EXPECT_EQ(CompareDRS(light, heavy), -1);
  EXPECT_EQ(CompareDRS(idle, light), -1);
  EXPECT_EQ(idle.RoundedWeightedShare(), 0);
  EXPECT_EQ(zero_small.RoundedWeightedShare(), kMaxShare);
  EXPECT_TRUE(std::isinf(zero_small.PreciseWeightedShare()));
}

// TestIsBorrowingOn: cq (cpu 2, gpu 5) and lending-cq (cpu 8, gpu 5).
TEST(DominantResourceShareTest, IsBorrowingOnRequestedFlavorsOnly) {
  ResourceNames names;
  Snapshot snap(names, {FlavorBuilder("default").Obj()},
                TwoQueues(names, 1, FQ("default").Resource("cpu", "2").Resource(kGpu, "5"), 1,
                          FQ("default").Resource("cpu", "8").Resource(kGpu, "5")),
                {});
  BERTH_CHECK_OK(snap.AddWorkload(WorkloadBuilder(names, "w").Request("cpu", "3").Admitted("cq", "default").Obj()));
  int cq = snap.ClusterQueueIndex("cq");
  int cpu = snap.FindFr(snap.FlavorIndex("default"), names.Find("cpu"));
  int gpu = snap.FindFr(snap.FlavorIndex("default"), names.Find(kGpu));
  DominantResourceShare d = ComputeDRS(snap, cq);
  EXPECT_TRUE(d.borrowing);
  EXPECT_TRUE(d.IsBorrowingOn({{cpu, 1000}}));               // borrows on requested flavor
  EXPECT_FALSE(d.IsBorrowingOn({{gpu, 1000}}));              // borrows on unrequested flavor only
  EXPECT_TRUE(d.IsBorrowingOn({{cpu, 1000}, {gpu, 1000}}));  // borrows on both, requests one
  EXPECT_FALSE(d.IsBorrowingOn({}));                         // nil requestedFRs
  EXPECT_FALSE(ComputeDRS(snap, snap.ClusterQueueIndex("lending-cq")).IsBorrowingOn({{cpu, 1000}}));  // no borrowing
}

// ---------------------------------------------------------------------------
// TestFairPreemptions

using Targets = std::set<std::pair<std::string, std::string>>;  // (workload, reason)

struct FairCase {
  std::string name;
  std::vector<ClusterQueue> cqs;
  std::vector<Cohort> cohorts;
  std::vector<Workload> admitted;
  Workload incoming;  // cluster_queue set: targetCQ
  Targets want;
  std::vector<Strategy> strategies = {};  // empty: Kueue's default
  std::string flavor = "default";
  std::vector<std::string> flavors = {"default"};
};

class FairPreemptionTest : public ::testing::Test {
 protected:
  ResourceNames names;

  ClusterQueue Base(const std::string& name, const std::string& cpu) {
    return ClusterQueueBuilder(names, name)
        .Cohort("all")
        .Group({FQ("default").Resource("cpu", cpu)})
        .WithinClusterQueue(Policy::kLowerPriority)
        .ReclaimWithinCohort(Policy::kAny)
        .BorrowWithinCohort(BorrowWithinCohort::Policy::kLowerPriority, -3)
        .Obj();
  }
  // baseCQs: a, b, c with 3 cpu each and "preemptible" with 0.
  std::vector<ClusterQueue> BaseCQs() {
    return {Base("a", "3"), Base("b", "3"), Base("c", "3"),
            ClusterQueueBuilder(names, "preemptible").Cohort("all").Group({FQ("default").Resource("cpu", "0")}).Obj()};
  }
  ClusterQueue Simple(const std::string& name, const std::string& cohort, const std::string& cpu, double weight = 1,
                      Policy reclaim = Policy::kNever, Policy within = Policy::kNever) {
    return ClusterQueueBuilder(names, name)
        .Cohort(cohort)
        .FairWeight(weight)
        .Group({FQ("default").Resource("cpu", cpu)})
        .ReclaimWithinCohort(reclaim)
        .WithinClusterQueue(within)
        .Obj();
  }
  Workload Adm(const std::string& name, const std::string& cq, const std::string& cpu = "1", int32_t priority = 0,
               const std::string& flavor = "default") {
    return WorkloadBuilder(names, name, "").Priority(priority).Request("cpu", cpu).Admitted(cq, flavor).Obj();
  }
  Workload In(const std::string& name, const std::string& cq, const std::string& cpu = "1", int32_t priority = 0) {
    return WorkloadBuilder(names, name, "").Queue(cq).Priority(priority).Request("cpu", cpu).Obj();
  }

  void Run(const FairCase& tc) {
    SCOPED_TRACE(tc.name);
    std::vector<ResourceFlavor> flavors;
    for (const auto& f : tc.flavors) flavors.push_back(FlavorBuilder(f).Obj());
    Snapshot snap(names, flavors, tc.cqs, tc.cohorts);
    for (const auto& w : tc.admitted) BERTH_CHECK_OK(snap.AddWorkload(w));
    const int cq = snap.ClusterQueueIndex(tc.incoming.cluster_queue);
    ASSERT_GE(cq, 0);
    const ResourceId cpu = names.Find("cpu");
    const int fr = snap.FindFr(snap.FlavorIndex(tc.flavor), cpu);
    ASSERT_GE(fr, 0);
    // A single podSet whose cpu must be preempted for on tc.flavor.
    Assignment a;
    PodSetAssignmentResult ps;
    ps.name = "main";
    ps.count = 1;
    ps.requests = tc.incoming.pod_sets[0].requests;
    ps.flavors = {{cpu, snap.FlavorIndex(tc.flavor), FlavorAssignmentMode::kPreempt, 0}};
    a.pod_sets = {ps};
    a.usage = {{fr, tc.incoming.pod_sets[0].requests.Get(cpu)}};

    auto usage_of_all = [&] {
      std::vector<Amount> out;
      for (int q = 0; q < snap.cluster_queue_count(); ++q) {
        for (int n = snap.ClusterQueueNode(q); n >= 0; n = snap.Parent(n)) out.push_back(snap.Usage(n, fr));
      }
      return out;
    };
    const std::vector<Amount> before = usage_of_all();

    FairSharingConfig config;
    config.enable = true;
    if (!tc.strategies.empty()) config.preemption_strategies = tc.strategies;
    Preemptor preemptor(config);
    Targets got;
    for (const auto& t : preemptor.GetTargets(snap, cq, tc.incoming, a)) {
      got.insert({t.workload->workload.name, t.reason});
    }
    EXPECT_EQ(got, tc.want);
    EXPECT_EQ(usage_of_all(), before) << "snapshot modified";
  }
};

const std::string kReclaim(kPreemptedInCohortReclamation);
const std::string kFair(kPreemptedInCohortFairSharing);
const std::string kInCQ(kPreemptedInClusterQueue);

TEST_F(FairPreemptionTest, BaseClusterQueues) {
  auto units = [&](const std::string& cq, int n, int from = 1) {
    std::vector<Workload> out;
    for (int i = from; i < from + n; ++i) out.push_back(Adm(cq + std::to_string(i), cq));
    return out;
  };
  auto cat = [](std::vector<std::vector<Workload>> parts) {
    std::vector<Workload> out;
    for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  std::vector<FairCase> cases = {
      {"reclaim nominal from user using the most",
       BaseCQs(),
       {},
       cat({units("a", 3), units("b", 5), units("c", 1)}),
       In("c_incoming", "c"),
       {{"b1", kReclaim}}},
      {"can reclaim from queue using less, if taking the latest workload from user using the most isn't enough",
       BaseCQs(),
       {},
       {Adm("a1", "a", "3"), Adm("a2", "a", "1"), Adm("b1", "b", "2"), Adm("b2", "b", "3")},
       In("c_incoming", "c", "3"),
       {{"a1", kReclaim}}},
      {"reclaim borrowable quota from user using the most",
       BaseCQs(),
       {},
       cat({units("a", 3), units("b", 5), units("c", 1)}),
       In("a_incoming", "a"),
       {{"b1", kFair}}},
      {"preempt one from each CQ borrowing",
       BaseCQs(),
       {},
       {Adm("a1", "a", "0.5"), Adm("a2", "a", "0.5"), Adm("a3", "a", "3"), Adm("b1", "b", "0.5"), Adm("b2", "b", "0.5"),
        Adm("b3", "b", "3")},
       In("c_incoming", "c", "2"),
       {{"a1", kReclaim}, {"b1", kReclaim}}},
      {"can't preempt when everyone under nominal",
       BaseCQs(),
       {},
       cat({units("a", 3), units("b", 3), units("c", 3)}),
       In("c_incoming", "c"),
       {}},
      {"can't preempt when it would switch the imbalance",
       BaseCQs(),
       {},
       cat({units("a", 3), units("b", 5)}),
       In("a_incoming", "a", "2"),
       {}},
      {"can preempt lower priority workloads from same CQ",
       BaseCQs(),
       {},
       cat({{Adm("a1_low", "a", "1", -1), Adm("a2_low", "a", "1", -1), Adm("a3", "a"), Adm("a4", "a")}, units("b", 5)}),
       In("a_incoming", "a", "2"),
       {{"a1_low", kInCQ}, {"a2_low", kInCQ}}},
      {"can preempt a combination of same CQ and highest user",
       BaseCQs(),
       {},
       cat({{Adm("a_low", "a", "1", -1), Adm("a2", "a"), Adm("a3", "a")}, units("b", 6)}),
       In("a_incoming", "a", "2"),
       {{"a_low", kInCQ}, {"b1", kFair}}},
      {"preempt huge workload if there is no other option, as long as the target CQ gets a lower share",
       BaseCQs(),
       {},
       {Adm("b1", "b", "9")},
       In("a_incoming", "a", "2"),
       {{"b1", kReclaim}}},
      {"can't preempt huge workload if the incoming is also huge",
       BaseCQs(),
       {},
       {Adm("a1", "a", "2"), Adm("b1", "b", "7")},
       In("a_incoming", "a", "5"),
       {}},
      {"can't preempt 2 smaller workloads if the incoming is huge",
       BaseCQs(),
       {},
       {Adm("b1", "b", "2"), Adm("b2", "b", "2"), Adm("b3", "b", "3")},
       In("a_incoming", "a", "6"),
       {}},
      {"preempt from target and others even if over nominal",
       BaseCQs(),
       {},
       {Adm("a1_low", "a", "2", -1), Adm("a2_low", "a", "1", -1), Adm("b1", "b", "3"), Adm("b2", "b", "3")},
       In("a_incoming", "a", "4"),
       {{"a1_low", kInCQ}, {"b1", kFair}}},
      // S2-a preempts b2; S2-b would have allowed b1.
      {"prefer to preempt workloads that don't make the target CQ have the biggest share",
       BaseCQs(),
       {},
       {Adm("b1", "b", "2"), Adm("b2", "b", "1"), Adm("b3", "b", "2"), Adm("c1", "c", "1")},
       In("a_incoming", "a", "3.5"),
       {{"b2", kFair}}},
      {"preempt from different cluster queues if the end result has a smaller max share",
       BaseCQs(),
       {},
       {Adm("b1", "b", "2"), Adm("b2", "b", "2.5"), Adm("c1", "c", "2"), Adm("c2", "c", "2.5")},
       In("a_incoming", "a", "3.5"),
       {{"b1", kFair}, {"c1", kFair}}},
      {"scenario above does not flap",
       BaseCQs(),
       {},
       {Adm("a1", "a", "3.5"), Adm("b2", "b", "2.5"), Adm("c2", "c", "2.5")},
       In("b_incoming", "b", "2"),
       {}},
      {"cannot preempt if it would make the candidate CQ go under nominal after preempting one element",
       BaseCQs(),
       {},
       {Adm("b1", "b", "3"), Adm("b2", "b", "3"), Adm("c1", "c", "3")},
       In("a_incoming", "a", "4"),
       {}},
      // borrowWithinCohort plays no part in Fair Sharing preemption.
      {"workloads under priority threshold not capriciously preempted",
       BaseCQs(),
       {},
       cat({units("a", 3),
            units("b", 3),
            {Adm("preemptible1", "preemptible", "1", -3), Adm("preemptible2", "preemptible", "1", -3),
             Adm("preemptible3", "preemptible", "1", -3)}}),
       In("a_incoming", "a", "2"),
       {}},
      {"preempt lower priority first, even if big",
       BaseCQs(),
       {},
       {Adm("a1", "a", "3"), Adm("b_low", "b", "5", 0), Adm("b_high", "b", "1", 1)},
       In("a_incoming", "a", "1"),
       {{"b_low", kFair}},
       {Strategy::kLessThanInitialShare}},
      {"preempt workload that doesn't transfer the imbalance, even if high priority",
       BaseCQs(),
       {},
       {Adm("a1", "a", "3"), Adm("b_low", "b", "5", 0), Adm("b_high", "b", "1", 1)},
       In("a_incoming", "a", "1"),
       {{"b_high", kFair}},
       {Strategy::kLessThanOrEqualToFinalShare}},
  };
  for (const auto& tc : cases) Run(tc);
}

TEST_F(FairPreemptionTest, Weights) {
  auto abc = [&](double wa, double wb) {
    return std::vector<ClusterQueue>{Simple("a", "all", "3", wa, Policy::kAny, Policy::kLowerPriority),
                                     Simple("b", "all", "3", wb, Policy::kAny, Policy::kLowerPriority),
                                     Simple("c", "all", "3", 1, Policy::kAny, Policy::kLowerPriority)};
  };
  auto units = [&](const std::string& cq, int n) {
    std::vector<Workload> out;
    for (int i = 1; i <= n; ++i) out.push_back(Adm(cq + std::to_string(i), cq));
    return out;
  };
  auto cat = [](std::vector<Workload> x, const std::vector<Workload>& y) {
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  std::vector<FairCase> cases = {
      {"CQ with higher weight can preempt more",
       abc(2, 1),
       {},
       cat(units("a", 3), units("b", 6)),
       In("a_incoming", "a", "2"),
       {{"b1", kFair}, {"b2", kFair}}},
      {"can preempt anything borrowing from CQ with 0 weight",
       abc(1, 0),
       {},
       cat(units("a", 3), units("b", 6)),
       In("a_incoming", "a", "3"),
       {{"b1", kFair}, {"b2", kFair}, {"b3", kFair}}},
      {"can't preempt nominal from CQ with 0 weight",
       {Simple("a", "all", "3", 1, Policy::kAny, Policy::kLowerPriority),
        Simple("b", "all", "3", 0, Policy::kAny, Policy::kLowerPriority)},
       {},
       cat(units("a", 3), units("b", 3)),
       In("a_incoming", "a"),
       {}},
      {"can't preempt nominal from Cohort with 0 weight",
       {Simple("left-cq", "root", "0", 1, Policy::kAny), Simple("right-cq", "right-cohort", "0", 0, Policy::kAny)},
       {CohortBuilder(names, "right-cohort")
            .FairWeight(0)
            .Group({FQ("default").Resource("cpu", "1")})
            .Parent("root")
            .Obj()},
       {Adm("right-1", "right-cq")},
       In("left-1", "left-cq"),
       {}},
      {"can preempt within cluster queue when no cohort",
       {Simple("a", "", "1", 1, Policy::kNever, Policy::kLowerPriority)},
       {},
       {Adm("a1", "a")},
       In("a_incoming", "a", "1", 1000),
       {{"a1", kInCQ}}},
      {"cq with zero weight can reclaim nominal quota",
       {Simple("a", "ROOT", "1", 0, Policy::kAny), Simple("b", "ROOT", "0", 1)},
       {},
       {Adm("b1", "b")},
       In("a1", "a"),
       {{"b1", kReclaim}}},
      {"cohort with zero weight can reclaim nominal quota",
       {Simple("a", "A", "0", 0, Policy::kAny), Simple("b", "ROOT", "0", 1)},
       {CohortBuilder(names, "A").Parent("ROOT").FairWeight(0).Group({FQ("default").Resource("cpu", "1")}).Obj()},
       {Adm("b1", "b")},
       In("a1", "a"),
       {{"b1", kFair}}},
      // The preemptor borrows on weight 0 (share +inf), the target on
      // weight 1: neither strategy can pass.
      {"zero weight borrowing preemptor cannot preempt from a borrowing CQ with a non-zero weight",
       {Simple("a", "all", "1", 0, Policy::kAny), Simple("b", "all", "1", 1)},
       {},
       {Adm("a1", "a"), Adm("b1", "b"), Adm("b2", "b")},
       In("a_incoming", "a"),
       {}},
      {"zero weight borrowing preemptor can preempt from a borrowing CQ which also has zero weight",
       {Simple("a", "all", "1", 0, Policy::kAny), Simple("b", "all", "0", 0)},
       {CohortBuilder(names, "all").Group({FQ("default").Resource("cpu", "3")}).Obj()},
       {Adm("b1", "b"), Adm("b2", "b"), Adm("b3", "b")},
       In("a_incoming", "a", "2"),
       {{"b1", kFair}}},
      {"non-zero weight borrowing preemptor preempts from a borrowing CQ",
       {Simple("a", "all", "1", 1, Policy::kAny), Simple("b", "all", "0", 1)},
       {CohortBuilder(names, "all").Group({FQ("default").Resource("cpu", "3")}).Obj()},
       {Adm("b1", "b"), Adm("b2", "b"), Adm("b3", "b")},
       In("a_incoming", "a", "2"),
       {{"b1", kFair}}},
  };
  for (const auto& tc : cases) Run(tc);
}

TEST_F(FairPreemptionTest, Hierarchy) {
  // ROOT(20,5,20) → LEFT(5,5,7){a(0,1,1) w2, b(5,1,1)}, c(5,1,1),
  // RIGHT(10,5,7){d(5,1,1), e(5,1,1) w0.99}; LEFT weighs 2.
  std::vector<Workload> hier_admitted;
  for (const std::string q : {"b", "c", "d", "e"}) {
    for (int p = 1; p <= 5; ++p) hier_admitted.push_back(Adm(q + std::to_string(p), q, "1", p));
  }
  std::vector<Workload> a_low{Adm("a1", "a", "1", -1), Adm("a2", "a", "1", -1), Adm("a3", "a", "1", -1)};
  std::vector<FairCase> cases = {
      {"hierarchical preemption",
       {Simple("a", "LEFT", "1", 2, Policy::kAny), Simple("b", "LEFT", "1"), Simple("c", "ROOT", "1"),
        Simple("d", "RIGHT", "1"), Simple("e", "RIGHT", "1", 0.99)},
       {CohortBuilder(names, "ROOT").Group({FQ("default").Resource("cpu", "5")}).Obj(),
        CohortBuilder(names, "LEFT").FairWeight(2).Parent("ROOT").Group({FQ("default").Resource("cpu", "5")}).Obj(),
        CohortBuilder(names, "RIGHT").Parent("ROOT").Group({FQ("default").Resource("cpu", "5")}).Obj()},
       hier_admitted,
       In("unit", "a", "5"),
       {{"b1", kFair}, {"b2", kFair}, {"c1", kFair}, {"c2", kFair}, {"e1", kFair}}},
      // b borrows but RIGHT does not: a must preempt its own.
      {"borrowing cq in non-borrowing cohort is protected",
       {Simple("a", "ROOT", "5", 10, Policy::kAny, Policy::kLowerPriority),
        ClusterQueueBuilder(names, "b").Cohort("RIGHT").FairWeight(0.1).Obj()},
       {CohortBuilder(names, "ROOT").Obj(),
        CohortBuilder(names, "RIGHT").Parent("ROOT").FairWeight(0.1).Group({FQ("default").Resource("cpu", "1")}).Obj()},
       {a_low[0], a_low[1], a_low[2], Adm("b1", "b", "1", -1)},
       In("unit", "a", "5"),
       {{"a1", kInCQ}, {"a2", kInCQ}, {"a3", kInCQ}}},
      {"forced to preempt within clusterqueue because borrowing workload too important",
       {Simple("a", "ROOT", "5", 10, Policy::kLowerPriority, Policy::kLowerPriority),
        ClusterQueueBuilder(names, "b").Cohort("RIGHT").FairWeight(0.1).Obj()},
       {CohortBuilder(names, "ROOT").Obj(),
        CohortBuilder(names, "RIGHT").Parent("ROOT").FairWeight(0.1).Group({FQ("default").Resource("cpu", "3")}).Obj()},
       {a_low[0], a_low[1], a_low[2], Adm("b1", "b", "4", 100)},
       In("unit", "a", "4"),
       {{"a1", kInCQ}, {"a2", kInCQ}, {"a3", kInCQ}}},
      // a in ROOT/A/AA/AAA, b in ROOT/B/BB/BBB, capacity from ROOT/C/CC/CCC/CCCC;
      // A (1.01) weighs more than B (0.99).
      {"deep preemption",
       {Simple("a", "AAA", "0", 1, Policy::kAny), Simple("b", "BBB", "0")},
       {CohortBuilder(names, "ROOT").Obj(), CohortBuilder(names, "A").Parent("ROOT").FairWeight(1.01).Obj(),
        CohortBuilder(names, "AA").Parent("A").Obj(), CohortBuilder(names, "AAA").Parent("AA").Obj(),
        CohortBuilder(names, "B").Parent("ROOT").FairWeight(0.99).Obj(), CohortBuilder(names, "BB").Parent("B").Obj(),
        CohortBuilder(names, "BBB").Parent("BB").Obj(), CohortBuilder(names, "C").Parent("ROOT").Obj(),
        CohortBuilder(names, "CC").Parent("C").Obj(), CohortBuilder(names, "CCC").Parent("CC").Obj(),
        CohortBuilder(names, "CCCC").Parent("CCC").Group({FQ("default").Resource("cpu", "1")}).Obj()},
       {Adm("b1", "b")},
       In("a1", "a"),
       {{"b1", kFair}}},
      // ROOT → A (w0, 1 cpu) → {p (2 cpu, preemptor), y (2 cpu)}; ROOT → x (1 cpu).
      // x's candidates, skipped by S2-a while A's share is infinite, pass S2-b
      // once y1 is gone.
      {"candidates skipped by the first strategy are still available to the second strategy",
       {Simple("p", "A", "2", 1, Policy::kAny), Simple("y", "A", "2"), Simple("x", "ROOT", "1")},
       {CohortBuilder(names, "A").Parent("ROOT").FairWeight(0).Group({FQ("default").Resource("cpu", "1")}).Obj()},
       {Adm("p1", "p", "2"), Adm("y1", "y", "2"), Adm("y2", "y", "2"), Adm("x1", "x"), Adm("x2", "x")},
       In("p_incoming", "p"),
       {{"y1", kFair}, {"x1", kFair}}},
  };
  for (const auto& tc : cases) Run(tc);
}

// a: premium 3 (2 used) + cheap 0 (5 borrowed): a high share, yet the
// incoming premium unit keeps a within nominal on premium, so it reclaims.
TEST_F(FairPreemptionTest, NominalFirstReclaimsDespiteHighShare) {
  auto two_flavors = [&](const std::string& name, const std::string& premium, const std::string& cheap,
                         Policy reclaim) {
    return ClusterQueueBuilder(names, name)
        .Cohort("all")
        .Group({FQ("premium").Resource("cpu", premium), FQ("cheap").Resource("cpu", cheap)})
        .ReclaimWithinCohort(reclaim)
        .Fungibility(FungibilityPolicy::kMayStopSearch, FungibilityPolicy::kMayStopSearch)
        .Obj();
  };
  FairCase tc{"nominal first: workload fitting within nominal can preempt despite high aggregate DRS",
              {two_flavors("a", "3", "0", Policy::kAny), two_flavors("b", "0", "6", Policy::kNever)},
              {},
              {Adm("a_prem1", "a", "1", 0, "premium"), Adm("a_prem2", "a", "1", 0, "premium"),
               Adm("a_cheap1", "a", "1", 0, "cheap"), Adm("a_cheap2", "a", "1", 0, "cheap"),
               Adm("a_cheap3", "a", "1", 0, "cheap"), Adm("a_cheap4", "a", "1", 0, "cheap"),
               Adm("a_cheap5", "a", "1", 0, "cheap"), Adm("b_prem1", "b", "1", 0, "premium")},
              In("a_incoming", "a"),
              {{"b_prem1", kReclaim}},
              {},
              "premium",
              {"premium", "cheap"}};
  Run(tc);
}

// ---------------------------------------------------------------------------
// TestScheduleForFairSharing (admission order by tournament)

class FairScheduleTest : public ::testing::Test {
 protected:
  Harness h;
  void SetUp() override {
    h.flavors = {FlavorBuilder("on-demand").Obj()};
    h.options.fair_sharing.enable = true;
  }
  ClusterQueue Queue(const std::string& name, const std::string& cohort, const std::string& cpu, double weight = 1) {
    return ClusterQueueBuilder(h.names, name)
        .Cohort(cohort)
        .FairWeight(weight)
        .Group({FQ("on-demand").Resource("cpu", cpu)})
        .Obj();
  }
  Workload Pending(const std::string& name, const std::string& cq, const std::string& cpu, int32_t priority = 0,
                   Time created = T()) {
    return WorkloadBuilder(h.names, name, "eng-alpha")
        .Queue(cq)
        .Priority(priority)
        .Created(created)
        .Request("cpu", cpu)
        .Obj();
  }
  // Admitted workloads by key after one cycle.
  std::set<std::string> AdmittedAfterCycle() {
    std::set<std::string> out;
    for (const auto& e : h.Cycle().entries) {
      if (e.outcome == EntryOutcome::kAdmitted) out.insert(e.key);
    }
    return out;
  }
};

TEST_F(FairScheduleTest, ScheduleWorkloadWithLowestDrfAfterAdmission) {
  h.cohorts = {CohortBuilder(h.names, "A").Group({FQ("on-demand").Resource("cpu", "100")}).Obj()};
  h.cluster_queues = {Queue("b", "A", "0"), Queue("c", "A", "0")};
  h.Build({WorkloadBuilder(h.names, "b0", "eng-alpha").Request("cpu", "10").Admitted("b", "on-demand").Obj()});
  h.Submit(Pending("b1", "b", "50"));            // b: 600 after admission
  h.Submit(Pending("c1", "c", "75", 0, T(-1)));  // c: 750, older
  EXPECT_EQ(AdmittedAfterCycle(), (std::set<std::string>{"eng-alpha/b1"}));
}

TEST_F(FairScheduleTest, TwoQueuesWithWeightZeroScheduleWorkloadWhichBorrowsLess) {
  h.cohorts = {CohortBuilder(h.names, "A").Group({FQ("on-demand").Resource("cpu", "8")}).Obj()};
  h.cluster_queues = {Queue("b", "A", "0", 0), Queue("c", "A", "0", 0)};
  h.Build({WorkloadBuilder(h.names, "b0", "eng-alpha").Request("cpu", "4").Admitted("b", "on-demand").Obj()});
  h.Submit(Pending("b1", "b", "4", 9001));  // higher priority, but b would borrow 8
  h.Submit(Pending("c1", "c", "4"));
  EXPECT_EQ(AdmittedAfterCycle(), (std::set<std::string>{"eng-alpha/c1"}));
}

TEST_F(FairScheduleTest, TwoQueuesWithHighWeightScheduleWorkloadWhichBorrowsLess) {
  h.cohorts = {CohortBuilder(h.names, "A").Group({FQ("on-demand").Resource("cpu", "8")}).Obj()};
  h.cluster_queues = {Queue("b", "A", "0", 123456789), Queue("c", "A", "0", 123456789)};
  h.Build({WorkloadBuilder(h.names, "b0", "eng-alpha").Request("cpu", "4").Admitted("b", "on-demand").Obj()});
  h.Submit(Pending("b1", "b", "4", 9001));
  h.Submit(Pending("c1", "c", "4"));
  EXPECT_EQ(AdmittedAfterCycle(), (std::set<std::string>{"eng-alpha/c1"}));
}

// A (200) → B {d (d0: 10), e (e0: 20)}, C {f, g (g0: 100)}. In B, d1 (d at
// 80) beats e1 (e at 81); in C, f1 (1) beats g1 (g at 101); at A, B with d1
// (100) beats C with f1 (101). d1 fills A; the others no longer fit.
TEST_F(FairScheduleTest, HierarchicalScheduleWorkloadWhichWinsTournament) {
  h.cohorts = {CohortBuilder(h.names, "A").Group({FQ("on-demand").Resource("cpu", "200")}).Obj(),
               CohortBuilder(h.names, "B").Parent("A").Obj(), CohortBuilder(h.names, "C").Parent("A").Obj()};
  h.cluster_queues = {Queue("d", "B", "0"), Queue("e", "B", "0"), Queue("f", "C", "0"), Queue("g", "C", "0")};
  h.Build({WorkloadBuilder(h.names, "d0", "eng-alpha").Request("cpu", "10").Admitted("d", "on-demand").Obj(),
           WorkloadBuilder(h.names, "e0", "eng-alpha").Request("cpu", "20").Admitted("e", "on-demand").Obj(),
           WorkloadBuilder(h.names, "g0", "eng-alpha").Request("cpu", "100").Admitted("g", "on-demand").Obj()});
  h.Submit(Pending("d1", "d", "70"));
  h.Submit(Pending("e1", "e", "61"));
  h.Submit(Pending("f1", "f", "1"));
  h.Submit(Pending("g1", "g", "1"));
  EXPECT_EQ(AdmittedAfterCycle(), (std::set<std::string>{"eng-alpha/d1"}));
}

// a's capacity comes from its Cohort, b's from itself in a Cohort of its
// own, c has no Cohort: all three are admitted.
TEST_F(FairScheduleTest, SingletonClusterQueuesAndClusterQueueWithoutCohort) {
  h.cohorts = {CohortBuilder(h.names, "A").Group({FQ("on-demand").Resource("cpu", "10")}).Obj()};
  h.cluster_queues = {Queue("a", "A", "0"), Queue("b", "B", "10"), Queue("c", "", "10")};
  h.Build();
  h.Submit(Pending("a1", "a", "10"));
  h.Submit(Pending("b1", "b", "10"));
  h.Submit(Pending("c1", "c", "10"));
  EXPECT_EQ(AdmittedAfterCycle(), (std::set<std::string>{"eng-alpha/a1", "eng-alpha/b1", "eng-alpha/c1"}));
}

// "with fair sharing: preempt workload from CQ with the highest share"
// (TestScheduleForFairSharing's eng cohort): eng-beta's 30 cpu stay within
// its nominal quota, so it reclaims (InCohortReclamation) from the borrowing
// queues, the highest share first: alpha1 from eng-alpha (share 120), then
// gamma1 from eng-gamma (80 against eng-alpha's 40 by then).
TEST_F(FairScheduleTest, PreemptWorkloadFromClusterQueueWithTheHighestShare) {
  h.flavors = {FlavorBuilder("on-demand").Obj(), FlavorBuilder("spot").Obj(), FlavorBuilder("model-a").Obj()};
  h.cluster_queues = {ClusterQueueBuilder(h.names, "eng-alpha")
                          .Cohort("eng")
                          .Group({FQ("on-demand").Resource("cpu", "50", "50"), FQ("spot").Resource("cpu", "100", "0")})
                          .Obj(),
                      ClusterQueueBuilder(h.names, "eng-beta")
                          .Cohort("eng")
                          .ReclaimWithinCohort(Policy::kAny)
                          .WithinClusterQueue(Policy::kLowerPriority)
                          .Group({FQ("on-demand").Resource("cpu", "50", "10"), FQ("spot").Resource("cpu", "0", "100")})
                          .Group({FQ("model-a").Resource("example.com/gpu", "20", "0")})
                          .Obj(),
                      ClusterQueueBuilder(h.names, "eng-gamma")
                          .Cohort("eng")
                          .Group({FQ("on-demand").Resource("cpu", "50", "0")})
                          .Obj()};
  auto adm = [&](const std::string& name, const std::string& cq, const std::string& cpu, const std::string& flavor) {
    return WorkloadBuilder(h.names, name, cq).Request("cpu", cpu).Admitted(cq, flavor).Obj();
  };
  h.Build({adm("all_spot", "eng-alpha", "100", "spot"), adm("alpha1", "eng-alpha", "20", "on-demand"),
           adm("alpha2", "eng-alpha", "20", "on-demand"), adm("alpha3", "eng-alpha", "20", "on-demand"),
           adm("alpha4", "eng-alpha", "20", "on-demand"), adm("gamma1", "eng-gamma", "10", "on-demand"),
           adm("gamma2", "eng-gamma", "20", "on-demand"), adm("gamma3", "eng-gamma", "20", "on-demand"),
           adm("gamma4", "eng-gamma", "20", "on-demand")});
  h.Submit(WorkloadBuilder(h.names, "preemptor", "eng-beta")
               .Uid("wl-preemptor")
               .Queue("eng-beta")
               .Request("cpu", "30")
               .Obj());
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("wl-preemptor");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kPreempting);
  EXPECT_EQ(e->message,
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 30 more "
            "needed, insufficient unused quota for cpu in flavor spot, 30 more needed. Pending the preemption of 2 "
            "workload(s)");
  std::map<std::string, std::pair<std::string, std::string>> got;
  for (const auto& v : e->preempted) got[v.key] = {v.reason, v.message};
  const std::string msg =
      "Preempted to accommodate a workload (UID: wl-preemptor, JobUID: UNKNOWN) due to reclamation within the cohort; "
      "preemptor path: /eng/eng-beta; preemptee path: ";
  EXPECT_EQ(got, (std::map<std::string, std::pair<std::string, std::string>>{
                     {"eng-alpha/alpha1", {kReclaim, msg + "/eng/eng-alpha"}},
                     {"eng-gamma/gamma1", {kReclaim, msg + "/eng/eng-gamma"}}}));
}

// ROOT → Cohort-A (10) → cq-a (0); ROOT → Cohort-B → {cq-b (5), cq-c (0,
// holding 10)}. With wl-a Cohort-A is 5/10 (not borrowing); with wl-b
// Cohort-B is 15/5 (borrowing): wl-a goes first and wl-b no longer fits.
TEST_F(FairScheduleTest, HierarchicalNominalFirstPrefersNonBorrowingSubtree) {
  h.cohorts = {CohortBuilder(h.names, "root").Obj(),
               CohortBuilder(h.names, "Cohort-A").Group({FQ("on-demand").Resource("cpu", "10")}).Parent("root").Obj(),
               CohortBuilder(h.names, "Cohort-B").Parent("root").Obj()};
  h.cluster_queues = {Queue("cq-a", "Cohort-A", "0"), Queue("cq-b", "Cohort-B", "5"), Queue("cq-c", "Cohort-B", "0")};
  h.Build({WorkloadBuilder(h.names, "c0", "eng-alpha").Request("cpu", "10").Admitted("cq-c", "on-demand").Obj()});
  h.Submit(Pending("wl-a", "cq-a", "5"));
  h.Submit(Pending("wl-b", "cq-b", "5"));
  CycleResult r = h.Cycle();
  ASSERT_NE(r.Find("eng-alpha/wl-a"), nullptr);
  EXPECT_EQ(r.Find("eng-alpha/wl-a")->outcome, EntryOutcome::kAdmitted);
  EXPECT_EQ(r.Find("eng-alpha/wl-b")->outcome, EntryOutcome::kPending);
  EXPECT_EQ(r.Find("eng-alpha/wl-b")->message, "Workload no longer fits after processing another workload");
  EXPECT_EQ(r.entries[0].uid, "eng-alpha/wl-a");  // processing order
}

TEST_F(FairScheduleTest, ScheduleHighestPriorityFirst) {
  h.cohorts = {CohortBuilder(h.names, "A").Group({FQ("on-demand").Resource("cpu", "10")}).Obj(),
               CohortBuilder(h.names, "B").Obj()};
  h.cluster_queues = {Queue("b", "A", "0"), Queue("c", "A", "0")};
  h.Build();
  h.Submit(Pending("b1", "b", "10", 99));
  h.Submit(Pending("c1", "c", "10", 101));
  EXPECT_EQ(AdmittedAfterCycle(), (std::set<std::string>{"eng-alpha/c1"}));
}

TEST_F(FairScheduleTest, ScheduleEarliestTimestampFirst) {
  h.cohorts = {CohortBuilder(h.names, "A").Group({FQ("on-demand").Resource("cpu", "10")}).Obj(),
               CohortBuilder(h.names, "B").Obj()};
  h.cluster_queues = {Queue("b", "A", "0"), Queue("c", "A", "0")};
  h.Build();
  h.Submit(Pending("b1", "b", "10", 101, T(1)));
  h.Submit(Pending("c1", "c", "10", 101, T(0)));
  EXPECT_EQ(AdmittedAfterCycle(), (std::set<std::string>{"eng-alpha/c1"}));
}

// Without Fair Sharing the heads of ScheduleWorkloadWithLowestDrfAfterAdmission
// go in classical order: both borrow (level 1), c1 is older and goes first.
TEST_F(FairScheduleTest, ClassicalOrderWhenDisabled) {
  h.options.fair_sharing.enable = false;
  h.cohorts = {CohortBuilder(h.names, "A").Group({FQ("on-demand").Resource("cpu", "100")}).Obj()};
  h.cluster_queues = {Queue("b", "A", "0"), Queue("c", "A", "0")};
  h.Build({WorkloadBuilder(h.names, "b0", "eng-alpha").Request("cpu", "10").Admitted("b", "on-demand").Obj()});
  h.Submit(Pending("b1", "b", "50", 0, T(0)));
  h.Submit(Pending("c1", "c", "75", 0, T(-1)));
  EXPECT_EQ(AdmittedAfterCycle(), (std::set<std::string>{"eng-alpha/c1"}));
}

// Issue 21's story at engine level: two teams with weights 1 and 2 share a
// cohort of 12 cpu (no nominal quota of their own). Team a fills it first;
// team b then preempts a's workloads as the default strategies allow, and
// admissions settle at shares 1:2 — a 4 cpu (share 333), b 8 cpu (share
// 8/12·1000/2 = 333). One more unit for b would give it 375 against a's
// 250 after the removal (S2-a fails) and 333 before it (S2-b fails); a
// reclaiming a unit would reach 416 against b's 291 after the removal.
TEST_F(FairScheduleTest, TwoTeamsConvergeToWeightedShares) {
  h.cohorts = {CohortBuilder(h.names, "shared").Group({FQ("on-demand").Resource("cpu", "12")}).Obj()};
  auto team = [&](const std::string& name, double w) {
    return ClusterQueueBuilder(h.names, name)
        .Cohort("shared")
        .FairWeight(w)
        .Group({FQ("on-demand").Resource("cpu", "0")})
        .ReclaimWithinCohort(Policy::kAny)
        .Obj();
  };
  h.cluster_queues = {team("team-a", 1), team("team-b", 2)};
  h.Build();
  std::map<std::string, Workload> pending;
  auto submit = [&](const std::string& team, int n, double t0) {
    for (int i = 0; i < n; ++i) {
      Workload w = WorkloadBuilder(h.names, team + "-" + std::to_string(i), team)
                       .Queue(team)
                       .Created(T(t0 + i))
                       .Request("cpu", "1")
                       .Obj();
      pending[w.uid] = w;
      h.Submit(w);
    }
  };
  auto run = [&](int cycles) {
    for (int c = 0; c < cycles; ++c) {
      h.now = T(100 + c);
      CycleResult r = h.Cycle();
      // Every victim's pods stop at once; it goes back to its queue.
      for (const auto& e : r.entries) {
        for (const auto& v : e.preempted) {
          EXPECT_EQ(v.reason, kFair);
          ASSERT_TRUE(h.snapshot->RemoveWorkload(v.uid));
          h.Submit(pending.at(v.uid));
        }
      }
    }
  };
  submit("team-a", 16, 0);
  run(20);
  EXPECT_EQ(h.UsageOf("team-a", "on-demand", "cpu"), 12000);
  submit("team-b", 16, 50);
  run(40);
  EXPECT_EQ(h.UsageOf("team-a", "on-demand", "cpu"), 4000);
  EXPECT_EQ(h.UsageOf("team-b", "on-demand", "cpu"), 8000);
  const int a = h.snapshot->ClusterQueueIndex("team-a"), b = h.snapshot->ClusterQueueIndex("team-b");
  EXPECT_EQ(ComputeDRS(*h.snapshot, a).RoundedWeightedShare(), 334);  // ⌈4/12·1000⌉
  EXPECT_EQ(ComputeDRS(*h.snapshot, b).RoundedWeightedShare(), 334);  // ⌈8/12·1000/2⌉
}

}  // namespace
}  // namespace berth::admission
