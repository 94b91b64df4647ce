// Placement decisions: kube-scheduler's scheduling cycle for one pod
// (pkg/scheduler/schedule_one.go, v1.32) as a pure function from a Snapshot
// to a Decision, plus the nomination bookkeeping and all-or-nothing gang
// placement berth adds around it.
//
// Schedule(snapshot, pod):
//   1. The pod's requests are computed (scheduling::PodRequests,
//      scheduling/pod_requests.h) and compiled against the snapshot.
//   2. No node at all -> unschedulable, message "no nodes available to
//      schedule pods".
//   3. Nominated node first: when the pod has status.nominatedNodeName and
//      passes every filter there (with nominated pods of higher or equal
//      priority counted), it is bound there without scoring
//      (evaluateNominatedNode).
//   4. Filters (filters.h) on every node, in name order, each with the
//      nominated pods of higher or equal priority added
//      (RunFilterPluginsWithNominatedPods). kube-scheduler stops after
//      enough feasible nodes (percentageOfNodesToScore) starting from a
//      rotating index; berth evaluates all nodes, so the choice does not
//      depend on earlier cycles.
//   5. Feasible nodes are scored (scores.h); the highest total wins, ties go
//      to the smallest node name. Decision: bind to that node.
//   6. No feasible node: the FailedScheduling message is the FitError of
//      step 4 (messages.h). Then, when enabled, preemption (preemption.h):
//      - planned: the decision carries the plan and the new
//        nominatedNodeName; the message has no preemption part (upstream's
//        PostFilter succeeded);
//      - not eligible: " preemption: not eligible ...." is appended; the
//        nomination is left as it is;
//      - no candidate: " preemption: 0/N nodes are available: ...." is
//        appended and a nomination the pod had is cleared.
//
// The caller applies a decision as the scheduler does: bind (spec.nodeName
// via the binding subresource, PodScheduled=True, event Scheduled with
// ScheduledMessage, clear status.nominatedNodeName) or mark unschedulable
// (PodScheduled=False, reason Unschedulable, event Warning FailedScheduling,
// both with `message`), then execute a preemption plan (preemption.h). It
// then updates the snapshot (AddPod / AddNominatedPod / RemovePod) before the
// next decision, and calls StaleNominations after every binding.
//
// Thread-safety: pure functions over a const Snapshot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "placement/filters.h"
#include "placement/model.h"
#include "placement/preemption.h"
#include "placement/scores.h"
#include "placement/snapshot.h"

namespace berth::placement {

struct PlacementOptions {
  // Run DefaultPreemption when no node fits.
  bool enable_preemption = true;
  ScoreWeights weights;
  // How many of the best-scored nodes a decision reports (diagnostics).
  size_t max_reported_scores = 8;
};

struct NodeScore {
  std::string node_name;
  int64_t total = 0;  // weighted sum
  int64_t least_allocated = 0;
  int64_t balanced_allocation = 0;
  int64_t taint_toleration = 0;  // normalised
  bool operator==(const NodeScore&) const = default;
};

struct Decision {
  // Bind here when non-empty.
  std::string node_name;
  // Best-scored feasible nodes, best first (empty when bound through the
  // nominated node or when nothing fits).
  std::vector<NodeScore> scores;
  // Nodes rejected by the filters, in node-name order.
  std::vector<NodeFailure> failures;
  // PodScheduled=False / FailedScheduling message; empty when bound.
  std::string message;
  std::optional<PreemptionPlan> preemption;
  // New status.nominatedNodeName: a node name, "" to clear it, nullopt to
  // leave it unchanged.
  std::optional<std::string> nominated_node_name;

  bool bound() const { return !node_name.empty(); }
};

Decision Schedule(const Snapshot& snapshot, const Pod& pod, const PlacementOptions& options = {});

// kubernetes/kubernetes#106780: after a binding (already added to the snapshot), the pods nominated
// to a node that would no longer fit there once every terminating pod on it
// is gone — because a higher-priority pod took the space, or because the
// node became unschedulable/unresolvable for them. Per node, nominations
// are examined most important first (priority, then key); each is checked
// with the bound non-terminating pods plus the nominations kept before it.
// Returns their keys sorted; the caller clears their nominatedNodeName so
// they go back through scheduling (and may preempt elsewhere).
std::vector<std::string> StaleNominations(const Snapshot& snapshot);

// All-or-nothing placement of a gang (volcano-sh/volcano#3373, kubernetes-sigs/
// scheduler-plugins#713: no gang holds part of the cluster): the pods are
// placed in order on a copy of the snapshot, each assumed onto its node
// before the next; if any pod cannot be placed, nothing is bound and the
// result carries that pod's decision (preemption is not attempted: gangs are
// preempted whole by admission, never pod by pod).
struct GangDecision {
  bool placed = false;
  // pod key -> node, in input order (all pods when placed).
  std::vector<std::pair<std::string, std::string>> bindings;
  // When not placed: the index of the first pod that did not fit, and its
  // decision (message with kube-scheduler's format).
  size_t failed_index = 0;
  Decision failed;
};
GangDecision PlaceGang(const Snapshot& snapshot, const std::vector<Pod>& pods,
                       const PlacementOptions& options = {});

}  // namespace berth::placement
