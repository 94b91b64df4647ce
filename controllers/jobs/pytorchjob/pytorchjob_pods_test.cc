#include "controllers/jobs/pytorchjob/pytorchjob_pods.h"

#include <gtest/gtest.h>

namespace berth::controllers::jobs::pytorchjob {
namespace {

using nlohmann::json;

// A PyTorchJob production-training, Master 1 + Worker 8
// (examples/priority-pitfalls/jobs/production-training.yaml runs it with 3 Workers).
json SeedJob() {
  return json::parse(R"({
    "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
    "metadata": {"name": "production-training", "namespace": "default", "uid": "pt-uid",
                 "labels": {"kueue.x-k8s.io/queue-name": "training-queue", "kueue.x-k8s.io/priority-class": "kueue-high"}},
    "spec": {"pytorchReplicaSpecs": {
      "Master": {"replicas": 1, "template": {"spec": {"priorityClassName": "pytorchjob-zero-priority",
                 "containers": [{"name": "pytorch", "image": "trainer:1"}]}}},
      "Worker": {"replicas": 8, "template": {"spec": {"priorityClassName": "pytorchjob-zero-priority",
                 "containers": [{"name": "pytorch", "image": "trainer:1"}]}}}}}})");
}

std::string Env(const json& pod, const std::string& name) {
  for (const json& e : pod["spec"]["containers"][0]["env"]) {
    if (e["name"] == name) return e["value"];
  }
  return "<unset>";
}

TEST(PyTorchJobTest, SeedPodSets) {
  std::vector<kueue::PodSet> ps = PodSets(SeedJob());
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].name, "master");
  EXPECT_EQ(ps[0].count, 1);
  EXPECT_EQ(ps[1].name, "worker");
  EXPECT_EQ(ps[1].count, 8);
  EXPECT_EQ(ps[1].template_spec["spec"]["priorityClassName"], "pytorchjob-zero-priority");
}

TEST(PyTorchJobTest, SeedPodsHaveRanksAndWorldSize) {
  std::vector<json> pods = Pods(SeedJob());
  ASSERT_EQ(pods.size(), 9u);
  EXPECT_EQ(pods[0]["metadata"]["name"], "production-training-master-0");
  EXPECT_EQ(pods[1]["metadata"]["name"], "production-training-worker-0");
  EXPECT_EQ(pods[8]["metadata"]["name"], "production-training-worker-7");
  for (size_t i = 0; i < pods.size(); ++i) {
    EXPECT_EQ(Env(pods[i], "RANK"), std::to_string(i)) << i;
    EXPECT_EQ(Env(pods[i], "PET_NODE_RANK"), std::to_string(i)) << i;
    EXPECT_EQ(Env(pods[i], "WORLD_SIZE"), "9");
    EXPECT_EQ(Env(pods[i], "PET_NNODES"), "9");
    EXPECT_EQ(Env(pods[i], "MASTER_ADDR"), "production-training-master-0");
    EXPECT_EQ(Env(pods[i], "PET_MASTER_ADDR"), "production-training-master-0");
    EXPECT_EQ(Env(pods[i], "MASTER_PORT"), "23456");
    EXPECT_EQ(Env(pods[i], "PET_NPROC_PER_NODE"), "auto");
    EXPECT_EQ(pods[i]["spec"]["restartPolicy"], "OnFailure");
    EXPECT_EQ(pods[i]["metadata"]["ownerReferences"][0]["uid"], "pt-uid");
  }
  std::vector<std::string> names;
  for (const json& e : pods[3]["spec"]["containers"][0]["env"]) names.push_back(e["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"PYTHONUNBUFFERED", "MASTER_PORT", "PET_MASTER_PORT", "MASTER_ADDR",
                                             "PET_MASTER_ADDR", "WORLD_SIZE", "RANK", "PET_NPROC_PER_NODE",
                                             "PET_NODE_RANK", "PET_NNODES"}));
  const json& labels = pods[0]["metadata"]["labels"];
  EXPECT_EQ(labels["training.kubeflow.org/replica-type"], "master");
  EXPECT_EQ(labels["training.kubeflow.org/replica-index"], "0");
  EXPECT_EQ(labels["training.kubeflow.org/job-role"], "master");
  EXPECT_FALSE(pods[1]["metadata"]["labels"].contains("training.kubeflow.org/job-role"));
  // The default port lands on the pytorch container.
  EXPECT_EQ(pods[0]["spec"]["containers"][0]["ports"],
            json::parse(R"([{"name":"pytorchjob-port","containerPort":23456}])"));
}

TEST(PyTorchJobTest, IntegerNprocAndCustomPortAndCaseFolding) {
  json job = SeedJob();
  job["spec"]["nprocPerNode"] = "2";
  json master = job["spec"]["pytorchReplicaSpecs"]["Master"];
  job["spec"]["pytorchReplicaSpecs"].erase("Master");
  master["template"]["spec"]["containers"][0]["ports"] = json::parse(R"([{"name":"pytorchjob-port","containerPort":3389}])");
  master["restartPolicy"] = "ExitCode";
  job["spec"]["pytorchReplicaSpecs"]["master"] = master;
  std::vector<json> pods = Pods(job);
  ASSERT_EQ(pods.size(), 9u);
  EXPECT_EQ(pods[0]["metadata"]["name"], "production-training-master-0");
  EXPECT_EQ(pods[0]["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(Env(pods[0], "WORLD_SIZE"), "18");
  EXPECT_EQ(Env(pods[4], "MASTER_PORT"), "3389");
}

// nprocPerNode is any string the schema lets through: one that is no int32 (too many
// digits, a sign, a fraction) counts 1 process per node for WORLD_SIZE and is passed on to
// torchrun as written. Before, 20 digits threw in the controller and took the server down.
TEST(PyTorchJobTest, AnNprocThatIsNoInt32CountsOne) {
  for (const char* text : {"99999999999999999999", "-4", "2.5", "0", "auto", ""}) {
    json job = SeedJob();
    job["spec"]["nprocPerNode"] = text;
    std::vector<json> pods;
    ASSERT_NO_THROW(pods = Pods(job)) << text;
    ASSERT_EQ(pods.size(), 9u) << text;
    EXPECT_EQ(Env(pods[0], "WORLD_SIZE"), "9") << text;
  }
}

TEST(PyTorchJobTest, ServicesPerPod) {
  std::vector<json> svcs = Services(SeedJob());
  ASSERT_EQ(svcs.size(), 9u);
  EXPECT_EQ(svcs[0]["metadata"]["name"], "production-training-master-0");
  EXPECT_EQ(svcs[0]["spec"]["clusterIP"], "None");
  EXPECT_EQ(svcs[0]["spec"]["selector"], json::parse(R"({"training.kubeflow.org/job-name":"production-training",
      "training.kubeflow.org/replica-type":"master","training.kubeflow.org/replica-index":"0"})"));
  EXPECT_EQ(svcs[0]["spec"]["ports"], json::parse(R"([{"name":"pytorchjob-port","port":23456}])"));
  EXPECT_EQ(svcs[8]["metadata"]["name"], "production-training-worker-7");
}

TEST(PyTorchJobTest, WorkersOnlyHaveNoMasterEnv) {
  json job = SeedJob();
  job["spec"]["pytorchReplicaSpecs"].erase("Master");
  std::vector<json> pods = Pods(job);
  ASSERT_EQ(pods.size(), 8u);
  EXPECT_EQ(Env(pods[0], "RANK"), "<unset>");
  EXPECT_EQ(Env(pods[0], "PET_NNODES"), "8");
}

}  // namespace
}  // namespace berth::controllers::jobs::pytorchjob
