// The job kinds' reconcilers with the Kueue controllers (FakeClient + FakeClock):
// examples/trainer-kueue/'s TrainJob through admission to a JobSet, a Job and a pod with the
// PET_* env; docs/architecture.md departure 3 — an evicted job's replacement pods are created
// only after its old pods are gone — for TrainJob and batch/v1 Job. Pods "terminate" by
// holding a test finalizer: a delete only marks them (deletionTimestamp) until the test
// removes it. Controllers are driven synchronously (Settle); nothing waits on time.

#include <gtest/gtest.h>
#include <set>
#include <thread>

#include "api/conditions.h"
#include "controllers/jobs/batchjob/batchjob_integration.h"
#include "controllers/jobs/batchjob/job_controller.h"
#include "controllers/jobs/jobset/jobset_controller.h"
#include "controllers/jobs/jobset/jobset_integration.h"
#include "controllers/jobs/pytorchjob/pytorchjob_controller.h"
#include "controllers/jobs/pytorchjob/pytorchjob_integration.h"
#include "controllers/jobs/trainjob/trainjob_controller.h"
#include "controllers/jobs/trainjob/trainjob_integration.h"
#include "controllers/kueue/decoder.h"
#include "controllers/kueue/kueue_controller.h"
#include "controllers/kueue/testing/kueue_test_env.h"
#include "client/event_recorder.h"

namespace berth::controllers {

using api::FindCondition;
using api::IsConditionTrue;
namespace {

using kueue::kClusterQueues;
using kueue::kJobUidLabel;
using kueue::kKueueApiVersion;
using kueue::kLocalQueues;
using kueue::kResourceFlavors;
using kueue::kWorkloadPriorityClasses;
using kueue::kWorkloads;

const client::GroupVersionResource kTrainJobs = jobs::trainjob::kTrainJobsResource;
const client::GroupVersionResource kJobSets = jobs::jobset::kJobSetsResource;
const client::GroupVersionResource kJobs = jobs::kJobsResource;
const client::GroupVersionResource kPods = jobs::kPodsResource;
const client::GroupVersionResource kEvents{"", "v1", "events"};
const client::GroupVersionResource kRuntimes{"trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes"};
constexpr char kHoldFinalizer[] = "test.berth/hold";

class JobControllersTest : public kueue::testing::KueueTestEnv {
 protected:
  JobControllersTest()
      : recorder_(client_, clock_, "berth-job-controllers"),
        jobs_(client_, clock_),
        jobsets_(client_, clock_, recorder_),
        trainjobs_(client_, clock_, recorder_),
        pytorchjobs_(client_, clock_) {
    kueue_.AddJobIntegration(std::make_unique<jobs::batchjob::BatchJobIntegration>());
    kueue_.AddJobIntegration(std::make_unique<jobs::trainjob::TrainJobIntegration>(client_));
    kueue_.AddJobIntegration(std::make_unique<jobs::pytorchjob::PyTorchJobIntegration>(client_));
    kueue_.AddJobIntegration(std::make_unique<jobs::jobset::JobSetIntegration>(client_));
    StartInformers();
  }

  // Kueue reconcile + schedule, then the job-kind reconcilers, until a round writes nothing.
  void Settle() {
    KueueTestEnv::Settle(40, [this] {
      EXPECT_TRUE(trainjobs_.ReconcileAll().ok());
      EXPECT_TRUE(jobsets_.ReconcileAll().ok());
      EXPECT_TRUE(jobs_.ReconcileAll().ok());
      EXPECT_TRUE(pytorchjobs_.ReconcileAll().ok());
    });
  }

  bool Exists(const client::GroupVersionResource& gvr, const std::string& ns, const std::string& name) {
    return client_.Get(gvr.Namespace(ns), name).ok();
  }
  std::vector<api::Object> List(const client::GroupVersionResource& gvr, const std::string& ns) {
    auto list = client_.List(gvr.Namespace(ns));
    EXPECT_TRUE(list.ok());
    return list.ok() ? list.value().items : std::vector<api::Object>{};
  }
  void Update(const client::GroupVersionResource& gvr, const api::Object& obj) {
    auto res = client_.Update(gvr.Namespace(api::Namespace(obj)), obj);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
  }
  // Holds every pod in `ns` with the test finalizer (a delete then only marks it).
  void HoldPods(const std::string& ns) {
    for (api::Object p : List(kPods, ns)) {
      p["metadata"]["finalizers"] = api::Object::array({kHoldFinalizer});
      Update(kPods, p);
    }
  }
  // The pods finish terminating: the finalizer goes, the store removes them.
  void ReleasePods(const std::string& ns) {
    for (api::Object p : List(kPods, ns)) {
      p["metadata"].erase("finalizers");
      Update(kPods, p);
    }
  }
  void SetWorkloadActive(const api::Object& wl, bool active) {
    api::Object w = Get(kWorkloads, api::Namespace(wl), api::Name(wl));
    w["spec"]["active"] = active;
    Update(kWorkloads, w);
  }

  // The queues of examples/trainer-kueue/00-kueue.yaml at cpu 5 / memory 36Gi and the
  // WorkloadPriorityClass "high" of 01-priorities.yaml;
  // the LocalQueue only when `local_queue`.
  void CreateQueues(bool local_queue) {
    Create(kResourceFlavors, "",
           {{"apiVersion", kKueueApiVersion}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "default-flavor"}}}});
    Create(kClusterQueues, "", api::Object::parse(R"({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
             "metadata": {"name": "cluster-queue"},
             "spec": {"namespaceSelector": {},
               "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [{"name": "default-flavor",
                 "resources": [{"name": "cpu", "nominalQuota": "5"}, {"name": "memory", "nominalQuota": "36Gi"}]}]}]}})"));
    Create(kWorkloadPriorityClasses, "",
           {{"apiVersion", kKueueApiVersion},
            {"kind", "WorkloadPriorityClass"},
            {"metadata", {{"name", "high"}}},
            {"value", 1000}});
    if (local_queue) CreateLocalQueue();
  }
  void CreateLocalQueue() {
    Create(kLocalQueues, "team-a",
           {{"apiVersion", kKueueApiVersion},
            {"kind", "LocalQueue"},
            {"metadata", {{"name", "lq-team-a"}, {"namespace", "team-a"}}},
            {"spec", {{"clusterQueue", "cluster-queue"}}}});
  }

  // The torch-distributed ClusterTrainingRuntime of examples/trainer-kueue/02-runtime.yaml,
  // without its local command, args, env and grace period.
  static api::Object SeedRuntime() {
    return api::Object::parse(R"({
      "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
      "metadata": {"name": "torch-distributed", "labels": {"trainer.kubeflow.org/framework": "torch"}},
      "spec": {
        "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
        "template": {"spec": {"replicatedJobs": [{
          "name": "node",
          "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
            "spec": {"template": {"spec": {"containers": [
              {"name": "node", "image": "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"}]}}}}}]}}}})");
  }
  // The TrainJob lora-sft (examples/trainer-kueue/jobs/high-priority.yaml) on one node of
  // cpu 4 / memory 6Gi, without args.
  static api::Object SeedTrainJob() {
    return api::Object::parse(R"({
      "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
      "metadata": {"name": "lora-sft", "namespace": "team-a",
                   "labels": {"kueue.x-k8s.io/queue-name": "lq-team-a", "kueue.x-k8s.io/priority-class": "high"}},
      "spec": {
        "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": "torch-distributed"},
        "trainer": {"numNodes": 1, "resourcesPerNode": {"requests": {"cpu": "4", "memory": "6Gi"}}}}})");
  }

  static std::map<std::string, api::Object> EnvByName(const api::Object& container) {
    std::map<std::string, api::Object> out;
    for (const api::Object& e : container["env"]) out[e["name"]] = e;
    return out;
  }

  EventRecorder recorder_;
  jobs::batchjob::JobController jobs_;
  jobs::jobset::JobSetController jobsets_;
  jobs::trainjob::TrainJobController trainjobs_;
  jobs::pytorchjob::PyTorchJobController pytorchjobs_;
};

// That runtime and TrainJob: one Workload (podSet node, count 1, cpu 4 / memory 6Gi);
// suspended with no pods until admitted; then a JobSet, a Job and a pod with the PET_* wiring.
TEST_F(JobControllersTest, SeedTrainJobIsQueuedThenRunsWithTorchEnv) {
  CreateQueues(/*local_queue=*/false);
  Create(kRuntimes, "", SeedRuntime());
  Create(kTrainJobs, "team-a", SeedTrainJob());
  Settle();

  api::Object wl = WorkloadOf(kTrainJobs, "team-a", "lora-sft");
  ASSERT_EQ(wl["spec"]["podSets"].size(), 1u) << wl.dump(2);
  const api::Object& ps = wl["spec"]["podSets"][0];
  EXPECT_EQ(ps["name"], "node");
  EXPECT_EQ(ps["count"], 1);
  EXPECT_EQ(ps["template"]["spec"]["containers"][0]["resources"]["requests"],
            api::Object({{"cpu", "4"}, {"memory", "6Gi"}}));
  EXPECT_EQ(wl["spec"]["priority"], 1000);
  EXPECT_FALSE(IsConditionTrue(wl, "QuotaReserved"));
  api::Object tj = Get(kTrainJobs, "team-a", "lora-sft");
  EXPECT_EQ(tj["spec"]["suspend"], true);
  const api::Object* suspended = FindCondition(tj, "Suspended");
  ASSERT_NE(suspended, nullptr) << tj.dump(2);
  EXPECT_EQ((*suspended)["status"], "True");
  EXPECT_EQ((*suspended)["reason"], "Suspended");
  // The runtime snapshot exists and is owned by the TrainJob.
  api::Object snap = Get(jobs::kConfigMapsResource, "team-a", "lora-sft-runtime-snapshot");
  EXPECT_EQ(snap["metadata"]["ownerReferences"][0]["uid"], api::Uid(tj));
  EXPECT_EQ(api::Object::parse(snap["data"]["runtime"].get<std::string>())["spec"], SeedRuntime()["spec"]);
  // Not admitted: whatever exists is suspended, and no pod exists.
  for (const api::Object& js : List(kJobSets, "team-a")) EXPECT_EQ(js["spec"]["suspend"], true);
  for (const api::Object& j : List(kJobs, "team-a")) EXPECT_EQ(j["spec"]["suspend"], true);
  EXPECT_TRUE(List(kPods, "team-a").empty());

  CreateLocalQueue();
  Settle();
  wl = WorkloadOf(kTrainJobs, "team-a", "lora-sft");
  EXPECT_TRUE(IsConditionTrue(wl, "Admitted")) << wl.dump(2);
  tj = Get(kTrainJobs, "team-a", "lora-sft");
  EXPECT_EQ(tj["spec"]["suspend"], false);
  EXPECT_EQ((*FindCondition(tj, "Suspended"))["reason"], "Resumed");
  api::Object js = Get(kJobSets, "team-a", "lora-sft");
  EXPECT_EQ(js["spec"]["suspend"], false);
  EXPECT_EQ(js["metadata"]["ownerReferences"][0]["uid"], api::Uid(tj));
  EXPECT_TRUE(Exists(jobs::kServicesResource, "team-a", "lora-sft"));
  api::Object job = Get(kJobs, "team-a", "lora-sft-node-0");
  EXPECT_EQ(job["spec"]["suspend"], false);
  std::vector<api::Object> pods = List(kPods, "team-a");
  ASSERT_EQ(pods.size(), 1u);
  const api::Object& pod = pods[0];
  EXPECT_EQ(pod["spec"]["hostname"], "lora-sft-node-0-0");
  EXPECT_EQ(pod["spec"]["subdomain"], "lora-sft");
  EXPECT_EQ(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"], "0");
  const api::Object& c = pod["spec"]["containers"][0];
  EXPECT_EQ(c["resources"]["requests"], api::Object({{"cpu", "4"}, {"memory", "6Gi"}}));
  auto env = EnvByName(c);
  EXPECT_EQ(env["PET_NNODES"]["value"], "1");
  EXPECT_EQ(env["PET_NPROC_PER_NODE"]["value"], "4");
  EXPECT_EQ(env["PET_MASTER_ADDR"]["value"], "lora-sft-node-0-0.lora-sft");
  EXPECT_EQ(env["PET_MASTER_PORT"]["value"], "29500");
  EXPECT_EQ(env["PET_NODE_RANK"]["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.annotations['batch.kubernetes.io/job-completion-index']");
  // The TrainJob reports its JobSet's replicatedJob.
  tj = Get(kTrainJobs, "team-a", "lora-sft");
  ASSERT_EQ(tj["status"]["jobsStatus"].size(), 1u) << tj.dump(2);
  EXPECT_EQ(tj["status"]["jobsStatus"][0]["name"], "node");
}

// Editing the runtime after the first reconcile does not change the TrainJob's JobSet.
TEST_F(JobControllersTest, RuntimeEditAfterSnapshotDoesNotChangeJobSet) {
  CreateQueues(/*local_queue=*/false);
  Create(kRuntimes, "", SeedRuntime());
  Create(kTrainJobs, "team-a", SeedTrainJob());
  Settle();
  api::Object rt = Get(kRuntimes, "", "torch-distributed");
  rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    ["image"] = "edited:latest";
  Update(kRuntimes, rt);
  CreateLocalQueue();
  Settle();
  std::vector<api::Object> pods = List(kPods, "team-a");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["spec"]["containers"][0]["image"], "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime");
}

// A TrainJob naming a missing runtime waits: no Workload, a condition and an Event with
// upstream's message; it proceeds once the runtime exists.
TEST_F(JobControllersTest, MissingRuntimeIsAConditionAndEventUntilItAppears) {
  CreateQueues(/*local_queue=*/true);
  Create(kTrainJobs, "team-a", SeedTrainJob());
  Settle();
  const std::string msg =
      "clustertrainingruntimes.trainer.kubeflow.org \"torch-distributed\" not found: specified "
      "clusterTrainingRuntime must be created before the TrainJob is created";
  api::Object tj = Get(kTrainJobs, "team-a", "lora-sft");
  const api::Object* created = FindCondition(tj, "Created");
  ASSERT_NE(created, nullptr) << tj.dump(2);
  EXPECT_EQ((*created)["status"], "False");
  EXPECT_EQ((*created)["reason"], "RuntimeNotFound");
  EXPECT_EQ((*created)["message"], msg);
  int events = 0;
  berth::client::EventRecorder::FlushAll();
  for (const api::Object& e : List(kEvents, "team-a")) {
    if (e["reason"] == "TrainJobResourcesCreationFailed" && e["involvedObject"]["name"] == "lora-sft") {
      EXPECT_EQ(e["message"], msg);
      EXPECT_EQ(e["type"], "Warning");
      ++events;
    }
  }
  EXPECT_EQ(events, 1);
  EXPECT_TRUE(List(kWorkloads, "team-a").empty());
  EXPECT_TRUE(List(kJobSets, "team-a").empty());
  EXPECT_EQ(tj["spec"]["suspend"], true);

  Create(kRuntimes, "", SeedRuntime());
  Settle();
  tj = Get(kTrainJobs, "team-a", "lora-sft");
  EXPECT_EQ(FindCondition(tj, "Created"), nullptr);
  EXPECT_EQ(List(kPods, "team-a").size(), 1u);
}

// kubeflow/trainer test/integration/controller/trainjob_controller_test.go "Should succeeded to
// update JobSet when TrainJob is suspended": while the TrainJob is suspended, a runtimePatch
// added to it (JobSet labels, a nodeSelector for job `node`) reaches its existing JobSet,
// which stays suspended; on resume the pods carry it. (That spec.trainer, e.g. its image,
// cannot change is the API's rule: api/trainer_strategies_test.cc
// TrainerAndRuntimeRefImmutable.)
TEST_F(JobControllersTest, RuntimePatchOfSuspendedTrainJobUpdatesItsJobSet) {
  Create(kRuntimes, "", SeedRuntime());
  api::Object tj = SeedTrainJob();
  tj["metadata"].erase("labels");  // not queued: suspend is the user's
  tj["spec"]["suspend"] = true;
  Create(kTrainJobs, "team-a", tj);
  Settle();
  EXPECT_EQ(Get(kJobSets, "team-a", "lora-sft")["spec"]["suspend"], true);
  EXPECT_TRUE(List(kPods, "team-a").empty());

  tj = Get(kTrainJobs, "team-a", "lora-sft");
  tj["spec"]["runtimePatches"] = api::Object::parse(R"([{"manager": "example.io/platform-team",
      "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"team": "a"}},
        "spec": {"replicatedJobs": [{"name": "node",
          "template": {"spec": {"template": {"spec": {"nodeSelector": {"pool": "gpu"}}}}}}]}}}}])");
  Update(kTrainJobs, tj);
  Settle();
  api::Object js = Get(kJobSets, "team-a", "lora-sft");
  EXPECT_EQ(js["spec"]["suspend"], true);
  EXPECT_EQ(js["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["nodeSelector"],
            api::Object({{"pool", "gpu"}}));
  EXPECT_TRUE(List(kPods, "team-a").empty());

  tj = Get(kTrainJobs, "team-a", "lora-sft");
  tj["spec"]["suspend"] = false;
  Update(kTrainJobs, tj);
  Settle();
  EXPECT_EQ(Get(kJobSets, "team-a", "lora-sft")["spec"]["suspend"], false);
  std::vector<api::Object> pods = List(kPods, "team-a");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["spec"]["nodeSelector"], api::Object({{"pool", "gpu"}}));
}

// kubeflow/trainer trainjob_controller_test.go "Should not start deadline timer if TrainJob is
// suspended", "Should reset deadline timer upon resume", "Should fail TrainJob with
// DeadlineExceeded when ActiveDeadlineSeconds expires": activeDeadlineSeconds does not run
// while the TrainJob is suspended, starts at resume, and when it runs out the TrainJob is
// Failed "DeadlineExceeded" and its JobSet is deleted.
TEST_F(JobControllersTest, ActiveDeadlineRunsFromResumeAndFailsTheTrainJob) {
  Create(kRuntimes, "", SeedRuntime());
  api::Object tj = SeedTrainJob();
  tj["metadata"].erase("labels");
  tj["spec"]["suspend"] = true;
  tj["spec"]["activeDeadlineSeconds"] = 60;
  Create(kTrainJobs, "team-a", tj);
  Settle();
  clock_.Advance(std::chrono::seconds(120));
  Settle();
  tj = Get(kTrainJobs, "team-a", "lora-sft");
  EXPECT_FALSE(IsConditionTrue(tj, "Failed")) << "the deadline does not run while suspended";
  EXPECT_FALSE(jobs::trainjob::ActiveDeadline(tj).has_value());

  tj["spec"]["suspend"] = false;
  Update(kTrainJobs, tj);
  const Time resumed_at = clock_.Now();
  Settle();
  tj = Get(kTrainJobs, "team-a", "lora-sft");
  EXPECT_EQ(jobs::trainjob::ActiveDeadline(tj), std::optional<Time>(resumed_at + std::chrono::seconds(60)));
  clock_.Advance(std::chrono::seconds(59));
  Settle();
  EXPECT_FALSE(IsConditionTrue(Get(kTrainJobs, "team-a", "lora-sft"), "Failed"));
  EXPECT_TRUE(Exists(kJobSets, "team-a", "lora-sft"));
  EXPECT_EQ(List(kPods, "team-a").size(), 1u);

  clock_.Advance(std::chrono::seconds(1));
  Settle();
  tj = Get(kTrainJobs, "team-a", "lora-sft");
  const api::Object* failed = FindCondition(tj, "Failed");
  ASSERT_NE(failed, nullptr) << tj.dump(2);
  EXPECT_EQ((*failed)["status"], "True");
  EXPECT_EQ((*failed)["reason"], "DeadlineExceeded");
  EXPECT_EQ((*failed)["message"], "TrainJob exceeded its active deadline");
  EXPECT_FALSE(Exists(kJobSets, "team-a", "lora-sft"));
  // Finished: nothing is built again.
  Settle();
  EXPECT_FALSE(Exists(kJobSets, "team-a", "lora-sft"));
}

// A PyTorchJob shaped as examples/priority-pitfalls/jobs/production-training.yaml but with
// Master 1 + Worker 8 (the example has 3 Workers), 500m cpu per pod.
api::Object SeedPyTorchJob() {
  auto replica = [](int replicas) {
    return api::Object{{"replicas", replicas},
                       {"restartPolicy", "OnFailure"},
                       {"template", api::Object::parse(R"({"spec": {"containers": [{"name": "pytorch",
                           "image": "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime",
                           "command": ["python", "train.py"],
                           "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]}})")}};
  };
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata",
           {{"name", "ddp"}, {"namespace", "team-a"}, {"labels", {{"kueue.x-k8s.io/queue-name", "lq-team-a"}}}}},
          {"spec", {{"pytorchReplicaSpecs", {{"Master", replica(1)}, {"Worker", replica(8)}}}}}};
}

TEST_F(JobControllersTest, SeedPyTorchJobIsQueuedThenRunsNineRanks) {
  CreateQueues(/*local_queue=*/false);
  Create(jobs::pytorchjob::kPyTorchJobsResource, "team-a", SeedPyTorchJob());
  Settle();
  api::Object wl = WorkloadOf(jobs::pytorchjob::kPyTorchJobsResource, "team-a", "ddp");
  ASSERT_EQ(wl["spec"]["podSets"].size(), 2u) << wl.dump(2);
  EXPECT_EQ(wl["spec"]["podSets"][0]["name"], "master");
  EXPECT_EQ(wl["spec"]["podSets"][0]["count"], 1);
  EXPECT_EQ(wl["spec"]["podSets"][1]["name"], "worker");
  EXPECT_EQ(wl["spec"]["podSets"][1]["count"], 8);
  EXPECT_EQ(Get(jobs::pytorchjob::kPyTorchJobsResource, "team-a", "ddp")["spec"]["runPolicy"]["suspend"], true);
  EXPECT_TRUE(List(kPods, "team-a").empty());

  CreateLocalQueue();
  Settle();
  EXPECT_TRUE(IsConditionTrue(WorkloadOf(jobs::pytorchjob::kPyTorchJobsResource, "team-a", "ddp"), "Admitted"));
  std::vector<api::Object> pods = List(kPods, "team-a");
  ASSERT_EQ(pods.size(), 9u);
  std::map<std::string, std::string> rank_by_pod;
  for (const api::Object& p : pods) {
    auto env = EnvByName(p["spec"]["containers"][0]);
    EXPECT_EQ(env["WORLD_SIZE"]["value"], "9") << api::Name(p);
    EXPECT_EQ(env["MASTER_ADDR"]["value"], "ddp-master-0");
    rank_by_pod[api::Name(p)] = env["RANK"]["value"];
  }
  std::map<std::string, std::string> want{{"ddp-master-0", "0"}};
  for (int i = 0; i < 8; ++i) want["ddp-worker-" + std::to_string(i)] = std::to_string(i + 1);
  EXPECT_EQ(rank_by_pod, want);
  EXPECT_EQ(List(jobs::kServicesResource, "team-a").size(), 9u);
}

// A worker-only PyTorchJob (no Master) succeeds when every Worker has (the Training
// Operator's UpdateJobStatus); its Workload then finishes and gives the quota back.
TEST_F(JobControllersTest, AWorkerOnlyPyTorchJobSucceedsWhenItsWorkersDo) {
  CreateQueues(/*local_queue=*/true);
  api::Object job = SeedPyTorchJob();
  job["spec"]["pytorchReplicaSpecs"].erase("Master");
  job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 2;
  Create(jobs::pytorchjob::kPyTorchJobsResource, "team-a", job);
  Settle();
  std::vector<api::Object> pods = List(kPods, "team-a");
  ASSERT_EQ(pods.size(), 2u);
  for (size_t i = 0; i < pods.size(); ++i) {
    pods[i]["status"]["phase"] = "Succeeded";
    ASSERT_TRUE(client_.UpdateStatus(kPods.Namespace("team-a"), pods[i]).ok());
    Settle();
    const bool done = IsConditionTrue(Get(jobs::pytorchjob::kPyTorchJobsResource, "team-a", "ddp"), "Succeeded");
    EXPECT_EQ(done, i == 1) << "after " << i + 1 << " of 2 workers";
  }
  EXPECT_TRUE(IsConditionTrue(WorkloadOf(jobs::pytorchjob::kPyTorchJobsResource, "team-a", "ddp"), "Finished"));
}

// A pod of the running job fails because its node was lost (NodeLost, restartPolicy
// OnFailure): the job does not fail; the pod is deleted and, once gone, created again.
TEST_F(JobControllersTest, PyTorchJobRestartsAPodLostWithItsNode) {
  CreateQueues(/*local_queue=*/true);
  Create(jobs::pytorchjob::kPyTorchJobsResource, "team-a", SeedPyTorchJob());
  Settle();
  HoldPods("team-a");
  api::Object lost = Get(kPods, "team-a", "ddp-worker-3");
  const std::string old_uid = api::Uid(lost);
  lost["status"]["phase"] = "Failed";
  lost["status"]["reason"] = "NodeLost";
  ASSERT_TRUE(client_.UpdateStatus(kPods.Namespace("team-a"), lost).ok());
  Settle();
  api::Object job = Get(jobs::pytorchjob::kPyTorchJobsResource, "team-a", "ddp");
  EXPECT_FALSE(IsConditionTrue(job, "Failed")) << job["status"].dump(2);
  EXPECT_TRUE(Get(kPods, "team-a", "ddp-worker-3")["metadata"].contains("deletionTimestamp"));
  ReleasePods("team-a");
  Settle();
  api::Object again = Get(kPods, "team-a", "ddp-worker-3");
  EXPECT_NE(api::Uid(again), old_uid);
  EXPECT_FALSE(again["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(List(kPods, "team-a").size(), 9u);
  EXPECT_FALSE(IsConditionTrue(Get(jobs::pytorchjob::kPyTorchJobsResource, "team-a", "ddp"), "Failed"));
}

// A JobSet stored before admission checked its targets and coordinator (the fake client
// admits anything): the JobSet controller creates its Jobs, reports no error and the
// cluster settles (no reconcile writes on and on); the JobSet waits for its Jobs.
TEST_F(JobControllersTest, StoredJobSetNamingMissingTargetsSettles) {
  Create(kJobSets, "team-a", api::Object::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "js", "namespace": "team-a"},
    "spec": {
      "successPolicy": {"operator": "All", "targetReplicatedJobs": ["nobody"]},
      "failurePolicy": {"rules": [{"name": "r", "action": "FailJobSet", "targetReplicatedJobs": ["ghost"]}]},
      "coordinator": {"replicatedJob": "ghost", "jobIndex": 3},
      "replicatedJobs": [{"name": "workers", "replicas": 2,
        "template": {"spec": {"parallelism": 1, "completions": 1,
          "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "w", "image": "python"}]}}}}}]}})"));
  Settle();
  std::vector<api::Object> jobs = List(kJobs, "team-a");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0]["metadata"]["labels"]["jobset.sigs.k8s.io/coordinator"], "js-ghost-3-0.js");
  const api::Object js = Get(kJobSets, "team-a", "js");
  EXPECT_FALSE(IsConditionTrue(js, "Completed")) << js.dump();
  EXPECT_FALSE(IsConditionTrue(js, "Failed")) << js.dump();
  const int64_t rev = client_.store().CurrentRevision();
  EXPECT_TRUE(jobsets_.ReconcileAll().ok());
  EXPECT_EQ(client_.store().CurrentRevision(), rev);  // a further reconcile writes nothing
}

// Departure 3 for one job kind: once running, the Workload is deactivated (evicted). The job is
// suspended and its pod deleted, but while the pod terminates the Workload keeps its quota
// and no replacement exists; once the pod is gone the quota is released, and on
// reactivation exactly one new pod (a new identity) is created.
class ReplacementTest : public JobControllersTest {
 public:
  static std::set<std::string> Uids(const std::vector<api::Object>& pods) {
    std::set<std::string> out;
    for (const api::Object& p : pods) out.insert(api::Uid(p));
    return out;
  }

  void Run(const client::GroupVersionResource& gvr, const std::string& name, size_t pod_count) {
    Settle();
    std::vector<api::Object> pods = List(kPods, "team-a");
    ASSERT_EQ(pods.size(), pod_count);
    const std::set<std::string> old_uids = Uids(pods);
    HoldPods("team-a");
    api::Object wl = WorkloadOf(gvr, "team-a", name);
    ASSERT_TRUE(IsConditionTrue(wl, "Admitted"));

    SetWorkloadActive(wl, false);
    Settle();
    pods = List(kPods, "team-a");
    EXPECT_EQ(Uids(pods), old_uids) << "no replacement while the old pods terminate";
    for (const api::Object& p : pods) EXPECT_TRUE(p["metadata"].contains("deletionTimestamp"));
    wl = WorkloadOf(gvr, "team-a", name);
    EXPECT_TRUE(IsConditionTrue(wl, "Evicted"));
    EXPECT_TRUE(IsConditionTrue(wl, "QuotaReserved")) << "quota is held while pods terminate";

    // Reactivated while the old pods still terminate: still no new pod.
    SetWorkloadActive(wl, true);
    Settle();
    EXPECT_EQ(Uids(List(kPods, "team-a")), old_uids);

    ReleasePods("team-a");
    Settle();
    wl = WorkloadOf(gvr, "team-a", name);
    EXPECT_TRUE(IsConditionTrue(wl, "Admitted")) << wl.dump(2);
    pods = List(kPods, "team-a");
    ASSERT_EQ(pods.size(), pod_count);
    for (const api::Object& p : pods) {
      EXPECT_EQ(old_uids.count(api::Uid(p)), 0u) << api::Name(p);
      EXPECT_FALSE(p["metadata"].contains("deletionTimestamp"));
    }
  }
};

TEST_F(ReplacementTest, TrainJobReplacementPodsOnlyAfterOldPodsAreGone) {
  CreateQueues(/*local_queue=*/true);
  Create(kRuntimes, "", SeedRuntime());
  Create(kTrainJobs, "team-a", SeedTrainJob());
  Run(kTrainJobs, "lora-sft", 1);
}

TEST_F(ReplacementTest, BatchJobReplacementPodsOnlyAfterOldPodsAreGone) {
  CreateQueues(/*local_queue=*/true);
  Create(kJobs, "team-a", api::Object::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq-team-a"}},
    "spec": {"parallelism": 1, "completions": 1, "completionMode": "Indexed",
             "template": {"spec": {"restartPolicy": "Never",
               "containers": [{"name": "train", "image": "python", "resources": {"requests": {"cpu": "4"}}}]}}}})"));
  Run(kJobs, "train", 1);
}

TEST_F(ReplacementTest, PyTorchJobReplacementPodsOnlyAfterOldPodsAreGone) {
  CreateQueues(/*local_queue=*/true);
  Create(jobs::pytorchjob::kPyTorchJobsResource, "team-a", SeedPyTorchJob());
  Run(jobs::pytorchjob::kPyTorchJobsResource, "ddp", 9);
}

// A standalone JobSet (2 replicas of a 2-pod Job, 1 cpu each) queued by its own label.
TEST_F(ReplacementTest, JobSetReplacementPodsOnlyAfterOldPodsAreGone) {
  CreateQueues(/*local_queue=*/true);
  Create(kJobSets, "team-a", api::Object::parse(R"({
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "js", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq-team-a"}},
    "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2,
      "template": {"spec": {"parallelism": 2, "completions": 2,
        "template": {"spec": {"restartPolicy": "Never",
          "containers": [{"name": "w", "image": "python", "resources": {"requests": {"cpu": "1"}}}]}}}}}]}})"));
  Settle();
  api::Object wl = WorkloadOf(kJobSets, "team-a", "js");
  ASSERT_EQ(wl["spec"]["podSets"].size(), 1u);
  EXPECT_EQ(wl["spec"]["podSets"][0]["name"], "workers");
  EXPECT_EQ(wl["spec"]["podSets"][0]["count"], 4);
  Run(kJobSets, "js", 4);
}

}  // namespace
}  // namespace berth::controllers
