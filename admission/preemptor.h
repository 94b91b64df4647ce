// Classical preemption: which admitted workloads to evict so that a pending
// workload fits.
//
// Follows Kueue's classical preemption (pkg/scheduler/preemption/
// preemption.go, classical/*.go, common/*.go):
//   1. Only (flavor, resource) pairs whose assignment mode is Preempt are
//      contested; a candidate must use at least one of them.
//   2. Candidates in the preemptor's ClusterQueue (if withinClusterQueue ≠
//      Never): LowerPriority = strictly lower priority; LowerOrNewerEqualPriority
//      also takes equal priority with a later queue-order timestamp. Reason
//      InClusterQueue.
//   3. Candidates in other ClusterQueues (if the preemptor has a cohort and
//      reclaimWithinCohort ≠ Never), walking up the preemptor's ancestors: at
//      each ancestor, ClusterQueues (and cohorts) of the other subtrees that
//      are above their nominal/subtree quota for a contested resource. While
//      the preemptor's own subtree holds the quota being used ("hierarchical
//      advantage") candidates are taken regardless of priority bounds (reason
//      InCohortReclamation); otherwise by reclaimWithinCohort (LowerPriority /
//      Any), as ReclaimWithoutBorrowing when borrowWithinCohort is Never or
//      the candidate's priority is ≥ the preemptor's or above
//      maxPriorityThreshold (reason InCohortReclamation), else
//      ReclaimWhileBorrowing (InCohortReclaimWhileBorrowing).
//   4. Ordering (CandidatesOrdering): other ClusterQueues first, then lower
//      priority, then most recently admitted (QuotaReserved time), then uid.
//      Final list: hierarchical-advantage candidates, then priority
//      candidates, then same-queue candidates.
//   5. Attempts: "borrowing allowed" only, when there are no candidates in
//      other ClusterQueues or borrowWithinCohort is Never and the queue is
//      already at/over nominal for a contested resource; "no borrowing" then
//      "borrowing allowed" when borrowWithinCohort is Never and there are no
//      hierarchical-advantage candidates; otherwise "borrowing allowed" then
//      "no borrowing". In an attempt, candidates are removed in order (skipping
//      ones no longer over quota, and ReclaimWithoutBorrowing ones when
//      borrowing is allowed) until the preemptor fits (every fr ≤ Available,
//      and within nominal for a no-borrowing attempt); then the chosen list is
//      walked backwards (all but the last) adding each back if the preemptor
//      still fits (minimal set). First attempt that fits wins.
// berth: workloads already evicting (AdmissionState::kEvicting) are never
// candidates; their usage still counts until the caller removes them.
//
// Fair Sharing preemption, when FairSharingConfig::enable (Kueue's
// preemption.go fairPreemptions, fairsharing/{ordering,target,strategy,
// least_common_ancestor}.go):
//   1. Candidates: the preemptor's ClusterQueue's workloads by
//      withinClusterQueue; when it has a cohort and reclaimWithinCohort ≠
//      Never, the workloads (by reclaimWithinCohort) of every other
//      ClusterQueue of the root cohort's tree that borrows on a contested fr.
//      A candidate must use a contested fr. borrowWithinCohort plays no part.
//      Ordered as in classical step 4.
//   2. The preemptor's usage is added to its ClusterQueue while shares are
//      computed (and removed for every fit check).
//   3. Target ClusterQueues come from a walk from the root: at each cohort
//      the child ClusterQueue or Cohort with the highest share wins (a
//      Cohort on a tie; between ClusterQueues of equal share, the one whose
//      first candidate goes first), pruning ClusterQueues with no candidates
//      or not borrowing (except the preemptor's own) and Cohorts not
//      borrowing off the preemptor's path. Shares are recomputed after each
//      removal.
//   4. First strategy: a target in the preemptor's ClusterQueue is removed
//      (InClusterQueue). When preempt_within_nominal and the preemptor's
//      ClusterQueue is within nominal for every contested fr, other
//      ClusterQueues' candidates are removed regardless of shares
//      (InCohortReclamation). Otherwise the shares of the two almost-least-
//      common-ancestors are compared: each candidate of the target is tested
//      with the strategy; the first that passes is removed (InCohortFair-
//      Sharing) and the walk restarts; those failing are kept for the
//      second strategy (all of them, untested, when the preemptor's share
//      is infinite and the target's is not).
//   5. Second strategy (S2-b) over the kept candidates, one per target
//      ClusterQueue: the first candidate is removed when the preemptor's
//      new share is below the target's current one.
//   6. When the preemptor fits (borrowing allowed), the classical fill-back
//      drops targets not needed; otherwise there are no targets.
//
// Thread-safety: none; the snapshot is scratch and is left unchanged.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "admission/fair_sharing.h"
#include "admission/flavor_assigner.h"
#include "admission/snapshot.h"

namespace berth::admission {

inline constexpr std::string_view kPreemptedInClusterQueue = "InClusterQueue";
inline constexpr std::string_view kPreemptedInCohortReclamation = "InCohortReclamation";
inline constexpr std::string_view kPreemptedInCohortReclaimWhileBorrowing = "InCohortReclaimWhileBorrowing";
inline constexpr std::string_view kPreemptedInCohortFairSharing = "InCohortFairSharing";

struct PreemptionTarget {
  const WorkloadInfo* workload = nullptr;
  std::string reason;  // one of the kPreempted* reasons
};

// "Preempted to accommodate a workload (UID: u, JobUID: j) due to
// <human reason>; preemptor path: /c/q; preemptee path: /c/q2".
std::string PreemptionMessage(const Snapshot& snap, const Workload& preemptor, int preemptor_cq,
                              const PreemptionTarget& target, const std::string& job_uid = "");

class Preemptor : public PreemptionOracle {
 public:
  Preemptor() = default;
  explicit Preemptor(FairSharingConfig fair_sharing) : fair_sharing_(std::move(fair_sharing)) {}
  bool FairSharingEnabled() const override { return fair_sharing_.enable; }

  // Targets for `wl` in ClusterQueue `cq` given its assignment (mode Preempt).
  // Empty when no set of candidates makes it fit.
  std::vector<PreemptionTarget> GetTargets(Snapshot& snap, int cq, const Workload& wl, const Assignment& assignment);

  std::pair<PreemptionPossibility, int> SimulatePreemption(Snapshot& snap, int cq, const Workload& wl, int fr,
                                                           Amount quantity) override;

 private:
  std::vector<PreemptionTarget> Targets(Snapshot& snap, int cq, const Workload& wl, const std::vector<int>& frs,
                                        const FrUsage& usage);
  std::vector<PreemptionTarget> Classical(Snapshot& snap, int cq, const Workload& wl, const std::vector<int>& frs,
                                          const FrUsage& usage);
  std::vector<PreemptionTarget> Fair(Snapshot& snap, int cq, const Workload& wl, const std::vector<int>& frs,
                                     const FrUsage& usage);

  FairSharingConfig fair_sharing_;
};

}  // namespace berth::admission
