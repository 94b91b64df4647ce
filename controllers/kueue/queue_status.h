// Status of Kueue's queue objects, computed from the engine's snapshot and the
// workloads holding quota (Kueue's ClusterQueue and LocalQueue reconcilers,
// pkg/controller/core/{clusterqueue,localqueue}_controller.go):
//
// ClusterQueue status:
//   conditions[Active]: True "Ready" "Can admit new workloads", or False with
//     the snapshot's reason/message (FlavorNotFound "Can't admit new
//     workloads: references missing ResourceFlavor(s): [a b]", Stopped,
//     Terminating);
//   pendingWorkloads (queued, not holding quota), reservingWorkloads (holding
//   quota, evicting ones included), admittedWorkloads (holding quota with
//   Admitted=True);
//   flavorsReservation / flavorsUsage: one entry per flavor of spec (in spec
//   order) with one entry per covered resource {name, total, borrowed}
//   (borrowed = total above nominalQuota, else "0"); reservation counts every
//   workload holding quota, usage only admitted ones.
// LocalQueue status:
//   conditions[Active]: True "Ready" "Can submit new workloads to localQueue";
//     False "ClusterQueueIsInactive" "Can't submit new workloads to
//     clusterQueue" (missing or inactive ClusterQueue) or "Stopped"
//     "LocalQueue is stopped";
//   the three counts over its own workloads, and flavorsReservation /
//   flavorsUsage {name, resources[{name, total}]} for the flavors of its
//   ClusterQueue.
// The condition list of the existing status is kept (SetCondition semantics).
// With Admission Fair Sharing, the LocalQueue reconciler also writes
// status.fairSharing {weightedShare: 0 unless set, admissionFairSharingStatus
// {consumedResources, lastUpdate}} at each sampling tick
// (SetAdmissionFairSharingStatus; Kueue's localqueue_controller.go
// updateAdmissionFsStatus).
//
// Thread-safety: pure functions; run under the controller lock (names).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "admission/admission_fair_sharing.h"
#include "admission/snapshot.h"
#include "api/object.h"
#include "core/clock.h"

namespace berth::controllers::kueue {

// A workload in a queue, as counted in status.
struct QueuedWorkload {
  bool holds_quota = false;  // QuotaReserved=True (evicting included)
  bool admitted = false;     // Admitted=True
  std::vector<admission::FlavorResourceAmount> usage;
};

// flavorsReservation/flavorsUsage entries for the ClusterQueue object's spec.
api::Object FlavorsStatus(const api::Object& cluster_queue, const std::vector<QueuedWorkload>& workloads,
                          bool admitted_only, bool with_borrowed, admission::ResourceNames& names);

// The new status of a ClusterQueue. `cq` is its index in the snapshot.
api::Object ClusterQueueStatus(const api::Object& cluster_queue, const admission::Snapshot& snapshot, int cq,
                               int pending, const std::vector<QueuedWorkload>& workloads,
                               admission::ResourceNames& names, Time now);

// The new status of a LocalQueue. `cluster_queue` may be null (missing);
// cq_active says whether the ClusterQueue is active.
api::Object LocalQueueStatus(const api::Object& local_queue, const api::Object* cluster_queue, bool cq_active,
                             int pending, const std::vector<QueuedWorkload>& workloads,
                             admission::ResourceNames& names, Time now);

// A consumed amount (milli-units, real) as status.fairSharing.admissionFairSharingStatus
// writes it: in nano-units ("382000n") where milli-units would round it (Kueue keeps
// nine decimal digits; an entry penalty is often below 1m), else the resource's usual
// form ("2", "31999m", "12Gi"). Negative or non-finite: "0".
std::string FormatConsumedAmount(const std::string& resource, double milli);
// Reads one back (nano, micro or any Quantity) in milli-units; nullopt when it is not a
// non-negative quantity.
std::optional<double> ParseConsumedAmount(const std::string& text);

// status.fairSharing.admissionFairSharingStatus: consumedResources (each
// amount rounded down to a milli-unit, in Kueue's canonical text) and
// lastUpdate (RFC 3339).
void SetAdmissionFairSharingStatus(api::Object* status, const admission::UsageAmounts& consumed, Time last_update);
// The persisted consumedResources of a LocalQueue (empty when absent;
// unparsable quantities are skipped).
admission::UsageAmounts PersistedConsumedResources(const api::Object& local_queue);
// Σ per resource name (over flavors) of the usage of the admitted workloads
// (Kueue's LocalQueue admitted usage).
admission::UsageAmounts AdmittedUsage(const std::vector<QueuedWorkload>& workloads,
                                      const admission::ResourceNames& names);

}  // namespace berth::controllers::kueue
