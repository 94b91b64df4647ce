// Admission Fair Sharing: the decay math and the ledger (Kueue's
// pkg/util/admissionfairsharing, localqueue_controller_test.go and
// workload_controller_test.go TestUpdateAfsConsumedUsage cases), and the
// within-ClusterQueue order by LocalQueue usage (pkg/cache/queue/cluster_queue.go).
#include "admission/admission_fair_sharing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "admission/queue_manager.h"
#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using std::chrono::minutes;
using testing::T;
using testing::WorkloadBuilder;

AdmissionFairSharingConfig Config(Duration half_life, Duration interval) {
  AdmissionFairSharingConfig c;
  c.enabled = true;
  c.usage_half_life_time = half_life;
  c.usage_sampling_interval = interval;
  return c;
}

TEST(AdmissionFairSharingTest, AlphaRate) {
  EXPECT_DOUBLE_EQ(AfsAlphaRate(300, 300), 0.5);
  EXPECT_DOUBLE_EQ(AfsAlphaRate(600, 300), 0.75);
  EXPECT_DOUBLE_EQ(AfsAlphaRate(0, 300), 0.0);
  EXPECT_DOUBLE_EQ(AfsAlphaRate(300, 0), 0.0);  // half-life 0: no decay term
}

TEST(AdmissionFairSharingTest, DecayedConsumedMovesHalfWayPerHalfLife) {
  // Kueue's "decaying usage sums the previous state and running workloads":
  // 8 cpu consumed, 4 cpu admitted, one half-life later: 6 cpu.
  EXPECT_EQ(DecayedConsumed({{"cpu", 8000}}, {{"cpu", 4000}}, 300, 300), (UsageAmounts{{"cpu", 6000}}));
  // "sums the usage from different flavors and resources": 8 cpu / 16 GPU
  // consumed, 4 cpu / 4 GPU admitted: 6 cpu / 10 GPU.
  EXPECT_EQ(DecayedConsumed({{"cpu", 8000}, {"GPU", 16000}}, {{"cpu", 4000}, {"GPU", 4000}}, 300, 300),
            (UsageAmounts{{"GPU", 10000}, {"cpu", 6000}}));
  // Two half-lives with nothing admitted: a quarter left.
  EXPECT_EQ(DecayedConsumed({{"cpu", 8000}}, {}, 600, 300), (UsageAmounts{{"cpu", 2000}}));
  // A negative elapsed time (a clock step back) keeps the old usage.
  EXPECT_EQ(DecayedConsumed({{"cpu", 8000}}, {{"cpu", 4000}}, -60, 300), (UsageAmounts{{"cpu", 8000}}));
}

TEST(AdmissionFairSharingTest, EntryPenaltyIsAlphaOfTheSamplingInterval) {
  // halfLifeTime == samplingInterval: half the request (Kueue's
  // TestUpdateAfsConsumedUsage: a 4 cpu workload, a 2 cpu penalty).
  EXPECT_EQ(EntryPenalty({{"cpu", 4000}}, Config(minutes(5), minutes(5))), (UsageAmounts{{"cpu", 2000}}));
  // A long half-life still gives a positive penalty.
  const UsageAmounts p = EntryPenalty({{"cpu", 2000}, {"nvidia.com/gpu", 1000}}, Config(minutes(168 * 60), minutes(5)));
  EXPECT_GT(p.at("cpu"), 0);
  EXPECT_GT(p.at("nvidia.com/gpu"), 0);
  // Half-life 0: no penalty.
  EXPECT_EQ(EntryPenalty({{"cpu", 4000}}, Config(Duration::zero(), minutes(5))), (UsageAmounts{{"cpu", 0}}));
}

TEST(AdmissionFairSharingTest, LocalQueueUsageWeighsResourcesAndDividesByWeight) {
  const UsageAmounts consumed = {{"cpu", 4000}, {"memory", 2000}};
  EXPECT_DOUBLE_EQ(LocalQueueUsage(consumed, 1, {}), 6.0);
  EXPECT_DOUBLE_EQ(LocalQueueUsage(consumed, 1, {{"cpu", 2.0}}), 10.0);
  EXPECT_DOUBLE_EQ(LocalQueueUsage(consumed, 2, {}), 3.0);  // weight 2 halves it
  EXPECT_DOUBLE_EQ(LocalQueueUsage(consumed, 1, {{"memory", 0}}), 4.0);
  EXPECT_EQ(LocalQueueUsage(consumed, 0, {}), std::numeric_limits<double>::infinity());
}

// Never NaN, whatever the weights: ∞/∞ (an infinite LocalQueue weight over an infinite
// resource weight) orders last, as a weight ≤ 0 does, and so does a NaN handed to the queue.
TEST(AdmissionFairSharingTest, UsageIsNeverNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(LocalQueueUsage({{"memory", 1000}}, inf, {{"memory", inf}}), inf);
  EXPECT_EQ(LocalQueueUsage({{"cpu", 1000}}, inf, {}), 0);
  EXPECT_EQ(LocalQueueUsage({{"cpu", 1000}}, 0, {}), inf);
  EXPECT_EQ(LocalQueueUsage({{"cpu", 1000}}, -1, {}), inf);
}

TEST(AdmissionFairSharingTest, LedgerSamplesSeedsAndSettles) {
  const AdmissionFairSharingConfig cfg = Config(minutes(5), minutes(5));
  AfsUsageLedger ledger;
  EXPECT_EQ(ledger.Get("ns/lq"), nullptr);
  EXPECT_FALSE(ledger.Seed("ns/lq", {{"cpu", 8000}}, T(0)));
  EXPECT_TRUE(ledger.Seed("ns/lq", {{"cpu", 1}}, T(10)));  // exists: unchanged
  EXPECT_EQ(ledger.Get("ns/lq")->consumed, (UsageAmounts{{"cpu", 8000}}));
  const auto& e = ledger.Sample("ns/lq", {{"cpu", 4000}}, T(300), cfg);
  EXPECT_EQ(e.consumed, (UsageAmounts{{"cpu", 6000}}));
  EXPECT_EQ(e.last_update, T(300));
  // Settlement at the same instant: no decay, the 2 cpu penalty folded in.
  EXPECT_EQ(ledger.Settle("ns/lq", {{"cpu", 8000}}, {{"cpu", 2000}}, T(300), cfg).consumed,
            (UsageAmounts{{"cpu", 8000}}));
  // A settlement before the last update (a clock step back) decays nothing
  // and keeps the later timestamp.
  const auto& s = ledger.Settle("ns/lq", {{"cpu", 0}}, {{"cpu", 2000}}, T(200), cfg);
  EXPECT_EQ(s.consumed, (UsageAmounts{{"cpu", 10000}}));
  EXPECT_EQ(s.last_update, T(300));
  // A settlement on a LocalQueue never sampled: the penalty alone.
  EXPECT_EQ(ledger.Settle("ns/new", {{"cpu", 4000}}, {{"cpu", 2000}}, T(50), cfg).consumed,
            (UsageAmounts{{"cpu", 2000}}));
  // Half-life 0: a sample resets the usage.
  EXPECT_TRUE(ledger.Sample("ns/lq", {{"cpu", 4000}}, T(900), Config(Duration::zero(), minutes(5))).consumed.empty());
  ledger.Forget("ns/lq");
  EXPECT_EQ(ledger.Get("ns/lq"), nullptr);
}

class AdmissionFairSharingOrderTest : public ::testing::Test {
 protected:
  ResourceNames names;
  QueueManager q;
  Workload W(const std::string& name, const std::string& lq, int prio = 0, double created = 0) {
    Workload w = WorkloadBuilder(names, name).Queue("cq").Priority(prio).Created(T(created)).Request("cpu", "1").Obj();
    w.namespace_name = "ns";
    w.queue_name = lq;
    return w;
  }
  std::vector<std::string> Order() {
    std::vector<std::string> out;
    for (const Workload* w : q.Pending("cq")) out.push_back(w->name);
    return out;
  }
  void Flood() {
    q.AddOrUpdateClusterQueue("cq", QueueingStrategy::kBestEffortFIFO, "", true);
    q.AddOrUpdateWorkload(W("a1", "team-a", 0, 1), T());
    q.AddOrUpdateWorkload(W("a2", "team-a", 0, 2), T());
    q.AddOrUpdateWorkload(W("b1", "team-b", 0, 3), T());
  }
};

TEST_F(AdmissionFairSharingOrderTest, HeavyLocalQueueGoesAfterTheOther) {
  Flood();
  q.SetAdmissionFairSharing("cq", true);
  q.SetLocalQueueUsage("ns/team-a", 8.0);
  q.SetLocalQueueUsage("ns/team-b", 1.0);
  EXPECT_EQ(Order(), (std::vector<std::string>{"b1", "a1", "a2"}));
  auto heads = q.Heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].name, "b1");
  // The usage moves: team-b becomes the heavier one, team-a's go first.
  q.SetLocalQueueUsage("ns/team-b", 9.0);
  q.RequeueWorkload(heads[0], RequeueReason::kFailedAfterNomination, T());
  EXPECT_EQ(Order(), (std::vector<std::string>{"a1", "a2", "b1"}));
}

TEST_F(AdmissionFairSharingOrderTest, UsageComesBeforePriority) {
  Flood();
  q.AddOrUpdateWorkload(W("a-high", "team-a", 100, 0), T());
  q.SetAdmissionFairSharing("cq", true);
  q.SetLocalQueueUsage("ns/team-a", 2.0);
  EXPECT_EQ(Order(), (std::vector<std::string>{"b1", "a-high", "a1", "a2"}));
}

TEST_F(AdmissionFairSharingOrderTest, ANaNUsageGoesLastAndKeepsEveryWorkloadQueued) {
  Flood();
  q.SetAdmissionFairSharing("cq", true);
  q.SetLocalQueueUsage("ns/team-a", std::nan(""));
  q.SetLocalQueueUsage("ns/team-b", 1.0);
  EXPECT_EQ(Order(), (std::vector<std::string>{"b1", "a1", "a2"}));
  EXPECT_EQ(q.ActiveCount("cq"), 3u);
}

TEST_F(AdmissionFairSharingOrderTest, WeightTwoHalvesTheUsage) {
  Flood();
  q.SetAdmissionFairSharing("cq", true);
  // team-a consumed 8 with weight 2 (usage 4); team-b consumed 6 with weight 1.
  q.SetLocalQueueUsage("ns/team-a", LocalQueueUsage({{"cpu", 8000}}, 2, {}));
  q.SetLocalQueueUsage("ns/team-b", LocalQueueUsage({{"cpu", 6000}}, 1, {}));
  EXPECT_EQ(Order(), (std::vector<std::string>{"a1", "a2", "b1"}));
}

TEST_F(AdmissionFairSharingOrderTest, OffKeepsTheUsualOrderAndInadmissibleAreReordered) {
  Flood();
  q.SetLocalQueueUsage("ns/team-a", 8.0);
  EXPECT_EQ(Order(), (std::vector<std::string>{"a1", "a2", "b1"}));  // ClusterQueue without AFS
  q.SetAdmissionFairSharing("cq", true);
  EXPECT_EQ(Order(), (std::vector<std::string>{"b1", "a1", "a2"}));
  // An inadmissible workload keeps its set through a usage change.
  auto heads = q.Heads();
  ASSERT_EQ(heads[0].name, "b1");
  q.RequeueWorkload(heads[0], RequeueReason::kGeneric, T());
  ASSERT_TRUE(q.IsInadmissible(heads[0].uid));
  q.SetLocalQueueUsage("ns/team-b", 20.0);
  EXPECT_TRUE(q.IsInadmissible(heads[0].uid));
  EXPECT_EQ(q.ActiveCount("cq"), 2u);
  q.ForgetLocalQueueUsage("ns/team-a");
  q.SetAdmissionFairSharing("cq", false);
  EXPECT_TRUE(q.DeleteWorkload(heads[0].uid));
  EXPECT_EQ(Order(), (std::vector<std::string>{"a1", "a2"}));
}

}  // namespace
}  // namespace berth::admission
