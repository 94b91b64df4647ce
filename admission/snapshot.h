// Snapshot: quotas, the cohort tree and the usage of every workload holding
// quota, as the admission engine sees them during a scheduling cycle.
//
// Follows Kueue's scheduler cache/snapshot (pkg/cache/scheduler:
// snapshot.go, clusterqueue_snapshot.go, cohort_snapshot.go,
// resource_node.go).
//
// The quota tree. Every ClusterQueue and every Cohort is a node. For each
// (flavor, resource) pair — an "fr", interned into a dense index — a node has
//   Quotas:       nominal, borrowingLimit, lendingLimit (nil = kUnlimited);
//   SubtreeQuota: its own nominal + Σ over children of
//                 (child SubtreeQuota − child localQuota);
//   Usage:        for a ClusterQueue its workloads' usage; for a Cohort the
//                 Σ over children of max(0, child Usage − child localQuota).
// where localQuota = max(0, SubtreeQuota − lendingLimit) (0 without a
// lendingLimit) is capacity never lent to the parent.
//   LocalAvailable(n)     = max(0, localQuota − Usage)
//   Available(n)          = root: SubtreeQuota − Usage; otherwise
//                           LocalAvailable(n) + min(Available(parent),
//                           SubtreeQuota − localQuota − max(0, Usage −
//                           localQuota) + borrowingLimit). May be negative
//                           after over-admission; ClusterQueue callers clamp
//                           at 0 as Kueue does.
//   PotentialAvailable(n) = the same with no usage, bounded by
//                           SubtreeQuota + borrowingLimit.
//   Borrowing             = Usage above nominal (a ClusterQueue) or above
//                           SubtreeQuota (a Cohort).
// Adding usage to a ClusterQueue bubbles the part that exceeds its local
// available capacity up to the parent, recursively; removal is the inverse.
//
// Building. Cohorts named only by a ClusterQueue's cohortName or a Cohort's
// parentName exist implicitly with no quota. A Cohort whose parent chain has a
// cycle is left out of the tree and every ClusterQueue below it is inactive
// (Kueue skips them when taking a snapshot). A ClusterQueue is also inactive
// when stopPolicy ≠ None (reason Stopped), when it references a missing
// ResourceFlavor (FlavorNotFound), or when the caller set inactive_reason.
// Inactive ClusterQueues get no heads but keep their quota and usage in the
// tree, as Kueue's cache keeps them.
//
// berth departure (docs/architecture.md, departure 4): an evicted workload stays here, in state
// kEvicting, with its usage counted, until the caller removes it after every
// pod terminated. Workloads evicting on behalf of a preemptor are indexed by
// that preemptor (PendingVictims) so the capacity they free is reserved for it.
//
// Mutations: AddWorkload/RemoveWorkload/SetEvicting change the snapshot for
// good; the Simulate* methods return an UndoGuard that restores the previous
// state when run or destroyed (Kueue's Simulate*Removal restore functions).
// Guards must be undone in reverse order of creation.
//
// Errors: AddWorkload returns InvalidError for a workload without admission or
// for an unknown ClusterQueue; duplicates are AlreadyExists.
//
// Thread-safety: none; the owner synchronises.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "admission/model.h"
#include "core/status.h"

namespace berth::admission {

// Usage as (fr index, amount) pairs, sorted by fr index, no zero amounts.
using FrUsage = std::vector<std::pair<int, Amount>>;

// Runs a restore action once, on Undo() or destruction. Move-only.
class [[nodiscard]] UndoGuard {
 public:
  UndoGuard() = default;
  explicit UndoGuard(std::function<void()> undo) : undo_(std::move(undo)) {}
  UndoGuard(UndoGuard&& o) noexcept : undo_(std::exchange(o.undo_, nullptr)) {}
  UndoGuard& operator=(UndoGuard&& o) noexcept {
    if (this != &o) {
      Undo();
      undo_ = std::exchange(o.undo_, nullptr);
    }
    return *this;
  }
  UndoGuard(const UndoGuard&) = delete;
  UndoGuard& operator=(const UndoGuard&) = delete;
  ~UndoGuard() { Undo(); }
  void Undo() {
    if (undo_) std::exchange(undo_, nullptr)();
  }
  // Keeps the change: the guard will not undo it.
  void Commit() { undo_ = nullptr; }

 private:
  std::function<void()> undo_;
};

// A workload holding quota, as stored in the snapshot.
struct WorkloadInfo {
  Workload workload;  // state kAdmitted or kEvicting, admission set
  int cq = -1;        // node index of its ClusterQueue
  FrUsage usage;
  bool removed = false;  // temporarily removed by a simulation
  // Admission Fair Sharing: the usage of its LocalQueue (admission_fair_sharing.h), set by
  // SetLocalQueueUsage in a ClusterQueue that orders by it; unset elsewhere.
  std::optional<double> local_queue_usage;
};

// A resolved resource group of a ClusterQueue: flavor and fr indices.
struct ResolvedFlavor {
  int flavor = -1;           // flavor index
  std::vector<int> frs;      // parallel to ResolvedGroup::covered
};
struct ResolvedGroup {
  std::vector<ResourceId> covered;
  std::vector<ResolvedFlavor> flavors;
};

class Snapshot {
 public:
  Snapshot(const ResourceNames& names, std::vector<ResourceFlavor> flavors,
           std::vector<ClusterQueue> cluster_queues, std::vector<Cohort> cohorts);
  // Copyable (a deep copy: benchmarks and tests fork snapshots).
  Snapshot(const Snapshot&);
  Snapshot& operator=(const Snapshot&);
  Snapshot(Snapshot&&) noexcept;
  Snapshot& operator=(Snapshot&&) noexcept;
  ~Snapshot();

  const ResourceNames& names() const { return *names_; }
  // Makes the snapshot read a copy of its ResourceNames that it owns (shared
  // with its copies), so it may be used where the names it was built with can
  // change: a snapshot used outside the lock that guards them (their Intern
  // may reallocate under a reader).
  void OwnNames();

  // --- Workloads holding quota ------------------------------------------
  Status AddWorkload(const Workload& wl);
  // False when the uid is unknown.
  bool RemoveWorkload(std::string_view uid);
  // Marks an admitted workload as evicting (its usage keeps counting).
  // `preemptor_uid` may be empty (eviction not caused by a preemption).
  bool SetEvicting(std::string_view uid, std::string_view preemptor_uid);
  const WorkloadInfo* FindWorkload(std::string_view uid) const;
  // Evicting workloads that were preempted for `preemptor_uid`, by uid.
  std::vector<const WorkloadInfo*> PendingVictims(std::string_view preemptor_uid) const;
  size_t workload_count() const { return workloads_.size(); }

  // --- ClusterQueues -----------------------------------------------------
  int ClusterQueueIndex(std::string_view name) const;  // -1 when unknown
  int cluster_queue_count() const { return static_cast<int>(cq_nodes_.size()); }
  // Node index of the i-th ClusterQueue in name order.
  int ClusterQueueNode(int i) const { return cq_nodes_[static_cast<size_t>(i)]; }
  const ClusterQueue& Spec(int cq) const;
  const std::vector<ResolvedGroup>& Groups(int cq) const;
  // Index into Groups(cq) covering resource r, or -1.
  int GroupForResource(int cq, ResourceId r) const;
  bool Active(int cq) const;
  // Active condition reason/message ("Ready", "Can admit new workloads").
  const std::string& ActiveReason(int cq) const;
  const std::string& ActiveMessage(int cq) const;
  // Workloads holding quota in the ClusterQueue, by uid.
  const std::map<std::string, WorkloadInfo*>& Workloads(int cq) const;
  // Admission Fair Sharing (Kueue's snapshot LocalQueueFSUsage): each quota holder's
  // local_queue_usage becomes usage(its ClusterQueue's name, it); nullopt leaves it unset.
  // Preemption takes candidates of the LocalQueue with more usage first (preemptor.h).
  void SetLocalQueueUsage(
      const std::function<std::optional<double>(const std::string& cluster_queue, const Workload&)>& usage);
  // "/<root cohort>/.../<cq>" as in Kueue's preemption messages.
  std::string Path(int cq) const;

  // --- Tree --------------------------------------------------------------
  int Parent(int node) const;  // -1 for a root
  bool HasParent(int node) const { return Parent(node) >= 0; }
  int Root(int node) const;
  const std::string& NodeName(int node) const;
  bool IsClusterQueue(int node) const;
  const std::vector<int>& ChildCohorts(int cohort) const;
  const std::vector<int>& ChildClusterQueues(int cohort) const;
  // Node index of the Cohort `name` (a Cohort object, or one only named by a
  // ClusterQueue or as a parent), -1 when unknown. Linear in the node count.
  int CohortIndex(std::string_view name) const;
  // spec.fairSharing.weight of a ClusterQueue or Cohort (1 when unset).
  double FairWeight(int node) const;
  // Appends the ClusterQueues of the subtree rooted at `node` (the node
  // itself when it is a ClusterQueue): child cohorts' first, depth first,
  // then the node's own ClusterQueues, each list in name order.
  void SubtreeClusterQueues(int node, std::vector<int>* out) const;
  // Kueue getNodeHeight: 1 for a cohort with only ClusterQueue children,
  // 1 + the highest child cohort otherwise (0 when empty).
  int Height(int cohort) const;

  // --- Flavors and frs ---------------------------------------------------
  int FlavorIndex(std::string_view name) const;  // -1 when never named
  const std::string& FlavorName(int flavor) const;
  // nullptr when the ResourceFlavor object does not exist.
  const ResourceFlavor* Flavor(int flavor) const;
  // Interned fr index, or -1.
  int FindFr(int flavor, ResourceId r) const;
  // Number of interned frs; fr indices are 0..fr_count()-1.
  int fr_count() const { return static_cast<int>(fr_keys_.size()); }
  int FrFlavor(int fr) const { return fr_keys_[static_cast<size_t>(fr)].first; }
  ResourceId FrResource(int fr) const { return fr_keys_[static_cast<size_t>(fr)].second; }

  // --- Quota arithmetic (see the header comment) ---------------------------
  Amount Nominal(int node, int fr) const;
  Amount BorrowingLimit(int node, int fr) const;  // kUnlimited when nil
  Amount SubtreeQuota(int node, int fr) const;
  // The fr is a key of Kueue's SubtreeQuota map for the node: named by the
  // resource groups of the node or of a node below it (even with quota 0).
  bool HasSubtreeQuota(int node, int fr) const;
  Amount Usage(int node, int fr) const;
  Amount LocalQuota(int node, int fr) const;
  Amount LocalAvailable(int node, int fr) const;
  // Clamped at 0 for ClusterQueues (ClusterQueueSnapshot.Available).
  Amount Available(int cq, int fr) const;
  Amount PotentialAvailable(int node, int fr) const;
  // Usage + val above nominal (ClusterQueue) / SubtreeQuota (Cohort).
  bool BorrowingWith(int node, int fr, Amount val) const;
  bool Borrowing(int node, int fr) const { return BorrowingWith(node, fr, 0); }
  // Every fr of `usage` fits Available().
  bool Fits(int cq, const FrUsage& usage) const;
  // Usage ≤ SubtreeQuota for every fr in frs (IsWithinNominalInResources).
  bool IsWithinNominal(int node, const std::vector<int>& frs) const;
  // Kueue classical.FindHeightOfLowestSubtreeThatFits: the borrowing level
  // of putting `val` of fr into ClusterQueue `cq` — 0 when it stays within
  // nominal (or there is no cohort), else the height of the lowest ancestor
  // cohort whose subtree quota holds it — and whether that subtree has a
  // parent (capacity lent out there could be reclaimed hierarchically).
  std::pair<int, bool> BorrowingLevel(int cq, int fr, Amount val) const;
  // QuantitiesFitInQuota: whether `requests` fit the node's SubtreeQuota,
  // and the part of each request beyond the node's LocalAvailable.
  bool FitsInSubtreeQuota(int node, const FrUsage& requests, FrUsage* remaining) const;

  void AddUsage(int cq, const FrUsage& usage);
  void RemoveUsage(int cq, const FrUsage& usage);
  UndoGuard SimulateUsageAddition(int cq, const FrUsage& usage);
  UndoGuard SimulateUsageRemoval(int cq, const FrUsage& usage);
  // Removes the workloads' usage and hides them from candidate searches.
  UndoGuard SimulateWorkloadRemoval(const std::vector<const WorkloadInfo*>& workloads);

  // Converts per-(flavor, resource) amounts to FrUsage, interning unknown
  // flavors and frs.
  FrUsage ToFrUsage(const std::vector<FlavorResourceAmount>& amounts);

 private:
  struct Node;
  struct CqData;

  int InternFlavor(std::string_view name);
  int InternFr(int flavor, ResourceId r);
  void BuildTree(std::vector<ClusterQueue> cqs, std::vector<Cohort> cohorts);
  Amount AvailableRaw(int node, int fr) const;
  void AddUsageAt(int node, int fr, Amount val);
  void RemoveUsageAt(int node, int fr, Amount val);
  void ApplyQuotas(Node& n, const std::vector<ResourceGroup>& groups);
  void RecomputeSubtree(int node);
  void RebuildWorkloadIndex();

  const ResourceNames* names_;
  std::shared_ptr<const ResourceNames> owned_names_;  // set by OwnNames; names_ points at it
  std::vector<std::string> flavor_names_;
  std::unordered_map<std::string, int> flavor_index_;
  std::vector<std::optional<ResourceFlavor>> flavors_;
  std::vector<std::pair<int, ResourceId>> fr_keys_;
  std::unordered_map<int64_t, int> fr_index_;

  std::vector<Node> nodes_;
  std::vector<int> cq_nodes_;  // ClusterQueue node indices in name order
  std::unordered_map<std::string, int> cq_index_;
  std::vector<CqData> cqs_;    // indexed by node index (empty for cohorts)

  std::unordered_map<std::string, std::unique_ptr<WorkloadInfo>> workloads_;
  std::map<std::string, std::set<std::string>> victims_by_preemptor_;
};

}  // namespace berth::admission
