// The placement engine's data model: compact, typed copies of the core/v1
// fields kube-scheduler decides over (Node, Pod). Controllers decode API
// objects into these structs at their edge; the engine never sees JSON. The
// scheduling constraints they carry (taints, tolerations, node selector
// terms) and the pod's resource part are scheduling/'s types, shared with
// admission/, with their upstream matching rules.
//
// Units: amounts are berth::Quantity (exact int64 milli-units, core/quantity.h);
// resource names are the Kubernetes names ("cpu", "memory",
// "ephemeral-storage", "pods", "nvidia.com/gpu"). Times are berth::Time values
// supplied by the caller (status.startTime); the engine never reads a clock.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/quantity.h"
#include "scheduling/node_selector.h"
#include "scheduling/pod_requests.h"
#include "scheduling/taint.h"
#include "scheduling/toleration.h"

namespace berth::placement {

// ---------------------------------------------------------------------------
// Resources

// Well-known resource names.
inline constexpr std::string_view kCpu = "cpu";
inline constexpr std::string_view kMemory = "memory";
inline constexpr std::string_view kEphemeralStorage = "ephemeral-storage";
// In node allocatable: the number of pods the node accepts (kubelet
// --max-pods, usually 110). A node whose allocatable lacks it accepts no pod,
// as upstream ("Too many pods").
inline constexpr std::string_view kPods = "pods";

// A corev1.ResourceList: resource name -> amount, sorted by name, one entry
// per name. It is the `List` of scheduling/pod_requests.h: a pod's resources
// are scheduling::PodResources<ResourceList> and its effective request
// scheduling::PodRequests of them.
class ResourceList {
 public:
  ResourceList() = default;
  ResourceList(std::initializer_list<std::pair<std::string, Quantity>> items);
  // For literals in code and tests: {{"cpu", "2"}, {"memory", "4Gi"}};
  // aborts on a malformed quantity.
  static ResourceList MustParse(
      std::initializer_list<std::pair<std::string_view, std::string_view>> items);

  Quantity Get(std::string_view name) const;  // zero when absent
  bool Has(std::string_view name) const;
  void Set(std::string_view name, Quantity q);
  void Add(std::string_view name, Quantity q);  // saturating
  void AddAll(const ResourceList& o);
  void MaxWith(const ResourceList& o);  // per name max(this, o)

  const std::vector<std::pair<std::string, Quantity>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  bool operator==(const ResourceList& o) const;

 private:
  std::vector<std::pair<std::string, Quantity>> items_;  // sorted by name, unique
};

// ---------------------------------------------------------------------------
// Taints

// Taints the node lifecycle controller puts on nodes (TaintNodesByCondition).
inline constexpr std::string_view kTaintNodeNotReady = "node.kubernetes.io/not-ready";
inline constexpr std::string_view kTaintNodeUnreachable = "node.kubernetes.io/unreachable";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";
inline constexpr std::string_view kTaintNodeDiskPressure = "node.kubernetes.io/disk-pressure";

// ---------------------------------------------------------------------------
// Node

struct Node {
  std::string name;
  scheduling::Labels labels;
  // spec.taints, in order (the first untolerated one is reported).
  std::vector<scheduling::Taint> taints;
  ResourceList allocatable;   // status.allocatable (incl. "pods")
  bool unschedulable = false;  // spec.unschedulable (kubectl cordon)
  // The Ready condition is True. A node that is not Ready and carries neither
  // the not-ready nor the unreachable taint is given the taint
  // node.kubernetes.io/not-ready:NoSchedule by the Snapshot, as the node
  // lifecycle controller would, so it is filtered (and reported) exactly as a
  // cluster reports it.
  bool ready = true;
  // The DiskPressure condition is True: the Snapshot adds the taint
  // node.kubernetes.io/disk-pressure:NoSchedule unless the node has it, as the
  // node lifecycle controller does (TaintNodesByCondition).
  bool disk_pressure = false;
  // The images the node runs on its host (scheduling/host_images.h, the Node's
  // berth.dev/host-images annotation); nullopt = any image.
  std::optional<std::vector<std::string>> host_images;
};

// ---------------------------------------------------------------------------
// Pod

// pod.spec.preemptionPolicy, written at pod creation by the Priority
// admission plugin (api/priority_admission.h). A pod whose field is absent is
// treated as PreemptLowerPriority by kube-scheduler.
enum class PreemptionPolicy { kPreemptLowerPriority, kNever };
std::string_view PreemptionPolicyName(PreemptionPolicy p);  // "PreemptLowerPriority", "Never"
std::optional<PreemptionPolicy> ParsePreemptionPolicy(std::string_view s);

struct Pod {
  std::string namespace_;  // metadata.namespace
  std::string name;
  std::string uid;
  int32_t priority = 0;  // spec.priority (as resolved at admission)
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  scheduling::PodResources<ResourceList> resources;

  // Scheduling constraints (used for the pod being placed).
  std::string node_name;  // spec.nodeName requested by the user ("" = any)
  std::map<std::string, std::string, std::less<>> node_selector;
  // spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
  // .nodeSelectorTerms; nullopt when absent (no constraint).
  std::optional<std::vector<scheduling::NodeSelectorTerm>> required_node_affinity;
  std::vector<scheduling::Toleration> tolerations;
  // The images of its init containers and containers, in that order.
  std::vector<std::string> images;

  // status.nominatedNodeName ("" = none).
  std::string nominated_node_name;

  // Bound pods only.
  std::optional<Time> start_time;  // status.startTime; nullopt = not started (counts as "now")
  bool terminating = false;        // metadata.deletionTimestamp is set
  // Condition DisruptionTarget=True with reason PreemptionByScheduler: the
  // pod is terminating because kube-scheduler preempted it.
  bool terminating_by_preemption = false;

  // "namespace/name", the key used in decisions.
  std::string Key() const;
};

// util.MoreImportantPod: higher priority first; equal priority -> the one
// that started earlier (a pod not started counts as starting now); berth
// ends with the pod key so the order is total.
bool MoreImportantPod(const Pod& a, const Pod& b);

}  // namespace berth::placement
