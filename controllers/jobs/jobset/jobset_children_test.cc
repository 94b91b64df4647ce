#include "controllers/jobs/jobset/jobset_children.h"

#include <gtest/gtest.h>

namespace berth::controllers::jobs::jobset {
namespace {

using nlohmann::json;

json Sample() {
  return json::parse(R"({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "js", "namespace": "ns", "uid": "js-uid"},
    "spec": {"replicatedJobs": [
      {"name": "driver", "replicas": 1, "template": {"spec": {"parallelism": 1, "completions": 1,
        "template": {"spec": {"containers": [{"name": "c"}]}}}}},
      {"name": "workers", "replicas": 2, "template": {"spec": {"parallelism": 4, "completions": 4,
        "template": {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c"}]}}}}}]}})");
}

json ChildStatus(json job, const std::string& cond, const std::string& reason = "", const std::string& time = "") {
  job["status"]["conditions"] = json::array({{{"type", cond}, {"status", "True"}, {"reason", reason},
                                              {"message", "m"}, {"lastTransitionTime", time}}});
  return job;
}

TEST(JobSetChildrenTest, ChildJobLabelsAndNames) {
  std::vector<json> jobs = ChildJobs(Sample());
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0]["metadata"]["name"], "js-driver-0");
  EXPECT_EQ(jobs[2]["metadata"]["name"], "js-workers-1");
  const json& l = jobs[2]["metadata"]["labels"];
  EXPECT_EQ(l["jobset.sigs.k8s.io/jobset-name"], "js");
  EXPECT_EQ(l["jobset.sigs.k8s.io/jobset-uid"], "js-uid");
  EXPECT_EQ(l["jobset.sigs.k8s.io/replicatedjob-name"], "workers");
  EXPECT_EQ(l["jobset.sigs.k8s.io/replicatedjob-replicas"], "2");
  EXPECT_EQ(l["jobset.sigs.k8s.io/global-replicas"], "3");
  EXPECT_EQ(l["jobset.sigs.k8s.io/job-index"], "1");
  EXPECT_EQ(l["jobset.sigs.k8s.io/job-global-index"], "2");
  EXPECT_EQ(l["jobset.sigs.k8s.io/restart-attempt"], "0");
  EXPECT_EQ(l["jobset.sigs.k8s.io/group-name"], "default");
  EXPECT_EQ(l["jobset.sigs.k8s.io/job-key"], JobKey("ns", "js-workers-1"));
  EXPECT_EQ(jobs[2]["metadata"]["annotations"], l);
  const json& pod = jobs[2]["spec"]["template"];
  EXPECT_EQ(pod["metadata"]["labels"]["app"], "w");
  EXPECT_EQ(pod["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"], "1");
  EXPECT_EQ(pod["spec"]["subdomain"], "js");
  EXPECT_EQ(jobs[2]["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(jobs[2]["spec"]["suspend"], false);
  EXPECT_EQ(jobs[2]["metadata"]["ownerReferences"][0]["kind"], "JobSet");
  // SHA-1 of "ns/js-workers-1" is 40 hex digits, and differs per job.
  EXPECT_EQ(JobKey("ns", "js-workers-1").size(), 40u);
  EXPECT_NE(JobKey("ns", "js-workers-1"), JobKey("ns", "js-workers-0"));
  EXPECT_EQ(JobKey("", "abc"), "06f74e7966946c1647930a899440755839f74e3e");  // sha1("/abc")
}

TEST(JobSetChildrenTest, HeadlessServiceAndPodSets) {
  auto svc = HeadlessService(Sample());
  ASSERT_TRUE(svc.has_value());
  EXPECT_EQ((*svc)["metadata"]["name"], "js");
  EXPECT_EQ((*svc)["spec"], json::parse(R"({"clusterIP":"None","publishNotReadyAddresses":true,
      "selector":{"jobset.sigs.k8s.io/jobset-name":"js"}})"));
  json no_dns = Sample();
  no_dns["spec"]["network"] = {{"enableDNSHostnames", false}};
  EXPECT_FALSE(HeadlessService(no_dns).has_value());
  EXPECT_FALSE(ChildJob(no_dns, 0, 0)["spec"]["template"]["spec"].contains("subdomain"));
  std::vector<kueue::PodSet> ps = PodSets(Sample());
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[1].name, "workers");
  EXPECT_EQ(ps[1].count, 8);
}

TEST(JobSetChildrenTest, CreatesMissingJobsAndRespectsDependsOn) {
  json js = Sample();
  js["spec"]["replicatedJobs"][1]["dependsOn"] = json::parse(R"([{"name":"driver","status":"Ready"}])");
  JobSetPlan plan = PlanJobSet(js, {});
  ASSERT_EQ(plan.create_jobs.size(), 1u);
  EXPECT_EQ(plan.create_jobs[0]["metadata"]["name"], "js-driver-0");
  json driver = ChildJob(js, 0, 0);
  driver["status"] = {{"ready", 1}, {"active", 1}};
  plan = PlanJobSet(js, {driver});
  ASSERT_EQ(plan.create_jobs.size(), 2u);
  EXPECT_EQ(plan.replicated_jobs_status[0], json::parse(R"({"name":"driver","ready":1,"succeeded":0,"failed":0,
      "active":1,"suspended":0})"));
}

// Hostile sizes (schema-valid): a podSet count that would overflow int32 saturates (it wrapped
// to the number of replicas and was admitted on that much quota), and one reconcile creates
// at most kMaxChildJobsPerSync Jobs (2^31−1 replicas were all built in memory first).
TEST(JobSetChildrenTest, HugeSizesSaturateAndAreCreatedInBatches) {
  json js = Sample();
  js["spec"]["replicatedJobs"][1]["replicas"] = 4;
  js["spec"]["replicatedJobs"][1]["template"]["spec"]["parallelism"] = 1073741825;
  js["spec"]["replicatedJobs"][1]["template"]["spec"].erase("completions");
  EXPECT_EQ(PodSets(js)[1].count, INT32_MAX);
  js["spec"]["replicatedJobs"][1]["replicas"] = INT32_MAX;
  const JobSetPlan plan = PlanJobSet(js, {});
  EXPECT_EQ(plan.create_jobs.size(), kMaxChildJobsPerSync);
}

// A dependsOn naming no replicatedJob (refused on create; here as stored before that check)
// holds back only the replicatedJob that names it; before, reconcile threw a json type_error.
TEST(JobSetChildrenTest, ADependencyOnAMissingReplicatedJobIsNeverSatisfied) {
  json js = Sample();
  js["spec"]["replicatedJobs"][1]["dependsOn"] = json::parse(R"([{"name":"nobody","status":"Complete"}])");
  JobSetPlan plan;
  ASSERT_NO_THROW(plan = PlanJobSet(js, {}));
  ASSERT_EQ(plan.create_jobs.size(), 1u);
  EXPECT_EQ(plan.create_jobs[0]["metadata"]["name"], "js-driver-0");
}

TEST(JobSetChildrenTest, NoFailurePolicyFailsOnFirstFailedJob) {
  json js = Sample();
  std::vector<json> jobs = ChildJobs(js);
  jobs[2] = ChildStatus(jobs[2], "Failed", "BackoffLimitExceeded", "2026-01-01T00:00:05Z");
  jobs[1] = ChildStatus(jobs[1], "Failed", "BackoffLimitExceeded", "2026-01-01T00:00:01Z");
  JobSetPlan plan = PlanJobSet(js, jobs);
  EXPECT_EQ(plan.terminal_state, "Failed");
  ASSERT_EQ(plan.conditions.size(), 1u);
  EXPECT_EQ(plan.conditions[0].reason, "FailedJobs");
  EXPECT_EQ(plan.conditions[0].message,
            "jobset failed due to one or more job failures (first failed job: js-workers-0)");
  EXPECT_EQ(plan.delete_jobs, (std::vector<std::string>{"js-driver-0"}));
}

TEST(JobSetChildrenTest, RestartUntilMaxRestarts) {
  json js = Sample();
  js["spec"]["failurePolicy"] = {{"maxRestarts", 1}};
  std::vector<json> jobs = ChildJobs(js);
  jobs[0] = ChildStatus(jobs[0], "Failed", "BackoffLimitExceeded");
  JobSetPlan plan = PlanJobSet(js, jobs);
  EXPECT_EQ(plan.restarts, 1);
  EXPECT_EQ(plan.restarts_count_towards_max, 1);
  EXPECT_TRUE(plan.terminal_state.empty());
  EXPECT_EQ(plan.delete_jobs, (std::vector<std::string>{"js-driver-0", "js-workers-0", "js-workers-1"}));
  ASSERT_TRUE(plan.event.has_value());
  EXPECT_EQ(plan.event->reason, "Restarting");

  // Next reconcile: the old attempt is still there → deleted, nothing created (departure 3).
  WriteStatus(plan, &js);
  plan = PlanJobSet(js, {jobs[1]});
  EXPECT_EQ(plan.delete_jobs, (std::vector<std::string>{"js-workers-0"}));
  EXPECT_TRUE(plan.create_jobs.empty());
  // Once gone, the new attempt is created with restart-attempt 1.
  plan = PlanJobSet(js, {});
  ASSERT_EQ(plan.create_jobs.size(), 3u);
  EXPECT_EQ(plan.create_jobs[0]["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"], "1");
  // A failure of attempt 1 reaches maxRestarts.
  json failed = ChildStatus(ChildJob(js, 0, 0), "Failed", "BackoffLimitExceeded");
  plan = PlanJobSet(js, {failed});
  EXPECT_EQ(plan.terminal_state, "Failed");
  EXPECT_EQ(plan.conditions[0].reason, "ReachedMaxRestarts");
  EXPECT_EQ(plan.conditions[0].message,
            "jobset failed due to reaching max number of restarts (first failed job: js-driver-0)");
}

TEST(JobSetChildrenTest, FailurePolicyRules) {
  json js = Sample();
  js["spec"]["failurePolicy"] = json::parse(R"({"maxRestarts": 3, "rules": [
      {"action": "FailJobSet", "onJobFailureReasons": ["PodFailurePolicy"]},
      {"name": "ignore-workers", "action": "RestartJobSetAndIgnoreMaxRestarts", "targetReplicatedJobs": ["workers"]}]})");
  std::vector<json> jobs = ChildJobs(js);
  std::vector<json> a = jobs;
  a[1] = ChildStatus(a[1], "Failed", "BackoffLimitExceeded");
  JobSetPlan plan = PlanJobSet(js, a);
  EXPECT_EQ(plan.restarts, 1);
  EXPECT_EQ(plan.restarts_count_towards_max, 0);
  EXPECT_EQ(plan.conditions[0].reason, "FailurePolicy_ignore-workers");
  std::vector<json> b = jobs;
  b[0] = ChildStatus(b[0], "Failed", "PodFailurePolicy");
  plan = PlanJobSet(js, b);
  EXPECT_EQ(plan.terminal_state, "Failed");
  EXPECT_EQ(plan.conditions[0].reason, "FailJobSetFailurePolicyAction");
}

TEST(JobSetChildrenTest, SuccessPolicy) {
  json js = Sample();
  std::vector<json> jobs = ChildJobs(js);
  for (json& j : jobs) j = ChildStatus(j, "Complete");
  JobSetPlan plan = PlanJobSet(js, jobs);
  EXPECT_EQ(plan.terminal_state, "Completed");
  EXPECT_EQ(plan.conditions[0].reason, "AllJobsCompleted");
  EXPECT_EQ(plan.conditions[0].message, "jobset completed successfully");

  js["spec"]["successPolicy"] = json::parse(R"({"operator":"All","targetReplicatedJobs":["driver"]})");
  jobs = ChildJobs(js);
  jobs[0] = ChildStatus(jobs[0], "Complete");
  plan = PlanJobSet(js, jobs);
  EXPECT_EQ(plan.terminal_state, "Completed");
  EXPECT_EQ(plan.delete_jobs, (std::vector<std::string>{"js-workers-0", "js-workers-1"}));
}

// A JobSet stored before admission checked its targets (api/jobset_webhook.h): nothing
// throws, its Jobs are created and it completes or fails as upstream's controller would.
TEST(JobSetChildrenTest, StoredJobSetNamingMissingTargets) {
  json js = Sample();
  js["spec"]["successPolicy"] = json::parse(R"({"operator":"All","targetReplicatedJobs":["nobody"]})");
  js["spec"]["failurePolicy"] = json::parse(R"({"maxRestarts": 1, "rules": [
      {"name": "ghostFails", "action": "FailJobSet", "targetReplicatedJobs": ["ghost"]}]})");
  js["spec"]["coordinator"] = json::parse(R"({"replicatedJob":"ghost","jobIndex":7,"podIndex":3})");
  JobSetPlan plan = PlanJobSet(js, {});
  EXPECT_EQ(plan.terminal_state, "");  // no Job has succeeded yet
  ASSERT_EQ(plan.create_jobs.size(), 3u);
  // The coordinator label names the pod it was given, which no Job has.
  EXPECT_EQ(plan.create_jobs[0]["metadata"]["labels"]["jobset.sigs.k8s.io/coordinator"], "js-ghost-7-3.js");

  std::vector<json> jobs = ChildJobs(js);
  plan = PlanJobSet(js, jobs);
  EXPECT_EQ(plan.terminal_state, "");
  EXPECT_TRUE(plan.create_jobs.empty());
  EXPECT_TRUE(plan.delete_jobs.empty());

  // The rule targeting "ghost" matches no failed Job: the default RestartJobSet.
  std::vector<json> failed = jobs;
  failed[1] = ChildStatus(failed[1], "Failed", "BackoffLimitExceeded");
  plan = PlanJobSet(js, failed);
  EXPECT_EQ(plan.terminal_state, "");
  EXPECT_EQ(plan.restarts, 1);
  EXPECT_EQ(plan.conditions[0].reason, "DefaultFailurePolicy");

  // All over no replicatedJob expects no Job: the first success completes the JobSet
  // (upstream numJobsExpectedToSucceed is 0), and the others are finished.
  jobs[1] = ChildStatus(jobs[1], "Complete");
  plan = PlanJobSet(js, jobs);
  EXPECT_EQ(plan.terminal_state, "Completed");
  EXPECT_EQ(plan.delete_jobs, (std::vector<std::string>{"js-driver-0", "js-workers-1"}));
}

TEST(JobSetChildrenTest, SuspendAndResume) {
  json js = Sample();
  std::vector<json> jobs = ChildJobs(js);
  js["spec"]["suspend"] = true;
  JobSetPlan plan = PlanJobSet(js, jobs);
  ASSERT_EQ(plan.update_jobs.size(), 3u);
  EXPECT_EQ(plan.update_jobs[0]["spec"]["suspend"], true);
  EXPECT_EQ(plan.conditions.back().reason, "SuspendedJobs");

  // Resume: Kueue's nodeSelector on the JobSet template flows into the suspended Jobs.
  for (json& j : jobs) j["spec"]["suspend"] = true;
  js["spec"]["suspend"] = false;
  js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {{"pool", "a"}};
  js["status"]["conditions"] = json::parse(R"([{"type":"Suspended","status":"True"}])");
  plan = PlanJobSet(js, jobs);
  ASSERT_EQ(plan.update_jobs.size(), 3u);
  EXPECT_EQ(plan.update_jobs[1]["spec"]["suspend"], false);
  EXPECT_EQ(plan.update_jobs[1]["spec"]["template"]["spec"]["nodeSelector"], json::parse(R"({"pool":"a"})"));
  EXPECT_EQ(plan.conditions.back().status, "False");
  EXPECT_EQ(plan.conditions.back().reason, "ResumeJobs");
  EXPECT_EQ(plan.conditions.back().message, "jobset is resumed");
}

TEST(JobSetChildrenTest, StartupPolicyInOrder) {
  json js = Sample();
  js["spec"]["startupPolicy"] = {{"startupPolicyOrder", "InOrder"}};
  JobSetPlan plan = PlanJobSet(js, {});
  ASSERT_EQ(plan.create_jobs.size(), 1u);
  EXPECT_EQ(plan.create_jobs[0]["metadata"]["name"], "js-driver-0");
}

TEST(JobSetChildrenTest, Defaults) {
  json js = Sample();
  js["spec"]["replicatedJobs"][0].erase("replicas");
  ApplyDefaults(&js);
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["replicas"], 1);
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["template"]["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["restartPolicy"], "OnFailure");
  EXPECT_EQ(js["spec"]["network"]["enableDNSHostnames"], true);
  EXPECT_EQ(js["spec"]["successPolicy"]["operator"], "All");
}

}  // namespace
}  // namespace berth::controllers::jobs::jobset
