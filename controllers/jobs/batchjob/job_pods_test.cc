#include "controllers/jobs/batchjob/job_pods.h"

#include <gtest/gtest.h>

#include "api/conditions.h"
#include "client/testing/fake_client.h"
#include "controllers/jobs/batchjob/job_controller.h"

namespace berth::controllers::jobs::batchjob {
namespace {

using nlohmann::json;
using std::chrono::seconds;

const Time kNow = FakeClock().Now();

json IndexedJob(int parallelism, int completions) {
  json j = json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "pi", "namespace": "default", "uid": "job-uid"},
    "spec": {"completionMode": "Indexed", "backoffLimit": 1,
             "template": {"metadata": {"labels": {"app": "pi"}},
                          "spec": {"subdomain": "svc", "restartPolicy": "Never",
                                   "containers": [{"name": "c", "image": "busybox"}]}}}})");
  j["spec"]["parallelism"] = parallelism;
  j["spec"]["completions"] = completions;
  return j;
}

ObservedPod Pod(std::string name, std::string phase, std::optional<int32_t> index, bool terminating = false,
                int32_t restarts = 0) {
  ObservedPod p;
  p.name = std::move(name);
  p.phase = std::move(phase);
  p.index = index;
  p.terminating = terminating;
  p.restart_count = restarts;
  return p;
}

// A NonIndexed Job "pi" with backoffLimit `limit` and pod restartPolicy `policy`.
json PolicyJob(const std::string& policy, int limit) {
  json job = IndexedJob(1, 1);
  job["spec"].erase("completionMode");
  job["spec"]["backoffLimit"] = limit;
  job["spec"]["template"]["spec"]["restartPolicy"] = policy;
  return job;
}

TEST(JobPodsTest, IndexedPodShape) {
  json pod = NewPod(IndexedJob(2, 2), 1, "abcde");
  EXPECT_EQ(pod["metadata"]["name"], "pi-1-abcde");
  EXPECT_EQ(pod["metadata"]["generateName"], "pi-1-");
  EXPECT_EQ(pod["metadata"]["namespace"], "default");
  EXPECT_EQ(pod["metadata"]["labels"], json::parse(R"({"app":"pi","batch.kubernetes.io/controller-uid":"job-uid",
      "controller-uid":"job-uid","batch.kubernetes.io/job-name":"pi","job-name":"pi",
      "batch.kubernetes.io/job-completion-index":"1"})"));
  EXPECT_EQ(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"], "1");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["kind"], "Job");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(pod["spec"]["hostname"], "pi-1");
  EXPECT_EQ(pod["spec"]["subdomain"], "svc");
  EXPECT_EQ(pod["spec"]["containers"][0]["env"], json::parse(R"([{"name":"JOB_COMPLETION_INDEX","valueFrom":{"fieldRef":
                {"fieldPath":"metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}])"));
}

TEST(JobPodsTest, NonIndexedPodAndLongNames) {
  json job = IndexedJob(1, 1);
  job["spec"].erase("completionMode");
  json pod = NewPod(job, std::nullopt, "xyz12");
  EXPECT_EQ(pod["metadata"]["name"], "pi-xyz12");
  EXPECT_FALSE(pod["spec"].contains("hostname"));
  EXPECT_FALSE(pod["metadata"].contains("annotations"));
  const std::string long_name(70, 'a');
  EXPECT_EQ(PodGenerateName(long_name, std::nullopt), std::string(58, 'a'));
  EXPECT_EQ(PodGenerateName(long_name, 12), std::string(54, 'a') + "-12-");
  EXPECT_EQ(PodGenerateName("short", 3), "short-3-");
}

// kube's MaxPodCreateDeletePerSync: a Job of parallelism 2^31−1 (the schema allows it)
// gets 500 pods per sync, Indexed or not; before, one sync created pods without end, ~1,000/s,
// and went on after the Job was deleted.
TEST(JobPodsTest, OneSyncCreatesAtMost500Pods) {
  JobPlan indexed = PlanJob(IndexedJob(INT32_MAX, INT32_MAX), {Pod("pi-0-a", "Running", 0)}, kNow);
  ASSERT_EQ(indexed.create_indexes.size(), 500u);
  EXPECT_EQ(indexed.create_indexes.front(), 1);
  EXPECT_EQ(indexed.create_indexes.back(), 500);
  json plain = PolicyJob("Never", 6);
  plain["spec"]["parallelism"] = INT32_MAX;
  plain["spec"].erase("completions");
  EXPECT_EQ(PlanJob(plain, {}, kNow).create_count, kMaxPodCreatesPerSync);
  plain["spec"]["completions"] = 700;
  EXPECT_EQ(PlanJob(plain, {Pod("pi-a", "Running", std::nullopt)}, kNow).create_count, 500);
}

TEST(JobPodsTest, IndexedCreatesLowestMissingIndexesUpToParallelism) {
  JobPlan plan = PlanJob(IndexedJob(2, 4), {Pod("pi-0-a", "Succeeded", 0), Pod("pi-1-b", "Running", 1)}, kNow);
  EXPECT_EQ(plan.create_indexes, (std::vector<int32_t>{2}));
  EXPECT_EQ(plan.active, 1);
  EXPECT_EQ(plan.succeeded, 1);
  EXPECT_EQ(plan.completed_indexes, "0");
  EXPECT_TRUE(plan.conditions.empty());
}

// Departure 3 (docs/architecture.md; kubernetes/kubernetes#115844): a terminating predecessor
// keeps its index; the replacement waits until it is terminal.
// An index the status lists as completed stays completed when its Succeeded pod is gone
// (deleted by a user, by pod GC, or by its agent confirming a deletion): it is not run again,
// and the Job completes once the other indexes do (upstream calculateSucceededIndexes).
TEST(JobPodsTest, ACompletedIndexWhosePodIsGoneIsNotRunAgain) {
  Object job = IndexedJob(/*parallelism=*/2, /*completions=*/3);
  job["status"]["completedIndexes"] = "0,2";
  job["status"]["succeeded"] = 2;
  JobPlan plan = PlanJob(job, {Pod("pi-1-b", "Running", 1)}, kNow);
  EXPECT_TRUE(plan.create_indexes.empty());
  EXPECT_EQ(plan.completed_indexes, "0,2");
  EXPECT_EQ(plan.succeeded, 2);
  plan = PlanJob(job, {Pod("pi-1-b", "Succeeded", 1)}, kNow);
  EXPECT_EQ(plan.completed_indexes, "0-2");
  EXPECT_EQ(plan.succeeded, 3);
  ASSERT_FALSE(plan.conditions.empty());
  EXPECT_EQ(plan.conditions.back().type, "Complete");
  // Only the status: the completed indexes get no pod again, the missing one does.
  plan = PlanJob(job, {}, kNow);
  EXPECT_EQ(plan.create_indexes, std::vector<int32_t>{1});
}

TEST(JobPodsTest, ReplacementWaitsForTerminalPredecessor) {
  JobPlan plan =
      PlanJob(IndexedJob(2, 2), {Pod("pi-0-a", "Running", 0, /*terminating=*/true), Pod("pi-1-b", "Running", 1)}, kNow);
  EXPECT_TRUE(plan.create_indexes.empty());
  EXPECT_EQ(plan.terminating, 1);
  plan = PlanJob(IndexedJob(2, 2), {Pod("pi-0-a", "Failed", 0), Pod("pi-1-b", "Running", 1)}, kNow);
  EXPECT_EQ(plan.create_indexes, (std::vector<int32_t>{0}));
  EXPECT_EQ(plan.failed, 1);

  json nonindexed = IndexedJob(3, 3);
  nonindexed["spec"].erase("completionMode");
  plan = PlanJob(nonindexed, {Pod("a", "Running", std::nullopt, true), Pod("b", "Running", std::nullopt)}, kNow);
  EXPECT_EQ(plan.create_count, 1);  // 3 wanted, 2 still hold a slot
}

// A deleted pod that has already failed (the agent wrote its final status and has not
// removed it yet) still holds its index / slot: it is counted failed and terminating.
TEST(JobPodsTest, DeletedPodHoldsItsSlotUntilGoneEvenWhenTerminal) {
  JobPlan plan =
      PlanJob(IndexedJob(2, 2), {Pod("pi-0-a", "Failed", 0, /*terminating=*/true), Pod("pi-1-b", "Running", 1)}, kNow);
  EXPECT_TRUE(plan.create_indexes.empty());
  EXPECT_EQ(plan.terminating, 1);
  EXPECT_EQ(plan.failed, 1);
  EXPECT_EQ(plan.active, 1);

  json nonindexed = IndexedJob(2, 2);
  nonindexed["spec"].erase("completionMode");
  plan = PlanJob(nonindexed, {Pod("a", "Failed", std::nullopt, true), Pod("b", "Running", std::nullopt)}, kNow);
  EXPECT_EQ(plan.create_count, 0);
  EXPECT_EQ(plan.terminating, 1);
  // Gone: replaced.
  plan = PlanJob(nonindexed, {Pod("b", "Running", std::nullopt)}, kNow);
  EXPECT_EQ(plan.create_count, 1);
}

TEST(JobPodsTest, BackoffLimitExceeded) {
  json job = IndexedJob(2, 2);
  JobPlan plan =
      PlanJob(job, {Pod("pi-0-a", "Failed", 0), Pod("pi-0-b", "Failed", 0), Pod("pi-1-c", "Running", 1)}, kNow);
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"pi-1-c"}));
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].type, "FailureTarget");
  EXPECT_EQ(plan.conditions[0].reason, "BackoffLimitExceeded");
  EXPECT_EQ(plan.conditions[0].message, "Job has reached the specified backoff limit");
  EXPECT_FALSE(plan.finished());
  plan = PlanJob(job, {Pod("pi-0-a", "Failed", 0), Pod("pi-0-b", "Failed", 0), Pod("pi-1-c", "Failed", 1)}, kNow);
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[1].type, "Failed");
  EXPECT_TRUE(plan.finished());
  EXPECT_TRUE(plan.create_indexes.empty());
}

// Upstream pastBackoffLimitOnFailure: under OnFailure the restartCount of the containers and
// init containers of Running and Pending pods count toward backoffLimit (≥ limit; > 0 for 0).
TEST(JobPodsTest, OnFailureContainerRestartsCountTowardBackoffLimit) {
  json status = json::parse(R"({"initContainerStatuses": [{"name": "i", "restartCount": 1}],
      "containerStatuses": [{"name": "a", "restartCount": 2}, {"name": "b", "restartCount": 0}], "phase": "Running"})");
  EXPECT_EQ(ObservedPod::FromObject({{"metadata", {{"name", "p"}}}, {"status", status}}).restart_count, 3);

  json job = PolicyJob("OnFailure", 2);
  JobPlan plan = PlanJob(job, {Pod("a", "Running", std::nullopt, false, /*restarts=*/1)}, kNow);
  EXPECT_TRUE(plan.conditions.empty());
  EXPECT_TRUE(plan.delete_pods.empty());
  plan = PlanJob(job, {Pod("a", "Running", std::nullopt, false, /*restarts=*/2)}, kNow);
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"a"}));
  EXPECT_EQ(plan.create_count, 0);
  EXPECT_EQ(plan.active, 0);
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].type, "FailureTarget");
  EXPECT_EQ(plan.conditions[0].reason, "BackoffLimitExceeded");
  EXPECT_EQ(plan.conditions[0].message, "Job has reached the specified backoff limit");
  // Pending pods count too, summed over pods; terminal pods' restarts do not.
  plan = PlanJob(job, {Pod("a", "Pending", std::nullopt, false, 1), Pod("b", "Running", std::nullopt, false, 1)}, kNow);
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].reason, "BackoffLimitExceeded");
  plan = PlanJob(job, {Pod("a", "Failed", std::nullopt, false, 5)}, kNow);
  EXPECT_TRUE(plan.conditions.empty());
  EXPECT_EQ(plan.create_count, 1);
  // The deleted pod has ended: Failed, with the reason kept from FailureTarget.
  job["status"]["conditions"] = json::parse(R"([{"type": "FailureTarget", "status": "True",
      "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}])");
  plan = PlanJob(job, {Pod("a", "Failed", std::nullopt, false, 2)}, kNow);
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[1].type, "Failed");
  EXPECT_EQ(plan.conditions[1].reason, "BackoffLimitExceeded");
  EXPECT_EQ(plan.conditions[1].message, "Job has reached the specified backoff limit");
  EXPECT_EQ(plan.failed, 1);
  EXPECT_TRUE(plan.finished());
  // backoffLimit 0: the first restart fails the Job.
  plan = PlanJob(PolicyJob("OnFailure", 0), {Pod("a", "Running", std::nullopt, false, 1)}, kNow);
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].reason, "BackoffLimitExceeded");
  // Never and Always: restarts are not counted.
  for (const char* policy : {"Never", "Always"}) {
    plan = PlanJob(PolicyJob(policy, 1), {Pod("a", "Running", std::nullopt, false, 7)}, kNow);
    EXPECT_TRUE(plan.conditions.empty()) << policy;
  }
}

// Upstream pastActiveDeadline: active since status.startTime for activeDeadlineSeconds →
// FailureTarget then Failed, reason DeadlineExceeded; active pods deleted; never while
// suspended; a Job started or resumed by this reconcile counts from now.
TEST(JobPodsTest, ActiveDeadlineFailsTheJobAndDeletesItsPods) {
  json job = PolicyJob("Never", 6);
  job["spec"]["activeDeadlineSeconds"] = 3;
  job["status"]["startTime"] = FormatRfc3339(kNow);
  JobPlan plan = PlanJob(job, {Pod("a", "Running", std::nullopt)}, kNow + seconds(2));
  EXPECT_TRUE(plan.conditions.empty());
  EXPECT_EQ(plan.active_deadline, kNow + seconds(3));
  plan = PlanJob(job, {Pod("a", "Running", std::nullopt)}, kNow + seconds(3));
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"a"}));
  EXPECT_EQ(plan.create_count, 0);
  EXPECT_FALSE(plan.active_deadline.has_value());
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].type, "FailureTarget");
  EXPECT_EQ(plan.conditions[0].reason, "DeadlineExceeded");
  EXPECT_EQ(plan.conditions[0].message, "Job was active longer than specified deadline");
  // No pod left: Failed too.
  plan = PlanJob(job, {}, kNow + seconds(4));
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[1].type, "Failed");
  EXPECT_EQ(plan.conditions[1].reason, "DeadlineExceeded");
  EXPECT_EQ(plan.conditions[1].message, "Job was active longer than specified deadline");
  // The backoff limit is checked first.
  plan = PlanJob(job, {Pod("a", "Failed", std::nullopt), Pod("b", "Failed", std::nullopt)}, kNow + seconds(9));
  EXPECT_EQ(plan.conditions[0].reason, "DeadlineExceeded");  // 2 failures ≤ backoffLimit 6
  job["spec"]["backoffLimit"] = 1;
  plan = PlanJob(job, {Pod("a", "Failed", std::nullopt), Pod("b", "Failed", std::nullopt)}, kNow + seconds(9));
  EXPECT_EQ(plan.conditions[0].reason, "BackoffLimitExceeded");
  job["spec"]["backoffLimit"] = 6;
  // Suspended: no deadline.
  job["spec"]["suspend"] = true;
  plan = PlanJob(job, {}, kNow + seconds(60));
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].reason, "JobSuspended");
  EXPECT_FALSE(plan.active_deadline.has_value());
  // Resumed in this reconcile (Suspended still True): the deadline runs from now.
  job["spec"]["suspend"] = false;
  job["status"]["conditions"] = json::parse(R"([{"type": "Suspended", "status": "True"}])");
  plan = PlanJob(job, {}, kNow + seconds(60));
  EXPECT_TRUE(plan.resumed);
  EXPECT_EQ(plan.create_count, 1);
  EXPECT_EQ(plan.active_deadline, kNow + seconds(63));
  // Not started yet (no startTime): likewise.
  job["status"].erase("conditions");
  job["status"].erase("startTime");
  plan = PlanJob(job, {}, kNow + seconds(60));
  EXPECT_FALSE(plan.resumed);
  EXPECT_EQ(plan.active_deadline, kNow + seconds(63));
}

// The controller: startTime is written on start and reset on resume; an active deadline is
// requeued for when it passes, and then fails the Job and deletes its pods.
TEST(JobControllerTest, ActiveDeadlineRunsFromStartOrResumeAndFailsTheJob) {
  const client::GroupVersionResource jobs = kJobsResource;
  FakeClock clock;
  client::testing::FakeClient client(clock);
  JobController controller(client, clock);
  std::vector<std::pair<std::string, Duration>> requeued;
  controller.SetRequeueAfter([&](const std::string& key, Duration after) { requeued.emplace_back(key, after); });
  json job = PolicyJob("Never", 6);
  job["metadata"].erase("uid");
  job["spec"]["activeDeadlineSeconds"] = 3;
  job["spec"]["suspend"] = true;
  ASSERT_TRUE(client.Create(jobs.Namespace("default"), job).ok());
  ASSERT_TRUE(controller.Reconcile("default/pi").ok());
  EXPECT_TRUE(requeued.empty());  // suspended: no clock runs
  json stored = *client.Get(jobs.Namespace("default"), "pi");
  EXPECT_FALSE(stored["status"].contains("startTime"));

  clock.Advance(seconds(100));
  stored["spec"]["suspend"] = false;
  ASSERT_TRUE(client.Update(jobs.Namespace("default"), stored).ok());
  ASSERT_TRUE(controller.Reconcile("default/pi").ok());
  stored = *client.Get(jobs.Namespace("default"), "pi");
  EXPECT_EQ(stored["status"]["startTime"], FormatRfc3339(clock.Now()));
  ASSERT_EQ(requeued.size(), 1u);
  EXPECT_EQ(requeued[0], std::make_pair(std::string("default/pi"), Duration(seconds(3))));
  ASSERT_EQ(client.List(kPodsResource.Namespace("default"))->items.size(), 1u);

  // Suspended and resumed again later: startTime is reset, the deadline runs from the resume.
  clock.Advance(seconds(1));
  stored["spec"]["suspend"] = true;
  ASSERT_TRUE(client.Update(jobs.Namespace("default"), stored).ok());
  ASSERT_TRUE(controller.Reconcile("default/pi").ok());
  EXPECT_TRUE(client.List(kPodsResource.Namespace("default"))->items.empty());
  clock.Advance(seconds(10));
  stored = *client.Get(jobs.Namespace("default"), "pi");
  stored["spec"]["suspend"] = false;
  ASSERT_TRUE(client.Update(jobs.Namespace("default"), stored).ok());
  ASSERT_TRUE(controller.Reconcile("default/pi").ok());
  stored = *client.Get(jobs.Namespace("default"), "pi");
  EXPECT_EQ(stored["status"]["startTime"], FormatRfc3339(clock.Now()));
  EXPECT_EQ(requeued.back().second, Duration(seconds(3)));

  clock.Advance(seconds(3));
  ASSERT_TRUE(controller.Reconcile("default/pi").ok());
  EXPECT_TRUE(client.List(kPodsResource.Namespace("default"))->items.empty());  // deleted
  ASSERT_TRUE(controller.Reconcile("default/pi").ok());
  stored = *client.Get(jobs.Namespace("default"), "pi");
  EXPECT_EQ(api::ConditionField(stored, "Failed", "reason"), "DeadlineExceeded");
  EXPECT_EQ(api::ConditionField(stored, "Failed", "message"), "Job was active longer than specified deadline");
  EXPECT_TRUE(api::IsConditionTrue(stored, "Failed"));
}

TEST(JobPodsTest, CompleteAfterAllIndexesSucceed) {
  JobPlan plan = PlanJob(IndexedJob(2, 2), {Pod("pi-0-a", "Succeeded", 0), Pod("pi-1-b", "Succeeded", 1)}, kNow);
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[0].type, "SuccessCriteriaMet");
  EXPECT_EQ(plan.conditions[1].type, "Complete");
  EXPECT_EQ(plan.conditions[1].reason, "CompletionsReached");
  EXPECT_EQ(plan.conditions[1].message, "Reached expected number of succeeded pods");
  EXPECT_EQ(plan.completed_indexes, "0,1");
  json job = IndexedJob(2, 2);
  WriteStatusCounts(plan, &job);
  EXPECT_EQ(job["status"]["succeeded"], 2);
  EXPECT_EQ(job["status"]["completedIndexes"], "0,1");
}

TEST(JobPodsTest, NonIndexedNilCompletionsAndCountsNeverDecrease) {
  json job = IndexedJob(2, 0);
  job["spec"].erase("completionMode");
  job["spec"].erase("completions");
  JobPlan plan = PlanJob(job, {}, kNow);
  EXPECT_EQ(plan.create_count, 2);
  plan = PlanJob(job, {Pod("a", "Succeeded", std::nullopt), Pod("b", "Running", std::nullopt)}, kNow);
  EXPECT_EQ(plan.create_count, 0);
  EXPECT_TRUE(plan.conditions.empty());
  job["status"] = {{"failed", 1}};
  plan = PlanJob(job, {Pod("a", "Succeeded", std::nullopt)}, kNow);
  EXPECT_EQ(plan.failed, 1);  // the deleted failed pod stays counted
  EXPECT_TRUE(plan.finished());
}

TEST(JobPodsTest, SuspendDeletesActivePodsAndResumeReports) {
  json job = IndexedJob(2, 2);
  job["spec"]["suspend"] = true;
  JobPlan plan = PlanJob(job, {Pod("pi-1-b", "Running", 1), Pod("pi-0-a", "Pending", 0)}, kNow);
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"pi-0-a", "pi-1-b"}));
  EXPECT_TRUE(plan.create_indexes.empty());
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].reason, "JobSuspended");
  job["spec"]["suspend"] = false;
  job["status"]["conditions"] = json::parse(R"([{"type":"Suspended","status":"True"}])");
  plan = PlanJob(job, {}, kNow);
  EXPECT_EQ(plan.create_indexes, (std::vector<int32_t>{0, 1}));
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].status, "False");
  EXPECT_EQ(plan.conditions[0].reason, "JobResumed");
}

TEST(JobPodsTest, PodSets) {
  std::vector<kueue::PodSet> ps = PodSets(IndexedJob(4, 3));
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].name, "main");
  EXPECT_EQ(ps[0].count, 3);
  EXPECT_EQ(PodSets(IndexedJob(2, 5))[0].count, 2);
  EXPECT_EQ(FormatIndexIntervals({0, 1, 2, 4, 6, 7}), "0-2,4,6,7");
}

}  // namespace
}  // namespace berth::controllers::jobs::batchjob
