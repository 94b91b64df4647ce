#include "placement/filters.h"

#include <algorithm>

#include <fmt/format.h>

#include "scheduling/host_images.h"
#include "scheduling/node_selector.h"
#include "scheduling/toleration.h"

namespace berth::placement {

std::string UntoleratedTaintReason(const scheduling::Taint& t) {
  return fmt::format("node(s) had untolerated taint {{{}: {}}}", t.key, t.value);
}

std::string InsufficientResourceReason(std::string_view resource) {
  return fmt::format("Insufficient {}", resource);
}

NodeStatus NodeUnschedulableFilter(const Pod& pod, const NodeInfo& node) {
  if (!node.node().unschedulable) return {};
  static const scheduling::Taint kUnschedulable{std::string(kTaintNodeUnschedulable), "",
                                                scheduling::TaintEffect::kNoSchedule};
  if (scheduling::TolerationsTolerate(pod.tolerations, kUnschedulable)) return {};
  return NodeStatus::Unresolvable(kReasonNodeUnschedulable);
}

NodeStatus NodeNameFilter(const Pod& pod, const NodeInfo& node) {
  if (pod.node_name.empty() || pod.node_name == node.name()) return {};
  return NodeStatus::Unresolvable(kReasonNodeName);
}

NodeStatus TaintTolerationFilter(const Pod& pod, const NodeInfo& node) {
  for (const scheduling::Taint& t : node.taints()) {
    if (t.effect == scheduling::TaintEffect::kPreferNoSchedule) continue;
    if (!scheduling::TolerationsTolerate(pod.tolerations, t)) {
      return NodeStatus::Unresolvable(UntoleratedTaintReason(t));
    }
  }
  return {};
}

NodeStatus NodeAffinityFilter(const Pod& pod, const NodeInfo& node) {
  const Node& n = node.node();
  for (const auto& [key, value] : pod.node_selector) {
    auto it = n.labels.find(key);
    if (it == n.labels.end() || it->second != value) {
      return NodeStatus::Unresolvable(kReasonNodeAffinity);
    }
  }
  if (pod.required_node_affinity.has_value() &&
      !scheduling::MatchesNodeSelectorTerms(*pod.required_node_affinity, n.labels, n.name)) {
    return NodeStatus::Unresolvable(kReasonNodeAffinity);
  }
  return {};
}

NodeStatus HostImagesFilter(const Pod& pod, const NodeInfo& node) {
  std::optional<std::string> image = scheduling::FirstUnsupportedImage(node.node().host_images, pod.images);
  if (!image) return {};
  return NodeStatus::Unresolvable(scheduling::UnsupportedImageReason(*image));
}

NodeStatus NodeResourcesFitFilter(const PodUsage& pod, const NodeInfo& node,
                                  const NodeUsage& usage, const ResourceNames& names) {
  NodeStatus st;
  if (usage.pod_count + 1 > node.allowed_pods()) st.reasons.emplace_back(kReasonTooManyPods);
  std::vector<std::string> scalar;  // sorted by name afterwards
  for (const auto& [id, milli] : pod.requests) {
    int64_t free = SaturatingSub(node.Allocatable(id), usage.Requested(id));
    if (milli <= free) continue;
    if (id <= ResourceNames::kEphemeralStorageId) {
      st.reasons.push_back(InsufficientResourceReason(names.Name(id)));
    } else {
      scalar.push_back(InsufficientResourceReason(names.Name(id)));
    }
  }
  for (const auto& [name, milli] : pod.unknown_requests) {
    scalar.push_back(InsufficientResourceReason(name));
  }
  std::sort(scalar.begin(), scalar.end());
  for (auto& r : scalar) st.reasons.push_back(std::move(r));
  if (!st.reasons.empty()) st.code = FilterCode::kUnschedulable;
  return st;
}

NodeStatus RunFilters(const Pod& pod, const PodUsage& pod_usage, const NodeInfo& node,
                      const NodeUsage& usage, const ResourceNames& names) {
  // The plugins in order; the guards skip plugins that cannot fail here.
  if (node.node().unschedulable) {
    NodeStatus st = NodeUnschedulableFilter(pod, node);
    if (!st.ok()) return st;
  }
  if (!pod.node_name.empty()) {
    NodeStatus st = NodeNameFilter(pod, node);
    if (!st.ok()) return st;
  }
  if (!node.taints().empty()) {
    NodeStatus st = TaintTolerationFilter(pod, node);
    if (!st.ok()) return st;
  }
  if (!pod.node_selector.empty() || pod.required_node_affinity.has_value()) {
    NodeStatus st = NodeAffinityFilter(pod, node);
    if (!st.ok()) return st;
  }
  if (node.node().host_images.has_value()) {
    NodeStatus st = HostImagesFilter(pod, node);
    if (!st.ok()) return st;
  }
  return NodeResourcesFitFilter(pod_usage, node, usage, names);
}

namespace {
bool SamePod(const Pod& a, const Pod& b) {
  if (!a.uid.empty() && !b.uid.empty()) return a.uid == b.uid;
  return a.namespace_ == b.namespace_ && a.name == b.name;
}
}  // namespace

NodeStatus RunFiltersWithNominatedPods(const Pod& pod, const PodUsage& pod_usage,
                                       const NodeInfo& node, const NodeUsage& usage,
                                       const ResourceNames& names) {
  const NodeUsage* effective = &usage;
  NodeUsage with_nominated;
  for (const auto& n : node.nominated()) {
    if (n.pod.priority < pod.priority || SamePod(n.pod, pod)) continue;
    if (effective == &usage) {
      with_nominated = usage;
      effective = &with_nominated;
    }
    with_nominated.Add(n.usage);
  }
  return RunFilters(pod, pod_usage, node, *effective, names);
}

}  // namespace berth::placement
