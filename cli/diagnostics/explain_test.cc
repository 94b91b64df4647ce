// Explain over a FakeClient holding each stuck state explain.h diagnoses (not
// admitted, admitted but unplaceable, the queue name written as an annotation),
// built from the objects Kueue, the job controllers and the scheduler would have
// written.
#include "cli/diagnostics/explain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/testing/fake_client.h"

namespace berth::cli::diagnostics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

api::Object Condition(const std::string& type, const std::string& status, const std::string& reason,
                      const std::string& message, const std::string& when = "2026-01-01T00:00:10Z") {
  return {{"type", type}, {"status", status}, {"reason", reason}, {"message", message}, {"lastTransitionTime", when}};
}

class ExplainTest : public ::testing::Test {
 protected:
  ExplainTest() : client_(clock_) {}

  api::Object Create(const client::GroupVersionResource& gvr, const std::string& ns, api::Object obj) {
    auto res = client_.Create(gvr.Namespace(ns), obj);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    clock_.Advance(std::chrono::seconds(1));
    return res.ok() ? res.value() : api::Object();
  }

  // ResourceFlavor default-flavor, ClusterQueue cluster-queue (cpu nominalQuota as given, flavor as
  // given), LocalQueue team-a/user-queue.
  void Queues(const std::string& cpu_quota, const std::string& flavor = "default-flavor",
              api::Object preemption = api::Object::object(),
              api::Object namespace_selector = api::Object::object()) {
    Create(resources::kResourceFlavors, "", {{"kind", "ResourceFlavor"}, {"metadata", {{"name", "default-flavor"}}}});
    api::Object cq = {
        {"kind", "ClusterQueue"},
        {"metadata", {{"name", "cluster-queue"}}},
        {"spec",
         {{"namespaceSelector", namespace_selector},
          {"preemption", preemption},
          {"resourceGroups",
           {{{"coveredResources", {"cpu"}},
             {"flavors", {{{"name", flavor}, {"resources", {{{"name", "cpu"}, {"nominalQuota", cpu_quota}}}}}}}}}}}},
        {"status",
         {{"conditions", {flavor == "default-flavor"
                              ? Condition("Active", "True", "Ready", "Can admit new workloads")
                              : Condition("Active", "False", "FlavorNotFound",
                                          "Can't admit new workloads: references missing ResourceFlavor(s): " +
                                              flavor + ".")}}}}};
    Create(resources::kClusterQueues, "", cq);
    Create(resources::kLocalQueues, "team-a",
           {{"kind", "LocalQueue"},
            {"metadata", {{"name", "user-queue"}, {"namespace", "team-a"}}},
            {"spec", {{"clusterQueue", "cluster-queue"}}}});
  }

  // ResourceFlavor default-flavor (with `flavor_spec`), ClusterQueue cluster-queue covering one
  // resource with the given nominalQuota (no status written), LocalQueue team-a/user-queue.
  void SingleResourceQueues(const std::string& resource, const std::string& quota,
                            api::Object flavor_spec = api::Object::object()) {
    api::Object rf = {{"kind", "ResourceFlavor"}, {"metadata", {{"name", "default-flavor"}}}};
    if (!flavor_spec.empty()) rf["spec"] = flavor_spec;
    Create(resources::kResourceFlavors, "", rf);
    Create(resources::kClusterQueues, "",
           {{"kind", "ClusterQueue"},
            {"metadata", {{"name", "cluster-queue"}}},
            {"spec",
             {{"namespaceSelector", api::Object::object()},
              {"resourceGroups",
               {{{"coveredResources", {resource}},
                 {"flavors", {{{"name", "default-flavor"},
                               {"resources", {{{"name", resource}, {"nominalQuota", quota}}}}}}}}}}}}});
    Create(resources::kLocalQueues, "team-a",
           {{"kind", "LocalQueue"},
            {"metadata", {{"name", "user-queue"}, {"namespace", "team-a"}}},
            {"spec", {{"clusterQueue", "cluster-queue"}}}});
  }

  // A batch Job labelled for user-queue.
  api::Object Job(const std::string& name, const std::string& cpu) {
    return Create(resources::kJobs, "team-a",
                  {{"apiVersion", "batch/v1"},
                   {"kind", "Job"},
                   {"metadata",
                    {{"name", name}, {"namespace", "team-a"}, {"labels", {{kQueueNameLabel, "user-queue"}}}}},
                   {"spec", {{"template", PodTemplate(cpu)}}}});
  }

  static api::Object PodTemplate(const std::string& cpu) {
    return {{"spec",
             {{"containers", {{{"name", "main"}, {"resources", {{"requests", {{"cpu", cpu}}}}}}}}}}};
  }

  // The Workload Kueue creates for `job`; admitted (with the default flavor) when `admitted`.
  api::Object Workload(const api::Object& job, const std::string& cpu, bool admitted, int priority = 0) {
    return Create(resources::kWorkloads, "team-a", WorkloadObject(job, cpu, admitted, priority));
  }
  static api::Object WorkloadObject(const api::Object& job, const std::string& cpu, bool admitted, int priority = 0) {
    const std::string name = "job-" + api::Name(job) + "-1a2b3";
    api::Object wl = {
        {"apiVersion", "kueue.x-k8s.io/v1beta2"},
        {"kind", "Workload"},
        {"metadata",
         {{"name", name},
          {"namespace", "team-a"},
          {"labels", {{kJobUidLabel, api::Uid(job)}}},
          {"ownerReferences",
           {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", api::Name(job)}, {"uid", api::Uid(job)}}}}}},
        {"spec",
         {{"queueName", "user-queue"},
          {"priority", priority},
          {"podSets", {{{"name", "main"}, {"count", 1}, {"template", PodTemplate(cpu)}}}}}}};
    if (admitted) {
      wl["status"] = {
          {"admission",
           {{"clusterQueue", "cluster-queue"},
            {"podSetAssignments",
             {{{"name", "main"}, {"count", 1}, {"flavors", {{"cpu", "default-flavor"}}},
               {"resourceUsage", {{"cpu", cpu}}}}}}}},
          {"conditions",
           {Condition("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue cluster-queue"),
            Condition("Admitted", "True", "Admitted", "The workload is admitted")}}};
    } else {
      wl["status"] = {{"conditions",
                       {Condition("QuotaReserved", "False", "Pending",
                                  "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                                  "flavor default-flavor, 3 more needed")}}};
    }
    return wl;
  }

  api::Object Node(const std::string& cpu) {
    return Create(resources::kNodes, "",
                  {{"kind", "Node"},
                   {"metadata", {{"name", "node-0"}, {"labels", {{"kubernetes.io/hostname", "node-0"}}}}},
                   {"status",
                    {{"allocatable", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}},
                     {"capacity", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}},
                     {"conditions", {Condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")}}}}});
  }

  api::Object Pod(const api::Object& job, const std::string& cpu, const std::string& node_name,
                  const std::string& phase, api::Object conditions = api::Object::array()) {
    api::Object spec = PodTemplate(cpu)["spec"];
    if (!node_name.empty()) spec["nodeName"] = node_name;
    return Create(resources::kPods, "team-a",
                  {{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"metadata",
                    {{"name", api::Name(job) + "-x7k2p"},
                     {"namespace", "team-a"},
                     {"labels", {{"job-name", api::Name(job)}}},
                     {"ownerReferences",
                      {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", api::Name(job)}, {"uid", api::Uid(job)}}}}}},
                   {"spec", spec},
                   {"status", {{"phase", phase}, {"conditions", conditions}}}});
  }

  ExplainReport Run(const std::string& kind, const std::string& name) {
    auto r = Explain(client_, kind, "team-a", name, clock_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r.value() : ExplainReport();
  }

  // Every statement, fix and evidence value of the report, one per line.
  static std::string AllText(const ExplainReport& r) { return r.ToText(); }

  FakeClock clock_;
  client::testing::FakeClient client_;
};

TEST_F(ExplainTest, NotAdmittedInsufficientQuotaNamesPositionAndTheWorkloadThatMustFinish) {
  Queues("5");
  api::Object j1 = Job("train-1", "4");
  api::Object j2 = Job("train-2", "4");
  api::Object j3 = Job("train-3", "4");
  Workload(j1, "4", /*admitted=*/true);
  Workload(j2, "4", false);
  Workload(j3, "4", false);

  ExplainReport r = Run("job", "train-2");
  EXPECT_EQ(r.layer, Layer::kNotAdmitted);
  EXPECT_EQ(r.kind, "Job");
  const std::string text = r.ToText();
  EXPECT_THAT(text, HasSubstr("LocalQueue team-a/user-queue -> ClusterQueue cluster-queue (Active: Ready)"));
  EXPECT_THAT(text, HasSubstr("Position 1 of 2 pending workloads in ClusterQueue cluster-queue"));
  EXPECT_THAT(text, HasSubstr("Needs 4 cpu in flavor default-flavor: nominalQuota 5, 4 in use by 1 admitted workload, "
                              "1 free, 0 borrowable from the cohort (3 short)"));
  EXPECT_THAT(text, HasSubstr("1 admitted workload would have to finish before it fits: team-a/job-train-1-1a2b3 "
                              "(holds 4 cpu in default-flavor, priority 0)"));
  EXPECT_THAT(text, HasSubstr("preempts nothing"));
  EXPECT_THAT(text, HasSubstr("Kueue's last decision (Pending): couldn't assign flavors"));

  // The third is behind the second.
  ExplainReport r3 = Run("jobs.batch", "train-3");
  EXPECT_THAT(r3.ToText(), HasSubstr("Position 2 of 2 pending workloads in ClusterQueue cluster-queue (Kueue's order: "
                                     "priority, then creation time); priority 0; ahead of it: "
                                     "team-a/job-train-2-1a2b3 (priority 0)"));
}

TEST_F(ExplainTest, HigherPriorityOrdersFirstAndPreemptionIsWhatTheEngineDecides) {
  Queues("5", "default-flavor", {{"withinClusterQueue", "LowerPriority"}});
  api::Object low = Job("low", "4");
  api::Object mid = Job("mid", "4");
  api::Object high = Job("high", "4");
  Workload(low, "4", true, /*priority=*/10);
  Workload(mid, "4", false, 10);
  Workload(high, "4", false, 100);  // created last, but higher priority

  ExplainReport r = Run("job", "high");
  const std::string text = r.ToText();
  EXPECT_THAT(text, HasSubstr("Position 1 of 2 pending workloads"));
  EXPECT_THAT(text, HasSubstr("Kueue can admit it by preempting team-a/job-low-1a2b3 (priority 10, InClusterQueue)"));

  ExplainReport rm = Run("job", "mid");
  EXPECT_THAT(rm.ToText(), HasSubstr("Position 2 of 2 pending workloads"));
  EXPECT_THAT(rm.ToText(), HasSubstr("ahead of it: team-a/job-high-1a2b3 (priority 100)"));
  // Equal priority: no preemption under LowerPriority; the admitted one must finish.
  EXPECT_THAT(rm.ToText(), HasSubstr("would have to finish before it fits: team-a/job-low-1a2b3"));
  EXPECT_THAT(rm.ToText(), HasSubstr("none of them can be preempted for it"));
}

TEST_F(ExplainTest, AdmittedButUnschedulableShowsSchedulerReasonsAndQuotaAboveNodeCapacity) {
  Queues("7");
  Node("5");
  api::Object big = Job("big", "6");
  Workload(big, "6", true);
  Pod(big, "6", "", "Pending",
      {Condition("PodScheduled", "False", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")});

  ExplainReport r = Run("job", "big");
  EXPECT_EQ(r.layer, Layer::kAdmittedPodsPending);
  const std::string text = r.ToText();
  EXPECT_THAT(text, HasSubstr("but 1 of 1 pod is Pending"));
  EXPECT_THAT(text, HasSubstr("Pod team-a/big-x7k2p cannot be placed: 0/1 nodes are available: 1 Insufficient cpu.; "
                              "node node-0: Insufficient cpu"));
  EXPECT_THAT(text, HasSubstr("evidence: Pod team-a/big-x7k2p status.conditions[PodScheduled].message = 0/1 nodes are "
                              "available: 1 Insufficient cpu."));
  EXPECT_THAT(text, HasSubstr("ClusterQueue cluster-queue nominalQuota for cpu in flavor default-flavor is 7, above the "
                              "5 allocatable of the 1 node the flavor selects (node-0)"));
  EXPECT_THAT(text, HasSubstr("fix: set nominalQuota to at most 5"));
  EXPECT_THAT(text, HasSubstr("evidence: Node node-0 status.allocatable.cpu = 5"));
  EXPECT_THAT(text, HasSubstr("evidence: Node node-0 status.allocatable = {\"cpu\":\"5\",\"memory\":\"16Gi\",\"pods\":\"110\"}"));

  // The same diagnosis asked about the pod or the Workload.
  EXPECT_EQ(Run("pod", "big-x7k2p").layer, Layer::kAdmittedPodsPending);
  ExplainReport rw = Run("workload", "job-big-1a2b3");
  EXPECT_EQ(rw.layer, Layer::kAdmittedPodsPending);
  EXPECT_THAT(rw.ToText(), HasSubstr("1 Insufficient cpu."));
}

TEST_F(ExplainTest, QuotaWithinNodeCapacityIsNotReported) {
  Queues("5");
  Node("5");
  api::Object j = Job("fits", "4");
  Workload(j, "4", true);
  Pod(j, "4", "", "Pending");
  ExplainReport r = Run("job", "fits");
  EXPECT_EQ(r.layer, Layer::kAdmittedPodsPending);
  EXPECT_THAT(r.ToText(), Not(HasSubstr("nominalQuota for cpu")));
  EXPECT_THAT(r.ToText(), HasSubstr("node node-0 can hold it now"));
}

TEST_F(ExplainTest, InactiveClusterQueueNamesTheMissingFlavor) {
  Queues("5", "default-flavour");
  api::Object j = Job("typo", "1");
  Workload(j, "1", false);
  ExplainReport r = Run("job", "typo");
  EXPECT_EQ(r.layer, Layer::kNotAdmitted);
  const std::string text = r.ToText();
  EXPECT_THAT(text, HasSubstr("ClusterQueue cluster-queue (from LocalQueue team-a/user-queue) is inactive: "
                              "FlavorNotFound (ResourceFlavor default-flavour does not exist)"));
  EXPECT_THAT(text, HasSubstr("evidence: ClusterQueue cluster-queue spec.resourceGroups[0].flavors[0].name = "
                              "default-flavour"));
  EXPECT_THAT(text, HasSubstr("fix: create ResourceFlavor default-flavour, or correct the flavor name"));
}

TEST_F(ExplainTest, MissingLocalQueue) {
  Create(resources::kResourceFlavors, "", {{"kind", "ResourceFlavor"}, {"metadata", {{"name", "default-flavor"}}}});
  api::Object j = Job("lost", "1");
  Workload(j, "1", false);
  ExplainReport r = Run("job", "lost");
  EXPECT_EQ(r.layer, Layer::kNotAdmitted);
  EXPECT_THAT(r.ToText(), HasSubstr("LocalQueue team-a/user-queue does not exist"));
}

TEST_F(ExplainTest, QueueNameAsAnnotationIsNotManaged) {
  Queues("5");
  Create(resources::kJobs, "team-a",
         {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", "annotated"}, {"namespace", "team-a"}, {"annotations", {{kQueueNameLabel, "user-queue"}}}}},
          {"spec", {{"template", PodTemplate("1")}}}});
  ExplainReport r = Run("job", "annotated");
  EXPECT_EQ(r.layer, Layer::kNotManaged);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_THAT(r.findings[0].statement, HasSubstr("annotation kueue.x-k8s.io/queue-name=user-queue, which Kueue does "
                                                 "not read"));
  EXPECT_EQ(r.findings[0].fix, "move it to metadata.labels: kueue.x-k8s.io/queue-name: user-queue");
  EXPECT_EQ(r.findings[0].evidence[0].field, "metadata.annotations[kueue.x-k8s.io/queue-name]");
}

TEST_F(ExplainTest, RunningJobHasATimelineInTimeOrder) {
  Queues("5");
  Node("5");
  api::Object j = Job("run", "2");
  api::Object wl = Workload(j, "2", true);
  api::Object pod = Pod(j, "2", "node-0", "Running",
                        {Condition("PodScheduled", "True", "", "", "2026-01-01T00:00:11Z"),
                         Condition("Ready", "True", "", "", "2026-01-01T00:00:12Z")});
  Create(resources::kEvents, "team-a",
         {{"kind", "Event"},
          {"metadata", {{"name", "run.1"}, {"namespace", "team-a"}}},
          {"involvedObject", {{"kind", "Workload"}, {"namespace", "team-a"}, {"name", api::Name(wl)}, {"uid", api::Uid(wl)}}},
          {"type", "Normal"},
          {"reason", "QuotaReserved"},
          {"message", "Quota reserved in ClusterQueue cluster-queue, wait time since queued was 0s"},
          {"lastTimestamp", "2026-01-01T00:00:10Z"}});
  Create(resources::kEvents, "team-a",
         {{"kind", "Event"},
          {"metadata", {{"name", "run.2"}, {"namespace", "team-a"}}},
          {"involvedObject", {{"kind", "Pod"}, {"namespace", "team-a"}, {"name", api::Name(pod)}, {"uid", api::Uid(pod)}}},
          {"type", "Normal"},
          {"reason", "Scheduled"},
          {"message", "Successfully assigned team-a/run-x7k2p to node-0"},
          {"lastTimestamp", "2026-01-01T00:00:11Z"}});
  ExplainReport r = Run("job", "run");
  EXPECT_EQ(r.layer, Layer::kRunning);
  EXPECT_THAT(r.findings[0].statement, HasSubstr("1 pod placed on node-0"));
  ASSERT_GE(r.timeline.size(), 5u);
  for (size_t i = 1; i < r.timeline.size(); ++i) EXPECT_LE(r.timeline[i - 1].time, r.timeline[i].time);
  std::vector<std::string> whats;
  for (const TimelineEntry& e : r.timeline) whats.push_back(e.object + " " + e.what);
  EXPECT_THAT(whats, ::testing::Contains("Workload team-a/job-run-1a2b3 Normal QuotaReserved: Quota reserved in "
                                         "ClusterQueue cluster-queue, wait time since queued was 0s"));
  EXPECT_THAT(whats, ::testing::Contains("Pod team-a/run-x7k2p Normal Scheduled: Successfully assigned "
                                         "team-a/run-x7k2p to node-0"));
  EXPECT_EQ(r.timeline.back().what, "Ready=True");

  nlohmann::json js = r.ToJson();
  EXPECT_EQ(js["layer"], "Running");
  EXPECT_EQ(js["kind"], "Job");
  EXPECT_EQ(js["timeline"].size(), r.timeline.size());
  EXPECT_EQ(js["findings"][0]["evidence"][0]["object"], "Workload team-a/job-run-1a2b3");
}

TEST_F(ExplainTest, TrainJobPodsAreFoundThroughJobSetAndJobs) {
  Queues("7");
  Node("5");
  api::Object tj = Create(resources::kTrainJobs, "team-a",
                          {{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
                           {"kind", "TrainJob"},
                           {"metadata",
                            {{"name", "llm"}, {"namespace", "team-a"}, {"labels", {{kQueueNameLabel, "user-queue"}}}}}});
  api::Object js = Create(resources::kJobSets, "team-a",
                          {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                           {"kind", "JobSet"},
                           {"metadata",
                            {{"name", "llm"},
                             {"namespace", "team-a"},
                             {"ownerReferences", {{{"kind", "TrainJob"}, {"name", "llm"}, {"uid", api::Uid(tj)}}}}}}});
  api::Object job = Create(resources::kJobs, "team-a",
                           {{"apiVersion", "batch/v1"},
                            {"kind", "Job"},
                            {"metadata",
                             {{"name", "llm-node-0"},
                              {"namespace", "team-a"},
                              {"ownerReferences", {{{"kind", "JobSet"}, {"name", "llm"}, {"uid", api::Uid(js)}}}}}}});
  api::Object wl = Workload(tj, "6", true);
  Pod(job, "6", "", "Pending");
  ExplainReport r = Run("trainjobs.trainer.kubeflow.org", "llm");
  EXPECT_EQ(r.kind, "TrainJob");
  EXPECT_EQ(r.layer, Layer::kAdmittedPodsPending);
  EXPECT_THAT(r.ToText(), HasSubstr("Pod team-a/llm-node-0-x7k2p cannot be placed: 0/1 nodes are available: 1 "
                                    "Insufficient cpu."));
  EXPECT_THAT(r.ToText(), HasSubstr("nominalQuota for cpu in flavor default-flavor is 7, above the 5 allocatable"));
}

TEST_F(ExplainTest, EvictedWorkloadHoldsQuotaUntilItsPodsAreGone) {
  Queues("5");
  Node("5");
  api::Object j = Job("victim", "4");
  api::Object wl = Workload(j, "4", true);
  wl["status"]["conditions"].push_back(Condition("Evicted", "True", "Preempted",
                                                 "Preempted to accommodate a workload (UID: u1, JobUID: j1) due to "
                                                 "prioritization in the ClusterQueue",
                                                 "2026-01-01T00:00:20Z"));
  ASSERT_TRUE(client_.Update(resources::kWorkloads.Namespace("team-a"), wl).ok());
  Pod(j, "4", "node-0", "Running");
  ExplainReport r = Run("job", "victim");
  EXPECT_EQ(r.layer, Layer::kEvicting);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_THAT(r.findings[0].statement, HasSubstr("The Workload was evicted (Preempted): Preempted to accommodate a "
                                                 "workload (UID: u1, JobUID: j1)"));
  EXPECT_THAT(r.findings[0].statement, HasSubstr("1 pod still to terminate before its quota is released"));
  EXPECT_EQ(r.timeline.back().what, "Evicted=True Preempted: Preempted to accommodate a workload (UID: u1, JobUID: j1) "
                                    "due to prioritization in the ClusterQueue");
}

TEST_F(ExplainTest, Errors) {
  auto unknown = Explain(client_, "deployment", "team-a", "x", clock_);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), Code::kBadRequest);
  auto missing = Explain(client_, "trainjob", "team-a", "nope", clock_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(missing.status().message(), "trainjobs.trainer.kubeflow.org \"nope\" not found");
  client_.InjectError("list", Status(Code::kUnavailable, "connection refused"));
  auto down = Explain(client_, "job", "team-a", "x", clock_);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace berth::cli::diagnostics

namespace berth::cli::diagnostics {
namespace {

TEST_F(ExplainTest, HttpFormServesJsonByDefaultAndTextOnRequest) {
  Queues("5");
  api::Object j = Job("train-1", "4");
  Workload(j, "4", false);
  auto json_body = ServeExplain(client_, "GET", "/berth/v1/explain/namespaces/team-a/jobs/train-1", clock_);
  ASSERT_TRUE(json_body.ok()) << json_body.status().ToString();
  EXPECT_EQ(json_body->content_type, "application/json");
  nlohmann::json parsed = nlohmann::json::parse(json_body->body);
  EXPECT_EQ(parsed["layer"], "NotAdmitted");
  EXPECT_EQ(parsed["namespace"], "team-a");
  EXPECT_EQ(parsed["name"], "train-1");

  auto text = ServeExplain(client_, "GET", "/berth/v1/explain/namespaces/team-a/jobs/train-1?output=text", clock_);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->content_type, "text/plain; charset=utf-8");
  EXPECT_THAT(text->body, ::testing::StartsWith("Job team-a/train-1: NotAdmitted\n"));

  auto bad_path = ServeExplain(client_, "GET", "/berth/v1/explain/namespaces/team-a/jobs", clock_);
  EXPECT_EQ(bad_path.status().code(), Code::kNotFound);
  auto bad_method = ServeExplain(client_, "POST", "/berth/v1/explain/namespaces/team-a/jobs/train-1", clock_);
  EXPECT_EQ(bad_method.status().code(), Code::kMethodNotAllowed);
  auto bad_output = ServeExplain(client_, "GET", "/berth/v1/explain/namespaces/team-a/jobs/train-1?output=yaml", clock_);
  EXPECT_EQ(bad_output.status().code(), Code::kBadRequest);
  auto missing = ServeExplain(client_, "GET", "/berth/v1/explain/namespaces/team-a/jobs/nope", clock_);
  EXPECT_EQ(missing.status().message(), "jobs.batch \"nope\" not found");
}

}  // namespace
}  // namespace berth::cli::diagnostics

namespace berth::cli::diagnostics {
namespace {

// D1(a): deactivated after waitForPodsReady's backoffLimitCount, its pods bigger than any node.
TEST_F(ExplainTest, DeactivatedWorkloadIsNotAdmittedAndNamesTheRealCause) {
  Queues("32");
  Node("8");
  api::Object j = Job("big", "16");
  api::Object wl = WorkloadObject(j, "16", false);
  wl["spec"]["active"] = false;
  wl["status"] = {
      {"conditions",
       {Condition("QuotaReserved", "False", "Pending", "The workload is deactivated"),
        Condition("Evicted", "True", "Deactivated",
                  "The workload is deactivated due to exceeding the maximum number of re-queuing retries"),
        Condition("Requeued", "False", "Deactivated", "The workload is deactivated")}},
      {"schedulingStats",
       {{"evictions",
         {{{"reason", "PodsReadyTimeout"}, {"underlyingCause", "WaitForStart"}, {"count", 2}},
          {{"reason", "Deactivated"}, {"underlyingCause", "RequeuingLimitExceeded"}, {"count", 1}}}}}}};
  Create(resources::kWorkloads, "team-a", wl);

  ExplainReport r = Run("job", "big");
  EXPECT_EQ(r.layer, Layer::kNotAdmitted);
  const std::string text = r.ToText();
  EXPECT_THAT(text, Not(HasSubstr("admits it at its next scheduling cycle")));
  EXPECT_THAT(text, Not(HasSubstr("and requeued")));
  EXPECT_THAT(text, HasSubstr("not requeued (Requeued=False Deactivated"));
  EXPECT_THAT(text, HasSubstr("The Workload is deactivated (spec.active=false)"));
  EXPECT_THAT(text, HasSubstr("why: The workload is deactivated due to exceeding the maximum number of re-queuing"));
  EXPECT_THAT(text, HasSubstr("re-activating it repeats the loop"));
  EXPECT_THAT(text, HasSubstr("PodSet main requests cpu 16 per pod, more than any node ClusterQueue cluster-queue's "
                              "flavors select can allocate (node-0: cpu 8)"));
  EXPECT_THAT(text, HasSubstr("the real cause"));
  EXPECT_THAT(text, HasSubstr("Kueue does not admit it: it is deactivated (spec.active=false)"));
}

// D1(a) negative: a pod that fits a node is not reported as unplaceable.
TEST_F(ExplainTest, PodsThatFitANodeAreNotReportedUnplaceable) {
  Queues("32");
  Node("8");
  api::Object j = Job("small", "4");
  Workload(j, "4", false);
  EXPECT_THAT(Run("job", "small").ToText(), Not(HasSubstr("more than any node")));
}

// D1(b): the ClusterQueue's namespaceSelector does not select the workload's namespace.
TEST_F(ExplainTest, NamespaceSelectorMismatchBlocksAdmission) {
  Queues("32", "default-flavor", api::Object::object(), {{"matchLabels", {{"team", "a"}}}});
  Create(resources::kNamespaces, "", {{"kind", "Namespace"}, {"metadata", {{"name", "team-a"}}}});
  api::Object j = Job("train", "4");
  api::Object wl = WorkloadObject(j, "4", false);
  wl["status"] = api::Object::object();  // Kueue wrote no decision yet
  Create(resources::kWorkloads, "team-a", wl);
  const std::string text = Run("job", "train").ToText();
  EXPECT_THAT(text, HasSubstr("ClusterQueue cluster-queue's namespaceSelector {\"matchLabels\":{\"team\":\"a\"}} "
                              "does not select namespace team-a"));
  EXPECT_THAT(text, HasSubstr("fix: kubectl label namespace team-a team=a, or change ClusterQueue cluster-queue's "
                              "spec.namespaceSelector"));
  EXPECT_THAT(text, Not(HasSubstr("admits it at its next scheduling cycle")));
}

TEST_F(ExplainTest, NamespaceSelectorThatMatchesIsNotReported) {
  Queues("32", "default-flavor", api::Object::object(), {{"matchLabels", {{"team", "a"}}}});
  Create(resources::kNamespaces, "",
         {{"kind", "Namespace"}, {"metadata", {{"name", "team-a"}, {"labels", {{"team", "a"}}}}}});
  api::Object j = Job("train", "4");
  api::Object wl = WorkloadObject(j, "4", false);
  wl["status"] = api::Object::object();
  Create(resources::kWorkloads, "team-a", wl);
  const std::string text = Run("job", "train").ToText();
  EXPECT_THAT(text, Not(HasSubstr("namespaceSelector")));
  EXPECT_THAT(text, HasSubstr("It fits the free quota now: Kueue admits it at its next scheduling cycle"));
}

// D1(c): waitForPodsReady.blockAdmission names the admitted workload whose pods are not Ready.
TEST_F(ExplainTest, BlockAdmissionNamesTheWorkloadsNotPodsReady) {
  Queues("32");
  api::Object first = Job("first", "4");
  api::Object w1 = WorkloadObject(first, "4", true);
  w1["status"]["conditions"].push_back(Condition("PodsReady", "False", "WaitForStart", "Not all pods are ready"));
  Create(resources::kWorkloads, "team-a", w1);
  api::Object second = Job("second", "4");
  api::Object w2 = WorkloadObject(second, "4", false);
  w2["status"]["conditions"] = {Condition("QuotaReserved", "False", "WaitingForPodsReady",
                                          "waiting for all admitted workloads to be in PodsReady condition")};
  Create(resources::kWorkloads, "team-a", w2);
  const std::string text = Run("job", "second").ToText();
  EXPECT_THAT(text, HasSubstr("Kueue holds it back (WaitingForPodsReady: waiting for all admitted workloads to be in "
                              "PodsReady condition)"));
  EXPECT_THAT(text, HasSubstr("waiting for team-a/job-first-1a2b3 (PodsReady=False WaitForStart)"));
  EXPECT_THAT(text, HasSubstr("Kueue does not admit it: waitForPodsReady.blockAdmission waits for "
                              "team-a/job-first-1a2b3"));
  EXPECT_THAT(text, Not(HasSubstr("admits it at its next scheduling cycle")));
}

// D1: the engine says it fits but Kueue's live QuotaReserved message says otherwise.
TEST_F(ExplainTest, KueuesLiveDecisionWinsOverTheEngine) {
  Queues("32");
  api::Object j = Job("train", "4");
  Workload(j, "4", false);  // QuotaReserved=False "insufficient unused quota ..." although 32 are free
  const std::string text = Run("job", "train").ToText();
  EXPECT_THAT(text, HasSubstr("Kueue's own last decision says otherwise (Pending: couldn't assign flavors"));
  EXPECT_THAT(text, Not(HasSubstr("admits it at its next scheduling cycle")));
}

// D2: a Job owned by a managed JobSet explains the JobSet.
TEST_F(ExplainTest, JobOwnedByAManagedJobSetExplainsTheOwner) {
  Queues("32");
  api::Object js = Create(resources::kJobSets, "team-a",
                          {{"apiVersion", "jobset.x-k8s.io/v1alpha2"},
                           {"kind", "JobSet"},
                           {"metadata", {{"name", "js"}, {"namespace", "team-a"},
                                         {"labels", {{kQueueNameLabel, "user-queue"}}}}}});
  Workload(js, "4", true);
  Create(resources::kJobs, "team-a",
         {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", "js-worker-0"},
            {"namespace", "team-a"},
            {"ownerReferences",
             {{{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"}, {"name", "js"},
               {"uid", api::Uid(js)}, {"controller", true}}}}}},
          {"spec", {{"template", PodTemplate("4")}}}});
  ExplainReport r = Run("job", "js-worker-0");
  EXPECT_NE(r.layer, Layer::kNotManaged);
  const std::string text = r.ToText();
  EXPECT_THAT(text, HasSubstr("Job team-a/js-worker-0 is part of JobSet team-a/js"));
  EXPECT_THAT(text, HasSubstr("this explains JobSet team-a/js"));
  EXPECT_THAT(text, Not(HasSubstr("add the label")));
}

// D7: a bare Pod is not advised to take the queue-name label.
TEST_F(ExplainTest, BarePodIsNotManagedWithoutLabelAdvice) {
  Create(resources::kPods, "team-a",
         {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "lonely"}, {"namespace", "team-a"}}},
          {"spec", PodTemplate("1")["spec"]},
          {"status", {{"phase", "Pending"}}}});
  ExplainReport r = Run("pod", "lonely");
  EXPECT_EQ(r.layer, Layer::kNotManaged);
  const std::string text = r.ToText();
  EXPECT_THAT(text, HasSubstr("Pod team-a/lonely is not owned by a job: berth's Kueue manages only job kinds"));
  EXPECT_THAT(text, Not(HasSubstr("add the label")));
}

// D9: memory in canonical form, in text and JSON.
TEST_F(ExplainTest, QuantitiesAreCanonical) {
  SingleResourceQueues("memory", "8Gi");
  api::Object j = Job("mem", "0");
  api::Object wl = WorkloadObject(j, "0", false);
  wl["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"] = {{"memory", "16Gi"}};
  Create(resources::kWorkloads, "team-a", wl);
  ExplainReport r = Run("job", "mem");
  const std::string text = r.ToText();
  EXPECT_THAT(text, HasSubstr("Needs 16Gi memory in flavor default-flavor: nominalQuota 8Gi"));
  EXPECT_THAT(text, HasSubstr("nominalQuota = 8Gi"));
  EXPECT_THAT(text, Not(HasSubstr("8589934592")));
  EXPECT_THAT(r.ToJson().dump(), Not(HasSubstr("8589934592")));
}

// D6 in explain: an admitted flavor whose nodeLabels select no node.
TEST_F(ExplainTest, AdmittedFlavorSelectingNoNode) {
  SingleResourceQueues("cpu", "8", {{"nodeLabels", {{"pool", "a100"}}}});
  Node("8");
  api::Object j = Job("train", "4");
  Workload(j, "4", true);
  Pod(j, "4", "", "Pending");
  const std::string text = Run("job", "train").ToText();
  EXPECT_THAT(text, HasSubstr("ResourceFlavor default-flavor (admitted for ClusterQueue cluster-queue) selects no node"));
  EXPECT_THAT(text, HasSubstr("correct ResourceFlavor default-flavor's spec.nodeLabels"));
  EXPECT_THAT(text, Not(HasSubstr("set nominalQuota to at most 0")));
}

}  // namespace
}  // namespace berth::cli::diagnostics
