#include "api/trainer_strategies.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;

const Strategy& Get(const char* kind) {
  const Strategy* s = StrategyRegistry::Default().Find("trainer.kubeflow.org", kind);
  EXPECT_NE(s, nullptr) << kind;
  return *s;
}

json TrainJob(const std::string& name) {
  json tj = json::parse(R"({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
    "metadata": {"namespace": "team-a"},
    "spec": {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime", "name": "torch-distributed"},
             "trainer": {"numNodes": 1, "resourcesPerNode": {"requests": {"cpu": "4", "memory": "6Gi"}}}}})");
  tj["metadata"]["name"] = name;
  return tj;
}

std::vector<std::string> Errors(const FieldErrorList& errs) {
  std::vector<std::string> out;
  for (const FieldError& e : errs) out.push_back(e.Error());
  return out;
}

TEST(TrainerStrategiesTest, SeedTrainJobIsValid) {
  EXPECT_TRUE(Get("TrainJob").ValidateCreate(TrainJob("lora-sft")).empty());
}

TEST(TrainerStrategiesTest, NameMustBeRfc1035LabelOfAtMost63) {
  FieldErrorList errs = Get("TrainJob").ValidateCreate(TrainJob("1bad"));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].field, "");
  EXPECT_EQ(errs[0].Body(), "Invalid value: \"object\": metadata.name must match RFC 1035 DNS label format");
  errs = Get("TrainJob").ValidateCreate(TrainJob("a.b"));
  ASSERT_EQ(errs.size(), 1u);
  errs = Get("TrainJob").ValidateCreate(TrainJob(std::string(64, 'a')));
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].Body(), "Invalid value: \"object\": metadata.name must be no more than 63 characters");
  EXPECT_TRUE(Get("TrainJob").ValidateCreate(TrainJob(std::string(63, 'a'))).empty());
}

TEST(TrainerStrategiesTest, ReservedEnvNumProcPerNodeAndManagedBy) {
  json tj = TrainJob("lora-sft");
  tj["spec"]["trainer"]["env"] = json::parse(R"([{"name":"PET_NODE_RANK","value":"0"},{"name":"A","value":"b"},
                                                 {"name":"PET_NNODES","value":"2"}])");
  tj["spec"]["trainer"]["numProcPerNode"] = 0;
  tj["spec"]["managedBy"] = "me";
  EXPECT_EQ(Errors(Get("TrainJob").ValidateCreate(tj)),
            (std::vector<std::string>{
                "spec.trainer.numProcPerNode: Invalid value: \"integer\": NumProcPerNode must be equal to auto, cpu, "
                "gpu, or int value",
                "spec.managedBy: Invalid value: \"string\": ManagedBy must be trainer.kubeflow.org/trainjob-controller "
                "or kueue.x-k8s.io/multikueue if set",
                "spec.trainer.env: Invalid value: [{\"name\":\"PET_NODE_RANK\",\"value\":\"0\"},{\"name\":\"A\","
                "\"value\":\"b\"},{\"name\":\"PET_NNODES\",\"value\":\"2\"}]: must not have reserved envs, invalid "
                "envs configured: [PET_NNODES PET_NODE_RANK]"}));
  for (json ok : {json("auto"), json("cpu"), json("gpu"), json(4)}) {
    json t = TrainJob("lora-sft");
    t["spec"]["trainer"]["numProcPerNode"] = ok;
    EXPECT_TRUE(Get("TrainJob").ValidateCreate(t).empty()) << ok;
  }
}

TEST(TrainerStrategiesTest, TrainerAndRuntimeRefImmutable) {
  json old = TrainJob("lora-sft");
  json now = old;
  now["spec"]["trainer"]["numNodes"] = 2;
  now["spec"]["suspend"] = true;  // mutable
  EXPECT_EQ(Errors(Get("TrainJob").ValidateUpdate(now, old)),
            (std::vector<std::string>{"spec.trainer: Invalid value: \"object\": field is immutable"}));
  now = old;
  now["spec"]["runtimeRef"]["name"] = "other";
  EXPECT_EQ(Errors(Get("TrainJob").ValidateUpdate(now, old)),
            (std::vector<std::string>{"spec.runtimeRef: Invalid value: \"object\": field is immutable"}));
  EXPECT_TRUE(Get("TrainJob").ValidateUpdate(old, old).empty());
}

TEST(TrainerStrategiesTest, RuntimeAncestorRules) {
  json rt = json::parse(R"({"kind": "ClusterTrainingRuntime", "metadata": {"name": "torch-distributed"},
    "spec": {"mlPolicy": {"numNodes": 1, "torch": {}}, "template": {"spec": {"replicatedJobs": [
      {"name": "node", "replicas": 1, "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
        "spec": {"template": {"spec": {"containers": [{"name": "node", "image": "x"}]}}}}}]}}}})");
  EXPECT_TRUE(Get("ClusterTrainingRuntime").ValidateCreate(rt).empty());
  json bad = rt;
  bad["spec"]["template"]["spec"]["replicatedJobs"][0]["replicas"] = 2;
  bad["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["name"] = "trainer";
  EXPECT_EQ(Errors(Get("TrainingRuntime").ValidateCreate(bad)),
            (std::vector<std::string>{
                "spec.template.spec.replicatedJobs[0].replicas: Invalid value: 2: always must be 1",
                "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid value: "
                "[{\"image\":\"x\",\"name\":\"trainer\"}]: must contain the required container for the ancestor: trainer"}));
  // Updates are not validated (upstream's ValidateUpdate returns nothing).
  EXPECT_TRUE(Get("TrainingRuntime").ValidateUpdate(bad, rt).empty());
}

}  // namespace
}  // namespace berth::api
