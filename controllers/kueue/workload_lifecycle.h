// The time-driven part of Kueue's Workload controller (pkg/controller/core/
// workload_controller.go Reconcile, reconcileNotReadyTimeout,
// reconcileMaxExecutionTime, triggerDeactivation; pkg/workload UpdateRequeueState) and
// the job reconciler's PodsReady condition (jobframework
// generatePodsReadyCondition), as pure functions over Workload JSON so the
// controllers only apply the result.
//
// NextLifecycleStep(wl, config, now) returns the first step that applies, in
// Kueue's order (at most one write per reconcile, as Kueue returns after each
// patch):
//   finished → nothing.
//   active:
//     1. DeactivationTarget=True → spec.active=false (a spec update).
//     2. Requeued=False reason Deactivated → Requeued=True "Reactivated"
//        "The workload was reactivated".
//     3. not holding quota, Requeued=False reason PodsReadyTimeout: before
//        status.requeueState.requeueAt → recheck then; at or after it →
//        requeueAt removed, Requeued=True "BackoffFinished" "The workload
//        backoff was finished"; the caller moves inadmissible workloads back
//        to the heap (Kueue's queue PushOrUpdate on a changed Requeued
//        condition).
//     4. waitForPodsReady enabled, Admitted=True, not evicted, PodsReady not
//        True: WaitForStart (PodsReady absent or reason WaitForStart/
//        PodsReady) counts `timeout` from the Admitted condition's
//        lastTransitionTime; WaitForRecovery counts `recoveryTimeout` (when
//        set) from the PodsReady condition's lastTransitionTime. Before the
//        deadline → recheck at the deadline. Past it:
//        - requeueState.count + 1 > backoffLimitCount → DeactivationTarget=
//          True reason RequeuingLimitExceeded "exceeding the maximum number
//          of re-queuing retries" (step 1 then deactivates);
//        - else Evicted=True reason PodsReadyTimeout "Exceeded the PodsReady
//          timeout <namespace>/<name>", requeueState {count+1, requeueAt =
//          now + Backoff(count+1)}, schedulingStats.evictions {reason
//          PodsReadyTimeout, underlyingCause WaitForStart|WaitForRecovery}
//          count+1; Event Normal "EvictedDueToPodsReadyTimeout".
//     5. Maximum execution time (Kueue's reconcileMaxExecutionTime), while holding
//        quota with Admitted=True and spec.maximumExecutionTimeSeconds set: remaining =
//        max - status.accumulatedPastExecutionTimeSeconds (0 when unset) - (now - the
//        Admitted condition's lastTransitionTime). remaining > 0 → recheck then (with
//        step 4's recheck, the earlier of the two); else DeactivationTarget=True reason
//        MaximumExecutionTimeExceeded "exceeding the maximum execution time",
//        accumulatedPastExecutionTimeSeconds removed, Event Warning
//        "MaximumExecutionTimeExceeded" "The maximum execution time (<max>s) exceeded"
//        (step 1 then deactivates, and the inactive branch evicts with "The workload is
//        deactivated due to exceeding the maximum execution time").
//   inactive (spec.active=false), holding quota and not evicted:
//     Evicted=True reason Deactivated, message "The workload is deactivated"
//     (+ " due to <DeactivationTarget message>"), schedulingStats eviction
//     {Deactivated, <DeactivationTarget reason>}, DeactivationTarget and
//     requeueState removed; Event "EvictedDueToDeactivated".
//   inactive, not holding quota, with a DeactivationTarget or requeueState →
//     both removed.
// Past execution time: ReleaseQuota (workload_status.h) adds the seconds the workload was
// Admitted to status.accumulatedPastExecutionTimeSeconds, as Kueue's SyncAdmittedCondition
// does when Admitted turns False, so a requeued workload's maximum counts every admission.
// The quota of an evicted workload is released by the job reconciler (or,
// for a workload without a job, by the Workload reconciler) only once its
// pods are gone (docs/architecture.md, departure 4); ReleaseQuota then writes
// Requeued=False with the eviction reason, which step 3 ends.
//
// PodsReadyCondition(wl, pods_ready, now): the condition the job reconciler
// writes while waitForPodsReady is enabled: not admitted → False
// WaitForStart "Not all pods are ready or succeeded"; pods ready → True
// Started (Recovered after WaitForRecovery/Recovered) "All pods reached
// readiness and the workload is running"; not ready after True or during
// WaitForRecovery → False WaitForRecovery "At least one pod has failed,
// waiting for recovery"; otherwise False WaitForStart.
//
// QueueOrderTimestamp: requeuingStrategy.timestamp Eviction orders a workload
// evicted by PodsReadyTimeout by its Evicted condition's lastTransitionTime,
// otherwise (and for Creation) by metadata.creationTimestamp.
//
// BlocksAdmission(wl): an admitted (Admitted=True, holding quota, not
// finished) workload whose PodsReady is not True; with blockAdmission no
// other workload is admitted while one exists.
//
// Time: every time is `now` or read from the object. Thread-safety: pure.
#pragma once

#include <string>

#include "api/object.h"
#include "api/conditions.h"
#include "controllers/kueue/configuration.h"
#include "core/clock.h"

namespace berth::controllers::kueue {

using api::Condition;

// QuotaReserved=False reason and message while blockAdmission holds a head.
inline constexpr char kWaitingForPodsReadyReason[] = "WaitingForPodsReady";
inline constexpr char kWaitingForPodsReadyMessage[] = "waiting for all admitted workloads to be in PodsReady condition";
// DeactivationTarget reason, Event reason and eviction underlyingCause of step 5.
inline constexpr char kMaximumExecutionTimeExceeded[] = "MaximumExecutionTimeExceeded";

struct LifecycleStep {
  enum class Kind {
    kNone,          // nothing to do (maybe recheck later)
    kUpdateStatus,  // write `workload` through the status subresource
    kUpdateSpec,    // write `workload` with Update (spec.active)
  };
  Kind kind = Kind::kNone;
  api::Object workload;
  // An Event on the Workload after a successful write ("" = none), of this type.
  std::string event_type = "Normal";
  std::string event_reason;
  std::string event_message;
  // > 0: reconcile the workload again after this much Clock time.
  Duration recheck_after = Duration::zero();
  // Backoff finished: queue the ClusterQueue's inadmissible workloads again.
  bool requeue_inadmissible = false;
};

LifecycleStep NextLifecycleStep(const api::Object& wl, const WaitForPodsReadyConfig& config, Time now);

Condition PodsReadyCondition(const api::Object& wl, bool pods_ready);

Time QueueOrderTimestamp(const api::Object& wl, const WaitForPodsReadyConfig& config);

bool BlocksAdmission(const api::Object& wl);

}  // namespace berth::controllers::kueue
