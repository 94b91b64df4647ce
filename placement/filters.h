// Filter plugins: whether a pod may run on a node, with kube-scheduler's
// reason texts, status codes and plugin order (kubernetes v1.32 default
// profile, pkg/scheduler/framework/plugins):
//
//   1. NodeUnschedulable — spec.unschedulable and the pod does not tolerate
//      node.kubernetes.io/unschedulable:NoSchedule
//      -> UnschedulableAndUnresolvable "node(s) were unschedulable".
//   2. NodeName — spec.nodeName set and different from the node
//      -> UnschedulableAndUnresolvable "node(s) didn't match the requested node name".
//   3. TaintToleration — the first NoSchedule/NoExecute taint (in the node's
//      order) no toleration tolerates
//      -> UnschedulableAndUnresolvable "node(s) had untolerated taint {<key>: <value>}".
//   4. NodeAffinity — spec.nodeSelector (every pair must equal a node label)
//      and the required node affinity terms (model.h)
//      -> UnschedulableAndUnresolvable "node(s) didn't match Pod's node affinity/selector".
//   4b. HostImages (berth's own, scheduling/host_images.h) — a container image
//      the node does not run on its host
//      -> UnschedulableAndUnresolvable "node(s) cannot run image \"<image>\" on the host".
//   5. NodeResourcesFit — "Too many pods" when the bound pods + 1 exceed
//      allocatable pods; then, for every requested resource with a non-zero
//      request, "Insufficient <resource>" when request > allocatable −
//      requested (cpu, memory, ephemeral-storage, then scalar resources by
//      name); all reasons are kept -> Unschedulable (preemption may help).
//      Requested counts bound pods, terminating ones included. (v1.34
//      returns UnschedulableAndUnresolvable when the request exceeds the
//      whole allocatable, kubernetes PR #131345; berth follows v1.32, the
//      version kubectl here speaks to, so such a node is still offered to
//      preemption and reported "No preemption victims found ..." when it
//      holds no lower-priority pod.)
// As upstream (framework.RunFilterPlugins), a node is rejected by the first
// failing plugin: its status carries that plugin's reasons only.
//
// Not modelled: NodePorts, volume plugins, PodTopologySpread,
// InterPodAffinity (berth pods use host networking with allocated ports and
// no volumes/affinity terms of those kinds).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "placement/model.h"
#include "placement/snapshot.h"

namespace berth::placement {

inline constexpr std::string_view kReasonNodeUnschedulable = "node(s) were unschedulable";
inline constexpr std::string_view kReasonNodeName = "node(s) didn't match the requested node name";
inline constexpr std::string_view kReasonNodeAffinity =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kReasonTooManyPods = "Too many pods";
// "node(s) had untolerated taint {<key>: <value>}".
std::string UntoleratedTaintReason(const scheduling::Taint& t);
// "Insufficient <resource>".
std::string InsufficientResourceReason(std::string_view resource);

// framework.Code, reduced to what filters return.
enum class FilterCode { kSuccess, kUnschedulable, kUnschedulableAndUnresolvable };

struct NodeStatus {
  FilterCode code = FilterCode::kSuccess;
  std::vector<std::string> reasons;  // empty on success

  bool ok() const { return code == FilterCode::kSuccess; }
  static NodeStatus Unresolvable(std::string_view reason) {
    return {FilterCode::kUnschedulableAndUnresolvable, {std::string(reason)}};
  }
  bool operator==(const NodeStatus&) const = default;
};

// One node's failure in a scheduling attempt.
struct NodeFailure {
  std::string node_name;
  NodeStatus status;
  bool operator==(const NodeFailure&) const = default;
};

// The individual plugins (steps 1-5).
NodeStatus NodeUnschedulableFilter(const Pod& pod, const NodeInfo& node);
NodeStatus NodeNameFilter(const Pod& pod, const NodeInfo& node);
NodeStatus TaintTolerationFilter(const Pod& pod, const NodeInfo& node);
NodeStatus NodeAffinityFilter(const Pod& pod, const NodeInfo& node);
NodeStatus HostImagesFilter(const Pod& pod, const NodeInfo& node);
// `usage` is what the node's pods hold (possibly with nominated pods added
// or victims removed); `names` resolves scalar resource ids for reasons.
NodeStatus NodeResourcesFitFilter(const PodUsage& pod, const NodeInfo& node,
                                  const NodeUsage& usage, const ResourceNames& names);

// All plugins in order, stopping at the first failure.
NodeStatus RunFilters(const Pod& pod, const PodUsage& pod_usage, const NodeInfo& node,
                      const NodeUsage& usage, const ResourceNames& names);

// RunFilterPluginsWithNominatedPods: `usage` plus every pod nominated to the
// node whose priority is higher than or equal to the pod's (the pod's own
// nomination excluded), then RunFilters. Lower-priority nominations do not
// reserve anything for this pod.
NodeStatus RunFiltersWithNominatedPods(const Pod& pod, const PodUsage& pod_usage,
                                       const NodeInfo& node, const NodeUsage& usage,
                                       const ResourceNames& names);

}  // namespace berth::placement
