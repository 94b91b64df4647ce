// podFailurePolicy and successPolicy (job_policies.h) alone, in PlanJob, and through the
// JobController on a FakeClock; pods the controller deletes on suspend are not counted.
#include "controllers/jobs/batchjob/job_policies.h"

#include <gtest/gtest.h>

#include "api/conditions.h"
#include "client/testing/fake_client.h"
#include "controllers/jobs/batchjob/job_controller.h"
#include "controllers/jobs/batchjob/job_pods.h"

namespace berth::controllers::jobs::batchjob {
namespace {

using nlohmann::json;
using std::chrono::seconds;

const Time kNow = FakeClock().Now();

// A failed pod of Job "pf" whose containers ended with `codes` (name → exit code).
json FailedPod(const std::string& name, const std::vector<std::pair<std::string, int>>& codes,
               std::optional<int32_t> index = std::nullopt) {
  json pod = {{"metadata", {{"name", name}, {"namespace", "default"}}}, {"status", {{"phase", "Failed"}}}};
  if (index) {
    pod["metadata"]["annotations"][std::string(kJobCompletionIndexAnnotation)] = std::to_string(*index);
  }
  json statuses = json::array();
  for (const auto& [c, code] : codes) {
    statuses.push_back({{"name", c}, {"state", {{"terminated", {{"exitCode", code}}}}}});
  }
  pod["status"]["containerStatuses"] = statuses;
  return pod;
}

PodFailureFacts Facts(const json& pod) { return PodFailureFacts::FromObject(pod); }

json Policy(const char* rules) { return json{{"rules", json::parse(rules)}}; }

TEST(PodFailurePolicyTest, ExitCodeRulesMatchTheFirstNonZeroTerminatedContainer) {
  const json policy = Policy(R"([
      {"action": "Ignore", "onExitCodes": {"containerName": "side", "operator": "In", "values": [7]}},
      {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}},
      {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1, 2]}}])");
  PodFailureMatch m = MatchPodFailurePolicy(policy, "default", "p", Facts(FailedPod("p", {{"main", 42}})));
  EXPECT_EQ(m.action, PodFailureAction::kFailJob);
  EXPECT_TRUE(m.counts);
  EXPECT_EQ(m.fail_job_message,
            "Container main for pod default/p failed with exit code 42 matching FailJob rule at index 1");
  // containerName: 7 in "main" is not the side container's.
  m = MatchPodFailurePolicy(policy, "default", "p", Facts(FailedPod("p", {{"main", 7}})));
  EXPECT_EQ(m.action, PodFailureAction::kCount);  // NotIn [1, 2]
  m = MatchPodFailurePolicy(policy, "default", "p", Facts(FailedPod("p", {{"main", 0}, {"side", 7}})));
  EXPECT_EQ(m.action, PodFailureAction::kIgnore);
  EXPECT_FALSE(m.counts);
  // Exit code 0 never matches, not even NotIn; a running container has no code.
  json pod = FailedPod("p", {{"main", 0}});
  pod["status"]["containerStatuses"].push_back({{"name", "side"}, {"state", {{"running", json::object()}}}});
  m = MatchPodFailurePolicy(policy, "default", "p", Facts(pod));
  EXPECT_EQ(m.action, PodFailureAction::kNone);
  EXPECT_TRUE(m.counts);
  m = MatchPodFailurePolicy(policy, "default", "p", Facts(FailedPod("p", {{"main", 1}})));
  EXPECT_EQ(m.action, PodFailureAction::kNone);
  // Init containers are looked at after the regular ones.
  pod = FailedPod("p", {{"main", 1}});
  pod["status"]["initContainerStatuses"] =
      json::parse(R"([{"name": "init", "state": {"terminated": {"exitCode": 42}}}])");
  m = MatchPodFailurePolicy(policy, "default", "p", Facts(pod));
  EXPECT_EQ(m.fail_job_message,
            "Container init for pod default/p failed with exit code 42 matching FailJob rule at index 1");
  // No policy: counted, nothing matched.
  m = MatchPodFailurePolicy(json(), "default", "p", Facts(FailedPod("p", {{"main", 42}})));
  EXPECT_EQ(m.action, PodFailureAction::kNone);
  EXPECT_TRUE(m.counts);
}

TEST(PodFailurePolicyTest, ConditionRulesAndUnknownActions) {
  const json policy = Policy(R"([
      {"action": "Restart", "onExitCodes": {"operator": "In", "values": [3]}},
      {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
      {"action": "FailJob", "onPodConditions": [{"type": "ConfigIssue"}]},
      {"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}}])");
  json pod = FailedPod("p", {{"main", 3}});
  EXPECT_EQ(MatchPodFailurePolicy(policy, "ns", "p", Facts(pod)).action, PodFailureAction::kFailIndex);
  pod["status"]["conditions"] = json::parse(R"([{"type": "DisruptionTarget", "status": "False"}])");
  EXPECT_EQ(MatchPodFailurePolicy(policy, "ns", "p", Facts(pod)).action, PodFailureAction::kFailIndex);
  pod["status"]["conditions"] = json::parse(R"([{"type": "DisruptionTarget", "status": "True"}])");
  EXPECT_EQ(MatchPodFailurePolicy(policy, "ns", "p", Facts(pod)).action, PodFailureAction::kIgnore);
  pod["status"]["conditions"] = json::parse(R"([{"type": "ConfigIssue", "status": "True"}])");
  PodFailureMatch m = MatchPodFailurePolicy(policy, "ns", "p", Facts(pod));
  EXPECT_EQ(m.action, PodFailureAction::kFailJob);
  EXPECT_EQ(m.fail_job_message, "Pod ns/p has condition ConfigIssue matching FailJob rule at index 2");
}

TEST(SuccessPolicyTest, IndexesCountAndBoth) {
  const json policy = Policy(R"([{"succeededIndexes": "x-y"}, {"succeededIndexes": "0,2-3"},
                                 {"succeededIndexes": "4-7", "succeededCount": 2}, {"succeededCount": 5}])");
  EXPECT_EQ(MatchSuccessPolicy(policy, 8, {}), std::nullopt);
  EXPECT_EQ(MatchSuccessPolicy(policy, 8, {0, 2}), std::nullopt);
  EXPECT_EQ(MatchSuccessPolicy(policy, 8, {0, 1, 2, 3}), "Matched rules at index 1");
  EXPECT_EQ(MatchSuccessPolicy(policy, 8, {1, 5, 7}), "Matched rules at index 2");
  EXPECT_EQ(MatchSuccessPolicy(policy, 8, {0, 1, 2, 4, 6}), "Matched rules at index 2");
  EXPECT_EQ(MatchSuccessPolicy(policy, 8, {0, 1, 2, 4, 5}), "Matched rules at index 2");
  EXPECT_EQ(MatchSuccessPolicy(Policy(R"([{"succeededCount": 3}])"), 8, {0, 1, 5}), "Matched rules at index 0");
  EXPECT_EQ(MatchSuccessPolicy(json(), 8, {0, 1, 5}), std::nullopt);
}

// NonIndexed Job "pf", restartPolicy Never, with `rules` as its podFailurePolicy.
json PolicyJob(const char* rules) {
  json j = json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "pf", "namespace": "default", "uid": "u1"},
    "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 0,
             "template": {"spec": {"restartPolicy": "Never",
                                   "containers": [{"name": "main", "image": "busybox"}]}}}})");
  if (rules != nullptr) j["spec"]["podFailurePolicy"] = Policy(rules);
  return j;
}

ObservedPod Observed(const json& pod, Time finish = Time{}) {
  ObservedPod p = ObservedPod::FromObject(pod);
  p.finish_time = finish;
  return p;
}

TEST(JobPolicyPlanTest, FailJobRuleFailsTheJobWithItsMessage) {
  json job = PolicyJob(R"([{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}])");
  job["spec"]["backoffLimit"] = 6;
  json running = {{"metadata", {{"name", "pf-b"}}}, {"status", {{"phase", "Running"}}}};
  JobPlan plan = PlanJob(job, {Observed(FailedPod("pf-a", {{"main", 42}})), Observed(running)}, kNow);
  ASSERT_EQ(plan.conditions.size(), 1u);  // FailureTarget while pf-b is being deleted
  EXPECT_EQ(plan.conditions[0].type, "FailureTarget");
  EXPECT_EQ(plan.conditions[0].reason, "PodFailurePolicy");
  EXPECT_EQ(plan.conditions[0].message,
            "Container main for pod default/pf-a failed with exit code 42 matching FailJob rule at index 0");
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"pf-b"}));
  EXPECT_FALSE(plan.uncounted_deletions);
  EXPECT_EQ(plan.failed, 1);
  // Once nothing else is left: Failed with the FailureTarget's reason and message.
  api::SetCondition(&job, plan.conditions[0], kNow);
  plan = PlanJob(job, {Observed(FailedPod("pf-a", {{"main", 42}}))}, kNow);
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[1].type, "Failed");
  EXPECT_EQ(plan.conditions[1].reason, "PodFailurePolicy");
  EXPECT_EQ(plan.conditions[1].message, plan.conditions[0].message);
  // Another exit code is counted against backoffLimit 6 instead.
  plan = PlanJob(PolicyJob(R"([{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}])"),
                 {Observed(FailedPod("pf-a", {{"main", 1}}))}, kNow);
  EXPECT_EQ(plan.conditions[0].reason, "BackoffLimitExceeded");  // backoffLimit 0 here
}

TEST(JobPolicyPlanTest, IgnoredFailuresDoNotCountAndAreReplaced) {
  json job = PolicyJob(R"([{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [143]}},
                           {"action": "Count", "onPodConditions": [{"type": "DisruptionTarget"}]}])");
  JobPlan plan = PlanJob(job, {Observed(FailedPod("pf-a", {{"main", 143}}), kNow - seconds(10))}, kNow);
  EXPECT_TRUE(plan.conditions.empty());
  EXPECT_EQ(plan.failed, 0);
  EXPECT_EQ(plan.create_count, 1);  // after the 10 s pod-failure backoff
  // Without the Ignore rule the same pod fails the Job (backoffLimit 0).
  plan = PlanJob(PolicyJob(nullptr), {Observed(FailedPod("pf-a", {{"main", 143}}), kNow - seconds(10))}, kNow);
  EXPECT_EQ(plan.failed, 1);
  EXPECT_EQ(plan.conditions[0].reason, "BackoffLimitExceeded");
}

TEST(JobPolicyPlanTest, FailIndexAndIgnoreWithBackoffLimitPerIndex) {
  json job = PolicyJob(R"([{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [3]}},
                           {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [143]}}])");
  job["spec"].erase("backoffLimit");
  job["spec"]["completionMode"] = "Indexed";
  job["spec"]["completions"] = 3;
  job["spec"]["parallelism"] = 3;
  job["spec"]["backoffLimitPerIndex"] = 2;
  json ignored = FailedPod("pf-1-a", {{"main", 143}}, 1);
  ignored["metadata"]["annotations"][std::string(kJobIndexFailureCountAnnotation)] = "1";
  ignored["metadata"]["annotations"][std::string(kJobIndexIgnoredFailureCountAnnotation)] = "4";
  json running = {
      {"metadata", {{"name", "pf-2-a"}, {"annotations", {{"batch.kubernetes.io/job-completion-index", "2"}}}}},
      {"status", {{"phase", "Running"}}}};
  // Each index's last pod finished long ago: no backoff holds index 1 back.
  JobPlan plan = PlanJob(job,
                         {Observed(FailedPod("pf-0-a", {{"main", 3}}, 0), kNow - std::chrono::hours(1)),
                          Observed(ignored, kNow - std::chrono::hours(1)), Observed(running)},
                         kNow);
  EXPECT_EQ(plan.failed_indexes, "0");  // FailIndex at its first failure
  EXPECT_EQ(plan.failed, 1);            // index 1's ignored failure is not counted
  EXPECT_EQ(plan.create_indexes, (std::vector<int32_t>{1}));
  ASSERT_EQ(plan.create_failure_counts.size(), 1u);
  EXPECT_EQ(plan.create_failure_counts[0], (IndexFailureCounts{1, 5}));  // ignored grows, failed kept
  EXPECT_TRUE(plan.conditions.empty());
}

TEST(JobPolicyPlanTest, SuccessPolicyCompletesAndDeletesTheRest) {
  json job = PolicyJob(nullptr);
  job["spec"]["completionMode"] = "Indexed";
  job["spec"]["completions"] = 4;
  job["spec"]["parallelism"] = 4;
  job["spec"]["successPolicy"] = Policy(R"([{"succeededIndexes": "0", "succeededCount": 1}])");
  auto pod = [](const char* name, int index, const char* phase) {
    return Observed(
        json{{"metadata",
              {{"name", name}, {"annotations", {{"batch.kubernetes.io/job-completion-index", std::to_string(index)}}}}},
             {"status", {{"phase", phase}}}});
  };
  JobPlan plan = PlanJob(job, {pod("pf-1-a", 1, "Succeeded"), pod("pf-2-a", 2, "Running")}, kNow);
  EXPECT_TRUE(plan.conditions.empty());
  plan = PlanJob(job, {pod("pf-0-a", 0, "Succeeded"), pod("pf-2-a", 2, "Running")}, kNow);
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].type, "SuccessCriteriaMet");
  EXPECT_EQ(plan.conditions[0].reason, "SuccessPolicy");
  EXPECT_EQ(plan.conditions[0].message, "Matched rules at index 0");
  EXPECT_EQ(plan.delete_pods, (std::vector<std::string>{"pf-2-a"}));
  EXPECT_TRUE(plan.create_indexes.empty());
  api::SetCondition(&job, plan.conditions[0], kNow);
  plan = PlanJob(job, {pod("pf-0-a", 0, "Succeeded")}, kNow);
  ASSERT_EQ(plan.conditions.size(), 2u);
  EXPECT_EQ(plan.conditions[1].type, "Complete");
  EXPECT_EQ(plan.conditions[1].reason, "SuccessPolicy");
  EXPECT_EQ(plan.conditions[1].message, "Matched rules at index 0");
}

class JobPolicyControllerTest : public ::testing::Test {
 protected:
  JobPolicyControllerTest() : client_(clock_), controller_(client_, clock_) {}
  std::vector<json> Pods() { return client_.List(kPodsResource.Namespace("default"))->items; }
  json Job() { return *client_.Get(kJobsResource.Namespace("default"), "pf"); }
  void Reconcile() { ASSERT_TRUE(controller_.Reconcile("default/pf").ok()); }
  // Holds every pod with a finalizer, so a delete only marks it (as the API server does for
  // a pod whose node agent still has to stop it).
  void HoldPods() {
    for (json p : Pods()) {
      p["metadata"]["finalizers"] = json::array({"test.berth.dev/hold"});
      ASSERT_TRUE(client_.Update(kPodsResource.Namespace("default"), p).ok());
    }
  }
  // Every pod's container exits with `code` now (Failed), and held pods being deleted go.
  void EndPods(int code) {
    for (json p : Pods()) {
      if (api::StringAt(api::ObjectAt(p, "status"), "phase") == "Failed") continue;
      p["status"]["phase"] = "Failed";
      p["status"]["containerStatuses"] = json::array(
          {{{"name", "main"},
            {"state", {{"terminated", {{"exitCode", code}, {"finishedAt", FormatRfc3339(clock_.Now())}}}}}}});
      ASSERT_TRUE(client_.UpdateStatus(kPodsResource.Namespace("default"), p).ok());
    }
  }
  void ReleaseDeletedPods() {
    for (json p : Pods()) {
      if (!api::HasField(p["metadata"], "deletionTimestamp")) continue;
      p["metadata"]["finalizers"] = json::array();
      ASSERT_TRUE(client_.Update(kPodsResource.Namespace("default"), p).ok());
    }
  }
  void SetSuspend(bool suspend) {
    json job = Job();
    job["spec"]["suspend"] = suspend;
    ASSERT_TRUE(client_.Update(kJobsResource.Namespace("default"), job).ok());
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
  JobController controller_;
};

// The README's Kueue case: torchrun exits 1 on SIGTERM. Suspended and resumed 8 times
// (backoffLimit 6), the Job never fails and counts no failure.
TEST_F(JobPolicyControllerTest, PodsDeletedBySuspensionDoNotCountWhateverTheyExitWith) {
  json job = PolicyJob(nullptr);
  job["spec"]["backoffLimit"] = 6;
  ASSERT_TRUE(client_.Create(kJobsResource.Namespace("default"), job).ok());
  for (int cycle = 0; cycle < 8; ++cycle) {
    Reconcile();
    ASSERT_EQ(Pods().size(), 1u) << cycle;
    HoldPods();
    SetSuspend(true);
    Reconcile();  // deletes the pod: marked, then deletionTimestamp
    json pod = Pods().at(0);
    EXPECT_EQ(api::StringAt(api::ObjectAt(pod["metadata"], "annotations"), kRemovedByJobControllerAnnotation), "true");
    EndPods(1);  // SIGTERM → exit 1
    Reconcile();
    EXPECT_EQ(Job()["status"]["failed"], 0) << cycle;
    ReleaseDeletedPods();
    Reconcile();
    EXPECT_TRUE(Pods().empty());
    clock_.Advance(seconds(1));
    SetSuspend(false);
  }
  Reconcile();
  json got = Job();
  EXPECT_EQ(got["status"]["failed"], 0);
  EXPECT_FALSE(api::IsConditionTrue(got, "Failed"));
  EXPECT_FALSE(api::IsConditionTrue(got, "FailureTarget"));
  EXPECT_EQ(Pods().size(), 1u);
  // A pod that fails on its own still counts.
  EndPods(1);
  Reconcile();
  EXPECT_EQ(Job()["status"]["failed"], 1);
}

TEST_F(JobPolicyControllerTest, FailJobWritesFailureTargetThenFailed) {
  ASSERT_TRUE(client_
                  .Create(kJobsResource.Namespace("default"),
                          PolicyJob(R"([{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}])"))
                  .ok());
  Reconcile();
  ASSERT_EQ(Pods().size(), 1u);
  const std::string pod = api::Name(Pods().at(0));
  EndPods(42);
  Reconcile();
  json got = Job();
  const json& conditions = got["status"]["conditions"];
  ASSERT_EQ(conditions.size(), 2u);
  EXPECT_EQ(conditions[0]["type"], "FailureTarget");
  EXPECT_EQ(conditions[1]["type"], "Failed");
  EXPECT_EQ(conditions[1]["reason"], "PodFailurePolicy");
  EXPECT_EQ(conditions[1]["message"],
            "Container main for pod default/" + pod + " failed with exit code 42 matching FailJob rule at index 0");
  EXPECT_EQ(got["status"]["failed"], 1);
}

}  // namespace
}  // namespace berth::controllers::jobs::batchjob
