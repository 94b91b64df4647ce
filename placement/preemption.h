// Pod-level preemption as kube-scheduler's DefaultPreemption PostFilter
// (pkg/scheduler/framework/preemption + plugins/defaultpreemption, v1.32).
// It runs only after the filters rejected every node.
//
// Preempt(snapshot, pod, statuses):
//   1. Eligibility (PodEligibleToPreemptOthers):
//      a. preemptionPolicy Never -> not eligible, "not eligible due to
//         preemptionPolicy=Never." — it never evicts anything
//         (examples/priority-pitfalls/01-priority-classes.yaml;
//         kubernetes/kubernetes#86680);
//      b. the pod has status.nominatedNodeName N: if N's filter status in
//         this attempt is UnschedulableAndUnresolvable (tainted, cordoned,
//         no longer matching), the pod is eligible again (kubernetes/kubernetes#92600: preempt
//         elsewhere instead of waiting forever); otherwise, if N holds a pod
//         of lower priority that is terminating because the scheduler
//         preempted it, not eligible, "not eligible due to a terminating pod
//         on the nominated node." (its earlier victims are still leaving);
//      c. otherwise eligible.
//   2. Candidate nodes: every node whose status is Unschedulable (never the
//      UnschedulableAndUnresolvable ones: "Preemption is not helpful for
//      scheduling"). kube-scheduler dry-runs a random subset (offset,
//      max(100, 10% of nodes)); berth dry-runs all of them in name order so
//      the result is reproducible.
//   3. Victims on a node (SelectVictimsOnNode):
//      a. potential victims = bound pods with STRICTLY lower priority
//         (equal priority is never preempted), terminating ones included;
//         none -> "No preemption victims found for incoming pod";
//      b. remove them all; if the pod still fails the filters (nominated
//         pods of higher or equal priority still counted) -> that failure
//         (e.g. "Insufficient cpu") and the node is not a candidate;
//      c. reprieve: in MoreImportantPod order (higher priority first, then
//         earlier start), add each back and keep it when the pod still fits;
//         the rest are the victims, most important first. The lowest-
//         priority, most recently started pods are therefore evicted first,
//         and only as many as needed — one worker of a gang when one slot is
//         enough (the trap examples/priority-pitfalls/pitfall/ shows).
//      PodDisruptionBudgets are not modelled: upstream reprieves PDB-
//      protected victims first and prefers nodes with fewer violations;
//      berth has no PDBs, so every victim counts as non-violating.
//   4. Node choice among candidates (pickOneNodeForPreemption): a node
//      needing no victim at once; else the lowest highest-victim priority,
//      then the smallest sum of victim priorities (each offset by 2^31 as
//      upstream), then the fewest victims, then the latest start among the
//      highest-priority victims (a victim not started counts as now), then
//      the smallest node name (upstream: first found).
//   5. Result: the victims, the node (the preemptor's new
//      status.nominatedNodeName), and the pods nominated to that node with
//      lower priority than the preemptor, whose nominations are to be
//      cleared. No candidate -> a FitError over all nodes with the per-node
//      preemption reasons above, and the pod's nomination is to be cleared.
//
// What the caller then does (as the preemption executor): for each victim
// set condition DisruptionTarget (messages.h), delete it with its own grace
// period, emit "Preempted"; clear the listed nominations; set the
// preemptor's nominatedNodeName. The preemptor is placed in a later attempt,
// once the victims are gone (they hold their requests while terminating).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "placement/filters.h"
#include "placement/model.h"
#include "placement/snapshot.h"

namespace berth::placement {

struct Victim {
  std::string key;  // namespace/name
  std::string uid;
  int32_t priority = 0;
  bool terminating = false;  // already being deleted: no second delete needed
  bool operator==(const Victim&) const = default;
};

struct PreemptionPlan {
  std::string node_name;  // the preemptor's new status.nominatedNodeName
  std::vector<Victim> victims;  // most important first
  // Keys of lower-priority pods nominated to node_name: clear their nomination.
  std::vector<std::string> nominations_to_clear;
  bool operator==(const PreemptionPlan&) const = default;
};

struct PreemptionResult {
  enum class Kind { kNotEligible, kNoCandidate, kPlanned };
  Kind kind = Kind::kNoCandidate;
  // The PostFilter text ("preemption: ..."), empty when kPlanned.
  std::string message;
  std::optional<PreemptionPlan> plan;  // kPlanned only
};

// Step 1. `nominated_node_status` is the filter status of the pod's
// nominated node in this attempt (nullptr when it has none or it is gone).
// Returns "" when eligible, else the reason.
std::string PreemptionIneligibility(const Snapshot& snapshot, const Pod& pod,
                                    const NodeStatus* nominated_node_status);

// Step 3 on one node. On success `status` is ok and `victims` lists the
// victims (pointers into the node), most important first.
struct VictimSelection {
  NodeStatus status;
  std::vector<const NodeInfo::BoundPod*> victims;
};
VictimSelection SelectVictimsOnNode(const Snapshot& snapshot, const Pod& pod,
                                    const PodUsage& pod_usage, const NodeInfo& node);

// Steps 1-5. `statuses[i]` is the filter status of snapshot.nodes()[i] in
// this attempt (all failed).
PreemptionResult Preempt(const Snapshot& snapshot, const Pod& pod, const PodUsage& pod_usage,
                         const std::vector<NodeFailure>& statuses);

}  // namespace berth::placement
