#include "agent/container_env.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

api::Object TestPod() {
  return api::Object::parse(R"json({
    "metadata": {"name": "pytorch-workers-0-1-abcde", "namespace": "team-a", "uid": "u-1",
                 "labels": {"app": "train"},
                 "annotations": {"batch.kubernetes.io/job-completion-index": "1"}},
    "spec": {"nodeName": "node-a", "serviceAccountName": "trainer",
             "hostname": "pytorch-workers-0-1", "subdomain": "pytorch",
             "initContainers": [{"name": "init", "command": ["true"]}],
             "containers": [
      {"name": "main", "command": ["torchrun", "--rdzv=$(MASTER_ADDR):$(MASTER_PORT)"],
       "args": ["$(UNDEFINED)", "$$(RANK)", "rank=$(RANK)"],
       "workingDir": "/work",
       "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": 3221225472}},
       "env": [
        {"name": "MASTER_ADDR", "value": "pytorch-workers-0-0.pytorch"},
        {"name": "MASTER_PORT", "value": "3389"},
        {"name": "ENDPOINT", "value": "$(MASTER_ADDR):$(MASTER_PORT)/$(LATER)"},
        {"name": "LATER", "value": "x"},
        {"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}},
        {"name": "APP", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['app']"}}},
        {"name": "MISSING", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['nope']"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "SA", "valueFrom": {"fieldRef": {"fieldPath": "spec.serviceAccountName"}}},
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
        {"name": "CPU_REQ_M", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": "1m"}}},
        {"name": "CPU_REQ", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu"}}},
        {"name": "CPU_LIM", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
        {"name": "MEM_LIM_MI", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}}},
        {"name": "MEM_REQ_GI", "valueFrom": {"resourceFieldRef": {"resource": "requests.memory", "divisor": "1Gi"}}},
        {"name": "INIT_CPU_LIM", "valueFrom": {"resourceFieldRef": {"containerName": "init", "resource": "limits.cpu"}}},
        {"name": "INIT_STORAGE_REQ", "valueFrom": {"resourceFieldRef": {"containerName": "init", "resource": "requests.ephemeral-storage"}}},
        {"name": "MASTER_PORT", "value": "29500"}
       ]}]}
  })json");
}

NodeFacts TestNode() {
  NodeFacts n;
  n.pod_ip = "10.0.0.7";
  n.host_ip = "10.0.0.7";
  n.allocatable["cpu"] = Quantity::MustParse("7500m");
  n.allocatable["memory"] = Quantity::MustParse("32Gi");
  return n;
}

std::string Get(const std::vector<EnvVar>& env, const std::string& name) {
  for (const auto& v : env) {
    if (v.name == name) return v.value;
  }
  return "<unset>";
}

TEST(ContainerEnvTest, ResolvesLiteralsFieldRefsAndResourceFieldRefs) {
  auto env = ResolveEnv(TestPod(), "main", TestNode());
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(Get(*env, "MASTER_ADDR"), "pytorch-workers-0-0.pytorch");
  // The later duplicate wins but keeps the first position.
  EXPECT_EQ(Get(*env, "MASTER_PORT"), "29500");
  EXPECT_EQ((*env)[1].name, "MASTER_PORT");
  // Only earlier variables expand; the value of MASTER_PORT at that point was 3389.
  EXPECT_EQ(Get(*env, "ENDPOINT"), "pytorch-workers-0-0.pytorch:3389/$(LATER)");
  EXPECT_EQ(Get(*env, "RANK"), "1");
  EXPECT_EQ(Get(*env, "POD_NAME"), "pytorch-workers-0-1-abcde");
  EXPECT_EQ(Get(*env, "POD_NS"), "team-a");
  EXPECT_EQ(Get(*env, "POD_UID"), "u-1");
  EXPECT_EQ(Get(*env, "APP"), "train");
  EXPECT_EQ(Get(*env, "MISSING"), "");
  EXPECT_EQ(Get(*env, "NODE"), "node-a");
  EXPECT_EQ(Get(*env, "SA"), "trainer");
  EXPECT_EQ(Get(*env, "POD_IP"), "10.0.0.7");
  EXPECT_EQ(Get(*env, "HOST_IP"), "10.0.0.7");
  EXPECT_EQ(Get(*env, "CPU_REQ_M"), "500");
  EXPECT_EQ(Get(*env, "CPU_REQ"), "1");  // ceil(0.5)
  EXPECT_EQ(Get(*env, "CPU_LIM"), "2");
  EXPECT_EQ(Get(*env, "MEM_LIM_MI"), "3072");
  EXPECT_EQ(Get(*env, "MEM_REQ_GI"), "1");
  EXPECT_EQ(Get(*env, "INIT_CPU_LIM"), "8");  // unset limit = node allocatable 7.5, ceil
  EXPECT_EQ(Get(*env, "INIT_STORAGE_REQ"), "0");
  EXPECT_EQ(Get(*env, "HOSTNAME"), "pytorch-workers-0-1");
  EXPECT_EQ(Get(*env, "PATH"), std::string(kDefaultPath));
}

TEST(ContainerEnvTest, CommandAndArgsExpandAgainstTheFinalEnvironment) {
  auto cmd = ResolveCommand(TestPod(), "main", TestNode());
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  EXPECT_EQ(cmd->argv, (std::vector<std::string>{"torchrun", "--rdzv=pytorch-workers-0-0.pytorch:29500", "$(UNDEFINED)",
                                                 "$(RANK)", "rank=1"}));
  EXPECT_EQ(cmd->working_dir, "/work");
}

TEST(ContainerEnvTest, NoCommandLeavesArgvEmpty) {
  auto pod = api::Object::parse(
      R"json({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox", "args": ["x"]}]}})json");
  auto cmd = ResolveCommand(pod, "c", NodeFacts{});
  ASSERT_TRUE(cmd.ok());
  EXPECT_TRUE(cmd->argv.empty());
  EXPECT_EQ(Get(cmd->env, "HOSTNAME"), "p");
}

TEST(ContainerEnvTest, ExpandVarsFollowsUpstreamEscapes) {
  std::map<std::string, std::string, std::less<>> vars{{"A", "1"}, {"B", ""}};
  struct Case {
    const char* in;
    const char* want;
  } cases[] = {
      {"$(A)", "1"},    {"x$(A)y$(B)z", "x1yz"}, {"$$(A)", "$(A)"}, {"$$", "$"},      {"$A", "$A"},
      {"$(C)", "$(C)"}, {"$(A", "$(A"},          {"a$", "a$"},      {"$$$(A)", "$1"},
  };
  for (const auto& c : cases) EXPECT_EQ(ExpandVars(c.in, vars), c.want) << c.in;
}

TEST(ContainerEnvTest, UnsupportedSourcesAreConfigErrors) {
  struct Case {
    const char* env;
    const char* message;
  } cases[] = {
      {R"json({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels"}}})json",
       "unsupported fieldPath: metadata.labels"},
      {R"json({"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.hostname"}}})json",
       "unsupported fieldPath: spec.hostname"},
      {R"json({"name": "X", "valueFrom": {"resourceFieldRef": {"resource": "limits.nvidia.com/gpu"}}})json",
       "unsupported container resource: limits.nvidia.com/gpu"},
      {R"json({"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}})json",
       "env X: configMapKeyRef is not supported by berth's node agent"},
  };
  for (const auto& c : cases) {
    auto pod = api::Object::parse(R"json({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}})json");
    pod["spec"]["containers"][0]["env"] = api::Object::array({api::Object::parse(c.env)});
    auto env = ResolveEnv(pod, "c", NodeFacts{});
    ASSERT_FALSE(env.ok()) << c.env;
    EXPECT_EQ(env.status().code(), Code::kInvalid);
    EXPECT_EQ(env.status().message(), c.message);
  }
}

TEST(ContainerEnvTest, UnknownContainerIsNotFound) {
  auto env = ResolveEnv(TestPod(), "nope", NodeFacts{});
  EXPECT_EQ(env.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace berth::agent
