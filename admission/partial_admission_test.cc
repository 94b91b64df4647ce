// Partial admission: the PodSetReducer search (admission/podset_reducer.h) and the cycle's
// fallback to reduced counts, with the outcomes of Kueue's TestSchedule "partial admission"
// cases (pkg/scheduler/scheduler_test.go) on the same queues: "sales" (cpu 50 in flavor
// default) and "eng-beta" (example.com/gpu 20 in flavor model-a, withinClusterQueue
// LowerPriority).
#include <gtest/gtest.h>

#include "admission/podset_reducer.h"
#include "admission/scheduler.h"
#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::ClusterQueueBuilder;
using testing::FlavorBuilder;
using testing::Harness;
using testing::Q;
using testing::WorkloadBuilder;
using FQ = testing::FlavorQuotasBuilder;

PodSet MakePodSet(int32_t count, std::optional<int32_t> min_count) {
  PodSet ps;
  ps.count = count;
  ps.min_count = min_count;
  return ps;
}

TEST(PodSetReducerTest, CountsShrinkInProportionToEachDelta) {
  std::vector<PodSet> sets = {MakePodSet(20, std::nullopt), MakePodSet(30, 10), MakePodSet(15, 5)};
  EXPECT_EQ(ReducedCounts(sets, 0, 30), (std::vector<int32_t>{20, 30, 15}));
  EXPECT_EQ(ReducedCounts(sets, 15, 30), (std::vector<int32_t>{20, 20, 10}));
  EXPECT_EQ(ReducedCounts(sets, 14, 30), (std::vector<int32_t>{20, 21, 11}));  // floors
  EXPECT_EQ(ReducedCounts(sets, 30, 30), (std::vector<int32_t>{20, 10, 5}));
}

TEST(PodSetReducerTest, FindsTheLargestTotalThatFits) {
  std::vector<PodSet> sets = {MakePodSet(50, 20)};
  int calls = 0;
  auto under = [&](int32_t limit) {
    return [&calls, limit](const std::vector<int32_t>& c) {
      ++calls;
      return c[0] <= limit ? std::optional<int32_t>(c[0]) : std::nullopt;
    };
  };
  EXPECT_EQ(ReducePodSets(sets, under(25)), 25);
  EXPECT_LE(calls, 6);  // a binary search over 31 indices
  EXPECT_EQ(ReducePodSets(sets, under(20)), 20);
  EXPECT_EQ(ReducePodSets(sets, under(19)), std::nullopt);  // below minCount
  EXPECT_EQ(ReducePodSets(sets, under(100)), 50);
}

TEST(PodSetReducerTest, NothingToSearchWithoutMinCount) {
  int calls = 0;
  auto any = [&](const std::vector<int32_t>&) {
    ++calls;
    return std::optional<int>(1);
  };
  EXPECT_EQ(ReducePodSets(std::vector<PodSet>{MakePodSet(4, std::nullopt), MakePodSet(3, 3)}, any), std::nullopt);
  EXPECT_EQ(calls, 0);
}

class PartialAdmissionCycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h.names.Intern("cpu");
    h.names.Intern("example.com/gpu");
    h.flavors = {FlavorBuilder("default").Obj(), FlavorBuilder("model-a").Obj()};
    h.cluster_queues = {
        ClusterQueueBuilder(h.names, "sales").StrictFIFO().Group({FQ("default").Resource("cpu", "50", "0")}).Obj(),
        ClusterQueueBuilder(h.names, "eng-beta")
            .StrictFIFO()
            .WithinClusterQueue(PreemptionPolicy::kLowerPriority)
            .Group({FQ("model-a").Resource("example.com/gpu", "20", "0")})
            .Obj(),
    };
  }
  WorkloadBuilder W(const std::string& ns, const std::string& name) { return WorkloadBuilder(h.names, name, ns); }
  std::vector<int32_t> Counts(const EntryResult& e) {
    std::vector<int32_t> out;
    if (e.admission) {
      for (const auto& ps : e.admission->pod_sets) out.push_back(ps.count);
    }
    return out;
  }
  Harness h;
};

// "partial admission single variable pod set": 50 × 2 cpu, minCount 20, on 50 cpu → 25 pods.
TEST_F(PartialAdmissionCycleTest, SingleVariablePodSetIsAdmittedWithTheLargestCountThatFits) {
  h.Build();
  h.Submit(W("sales", "new").Queue("sales").Count(50).MinCount(20).Request("cpu", "2").Obj());
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("sales/new");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kAdmitted);
  EXPECT_EQ(e->message, "Quota reserved in ClusterQueue sales");
  EXPECT_EQ(Counts(*e), std::vector<int32_t>{25});
  EXPECT_EQ(e->admission->pod_sets[0].resource_usage.Get(h.names.Find("cpu")), Q("50"));
  EXPECT_EQ(h.UsageOf("sales", "default", "cpu"), Q("50"));
}

// "partial admission multiple variable pod sets": one 20 (fixed), two 30 (min 10), three 15
// (min 5), 1 cpu each, on 50 cpu → 20, 20, 10.
TEST_F(PartialAdmissionCycleTest, MultipleVariablePodSetsShrinkTogether) {
  h.Build();
  Workload wl = W("sales", "new").Queue("sales").PodSets({{"one", 20}, {"two", 30}, {"three", 15}}).Obj();
  for (auto& ps : wl.pod_sets) ps.requests.Set(h.names.Find("cpu"), Q("1"));
  wl.pod_sets[1].min_count = 10;
  wl.pod_sets[2].min_count = 5;
  h.Submit(wl);
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("sales/new");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kAdmitted);
  EXPECT_EQ(Counts(*e), (std::vector<int32_t>{20, 20, 10}));
  EXPECT_EQ(e->admission->pod_sets[2].resource_usage.Get(h.names.Find("cpu")), Q("10"));
}

// The same workload without minCounts does not fit (as Kueue's "partial admission disabled,
// multiple variable pod sets").
TEST_F(PartialAdmissionCycleTest, WithoutMinCountTheWorkloadStaysPendingWithTheFullRequest) {
  h.Build();
  Workload wl = W("sales", "new").Queue("sales").PodSets({{"one", 20}, {"two", 30}, {"three", 15}}).Obj();
  for (auto& ps : wl.pod_sets) ps.requests.Set(h.names.Find("cpu"), Q("1"));
  h.Submit(wl);
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("sales/new");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kPending);
  EXPECT_EQ(e->reason, "ExceedsMaxQuota");
  EXPECT_EQ(e->message,
            "couldn't assign flavors to pod set three: insufficient quota for cpu in flavor default, previously "
            "considered podsets requests (50) + current podset request (15) > maximum capacity (50)");
}

TEST_F(PartialAdmissionCycleTest, BelowMinCountStaysPendingWithTheFullAssignmentsReason) {
  h.Build();
  h.Submit(W("sales", "new").Queue("sales").Count(60).MinCount(51).Request("cpu", "1").Obj());
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("sales/new");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kPending);
  EXPECT_EQ(e->reason, "ExceedsMaxQuota");
  EXPECT_EQ(e->message,
            "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default, previously "
            "considered podsets requests (0) + current podset request (60) > maximum capacity (50)");
  EXPECT_EQ(h.UsageOf("sales", "default", "cpu"), 0);
}

// "partial admission single variable pod set, preempt first": the full count (20) fits by
// preempting "old", so the cycle preempts rather than admitting 10 pods now.
TEST_F(PartialAdmissionCycleTest, PreemptionForTheFullCountComesBeforeReducing) {
  h.Build({W("eng-beta", "old").Priority(-4).Count(10).Request("example.com/gpu", "1").Admitted("eng-beta", "model-a").Obj()});
  h.Submit(W("eng-beta", "new").Queue("eng-beta").Priority(4).Count(20).MinCount(10).Request("example.com/gpu", "1").Obj());
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("eng-beta/new");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kPreempting);
  EXPECT_EQ(e->reason, "WaitingForPreemptedWorkloads");
  EXPECT_EQ(e->message,
            "couldn't assign flavors to pod set main: insufficient unused quota for example.com/gpu in flavor "
            "model-a, 10 more needed. Pending the preemption of 1 workload(s)");
  ASSERT_EQ(e->preempted.size(), 1u);
  EXPECT_EQ(e->preempted[0].uid, "eng-beta/old");
}

// "partial admission single variable pod set, preempt with partial admission": 30 can never
// fit in 20; the reduced count 20 fits by preempting "old" (10 more needed).
TEST_F(PartialAdmissionCycleTest, ReducedCountMayPreempt) {
  h.Build({W("eng-beta", "old").Priority(-4).Count(10).Request("example.com/gpu", "1").Admitted("eng-beta", "model-a").Obj()});
  h.Submit(W("eng-beta", "new").Queue("eng-beta").Priority(4).Count(30).MinCount(10).Request("example.com/gpu", "1").Obj());
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("eng-beta/new");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kPreempting);
  EXPECT_EQ(e->message,
            "couldn't assign flavors to pod set main: insufficient unused quota for example.com/gpu in flavor "
            "model-a, 10 more needed. Pending the preemption of 1 workload(s)");
  ASSERT_EQ(e->preempted.size(), 1u);
  EXPECT_EQ(e->preempted[0].uid, "eng-beta/old");
}

// The lower-priority "old" cannot be preempted by an equal-priority workload: the reduced
// count that fits beside it (10) is admitted instead.
TEST_F(PartialAdmissionCycleTest, ReducedCountFitsBesideWorkloadsItCannotPreempt) {
  h.Build({W("eng-beta", "old").Count(10).Request("example.com/gpu", "1").Admitted("eng-beta", "model-a").Obj()});
  h.Submit(W("eng-beta", "new").Queue("eng-beta").Count(30).MinCount(5).Request("example.com/gpu", "1").Obj());
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("eng-beta/new");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kAdmitted);
  EXPECT_TRUE(e->preempted.empty());
  EXPECT_EQ(Counts(*e), std::vector<int32_t>{10});
  EXPECT_EQ(h.UsageOf("eng-beta", "model-a", "example.com/gpu"), Q("20"));
}

}  // namespace
}  // namespace berth::admission
