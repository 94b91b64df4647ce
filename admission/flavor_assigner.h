// Flavor assignment: which ResourceFlavor each podSet gets for each resource,
// and whether it fits, needs preemption, or cannot fit.
//
// Follows Kueue's flavorassigner.Assign (pkg/scheduler/flavorassigner,
// flavorassigner.go) with FlavorFungibility on, classical preemption (no Fair
// Sharing), no TAS and no podSet groups:
//   1. PodSets are processed in order; each podSet's total (per-pod request ×
//      (count − reclaimable)) is added to the workload's running usage before
//      the next podSet is checked ("previously considered podsets requests").
//      If the ClusterQueue covers `pods`, a podSet also requests pods = count.
//   2. For each requested resource, in name order: a resource the ClusterQueue
//      does not cover fails the podSet ("resource X unavailable in
//      ClusterQueue") unless its request is zero. All requested resources of
//      one resource group get the same flavor.
//   3. Flavors of the group are tried in the order listed. A flavor is skipped
//      when its ResourceFlavor is missing ("flavor F not found"), when a
//      NoSchedule/NoExecute nodeTaint is tolerated neither by the podSet nor
//      by the flavor's own tolerations (kubernetes-sigs/kueue#4646; "untolerated taint {k v
//      NoSchedule <nil>} in flavor F"), or when the podSet's nodeSelector /
//      required node affinity, restricted to the flavor's nodeLabel keys,
//      does not match the flavor's nodeLabels ("flavor F doesn't match node
//      affinity").
//   4. Per resource (fitsResourceQuota), with val = already-assigned + request:
//      val > PotentialAvailable → NoFit, ExceedsMaxQuota ("insufficient quota
//      for R in flavor F, previously considered podsets requests (A) + current
//      podset request (B) > maximum capacity (C)"); val ≤ Available → Fit with
//      a borrowing level (height of the lowest cohort subtree that has room;
//      0 = within nominal); otherwise "insufficient unused quota for R in
//      flavor F, N more needed" and, if val ≤ nominal, or the usage could be
//      reclaimed inside the hierarchy, or borrowWithinCohort ≠ Never, or Fair
//      Sharing is enabled (the oracle says so) and reclaimWithinCohort ≠
//      Never, the preemption oracle decides Preempt / Reclaim / NoCandidates; else NoFit
//      (WaitingForQuota).
//   5. A flavor's mode is its worst resource mode. Scanning stops at a flavor
//      unless it is NoFit/NoCandidates, or needs preemption and whenCanPreempt
//      is TryNextFlavor, or borrows and whenCanBorrow is TryNextFlavor. The
//      best scanned flavor wins (isPreferred: noFit < noCandidates < preempt <
//      reclaim < fit; BorrowingOverPreemption compares that first and the
//      borrowing level second, PreemptionOverBorrowing the reverse).
//   6. The workload's representative mode is its worst podSet mode (NoFit <
//      Preempt < DeferredFit < Fit); for NoFit the QuotaReserved reason is the
//      most severe per-podSet reason (NoMatchingFlavor > ExceedsMaxQuota >
//      WaitingForQuota), where a resource group's reason is its least severe
//      NoFit flavor attempt.
// With `counts` (Kueue's Assign(ctx, counts), used by partial admission),
// podSet i is assigned for counts[i] pods: per-pod requests × counts[i], its
// reclaimable pods not subtracted (PodSetResources.ScaledTo).
// Not followed: the scan-progress memory across cycles
// (FlavorFungibilityPreserveScanProgress), TAS.
//
// Thread-safety: none; the snapshot is used as scratch and left unchanged.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "admission/model.h"
#include "admission/snapshot.h"

namespace berth::admission {

enum class FlavorAssignmentMode { kNoFit = 0, kPreempt = 1, kDeferredFit = 2, kFit = 3 };
std::string_view FlavorAssignmentModeName(FlavorAssignmentMode m);

// QuotaReserved=False reasons used by the engine (kueue workload_types.go).
inline constexpr std::string_view kReasonNoMatchingFlavor = "NoMatchingFlavor";
inline constexpr std::string_view kReasonWaitingForQuota = "WaitingForQuota";
inline constexpr std::string_view kReasonExceedsMaxQuota = "ExceedsMaxQuota";
inline constexpr std::string_view kReasonWaitingForPreemptedWorkloads = "WaitingForPreemptedWorkloads";
inline constexpr std::string_view kReasonMisconfigured = "Misconfigured";
inline constexpr std::string_view kReasonSuspended = "Suspended";
inline constexpr std::string_view kReasonQuotaReserved = "QuotaReserved";

struct ResourceAssignmentResult {
  ResourceId resource = 0;
  int flavor = -1;  // snapshot flavor index
  FlavorAssignmentMode mode = FlavorAssignmentMode::kFit;
  int borrow = 0;
};

struct PodSetAssignmentResult {
  std::string name;
  int32_t count = 0;       // count − reclaimable, or the reduced count
  ResourceList requests;   // total for `count` pods (incl. `pods`)
  std::vector<ResourceAssignmentResult> flavors;  // sorted by resource id
  std::vector<std::string> reasons;               // empty: fits
  FlavorAssignmentMode Mode() const;
};

struct Assignment {
  std::vector<PodSetAssignmentResult> pod_sets;
  int borrowing = 0;  // highest borrowing level of any resource
  FrUsage usage;      // total per fr
  std::string no_fit_reason;
  // Set by the cycle for a preemptor whose pending victims free enough room.
  bool deferred = false;

  FlavorAssignmentMode RepresentativeMode() const;
  // "couldn't assign flavors to pod set main: <reasons sorted, ", ">", podSets
  // joined by "; "; empty when everything fits.
  std::string Message() const;
  Admission ToAdmission(const Snapshot& snap, const std::string& cluster_queue) const;
  // Flavor/resource pairs whose mode is Preempt (frsNeedPreemption), sorted.
  std::vector<int> FrsNeedingPreemption(const Snapshot& snap) const;
};

// The preemption oracle the assigner asks (declared here, by its consumer;
// implemented by Preemptor).
enum class PreemptionPossibility { kNoCandidates, kPreempt, kReclaim };
class PreemptionOracle {
 public:
  virtual ~PreemptionOracle() = default;
  // Could `wl` get `quantity` of fr in ClusterQueue `cq` by preempting? Also
  // returns the borrowing level after those preemptions. Leaves the snapshot
  // unchanged.
  virtual std::pair<PreemptionPossibility, int> SimulatePreemption(Snapshot& snap, int cq, const Workload& wl,
                                                                   int fr, Amount quantity) = 0;
  // Fair Sharing is enabled: a ClusterQueue whose reclaimWithinCohort ≠
  // Never may then preempt while borrowing (canPreemptWhileBorrowing).
  virtual bool FairSharingEnabled() const { return false; }
};

// Runs steps 1–6 for `wl` in ClusterQueue `cq`. `oracle` may be null (no
// preemption is then possible: NoCandidates). `counts`, when given, holds one
// pod count per podSet of `wl` (the podSets' own counts otherwise).
Assignment AssignFlavors(Snapshot& snap, int cq, const Workload& wl, PreemptionOracle* oracle,
                         const std::vector<int32_t>* counts = nullptr);

}  // namespace berth::admission
