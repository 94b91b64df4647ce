// The edge between core/v1 Pod and Node JSON (as stored) and the placement
// engine's structs (placement/model.h). The scheduler controller decodes
// through this one module.
//
// Field mapping (kubernetes v1.32):
//   Node: metadata.name/labels; spec.taints (effect NoSchedule,
//     PreferNoSchedule, NoExecute; an unknown effect is dropped);
//     spec.unschedulable; status.allocatable; ready = condition Ready is
//     "True"; disk_pressure = condition DiskPressure is "True". A node with no Ready condition is not ready: upstream's node
//     lifecycle controller taints a new node not-ready until its kubelet
//     reports Ready, and the snapshot reproduces that taint.
//   Pod: metadata namespace/name/uid, deletionTimestamp (terminating);
//     spec.priority, spec.preemptionPolicy, spec.nodeName, nodeSelector,
//     affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution,
//     tolerations, containers/initContainers resources (+ init
//     restartPolicy Always = sidecar), overhead; status.nominatedNodeName,
//     status.startTime; condition DisruptionTarget=True with reason
//     PreemptionByScheduler (terminating_by_preemption).
//     The effective request is computed later by scheduling::PodRequests
//     (scheduling/pod_requests.h).
//   Quantities: strings or JSON numbers, parsed with berth::Quantity; a
//     malformed one decodes as absent (schema validation rejects them before
//     they are stored; a controller never crashes on a bad object).
//
// Priority (plugin/pkg/admission/priority/admission.go): spec.priority and spec.preemptionPolicy
// as kube-apiserver's Priority admission plugin wrote them at pod creation
// (api/priority_admission.h); the class is never resolved again here. A pod
// without them (never admitted by a berth or Kubernetes API server) is
// priority 0, PreemptLowerPriority, as kube-scheduler reads nil fields.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "api/object.h"
#include "client/client.h"
#include "placement/model.h"

namespace berth::controllers::scheduler {

// Resources the scheduler controller reads and writes.
extern const client::GroupVersionResource kPods;
extern const client::GroupVersionResource kNodes;

placement::Node DecodeNode(const api::Object& node);

// The pod as stored; priority/preemption policy are spec.priority and
// spec.preemptionPolicy (0 / PreemptLowerPriority when absent).
placement::Pod DecodePod(const api::Object& pod);

// spec.schedulerName, "default-scheduler" when absent.
std::string SchedulerName(const api::Object& pod);
// status.phase is Succeeded or Failed: the pod holds no node resources
// (kube-scheduler's pod informer excludes terminal pods).
bool IsPodTerminal(const api::Object& pod);

}  // namespace berth::controllers::scheduler
