#include "admission/scheduler.h"

#include "admission/podset_reducer.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

namespace berth::admission {

std::string_view EntryOutcomeName(EntryOutcome o) {
  switch (o) {
    case EntryOutcome::kAdmitted: return "Admitted";
    case EntryOutcome::kPreempting: return "Preempting";
    case EntryOutcome::kPending: return "Pending";
    case EntryOutcome::kDropped: return "Dropped";
  }
  return "Unknown";
}

const EntryResult* CycleResult::Find(const std::string& uid) const {
  auto it = by_uid.find(uid);
  return it == by_uid.end() ? nullptr : &entries[it->second];
}

bool EntryBefore(const EntryOrderKey& a, const EntryOrderKey& b, bool priority_sorting_within_cohort) {
  if (a.borrowing != b.borrowing) return a.borrowing < b.borrowing;
  if (priority_sorting_within_cohort && a.priority != b.priority) return a.priority > b.priority;
  if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
  return a.uid < b.uid;
}

namespace {

struct Entry {
  const Workload* wl = nullptr;
  int cq = -1;
  Assignment assignment;
  std::vector<PreemptionTarget> targets;
  std::vector<const WorkloadInfo*> victims;  // still evicting for this workload
  std::string message;                       // assignment message to report
  EntryResult result;
};

std::string PendingPreemptionMessage(const std::string& base, size_t n) {
  return base + ". Pending the preemption of " + std::to_string(n) + " workload(s)";
}

// Partial admission (step 2): when neither the full assignment fits nor
// preemption makes it fit, the largest reduced counts (podset_reducer.h)
// whose assignment fits or has preemption targets replace it.
void TryPartialAdmission(Snapshot& snap, Preemptor& preemptor, Entry& e) {
  if (!e.wl->CanBePartiallyAdmitted()) return;
  struct Reduced {
    Assignment assignment;
    std::vector<PreemptionTarget> targets;
  };
  std::optional<Reduced> found = ReducePodSets(e.wl->pod_sets, [&](const std::vector<int32_t>& counts) {
    std::optional<Reduced> out;
    Assignment a = AssignFlavors(snap, e.cq, *e.wl, &preemptor, &counts);
    if (a.RepresentativeMode() == FlavorAssignmentMode::kFit) {
      out = Reduced{std::move(a), {}};
    } else if (a.RepresentativeMode() == FlavorAssignmentMode::kPreempt) {
      std::vector<PreemptionTarget> targets = preemptor.GetTargets(snap, e.cq, *e.wl, a);
      if (!targets.empty()) out = Reduced{std::move(a), std::move(targets)};
    }
    return out;
  });
  if (!found) return;
  e.assignment = std::move(found->assignment);
  e.targets = std::move(found->targets);
  e.message = e.assignment.Message();
}

// Nomination (step 2) for a head whose ClusterQueue is usable.
void Nominate(Snapshot& snap, Preemptor& preemptor, Entry& e) {
  e.assignment = AssignFlavors(snap, e.cq, *e.wl, &preemptor);
  e.message = e.assignment.Message();
  if (e.assignment.RepresentativeMode() == FlavorAssignmentMode::kFit) return;
  e.victims = snap.PendingVictims(e.wl->uid);
  if (e.victims.empty()) {
    if (e.assignment.RepresentativeMode() == FlavorAssignmentMode::kPreempt) {
      e.targets = preemptor.GetTargets(snap, e.cq, *e.wl, e.assignment);
    }
    if (e.targets.empty()) TryPartialAdmission(snap, preemptor, e);
    return;
  }
  // berth: re-evaluate with the victims still evicting for it counted as gone.
  UndoGuard gone = snap.SimulateWorkloadRemoval(e.victims);
  Assignment again = AssignFlavors(snap, e.cq, *e.wl, &preemptor);
  if (again.RepresentativeMode() == FlavorAssignmentMode::kFit) {
    again.deferred = true;
    e.assignment = std::move(again);
    return;
  }
  e.message = again.Message();
  if (again.RepresentativeMode() == FlavorAssignmentMode::kPreempt) {
    e.targets = preemptor.GetTargets(snap, e.cq, *e.wl, again);
  }
  e.assignment = std::move(again);
  if (!e.targets.empty()) return;
  TryPartialAdmission(snap, preemptor, e);
  if (e.assignment.RepresentativeMode() == FlavorAssignmentMode::kFit) e.assignment.deferred = true;
}

// quotaResourcesToReserve for a preemptor without candidates.
FrUsage ReservationForUnreclaimable(const Snapshot& snap, const Entry& e) {
  FrUsage out;
  for (const auto& [fr, u] : e.assignment.usage) {
    Amount r;
    Amount used = snap.Usage(e.cq, fr);
    if (e.assignment.borrowing > 0) {
      Amount bl = snap.BorrowingLimit(e.cq, fr);
      r = bl == kUnlimited ? u : std::min(u, SubAmount(AddAmount(snap.Nominal(e.cq, fr), bl), used));
    } else {
      r = std::max<Amount>(0, std::min(u, SubAmount(snap.Nominal(e.cq, fr), used)));
    }
    if (r > 0) out.push_back({fr, r});
  }
  return out;
}

// The part of a waiting preemptor's usage its evicting victims do not free.
FrUsage ReservationBeyondVictims(Snapshot& snap, const Entry& e) {
  std::vector<Amount> before;
  for (const auto& [fr, u] : e.assignment.usage) before.push_back(snap.Available(e.cq, fr));
  std::vector<Amount> after;
  {
    UndoGuard gone = snap.SimulateWorkloadRemoval(e.victims);
    for (const auto& [fr, u] : e.assignment.usage) after.push_back(snap.Available(e.cq, fr));
  }
  FrUsage out;
  for (size_t i = 0; i < e.assignment.usage.size(); ++i) {
    Amount freed = SubAmount(after[i], before[i]);
    Amount extra = std::max<Amount>(0, SubAmount(e.assignment.usage[i].second, freed));
    if (extra > 0) out.push_back({e.assignment.usage[i].first, extra});
  }
  return out;
}

std::vector<FlavorResourceAmount> ToAmounts(const Snapshot& snap, const FrUsage& usage) {
  std::vector<FlavorResourceAmount> out;
  for (const auto& [fr, v] : usage) out.push_back({snap.FlavorName(snap.FrFlavor(fr)), snap.FrResource(fr), v});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.flavor != b.flavor ? a.flavor < b.flavor : a.resource < b.resource;
  });
  return out;
}

// fairSharingIterator's tournament (Kueue's pkg/scheduler/
// fair_sharing_iterator.go) over the entries not yet processed in the tree
// of `root`: each entry's share is computed with its usage added, for its
// ClusterQueue and every ancestor below the root; at each cohort the child
// whose nominee has the lower share at that level wins. Returns the index of
// the winning entry.
size_t Tournament(Snapshot& snap, const std::vector<Entry>& entries, const std::vector<bool>& done, int root,
                  const CycleOptions& options) {
  std::map<int, size_t> by_cq;                                  // ClusterQueue -> entry
  std::map<std::pair<int, size_t>, DominantResourceShare> drs;  // (cohort, entry) -> share of its child
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    if (done[i] || snap.Root(e.cq) != root) continue;
    by_cq[e.cq] = i;
    UndoGuard added = snap.SimulateUsageAddition(e.cq, e.assignment.usage);
    DominantResourceShare share = ComputeDRS(snap, e.cq);
    for (int n = snap.Parent(e.cq); n >= 0; n = snap.Parent(n)) {
      drs[{n, i}] = share;
      share = ComputeDRS(snap, n);
    }
  }
  auto less = [&](size_t a, size_t b, int cohort) {
    const Entry& x = entries[a];
    const Entry& y = entries[b];
    const DominantResourceShare& dx = drs[{cohort, a}];
    const DominantResourceShare& dy = drs[{cohort, b}];
    if (options.fair_sharing.prioritize_non_borrowing) {
      bool bx = dx.IsBorrowingOn(x.assignment.usage), by = dy.IsBorrowingOn(y.assignment.usage);
      if (bx != by) return !bx;
    }
    if (int c = CompareDRS(dx, dy); c != 0) return c < 0;
    if (options.priority_sorting_within_cohort && x.wl->priority != y.wl->priority) {
      return x.wl->priority > y.wl->priority;
    }
    if (x.wl->queue_order_timestamp != y.wl->queue_order_timestamp) {
      return x.wl->queue_order_timestamp < y.wl->queue_order_timestamp;
    }
    return x.wl->uid < y.wl->uid;
  };
  std::function<std::optional<size_t>(int)> run = [&](int cohort) -> std::optional<size_t> {
    std::vector<size_t> nominees;
    for (int c : snap.ChildCohorts(cohort)) {
      if (auto n = run(c)) nominees.push_back(*n);
    }
    for (int q : snap.ChildClusterQueues(cohort)) {
      auto it = by_cq.find(q);
      if (it != by_cq.end()) nominees.push_back(it->second);
    }
    if (nominees.empty()) return std::nullopt;
    size_t best = nominees[0];
    for (size_t k = 1; k < nominees.size(); ++k) {
      if (less(nominees[k], best, cohort)) best = nominees[k];
    }
    return best;
  };
  return *run(root);
}

}  // namespace

CycleResult Schedule(Snapshot& snap, const std::vector<Workload>& heads, Time now, const CycleOptions& options) {
  Preemptor preemptor(options.fair_sharing);
  CycleResult out;
  std::vector<Entry> entries;
  std::vector<EntryResult> inadmissible;
  entries.reserve(heads.size());

  // Step 2: nominate.
  for (const Workload& wl : heads) {
    EntryResult r;
    r.uid = wl.uid;
    r.key = wl.Key();
    r.cluster_queue = wl.cluster_queue;
    if (wl.finished || !wl.active || wl.state != AdmissionState::kPending || snap.FindWorkload(wl.uid) != nullptr) {
      r.outcome = EntryOutcome::kDropped;
      inadmissible.push_back(std::move(r));
      continue;
    }
    int cq = snap.ClusterQueueIndex(wl.cluster_queue);
    if (cq < 0) {
      r.reason = std::string(kReasonMisconfigured);
      r.message = "ClusterQueue " + wl.cluster_queue + " not found";
    } else if (!snap.Active(cq)) {
      r.reason = std::string(kReasonSuspended);
      r.message = "ClusterQueue " + wl.cluster_queue + " is inactive";
    } else if (!wl.namespace_matches) {
      r.reason = std::string(kReasonMisconfigured);
      r.message = "workload namespace doesn't match ClusterQueue selector";
      r.requeue_reason = RequeueReason::kNamespaceMismatch;
    } else {
      Entry e;
      e.wl = &wl;
      e.cq = cq;
      e.result = std::move(r);
      Nominate(snap, preemptor, e);
      entries.push_back(std::move(e));
      continue;
    }
    inadmissible.push_back(std::move(r));
  }

  // Step 3: order.
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    return EntryBefore({a.assignment.borrowing, a.wl->priority, a.wl->queue_order_timestamp, a.wl->uid},
                       {b.assignment.borrowing, b.wl->priority, b.wl->queue_order_timestamp, b.wl->uid},
                       options.priority_sorting_within_cohort);
  });

  // Step 4: process.
  std::set<const WorkloadInfo*> cycle_victims;
  std::vector<UndoGuard> reservations;  // cycle-only usage, undone at the end
  std::vector<std::pair<std::string, std::string>> evictions;  // victim uid, preemptor uid
  auto process = [&](Entry& e) {
    EntryResult& r = e.result;
    r.borrowing = e.assignment.borrowing;
    const FlavorAssignmentMode mode = e.assignment.RepresentativeMode();
    if (mode == FlavorAssignmentMode::kNoFit) {
      r.reason = e.assignment.no_fit_reason;
      r.message = e.message;
      r.requeue_reason = RequeueReason::kNoFit;
      return;
    }
    if (mode == FlavorAssignmentMode::kPreempt && e.targets.empty()) {
      r.reason = std::string(kReasonWaitingForQuota);
      r.message = e.message;
      r.requeue_reason = RequeueReason::kPreemptionNoCandidates;
      if (snap.Spec(e.cq).preemption.reclaim_within_cohort != PreemptionPolicy::kAny) {
        reservations.push_back(snap.SimulateUsageAddition(e.cq, ReservationForUnreclaimable(snap, e)));
      }
      return;
    }
    if (mode == FlavorAssignmentMode::kDeferredFit) {
      reservations.push_back(snap.SimulateUsageAddition(e.cq, ReservationBeyondVictims(snap, e)));
      r.outcome = EntryOutcome::kPreempting;
      r.reason = std::string(kReasonWaitingForPreemptedWorkloads);
      r.message = PendingPreemptionMessage(e.message, e.victims.size());
      r.pending_preemptions = static_cast<int>(e.victims.size());
      r.requeue_reason = RequeueReason::kPendingPreemption;
      return;
    }
    bool overlap = false;
    for (const auto& t : e.targets) overlap = overlap || cycle_victims.count(t.workload) > 0;
    if (overlap) {
      r.reason = std::string(kReasonWaitingForQuota);
      r.message = "Workload has overlapping preemption targets with another workload";
      r.requeue_reason = RequeueReason::kFailedAfterNomination;
      ++out.preemption_skips[e.wl->cluster_queue];
      return;
    }
    bool fits;
    {
      std::vector<const WorkloadInfo*> gone(cycle_victims.begin(), cycle_victims.end());
      for (const auto& t : e.targets) gone.push_back(t.workload);
      gone.insert(gone.end(), e.victims.begin(), e.victims.end());
      UndoGuard g = snap.SimulateWorkloadRemoval(gone);
      fits = snap.Fits(e.cq, e.assignment.usage);
    }
    if (!fits) {
      r.reason = std::string(kReasonWaitingForQuota);
      r.message = "Workload no longer fits after processing another workload";
      r.requeue_reason = RequeueReason::kFailedAfterNomination;
      if (mode == FlavorAssignmentMode::kPreempt) ++out.preemption_skips[e.wl->cluster_queue];
      return;
    }
    if (mode == FlavorAssignmentMode::kPreempt) {
      reservations.push_back(snap.SimulateUsageAddition(e.cq, e.assignment.usage));
      for (const auto& t : e.targets) {
        cycle_victims.insert(t.workload);
        r.preempted.push_back({t.workload->workload.uid, t.workload->workload.Key(),
                               t.workload->workload.cluster_queue, t.reason,
                               PreemptionMessage(snap, *e.wl, e.cq, t)});
        evictions.push_back({t.workload->workload.uid, e.wl->uid});
      }
      r.outcome = EntryOutcome::kPreempting;
      r.reason = std::string(kReasonWaitingForPreemptedWorkloads);
      r.pending_preemptions = static_cast<int>(e.targets.size() + e.victims.size());
      r.message = PendingPreemptionMessage(e.message, static_cast<size_t>(r.pending_preemptions));
      r.requeue_reason = RequeueReason::kPendingPreemption;
      return;
    }
    // Fit: assume.
    Workload assumed = *e.wl;
    assumed.state = AdmissionState::kAdmitted;
    assumed.admission = e.assignment.ToAdmission(snap, e.wl->cluster_queue);
    assumed.quota_reserved_time = now;
    assumed.evicted_for.clear();
    BERTH_CHECK_OK(snap.AddWorkload(assumed));
    r.outcome = EntryOutcome::kAdmitted;
    r.reason = std::string(kReasonQuotaReserved);
    r.message = "Quota reserved in ClusterQueue " + e.wl->cluster_queue;
    r.admission = assumed.admission;
    r.usage = ToAmounts(snap, e.assignment.usage);
  };
  std::vector<size_t> order;  // processing order
  if (!options.fair_sharing.enable) {
    for (size_t i = 0; i < entries.size(); ++i) order.push_back(i);
    for (size_t i : order) process(entries[i]);
  } else {
    // The first entry left in classical order names the tree; a tournament
    // over that tree's entries picks the one processed next.
    std::vector<bool> done(entries.size(), false);
    for (size_t first = 0; first < entries.size();) {
      size_t pick = first;
      if (snap.HasParent(entries[first].cq))
        pick = Tournament(snap, entries, done, snap.Root(entries[first].cq), options);
      done[pick] = true;
      order.push_back(pick);
      process(entries[pick]);
      while (first < entries.size() && done[first]) ++first;
    }
  }
  while (!reservations.empty()) reservations.pop_back();
  for (const auto& [victim, preemptor_uid] : evictions) snap.SetEvicting(victim, preemptor_uid);

  for (size_t i : order) out.entries.push_back(std::move(entries[i].result));
  for (EntryResult& r : inadmissible) out.entries.push_back(std::move(r));
  for (size_t i = 0; i < out.entries.size(); ++i) out.by_uid.emplace(out.entries[i].uid, i);
  return out;
}

}  // namespace berth::admission
