// The scheduling cycle as a function: heads in, decisions out.
//
// Follows Kueue's Scheduler.schedule / processEntry (pkg/scheduler/
// scheduler.go) with classical preemption:
//   1. The caller pops the heads (QueueManager::Heads: one per active
//      ClusterQueue) and owns the snapshot of quotas and usage.
//   2. Nominate each head. Dropped: a head that already holds quota, is
//      finished or is inactive (kubernetes-sigs/kueue#1654, #6711). Inadmissible without a flavor
//      assignment: ClusterQueue inactive ("ClusterQueue X is inactive",
//      Suspended), unknown ("ClusterQueue X not found", Misconfigured),
//      namespace not selected ("workload namespace doesn't match ClusterQueue
//      selector", Misconfigured). Otherwise run the flavor assigner
//      (flavor_assigner.h) and, for mode Preempt, choose preemption targets
//      (preemptor.h). Partial admission (Kueue's getInitialAssignments): when
//      the full assignment neither fits nor has preemption targets and some
//      podSet has minCount < count, the largest reduced counts whose
//      assignment fits, or needs preemption and has targets, are searched
//      (podset_reducer.h) and replace it; the admission then carries the
//      reduced podSetAssignments[].count. Otherwise the full assignment stays.
//      berth: a preemptor whose earlier victims are still evicting is
//      re-evaluated with those victims' usage removed. If it then fits it
//      waits for them ("... Pending the preemption of N workload(s)",
//      WaitingForPreemptedWorkloads) without choosing new victims; if it
//      needs more, only the additional victims are new targets.
//   3. Order the entries: fewer borrowing levels first, then (priority
//      sorting within cohort, on by default) higher priority, then earlier
//      queue-order timestamp, then uid.
//      With Fair Sharing (pkg/scheduler/fair_sharing_iterator.go) the order
//      is decided entry by entry against the snapshot as processing left it:
//      the first unprocessed entry in the order above is taken if its
//      ClusterQueue has no cohort; otherwise a tournament over the
//      unprocessed entries of its cohort tree picks the next one. Each
//      entry's share is computed with its assignment's usage added, for its
//      ClusterQueue and each ancestor cohort below the root; at every cohort
//      the children's nominees compare: (FairSharingPrioritizeNonBorrowing)
//      not borrowing on a requested fr at that level first, then the lower
//      share (CompareDRS), then higher priority (priority sorting), then
//      earlier queue-order timestamp, then uid (berth's deterministic tie,
//      where Kueue keeps the first nominee met). Borrowing levels play no
//      part. Preemption follows preemptor.h's Fair Sharing rules.
//   4. Process the entries in order against the snapshot:
//      * NoFit → pending with the assigner's reason and message.
//      * Preempt with no targets → pending, WaitingForQuota; unless the
//        ClusterQueue's reclaimWithinCohort is Any, the capacity it needs (up
//        to nominal, or nominal + borrowingLimit when borrowing) is reserved
//        for the rest of the cycle so lower-ranked entries cannot take it.
//      * Waiting for its own evicting victims → the part of its usage they do
//        not free is reserved for the rest of the cycle.
//      * Targets overlapping targets chosen earlier in the cycle → skipped
//        ("Workload has overlapping preemption targets with another
//        workload").
//      * No longer fits (every victim chosen in this cycle counted as gone) →
//        skipped ("Workload no longer fits after processing another
//        workload", WaitingForQuota).
//      * Preempt with targets → its usage is reserved for the rest of the
//        cycle, its targets are marked evicting in the snapshot (usage still
//        counted, never candidates again), and it stays pending ("<assigner
//        message>. Pending the preemption of N workload(s)",
//        WaitingForPreemptedWorkloads).
//      * Fit → admitted: the workload is assumed into the snapshot (state
//        kAdmitted, QuotaReserved at `now`).
//   5. Every entry not admitted carries a requeue reason for
//      QueueManager::RequeueWorkload.
// On return the snapshot holds what the decisions imply — admitted
// workloads assumed, preemption targets evicting — and no cycle-only
// reservation. A caller that fails to apply a decision reverts it with
// Snapshot::RemoveWorkload (Kueue's ForgetWorkload).
//
// Not followed: TAS, admission checks,
// waitForPodsReady blocking, preemption gates, recomputing an assignment when
// targets overlap.
//
// Thread-safety: none; the caller serialises cycles.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "admission/fair_sharing.h"
#include "admission/flavor_assigner.h"
#include "admission/model.h"
#include "admission/preemptor.h"
#include "admission/queue_manager.h"
#include "admission/snapshot.h"

namespace berth::admission {

struct CycleOptions {
  // PrioritySortingWithinCohort (beta, on by default in Kueue).
  bool priority_sorting_within_cohort = true;
  // The Kueue Configuration's fairSharing (off by default).
  FairSharingConfig fair_sharing;
};

enum class EntryOutcome {
  kAdmitted,     // quota reserved: status.admission = admission
  kPreempting,   // victims chosen or still evicting; stays pending
  kPending,      // not admitted this cycle
  kDropped,      // not a candidate at all (holds quota, finished, inactive)
};
std::string_view EntryOutcomeName(EntryOutcome o);

struct PreemptedWorkload {
  std::string uid;
  std::string key;            // namespace/name
  std::string cluster_queue;
  std::string reason;         // InClusterQueue | InCohortReclamation | InCohortReclaimWhileBorrowing
  std::string message;        // Preempted condition / event message
};

struct EntryResult {
  std::string uid;
  std::string key;
  std::string cluster_queue;
  EntryOutcome outcome = EntryOutcome::kPending;
  // QuotaReserved condition: reason (True: "QuotaReserved") and message.
  std::string reason;
  std::string message;
  std::optional<Admission> admission;           // kAdmitted
  std::vector<FlavorResourceAmount> usage;      // kAdmitted: total usage
  int borrowing = 0;                            // borrowing level of the assignment
  std::vector<PreemptedWorkload> preempted;     // new targets (kPreempting)
  int pending_preemptions = 0;                  // new + still evicting victims
  RequeueReason requeue_reason = RequeueReason::kGeneric;
};

struct CycleResult {
  // Nominated entries in processing order, then the inadmissible ones in
  // head order.
  std::vector<EntryResult> entries;
  // admission_cycle_preemption_skips per ClusterQueue (only non-zero ones).
  std::map<std::string, int> preemption_skips;

  // The entry of a head, by uid; nullptr when absent. O(1).
  const EntryResult* Find(const std::string& uid) const;

  std::unordered_map<std::string, size_t> by_uid;  // uid -> index in entries
};

// Runs one scheduling cycle over `heads` (at most one per ClusterQueue).
// `now` stamps the QuotaReserved time of admitted workloads.
CycleResult Schedule(Snapshot& snapshot, const std::vector<Workload>& heads, Time now,
                     const CycleOptions& options = {});

// Entry order of step 3, exposed for tests: true when a goes before b.
struct EntryOrderKey {
  int borrowing = 0;
  int32_t priority = 0;
  Time timestamp{};
  std::string uid;
};
bool EntryBefore(const EntryOrderKey& a, const EntryOrderKey& b, bool priority_sorting_within_cohort);

}  // namespace berth::admission
