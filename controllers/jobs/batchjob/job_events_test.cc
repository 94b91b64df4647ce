// The Events the Job controller records (job_controller.h step 4), through the
// JobController on a FakeClock, as kubectl describe job shows them.
#include <algorithm>
#include <gtest/gtest.h>
#include <tuple>

#include "client/testing/fake_client.h"
#include "controllers/jobs/batchjob/job_controller.h"
#include "controllers/jobs/batchjob/job_pods.h"
#include "client/event_recorder.h"

namespace berth::controllers::jobs::batchjob {
namespace {

using nlohmann::json;

const client::GroupVersionResource kEvents{"", "v1", "events"};

json SimpleJob(int backoff_limit) {
  json j = json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "j", "namespace": "default"},
    "spec": {"template": {"spec": {"restartPolicy": "Never",
                                   "containers": [{"name": "c", "image": "busybox"}]}}}})");
  j["spec"]["backoffLimit"] = backoff_limit;
  return j;
}

class JobEventsTest : public ::testing::Test {
 protected:
  JobEventsTest() : client_(clock_), controller_(client_, clock_) {}
  std::vector<json> Pods() { return client_.List(kPodsResource.Namespace("default"))->items; }
  // (type, reason, message, count) of every Event, in creation order.
  std::vector<std::tuple<std::string, std::string, std::string, int>> Events() {
    berth::client::EventRecorder::FlushAll();
    std::vector<json> items = client_.List(kEvents.Namespace("default"))->items;
    std::sort(items.begin(), items.end(), [](const json& a, const json& b) {
      return std::stoll(api::ResourceVersion(a)) < std::stoll(api::ResourceVersion(b));
    });
    std::vector<std::tuple<std::string, std::string, std::string, int>> out;
    for (const json& e : items) {
      EXPECT_EQ(e["involvedObject"]["kind"], "Job");
      EXPECT_EQ(e["involvedObject"]["name"], "j");
      EXPECT_EQ(e["source"]["component"], "job-controller");
      out.emplace_back(e["type"], e["reason"], e["message"], e["count"].get<int>());
    }
    return out;
  }
  void SetPhases(const std::string& phase) {
    for (json p : Pods()) {
      p["status"]["phase"] = phase;
      ASSERT_TRUE(client_.UpdateStatus(kPodsResource.Namespace("default"), p).ok());
    }
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
  JobController controller_;
};

TEST_F(JobEventsTest, SuccessfulCreateThenCompletedOnce) {
  ASSERT_TRUE(client_.Create(kJobsResource.Namespace("default"), SimpleJob(6)).ok());
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());
  ASSERT_EQ(Pods().size(), 1u);
  const std::string pod = api::Name(Pods()[0]);
  SetPhases("Succeeded");
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());  // SuccessCriteriaMet
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());  // Complete
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());  // nothing new
  EXPECT_EQ(Events(), (std::vector<std::tuple<std::string, std::string, std::string, int>>{
                          {"Normal", "SuccessfulCreate", "Created pod: " + pod, 1},
                          {"Normal", "Completed", "Job completed", 1},
                      }));
}

TEST_F(JobEventsTest, BackoffLimitExceededIsAWarningWithTheConditionMessage) {
  ASSERT_TRUE(client_.Create(kJobsResource.Namespace("default"), SimpleJob(0)).ok());
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());
  const std::string pod = api::Name(Pods()[0]);
  SetPhases("Failed");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(controller_.Reconcile("default/j").ok());
  EXPECT_EQ(Events(), (std::vector<std::tuple<std::string, std::string, std::string, int>>{
                          {"Normal", "SuccessfulCreate", "Created pod: " + pod, 1},
                          {"Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit", 1},
                      }));
}

TEST_F(JobEventsTest, SuspendDeletesWithSuccessfulDeleteAndResumeIsRecorded) {
  ASSERT_TRUE(client_.Create(kJobsResource.Namespace("default"), SimpleJob(6)).ok());
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());
  const std::string first = api::Name(Pods()[0]);
  json job = *client_.Get(kJobsResource.Namespace("default"), "j");
  job["spec"]["suspend"] = true;
  ASSERT_TRUE(client_.Update(kJobsResource.Namespace("default"), job).ok());
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());
  (void)client_.Delete(kPodsResource.Namespace("default"), first);  // gone, if the fake kept it
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());
  job = *client_.Get(kJobsResource.Namespace("default"), "j");
  job["spec"]["suspend"] = false;
  ASSERT_TRUE(client_.Update(kJobsResource.Namespace("default"), job).ok());
  ASSERT_TRUE(controller_.Reconcile("default/j").ok());
  ASSERT_EQ(Pods().size(), 1u);
  const std::string second = api::Name(Pods()[0]);
  EXPECT_EQ(Events(), (std::vector<std::tuple<std::string, std::string, std::string, int>>{
                          {"Normal", "SuccessfulCreate", "Created pod: " + first, 1},
                          {"Normal", "SuccessfulDelete", "Deleted pod: " + first, 1},
                          {"Normal", "Suspended", "Job suspended", 1},
                          {"Normal", "SuccessfulCreate", "Created pod: " + second, 1},
                          {"Normal", "Resumed", "Job resumed", 1},
                      }));
}

}  // namespace
}  // namespace berth::controllers::jobs::batchjob
