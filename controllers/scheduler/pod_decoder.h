// The edge between core/v1 Pod and Node and scheduling.k8s.io/v1
// PriorityClass JSON (as stored) and the placement engine's structs
// (placement/model.h, placement/priority_class.h). The scheduler controller
// decodes through this one module.
//
// Field mapping (kubernetes v1.32):
//   Node: metadata.name/labels; spec.taints (effect NoSchedule,
//     PreferNoSchedule, NoExecute; an unknown effect is dropped);
//     spec.unschedulable; status.allocatable; ready = condition Ready is
//     "True". A node with no Ready condition is not ready: upstream's node
//     lifecycle controller taints a new node not-ready until its kubelet
//     reports Ready, and the snapshot reproduces that taint.
//   Pod: metadata namespace/name/uid, deletionTimestamp (terminating);
//     spec.priority, spec.preemptionPolicy, spec.nodeName, nodeSelector,
//     affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution,
//     tolerations, containers/initContainers resources (+ init
//     restartPolicy Always = sidecar), overhead; status.nominatedNodeName,
//     status.startTime; condition DisruptionTarget=True with reason
//     PreemptionByScheduler (terminating_by_preemption).
//     The effective request is computed later by placement::PodRequests
//     (core/pod_requests.h, reported-failures C18).
//   Quantities: strings or JSON numbers, parsed with berth::Quantity; a
//     malformed one decodes as absent (schema validation rejects them before
//     they are stored; a controller never crashes on a bad object).
//
// Priority (kubectl-api.md §8.2): kube-apiserver's Priority admission plugin
// writes spec.priority and spec.preemptionPolicy at pod creation. berth's API
// write path has no access to PriorityClasses yet (api/ strategies see one
// object), so until the apiserver resolves priority at admission the
// controller resolves it here (ResolvePodPriority) for pods that arrive
// without spec.priority; a pod that already carries spec.priority is taken as
// admitted and used unchanged (upstream makes both fields immutable).
//
// Errors: only ResolvePodPriority fails (kForbidden, the Priority plugin's
// texts). Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "api/object.h"
#include "client/client.h"
#include "core/status.h"
#include "placement/model.h"
#include "placement/priority_class.h"

namespace berth::controllers::scheduler {

// Resources the scheduler controller reads and writes.
extern const client::GroupVersionResource kPods;
extern const client::GroupVersionResource kNodes;
extern const client::GroupVersionResource kPriorityClasses;

placement::Node DecodeNode(const api::Object& node);

// The pod as stored; priority/preemption policy are spec.priority and
// spec.preemptionPolicy (0 / PreemptLowerPriority when absent): see
// ResolvePodPriority for pods that were never admitted.
placement::Pod DecodePod(const api::Object& pod);

placement::PriorityClass DecodePriorityClass(const api::Object& pc);

// spec.priority is present (the pod went through priority admission).
bool HasResolvedPriority(const api::Object& pod);

// The Priority admission plugin's result for this pod against `classes`
// (placement::ResolvePodPriority; the system classes are always present).
StatusOr<placement::ResolvedPriority> ResolvePodPriority(
    const std::vector<placement::PriorityClass>& classes, const api::Object& pod);

// spec.schedulerName, "default-scheduler" when absent.
std::string SchedulerName(const api::Object& pod);
// status.phase is Succeeded or Failed: the pod holds no node resources
// (kube-scheduler's pod informer excludes terminal pods).
bool IsPodTerminal(const api::Object& pod);

}  // namespace berth::controllers::scheduler
