// Kueue's workload lifecycle steps (workload_lifecycle.h) on hand-written
// Workload JSON at fixed times: PodsReady timeout, recovery timeout, requeue
// backoff, deactivation after backoffLimitCount, reactivation, maximum execution time
// and the past execution time ReleaseQuota accumulates.
#include "controllers/kueue/workload_lifecycle.h"

#include <gtest/gtest.h>

#include "controllers/kueue/workload_status.h"

namespace berth::controllers::kueue {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const Time kT0 = Time(std::chrono::hours(24 * 365 * 56));  // 2026

api::Object AdmittedWorkload(Time admitted_at) {
  api::Object wl = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                    {"kind", "Workload"},
                    {"metadata", {{"name", "wl"}, {"namespace", "team-a"}, {"creationTimestamp", FormatRfc3339(kT0)}}},
                    {"spec", {{"queueName", "lq"}, {"active", true}}},
                    {"status", {{"admission", {{"clusterQueue", "cq"}}}}}};
  SetCondition(&wl, {"QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cq"}, admitted_at);
  SetCondition(&wl, {"Admitted", "True", "Admitted", "The workload is admitted"}, admitted_at);
  return wl;
}

WaitForPodsReadyConfig Config() {
  WaitForPodsReadyConfig c;
  c.enabled = true;
  c.timeout = minutes(5);
  c.recovery_timeout = minutes(2);
  c.backoff_base_seconds = 60;
  c.backoff_max_seconds = 3600;
  return c;
}

std::string Cond(const api::Object& wl, const char* type, const char* field) {
  const api::Object* c = FindCondition(wl, type);
  return c ? c->value(field, "") : "<none>";
}

TEST(WorkloadLifecycle, WaitsForTimeoutThenEvictsWithBackoff) {
  const WaitForPodsReadyConfig cfg = Config();
  api::Object wl = AdmittedWorkload(kT0);

  LifecycleStep early = NextLifecycleStep(wl, cfg, kT0 + minutes(3));
  EXPECT_EQ(early.kind, LifecycleStep::Kind::kNone);
  EXPECT_EQ(early.recheck_after, minutes(2));

  LifecycleStep step = NextLifecycleStep(wl, cfg, kT0 + minutes(5));
  ASSERT_EQ(step.kind, LifecycleStep::Kind::kUpdateStatus);
  EXPECT_EQ(Cond(step.workload, "Evicted", "status"), "True");
  EXPECT_EQ(Cond(step.workload, "Evicted", "reason"), "PodsReadyTimeout");
  EXPECT_EQ(Cond(step.workload, "Evicted", "message"), "Exceeded the PodsReady timeout team-a/wl");
  EXPECT_EQ(step.event_reason, "EvictedDueToPodsReadyTimeout");
  EXPECT_EQ(step.workload["status"]["requeueState"]["count"], 1);
  EXPECT_EQ(step.workload["status"]["requeueState"]["requeueAt"], FormatRfc3339(kT0 + minutes(6)));
  EXPECT_EQ(step.workload["status"]["schedulingStats"]["evictions"],
            api::Object::parse(R"([{"reason": "PodsReadyTimeout", "underlyingCause": "WaitForStart", "count": 1}])"));

  // An evicted workload is not timed out again.
  EXPECT_EQ(NextLifecycleStep(step.workload, cfg, kT0 + minutes(10)).kind, LifecycleStep::Kind::kNone);
}

TEST(WorkloadLifecycle, BackoffFinishesAtRequeueAt) {
  const WaitForPodsReadyConfig cfg = Config();
  api::Object wl = AdmittedWorkload(kT0);
  wl = NextLifecycleStep(wl, cfg, kT0 + minutes(5)).workload;
  // Quota released (pods gone): Requeued=False PodsReadyTimeout, as ReleaseQuota writes.
  wl["status"].erase("admission");
  SetCondition(&wl, {"QuotaReserved", "False", "PendingEvaluation", "x"}, kT0 + minutes(5));
  SetCondition(&wl, {"Admitted", "False", "NoReservation", "The workload has no reservation"}, kT0 + minutes(5));
  SetCondition(&wl, {"Requeued", "False", "PodsReadyTimeout", "x"}, kT0 + minutes(5));

  LifecycleStep wait = NextLifecycleStep(wl, cfg, kT0 + minutes(5) + seconds(20));
  EXPECT_EQ(wait.kind, LifecycleStep::Kind::kNone);
  EXPECT_EQ(wait.recheck_after, seconds(40));

  LifecycleStep done = NextLifecycleStep(wl, cfg, kT0 + minutes(6));
  ASSERT_EQ(done.kind, LifecycleStep::Kind::kUpdateStatus);
  EXPECT_TRUE(done.requeue_inadmissible);
  EXPECT_EQ(Cond(done.workload, "Requeued", "status"), "True");
  EXPECT_EQ(Cond(done.workload, "Requeued", "reason"), "BackoffFinished");
  EXPECT_EQ(Cond(done.workload, "Requeued", "message"), "The workload backoff was finished");
  EXPECT_FALSE(done.workload["status"]["requeueState"].contains("requeueAt"));
  EXPECT_EQ(done.workload["status"]["requeueState"]["count"], 1);  // the count stays
}

TEST(WorkloadLifecycle, SecondTimeoutDoublesTheBackoffAndLimitDeactivates) {
  WaitForPodsReadyConfig cfg = Config();
  cfg.backoff_limit_count = 2;
  api::Object wl = AdmittedWorkload(kT0);
  wl["status"]["requeueState"] = {{"count", 1}};
  LifecycleStep second = NextLifecycleStep(wl, cfg, kT0 + minutes(5));
  EXPECT_EQ(second.workload["status"]["requeueState"]["count"], 2);
  EXPECT_EQ(second.workload["status"]["requeueState"]["requeueAt"], FormatRfc3339(kT0 + minutes(7)));  // 120 s

  wl["status"]["requeueState"] = {{"count", 2}};
  LifecycleStep limit = NextLifecycleStep(wl, cfg, kT0 + minutes(5));
  ASSERT_EQ(limit.kind, LifecycleStep::Kind::kUpdateStatus);
  EXPECT_EQ(Cond(limit.workload, "Evicted", "status"), "<none>");
  EXPECT_EQ(Cond(limit.workload, "DeactivationTarget", "reason"), "RequeuingLimitExceeded");

  LifecycleStep deactivate = NextLifecycleStep(limit.workload, cfg, kT0 + minutes(5));
  ASSERT_EQ(deactivate.kind, LifecycleStep::Kind::kUpdateSpec);
  EXPECT_EQ(deactivate.workload["spec"]["active"], false);

  LifecycleStep evict = NextLifecycleStep(deactivate.workload, cfg, kT0 + minutes(5));
  ASSERT_EQ(evict.kind, LifecycleStep::Kind::kUpdateStatus);
  EXPECT_EQ(Cond(evict.workload, "Evicted", "reason"), "Deactivated");
  EXPECT_EQ(Cond(evict.workload, "Evicted", "message"),
            "The workload is deactivated due to exceeding the maximum number of re-queuing retries");
  EXPECT_EQ(evict.event_reason, "EvictedDueToDeactivated");
  EXPECT_EQ(Cond(evict.workload, "DeactivationTarget", "status"), "<none>");
  EXPECT_FALSE(evict.workload["status"].contains("requeueState"));
  EXPECT_EQ(
      evict.workload["status"]["schedulingStats"]["evictions"],
      api::Object::parse(R"([{"reason": "Deactivated", "underlyingCause": "RequeuingLimitExceeded", "count": 1}])"));
}

// A user's `spec.active: false`: no DeactivationTarget, so no cause; Kueue still writes
// the (required) underlyingCause, empty. Without it the status write was refused forever.
TEST(WorkloadLifecycle, UserDeactivationEvictsWithAnEmptyUnderlyingCause) {
  api::Object wl = AdmittedWorkload(kT0);
  wl["spec"]["active"] = false;
  LifecycleStep evict = NextLifecycleStep(wl, Config(), kT0 + minutes(1));
  ASSERT_EQ(evict.kind, LifecycleStep::Kind::kUpdateStatus);
  EXPECT_EQ(Cond(evict.workload, "Evicted", "reason"), "Deactivated");
  EXPECT_EQ(Cond(evict.workload, "Evicted", "message"), "The workload is deactivated");
  EXPECT_EQ(evict.workload["status"]["schedulingStats"]["evictions"],
            api::Object::parse(R"([{"reason": "Deactivated", "underlyingCause": "", "count": 1}])"));
}

TEST(WorkloadLifecycle, ReactivationSetsRequeued) {
  api::Object wl = AdmittedWorkload(kT0);
  wl["status"].erase("admission");
  SetCondition(&wl, {"QuotaReserved", "False", "PendingEvaluation", "x"}, kT0);
  SetCondition(&wl, {"Requeued", "False", "Deactivated", "x"}, kT0);
  LifecycleStep step = NextLifecycleStep(wl, Config(), kT0 + minutes(1));
  ASSERT_EQ(step.kind, LifecycleStep::Kind::kUpdateStatus);
  EXPECT_EQ(Cond(step.workload, "Requeued", "reason"), "Reactivated");
  EXPECT_EQ(Cond(step.workload, "Requeued", "status"), "True");
}

TEST(WorkloadLifecycle, RecoveryTimeoutCountsFromPodsReadyFalse) {
  const WaitForPodsReadyConfig cfg = Config();
  api::Object wl = AdmittedWorkload(kT0);
  SetCondition(&wl, PodsReadyCondition(wl, true), kT0 + minutes(1));
  EXPECT_EQ(Cond(wl, "PodsReady", "reason"), "Started");
  // Ready: never timed out.
  EXPECT_EQ(NextLifecycleStep(wl, cfg, kT0 + minutes(60)).recheck_after, Duration::zero());

  const Condition lost = PodsReadyCondition(wl, false);
  EXPECT_EQ(lost.reason, "WaitForRecovery");
  EXPECT_EQ(lost.message, "At least one pod has failed, waiting for recovery");
  SetCondition(&wl, lost, kT0 + minutes(10));
  EXPECT_EQ(NextLifecycleStep(wl, cfg, kT0 + minutes(11)).recheck_after, minutes(1));
  LifecycleStep step = NextLifecycleStep(wl, cfg, kT0 + minutes(12));
  EXPECT_EQ(Cond(step.workload, "Evicted", "reason"), "PodsReadyTimeout");
  EXPECT_EQ(step.workload["status"]["schedulingStats"]["evictions"][0]["underlyingCause"], "WaitForRecovery");

  EXPECT_EQ(PodsReadyCondition(wl, true).reason, "Recovered");
  // Without a recovery timeout a WaitForRecovery workload is never evicted.
  WaitForPodsReadyConfig no_recovery = cfg;
  no_recovery.recovery_timeout.reset();
  EXPECT_EQ(NextLifecycleStep(wl, no_recovery, kT0 + minutes(60)).kind, LifecycleStep::Kind::kNone);
}

TEST(WorkloadLifecycle, DisabledOrNotAdmittedNeverTimesOut) {
  WaitForPodsReadyConfig off = Config();
  off.enabled = false;
  EXPECT_EQ(NextLifecycleStep(AdmittedWorkload(kT0), off, kT0 + minutes(60)).kind, LifecycleStep::Kind::kNone);
  api::Object pending = AdmittedWorkload(kT0);
  SetCondition(&pending, {"QuotaReserved", "False", "Pending", "x"}, kT0);
  EXPECT_EQ(NextLifecycleStep(pending, Config(), kT0 + minutes(60)).kind, LifecycleStep::Kind::kNone);
  EXPECT_EQ(PodsReadyCondition(pending, true).reason, "WaitForStart");
}

TEST(WorkloadLifecycle, QueueOrderTimestampFollowsTheStrategy) {
  WaitForPodsReadyConfig cfg = Config();
  api::Object wl = NextLifecycleStep(AdmittedWorkload(kT0), cfg, kT0 + minutes(5)).workload;
  EXPECT_EQ(QueueOrderTimestamp(wl, cfg), kT0 + minutes(5));
  cfg.timestamp = RequeuingTimestamp::kCreation;
  EXPECT_EQ(QueueOrderTimestamp(wl, cfg), kT0);
  EXPECT_TRUE(BlocksAdmission(AdmittedWorkload(kT0)));
}

// Kueue's reconcileMaxExecutionTime: the remainder is max - accumulated past time - the time
// since the Admitted transition; before it the workload is rechecked then, at it the
// DeactivationTarget is set, and the deactivation steps follow.
TEST(WorkloadLifecycle, MaxExecutionTimeRechecksThenDeactivates) {
  WaitForPodsReadyConfig off = Config();
  off.enabled = false;
  api::Object wl = AdmittedWorkload(kT0);
  wl["spec"]["maximumExecutionTimeSeconds"] = 10;

  LifecycleStep early = NextLifecycleStep(wl, off, kT0 + seconds(4));
  EXPECT_EQ(early.kind, LifecycleStep::Kind::kNone);
  EXPECT_EQ(early.recheck_after, seconds(6));
  wl["status"]["accumulatedPastExecutionTimeSeconds"] = 3;  // an earlier admission ran 3 s
  EXPECT_EQ(NextLifecycleStep(wl, off, kT0 + seconds(4)).recheck_after, seconds(3));
  EXPECT_EQ(NextLifecycleStep(wl, off, kT0 + seconds(6) + std::chrono::milliseconds(500)).recheck_after,
            std::chrono::milliseconds(500));

  LifecycleStep exceeded = NextLifecycleStep(wl, off, kT0 + seconds(7));
  ASSERT_EQ(exceeded.kind, LifecycleStep::Kind::kUpdateStatus);
  EXPECT_EQ(Cond(exceeded.workload, "DeactivationTarget", "status"), "True");
  EXPECT_EQ(Cond(exceeded.workload, "DeactivationTarget", "reason"), "MaximumExecutionTimeExceeded");
  EXPECT_EQ(Cond(exceeded.workload, "DeactivationTarget", "message"), "exceeding the maximum execution time");
  EXPECT_FALSE(exceeded.workload["status"].contains("accumulatedPastExecutionTimeSeconds"));
  EXPECT_EQ(Cond(exceeded.workload, "Evicted", "status"), "<none>");
  EXPECT_EQ(exceeded.event_type, "Warning");
  EXPECT_EQ(exceeded.event_reason, "MaximumExecutionTimeExceeded");
  EXPECT_EQ(exceeded.event_message, "The maximum execution time (10s) exceeded");

  LifecycleStep deactivate = NextLifecycleStep(exceeded.workload, off, kT0 + seconds(7));
  ASSERT_EQ(deactivate.kind, LifecycleStep::Kind::kUpdateSpec);
  EXPECT_EQ(deactivate.workload["spec"]["active"], false);

  LifecycleStep evict = NextLifecycleStep(deactivate.workload, off, kT0 + seconds(7));
  ASSERT_EQ(evict.kind, LifecycleStep::Kind::kUpdateStatus);
  EXPECT_EQ(Cond(evict.workload, "Evicted", "reason"), "Deactivated");
  EXPECT_EQ(Cond(evict.workload, "Evicted", "message"),
            "The workload is deactivated due to exceeding the maximum execution time");
  EXPECT_EQ(evict.event_type, "Normal");
  EXPECT_EQ(evict.event_reason, "EvictedDueToDeactivated");
  EXPECT_EQ(Cond(evict.workload, "DeactivationTarget", "status"), "<none>");
  EXPECT_EQ(evict.workload["status"]["schedulingStats"]["evictions"],
            api::Object::parse(
                R"([{"reason": "Deactivated", "underlyingCause": "MaximumExecutionTimeExceeded", "count": 1}])"));
  // Inactive and evicted: nothing more (the job reconciler releases the quota).
  EXPECT_EQ(NextLifecycleStep(evict.workload, off, kT0 + seconds(60)).kind, LifecycleStep::Kind::kNone);
}

TEST(WorkloadLifecycle, MaxExecutionTimeOnlyCountsAdmittedWorkloads) {
  api::Object wl = AdmittedWorkload(kT0);
  WaitForPodsReadyConfig off = Config();
  off.enabled = false;
  // No maximum: nothing to recheck.
  EXPECT_EQ(NextLifecycleStep(wl, off, kT0 + minutes(60)).recheck_after, Duration::zero());
  wl["spec"]["maximumExecutionTimeSeconds"] = 10;
  api::Object pending = wl;
  pending["status"].erase("admission");
  SetCondition(&pending, {"QuotaReserved", "False", "Pending", "x"}, kT0);
  SetCondition(&pending, {"Admitted", "False", "NoReservation", "x"}, kT0);
  LifecycleStep step = NextLifecycleStep(pending, off, kT0 + minutes(60));
  EXPECT_EQ(step.kind, LifecycleStep::Kind::kNone);
  EXPECT_EQ(step.recheck_after, Duration::zero());
}

// With waitForPodsReady the earlier of the two deadlines is rechecked.
TEST(WorkloadLifecycle, MaxExecutionTimeAndPodsReadyRecheckTheEarlierDeadline) {
  api::Object wl = AdmittedWorkload(kT0);  // PodsReady timeout at kT0 + 5 min
  wl["spec"]["maximumExecutionTimeSeconds"] = 60;
  EXPECT_EQ(NextLifecycleStep(wl, Config(), kT0 + seconds(10)).recheck_after, seconds(50));
  wl["spec"]["maximumExecutionTimeSeconds"] = 600;
  EXPECT_EQ(NextLifecycleStep(wl, Config(), kT0 + seconds(10)).recheck_after, seconds(290));
  // Ready: only the maximum is left.
  SetCondition(&wl, PodsReadyCondition(wl, true), kT0 + seconds(5));
  EXPECT_EQ(NextLifecycleStep(wl, Config(), kT0 + seconds(10)).recheck_after, seconds(590));
}

// Kueue's SyncAdmittedCondition: the admission that ends adds its whole seconds.
TEST(WorkloadLifecycle, ReleaseQuotaAccumulatesPastExecutionTime) {
  api::Object wl = AdmittedWorkload(kT0);
  SetCondition(&wl, {"Evicted", "True", "Preempted", "x"}, kT0 + seconds(5));
  ASSERT_TRUE(ReleaseQuota(&wl, kT0 + seconds(7) + std::chrono::milliseconds(900)));
  EXPECT_EQ(wl["status"]["accumulatedPastExecutionTimeSeconds"], 7);
  EXPECT_EQ(Cond(wl, "Admitted", "status"), "False");
  // Admitted again at +20 s, released at +24 s: 7 + 4.
  SetCondition(&wl, {"QuotaReserved", "True", "QuotaReserved", "x"}, kT0 + seconds(20));
  SetCondition(&wl, {"Admitted", "True", "Admitted", "The workload is admitted"}, kT0 + seconds(20));
  ASSERT_TRUE(ReleaseQuota(&wl, kT0 + seconds(24)));
  EXPECT_EQ(wl["status"]["accumulatedPastExecutionTimeSeconds"], 11);
  // Not admitted: nothing added.
  ReleaseQuota(&wl, kT0 + seconds(60));
  EXPECT_EQ(wl["status"]["accumulatedPastExecutionTimeSeconds"], 11);
}

// ConditionHolds says exactly when SetCondition would change nothing.
TEST(ConditionHoldsTest, MatchesSetConditionsNoChange) {
  api::Object wl = {{"metadata", {{"name", "w"}, {"generation", 2}}}};
  const Condition pending{"QuotaReserved", "False", "Pending", "insufficient quota"};
  EXPECT_FALSE(ConditionHolds(wl, pending));
  ASSERT_TRUE(SetCondition(&wl, pending, kT0));
  EXPECT_TRUE(ConditionHolds(wl, pending));
  EXPECT_FALSE(SetCondition(&wl, pending, kT0 + minutes(1)));
  EXPECT_FALSE(ConditionHolds(wl, {"QuotaReserved", "False", "Pending", "other message"}));
  EXPECT_FALSE(ConditionHolds(wl, {"QuotaReserved", "True", "Pending", "insufficient quota"}));
  wl["metadata"]["generation"] = 3;  // a new generation must be observed again
  EXPECT_FALSE(ConditionHolds(wl, pending));
  EXPECT_TRUE(SetCondition(&wl, pending, kT0));
}

}  // namespace
}  // namespace berth::controllers::kueue
