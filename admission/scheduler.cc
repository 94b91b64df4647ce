#include "admission/scheduler.h"

#include <algorithm>
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
    return;
  }
  // berth: re-evaluate with the victims still evicting for it counted as gone.
  UndoGuard gone = snap.SimulateWorkloadRemoval(e.victims);
  Assignment again = AssignFlavors(snap, e.cq, *e.wl, &preemptor);
  if (again.RepresentativeMode() == FlavorAssignmentMode::kFit) {
    again.deferred = true;
  } else {
    e.message = again.Message();
    if (again.RepresentativeMode() == FlavorAssignmentMode::kPreempt) {
      e.targets = preemptor.GetTargets(snap, e.cq, *e.wl, again);
    }
  }
  e.assignment = std::move(again);
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

}  // namespace

CycleResult Schedule(Snapshot& snap, const std::vector<Workload>& heads, Time now, const CycleOptions& options) {
  Preemptor preemptor;
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
  for (Entry& e : entries) {
    EntryResult& r = e.result;
    r.borrowing = e.assignment.borrowing;
    const FlavorAssignmentMode mode = e.assignment.RepresentativeMode();
    if (mode == FlavorAssignmentMode::kNoFit) {
      r.reason = e.assignment.no_fit_reason;
      r.message = e.message;
      r.requeue_reason = RequeueReason::kNoFit;
      continue;
    }
    if (mode == FlavorAssignmentMode::kPreempt && e.targets.empty()) {
      r.reason = std::string(kReasonWaitingForQuota);
      r.message = e.message;
      r.requeue_reason = RequeueReason::kPreemptionNoCandidates;
      if (snap.Spec(e.cq).preemption.reclaim_within_cohort != PreemptionPolicy::kAny) {
        reservations.push_back(snap.SimulateUsageAddition(e.cq, ReservationForUnreclaimable(snap, e)));
      }
      continue;
    }
    if (mode == FlavorAssignmentMode::kDeferredFit) {
      reservations.push_back(snap.SimulateUsageAddition(e.cq, ReservationBeyondVictims(snap, e)));
      r.outcome = EntryOutcome::kPreempting;
      r.reason = std::string(kReasonWaitingForPreemptedWorkloads);
      r.message = PendingPreemptionMessage(e.message, e.victims.size());
      r.pending_preemptions = static_cast<int>(e.victims.size());
      r.requeue_reason = RequeueReason::kPendingPreemption;
      continue;
    }
    bool overlap = false;
    for (const auto& t : e.targets) overlap = overlap || cycle_victims.count(t.workload) > 0;
    if (overlap) {
      r.reason = std::string(kReasonWaitingForQuota);
      r.message = "Workload has overlapping preemption targets with another workload";
      r.requeue_reason = RequeueReason::kFailedAfterNomination;
      ++out.preemption_skips[e.wl->cluster_queue];
      continue;
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
      continue;
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
      continue;
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
  }
  while (!reservations.empty()) reservations.pop_back();
  for (const auto& [victim, preemptor_uid] : evictions) snap.SetEvicting(victim, preemptor_uid);

  for (Entry& e : entries) out.entries.push_back(std::move(e.result));
  for (EntryResult& r : inadmissible) out.entries.push_back(std::move(r));
  for (size_t i = 0; i < out.entries.size(); ++i) out.by_uid.emplace(out.entries[i].uid, i);
  return out;
}

}  // namespace berth::admission
