// NodeLifecycleController: what kube-controller-manager's node lifecycle
// controller (pkg/controller/nodelifecycle) and its taint-based eviction do
// when a node agent stops heartbeating, so a dead agent never strands a gang.
//
// One reconcile of a Node name:
//   heartbeat = when this controller last saw the agent's heartbeat change: the
//   node's Lease kube-node-lease/<node> spec.renewTime (the agent renews it
//   every 10 s, agent/node_agent.h), else the Ready condition's
//   lastHeartbeatTime; the time is the controller's own Clock at the reconcile
//   that saw the new value, never the value the agent wrote (upstream's probe
//   timestamps, tryUpdateNodeHealth), so a node writing a renewTime far in the
//   future is still lost once it stops renewing, and a control plane restarted
//   after a crash gives every agent a full grace period before declaring its
//   node lost. (Upstream counts a renewTime only when it moves forward; berth
//   counts any change, so an agent whose clock steps back is not taken for
//   dead.)
//   - now - heartbeat > options.grace_period (kube-controller-manager
//     --node-monitor-grace-period, 40 s): every node condition becomes
//     Unknown with reason NodeStatusUnknown "Kubelet stopped posting node
//     status." (lastTransitionTime now), and the taints
//     node.kubernetes.io/unreachable:NoSchedule and :NoExecute are added
//     (timeAdded now), so the scheduler places nothing there. Every pod bound
//     to the node that is not terminal gets Ready False and a Warning Event
//     NodeNotReady "Node is not ready" (upstream MarkPodsNotReady); each one that is
//     not being deleted either is then evicted
//     as the taint manager evicts a pod without a matching toleration
//     (pkg/controller/tainteviction/taint_eviction.go addConditionAndDeletePod):
//     condition DisruptionTarget True "DeletionByTaintManager" "Taint manager:
//     deleting due to NoExecute taint", then a graceful DELETE (uid
//     precondition), and a Normal Event TaintManagerEviction "Marking for
//     deletion Pod <ns>/<name>". A pod that tolerates the unreachable NoExecute
//     taint (operator Exists or the same key, effect NoExecute or empty) is
//     evicted only after its tolerationSeconds. (berth adds no default
//     tolerations: upstream's DefaultTolerationSeconds admission gives every
//     pod 300 s.)
//     An evicted pod is never set Failed here: an unreachable agent's pods may
//     still run (their supervisors outlive the agent), so the pod stays
//     terminating, holding its Job slot (no replacement: controllers/jobs/
//     batchjob/job_pods.h) and its Kueue quota, until one of: its agent comes
//     back and stops it; the Node is deleted (the orphan collection below); or
//     an administrator who knows the host is down taints the Node
//     node.kubernetes.io/out-of-service (effect NoExecute), when every pod
//     being deleted on the not-Ready node is set Failed and deleted with grace
//     period 0 (upstream pod GC's gcTerminating, pkg/controller/podgc/
//     gc_controller.go). So no run is replaced while it may still be running.
//   - heartbeat fresh and the node marked by this controller: the taints are
//     removed and Ready becomes True "KubeletReady" (the agent only posts
//     full status at registration).
//   The node is reconciled again when its grace period would run out.
//
// A node name with no Node object (deleted, or never registered) while pods
// are bound to it: the pod garbage collector's gcOrphaned
// (pkg/controller/podgc/gc_controller.go). Once the node has been missing for
// options.orphan_quarantine (upstream's quarantineTime, 40 s) every pod
// still bound to it is patched Failed (when not terminal) with the condition
// DisruptionTarget True "DeletionByPodGC" "PodGC: node no longer exists",
// then deleted with grace period 0; its Job replaces it and its quota is
// released. A node that registers again within the quarantine (berth's agent
// re-registers a deleted Node at its next Lease renewal, agent/node_agent.h)
// keeps its pods.
//
// Driving: a ReconcileLoop keyed by node name, fed by the nodes and leases
// informers and by pods bound to a node name the nodes informer does not hold
// (controller_manager.h). Pods are found through the pods informer's
// kPodNodeNameIndex, never by listing every pod.
// Time: the injected Clock. Thread-safety: Reconcile may run concurrently for
// different nodes.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "controllers/common/event_recorder.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::nodelifecycle {

inline constexpr char kUnreachableTaint[] = "node.kubernetes.io/unreachable";
// An administrator's statement that a not-Ready node's host is down (v1.TaintNodeOutOfService).
inline constexpr char kOutOfServiceTaint[] = "node.kubernetes.io/out-of-service";
// The pods informer's index of spec.nodeName (unbound pods are not indexed).
inline constexpr char kPodNodeNameIndex[] = "spec.nodeName";

struct NodeLifecycleOptions {
  Duration grace_period = std::chrono::seconds(40);
  Duration orphan_quarantine = std::chrono::seconds(40);
};

// Whether the Node carries a taint with `key`.
bool HasTaint(const api::Object& node, std::string_view key);

// What a reconcile decided, for the caller's requeue.
struct NodeVerdict {
  bool healthy = true;
  Duration recheck_after = Duration::zero();  // > 0: reconcile again then
};

class NodeLifecycleController {
 public:
  NodeLifecycleController(client::Client& client, client::Informer& nodes, client::Informer& leases,
                          client::Informer& pods, Clock& clock, EventRecorder& recorder,
                          NodeLifecycleOptions options = {});

  StatusOr<NodeVerdict> Reconcile(const std::string& node_name);

 private:
  Status MarkUnreachable(const api::Object& node);
  Status MarkReachable(const api::Object& node);
  // Evicts the node's pods whose toleration (if any) has run out; returns the
  // earliest time one still tolerates it (zero when none).
  StatusOr<Duration> EvictPods(const api::Object& node, Time unreachable_since);
  // The out-of-service case: fails and deletes the pods being deleted on the node.
  Status CollectTerminating(const api::Object& node);
  // The missing-node case: fails and deletes the orphans after the quarantine.
  StatusOr<NodeVerdict> CollectOrphans(const std::string& node_name);
  std::vector<client::ObjectPtr> PodsBoundTo(const std::string& node_name) const;
  // Sets the pod's Ready condition False (when it has one that is not); false when nothing
  // changed.
  bool SetReadyFalse(api::Object* pod);
  // Sets the DisruptionTarget condition True with `reason`/`message` on `pod`;
  // false when it already says so.
  bool SetDisruptionTarget(api::Object* pod, const std::string& reason, const std::string& message);
  // Writes `pod` Failed (unless terminal; with a DisruptionTarget condition
  // when `condition_reason` is not empty), then deletes it with grace period
  // 0; a pod gone meanwhile is no error.
  Status ForceDelete(const api::Object& pod, const std::string& condition_reason, const std::string& condition_message);

  client::Client& client_;
  client::Informer& nodes_;
  client::Informer& leases_;
  client::Informer& pods_;
  Clock& clock_;
  EventRecorder& recorder_;
  const NodeLifecycleOptions options_;
  std::mutex mu_;
  struct Probe {
    std::string written;  // the heartbeat text last seen (HeartbeatWritten)
    Time seen_at;         // when it was first seen, by the Clock
  };
  std::map<std::string, Probe> probes_;        // node name → its last heartbeat change
  std::map<std::string, Time> missing_since_;  // node name → first reconcile that found no Node
};

}  // namespace berth::controllers::nodelifecycle
