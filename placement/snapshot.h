// Snapshot: the cluster as kube-scheduler's cache sees it at the start of a
// scheduling cycle — every node with what its pods hold, and the pods
// nominated to it by earlier preemptions. Placement functions take it by
// const reference; the caller (controller, benchmark, test) builds it
// from informer caches and keeps it current between decisions, the way the
// scheduler cache "assumes" a pod onto its node right after deciding.
//
// Accounting, as upstream's framework.NodeInfo:
//   - Every pod bound to a node (spec.nodeName set) counts, terminating pods
//     included: a pod holds its requests until its object is gone
//     (docs/architecture.md departure 3 — replacements must never collide
//     with pods that are still shutting down).
//   - requested: per resource, the sum of the pods' requests
//     (scheduling::PodRequests, scheduling/pod_requests.h).
//   - non-zero requested (scoring only): the same with 100m cpu and 200Mi
//     memory assumed for containers that request none (schedutil
//     DefaultMilliCPURequest / DefaultMemoryRequest), so best-effort pods do
//     not all pile onto one node.
//   - pod count: bound pods, against allocatable "pods".
//   - Resources the scheduler considers: cpu, memory, ephemeral-storage and
//     scalar resources (extended resources such as nvidia.com/gpu: a name
//     with a '/' outside the kubernetes.io/ domain; hugepages-*;
//     attachable-volumes-*). Any other name (e.g. "gpu" without a domain)
//     is ignored by NodeResourcesFit, exactly as upstream.
//   - Nominated pods (pending pods with status.nominatedNodeName) are kept
//     per node; filters add those of higher or equal priority than the pod
//     being placed (RunFilterPluginsWithNominatedPods).
//   - A node that is not Ready gets the node.kubernetes.io/not-ready:NoSchedule
//     taint unless it already has the not-ready or unreachable taint (what the
//     node lifecycle controller does), so it is reported as a cluster reports
//     it: "node(s) had untolerated taint {node.kubernetes.io/not-ready: }".
//   - A node with DiskPressure gets node.kubernetes.io/disk-pressure:NoSchedule
//     the same way (TaintNodesByCondition).
//
// Ordering: nodes are kept sorted by name; every iteration is in that order.
//
// Errors: AddPod/AddNominatedPod return kNotFound for an unknown node and
// kAlreadyExists for a pod key already present; Remove* return kNotFound.
//
// Thread-safety: const methods may run concurrently; mutation needs
// exclusive access. Copying a Snapshot copies every node (used for gang
// placement trials).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "placement/model.h"

namespace berth::placement {

// Dense id of a resource name within one Snapshot.
using ResourceId = int32_t;

// Interning table for resource names; cpu, memory, ephemeral-storage are
// pre-interned as 0, 1, 2.
class ResourceNames {
 public:
  static constexpr ResourceId kCpuId = 0;
  static constexpr ResourceId kMemoryId = 1;
  static constexpr ResourceId kEphemeralStorageId = 2;

  ResourceNames();
  ResourceId Intern(std::string_view name);
  ResourceId Find(std::string_view name) const;  // -1 when never interned
  const std::string& Name(ResourceId id) const { return names_[static_cast<size_t>(id)]; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::map<std::string, ResourceId, std::less<>> ids_;
};

// True for the names NodeResourcesFit checks (see file comment).
bool IsSchedulableResource(std::string_view name);

// What one pod adds to a node, in snapshot ids.
struct PodUsage {
  // (id, milli-units), sorted by id, zero amounts dropped.
  std::vector<std::pair<ResourceId, int64_t>> requests;
  // Requests of resources no node in the snapshot knows (name, milli); only
  // possible for the pod being placed. Every node lacks them.
  std::vector<std::pair<std::string, int64_t>> unknown_requests;
  // Scoring requests in upstream units (cpu milli, memory bytes):
  int64_t cpu_milli = 0;            // actual request
  int64_t memory_bytes = 0;         // actual request
  int64_t non_zero_cpu_milli = 0;   // with the 100m default
  int64_t non_zero_memory_bytes = 0;  // with the 200Mi default
};

// The mutable part of a node's accounting (copied when simulating).
struct NodeUsage {
  std::vector<int64_t> requested;  // milli, indexed by ResourceId (missing = 0)
  int64_t pod_count = 0;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t non_zero_cpu_milli = 0;
  int64_t non_zero_memory_bytes = 0;

  int64_t Requested(ResourceId id) const {
    return static_cast<size_t>(id) < requested.size() ? requested[static_cast<size_t>(id)] : 0;
  }
  void Add(const PodUsage& p);
  void Remove(const PodUsage& p);
};

class NodeInfo {
 public:
  struct BoundPod {
    Pod pod;
    PodUsage usage;
  };

  const Node& node() const { return node_; }
  const std::string& name() const { return node_.name; }
  // spec.taints plus the implicit not-ready taint (see file comment).
  const std::vector<scheduling::Taint>& taints() const { return taints_; }
  int64_t Allocatable(ResourceId id) const {
    return static_cast<size_t>(id) < allocatable_.size() ? allocatable_[static_cast<size_t>(id)]
                                                         : 0;
  }
  int64_t allowed_pods() const { return allowed_pods_; }
  // Allocatable cpu (milli) and memory (bytes) in upstream scoring units.
  int64_t cpu_milli() const { return cpu_milli_; }
  int64_t memory_bytes() const { return memory_bytes_; }
  const NodeUsage& usage() const { return usage_; }
  // Bound pods (terminating ones included), in the order they were added.
  const std::vector<BoundPod>& pods() const { return pods_; }
  // Pods nominated to this node, in the order they were added.
  const std::vector<BoundPod>& nominated() const { return nominated_; }

 private:
  friend class Snapshot;
  Node node_;
  std::vector<scheduling::Taint> taints_;
  std::vector<int64_t> allocatable_;  // milli, by ResourceId
  int64_t allowed_pods_ = 0;
  int64_t cpu_milli_ = 0;
  int64_t memory_bytes_ = 0;
  NodeUsage usage_;
  std::vector<BoundPod> pods_;
  std::vector<BoundPod> nominated_;
};

class Snapshot {
 public:
  Snapshot() = default;

  // Adds a node or replaces the one with the same name (its pods and
  // nominations are kept and re-counted).
  void UpsertNode(Node node);
  // Removes a node with its pods and nominations.
  Status RemoveNode(std::string_view name);

  // A pod bound to pod.node_name (spec.nodeName), terminating or not.
  Status AddPod(Pod pod);
  // Removes a bound pod by key "namespace/name" (the object is gone).
  Status RemovePod(std::string_view key);

  // A pending pod nominated to pod.nominated_node_name.
  Status AddNominatedPod(Pod pod);
  Status RemoveNominatedPod(std::string_view key);

  // Nodes sorted by name.
  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  const NodeInfo* FindNode(std::string_view name) const;
  // Index of a node in nodes(), or -1.
  int NodeIndex(std::string_view name) const;
  const ResourceNames& resource_names() const { return names_; }

  // Compiles a pod's requests against this snapshot's resource ids without
  // interning (names no node knows go to unknown_requests).
  PodUsage Compile(const Pod& pod) const;

 private:
  NodeInfo* MutableNode(std::string_view name);
  PodUsage CompileInterning(const Pod& pod);
  void Recompile(NodeInfo& info);

  ResourceNames names_;
  std::vector<NodeInfo> nodes_;                          // sorted by name
  std::map<std::string, std::string, std::less<>> pod_node_;        // bound pod key -> node
  std::map<std::string, std::string, std::less<>> nominated_node_;  // nominated pod key -> node
};

}  // namespace berth::placement
