// Workload status transitions, as Kueue's pkg/workload helpers
// (SetQuotaReservation, SetEvictedCondition, SetPreemptedCondition,
// UnsetQuotaReservationWithCondition). Each mutates a Workload JSON in place
// and returns whether anything changed, so callers write only real changes.
//
//   SetQuotaReservation: status.admission = the engine's admission;
//     QuotaReserved=True "QuotaReserved" "Quota reserved in ClusterQueue <cq>";
//     Admitted=True "Admitted" "The workload is admitted" (berth has no
//     admission checks); the EstimatedStart condition is removed; a True Evicted or Preempted becomes False, reason
//     QuotaReserved, message "Previously: <its eviction/preemption message>"
//     (Kueue keeps what happened last time); Requeued, when present, becomes
//     False (reason QuotaReserved, message the reservation message: a berth
//     addition, Kueue leaves Requeued as it was).
//   SetPending: QuotaReserved=False with the scheduler's reason and message.
//   SetEvicted: Evicted=True with reason (Preempted, ClusterQueueStopped,
//     LocalQueueStopped, Deactivated) and message; Preempted=True with the
//     preemption reason (InClusterQueue, InCohortReclamation, ...) when given.
//   ReleaseQuota (berth: called only once every pod of the evicted workload
//     has terminated): status.admission removed; QuotaReserved=False
//     "PendingEvaluation" with the eviction message; Admitted=False
//     "NoReservation" "The workload has no reservation", and when Admitted was True
//     the whole seconds since its lastTransitionTime are added to
//     status.accumulatedPastExecutionTimeSeconds (Kueue's SyncAdmittedCondition; berth
//     counts up to the release, after the pods are gone); Requeued=True with the
//     eviction reason for Preempted (and NodeFailures), False otherwise.
//   SetFinished: Finished=True "Succeeded"/"Failed" with the job's message.
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "admission/model.h"
#include "api/object.h"
#include "core/clock.h"

namespace berth::controllers::kueue {

bool SetQuotaReservation(api::Object* wl, const admission::Admission& admission, const admission::ResourceNames& names,
                         Time now);
bool SetPending(api::Object* wl, const std::string& reason, const std::string& message, Time now);
bool SetEvicted(api::Object* wl, const std::string& reason, const std::string& message,
                const std::string& preempted_reason, Time now);
bool ReleaseQuota(api::Object* wl, Time now);
bool SetFinished(api::Object* wl, bool succeeded, const std::string& message, Time now);

}  // namespace berth::controllers::kueue
