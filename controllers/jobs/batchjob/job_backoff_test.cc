// backoffLimitPerIndex (failedIndexes, the index failure-count annotations, the
// MaxFailedIndexesExceeded / FailedIndexes failures) and the pod-failure backoff before a
// failed pod's replacement, in PlanJob and through the JobController on a FakeClock.
#include <gtest/gtest.h>

#include "api/conditions.h"
#include "client/testing/fake_client.h"
#include "controllers/jobs/batchjob/job_controller.h"
#include "controllers/jobs/batchjob/job_pods.h"

namespace berth::controllers::jobs::batchjob {
namespace {

using nlohmann::json;
using std::chrono::minutes;
using std::chrono::seconds;

const Time kNow = FakeClock().Now();

// Indexed Job "pi": `completions` indexes, all at once, backoffLimitPerIndex `per_index`.
json PerIndexJob(int completions, int per_index) {
  json j = json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "pi", "namespace": "default"},
    "spec": {"completionMode": "Indexed",
             "template": {"spec": {"restartPolicy": "Never",
                                   "containers": [{"name": "c", "image": "busybox"}]}}}})");
  j["spec"]["parallelism"] = completions;
  j["spec"]["completions"] = completions;
  j["spec"]["backoffLimitPerIndex"] = per_index;
  return j;
}

ObservedPod Pod(std::string name, std::string phase, std::optional<int32_t> index, Time finish = Time{},
                int32_t failure_count = 0) {
  ObservedPod p;
  p.name = std::move(name);
  p.phase = std::move(phase);
  p.index = index;
  p.finish_time = finish;
  p.failure_counts.failed = failure_count;
  return p;
}

TEST(JobBackoffTest, DelayDoublesFromTenSecondsToTenMinutes) {
  EXPECT_EQ(PodFailureBackoff(0), Duration::zero());
  EXPECT_EQ(PodFailureBackoff(1), Duration(seconds(10)));
  EXPECT_EQ(PodFailureBackoff(2), Duration(seconds(20)));
  EXPECT_EQ(PodFailureBackoff(6), Duration(seconds(320)));
  EXPECT_EQ(PodFailureBackoff(7), Duration(minutes(10)));  // 640 s capped
  EXPECT_EQ(PodFailureBackoff(INT32_MAX), Duration(minutes(10)));
}

TEST(JobBackoffTest, IndexIntervalsRoundTrip) {
  EXPECT_EQ(FormatIndexIntervals({0, 2, 3, 4}), "0,2-4");
  EXPECT_EQ(FormatIndexIntervals({1, 2}), "1,2");
  EXPECT_EQ(ParseIndexIntervals("0,2-4,x,7-100", 10), (std::vector<int32_t>{0, 2, 3, 4, 7, 8, 9}));
  EXPECT_EQ(ParseIndexIntervals("", 10), std::vector<int32_t>{});
  EXPECT_EQ(ParseIndexIntervals("3-5,0-4,4,9-2,,-1", 10), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(ParseIndexIntervals("5-2147483647", 7), (std::vector<int32_t>{5, 6}));
}

TEST(JobBackoffTest, ObservedPodReadsCountsAndFinishTime) {
  json pod = json::parse(R"({"metadata": {"name": "p", "creationTimestamp": "2026-01-01T00:00:00Z",
      "annotations": {"batch.kubernetes.io/job-completion-index": "2",
                      "batch.kubernetes.io/job-index-failure-count": "3",
                      "batch.kubernetes.io/job-index-ignored-failure-count": "-1"}},
    "status": {"phase": "Failed",
      "conditions": [{"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-01T00:00:07Z"}],
      "containerStatuses": [
        {"name": "a", "state": {"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T00:00:05Z"}}},
        {"name": "b", "state": {"terminated": {"exitCode": 0, "finishedAt": "2026-01-01T00:00:04Z"}}}]}})");
  ObservedPod p = ObservedPod::FromObject(pod);
  EXPECT_EQ(p.failure_counts, (IndexFailureCounts{3, 0}));
  EXPECT_EQ(p.finish_time, kNow + seconds(5));  // the latest container
  pod["status"]["containerStatuses"][1]["state"] = json::parse(R"({"running": {}})");
  EXPECT_EQ(ObservedPod::FromObject(pod).finish_time, kNow + seconds(7));  // Ready False
  pod["status"].erase("conditions");
  EXPECT_EQ(ObservedPod::FromObject(pod).finish_time, kNow);  // creationTimestamp
  pod["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"] = "99999999999";
  EXPECT_EQ(ObservedPod::FromObject(pod).failure_counts.failed, 0);
}

TEST(JobBackoffTest, NewPodCarriesTheIndexFailureCounts) {
  json pod = NewPod(PerIndexJob(2, 1), 1, "abcde", IndexFailureCounts{2, 0});
  EXPECT_EQ(pod["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"], "2");
  EXPECT_FALSE(pod["metadata"]["annotations"].contains("batch.kubernetes.io/job-index-ignored-failure-count"));
  pod = NewPod(PerIndexJob(2, 1), 1, "abcde", IndexFailureCounts{0, 4});
  EXPECT_EQ(pod["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"], "0");
  EXPECT_EQ(pod["metadata"]["annotations"]["batch.kubernetes.io/job-index-ignored-failure-count"], "4");
  EXPECT_FALSE(NewPod(PerIndexJob(2, 1), 1, "abcde")["metadata"]["annotations"].contains(
      "batch.kubernetes.io/job-index-failure-count"));
}

// An index is replaced after its own backoff with its count + 1, fails once its count
// reaches the limit, gets no more pods; the Job fails FailedIndexes once the others succeed.
TEST(JobBackoffTest, PerIndexBackoffThenFailedIndexThenFailedIndexesCondition) {
  json job = PerIndexJob(3, 1);
  EXPECT_EQ(JobSpec::FromObject(job).backoff_limit, INT32_MAX);
  std::vector<ObservedPod> pods = {Pod("pi-0-a", "Failed", 0, kNow), Pod("pi-1-b", "Running", 1),
                                   Pod("pi-2-c", "Running", 2)};
  JobPlan plan = PlanJob(job, pods, kNow + seconds(9));
  EXPECT_TRUE(plan.create_indexes.empty());
  EXPECT_EQ(plan.backoff_until, kNow + seconds(10));
  EXPECT_EQ(plan.failed_indexes, "");
  EXPECT_TRUE(plan.conditions.empty());

  plan = PlanJob(job, pods, kNow + seconds(10));
  EXPECT_EQ(plan.create_indexes, (std::vector<int32_t>{0}));
  EXPECT_EQ(plan.create_failure_counts, (std::vector<IndexFailureCounts>{{1, 0}}));
  EXPECT_FALSE(plan.backoff_until);

  // The replacement failed too (count 1 = the limit): index 0 is failed, never recreated.
  pods.push_back(Pod("pi-0-d", "Failed", 0, kNow + seconds(20), 1));
  plan = PlanJob(job, pods, kNow + minutes(30));
  EXPECT_TRUE(plan.create_indexes.empty());
  EXPECT_FALSE(plan.backoff_until);
  EXPECT_EQ(plan.failed_indexes, "0");
  EXPECT_EQ(plan.failed, 2);
  EXPECT_TRUE(plan.conditions.empty());  // indexes 1 and 2 still run
  WriteStatusCounts(plan, &job);
  EXPECT_EQ(job["status"]["failedIndexes"], "0");

  pods[1].phase = pods[2].phase = "Succeeded";
  plan = PlanJob(job, pods, kNow + minutes(30));
  EXPECT_TRUE(plan.create_indexes.empty());
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[0].type, "FailureTarget");
  EXPECT_EQ(plan.conditions[1].type, "Failed");
  EXPECT_EQ(plan.conditions[1].reason, "FailedIndexes");
  EXPECT_EQ(plan.conditions[1].message, "Job has failed indexes");
  EXPECT_EQ(plan.completed_indexes, "1,2");
}

// maxFailedIndexes: one failed index more than allowed fails the Job and deletes its pods;
// failedIndexes from the previous status stay failed once their pods are gone.
TEST(JobBackoffTest, MaxFailedIndexesExceededAndFailedIndexesKeptFromStatus) {
  json job = PerIndexJob(5, 0);
  job["spec"]["maxFailedIndexes"] = 1;
  job["status"]["failedIndexes"] = "1";
  JobPlan plan = PlanJob(job, {Pod("pi-0-a", "Running", 0), Pod("pi-2-c", "Running", 2)}, kNow);
  EXPECT_EQ(plan.create_indexes, (std::vector<int32_t>{3, 4}));  // not 1
  EXPECT_EQ(plan.create_failure_counts, (std::vector<IndexFailureCounts>{{0, 0}, {0, 0}}));
  EXPECT_EQ(plan.failed_indexes, "1");

  plan = PlanJob(job, {Pod("pi-0-a", "Running", 0), Pod("pi-2-c", "Failed", 2, kNow)}, kNow);
  EXPECT_EQ(plan.failed_indexes, "1,2");
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"pi-0-a"}));
  EXPECT_TRUE(plan.create_indexes.empty());
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].type, "FailureTarget");
  EXPECT_EQ(plan.conditions[0].reason, "MaxFailedIndexesExceeded");
  EXPECT_EQ(plan.conditions[0].message, "Job has exceeded the specified maximal number of failed indexes");
}

// Without backoffLimitPerIndex the delay is the Job's: the Failed pods since the last success.
TEST(JobBackoffTest, JobWideBackoffCountsFailuresAfterTheLastSuccess) {
  json job = PerIndexJob(1, 0);
  job["spec"].erase("completionMode");
  job["spec"].erase("backoffLimitPerIndex");
  job["spec"]["completions"] = 4;
  job["spec"]["backoffLimit"] = 6;
  std::vector<ObservedPod> pods = {Pod("a", "Failed", std::nullopt, kNow),
                                   Pod("b", "Failed", std::nullopt, kNow + seconds(30))};
  JobPlan plan = PlanJob(job, pods, kNow + seconds(49));
  EXPECT_EQ(plan.create_count, 0);
  EXPECT_EQ(plan.backoff_until, kNow + seconds(50));  // 2 failures: 20 s after the last
  EXPECT_EQ(PlanJob(job, pods, kNow + seconds(50)).create_count, 1);

  pods.push_back(Pod("c", "Succeeded", std::nullopt, kNow + seconds(40)));
  pods.push_back(Pod("d", "Failed", std::nullopt, kNow + seconds(45)));
  plan = PlanJob(job, pods, kNow + seconds(54));  // 1 failure after the success: 10 s
  EXPECT_EQ(plan.create_count, 0);
  EXPECT_EQ(plan.backoff_until, kNow + seconds(55));
  EXPECT_EQ(PlanJob(job, pods, kNow + seconds(55)).create_count, 1);
}

class JobBackoffControllerTest : public ::testing::Test {
 protected:
  JobBackoffControllerTest() : client_(clock_), controller_(client_, clock_) {
    controller_.SetRequeueAfter([this](const std::string& key, Duration after) { requeued_.emplace_back(key, after); });
  }
  std::vector<json> Pods() { return client_.List(kPodsResource.Namespace("default"))->items; }
  json Job() { return *client_.Get(kJobsResource.Namespace("default"), "pi"); }
  // Every Running/Pending pod exits 1 now.
  void FailLivePods() {
    for (json p : Pods()) {
      if (api::StringAt(api::ObjectAt(p, "status"), "phase", "Pending") == "Failed") continue;
      p["status"]["phase"] = "Failed";
      p["status"]["containerStatuses"] =
          json::array({{{"name", "c"},
                        {"state", {{"terminated", {{"exitCode", 1}, {"finishedAt", FormatRfc3339(clock_.Now())}}}}}}});
      ASSERT_TRUE(client_.UpdateStatus(kPodsResource.Namespace("default"), p).ok());
    }
  }
  std::vector<std::string> FailureCounts() {
    std::vector<std::string> out;
    for (const json& p : Pods()) {
      out.push_back(api::StringAt(api::ObjectAt(api::ObjectAt(p, "metadata"), "annotations"),
                                  kJobIndexFailureCountAnnotation, "-"));
    }
    return out;
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
  JobController controller_;
  std::vector<std::pair<std::string, Duration>> requeued_;
};

// The reported attack: index 0 always exits 1 with backoffLimitPerIndex 1. The Job makes
// two pods (the second after 10 s), then fails FailedIndexes with failedIndexes "0".
TEST_F(JobBackoffControllerTest, AlwaysFailingIndexStopsAfterItsLimit) {
  ASSERT_TRUE(client_.Create(kJobsResource.Namespace("default"), PerIndexJob(1, 1)).ok());
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  EXPECT_EQ(FailureCounts(), (std::vector<std::string>{"0"}));
  FailLivePods();
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  EXPECT_EQ(Pods().size(), 1u);
  ASSERT_FALSE(requeued_.empty());
  EXPECT_EQ(requeued_.back(), std::make_pair(std::string("default/pi"), Duration(seconds(10))));

  clock_.Advance(seconds(9));
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  EXPECT_EQ(Pods().size(), 1u);
  EXPECT_EQ(requeued_.back().second, Duration(seconds(1)));
  clock_.Advance(seconds(1));
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  std::vector<std::string> counts = FailureCounts();
  std::sort(counts.begin(), counts.end());
  EXPECT_EQ(counts, (std::vector<std::string>{"0", "1"}));

  FailLivePods();
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(minutes(10));
    ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  }
  EXPECT_EQ(Pods().size(), 2u);
  json job = Job();
  EXPECT_EQ(job["status"]["failedIndexes"], "0");
  EXPECT_EQ(job["status"]["failed"], 2);
  EXPECT_EQ(api::ConditionField(job, "Failed", "reason"), "FailedIndexes");
  EXPECT_EQ(api::ConditionField(job, "Failed", "message"), "Job has failed indexes");
  EXPECT_TRUE(api::IsConditionTrue(job, "Failed"));
}

// A NonIndexed Job's failed pod is replaced 10 s after it failed, the next one 20 s after.
TEST_F(JobBackoffControllerTest, ReplacementWaitsForTheJobBackoff) {
  json job = PerIndexJob(1, 0);
  job["spec"].erase("completionMode");
  job["spec"].erase("backoffLimitPerIndex");
  job["spec"]["backoffLimit"] = 6;
  ASSERT_TRUE(client_.Create(kJobsResource.Namespace("default"), job).ok());
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  ASSERT_EQ(Pods().size(), 1u);
  EXPECT_EQ(FailureCounts(), (std::vector<std::string>{"-"}));
  FailLivePods();
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  EXPECT_EQ(Pods().size(), 1u);
  EXPECT_EQ(requeued_.back().second, Duration(seconds(10)));
  clock_.Advance(seconds(10));
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  EXPECT_EQ(Pods().size(), 2u);

  FailLivePods();
  clock_.Advance(seconds(19));
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  EXPECT_EQ(Pods().size(), 2u);
  EXPECT_EQ(requeued_.back().second, Duration(seconds(1)));
  clock_.Advance(seconds(1));
  ASSERT_TRUE(controller_.Reconcile("default/pi").ok());
  EXPECT_EQ(Pods().size(), 3u);
  EXPECT_EQ(Job()["status"]["failed"], 2);
}

}  // namespace
}  // namespace berth::controllers::jobs::batchjob
