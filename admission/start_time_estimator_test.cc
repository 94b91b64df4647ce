// EstimateStartTimes: the engine replayed forward gives each pending workload
// the virtual time it is admitted at, the end it waited for, and the source
// and uncertainty of the run times along its chain.
#include "admission/start_time_estimator.h"

#include <gtest/gtest.h>

#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using namespace testing;
using std::chrono::minutes;
using std::chrono::seconds;

class StartTimeEstimatorTest : public ::testing::Test {
 protected:
  // One ClusterQueue "cq" with `cpu` cores of flavor "f", or two ("a", "b")
  // in cohort "c" when `cohort`.
  void Setup(const std::string& cpu = "4", PreemptionPolicy within = PreemptionPolicy::kNever) {
    cqs_ = {ClusterQueueBuilder(names_, "cq").Group({FlavorQuotasBuilder("f").Resource("cpu", cpu)}).WithinClusterQueue(within).Obj()};
    snap_.emplace(names_, std::vector<ResourceFlavor>{FlavorBuilder("f").Obj()}, cqs_, std::vector<Cohort>{});
    queues_.AddOrUpdateClusterQueue("cq", QueueingStrategy::kBestEffortFIFO, "", true);
  }
  void Running(const std::string& name, const std::string& cpu, Time reserved_at, int32_t priority = 0) {
    ASSERT_TRUE(snap_->AddWorkload(
                         WorkloadBuilder(names_, name).Request("cpu", cpu).Priority(priority).Admitted("cq", "f", reserved_at).Obj())
                    .ok());
  }
  void Pending(const std::string& name, const std::string& cpu, Time created, int32_t priority = 0,
               std::optional<Time> requeue_at = std::nullopt) {
    WorkloadBuilder b(names_, name);
    b.Request("cpu", cpu).Queue("cq").Priority(priority).Created(created);
    if (requeue_at) b.RequeueAt(*requeue_at);
    ASSERT_TRUE(queues_.AddOrUpdateWorkload(b.Obj(), created));
  }
  EstimateResult Estimate(Time now) {
    return EstimateStartTimes(*snap_, queues_, [this](const Workload& w) {
      auto it = run_times_.find(w.name);
      return it == run_times_.end() ? RunTime{} : it->second;
    }, now);
  }
  static RunTime Bound(Duration d) { return {d, {}, RunTimeSource::kMaxExecutionTime}; }
  // One 1-cpu ClusterQueue and twenty pending 1-cpu workloads of one minute
  // each, "w-0" to "w-19", created a second apart.
  void TwentyOneMinuteRuns() {
    Setup("1");
    for (int i = 0; i < 20; ++i) {
      Pending("w-" + std::to_string(i), "1", T(i));
      run_times_["w-" + std::to_string(i)] = Bound(minutes(1));
    }
  }
  static RunTime History(Duration d, Duration spread) { return {d, spread, RunTimeSource::kHistory}; }

  ResourceNames names_;
  std::vector<ClusterQueue> cqs_;
  std::optional<Snapshot> snap_;
  QueueManager queues_;
  std::map<std::string, RunTime> run_times_;
};

TEST_F(StartTimeEstimatorTest, APendingWorkloadStartsWhenTheRunningOneEnds) {
  Setup();
  Running("train", "4", T(0));
  Pending("next", "4", T(60));
  run_times_["train"] = Bound(minutes(10));
  const EstimateResult r = Estimate(T(240));
  ASSERT_TRUE(r.by_uid.count("default/next"));
  const StartEstimate& e = r.by_uid.at("default/next");
  EXPECT_EQ(e.start, T(600)) << "10 min after train's reservation at 0, not 10 min after now";
  EXPECT_EQ(e.after, "default/train");
  EXPECT_EQ(e.source, RunTimeSource::kMaxExecutionTime);
  EXPECT_TRUE(e.upper_bound);
  EXPECT_EQ(e.uncertainty, Duration::zero());
}

TEST_F(StartTimeEstimatorTest, EstimatesChainThroughPendingRunsAndAccumulateTheirSpread) {
  Setup();
  Running("train", "4", T(0));
  Pending("second", "4", T(10));
  Pending("third", "4", T(20));
  run_times_["train"] = Bound(minutes(10));
  run_times_["second"] = History(minutes(30), minutes(3));
  const EstimateResult r = Estimate(T(0));
  const StartEstimate& second = r.by_uid.at("default/second");
  const StartEstimate& third = r.by_uid.at("default/third");
  EXPECT_EQ(second.start, T(600));
  EXPECT_EQ(third.start, T(600 + 1800));
  EXPECT_EQ(third.after, "default/second");
  EXPECT_EQ(third.source, RunTimeSource::kHistory) << "the weakest source along the chain";
  EXPECT_FALSE(third.upper_bound);
  EXPECT_EQ(third.uncertainty, minutes(3));
}

TEST_F(StartTimeEstimatorTest, WhatFitsNowStartsNowWithoutASource) {
  Setup("8");
  Running("train", "4", T(0));
  Pending("small", "4", T(5));
  run_times_["train"] = Bound(minutes(10));
  const EstimateResult r = Estimate(T(30));
  const StartEstimate& e = r.by_uid.at("default/small");
  EXPECT_EQ(e.start, T(30));
  EXPECT_EQ(e.after, "");
  EXPECT_FALSE(e.source.has_value());
}

TEST_F(StartTimeEstimatorTest, HigherPriorityGoesFirstAsTheEngineOrdersIt) {
  Setup();
  Running("train", "4", T(0));
  Pending("low", "4", T(1), 0);
  Pending("high", "4", T(100), 10);
  run_times_["train"] = Bound(minutes(10));
  run_times_["high"] = Bound(minutes(5));
  run_times_["low"] = Bound(minutes(5));
  const EstimateResult r = Estimate(T(200));
  EXPECT_EQ(r.by_uid.at("default/high").start, T(600));
  EXPECT_EQ(r.by_uid.at("default/low").start, T(900));
  EXPECT_EQ(r.by_uid.at("default/low").after, "default/high");
}

TEST_F(StartTimeEstimatorTest, ARunningWorkloadOfUnknownRunTimeLeavesNoEstimateAndIsNamed) {
  Setup();
  Running("mystery", "4", T(0));
  Pending("next", "4", T(1));
  const EstimateResult r = Estimate(T(10));
  EXPECT_FALSE(r.by_uid.count("default/next"));
  ASSERT_TRUE(r.unknown.count("default/next"));
  EXPECT_EQ(r.unknown.at("default/next")->keys, std::vector<std::string>{"default/mystery"});
  EXPECT_EQ(r.unknown.at("default/next")->total, 1u);
  EXPECT_FALSE(r.hit_limit);
}

// A pending workload waits only on its own cohort tree's holders: trees share
// no quota. Every pending workload of a tree shares one list, at most
// UnknownBlockers::kMaxKeys keys long whatever the number of holders, so the
// result grows with pending + holders, not their product.
TEST_F(StartTimeEstimatorTest, UnknownBlockersAreThoseOfTheTreeListedOnce) {
  cqs_ = {ClusterQueueBuilder(names_, "a").Group({FlavorQuotasBuilder("f").Resource("cpu", "20")}).Cohort("c").Obj(),
          ClusterQueueBuilder(names_, "a2").Group({FlavorQuotasBuilder("f").Resource("cpu", "0")}).Cohort("c").Obj(),
          ClusterQueueBuilder(names_, "b").Group({FlavorQuotasBuilder("f").Resource("cpu", "1")}).Obj()};
  snap_.emplace(names_, std::vector<ResourceFlavor>{FlavorBuilder("f").Obj()}, cqs_, std::vector<Cohort>{});
  for (const char* cq : {"a", "a2", "b"}) queues_.AddOrUpdateClusterQueue(cq, QueueingStrategy::kBestEffortFIFO, "", true);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(snap_->AddWorkload(WorkloadBuilder(names_, "run-a-" + std::to_string(100 + i))
                                       .Request("cpu", "1")
                                       .Admitted("a", "f", T(0))
                                       .Obj())
                    .ok());
  }
  ASSERT_TRUE(snap_->AddWorkload(WorkloadBuilder(names_, "run-b").Request("cpu", "1").Admitted("b", "f", T(0)).Obj()).ok());
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(queues_.AddOrUpdateWorkload(
        WorkloadBuilder(names_, "wait-a2-" + std::to_string(i)).Request("cpu", "1").Queue("a2").Created(T(i)).Obj(), T(i)));
  }
  ASSERT_TRUE(queues_.AddOrUpdateWorkload(WorkloadBuilder(names_, "wait-b").Request("cpu", "1").Queue("b").Created(T(1)).Obj(), T(1)));
  const EstimateResult r = Estimate(T(10));
  EXPECT_TRUE(r.by_uid.empty());
  ASSERT_EQ(r.unknown.size(), 51u);
  const auto& tree = r.unknown.at("default/wait-a2-0");
  EXPECT_EQ(tree->total, 20u);
  ASSERT_EQ(tree->keys.size(), UnknownBlockers::kMaxKeys);
  EXPECT_EQ(tree->keys.front(), "default/run-a-100");
  EXPECT_EQ(tree->keys.back(), "default/run-a-109");
  for (int i = 0; i < 50; ++i) EXPECT_EQ(r.unknown.at("default/wait-a2-" + std::to_string(i)), tree);
  EXPECT_EQ(r.unknown.at("default/wait-b")->keys, std::vector<std::string>{"default/run-b"});
  EXPECT_EQ(r.unknown.at("default/wait-b")->total, 1u);
}

TEST_F(StartTimeEstimatorTest, AnOverrunningRunIsStillRunning) {
  Setup();
  Running("slow", "4", T(0));
  Pending("next", "4", T(1));
  run_times_["slow"] = History(minutes(10), minutes(2));
  // At 15 min the run is 5 min past its estimate: it ends no earlier than
  // its spread from now.
  EXPECT_EQ(Estimate(T(900)).by_uid.at("default/next").start, T(900 + 120));
}

TEST_F(StartTimeEstimatorTest, APreemptorStartsNowAndItsVictimRunsAgainLater) {
  Setup("4", PreemptionPolicy::kLowerPriority);
  Running("low", "4", T(0), 0);
  Pending("high", "4", T(50), 10);
  Pending("low-2", "4", T(40), 0);
  run_times_["low"] = Bound(minutes(10));
  run_times_["high"] = Bound(minutes(5));
  run_times_["low-2"] = Bound(minutes(5));
  const EstimateResult r = Estimate(T(60));
  EXPECT_EQ(r.by_uid.at("default/high").start, T(60));
  // low-2 (created at 40) is ahead of the requeued victim (queued again at 60).
  EXPECT_EQ(r.by_uid.at("default/low-2").start, T(60 + 300));
  EXPECT_FALSE(r.by_uid.count("default/low")) << "only pending workloads get estimates";
}

TEST_F(StartTimeEstimatorTest, ABackoffDelaysTheStartUntilItExpires) {
  Setup();
  Pending("backing-off", "4", T(0), 0, T(90));
  const EstimateResult r = Estimate(T(30));
  const StartEstimate& e = r.by_uid.at("default/backing-off");
  EXPECT_EQ(e.start, T(90));
  EXPECT_FALSE(e.source.has_value());
}

TEST_F(StartTimeEstimatorTest, CohortBorrowingIsPartOfTheReplay) {
  cqs_ = {ClusterQueueBuilder(names_, "a").Cohort("c").Group({FlavorQuotasBuilder("f").Resource("cpu", "4")}).Obj(),
          ClusterQueueBuilder(names_, "b").Cohort("c").Group({FlavorQuotasBuilder("f").Resource("cpu", "4")}).Obj()};
  snap_.emplace(names_, std::vector<ResourceFlavor>{FlavorBuilder("f").Obj()}, cqs_, std::vector<Cohort>{});
  queues_.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "c", true);
  queues_.AddOrUpdateClusterQueue("b", QueueingStrategy::kBestEffortFIFO, "c", true);
  // a borrows b's 4 cores until 10 min; b's pending workload reclaims
  // nothing (reclaimWithinCohort Never) and waits for the borrower to end.
  ASSERT_TRUE(snap_->AddWorkload(WorkloadBuilder(names_, "borrower").Request("cpu", "8").Admitted("a", "f", T(0)).Obj()).ok());
  ASSERT_TRUE(queues_.AddOrUpdateWorkload(WorkloadBuilder(names_, "own").Request("cpu", "4").Queue("b").Created(T(1)).Obj(), T(1)));
  run_times_["borrower"] = Bound(minutes(10));
  const EstimateResult r = Estimate(T(60));
  const StartEstimate& e = r.by_uid.at("default/own");
  EXPECT_EQ(e.start, T(600));
  EXPECT_EQ(e.after, "default/borrower");
}

TEST_F(StartTimeEstimatorTest, TheLiveStateIsNotTouched) {
  Setup();
  Running("train", "4", T(0));
  Pending("next", "4", T(1));
  run_times_["train"] = Bound(minutes(10));
  (void)Estimate(T(10));
  EXPECT_TRUE(snap_->FindWorkload("default/train"));
  EXPECT_TRUE(queues_.Contains("default/next"));
  EXPECT_FALSE(snap_->FindWorkload("default/next"));
}

// The live scheduling cycle computes without the controller's lock, its heads in
// flight (QueueManager step 2): a replay of the queues meanwhile estimates them too,
// in their place, and leaves them in flight in the live queues.
TEST_F(StartTimeEstimatorTest, TheHeadsOfTheLiveCycleInFlightAreEstimatedInTheirPlace) {
  Setup();
  Running("train", "4", T(0));
  Pending("first", "4", T(1));
  Pending("second", "4", T(2));
  run_times_["train"] = Bound(minutes(10));
  run_times_["first"] = Bound(minutes(10));
  const std::vector<Workload> heads = queues_.Heads();
  ASSERT_EQ(heads.size(), 1u);
  ASSERT_EQ(heads[0].name, "first");
  const EstimateResult r = Estimate(T(10));
  ASSERT_TRUE(r.by_uid.count("default/first")) << "the head in flight is pending too";
  EXPECT_EQ(r.by_uid.at("default/first").start, T(600));
  ASSERT_TRUE(r.by_uid.count("default/second"));
  EXPECT_EQ(r.by_uid.at("default/second").start, T(1200)) << "behind the head, not before it";
  EXPECT_NE(queues_.InFlight("default/first"), nullptr) << "the live queues are not touched";
}

TEST_F(StartTimeEstimatorTest, AHeadInFlightWhoseBackoffRunsStartsNoEarlierThanItsEnd) {
  Setup();
  Pending("first", "4", T(1));
  const std::vector<Workload> heads = queues_.Heads();
  ASSERT_EQ(heads.size(), 1u);
  // Backed off while the live cycle ran: its update reaches the head in flight.
  Workload backed_off = heads[0];
  backed_off.requeue_at = T(300);
  ASSERT_TRUE(queues_.AddOrUpdateWorkload(backed_off, T(10)));
  const EstimateResult r = Estimate(T(10));
  ASSERT_TRUE(r.by_uid.count("default/first"));
  EXPECT_EQ(r.by_uid.at("default/first").start, T(300)) << "not at once: its backoff runs until 300 s";
}

TEST_F(StartTimeEstimatorTest, TheCycleLimitStopsTheReplay) {
  TwentyOneMinuteRuns();
  EstimateOptions opts;
  opts.max_cycles = 5;
  const EstimateResult r = EstimateStartTimes(*snap_, queues_, [this](const Workload& w) { return run_times_.at(w.name); },
                                              T(0), opts);
  EXPECT_TRUE(r.hit_limit);
  EXPECT_LE(r.cycles, 5);
  EXPECT_LT(r.by_uid.size(), 20u);
  // Without the limit all twenty are estimated, one a minute.
  const EstimateResult all = Estimate(T(0));
  ASSERT_EQ(all.by_uid.size(), 20u);
  EXPECT_EQ(all.by_uid.at("default/w-19").start, T(19 * 60));
}

TEST_F(StartTimeEstimatorTest, TheHeadLimitStopsTheReplayOfTheTree) {
  TwentyOneMinuteRuns();
  EstimateOptions opts;
  opts.max_heads = 5;
  const EstimateResult r = EstimateStartTimes(
      *snap_, queues_, [this](const Workload& w) { return run_times_.at(w.name); }, T(0), opts);
  EXPECT_FALSE(r.hit_limit);  // the tree's limit, not the pass's
  EXPECT_EQ(r.limited_trees, 1);
  EXPECT_EQ(r.heads, 5);  // one ClusterQueue: one head per cycle
  // The ones reached are right (w-i at i minutes); the others are marked limited.
  ASSERT_FALSE(r.by_uid.empty());
  EXPECT_LT(r.by_uid.size(), 20u);
  for (const auto& [uid, e] : r.by_uid) EXPECT_EQ(e.start, T(60 * std::stoi(uid.substr(uid.find('-') + 1)))) << uid;
  EXPECT_EQ(r.by_uid.size() + r.unknown.size(), 20u);
  for (const auto& [uid, b] : r.unknown) EXPECT_TRUE(b->limited) << uid;
  const EstimateResult all = Estimate(T(0));
  EXPECT_FALSE(all.hit_limit);
  EXPECT_EQ(all.limited_trees, 0);
  EXPECT_EQ(all.by_uid.size(), 20u);
  EXPECT_GE(all.heads, 20);
}

// A deep backlog in one cohort tree does not take the estimates of another
// tree's workloads away.
TEST_F(StartTimeEstimatorTest, TheHeadLimitStopsOnlyTheTreeThatReachesIt) {
  TwentyOneMinuteRuns();  // ClusterQueue "cq"
  cqs_.push_back(ClusterQueueBuilder(names_, "small").Group({FlavorQuotasBuilder("f").Resource("cpu", "1")}).Obj());
  snap_.emplace(names_, std::vector<ResourceFlavor>{FlavorBuilder("f").Obj()}, cqs_, std::vector<Cohort>{});
  queues_.AddOrUpdateClusterQueue("small", QueueingStrategy::kBestEffortFIFO, "", true);
  ASSERT_TRUE(
      snap_->AddWorkload(WorkloadBuilder(names_, "busy").Request("cpu", "1").Admitted("small", "f", T(0)).Obj()).ok());
  ASSERT_TRUE(queues_.AddOrUpdateWorkload(
      WorkloadBuilder(names_, "next").Request("cpu", "1").Queue("small").Created(T(0)).Obj(), T(0)));
  run_times_["busy"] = Bound(minutes(30));
  run_times_["next"] = Bound(minutes(1));
  EstimateOptions opts;
  opts.max_heads = 5;
  const EstimateResult r = EstimateStartTimes(
      *snap_, queues_, [this](const Workload& w) { return run_times_.at(w.name); }, T(0), opts);
  EXPECT_EQ(r.limited_trees, 1);
  ASSERT_TRUE(r.by_uid.count("default/next"));
  EXPECT_EQ(r.by_uid.at("default/next").start, T(30 * 60));
  EXPECT_EQ(r.by_uid.at("default/next").after, "default/busy");
  ASSERT_TRUE(r.unknown.count("default/w-19"));
  EXPECT_TRUE(r.unknown.at("default/w-19")->limited);
}

// An end retries the inadmissible workloads of its own cohort tree, which
// includes the ClusterQueues that borrow what it frees; other trees' ends do
// not let them in.
TEST_F(StartTimeEstimatorTest, AnEndLetsInTheWorkloadsOfItsCohortTree) {
  // Tree "c": "lender" (2 cpu) and "borrower" (none of its own); ClusterQueue
  // "alone" (1 cpu) in no cohort.
  cqs_ = {
      ClusterQueueBuilder(names_, "lender").Cohort("c").Group({FlavorQuotasBuilder("f").Resource("cpu", "2")}).Obj(),
      ClusterQueueBuilder(names_, "borrower").Cohort("c").Group({FlavorQuotasBuilder("f").Resource("cpu", "0")}).Obj(),
      ClusterQueueBuilder(names_, "alone").Group({FlavorQuotasBuilder("f").Resource("cpu", "1")}).Obj()};
  snap_.emplace(names_, std::vector<ResourceFlavor>{FlavorBuilder("f").Obj()}, cqs_, std::vector<Cohort>{});
  queues_.AddOrUpdateClusterQueue("lender", QueueingStrategy::kBestEffortFIFO, "c", true);
  queues_.AddOrUpdateClusterQueue("borrower", QueueingStrategy::kBestEffortFIFO, "c", true);
  queues_.AddOrUpdateClusterQueue("alone", QueueingStrategy::kBestEffortFIFO, "", true);
  ASSERT_TRUE(
      snap_->AddWorkload(WorkloadBuilder(names_, "lent").Request("cpu", "2").Admitted("lender", "f", T(0)).Obj()).ok());
  ASSERT_TRUE(
      snap_->AddWorkload(WorkloadBuilder(names_, "solo").Request("cpu", "1").Admitted("alone", "f", T(0)).Obj()).ok());
  auto pending = [&](const std::string& name, const std::string& cq, const std::string& cpu, Time created) {
    ASSERT_TRUE(queues_.AddOrUpdateWorkload(
        WorkloadBuilder(names_, name).Request("cpu", cpu).Queue(cq).Created(created).Obj(), created));
  };
  pending("borrow", "borrower", "2", T(1));
  pending("after-solo", "alone", "1", T(2));
  run_times_["lent"] = Bound(minutes(10));
  run_times_["solo"] = Bound(minutes(3));
  run_times_["borrow"] = Bound(minutes(1));
  run_times_["after-solo"] = Bound(minutes(1));
  const EstimateResult r = Estimate(T(0));
  ASSERT_EQ(r.by_uid.size(), 2u);
  // "solo" ends first (3 min): only "alone" is retried; "borrow" waits for
  // "lent" (10 min), whose end lets it borrow the lender's 2 cpu.
  EXPECT_EQ(r.by_uid.at("default/after-solo").start, T(3 * 60));
  EXPECT_EQ(r.by_uid.at("default/after-solo").after, "default/solo");
  EXPECT_EQ(r.by_uid.at("default/borrow").start, T(10 * 60));
  EXPECT_EQ(r.by_uid.at("default/borrow").after, "default/lent");
  EXPECT_EQ(r.events, 3);  // the ends of solo (3 min), after-solo (4 min) and lent (10 min)
}

}  // namespace
}  // namespace berth::admission
