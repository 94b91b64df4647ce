#include "controllers/scheduler/pod_decoder.h"

#include <gtest/gtest.h>

namespace berth::controllers::scheduler {
namespace {

using placement::PreemptionPolicy;
using scheduling::TaintEffect;

TEST(PodDecoderTest, NodeFields) {
  api::Object n = api::Object::parse(R"({"apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "gpu-1", "labels": {"zone": "a"}},
    "spec": {"unschedulable": true, "taints": [
      {"key": "gpu", "value": "true", "effect": "NoSchedule"},
      {"key": "odd", "effect": "Sometimes"},
      {"key": "soft", "effect": "PreferNoSchedule"}]},
    "status": {"allocatable": {"cpu": "7500m", "memory": "16Gi", "pods": 110, "nvidia.com/gpu": "bad"},
               "conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}]}})");
  placement::Node node = DecodeNode(n);
  EXPECT_EQ(node.name, "gpu-1");
  EXPECT_EQ(node.labels.at("zone"), "a");
  EXPECT_TRUE(node.unschedulable);
  EXPECT_TRUE(node.ready);
  ASSERT_EQ(node.taints.size(), 2u);  // the unknown effect is dropped
  EXPECT_EQ(node.taints[0].key, "gpu");
  EXPECT_EQ(node.taints[0].value, "true");
  EXPECT_EQ(node.taints[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(node.taints[1].effect, TaintEffect::kPreferNoSchedule);
  EXPECT_EQ(node.allocatable.Get("cpu"), Quantity::MustParse("7500m"));
  EXPECT_EQ(node.allocatable.Get("memory"), Quantity::MustParse("16Gi"));
  EXPECT_EQ(node.allocatable.Get("pods"), Quantity::MustParse("110"));
  EXPECT_FALSE(node.allocatable.Has("nvidia.com/gpu"));  // malformed: absent
}

TEST(PodDecoderTest, NodeWithoutReadyConditionIsNotReady) {
  placement::Node node = DecodeNode(api::Object::parse(R"({"metadata": {"name": "n"}, "status": {}})"));
  EXPECT_FALSE(node.ready);
  node = DecodeNode(api::Object::parse(
      R"({"metadata": {"name": "n"}, "status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}})"));
  EXPECT_FALSE(node.ready);
}

TEST(PodDecoderTest, HostImagesFromTheNodeAnnotationAndImagesOfEveryContainer) {
  EXPECT_EQ(DecodeNode(api::Object{{"metadata", {{"name", "n"}}}}).host_images, std::nullopt);
  api::Object node = {{"metadata", {{"name", "n"}, {"annotations", {{"berth.dev/host-images", "busybox, pytorch/*"}}}}}};
  EXPECT_EQ(DecodeNode(node).host_images, (std::vector<std::string>{"busybox", "pytorch/*"}));
  node["metadata"]["annotations"]["berth.dev/host-images"] = "";
  EXPECT_EQ(DecodeNode(node).host_images, std::vector<std::string>{});  // declared, and nothing runs
  const api::Object pod = {{"metadata", {{"name", "p"}}},
                           {"spec",
                            {{"initContainers", {{{"name", "i"}, {"image", "alpine"}}}},
                             {"containers", {{{"name", "a"}, {"image", "busybox"}}, {{"name", "b"}}}}}}};
  EXPECT_EQ(DecodePod(pod).images, (std::vector<std::string>{"alpine", "busybox", ""}));
}

TEST(PodDecoderTest, PodFieldsAndEffectiveRequests) {
  api::Object p = api::Object::parse(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "w0", "namespace": "team-a", "uid": "u1", "deletionTimestamp": "2026-01-01T00:00:10Z"},
    "spec": {"priority": 100, "preemptionPolicy": "Never", "nodeName": "n1",
      "nodeSelector": {"zone": "a"},
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]}],
         "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n9"]}]}]}}},
      "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}, {"key": "x", "value": "y"}],
      "initContainers": [{"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
                         {"name": "init", "resources": {"requests": {"cpu": "200m"}}}],
      "containers": [{"name": "main", "resources": {"limits": {"cpu": "100m", "memory": "1Gi"}}}],
      "overhead": {"cpu": "10m"}},
    "status": {"nominatedNodeName": "n2", "startTime": "2026-01-01T00:00:00Z",
      "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]}})");
  placement::Pod pod = DecodePod(p);
  EXPECT_EQ(pod.Key(), "team-a/w0");
  EXPECT_EQ(pod.uid, "u1");
  EXPECT_EQ(pod.priority, 100);
  EXPECT_EQ(pod.preemption_policy, PreemptionPolicy::kNever);
  EXPECT_EQ(pod.node_name, "n1");
  EXPECT_EQ(pod.node_selector.at("zone"), "a");
  ASSERT_TRUE(pod.required_node_affinity.has_value());
  ASSERT_EQ(pod.required_node_affinity->size(), 1u);
  const scheduling::NodeSelectorTerm& term = (*pod.required_node_affinity)[0];
  ASSERT_EQ(term.match_expressions.size(), 1u);
  EXPECT_EQ(term.match_expressions[0].op, scheduling::NodeSelectorRequirement::Operator::kIn);
  EXPECT_EQ(term.match_expressions[0].values, (std::vector<std::string>{"a100", "h100"}));
  ASSERT_EQ(term.match_fields.size(), 1u);
  EXPECT_EQ(term.match_fields[0].op, scheduling::NodeSelectorRequirement::Operator::kNotIn);
  ASSERT_EQ(pod.tolerations.size(), 2u);
  EXPECT_EQ(pod.tolerations[0].op, scheduling::Toleration::Operator::kExists);
  EXPECT_EQ(pod.tolerations[0].effect, TaintEffect::kNoSchedule);
  EXPECT_EQ(pod.tolerations[1].op, scheduling::Toleration::Operator::kEqual);
  EXPECT_FALSE(pod.tolerations[1].effect.has_value());
  EXPECT_EQ(pod.nominated_node_name, "n2");
  EXPECT_TRUE(pod.start_time.has_value());
  EXPECT_TRUE(pod.terminating);
  EXPECT_TRUE(pod.terminating_by_preemption);
  // scheduling/pod_requests.h's formula: sidecar 100m + main 100m (limit as
  // request) vs init 200m + sidecar 100m = 300m, then overhead 10m.
  placement::ResourceList req = scheduling::PodRequests(pod.resources);
  EXPECT_EQ(req.Get("cpu"), Quantity::MustParse("310m"));
  EXPECT_EQ(req.Get("memory"), Quantity::MustParse("1Gi"));
}

TEST(PodDecoderTest, PodDefaults) {
  placement::Pod pod = DecodePod(api::Object::parse(R"({"metadata": {"name": "p", "namespace": "d"}, "spec": {}})"));
  EXPECT_EQ(pod.priority, 0);
  EXPECT_EQ(pod.preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_FALSE(pod.required_node_affinity.has_value());
  EXPECT_FALSE(pod.terminating);
  EXPECT_FALSE(pod.start_time.has_value());
}

TEST(PodDecoderTest, SchedulerNameAndTerminal) {
  EXPECT_EQ(SchedulerName(api::Object::parse(R"({"spec": {}})")), "default-scheduler");
  EXPECT_EQ(SchedulerName(api::Object::parse(R"({"spec": {"schedulerName": "other"}})")), "other");
  EXPECT_TRUE(IsPodTerminal(api::Object::parse(R"({"status": {"phase": "Succeeded"}})")));
  EXPECT_TRUE(IsPodTerminal(api::Object::parse(R"({"status": {"phase": "Failed"}})")));
  EXPECT_FALSE(IsPodTerminal(api::Object::parse(R"({"status": {"phase": "Running"}})")));
}

}  // namespace
}  // namespace berth::controllers::scheduler
