#include "controllers/jobs/batchjob/job_pods.h"

#include <gtest/gtest.h>

namespace berth::controllers::jobs::batchjob {
namespace {

using nlohmann::json;

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

ObservedPod Pod(std::string name, std::string phase, std::optional<int32_t> index, bool terminating = false) {
  ObservedPod p;
  p.name = std::move(name);
  p.phase = std::move(phase);
  p.index = index;
  p.terminating = terminating;
  return p;
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
  EXPECT_EQ(pod["spec"]["containers"][0]["env"],
            json::parse(R"([{"name":"JOB_COMPLETION_INDEX","valueFrom":{"fieldRef":
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

TEST(JobPodsTest, IndexedCreatesLowestMissingIndexesUpToParallelism) {
  JobPlan plan = PlanJob(IndexedJob(2, 4), {Pod("pi-0-a", "Succeeded", 0), Pod("pi-1-b", "Running", 1)});
  EXPECT_EQ(plan.create_indexes, (std::vector<int32_t>{2}));
  EXPECT_EQ(plan.active, 1);
  EXPECT_EQ(plan.succeeded, 1);
  EXPECT_EQ(plan.completed_indexes, "0");
  EXPECT_TRUE(plan.conditions.empty());
}

// Departure 3 (docs/architecture.md; kubernetes/kubernetes#115844): a terminating predecessor
// keeps its index; the replacement waits until it is terminal.
TEST(JobPodsTest, ReplacementWaitsForTerminalPredecessor) {
  JobPlan plan = PlanJob(IndexedJob(2, 2), {Pod("pi-0-a", "Running", 0, /*terminating=*/true), Pod("pi-1-b", "Running", 1)});
  EXPECT_TRUE(plan.create_indexes.empty());
  EXPECT_EQ(plan.terminating, 1);
  plan = PlanJob(IndexedJob(2, 2), {Pod("pi-0-a", "Failed", 0), Pod("pi-1-b", "Running", 1)});
  EXPECT_EQ(plan.create_indexes, (std::vector<int32_t>{0}));
  EXPECT_EQ(plan.failed, 1);

  json nonindexed = IndexedJob(3, 3);
  nonindexed["spec"].erase("completionMode");
  plan = PlanJob(nonindexed, {Pod("a", "Running", std::nullopt, true), Pod("b", "Running", std::nullopt)});
  EXPECT_EQ(plan.create_count, 1);  // 3 wanted, 2 still hold a slot
}

// A deleted pod that has already failed (the agent wrote its final status and has not
// removed it yet) still holds its index / slot: it is counted failed and terminating.
TEST(JobPodsTest, DeletedPodHoldsItsSlotUntilGoneEvenWhenTerminal) {
  JobPlan plan = PlanJob(IndexedJob(2, 2), {Pod("pi-0-a", "Failed", 0, /*terminating=*/true), Pod("pi-1-b", "Running", 1)});
  EXPECT_TRUE(plan.create_indexes.empty());
  EXPECT_EQ(plan.terminating, 1);
  EXPECT_EQ(plan.failed, 1);
  EXPECT_EQ(plan.active, 1);

  json nonindexed = IndexedJob(2, 2);
  nonindexed["spec"].erase("completionMode");
  plan = PlanJob(nonindexed, {Pod("a", "Failed", std::nullopt, true), Pod("b", "Running", std::nullopt)});
  EXPECT_EQ(plan.create_count, 0);
  EXPECT_EQ(plan.terminating, 1);
  // Gone: replaced.
  plan = PlanJob(nonindexed, {Pod("b", "Running", std::nullopt)});
  EXPECT_EQ(plan.create_count, 1);
}

TEST(JobPodsTest, BackoffLimitExceeded) {
  json job = IndexedJob(2, 2);
  JobPlan plan = PlanJob(job, {Pod("pi-0-a", "Failed", 0), Pod("pi-0-b", "Failed", 0), Pod("pi-1-c", "Running", 1)});
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"pi-1-c"}));
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].type, "FailureTarget");
  EXPECT_EQ(plan.conditions[0].reason, "BackoffLimitExceeded");
  EXPECT_EQ(plan.conditions[0].message, "Job has reached the specified backoff limit");
  EXPECT_FALSE(plan.finished());
  plan = PlanJob(job, {Pod("pi-0-a", "Failed", 0), Pod("pi-0-b", "Failed", 0), Pod("pi-1-c", "Failed", 1)});
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[1].type, "Failed");
  EXPECT_TRUE(plan.finished());
  EXPECT_TRUE(plan.create_indexes.empty());
}

TEST(JobPodsTest, CompleteAfterAllIndexesSucceed) {
  JobPlan plan = PlanJob(IndexedJob(2, 2), {Pod("pi-0-a", "Succeeded", 0), Pod("pi-1-b", "Succeeded", 1)});
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[0].type, "SuccessCriteriaMet");
  EXPECT_EQ(plan.conditions[1].type, "Complete");
  EXPECT_EQ(plan.conditions[1].reason, "CompletionsReached");
  EXPECT_EQ(plan.conditions[1].message, "Reached expected number of succeeded pods");
  EXPECT_EQ(plan.completed_indexes, "0-1");
  json job = IndexedJob(2, 2);
  WriteStatusCounts(plan, &job);
  EXPECT_EQ(job["status"]["succeeded"], 2);
  EXPECT_EQ(job["status"]["completedIndexes"], "0-1");
}

TEST(JobPodsTest, NonIndexedNilCompletionsAndCountsNeverDecrease) {
  json job = IndexedJob(2, 0);
  job["spec"].erase("completionMode");
  job["spec"].erase("completions");
  JobPlan plan = PlanJob(job, {});
  EXPECT_EQ(plan.create_count, 2);
  plan = PlanJob(job, {Pod("a", "Succeeded", std::nullopt), Pod("b", "Running", std::nullopt)});
  EXPECT_EQ(plan.create_count, 0);
  EXPECT_TRUE(plan.conditions.empty());
  job["status"] = {{"failed", 1}};
  plan = PlanJob(job, {Pod("a", "Succeeded", std::nullopt)});
  EXPECT_EQ(plan.failed, 1);  // the deleted failed pod stays counted
  EXPECT_TRUE(plan.finished());
}

TEST(JobPodsTest, SuspendDeletesActivePodsAndResumeReports) {
  json job = IndexedJob(2, 2);
  job["spec"]["suspend"] = true;
  JobPlan plan = PlanJob(job, {Pod("pi-1-b", "Running", 1), Pod("pi-0-a", "Pending", 0)});
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"pi-0-a", "pi-1-b"}));
  EXPECT_TRUE(plan.create_indexes.empty());
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].reason, "JobSuspended");
  job["spec"]["suspend"] = false;
  job["status"]["conditions"] = json::parse(R"([{"type":"Suspended","status":"True"}])");
  plan = PlanJob(job, {});
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
  EXPECT_EQ(FormatIndexIntervals({0, 1, 2, 4, 6, 7}), "0-2,4,6-7");
}

}  // namespace
}  // namespace berth::controllers::jobs::batchjob
