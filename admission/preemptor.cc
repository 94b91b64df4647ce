#include "admission/preemptor.h"

#include <algorithm>

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
    auto order = [&](const Candidate& a, const Candidate& b) {
      const Workload& x = a.info->workload;
      const Workload& y = b.info->workload;
      bool xs = a.info->cq == cq_, ys = b.info->cq == cq_;
      if (xs != ys) return !xs;
      if (x.priority != y.priority) return x.priority < y.priority;
      if (x.quota_reserved_time != y.quota_reserved_time) return x.quota_reserved_time > y.quota_reserved_time;
      return x.uid < y.uid;
    };
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

std::string_view HumanReason(std::string_view reason) {
  if (reason == kPreemptedInClusterQueue) return "prioritization in the ClusterQueue";
  if (reason == kPreemptedInCohortReclamation) return "reclamation within the cohort";
  if (reason == kPreemptedInCohortReclaimWhileBorrowing) return "reclamation within the cohort while borrowing";
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
  return Classical(snap, cq, wl, assignment.FrsNeedingPreemption(snap), assignment.usage);
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
      // Fill back: walk all but the last target backwards; a target whose
      // usage can be put back while the preemptor still fits is dropped.
      std::vector<bool> keep(targets.size(), true);
      for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
        UndoGuard& g = removals[static_cast<size_t>(i)];
        // Put the workload back (undo its removal), check, and remove again
        // if it is still needed.
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
    while (!removals.empty()) removals.pop_back();
  }
  return {};
}

std::pair<PreemptionPossibility, int> Preemptor::SimulatePreemption(Snapshot& snap, int cq, const Workload& wl,
                                                                    int fr, Amount quantity) {
  std::vector<PreemptionTarget> targets = Classical(snap, cq, wl, {fr}, FrUsage{{fr, quantity}});
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
