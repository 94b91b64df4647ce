// Admission Fair Sharing (AFS): the historical usage of LocalQueues and the
// order it gives the pending workloads of one ClusterQueue.
//
// Follows Kueue v0.19 (kubernetes-sigs/kueue):
//   pkg/util/admissionfairsharing/admission_fair_sharing.go
//     alpha(t, h)   = 1 − 0.5^(t / h), and 0 when h = 0;
//     decayed       = old × (1 − alpha(elapsed, h)) + current × alpha(elapsed, h)
//                     per resource (CalculateDecayedConsumed), where `current` is
//                     the LocalQueue's admitted usage now;
//     entry penalty = alpha(usageSamplingInterval, h) × the admitted workload's
//                     total requests (CalculateEntryPenalty);
//     usage         = Σ_r resourceWeights[r] (default 1) × (consumed + penalty)[r]
//                     in the resource's units, divided by the LocalQueue's
//                     spec.fairSharing.weight (default 1); +∞ for a weight ≤ 0
//                     (CalculateUsage), so such a LocalQueue goes last; +∞ too
//                     where the division is undefined (∞/∞): never NaN.
//   pkg/cache/queue/afs/usage_ledger.go, pkg/controller/core/localqueue_controller.go
//   (reconcileConsumedUsage) and workload_controller.go (updateAfsConsumedUsage):
//     a ledger entry per LocalQueue holds the decayed consumed resources and
//     when they were last decayed. Every usageSamplingInterval the LocalQueue
//     reconciler decays it towards the admitted usage (usageHalfLifeTime 0: reset
//     to empty). When a workload of a UsageBasedAdmissionFairSharing ClusterQueue
//     is admitted, the entry is decayed to that moment and its entry penalty is
//     folded in, so the next workloads of the same LocalQueue already see it.
//     Kueue pushes the penalty when the scheduler assumes the workload and
//     settles it when Admitted turns True; berth's scheduler writes
//     QuotaReserved and Admitted in one status update, so both happen at once
//     (Settle) and no pending penalty outlives a cycle.
//   pkg/cache/queue/cluster_queue.go (queueOrderingFunc): in a ClusterQueue with
//     spec.admissionScope.admissionMode UsageBasedAdmissionFairSharing (and the
//     Configuration's admissionFairSharing set), pending workloads are ordered by
//     their LocalQueue's usage (lower first), then by the usual order
//     (QueueManager: priority, queue-order timestamp). Other ClusterQueues keep
//     the usual order.
//
// Units: amounts are real-valued milli-units keyed by resource name (Kueue keeps
// nine decimal digits; berth keeps the double). Times are berth::Time passed in;
// elapsed times and durations in seconds as doubles. Usage is in the resources'
// own units (cpu in cores, memory in bytes), as Kueue's AsApproximateFloat64.
//
// Thread-safety: plain values and pure functions; the ledger is not
// synchronised (the controller's lock guards it).
#pragma once

#include <map>
#include <string>

#include "core/clock.h"

namespace berth::admission {

// Resource name -> amount in milli-units.
using UsageAmounts = std::map<std::string, double>;

// Kueue's Configuration admissionFairSharing. `enabled` is the section being
// present (Kueue's AdmissionFairSharing feature gate is beta and on by default).
struct AdmissionFairSharingConfig {
  bool enabled = false;
  Duration usage_half_life_time{};                            // 0: usage resets at each sample
  Duration usage_sampling_interval = std::chrono::minutes(5);  // Kueue's default
  std::map<std::string, double> resource_weights;             // absent resource: weight 1
};

// alpha = 1 − 0.5^(elapsed / half_life); 0 when half_life is 0.
double AfsAlphaRate(double elapsed_seconds, double half_life_seconds);

// `old` decayed towards `current` over `elapsed_seconds` (see above). A
// negative elapsed time counts as 0.
UsageAmounts DecayedConsumed(const UsageAmounts& old, const UsageAmounts& current, double elapsed_seconds,
                             double half_life_seconds);

// The penalty added to a LocalQueue's usage when one of its workloads with
// `total_requests` is admitted.
UsageAmounts EntryPenalty(const UsageAmounts& total_requests, const AdmissionFairSharingConfig& config);

// The LocalQueue usage workloads are ordered by (see above).
double LocalQueueUsage(const UsageAmounts& consumed, double local_queue_weight,
                       const std::map<std::string, double>& resource_weights);

// Per-LocalQueue consumed history, keyed by "namespace/name".
class AfsUsageLedger {
 public:
  struct Entry {
    UsageAmounts consumed;
    Time last_update{};
  };

  // The entry, or null.
  const Entry* Get(const std::string& local_queue) const;
  // Creates the entry from a persisted status (consumedResources) with
  // last_update `now`, unless it exists; returns whether it existed.
  bool Seed(const std::string& local_queue, const UsageAmounts& persisted, Time now);
  // A sampling tick: decays the entry towards `admitted` (the LocalQueue's
  // admitted usage now) over the time since its last update, or empties it
  // when the half-life is 0; last_update becomes max(last_update, now).
  const Entry& Sample(const std::string& local_queue, const UsageAmounts& admitted, Time now,
                      const AdmissionFairSharingConfig& config);
  // An admission (Kueue's updateAfsConsumedUsage): the entry decayed towards
  // `admitted` (the LocalQueue's admitted usage, the new workload included)
  // over the time since its last update — half-life 0 decays nothing here, as
  // in Kueue — then `penalty` added; last_update becomes max(last_update, now).
  // An entry that did not exist starts empty at `now`.
  const Entry& Settle(const std::string& local_queue, const UsageAmounts& admitted, const UsageAmounts& penalty,
                      Time now, const AdmissionFairSharingConfig& config);
  void Forget(const std::string& local_queue) { entries_.erase(local_queue); }

 private:
  std::map<std::string, Entry> entries_;
};

}  // namespace berth::admission
