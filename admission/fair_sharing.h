// Fair Sharing: the dominant resource share (DRS) of ClusterQueues and
// Cohorts, and the configuration of Kueue's fairSharing block.
//
// Follows Kueue's pkg/cache/scheduler/fair_sharing.go and
// site/content/en/docs/concepts/fair_sharing.md (Kueue v0.19):
//
//   For a node (ClusterQueue or Cohort) with a parent, and an optional
//   request added to its usage:
//     borrowed(r)  = Σ over the node's flavors of max(0, usage + request −
//                    SubtreeQuota) for resource r (SubtreeQuota is nominal
//                    for a ClusterQueue);
//     lendable(r)  = Σ over every flavor of the tree of
//                    PotentialAvailable(parent, (flavor, r)): what the
//                    parent could ever give the node;
//     ratio        = max over r with lendable(r) > 0 of
//                    borrowed(r) × 1000 / lendable(r); the dominant
//                    resource is the r reaching it (the smallest name on a
//                    tie);
//     weightedShare = ratio / fairSharing.weight.
//   A root, or a node borrowing nothing, has share 0. A node with weight 0
//   that borrows has an infinite share: it borrows last and is preempted
//   first. status.fairSharing.weightedShare is ⌈weightedShare⌉, INT64_MAX for
//   the infinite share.
//
//   CompareDRS orders shares for admission (lower first) and preemption
//   (higher first): two zero-weight borrowers compare by their unweighted
//   ratio; a zero-weight borrower is above every other node; otherwise the
//   real-valued weighted shares compare.
//
// Units: ratios are real numbers in per-mille of the lendable capacity;
// weights are real numbers (Kueue reads the Quantity as a float64).
//
// Thread-safety: plain values and pure functions over a Snapshot the caller
// owns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "admission/snapshot.h"

namespace berth::admission {

// config.kueue.x-k8s.io fairSharing.preemptionStrategies (Kueue's
// pkg/scheduler/preemption/fairsharing/strategy.go; KEP 1714 rules S2-a and
// S2-b).
enum class FairSharingStrategy {
  // S2-a: preemptor's share after admission ≤ target's share after the
  // candidate's removal.
  kLessThanOrEqualToFinalShare,
  // S2-b: preemptor's share after admission < target's share before it.
  kLessThanInitialShare,
};

// The Kueue Configuration's fairSharing block plus the two beta feature
// gates that shape it (pkg/features/kube_features.go: both on by default
// since v0.17).
struct FairSharingConfig {
  bool enable = false;
  // Kueue's default when the list is empty. Kueue's API validation admits
  // only [S2-a], [S2-b] and [S2-a, S2-b]; a second entry is always applied
  // as S2-b (preemption.go runSecondFsStrategy).
  std::vector<FairSharingStrategy> preemption_strategies = {FairSharingStrategy::kLessThanOrEqualToFinalShare,
                                                            FairSharingStrategy::kLessThanInitialShare};
  // FairSharingPreemptWithinNominal: a preemptor whose ClusterQueue stays
  // within nominal for the contested resources (its own workload included)
  // preempts borrowing workloads of other ClusterQueues regardless of shares
  // (reason InCohortReclamation).
  bool preempt_within_nominal = true;
  // FairSharingPrioritizeNonBorrowing: in the admission tournament, an entry
  // whose subtree does not borrow on the flavors it requests goes first.
  bool prioritize_non_borrowing = true;
};

struct DominantResourceShare {
  double weight = 1.0;
  double unweighted_ratio = 0;    // per mille; -1 in Negative()
  std::string dominant_resource;  // "" when not borrowing
  bool borrowing = false;         // usage above quota for some fr
  std::vector<int> borrowed_frs;  // the frs borrowed on, ascending

  // The comparison start: below every real share.
  static DominantResourceShare Negative();
  bool IsZero() const { return unweighted_ratio == 0; }
  bool ZeroWeightBorrows() const { return weight == 0 && !IsZero(); }
  // unweighted_ratio / weight; 0 when zero, +inf for weight 0.
  double PreciseWeightedShare() const;
  // status.fairSharing.weightedShare: ⌈PreciseWeightedShare()⌉, INT64_MAX
  // when ZeroWeightBorrows().
  int64_t RoundedWeightedShare() const;
  // Borrows on an fr present in `requested` with a positive amount.
  bool IsBorrowingOn(const FrUsage& requested) const;
};

// −1, 0, 1 as a is below, equal to, above b (see the header comment).
int CompareDRS(const DominantResourceShare& a, const DominantResourceShare& b);

// The share of `node` with `request` (fr amounts, may be empty) added to its
// own usage only (Kueue's dominantResourceShare(node, wlReq)).
DominantResourceShare ComputeDRS(const Snapshot& snap, int node, const FrUsage& request = {});

}  // namespace berth::admission
