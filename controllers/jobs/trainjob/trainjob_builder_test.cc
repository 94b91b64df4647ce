#include "controllers/jobs/trainjob/trainjob_builder.h"

#include <gtest/gtest.h>

#include "controllers/jobs/jobset/jobset_children.h"

namespace berth::controllers::jobs::trainjob {
namespace {

using nlohmann::json;

// Cases named after kubeflow/trainer's tests: torch_test.go, mpi_test.go and jobset_test.go
// are pkg/runtime/framework/plugins/{torch,mpi,jobset}/, trainingruntime_test.go is
// pkg/runtime/core/, trainjob_controller_test.go is test/integration/controller/.

// The torch-distributed ClusterTrainingRuntime of examples/trainer-kueue/02-runtime.yaml,
// without its local command, args, env and grace period.
json SeedRuntime() {
  return json::parse(R"({
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
json SeedTrainJob() {
  return json::parse(R"({
    "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"name": "lora-sft", "namespace": "team-a", "uid": "uid-lora",
                 "labels": {"kueue.x-k8s.io/queue-name": "lq-team-a", "kueue.x-k8s.io/priority-class": "high"}},
    "spec": {
      "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": "torch-distributed"},
      "trainer": {"numNodes": 1, "resourcesPerNode": {"requests": {"cpu": "4", "memory": "6Gi"}}}}})");
}

json TrainJob(const std::string& name, const json& trainer) {
  return json{{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
              {"kind", "TrainJob"},
              {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
              {"spec", {{"runtimeRef", {{"name", "torch-distributed"}}}, {"trainer", trainer}}}};
}

const json& RJob(const json& jobset, const std::string& name) {
  for (const json& r : jobset["spec"]["replicatedJobs"]) {
    if (r["name"] == name) return r;
  }
  static const json kNull;
  ADD_FAILURE() << "no replicatedJob " << name;
  return kNull;
}

const json& Container(const json& jobset, const std::string& rjob, const std::string& container) {
  for (const json& c : RJob(jobset, rjob)["template"]["spec"]["template"]["spec"]["containers"]) {
    if (c["name"] == container) return c;
  }
  static const json kNull;
  ADD_FAILURE() << "no container " << container;
  return kNull;
}

// env as name → value ("fieldRef:<path>" for downward-API values), in order.
std::vector<std::pair<std::string, std::string>> Env(const json& container) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const json& e : container.value("env", json::array())) {
    if (e.contains("valueFrom")) {
      out.emplace_back(e["name"], "fieldRef:" + e["valueFrom"]["fieldRef"]["fieldPath"].get<std::string>());
    } else {
      out.emplace_back(e["name"], e.value("value", ""));
    }
  }
  return out;
}

std::string EnvValue(const json& container, const std::string& name) {
  for (const auto& [n, v] : Env(container)) {
    if (n == name) return v;
  }
  return "<unset>";
}

json MustBuild(const json& trainjob, const json& runtime) {
  auto r = Build(trainjob, runtime);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->jobset : json();
}

constexpr char kRankRef[] = "fieldRef:metadata.annotations['batch.kubernetes.io/job-completion-index']";

TEST(TrainJobBuilderTest, SeedLoraSftBuildsJobSetWithTorchEnv) {
  json js = MustBuild(SeedTrainJob(), SeedRuntime());
  EXPECT_EQ(js["apiVersion"], "jobset.x-k8s.io/v1alpha2");
  EXPECT_EQ(js["kind"], "JobSet");
  EXPECT_EQ(js["metadata"]["name"], "lora-sft");
  EXPECT_EQ(js["metadata"]["namespace"], "team-a");
  EXPECT_EQ(js["metadata"]["ownerReferences"],
            json::parse(R"([{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob","name":"lora-sft",
                             "uid":"uid-lora","controller":true,"blockOwnerDeletion":true}])"));
  const json& node = RJob(js, "node");
  EXPECT_EQ(node["replicas"], 1);
  EXPECT_EQ(node["template"]["spec"]["parallelism"], 1);
  EXPECT_EQ(node["template"]["spec"]["completions"], 1);
  const json& c = Container(js, "node", "node");
  EXPECT_EQ(c["image"], "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime");
  EXPECT_EQ(c["resources"], json::parse(R"({"requests":{"cpu":"4","memory":"6Gi"}})"));
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Env(c), (std::vector<P>{{"PET_NNODES", "1"},
                                    {"PET_NPROC_PER_NODE", "4"},
                                    {"PET_NODE_RANK", kRankRef},
                                    {"PET_MASTER_ADDR", "lora-sft-node-0-0.lora-sft"},
                                    {"PET_MASTER_PORT", "29500"}}));
  EXPECT_EQ(c["ports"], json::parse(R"([{"containerPort":29500}])"));
  // The TrainJob's own Kueue labels stay on the TrainJob (Kueue manages it, not the JobSet).
  EXPECT_FALSE(js["metadata"].contains("labels"));
  EXPECT_FALSE(js["spec"].contains("suspend"));
}

TEST(TrainJobBuilderTest, SeedLoraSftPodSets) {
  auto ps = PodSets(SeedTrainJob(), SeedRuntime());
  ASSERT_TRUE(ps.ok()) << ps.status();
  ASSERT_EQ(ps->size(), 1u);
  EXPECT_EQ((*ps)[0].name, "node");
  EXPECT_EQ((*ps)[0].count, 1);
  EXPECT_EQ((*ps)[0].template_spec["spec"]["containers"][0]["resources"]["requests"],
            json::parse(R"({"cpu":"4","memory":"6Gi"})"));
  json w = (*ps)[0].ToWorkloadPodSet();
  EXPECT_EQ(w["name"], "node");
  EXPECT_EQ(w["count"], 1);
}

// torch_test.go TestTorchEnforceMLPolicy "trainJob numNodes is respected rather than mlPolicy one":
// TrainJob numNodes wins over mlPolicy's; no resources → 1 process per node.
TEST(TrainJobBuilderTest, NumNodesFromTrainJob) {
  json js = MustBuild(TrainJob("trainJob", {{"numNodes", 2}}), SeedRuntime());
  const json& c = Container(js, "node", "node");
  EXPECT_EQ(EnvValue(c, "PET_NNODES"), "2");
  EXPECT_EQ(EnvValue(c, "PET_NPROC_PER_NODE"), "1");
  EXPECT_EQ(EnvValue(c, "PET_NODE_RANK"), kRankRef);
  EXPECT_EQ(EnvValue(c, "PET_MASTER_ADDR"), "trainJob-node-0-0.trainJob");
  EXPECT_EQ(EnvValue(c, "PET_MASTER_PORT"), "29500");
  auto ps = PodSets(TrainJob("trainJob", {{"numNodes", 2}}), SeedRuntime());
  ASSERT_TRUE(ps.ok());
  EXPECT_EQ((*ps)[0].count, 2);
}

// torch_test.go TestTorchEnforceMLPolicy, the "nproc_per_node=..." cases and "explicitly set
// nproc_per_node should be preserved": PET_NPROC_PER_NODE resolution.
TEST(TrainJobBuilderTest, NumProcPerNodeResolution) {
  struct Case {
    const char* name;
    json trainer;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"auto with cpu 4", {{"resourcesPerNode", {{"requests", {{"cpu", "4"}}}}}}, "4"},
      {"no cpu resources", json::object(), "1"},
      {"low cpu limit", {{"resourcesPerNode", {{"limits", {{"cpu", "2"}}}}}}, "2"},
      {"cpu request no limit", {{"resourcesPerNode", {{"requests", {{"cpu", "3"}}}}}}, "3"},
      {"millicore 2.5", {{"resourcesPerNode", {{"requests", {{"cpu", "2.5"}}}}}}, "3"},
      {"2500m", {{"resourcesPerNode", {{"requests", {{"cpu", "2500m"}}}}}}, "3"},
      {"fractional 0.7", {{"resourcesPerNode", {{"requests", {{"cpu", "0.7"}}}}}}, "1"},
      {"cpu with 3.7", {{"numProcPerNode", "cpu"}, {"resourcesPerNode", {{"requests", {{"cpu", "3.7"}}}}}}, "4"},
      {"gpu stays auto", {{"resourcesPerNode", {{"requests", {{"example.com/gpu", 2}}}}}}, "auto"},
      {"cpu and gpu stays auto", {{"resourcesPerNode", {{"requests", {{"cpu", "6"}, {"nvidia.com/gpu", "2"}}}}}}, "auto"},
      {"explicit 3 with cpu 8", {{"numProcPerNode", 3}, {"resourcesPerNode", {{"requests", {{"cpu", "8"}}}}}}, "3"},
      {"request beats limit", {{"resourcesPerNode", {{"requests", {{"cpu", "2"}}}, {"limits", {{"cpu", "6"}}}}}}, "2"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ResolveNumProcPerNode(TrainJob("test-job", c.trainer), SeedRuntime()), c.want) << c.name;
    json js = MustBuild(TrainJob("test-job", c.trainer), SeedRuntime());
    EXPECT_EQ(EnvValue(Container(js, "node", "node"), "PET_NPROC_PER_NODE"), c.want) << c.name;
  }
  // Without resourcesPerNode, the runtime's node container resources count.
  json rt = SeedRuntime();
  rt["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    ["resources"] = {{"limits", {{"cpu", "5"}}}};
  EXPECT_EQ(ResolveNumProcPerNode(TrainJob("test-job", json::object()), rt), "5");
}

// torch_test.go TestTorchEnforceMLPolicy "multi-node multi-GPU training with complete info".
TEST(TrainJobBuilderTest, MultiNodeMultiGpu) {
  json tj = TrainJob("gpu-job", {{"numNodes", 4}, {"resourcesPerNode", {{"limits", {{"nvidia.com/gpu", 8}}}}}});
  json js = MustBuild(tj, SeedRuntime());
  const json& c = Container(js, "node", "node");
  EXPECT_EQ(EnvValue(c, "PET_NNODES"), "4");
  EXPECT_EQ(EnvValue(c, "PET_NPROC_PER_NODE"), "auto");
  EXPECT_EQ(EnvValue(c, "PET_MASTER_ADDR"), "gpu-job-node-0-0.gpu-job");
  EXPECT_EQ(RJob(js, "node")["template"]["spec"]["parallelism"], 4);
  EXPECT_EQ(RJob(js, "node")["template"]["spec"]["completions"], 4);
}

// torch_test.go TestTorchEnforceMLPolicy "multi-nodes full fine-tuning with torchtune": no
// PET_MASTER_*.
TEST(TrainJobBuilderTest, TorchTuneHasNoMasterEnv) {
  json tj = TrainJob("tune", {{"command", {"tune", "run"}}, {"numNodes", 2}, {"numProcPerNode", 8},
                              {"resourcesPerNode", {{"limits", {{"nvidia.com/gpu", 8}}}}}});
  json js = MustBuild(tj, SeedRuntime());
  const json& c = Container(js, "node", "node");
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Env(c), (std::vector<P>{{"PET_NNODES", "2"}, {"PET_NPROC_PER_NODE", "8"}, {"PET_NODE_RANK", kRankRef}}));
  EXPECT_EQ(c["ports"][0]["containerPort"], 29500);
}

// torch_test.go TestTorchValidate "reserved environment variable present": reserved torchrun
// variables in spec.trainer.env.
TEST(TrainJobBuilderTest, ReservedEnvRejected) {
  json tj = TrainJob("test-job", {{"env", {{{"name", "test"}, {"value", "value"}},
                                           {{"name", "PET_NPROC_PER_NODE"}, {"value", "value"}},
                                           {{"name", "PET_MASTER_ADDR"}, {"value", "x"}}}}});
  api::FieldErrorList errs = ValidateWithRuntime(tj, SeedRuntime());
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].field, "spec.trainer.env");
  EXPECT_EQ(errs[0].detail, "must not have reserved envs, invalid envs configured: [PET_MASTER_ADDR PET_NPROC_PER_NODE]");
  EXPECT_TRUE(ValidateWithRuntime(TrainJob("ok", {{"env", {{{"name", "PET_OTHER"}}}}}), SeedRuntime()).empty());
  // Not a torch runtime: no check.
  json mpi = SeedRuntime();
  mpi["spec"]["mlPolicy"] = {{"mpi", json::object()}};
  EXPECT_TRUE(ValidateWithRuntime(tj, mpi).empty());
}

json InitializerRuntime(int num_nodes) {
  json rt = SeedRuntime();
  rt["spec"]["mlPolicy"]["numNodes"] = num_nodes;
  rt["spec"]["mlPolicy"]["torch"] = json::object();
  json& rjobs = rt["spec"]["template"]["spec"]["replicatedJobs"];
  json node = rjobs[0];
  node["dependsOn"] = json::parse(R"([{"name":"dataset-initializer","status":"Complete"},
                                      {"name":"model-initializer","status":"Complete"}])");
  node["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "1"}}}};
  node["template"]["spec"]["template"]["spec"]["containers"][0]["env"] =
      json::parse(R"([{"name":"TRAIN_JOB","value":"original"},{"name":"RUNTIME","value":"test:runtime"}])");
  auto init = [](const std::string& name) {
    json r = json::parse(R"({"template": {"metadata": {"labels": {}}, "spec": {"template": {"spec": {"containers": [{}]}}}}})");
    r["name"] = name;
    r["template"]["metadata"]["labels"]["trainer.kubeflow.org/trainjob-ancestor-step"] = name;
    r["template"]["spec"]["template"]["spec"]["containers"][0] = {{"name", name}, {"image", name + ":latest"}};
    return r;
  };
  rjobs = json::array({init("dataset-initializer"), init("model-initializer"), node});
  return rt;
}

// trainingruntime_test.go TestTrainingRuntimeNewObjects "succeeded to build JobSet with Torch
// values from the TrainJob": numNodes and numProcPerNode from the TrainJob; initializers 1;
// dependsOn kept.
TEST(TrainJobBuilderTest, TorchValuesFromTrainJobWithInitializers) {
  json js = MustBuild(TrainJob("test-job", {{"numNodes", 30}, {"numProcPerNode", 3}}), InitializerRuntime(100));
  for (const char* r : {"dataset-initializer", "model-initializer", "node"}) {
    EXPECT_EQ(RJob(js, r)["replicas"], 1) << r;
  }
  EXPECT_EQ(RJob(js, "dataset-initializer")["template"]["spec"]["parallelism"], 1);
  EXPECT_EQ(RJob(js, "model-initializer")["template"]["spec"]["completions"], 1);
  EXPECT_EQ(RJob(js, "node")["template"]["spec"]["parallelism"], 30);
  EXPECT_EQ(RJob(js, "node")["template"]["spec"]["completions"], 30);
  EXPECT_EQ(RJob(js, "node")["dependsOn"].size(), 2u);
  const json& c = Container(js, "node", "node");
  EXPECT_EQ(EnvValue(c, "PET_NNODES"), "30");
  EXPECT_EQ(EnvValue(c, "PET_NPROC_PER_NODE"), "3");
  EXPECT_EQ(EnvValue(c, "PET_MASTER_ADDR"), "test-job-node-0-0.test-job");
  auto ps = PodSets(TrainJob("test-job", {{"numNodes", 30}}), InitializerRuntime(100));
  ASSERT_TRUE(ps.ok());
  ASSERT_EQ(ps->size(), 3u);
  EXPECT_EQ((*ps)[0].name, "dataset-initializer");
  EXPECT_EQ((*ps)[0].count, 1);
  EXPECT_EQ((*ps)[2].name, "node");
  EXPECT_EQ((*ps)[2].count, 30);
}

// trainingruntime_test.go TestTrainingRuntimeNewObjects "succeeded to build JobSet with Torch
// values from the Runtime and envs.": numNodes from the runtime; image/command/args/env from
// the TrainJob.
TEST(TrainJobBuilderTest, RuntimeNumNodesAndTrainJobContainerOverrides) {
  json tj = TrainJob("test-job", {{"image", "test:trainjob"},
                                  {"command", {"trainjob"}},
                                  {"args", {"trainjob"}},
                                  {"env", {{{"name", "TRAIN_JOB"}, {"value", "override"}},
                                           {{"name", "TRAIN_JOB_CUSTOM"}, {"value", "test:trainjob"}}}}});
  json js = MustBuild(tj, InitializerRuntime(100));
  EXPECT_EQ(RJob(js, "node")["template"]["spec"]["parallelism"], 100);
  const json& c = Container(js, "node", "node");
  EXPECT_EQ(c["image"], "test:trainjob");
  EXPECT_EQ(c["command"], json::array({"trainjob"}));
  EXPECT_EQ(c["args"], json::array({"trainjob"}));
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Env(c), (std::vector<P>{{"TRAIN_JOB", "override"},
                                    {"RUNTIME", "test:runtime"},
                                    {"TRAIN_JOB_CUSTOM", "test:trainjob"},
                                    {"PET_NNODES", "100"},
                                    {"PET_NPROC_PER_NODE", "1"},
                                    {"PET_NODE_RANK", kRankRef},
                                    {"PET_MASTER_ADDR", "test-job-node-0-0.test-job"},
                                    {"PET_MASTER_PORT", "29500"}}));
}

// trainingruntime_test.go TestTrainingRuntimeNewObjects "succeeded to build PodGroup and JobSet
// with NumNodes from the TrainJob and container from the Runtime.": suspend, runtimePatch
// metadata wins over the runtime's, coscheduling label.
TEST(TrainJobBuilderTest, SuspendPatchesAndPodGroupLabel) {
  json rt = InitializerRuntime(100);
  rt["spec"]["template"]["metadata"] = {{"labels", {{"conflictLabel", "overridden"}}},
                                        {"annotations", {{"conflictAnnotation", "overridden"}}}};
  rt["spec"]["podGroupPolicy"] = {{"coscheduling", {{"scheduleTimeoutSeconds", 120}}}};
  json tj = TrainJob("test-job", {{"numNodes", 30}});
  tj["spec"]["suspend"] = true;
  tj["spec"]["runtimePatches"] = json::parse(R"([{"manager": "example.io/platform-team",
      "trainingRuntimeSpec": {"template": {"metadata": {"labels": {"conflictLabel": "override"},
                                                        "annotations": {"conflictAnnotation": "override"}}}}}])");
  json js = MustBuild(tj, rt);
  EXPECT_EQ(js["spec"]["suspend"], true);
  EXPECT_EQ(js["metadata"]["labels"]["conflictLabel"], "override");
  EXPECT_EQ(js["metadata"]["annotations"]["conflictAnnotation"], "override");
  for (const char* r : {"dataset-initializer", "model-initializer", "node"}) {
    EXPECT_EQ(RJob(js, r)["template"]["spec"]["template"]["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"],
              "test-job") << r;
  }
  EXPECT_EQ(RJob(js, "node")["template"]["spec"]["parallelism"], 30);
}

// trainingruntime_test.go TestTrainingRuntimeNewObjects "succeeded to build JobSet with dataset
// and model initializer from the TrainJob.": initializers get STORAGE_URI, the TrainJob env and
// the secret.
TEST(TrainJobBuilderTest, InitializersFromTrainJob) {
  json tj = TrainJob("test-job", json::object());
  tj["spec"]["initializer"] = json::parse(R"({
    "dataset": {"storageUri": "hf://trainjob-dataset", "env": [{"name": "TRAIN_JOB", "value": "test:trainjob:dataset"}],
                "secretRef": {"name": "trainjob-secret-dataset"}},
    "model": {"storageUri": "hf://trainjob-model", "env": [{"name": "TRAIN_JOB", "value": "test:trainjob:model"}],
              "secretRef": {"name": "trainjob-secret-model"}}})");
  json js = MustBuild(tj, InitializerRuntime(1));
  const json& d = Container(js, "dataset-initializer", "dataset-initializer");
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(Env(d), (std::vector<P>{{"STORAGE_URI", "hf://trainjob-dataset"}, {"TRAIN_JOB", "test:trainjob:dataset"}}));
  EXPECT_EQ(d["envFrom"], json::parse(R"([{"secretRef":{"name":"trainjob-secret-dataset"}}])"));
  const json& m = Container(js, "model-initializer", "model-initializer");
  EXPECT_EQ(EnvValue(m, "STORAGE_URI"), "hf://trainjob-model");
  EXPECT_EQ(m["envFrom"][0]["secretRef"]["name"], "trainjob-secret-model");
}

json MpiRuntime(bool launcher_as_node, int num_proc) {
  json rt = json::parse(R"({
    "kind": "ClusterTrainingRuntime", "metadata": {"name": "mpi"},
    "spec": {"mlPolicy": {"numNodes": 1, "mpi": {"mpiImplementation": "OpenMPI", "sshAuthMountPath": "/root/.ssh"}},
      "template": {"spec": {"replicatedJobs": [
        {"name": "launcher", "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
          "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "mpi"}]}}}}},
        {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [{"name": "node", "image": "mpi"}]}}}}}]}}}})");
  rt["spec"]["mlPolicy"]["mpi"]["runLauncherAsNode"] = launcher_as_node;
  rt["spec"]["mlPolicy"]["mpi"]["numProcPerNode"] = num_proc;
  return rt;
}

// trainingruntime_test.go TestTrainingRuntimeNewObjects "succeeded to build JobSet with OpenMPI
// values from the TrainJob": hostfile and launcher wiring.
TEST(TrainJobBuilderTest, MpiHostfile) {
  auto r = Build(TrainJob("test-job", {{"numNodes", 2}, {"numProcPerNode", 8}}), MpiRuntime(false, 1));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->mpi_hostfile.has_value());
  EXPECT_EQ((*r->mpi_hostfile)["metadata"]["name"], "test-job-mpi-hostfile");
  EXPECT_EQ((*r->mpi_hostfile)["data"]["hostfile"],
            "test-job-node-0-0.test-job slots=8\ntest-job-node-0-1.test-job slots=8\n");
  EXPECT_EQ(RJob(r->jobset, "launcher")["template"]["spec"]["parallelism"], 1);
  EXPECT_EQ(RJob(r->jobset, "node")["template"]["spec"]["parallelism"], 2);
  const json& lc = Container(r->jobset, "launcher", "node");
  EXPECT_EQ(EnvValue(lc, "OMPI_MCA_orte_default_hostfile"), "/etc/mpi/hostfile");
  EXPECT_EQ(EnvValue(lc, "OMPI_MCA_orte_set_default_slots"), "8");
  EXPECT_EQ(lc["volumeMounts"][0]["mountPath"], "/etc/mpi");
  EXPECT_EQ(EnvValue(lc, "PET_NNODES"), "<unset>");
}

// mpi_test.go TestMPI "runLauncherAsNode is true" and "numProcPerNode is set to number of GPUs
// in TrainJob" (GPU count as slots).
TEST(TrainJobBuilderTest, MpiLauncherAsNodeAndGpuSlots) {
  auto r = Build(TrainJob("test-job", {{"numNodes", 10}}), MpiRuntime(true, 1));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(RJob(r->jobset, "node")["template"]["spec"]["parallelism"], 9);
  const std::string hostfile = (*r->mpi_hostfile)["data"]["hostfile"];
  EXPECT_EQ(hostfile.substr(0, hostfile.find('\n') + 1), "test-job-launcher-0-0.test-job slots=1\n");
  EXPECT_EQ(std::count(hostfile.begin(), hostfile.end(), '\n'), 10);
  auto gpu = Build(TrainJob("test-job", {{"numNodes", 1}, {"resourcesPerNode", {{"limits", {{"custom.com/gpu", 5}}}}}}),
                   MpiRuntime(false, 1));
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ((*gpu->mpi_hostfile)["data"]["hostfile"], "test-job-node-0-0.test-job slots=5\n");
}

// jobset_test.go TestJobSet "subDomain in jobSetSpec is used to endpoint": a runtime subdomain is
// used by the MPI endpoints (but not by PET_MASTER_ADDR).
TEST(TrainJobBuilderTest, SubdomainInEndpoints) {
  json rt = MpiRuntime(true, 1);
  rt["spec"]["template"]["spec"]["network"] = {{"subdomain", "kubeflow.org"}};
  auto r = Build(TrainJob("trainJob", {{"numNodes", 2}}), rt);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r->mpi_hostfile)["data"]["hostfile"],
            "trainJob-launcher-0-0.kubeflow.org slots=1\ntrainJob-node-0-0.kubeflow.org slots=1\n");
}

// jobset_test.go TestJobSet "trainer numNodes is respected rather than parallelism when
// replicatedJob name is node" and "parallelism and completions are synced for multiple podSets
// matched by replicatedJob name": the runtime's `node` parallelism gives way to the TrainJob's
// numNodes, and every replicatedJob gets parallelism = completions = its podSet count (the
// launcher 1, a plain job its template's parallelism).
TEST(TrainJobBuilderTest, PodSetCountsSyncParallelismAndCompletionsByReplicatedJobName) {
  json rt = MpiRuntime(false, 1);
  json& rjobs = rt["spec"]["template"]["spec"]["replicatedJobs"];
  rjobs[1]["template"]["spec"]["parallelism"] = 5;
  rjobs[1]["template"]["spec"]["completions"] = 5;
  json aux = json::parse(R"({"name": "aux", "template": {"spec": {"parallelism": 2,
      "template": {"spec": {"containers": [{"name": "aux", "image": "aux"}]}}}}})");
  rjobs.push_back(aux);
  auto r = Build(TrainJob("test-job", {{"numNodes", 3}}), rt);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const auto& [rjob, count] : std::vector<std::pair<std::string, int>>{{"launcher", 1}, {"node", 3}, {"aux", 2}}) {
    EXPECT_EQ(RJob(r->jobset, rjob)["template"]["spec"]["parallelism"], count) << rjob;
    EXPECT_EQ(RJob(r->jobset, rjob)["template"]["spec"]["completions"], count) << rjob;
  }
  auto pod_sets = PodSets(TrainJob("test-job", {{"numNodes", 3}}), rt);
  ASSERT_TRUE(pod_sets.ok());
  std::vector<std::pair<std::string, int>> counts;
  for (const PodSet& ps : *pod_sets) counts.emplace_back(ps.name, ps.count);
  EXPECT_EQ(counts, (std::vector<std::pair<std::string, int>>{{"launcher", 1}, {"node", 3}, {"aux", 2}}));
}

// trainingruntime_test.go TestTrainingRuntimeNewObjects "merged resourcesPerNode keeps runtime
// resources when trainjob sets gpu only": resourcesPerNode merges per key.
TEST(TrainJobBuilderTest, ResourcesPerNodeMergesPerKey) {
  json js = MustBuild(TrainJob("test-job", {{"resourcesPerNode", {{"limits", {{"nvidia.com/gpu", 4}}}}}}),
                      InitializerRuntime(1));
  EXPECT_EQ(Container(js, "node", "node")["resources"],
            json::parse(R"({"requests":{"cpu":"1"},"limits":{"nvidia.com/gpu":4}})"));
}

TEST(TrainJobBuilderTest, PodTemplateOverridesAndRuntimePatchSpec) {
  json tj = TrainJob("test-job", json::object());
  tj["spec"]["podTemplateOverrides"] = json::parse(R"([{"targetJobs": [{"name": "node"}],
      "metadata": {"labels": {"team": "a"}},
      "spec": {"nodeSelector": {"pool": "gpu"}, "containers": [{"name": "node", "volumeMounts": [{"name": "d", "mountPath": "/d"}]}]}}])");
  tj["spec"]["runtimePatches"] = json::parse(R"([{"manager": "kueue.x-k8s.io/manager",
      "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node",
        "template": {"spec": {"template": {"spec": {"tolerations": [{"key": "k", "operator": "Exists"}],
                                                     "nodeSelector": {"zone": "z1"}}}}}}]}}}}])");
  json js = MustBuild(tj, SeedRuntime());
  const json& pod = RJob(js, "node")["template"]["spec"]["template"];
  EXPECT_EQ(pod["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(pod["spec"]["nodeSelector"], json::parse(R"({"pool":"gpu","zone":"z1"})"));
  EXPECT_EQ(pod["spec"]["tolerations"][0]["key"], "k");
  EXPECT_EQ(Container(js, "node", "node")["volumeMounts"][0]["mountPath"], "/d");
  EXPECT_EQ(Container(js, "node", "node")["image"], "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime");

  json bad = tj;
  bad["spec"]["podTemplateOverrides"][0]["targetJobs"][0]["name"] = "missing";
  auto r = Build(bad, SeedRuntime());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "replicatedJob \"missing\" is not defined in the runtime");
}

TEST(TrainJobBuilderTest, RuntimeShapeErrors) {
  json no_ancestor = SeedRuntime();
  no_ancestor["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["metadata"]["labels"] = json::object();
  auto r = Build(SeedTrainJob(), no_ancestor);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalid);
  EXPECT_EQ(r.status().message(),
            "runtime ClusterTrainingRuntime torch-distributed has no replicatedJob with label "
            "trainer.kubeflow.org/trainjob-ancestor-step=trainer");

  json no_node = SeedRuntime();
  no_node["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    ["name"] = "trainer";
  r = Build(SeedTrainJob(), no_node);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "runtime ClusterTrainingRuntime torch-distributed: replicatedJob \"node\" must contain the required "
            "container for the ancestor: trainer");
}

TEST(TrainJobBuilderTest, RuntimeReferenceMessages) {
  EXPECT_EQ(RuntimeNotFoundMessage(SeedTrainJob()),
            "clustertrainingruntimes.trainer.kubeflow.org \"torch-distributed\" not found: specified "
            "clusterTrainingRuntime must be created before the TrainJob is created");
  json ns = SeedTrainJob();
  ns["spec"]["runtimeRef"]["kind"] = "TrainingRuntime";
  EXPECT_EQ(RuntimeNotFoundMessage(ns),
            "trainingruntimes.trainer.kubeflow.org \"torch-distributed\" not found: specified trainingRuntime must be "
            "created before the TrainJob is created");
  EXPECT_EQ(UnsupportedRuntimeMessage(SeedTrainJob()), std::nullopt);
  json other = SeedTrainJob();
  other["spec"]["runtimeRef"]["kind"] = "Runtime";
  EXPECT_EQ(UnsupportedRuntimeMessage(other), "unsupported runtime: Runtime.trainer.kubeflow.org");
}

// trainjob_controller_test.go "Should succeeded to reconcile TrainJob conditions with Complete
// condition" (and "... with Failed condition"): TrainJob conditions follow suspend and the
// JobSet's terminal conditions.
TEST(TrainJobBuilderTest, StatusFromJobSet) {
  json tj = SeedTrainJob();
  tj["spec"]["suspend"] = true;
  TrainJobStatus s = StatusFromJobSet(tj, nullptr);
  ASSERT_EQ(s.conditions.size(), 1u);
  EXPECT_EQ(s.conditions[0].type, "Suspended");
  EXPECT_EQ(s.conditions[0].status, "True");
  EXPECT_EQ(s.conditions[0].reason, "Suspended");
  EXPECT_EQ(s.conditions[0].message, "TrainJob is suspended");

  tj["spec"]["suspend"] = false;
  tj["status"]["conditions"] = json::parse(R"([{"type":"Suspended","status":"True","reason":"Suspended"}])");
  json js = json::parse(R"({"status": {
      "conditions": [{"type":"Completed","status":"True","reason":"AllJobsCompleted","message":"jobset completed successfully"}],
      "replicatedJobsStatus": [{"name":"node","ready":0,"succeeded":1,"failed":0,"active":0,"suspended":0}]}})");
  s = StatusFromJobSet(tj, &js);
  ASSERT_EQ(s.conditions.size(), 2u);
  EXPECT_EQ(s.conditions[0].status, "False");
  EXPECT_EQ(s.conditions[0].reason, "Resumed");
  EXPECT_EQ(s.conditions[0].message, "TrainJob is resumed");
  EXPECT_EQ(s.conditions[1].type, "Complete");
  EXPECT_EQ(s.conditions[1].reason, "AllJobsCompleted");
  EXPECT_EQ(s.conditions[1].message, "jobset completed successfully");
  EXPECT_EQ(s.jobs_status, json::parse(R"([{"name":"node","ready":0,"succeeded":1,"failed":0,"active":0,"suspended":0}])"));

  json failed = json::parse(R"J({"status": {"conditions": [{"type":"Failed","status":"True","reason":"FailedJobs",
      "message":"jobset failed due to one or more job failures (first failed job: lora-sft-node-0)"}]}})J");
  tj["status"] = json::object();
  s = StatusFromJobSet(tj, &failed);
  ASSERT_EQ(s.conditions.size(), 1u);
  EXPECT_EQ(s.conditions[0].type, "Failed");
  EXPECT_EQ(s.conditions[0].reason, "FailedJobs");
}

TEST(TrainJobBuilderTest, ShouldApplyJobSet) {
  json tj = SeedTrainJob();
  EXPECT_TRUE(ShouldApplyJobSet(tj, nullptr));
  json running = json::parse(R"({"spec": {"suspend": false}})");
  EXPECT_FALSE(ShouldApplyJobSet(tj, &running));
  json suspended = json::parse(R"({"spec": {"suspend": true}})");
  EXPECT_TRUE(ShouldApplyJobSet(tj, &suspended));  // resume re-applies
  tj["spec"]["suspend"] = true;
  EXPECT_TRUE(ShouldApplyJobSet(tj, &running));
  tj["status"]["conditions"] = json::parse(R"([{"type":"Complete","status":"True"}])");
  EXPECT_FALSE(ShouldApplyJobSet(tj, nullptr));  // trainer#2981: never recreated once finished
}

// The JobSet the seed TrainJob builds yields Jobs whose pods carry the trainer hostnames.
TEST(TrainJobBuilderTest, SeedJobSetChildJob) {
  json js = MustBuild(SeedTrainJob(), SeedRuntime());
  js["metadata"]["uid"] = "js-uid";
  std::vector<json> jobs = jobset::ChildJobs(js);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["metadata"]["name"], "lora-sft-node-0");
  EXPECT_EQ(jobs[0]["spec"]["template"]["spec"]["subdomain"], "lora-sft");
  EXPECT_EQ(jobs[0]["spec"]["completionMode"], "Indexed");
}

}  // namespace
}  // namespace berth::controllers::jobs::trainjob
