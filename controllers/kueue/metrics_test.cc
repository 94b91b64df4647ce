// KueueMetrics: each event method moves exactly the series Kueue's metric of
// that name would, with Kueue's labels and buckets; the state gauges follow
// the reported state (series removed when no longer reported).
#include "controllers/kueue/metrics.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

#include "admission/testing/builders.h"
#include "controllers/kueue/decoder.h"
#include "tests/testing/prometheus_values.h"

namespace berth::controllers::kueue {
namespace {

using berth::testing::FindSeries;
using berth::testing::HistogramCount;
using berth::testing::HistogramSum;
using berth::testing::MetricValue;
using std::chrono::seconds;

const LocalQueueKey kTeamA{"team-a", "user-queue"};
const LocalQueueKey kTeamB{"team-b", "user-queue"};
const std::map<std::string, std::string> kTeamALabels = {{"namespace", "team-a"}, {"name", "user-queue"}};

class KueueMetricsTest : public ::testing::Test {
 protected:
  prometheus::Registry registry_;
  KueueMetrics metrics_{registry_};
};

TEST_F(KueueMetricsTest, AdmissionCountsBothCountersAndWaitHistogramsWithKueueBuckets) {
  metrics_.WorkloadAdmitted("cq", {"team", "org"}, kTeamA, "low", seconds(3));
  metrics_.WorkloadAdmitted("cq", {"team", "org"}, kTeamA, "low", seconds(40));
  metrics_.WorkloadAdmitted("cq", {"team", "org"}, kTeamB, "high", seconds(0));
  const std::map<std::string, std::string> low = {{"cluster_queue", "cq"}, {"priority_class", "low"}};
  EXPECT_EQ(MetricValue(registry_, "kueue_quota_reserved_workloads_total", low), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_admitted_workloads_total", low), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_admitted_workloads_total", {{"priority_class", "high"}}), 1);
  EXPECT_EQ(HistogramCount(registry_, "kueue_quota_reserved_wait_time_seconds", low), 2u);
  EXPECT_EQ(HistogramSum(registry_, "kueue_quota_reserved_wait_time_seconds", low), 43);
  EXPECT_EQ(HistogramSum(registry_, "kueue_admission_wait_time_seconds", low), 43);
  EXPECT_EQ(HistogramSum(registry_, "kueue_admission_checks_wait_time_seconds", low), 0);
  EXPECT_EQ(MetricValue(registry_, "kueue_admitted_workloads_total", {{"replica_role", "standalone"}}), 1)
      << "every Kueue metric carries replica_role";

  // Buckets: Kueue's generateExponentialBuckets(14) = 1, 2.5, 5, ..., 2.5*2^12;
  // admission_wait_time_seconds has 16.
  auto reserved = FindSeries(registry_, "kueue_quota_reserved_wait_time_seconds", low);
  ASSERT_TRUE(reserved);
  ASSERT_EQ(reserved->histogram.bucket.size(), 15u);  // 14 bounds + Inf
  EXPECT_EQ(reserved->histogram.bucket[0].upper_bound, 1);
  EXPECT_EQ(reserved->histogram.bucket[1].upper_bound, 2.5);
  EXPECT_EQ(reserved->histogram.bucket[13].upper_bound, 2.5 * 4096);
  EXPECT_EQ(reserved->histogram.bucket[1].cumulative_count, 0u);  // 3 s is above 2.5
  EXPECT_EQ(reserved->histogram.bucket[2].cumulative_count, 1u);  // ... and within 5
  EXPECT_EQ(reserved->histogram.bucket[5].cumulative_count, 2u);  // 40 s within 40
  auto admission = FindSeries(registry_, "kueue_admission_wait_time_seconds", low);
  ASSERT_TRUE(admission);
  EXPECT_EQ(admission->histogram.bucket.size(), 17u);

  // The LocalQueue counterparts, labelled by the workload's LocalQueue.
  std::map<std::string, std::string> team_a_low = kTeamALabels;
  team_a_low["priority_class"] = "low";
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_quota_reserved_workloads_total", team_a_low), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_admitted_workloads_total", team_a_low), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_admitted_workloads_total",
                        {{"namespace", "team-b"}, {"name", "user-queue"}, {"priority_class", "high"}}),
            1);
  EXPECT_EQ(HistogramSum(registry_, "kueue_local_queue_quota_reserved_wait_time_seconds", team_a_low), 43);
  EXPECT_EQ(HistogramSum(registry_, "kueue_local_queue_admission_wait_time_seconds", team_a_low), 43);
  EXPECT_EQ(HistogramCount(registry_, "kueue_local_queue_admission_checks_wait_time_seconds", team_a_low), 2u);
  auto lq_admission = FindSeries(registry_, "kueue_local_queue_admission_wait_time_seconds", team_a_low);
  ASSERT_TRUE(lq_admission);
  EXPECT_EQ(lq_admission->histogram.bucket.size(), 17u);
  EXPECT_FALSE(MetricValue(registry_, "kueue_local_queue_admitted_workloads_total", {{"cluster_queue", "cq"}}))
      << "LocalQueue series carry no cluster_queue label";

  // Each ancestor Cohort counts the admission in its subtree.
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_subtree_admitted_workloads_total",
                        {{"cohort", "team"}, {"priority_class", "low"}}),
            2);
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_subtree_admitted_workloads_total",
                        {{"cohort", "org"}, {"priority_class", "high"}}),
            1);
}

// The subtree totals of each Cohort from a snapshot: quota summed over the
// subtree (the Cohort's own quota included), reservations of every
// ClusterQueue below it; zero pairs are not reported (Kueue clears them).
TEST_F(KueueMetricsTest, CohortSubtreeGaugesFromTheSnapshot) {
  using namespace admission::testing;
  admission::ResourceNames names;
  admission::Snapshot snap(
      names, {FlavorBuilder("f").Obj(), FlavorBuilder("spot").Obj()},
      {ClusterQueueBuilder(names, "a").Cohort("team").Group({FlavorQuotasBuilder("f").Resource("cpu", "4")}).Obj(),
       ClusterQueueBuilder(names, "b").Cohort("team").Group({FlavorQuotasBuilder("f").Resource("cpu", "2")}).Obj(),
       ClusterQueueBuilder(names, "c").Cohort("org").Group({FlavorQuotasBuilder("spot").Resource("cpu", "0")}).Obj()},
      {CohortBuilder(names, "org").Group({FlavorQuotasBuilder("f").Resource("cpu", "10")}).Obj(),
       CohortBuilder(names, "team").Parent("org").Obj(), CohortBuilder(names, "empty").Obj()});
  ASSERT_TRUE(snap.AddWorkload(WorkloadBuilder(names, "x").Request("cpu", "3").Admitted("a", "f").Obj()).ok());
  ASSERT_TRUE(snap.AddWorkload(WorkloadBuilder(names, "y").Request("cpu", "1500m").Admitted("b", "f").Obj()).ok());

  const CohortMetrics team = CohortMetricsFromSnapshot(snap, snap.CohortIndex("team"), 2);
  EXPECT_EQ(team.parent_cohort, "org");
  EXPECT_EQ(team.root_cohort, "org");
  ASSERT_EQ(team.resources.size(), 1u);
  EXPECT_EQ(team.resources[0].flavor, "f");
  EXPECT_EQ(team.resources[0].resource, "cpu");
  EXPECT_EQ(team.resources[0].subtree_quota, 6000);
  EXPECT_EQ(team.resources[0].subtree_reservation, 4500);
  const CohortMetrics org = CohortMetricsFromSnapshot(snap, snap.CohortIndex("org"), 2);
  EXPECT_EQ(org.parent_cohort, "");
  EXPECT_EQ(org.root_cohort, "org");
  ASSERT_EQ(org.resources.size(), 1u) << "spot has neither quota nor reservations";
  EXPECT_EQ(org.resources[0].subtree_quota, 16000);
  EXPECT_EQ(org.resources[0].subtree_reservation, 4500);
  EXPECT_EQ(snap.CohortIndex("a"), -1) << "a ClusterQueue is no Cohort";
  EXPECT_EQ(snap.CohortIndex("nowhere"), -1);
  EXPECT_TRUE(CohortMetricsFromSnapshot(snap, snap.CohortIndex("empty"), 0).resources.empty());

  metrics_.ReportCohort(team);
  metrics_.ReportCohort(org);
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_info", {{"cohort", "team"}, {"parent_cohort", "org"}, {"root_cohort", "org"}}),
            1);
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_subtree_quota", {{"cohort", "org"}, {"flavor", "f"}, {"resource", "cpu"}}),
            16);
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_subtree_resource_reservations",
                        {{"cohort", "team"}, {"flavor", "f"}, {"resource", "cpu"}}),
            4.5);
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_subtree_admitted_active_workloads", {{"cohort", "team"}}), 2);

  // The reservations leave: the series goes, the quota stays; team moves to
  // the root: its info follows.
  CohortMetrics idle = team;
  idle.resources[0].subtree_reservation = 0;
  idle.parent_cohort = "";
  idle.root_cohort = "team";
  idle.admitted_workloads = 0;
  metrics_.ReportCohort(idle);
  EXPECT_FALSE(MetricValue(registry_, "kueue_cohort_subtree_resource_reservations", {{"cohort", "team"}}));
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_subtree_quota", {{"cohort", "team"}}), 6);
  EXPECT_FALSE(MetricValue(registry_, "kueue_cohort_info", {{"cohort", "team"}, {"parent_cohort", "org"}}));
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_info", {{"cohort", "team"}, {"root_cohort", "team"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_subtree_admitted_active_workloads", {{"cohort", "team"}}), 0);

  metrics_.ReportCohortWeightedShare("team", 0.5);
  metrics_.ForgetCohort("team");
  for (const char* name : {"kueue_cohort_info", "kueue_cohort_subtree_quota", "kueue_cohort_subtree_admitted_active_workloads",
                           "kueue_cohort_weighted_share"}) {
    EXPECT_FALSE(MetricValue(registry_, name, {{"cohort", "team"}})) << name;
  }
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_subtree_quota", {{"cohort", "org"}}), 16) << "another Cohort's series stay";
}

TEST_F(KueueMetricsTest, AdmissionAttemptResultIsSuccessWhenAnythingWasAdmitted) {
  metrics_.AdmissionAttempt(true, std::chrono::milliseconds(20));
  metrics_.AdmissionAttempt(false, std::chrono::milliseconds(5));
  metrics_.AdmissionAttempt(false, std::chrono::milliseconds(5));
  EXPECT_EQ(MetricValue(registry_, "kueue_admission_attempts_total", {{"result", "success"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_admission_attempts_total", {{"result", "inadmissible"}}), 2);
  EXPECT_DOUBLE_EQ(*HistogramSum(registry_, "kueue_admission_attempt_duration_seconds", {{"result", "success"}}), 0.02);
}

TEST_F(KueueMetricsTest, EvictionAndPreemptionLabels) {
  metrics_.WorkloadEvicted("cq", kTeamA, "Preempted", "", "low");
  metrics_.WorkloadPreempted("cq-other", "InCohortReclamation");
  metrics_.WorkloadEvicted("cq", kTeamB, "ClusterQueueStopped", "", "");
  EXPECT_EQ(MetricValue(registry_, "kueue_evicted_workloads_total",
                        {{"cluster_queue", "cq"}, {"reason", "Preempted"}, {"underlying_cause", ""},
                         {"priority_class", "low"}}),
            1);
  EXPECT_EQ(MetricValue(registry_, "kueue_evicted_workloads_total", {{"reason", "ClusterQueueStopped"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_preempted_workloads_total",
                        {{"preempting_cluster_queue", "cq-other"}, {"reason", "InCohortReclamation"}}),
            1);
  EXPECT_FALSE(MetricValue(registry_, "kueue_preempted_workloads_total", {{"reason", "InClusterQueue"}}));
  std::map<std::string, std::string> evicted = kTeamALabels;
  evicted.insert({{"reason", "Preempted"}, {"underlying_cause", ""}, {"priority_class", "low"}});
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_evicted_workloads_total", evicted), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_evicted_workloads_total",
                        {{"namespace", "team-b"}, {"reason", "ClusterQueueStopped"}}),
            1);
}

TEST_F(KueueMetricsTest, FinishedWorkloadsAndExecutionTime) {
  metrics_.WorkloadFinished("cq", kTeamA, "", seconds(90));
  EXPECT_EQ(MetricValue(registry_, "kueue_finished_workloads_total", {{"cluster_queue", "cq"}}), 1);
  EXPECT_EQ(HistogramSum(registry_, "kueue_execution_time_seconds", {{"cluster_queue", "cq"}}), 90);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_finished_workloads_total", kTeamALabels), 1);
  EXPECT_EQ(HistogramSum(registry_, "kueue_local_queue_execution_time_seconds", kTeamALabels), 90);
}

TEST_F(KueueMetricsTest, ReadyWaitTimesSinceQueuedAndSinceAdmitted) {
  metrics_.WorkloadReady("cq", kTeamA, "high", seconds(70), seconds(12));
  EXPECT_EQ(HistogramSum(registry_, "kueue_ready_wait_time_seconds", {{"priority_class", "high"}}), 70);
  EXPECT_EQ(HistogramSum(registry_, "kueue_admitted_until_ready_wait_time_seconds", {{"priority_class", "high"}}), 12);
  EXPECT_EQ(HistogramSum(registry_, "kueue_local_queue_ready_wait_time_seconds", kTeamALabels), 70);
  EXPECT_EQ(HistogramSum(registry_, "kueue_local_queue_admitted_until_ready_wait_time_seconds", kTeamALabels), 12);
}

// A LocalQueue's gauges, read from its status as LocalQueueStatus writes it, follow
// each report (a flavor no longer in its status loses its series) and all go when
// the LocalQueue is forgotten; another LocalQueue's series are untouched.
TEST_F(KueueMetricsTest, LocalQueueGaugesFollowTheReportedStatusAndDropWhatIsGone) {
  const api::Object status = api::Object::parse(R"({
      "conditions": [{"type": "Active", "status": "True", "reason": "Ready"}],
      "pendingWorkloads": 3, "reservingWorkloads": 2, "admittedWorkloads": 1,
      "flavorsReservation": [
        {"name": "on-demand", "resources": [{"name": "cpu", "total": "3500m"}, {"name": "memory", "total": "1Gi"}]},
        {"name": "spot", "resources": [{"name": "cpu", "total": "2"}]}],
      "flavorsUsage": [
        {"name": "on-demand", "resources": [{"name": "cpu", "total": "1"}, {"name": "memory", "total": "0"}]},
        {"name": "spot", "resources": [{"name": "cpu", "total": "0"}]}]})");
  metrics_.ReportLocalQueue(LocalQueueMetricsFromStatus(kTeamA, status, 2, 1));
  metrics_.ReportLocalQueue(LocalQueueMetricsFromStatus(kTeamB, api::Object::object(), 0, 0));

  auto with = [](std::map<std::string, std::string> extra) {
    extra.insert(kTeamALabels.begin(), kTeamALabels.end());
    return extra;
  };
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_pending_workloads", with({{"status", "active"}})), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_pending_workloads", with({{"status", "inadmissible"}})), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_reserving_active_workloads", kTeamALabels), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_admitted_active_workloads", kTeamALabels), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_status", with({{"active", "True"}})), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_status", with({{"active", "False"}})), 0);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_status", with({{"active", "Unknown"}})), 0);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_resource_reservation",
                        with({{"flavor", "on-demand"}, {"resource", "cpu"}})),
            3.5);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_resource_reservation",
                        with({{"flavor", "on-demand"}, {"resource", "memory"}})),
            1073741824.0)
      << "memory in bytes";
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_resource_usage",
                        with({{"flavor", "on-demand"}, {"resource", "cpu"}})),
            1);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_resource_reservation", with({{"flavor", "spot"}})), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_status", {{"namespace", "team-b"}, {"active", "Unknown"}}), 1)
      << "no Active condition yet";

  // The spot flavor leaves the status: its series go.
  api::Object fewer = status;
  fewer["flavorsReservation"].erase(1);
  fewer["flavorsUsage"].erase(1);
  fewer["conditions"][0]["status"] = "False";
  metrics_.ReportLocalQueue(LocalQueueMetricsFromStatus(kTeamA, fewer, 0, 3));
  EXPECT_FALSE(MetricValue(registry_, "kueue_local_queue_resource_reservation", with({{"flavor", "spot"}})));
  EXPECT_FALSE(MetricValue(registry_, "kueue_local_queue_resource_usage", with({{"flavor", "spot"}})));
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_status", with({{"active", "False"}})), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_pending_workloads", with({{"status", "inadmissible"}})), 3);

  // team-a's LocalQueue is deleted: its gauges go, team-b's stay.
  metrics_.ForgetLocalQueue(kTeamA);
  for (const char* name : {"kueue_local_queue_pending_workloads", "kueue_local_queue_reserving_active_workloads",
                           "kueue_local_queue_admitted_active_workloads", "kueue_local_queue_status",
                           "kueue_local_queue_resource_reservation", "kueue_local_queue_resource_usage"}) {
    EXPECT_FALSE(MetricValue(registry_, name, kTeamALabels)) << name;
  }
  EXPECT_EQ(MetricValue(registry_, "kueue_local_queue_status", {{"namespace", "team-b"}, {"active", "Unknown"}}), 1);
}

TEST(LocalQueueOfTest, IsTheNamespaceAndSpecQueueName) {
  EXPECT_EQ(LocalQueueOf(api::Object::parse(R"({"metadata": {"namespace": "ns"}, "spec": {"queueName": "q"}})")),
            (LocalQueueKey{"ns", "q"}));
  EXPECT_EQ(LocalQueueOf(api::Object::parse(R"({"spec": 3})")), (LocalQueueKey{"", ""}));
}

ClusterQueueMetrics State(ClusterQueueMetricStatus status, std::vector<ClusterQueueResourceMetrics> resources) {
  ClusterQueueMetrics m;
  m.name = "cq";
  m.cohort = "all";
  m.root_cohort = "root";
  m.status = status;
  m.reserving_workloads = 3;
  m.admitted_workloads = 2;
  m.finished_workloads = 1;
  m.resources = std::move(resources);
  return m;
}

TEST_F(KueueMetricsTest, ClusterQueueGaugesFollowTheReportedStateAndDropWhatIsGone) {
  ClusterQueueResourceMetrics cpu{"default", "cpu", 5000, 2000, std::nullopt, 4500, 3500};
  ClusterQueueResourceMetrics mem{"default", "memory", 36LL * 1024 * 1024 * 1024 * 1000, std::nullopt, std::nullopt, 0, 0};
  ClusterQueueResourceMetrics gpu{"a100", "nvidia.com/gpu", 8000, std::nullopt, 4000, 0, 0};
  metrics_.ReportClusterQueue(State(ClusterQueueMetricStatus::kPending, {cpu, mem, gpu}));
  metrics_.ReportPendingWorkloads("cq", 2, 1);

  const std::map<std::string, std::string> cq = {{"cluster_queue", "cq"}};
  EXPECT_EQ(MetricValue(registry_, "kueue_reserving_active_workloads", cq), 3);
  EXPECT_EQ(MetricValue(registry_, "kueue_admitted_active_workloads", cq), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_finished_workloads", cq), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_pending_workloads", {{"status", "active"}}), 2);
  EXPECT_EQ(MetricValue(registry_, "kueue_pending_workloads", {{"status", "inadmissible"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_status", {{"status", "pending"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_status", {{"status", "active"}}), 0);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_status", {{"status", "terminating"}}), 0);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_info",
                        {{"cluster_queue", "cq"}, {"parent_cohort", "all"}, {"root_cohort", "root"}}),
            1);

  const std::map<std::string, std::string> cpu_labels = {
      {"cohort", "all"}, {"cluster_queue", "cq"}, {"flavor", "default"}, {"resource", "cpu"}};
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_nominal_quota", cpu_labels), 5);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_borrowing_limit", cpu_labels), 2);
  EXPECT_FALSE(MetricValue(registry_, "kueue_cluster_queue_lending_limit", cpu_labels)) << "not set: not reported";
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_resource_reservation", cpu_labels), 4.5);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_resource_usage", cpu_labels), 3.5);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_nominal_quota", {{"resource", "memory"}}), 38654705664.0)
      << "memory in bytes";
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_lending_limit", {{"resource", "nvidia.com/gpu"}}), 4);

  // The gpu flavor leaves the spec, the queue becomes active: its series go.
  metrics_.ReportClusterQueue(State(ClusterQueueMetricStatus::kActive, {cpu, mem}));
  EXPECT_FALSE(MetricValue(registry_, "kueue_cluster_queue_nominal_quota", {{"resource", "nvidia.com/gpu"}}));
  EXPECT_FALSE(MetricValue(registry_, "kueue_cluster_queue_lending_limit", {{"resource", "nvidia.com/gpu"}}));
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_nominal_quota", cpu_labels), 5);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_status", {{"status", "active"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_status", {{"status", "pending"}}), 0);

  // The ClusterQueue is deleted: every series goes, gauges and counters.
  metrics_.WorkloadAdmitted("cq", {}, kTeamA, "", seconds(1));
  metrics_.ForgetClusterQueue("cq");
  for (const char* name : {"kueue_reserving_active_workloads", "kueue_pending_workloads", "kueue_cluster_queue_status",
                           "kueue_cluster_queue_info",
                           "kueue_cluster_queue_nominal_quota", "kueue_cluster_queue_resource_usage"}) {
    EXPECT_FALSE(MetricValue(registry_, name, cq)) << name;
  }
  EXPECT_FALSE(MetricValue(registry_, "kueue_admitted_workloads_total", cq));
}

// Fair Sharing: the weighted-share gauges (NaN for a zero-weight borrower of
// a ClusterQueue, as Kueue's clusterqueue reconciler maps +Inf), gone when
// Fair Sharing reports nothing or the ClusterQueue is forgotten.
// A deleted ClusterQueue, LocalQueue or Cohort takes every series labelled with it, counters
// and histograms included (Kueue's ClearClusterQueueMetrics, ClearLocalQueueMetrics): a server
// where queues come and go keeps nothing of the ones that went. Another queue's series stay.
TEST_F(KueueMetricsTest, ForgettingAQueueRemovesItsCountersAndHistogramsToo) {
  auto record = [&](const std::string& cq, const LocalQueueKey& lq, const std::string& cohort) {
    metrics_.WorkloadAdmitted(cq, {cohort}, lq, "low", seconds(3));
    metrics_.WorkloadEvicted(cq, lq, "Preempted", "", "low");
    metrics_.WorkloadPreempted(cq, "InClusterQueue");
    metrics_.WorkloadFinished(cq, lq, "low", seconds(5));
    metrics_.WorkloadReady(cq, lq, "low", seconds(1), seconds(1));
  };
  record("cq", kTeamA, "team");
  record("other", kTeamB, "org");
  // Every series of a name in the registry labelled `label`=`value`.
  auto series_of = [&](const std::string& label, const std::string& value) {
    int n = 0;
    for (const prometheus::MetricFamily& f : registry_.Collect()) {
      for (const prometheus::ClientMetric& m : f.metric) {
        for (const prometheus::ClientMetric::Label& l : m.label) n += l.name == label && l.value == value;
      }
    }
    return n;
  };
  ASSERT_GE(series_of("cluster_queue", "cq"), 10);
  ASSERT_GT(series_of("preempting_cluster_queue", "cq"), 0);
  ASSERT_GT(series_of("namespace", "team-a"), 8);
  ASSERT_GT(series_of("cohort", "team"), 0);
  const int other = series_of("cluster_queue", "other") + series_of("namespace", "team-b") + series_of("cohort", "org");

  metrics_.ForgetClusterQueue("cq");
  EXPECT_EQ(series_of("cluster_queue", "cq"), 0);
  EXPECT_EQ(series_of("preempting_cluster_queue", "cq"), 0);
  metrics_.ForgetLocalQueue(kTeamA);
  EXPECT_EQ(series_of("namespace", "team-a"), 0);
  metrics_.ForgetCohort("team");
  EXPECT_EQ(series_of("cohort", "team"), 0);
  EXPECT_EQ(series_of("cluster_queue", "other") + series_of("namespace", "team-b") + series_of("cohort", "org"), other);
  // Once every queue and cohort is forgotten, nothing is held for any of them, even after a
  // report of "no share" for a cohort already gone (as the Cohort reconcile sends one).
  metrics_.ReportCohortWeightedShare("team", std::nullopt);
  metrics_.ForgetClusterQueue("other");
  metrics_.ForgetLocalQueue(kTeamB);
  metrics_.ForgetCohort("org");
  EXPECT_EQ(metrics_.OwnersHeld(), 0u);
  // A queue created again with the same name counts from zero.
  metrics_.WorkloadAdmitted("cq", {}, kTeamA, "low", seconds(1));
  EXPECT_EQ(MetricValue(registry_, "kueue_admitted_workloads_total", {{"cluster_queue", "cq"}}), 1);
}

TEST_F(KueueMetricsTest, WeightedShareGauges) {
  ClusterQueueMetrics m = State(ClusterQueueMetricStatus::kActive, {});
  m.weighted_share = 333.5;
  metrics_.ReportClusterQueue(m);
  EXPECT_EQ(MetricValue(registry_, "kueue_cluster_queue_weighted_share", {{"cluster_queue", "cq"}, {"cohort", "all"}}),
            333.5);
  m.weighted_share = std::numeric_limits<double>::infinity();
  metrics_.ReportClusterQueue(m);
  auto v = MetricValue(registry_, "kueue_cluster_queue_weighted_share", {{"cluster_queue", "cq"}});
  ASSERT_TRUE(v);
  EXPECT_TRUE(std::isnan(*v));
  m.weighted_share.reset();
  metrics_.ReportClusterQueue(m);
  EXPECT_FALSE(MetricValue(registry_, "kueue_cluster_queue_weighted_share", {{"cluster_queue", "cq"}}));

  metrics_.ReportCohortWeightedShare("all", 50);
  EXPECT_EQ(MetricValue(registry_, "kueue_cohort_weighted_share", {{"cohort", "all"}}), 50);
  metrics_.ReportCohortWeightedShare("all", std::nullopt);
  EXPECT_FALSE(MetricValue(registry_, "kueue_cohort_weighted_share", {{"cohort", "all"}}));
}

TEST(ClusterQueueMetricsFromStatusTest, ReadsCountsAndTotalsInSpecOrder) {
  admission::ResourceNames names;
  const api::Object cq = api::Object::parse(R"({"spec": {"cohortName": "all", "resourceGroups": [
      {"coveredResources": ["cpu", "memory"], "flavors": [
        {"name": "on-demand", "resources": [{"name": "cpu", "nominalQuota": "4", "borrowingLimit": "2"},
                                            {"name": "memory", "nominalQuota": "8Gi"}]},
        {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": "10"}, {"name": "memory", "nominalQuota": "1Gi"}]}]}]}})");
  const api::Object status = api::Object::parse(R"({
      "conditions": [{"type": "Active", "status": "True", "reason": "Ready"}],
      "reservingWorkloads": 2, "admittedWorkloads": 1,
      "flavorsReservation": [
        {"name": "on-demand", "resources": [{"name": "cpu", "total": "3500m"}, {"name": "memory", "total": "1Gi"}]},
        {"name": "spot", "resources": [{"name": "cpu", "total": "2"}, {"name": "memory", "total": "0"}]}],
      "flavorsUsage": [
        {"name": "on-demand", "resources": [{"name": "cpu", "total": "1"}, {"name": "memory", "total": "0"}]},
        {"name": "spot", "resources": [{"name": "cpu", "total": "0"}, {"name": "memory", "total": "0"}]}]})");
  ClusterQueueMetrics m =
      ClusterQueueMetricsFromStatus("cq", DecodeClusterQueue(cq, names), status, false, 4, names);
  EXPECT_EQ(m.cohort, "all");
  EXPECT_EQ(m.status, ClusterQueueMetricStatus::kActive);
  EXPECT_EQ(m.reserving_workloads, 2);
  EXPECT_EQ(m.admitted_workloads, 1);
  EXPECT_EQ(m.finished_workloads, 4);
  ASSERT_EQ(m.resources.size(), 4u);
  EXPECT_EQ(m.resources[0].flavor, "on-demand");
  EXPECT_EQ(m.resources[0].resource, "cpu");
  EXPECT_EQ(m.resources[0].nominal_quota, 4000);
  EXPECT_EQ(m.resources[0].borrowing_limit, 2000);
  EXPECT_EQ(m.resources[0].reservation, 3500);
  EXPECT_EQ(m.resources[0].usage, 1000);
  EXPECT_EQ(m.resources[1].resource, "memory");
  EXPECT_EQ(m.resources[1].reservation, 1024LL * 1024 * 1024 * 1000);
  EXPECT_FALSE(m.resources[1].borrowing_limit);
  EXPECT_EQ(m.resources[2].flavor, "spot");
  EXPECT_EQ(m.resources[2].reservation, 2000);

  EXPECT_EQ(ClusterQueueMetricsFromStatus("cq", DecodeClusterQueue(cq, names), status, true, 0, names).status,
            ClusterQueueMetricStatus::kTerminating);
  api::Object inactive = status;
  inactive["conditions"][0]["status"] = "False";
  EXPECT_EQ(ClusterQueueMetricsFromStatus("cq", DecodeClusterQueue(cq, names), inactive, false, 0, names).status,
            ClusterQueueMetricStatus::kPending);
}

TEST(QueuedWaitTimeTest, SinceCreationOrSinceRequeued) {
  api::Object wl = {{"metadata", {{"creationTimestamp", "2026-01-01T00:00:00Z"}}}};
  Time now{};
  ASSERT_TRUE(ParseRfc3339("2026-01-01T00:01:30Z", &now));
  EXPECT_EQ(QueuedWaitTime(wl, now), seconds(90));
  wl["status"]["conditions"] = api::Object::array(
      {{{"type", "Requeued"}, {"status", "True"}, {"lastTransitionTime", "2026-01-01T00:01:00Z"}}});
  EXPECT_EQ(QueuedWaitTime(wl, now), seconds(30));
}

TEST(NewEvictionsTest, IncreasesOfTheSchedulingStatsCounters) {
  const api::Object before = api::Object::parse(R"({"status": {"schedulingStats": {"evictions": [
      {"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 1}]}}})");
  const api::Object after = api::Object::parse(R"({"status": {"schedulingStats": {"evictions": [
      {"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 2},
      {"reason": "Deactivated", "underlyingCause": "RequeuingLimitExceeded", "count": 1}]}}})");
  std::vector<EvictionIncrease> got = NewEvictions(before, after);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].reason, "Deactivated");
  EXPECT_EQ(got[0].underlying_cause, "RequeuingLimitExceeded");
  EXPECT_EQ(got[0].count, 1);
  EXPECT_EQ(got[1].reason, "PodsReadyTimeout");
  EXPECT_EQ(got[1].count, 1);
  EXPECT_TRUE(NewEvictions(after, after).empty());
  EXPECT_EQ(NewEvictions(api::Object::object(), before).size(), 1u);
}

TEST(PriorityClassNameTest, FromPriorityClassRef) {
  EXPECT_EQ(PriorityClassName({{"spec", {{"priorityClassRef", {{"kind", "WorkloadPriorityClass"}, {"name", "high"}}}}}}),
            "high");
  EXPECT_EQ(PriorityClassName({{"spec", {{"priority", 0}}}}), "");
}

}  // namespace
}  // namespace berth::controllers::kueue
