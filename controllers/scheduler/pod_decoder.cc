#include "controllers/scheduler/pod_decoder.h"

#include <optional>
#include <utility>

#include "core/clock.h"
#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/common/scheduling_decoder.h"
#include "core/quantity.h"
#include "placement/messages.h"
#include "scheduling/host_images.h"
#include "scheduling/node_selector.h"
#include "scheduling/pod_requests.h"
#include "scheduling/taint.h"
#include "scheduling/toleration.h"

namespace berth::controllers::scheduler {

using api::NestedField;
using api::NestedString;

const client::GroupVersionResource kPods{"", "v1", "pods"};
const client::GroupVersionResource kNodes{"", "v1", "nodes"};

namespace {

placement::ResourceList DecodeResourceList(const api::Object& list) {
  placement::ResourceList out;
  if (!list.is_object()) return out;
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (std::optional<Quantity> q = DecodeQuantity(it.value())) out.Set(it.key(), *q);
  }
  return out;
}

scheduling::ContainerResources<placement::ResourceList> DecodeContainer(const api::Object& c) {
  scheduling::ContainerResources<placement::ResourceList> out;
  out.requests = DecodeResourceList(NestedField(c, {"resources", "requests"}));
  out.limits = DecodeResourceList(NestedField(c, {"resources", "limits"}));
  out.restart_always = NestedString(c, {"restartPolicy"}) == "Always";
  return out;
}

std::optional<placement::PreemptionPolicy> DecodePolicy(const api::Object& v) {
  return v.is_string() ? placement::ParsePreemptionPolicy(v.get<std::string>()) : std::nullopt;
}

}  // namespace

placement::Node DecodeNode(const api::Object& obj) {
  placement::Node n;
  n.name = api::Name(obj);
  n.labels = DecodeLabels(NestedField(obj, {"metadata", "labels"}));
  const api::Object& taints = NestedField(obj, {"spec", "taints"});
  if (taints.is_array()) {
    for (const api::Object& t : taints) {
      std::optional<scheduling::TaintEffect> effect = DecodeTaintEffect(NestedString(t, {"effect"}));
      if (!effect) continue;
      n.taints.push_back({NestedString(t, {"key"}), NestedString(t, {"value"}), *effect});
    }
  }
  n.allocatable = DecodeResourceList(NestedField(obj, {"status", "allocatable"}));
  const api::Object& unschedulable = NestedField(obj, {"spec", "unschedulable"});
  n.unschedulable = unschedulable.is_boolean() && unschedulable.get<bool>();
  n.ready = api::IsConditionTrue(obj, "Ready");
  n.disk_pressure = api::IsConditionTrue(obj, "DiskPressure");
  const api::Object& images = NestedField(obj, {"metadata", "annotations", scheduling::kHostImagesAnnotation});
  if (images.is_string()) n.host_images = scheduling::ParseHostImages(images.get<std::string>());
  return n;
}

placement::Pod DecodePod(const api::Object& obj) {
  placement::Pod p;
  p.namespace_ = api::Namespace(obj);
  p.name = api::Name(obj);
  p.uid = api::Uid(obj);
  const api::Object& spec = NestedField(obj, {"spec"});
  if (const api::Object& prio = NestedField(spec, {"priority"}); prio.is_number_integer()) {
    p.priority = prio.get<int32_t>();
  }
  p.preemption_policy =
      DecodePolicy(NestedField(spec, {"preemptionPolicy"})).value_or(placement::PreemptionPolicy::kPreemptLowerPriority);
  for (const char* list : {"initContainers", "containers"}) {
    const api::Object& cs = NestedField(spec, {list});
    if (!cs.is_array()) continue;
    auto& out = std::string_view(list) == "containers" ? p.resources.containers : p.resources.init_containers;
    for (const api::Object& c : cs) {
      out.push_back(DecodeContainer(c));
      p.images.push_back(NestedString(c, {"image"}));
    }
  }
  p.resources.overhead = DecodeResourceList(NestedField(spec, {"overhead"}));
  p.node_name = NestedString(spec, {"nodeName"});
  p.node_selector = DecodeLabels(NestedField(spec, {"nodeSelector"}));
  const api::Object& required =
      NestedField(spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"});
  if (required.is_object()) p.required_node_affinity = DecodeNodeSelectorTerms(required);
  p.tolerations = DecodeTolerations(NestedField(spec, {"tolerations"}));
  p.nominated_node_name = NestedString(obj, {"status", "nominatedNodeName"});
  Time start;
  if (ParseRfc3339(NestedString(obj, {"status", "startTime"}), &start)) p.start_time = start;
  p.terminating = !NestedField(obj, {"metadata", "deletionTimestamp"}).is_null();
  if (api::IsConditionTrue(obj, "DisruptionTarget") &&
      api::ConditionField(obj, "DisruptionTarget", "reason") == "PreemptionByScheduler") {
    p.terminating_by_preemption = p.terminating;
  }
  return p;
}

std::string SchedulerName(const api::Object& pod) {
  std::string s = NestedString(pod, {"spec", "schedulerName"});
  return s.empty() ? std::string(placement::kDefaultSchedulerName) : s;
}

bool IsPodTerminal(const api::Object& pod) {
  const std::string phase = NestedString(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace berth::controllers::scheduler
