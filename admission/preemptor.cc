#include "admission/preemptor.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>

namespace berth::admission {

namespace {

enum class Variant { kNever, kWithinCQ, kHierarchicalReclaim, kReclaimWithoutBorrowing, kReclaimWhileBorrowing };

std::string_view VariantReason(Variant v) {
  switch (v) {
    case Variant::kWithinCQ: return kPreemptedInClusterQueue;
    case Variant::kHierarchicalReclaim:
    case Variant::kReclaimWithoutBorrowing: return kPreemptedInCohortReclamation;
    case Variant::kReclaimWhileBorrowing: return kPreemptedInCohortReclaimWhileBorrowing;
    case Variant::kNever: break;
  }
  return "Unknown";
}

struct Candidate {
  const WorkloadInfo* info;
  int lca;  // subtree root the candidate was found under (-1: same queue)
  Variant variant;
};

bool SatisfiesPolicy(const Workload& preemptor, const Workload& candidate, PreemptionPolicy policy) {
  bool lower = preemptor.priority > candidate.priority;
  switch (policy) {
    case PreemptionPolicy::kLowerPriority: return lower;
    case PreemptionPolicy::kLowerOrNewerEqualPriority:
      return lower || (preemptor.priority == candidate.priority &&
                       preemptor.queue_order_timestamp < candidate.queue_order_timestamp);
    case PreemptionPolicy::kAny: return true;
    case PreemptionPolicy::kNever: return false;
  }
  return false;
}

// CandidatesOrdering (common/ordering.go): other ClusterQueues first, then (Admission
// Fair Sharing, two LocalQueues of one ClusterQueue) the LocalQueue with more usage (a
// LocalQueue is its namespace and name; Kueue compares the names only, so teams whose
// LocalQueues share a name, each `user-queue` in its namespace, were never told apart), then
// lower priority, then most recently admitted, then uid. Kueue puts workloads already
// evicted first; berth never takes them as candidates (a preemptor waits for its own).
bool CandidateBefore(const WorkloadInfo& a, const WorkloadInfo& b, int preemptor_cq) {
  const Workload& x = a.workload;
  const Workload& y = b.workload;
  bool xs = a.cq == preemptor_cq, ys = b.cq == preemptor_cq;
  if (xs != ys) return !xs;
  const bool other_local_queue = x.namespace_name != y.namespace_name || x.queue_name != y.queue_name;
  if (a.cq == b.cq && other_local_queue && a.local_queue_usage && b.local_queue_usage &&
      *a.local_queue_usage != *b.local_queue_usage) {
    return *a.local_queue_usage > *b.local_queue_usage;
  }
  if (x.priority != y.priority) return x.priority < y.priority;
  if (x.quota_reserved_time != y.quota_reserved_time) return x.quota_reserved_time > y.quota_reserved_time;
  return x.uid < y.uid;
}

bool UsesResources(const WorkloadInfo& w, const std::vector<int>& frs) {
  for (const auto& [fr, v] : w.usage) {
    if (std::binary_search(frs.begin(), frs.end(), fr)) return true;
  }
  return false;
}

class CandidateSearch {
 public:
  CandidateSearch(Snapshot& snap, int cq, const Workload& wl, const std::vector<int>& frs, const FrUsage& usage)
      : snap_(snap), cq_(cq), wl_(wl), frs_(frs), usage_(usage), spec_(snap.Spec(cq)) {}

  // Steps 2–4 of the header.
  void Collect() {
    std::vector<Candidate> same, hier, prio;
    if (spec_.preemption.within_cluster_queue != PreemptionPolicy::kNever) AddFromQueue(cq_, -1, false, &same);
    if (snap_.HasParent(cq_) && spec_.preemption.reclaim_within_cohort != PreemptionPolicy::kNever) {
      FrUsage remaining;
      bool advantage = snap_.FitsInSubtreeQuota(cq_, usage_, &remaining);
      int previous = -1;
      for (int node = snap_.Parent(cq_); node >= 0; node = snap_.Parent(node)) {
        CollectInSubtree(node, node, previous, advantage, advantage ? &hier : &prio);
        FrUsage next;
        bool fits = snap_.FitsInSubtreeQuota(node, remaining, &next);
        remaining = std::move(next);
        advantage = advantage || fits;
        previous = node;
      }
    }
    auto order = [&](const Candidate& a, const Candidate& b) { return CandidateBefore(*a.info, *b.info, cq_); };
    std::sort(same.begin(), same.end(), order);
    std::sort(hier.begin(), hier.end(), order);
    std::sort(prio.begin(), prio.end(), order);
    no_candidate_from_other_queues = hier.empty() && prio.empty();
    no_candidate_for_hierarchical_reclaim = hier.empty();
    candidates.insert(candidates.end(), hier.begin(), hier.end());
    candidates.insert(candidates.end(), prio.begin(), prio.end());
    candidates.insert(candidates.end(), same.begin(), same.end());
  }

  // candidateIsValid.
  bool Valid(const Candidate& c, bool borrow) const {
    if (c.info->cq == cq_) return true;
    if (borrow && c.variant == Variant::kReclaimWithoutBorrowing) return false;
    if (snap_.IsWithinNominal(c.info->cq, frs_)) return false;
    for (int node = snap_.Parent(c.info->cq); node >= 0 && node != c.lca; node = snap_.Parent(node)) {
      if (snap_.IsWithinNominal(node, frs_)) return false;
    }
    return true;
  }

  std::vector<Candidate> candidates;
  bool no_candidate_from_other_queues = true;
  bool no_candidate_for_hierarchical_reclaim = true;

 private:
  Variant Classify(const WorkloadInfo& w, bool advantage) const {
    if (!UsesResources(w, frs_)) return Variant::kNever;
    bool same = w.cq == cq_;
    PreemptionPolicy policy = same ? spec_.preemption.within_cluster_queue : spec_.preemption.reclaim_within_cohort;
    if (!SatisfiesPolicy(wl_, w.workload, policy)) return Variant::kNever;
    if (same) return Variant::kWithinCQ;
    if (advantage) return Variant::kHierarchicalReclaim;
    const auto& bwc = spec_.preemption.borrow_within_cohort;
    if (bwc.policy == BorrowWithinCohort::Policy::kNever) return Variant::kReclaimWithoutBorrowing;
    int64_t cand = w.workload.priority, incoming = wl_.priority;
    bool above = cand >= incoming ||
                 (bwc.max_priority_threshold.has_value() && cand > *bwc.max_priority_threshold);
    return above ? Variant::kReclaimWithoutBorrowing : Variant::kReclaimWhileBorrowing;
  }

  void AddFromQueue(int q, int lca, bool advantage, std::vector<Candidate>* out) const {
    for (const auto& [uid, info] : snap_.Workloads(q)) {
      if (info->removed || info->workload.state == AdmissionState::kEvicting) continue;
      Variant v = Classify(*info, advantage);
      if (v != Variant::kNever) out->push_back({info, lca, v});
    }
  }

  void CollectInSubtree(int cohort, int root, int skip, bool advantage, std::vector<Candidate>* out) const {
    for (int child : snap_.ChildCohorts(cohort)) {
      if (child == skip || snap_.IsWithinNominal(child, frs_)) continue;
      CollectInSubtree(child, root, skip, advantage, out);
    }
    for (int q : snap_.ChildClusterQueues(cohort)) {
      if (q == cq_) continue;
      if (!snap_.IsWithinNominal(q, frs_)) AddFromQueue(q, root, advantage, out);
    }
  }

  Snapshot& snap_;
  int cq_;
  const Workload& wl_;
  const std::vector<int>& frs_;
  const FrUsage& usage_;
  const ClusterQueue& spec_;
};

bool WorkloadFits(const Snapshot& snap, int cq, const FrUsage& usage, bool allow_borrowing) {
  for (const auto& [fr, v] : usage) {
    if (!allow_borrowing && snap.BorrowingWith(cq, fr, v)) return false;
    if (v > snap.Available(cq, fr)) return false;
  }
  return true;
}

// fillBackWorkloads: walks all but the last target backwards; a target whose
// usage can be put back while the preemptor still fits is dropped. Restores
// the snapshot (every removal undone) and returns the kept targets.
std::vector<PreemptionTarget> FillBack(Snapshot& snap, int cq, const FrUsage& usage, bool borrow,
                                       const std::vector<PreemptionTarget>& targets, std::vector<UndoGuard>& removals) {
  std::vector<bool> keep(targets.size(), true);
  for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
    UndoGuard& g = removals[static_cast<size_t>(i)];
    g.Undo();
    if (WorkloadFits(snap, cq, usage, borrow)) {
      keep[static_cast<size_t>(i)] = false;
    } else {
      g = snap.SimulateWorkloadRemoval({targets[static_cast<size_t>(i)].workload});
    }
  }
  std::vector<PreemptionTarget> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (keep[i]) out.push_back(targets[i]);
  }
  while (!removals.empty()) removals.pop_back();  // restore in reverse order
  return out;
}

std::string_view HumanReason(std::string_view reason) {
  if (reason == kPreemptedInClusterQueue) return "prioritization in the ClusterQueue";
  if (reason == kPreemptedInCohortReclamation) return "reclamation within the cohort";
  if (reason == kPreemptedInCohortReclaimWhileBorrowing) return "reclamation within the cohort while borrowing";
  if (reason == kPreemptedInCohortFairSharing) return "Fair Sharing within the cohort";
  return "UNKNOWN";
}

}  // namespace

std::string PreemptionMessage(const Snapshot& snap, const Workload& preemptor, int preemptor_cq,
                              const PreemptionTarget& target, const std::string& job_uid) {
  return "Preempted to accommodate a workload (UID: " + (preemptor.uid.empty() ? "UNKNOWN" : preemptor.uid) +
         ", JobUID: " + (job_uid.empty() ? "UNKNOWN" : job_uid) + ") due to " +
         std::string(HumanReason(target.reason)) + "; preemptor path: " + snap.Path(preemptor_cq) +
         "; preemptee path: " + snap.Path(target.workload->cq);
}

std::vector<PreemptionTarget> Preemptor::GetTargets(Snapshot& snap, int cq, const Workload& wl,
                                                    const Assignment& assignment) {
  return Targets(snap, cq, wl, assignment.FrsNeedingPreemption(snap), assignment.usage);
}

std::vector<PreemptionTarget> Preemptor::Targets(Snapshot& snap, int cq, const Workload& wl,
                                                 const std::vector<int>& frs, const FrUsage& usage) {
  return fair_sharing_.enable ? Fair(snap, cq, wl, frs, usage) : Classical(snap, cq, wl, frs, usage);
}

std::vector<PreemptionTarget> Preemptor::Classical(Snapshot& snap, int cq, const Workload& wl,
                                                   const std::vector<int>& frs, const FrUsage& usage) {
  CandidateSearch search(snap, cq, wl, frs, usage);
  search.Collect();
  if (search.candidates.empty()) return {};

  const ClusterQueue& spec = snap.Spec(cq);
  const bool forbidden = spec.preemption.borrow_within_cohort.policy == BorrowWithinCohort::Policy::kNever;
  bool under_nominal = true;  // queueUnderNominalInResourcesNeedingPreemption
  for (int fr : frs) under_nominal = under_nominal && snap.Nominal(cq, fr) > snap.Usage(cq, fr);
  std::vector<bool> attempts;
  if (search.no_candidate_from_other_queues || (forbidden && !under_nominal)) {
    attempts = {true};
  } else if (forbidden && search.no_candidate_for_hierarchical_reclaim) {
    attempts = {false, true};
  } else {
    attempts = {true, false};
  }

  for (bool borrow : attempts) {
    std::vector<PreemptionTarget> targets;
    std::vector<UndoGuard> removals;
    bool fit = false;
    for (const Candidate& c : search.candidates) {
      if (!search.Valid(c, borrow)) continue;
      removals.push_back(snap.SimulateWorkloadRemoval({c.info}));
      targets.push_back({c.info, std::string(VariantReason(c.variant))});
      if (WorkloadFits(snap, cq, usage, borrow)) {
        fit = true;
        break;
      }
    }
    if (fit) {
      return FillBack(snap, cq, usage, borrow, targets, removals);
    }
    while (!removals.empty()) removals.pop_back();
  }
  return {};
}

namespace {

// TargetClusterQueueOrdering (fairsharing/ordering.go) with the almost-least-
// common-ancestors of least_common_ancestor.go. Node indices of pruned
// ClusterQueues and Cohorts share one set.
class TargetOrdering {
 public:
  TargetOrdering(const Snapshot& snap, int preemptor_cq, const std::vector<const WorkloadInfo*>& candidates)
      : snap_(snap), cq_(preemptor_cq) {
    for (int n = snap.Parent(cq_); n >= 0; n = snap.Parent(n)) path_.insert(n);
    for (const WorkloadInfo* c : candidates) queues_[c->cq].push_back(c);
  }

  // The next target ClusterQueue, or -1 when none is left. Between two calls
  // the caller pops a workload of the returned queue or drops the queue.
  int Next() {
    if (!snap_.HasParent(cq_)) return !pruned_.count(cq_) && HasWorkload(cq_) ? cq_ : -1;
    const int root = snap_.Root(cq_);
    while (!pruned_.count(root)) {
      int t = NextTarget(root);
      if (t >= 0) return t;
    }
    return -1;
  }
  bool HasWorkload(int q) const {
    auto it = queues_.find(q);
    return it != queues_.end() && !it->second.empty();
  }
  const WorkloadInfo* Pop(int q) {
    auto& d = queues_[q];
    const WorkloadInfo* w = d.front();
    d.pop_front();
    return w;
  }
  void Drop(int q) { pruned_.insert(q); }

  // (preemptor's, target's) almostLCA: the nodes just below the lowest
  // cohort holding both ClusterQueues.
  std::pair<int, int> AlmostLCAs(int target) const {
    int lca = -1;
    for (int n = snap_.Parent(target); n >= 0 && lca < 0; n = snap_.Parent(n)) {
      if (path_.count(n)) lca = n;
    }
    return {AlmostLCA(cq_, lca), AlmostLCA(target, lca)};
  }

 private:
  int AlmostLCA(int q, int lca) const {
    int below = q;
    for (int n = snap_.Parent(q); n >= 0 && n != lca; n = snap_.Parent(n)) below = n;
    return below;
  }

  // nextTarget: the child with the highest share, recursing into Cohorts;
  // -1 when this call only pruned.
  int NextTarget(int cohort) {
    int best_cq = -1;
    DominantResourceShare best_cq_drs = DominantResourceShare::Negative();
    for (int q : snap_.ChildClusterQueues(cohort)) {
      if (pruned_.count(q)) continue;
      DominantResourceShare drs = ComputeDRS(snap_, q);
      int cmp = CompareDRS(drs, best_cq_drs);
      if ((!drs.borrowing && q != cq_) || !HasWorkload(q)) {
        pruned_.insert(q);
      } else if (cmp == 0) {
        if (CandidateBefore(*queues_[q].front(), *queues_[best_cq].front(), cq_)) best_cq = q;
      } else if (cmp > 0) {
        best_cq_drs = drs;
        best_cq = q;
      }
    }
    int best_cohort = -1;
    DominantResourceShare best_cohort_drs = DominantResourceShare::Negative();
    for (int c : snap_.ChildCohorts(cohort)) {
      if (pruned_.count(c)) continue;
      DominantResourceShare drs = ComputeDRS(snap_, c);
      if (!drs.borrowing && !path_.count(c)) {
        pruned_.insert(c);
      } else if (CompareDRS(drs, best_cohort_drs) >= 0) {
        best_cohort_drs = drs;
        best_cohort = c;
      }
    }
    if (best_cq < 0 && best_cohort < 0) {
      pruned_.insert(cohort);
      return -1;
    }
    // A Cohort wins ties: the most unfair node inside it can then be chosen.
    if (CompareDRS(best_cohort_drs, best_cq_drs) >= 0) return NextTarget(best_cohort);
    return best_cq;
  }

  const Snapshot& snap_;
  int cq_;
  std::set<int> path_;  // the preemptor's ancestor cohorts
  std::map<int, std::deque<const WorkloadInfo*>> queues_;
  std::set<int> pruned_;
};

}  // namespace

std::vector<PreemptionTarget> Preemptor::Fair(Snapshot& snap, int cq, const Workload& wl, const std::vector<int>& frs,
                                              const FrUsage& usage) {
  // Step 1: candidates.
  const ClusterQueue& spec = snap.Spec(cq);
  std::vector<const WorkloadInfo*> candidates;
  auto add_from = [&](int q, PreemptionPolicy policy) {
    for (const auto& [uid, info] : snap.Workloads(q)) {
      if (info->removed || info->workload.state == AdmissionState::kEvicting) continue;
      if (SatisfiesPolicy(wl, info->workload, policy) && UsesResources(*info, frs)) candidates.push_back(info);
    }
  };
  if (spec.preemption.within_cluster_queue != PreemptionPolicy::kNever) {
    add_from(cq, spec.preemption.within_cluster_queue);
  }
  if (snap.HasParent(cq) && spec.preemption.reclaim_within_cohort != PreemptionPolicy::kNever) {
    std::vector<int> queues;
    snap.SubtreeClusterQueues(snap.Root(cq), &queues);
    for (int q : queues) {
      bool borrowing = false;
      for (int fr : frs) borrowing = borrowing || snap.Borrowing(q, fr);
      if (q != cq && borrowing) add_from(q, spec.preemption.reclaim_within_cohort);
    }
  }
  if (candidates.empty()) return {};
  std::sort(candidates.begin(), candidates.end(),
            [&](const WorkloadInfo* a, const WorkloadInfo* b) { return CandidateBefore(*a, *b, cq); });

  std::vector<FairSharingStrategy> strategies = fair_sharing_.preemption_strategies;
  if (strategies.empty()) strategies = FairSharingConfig().preemption_strategies;

  std::vector<PreemptionTarget> targets;
  std::vector<UndoGuard> removals;
  auto remove = [&](const WorkloadInfo* w, std::string_view reason) {
    removals.push_back(snap.SimulateWorkloadRemoval({w}));
    targets.push_back({w, std::string(reason)});
  };
  // Step 2: shares include the incoming workload; fit checks do not.
  UndoGuard incoming = snap.SimulateUsageAddition(cq, usage);
  auto fits = [&] {
    UndoGuard without = snap.SimulateUsageRemoval(cq, usage);
    return WorkloadFits(snap, cq, usage, /*allow_borrowing=*/true);
  };
  bool within_nominal = fair_sharing_.preempt_within_nominal;
  for (int fr : frs) within_nominal = within_nominal && !snap.Borrowing(cq, fr);

  // Step 4: the first strategy.
  bool fit = false;
  std::vector<const WorkloadInfo*> retry;
  {
    TargetOrdering ordering(snap, cq, candidates);
    for (int t = ordering.Next(); t >= 0; t = ordering.Next()) {
      if (t == cq || within_nominal) {
        remove(ordering.Pop(t), t == cq ? kPreemptedInClusterQueue : kPreemptedInCohortReclamation);
        if ((fit = fits())) break;
        continue;
      }
      auto [preemptor_lca, target_lca] = ordering.AlmostLCAs(t);
      const DominantResourceShare preemptor_new = ComputeDRS(snap, preemptor_lca);
      const DominantResourceShare target_old = ComputeDRS(snap, target_lca);
      if (std::isinf(preemptor_new.PreciseWeightedShare()) && !std::isinf(target_old.PreciseWeightedShare())) {
        while (ordering.HasWorkload(t)) retry.push_back(ordering.Pop(t));
        continue;
      }
      while (ordering.HasWorkload(t)) {
        const WorkloadInfo* w = ordering.Pop(t);
        bool passed;
        if (strategies[0] == FairSharingStrategy::kLessThanOrEqualToFinalShare) {
          UndoGuard gone = snap.SimulateUsageRemoval(t, w->usage);
          passed = CompareDRS(preemptor_new, ComputeDRS(snap, target_lca)) <= 0;
        } else {
          passed = CompareDRS(preemptor_new, target_old) < 0;
        }
        if (!passed) {
          retry.push_back(w);
          continue;
        }
        remove(w, kPreemptedInCohortFairSharing);
        fit = fits();
        break;  // shares changed: choose the target again
      }
      if (fit) break;
    }
  }
  // Step 5: S2-b over what the first strategy kept.
  if (!fit && strategies.size() > 1) {
    TargetOrdering ordering(snap, cq, retry);
    for (int t = ordering.Next(); t >= 0; t = ordering.Next()) {
      auto [preemptor_lca, target_lca] = ordering.AlmostLCAs(t);
      bool passed = CompareDRS(ComputeDRS(snap, preemptor_lca), ComputeDRS(snap, target_lca)) < 0;
      const WorkloadInfo* w = ordering.Pop(t);
      if (passed) {
        remove(w, kPreemptedInCohortFairSharing);
        if ((fit = fits())) break;
      }
      ordering.Drop(t);
    }
  }
  // Usage arithmetic is order-independent, so the incoming usage may go
  // before the removals are undone.
  incoming.Undo();
  if (!fit) {
    while (!removals.empty()) removals.pop_back();
    return {};
  }
  return FillBack(snap, cq, usage, /*borrow=*/true, targets, removals);
}

std::pair<PreemptionPossibility, int> Preemptor::SimulatePreemption(Snapshot& snap, int cq, const Workload& wl,
                                                                    int fr, Amount quantity) {
  std::vector<PreemptionTarget> targets = Targets(snap, cq, wl, {fr}, FrUsage{{fr, quantity}});
  if (targets.empty()) return {PreemptionPossibility::kNoCandidates, snap.BorrowingLevel(cq, fr, quantity).first};
  std::vector<const WorkloadInfo*> victims;
  bool same_queue = false;
  for (const auto& t : targets) {
    victims.push_back(t.workload);
    same_queue = same_queue || t.workload->cq == cq;
  }
  int borrow_after;
  {
    UndoGuard g = snap.SimulateWorkloadRemoval(victims);
    borrow_after = snap.BorrowingLevel(cq, fr, quantity).first;
  }
  return {same_queue ? PreemptionPossibility::kPreempt : PreemptionPossibility::kReclaim, borrow_after};
}

}  // namespace berth::admission
