// The placement engine's data model: compact, typed copies of the core/v1
// fields kube-scheduler decides over (Node, Pod and their scheduling
// constraints). Controllers decode API objects into these structs at their
// edge; the engine never sees JSON.
//
// Units: amounts are berth::Quantity (exact int64 milli-units, core/quantity.h);
// resource names are the Kubernetes names ("cpu", "memory",
// "ephemeral-storage", "pods", "nvidia.com/gpu"). Times are berth::Time values
// supplied by the caller (status.startTime); the engine never reads a clock.
//
// Upstream behaviour followed (kubernetes v1.32):
//   - Toleration::Tolerates is corev1 Toleration.ToleratesTaint.
//   - NodeSelectorTerm matching is k8s.io/component-helpers
//     scheduling/corev1/nodeaffinity: terms are ORed, a term's expressions
//     and fields are ANDed, an empty term matches nothing, a term with an
//     invalid requirement (Gt/Lt without exactly one integer value, a
//     matchFields key other than metadata.name, an unknown operator) matches
//     nothing while the other terms are still evaluated.
//   - Label semantics are labels.Selector's: NotIn and DoesNotExist match a
//     node without the key; Gt/Lt need the label to parse as a base-10 int64.
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
// per name. Shape required by core/pod_requests.h.
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

struct ContainerResources {
  ResourceList requests;
  ResourceList limits;
  // Init containers only: restartPolicy: Always (a sidecar).
  bool restart_always = false;
};

// The resource-relevant part of a PodSpec.
struct PodResources {
  std::vector<ContainerResources> init_containers;
  std::vector<ContainerResources> containers;
  ResourceList overhead;
};

// kube-scheduler's NodeResourcesFit pod request (resource.PodRequests): see
// core/pod_requests.h for the numbered steps.
ResourceList PodRequests(const PodResources& pod);

// ---------------------------------------------------------------------------
// Taints and tolerations (core/v1)

enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };
std::string_view TaintEffectName(TaintEffect e);

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNoSchedule;
};

// Taints the node lifecycle controller puts on nodes (TaintNodesByCondition).
inline constexpr std::string_view kTaintNodeNotReady = "node.kubernetes.io/not-ready";
inline constexpr std::string_view kTaintNodeUnreachable = "node.kubernetes.io/unreachable";
inline constexpr std::string_view kTaintNodeUnschedulable = "node.kubernetes.io/unschedulable";

struct Toleration {
  enum class Operator { kEqual, kExists };
  std::string key;  // empty with kExists tolerates every taint
  Operator op = Operator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt tolerates every effect
  // corev1 Toleration.ToleratesTaint: effect (when set) and key (when set)
  // must match; Exists ignores the value, Equal compares it.
  bool Tolerates(const Taint& t) const;
};

// True when some toleration tolerates t.
bool TolerationsTolerate(const std::vector<Toleration>& tolerations, const Taint& t);

// ---------------------------------------------------------------------------
// Node affinity (core/v1 NodeSelectorRequirement / NodeSelectorTerm)

struct NodeSelectorRequirement {
  enum class Operator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };
  std::string key;
  Operator op = Operator::kIn;
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;  // against node labels
  // Against node fields; upstream supports the key "metadata.name" only.
  std::vector<NodeSelectorRequirement> match_fields;
};

// ---------------------------------------------------------------------------
// Node

struct Node {
  std::string name;
  std::map<std::string, std::string, std::less<>> labels;
  std::vector<Taint> taints;  // spec.taints, in order (the first untolerated one is reported)
  ResourceList allocatable;   // status.allocatable (incl. "pods")
  bool unschedulable = false;  // spec.unschedulable (kubectl cordon)
  // The Ready condition is True. A node that is not Ready and carries neither
  // the not-ready nor the unreachable taint is given the taint
  // node.kubernetes.io/not-ready:NoSchedule by the Snapshot, as the node
  // lifecycle controller would, so it is filtered (and reported) exactly as a
  // cluster reports it.
  bool ready = true;
};

// True when the node's labels and name satisfy the term (see file comment).
bool MatchesNodeSelectorTerm(const NodeSelectorTerm& term, const Node& node);
// ORed terms; false for an empty list.
bool MatchesNodeSelectorTerms(const std::vector<NodeSelectorTerm>& terms, const Node& node);

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
  PodResources resources;

  // Scheduling constraints (used for the pod being placed).
  std::string node_name;  // spec.nodeName requested by the user ("" = any)
  std::map<std::string, std::string, std::less<>> node_selector;
  // spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
  // .nodeSelectorTerms; nullopt when absent (no constraint).
  std::optional<std::vector<NodeSelectorTerm>> required_node_affinity;
  std::vector<Toleration> tolerations;

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
