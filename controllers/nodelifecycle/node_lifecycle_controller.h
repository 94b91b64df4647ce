// NodeLifecycleController: what kube-controller-manager's node lifecycle
// controller (pkg/controller/nodelifecycle) and its taint-based eviction do
// when a node agent stops heartbeating, so a dead agent never strands a gang.
//
// One reconcile of a Node name:
//   heartbeat = the node's Lease kube-node-lease/<node> spec.renewTime (the
//   agent renews it every 10 s, agent/node_agent.h), else the Ready
//   condition's lastHeartbeatTime, else the Node's creationTimestamp; but no
//   earlier than when this controller first reconciled the node (upstream's
//   probe timestamps), so a control plane restarted after a crash gives every
//   agent a full grace period before declaring its node lost.
//   - now - heartbeat > options.grace_period (kube-controller-manager
//     --node-monitor-grace-period, 40 s): every node condition becomes
//     Unknown with reason NodeStatusUnknown "Kubelet stopped posting node
//     status." (lastTransitionTime now), and the taints
//     node.kubernetes.io/unreachable:NoSchedule and :NoExecute are added
//     (timeAdded now), so the scheduler places nothing there. Every pod bound
//     to the node that is not terminal is then failed, as the taint manager's
//     eviction of pods without a matching toleration, with the pod-GC
//     semantics of a lost node: status.phase Failed, reason "NodeLost",
//     message "Node <node> which was running pod <pod> is unresponsive",
//     condition DisruptionTarget True "DeletionByTaintManager". Its Job (or
//     JobSet failure policy) then replaces or restarts it, and Kueue's
//     quota accounting sees the pods gone. A pod that tolerates the
//     unreachable NoExecute taint (operator Exists or the same key, effect
//     NoExecute or empty) is failed only after its tolerationSeconds.
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
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "controllers/common/event_recorder.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::nodelifecycle {

inline constexpr char kUnreachableTaint[] = "node.kubernetes.io/unreachable";
// The pods informer's index of spec.nodeName (unbound pods are not indexed).
inline constexpr char kPodNodeNameIndex[] = "spec.nodeName";

struct NodeLifecycleOptions {
  Duration grace_period = std::chrono::seconds(40);
  Duration orphan_quarantine = std::chrono::seconds(40);
};

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
  // Fails the node's pods whose toleration (if any) has run out; returns the
  // earliest time one still tolerates it (zero when none).
  StatusOr<Duration> FailPods(const api::Object& node, Time unreachable_since);
  // The missing-node case: fails and deletes the orphans after the quarantine.
  StatusOr<NodeVerdict> CollectOrphans(const std::string& node_name);
  std::vector<client::ObjectPtr> PodsBoundTo(const std::string& node_name) const;
  // Writes `pod` Failed (with `reason`/`message` when not empty) and a
  // DisruptionTarget condition; a pod gone meanwhile is no error.
  Status FailPod(const api::Object& pod, const std::string& reason, const std::string& message,
                 const std::string& condition_reason, const std::string& condition_message);

  client::Client& client_;
  client::Informer& nodes_;
  client::Informer& leases_;
  client::Informer& pods_;
  Clock& clock_;
  EventRecorder& recorder_;
  const NodeLifecycleOptions options_;
  std::mutex mu_;
  std::map<std::string, Time> first_seen_;     // node name → first reconcile
  std::map<std::string, Time> missing_since_;  // node name → first reconcile that found no Node
};

}  // namespace berth::controllers::nodelifecycle
