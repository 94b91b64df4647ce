#include "admission/flavor_assigner.h"

#include <algorithm>
#include <climits>
#include <set>

#include "scheduling/node_selector.h"
#include "scheduling/taint.h"
#include "scheduling/toleration.h"

namespace berth::admission {

std::string_view FlavorAssignmentModeName(FlavorAssignmentMode m) {
  switch (m) {
    case FlavorAssignmentMode::kNoFit: return "NoFit";
    case FlavorAssignmentMode::kPreempt: return "Preempt";
    case FlavorAssignmentMode::kDeferredFit: return "DeferredFit";
    case FlavorAssignmentMode::kFit: return "Fit";
  }
  return "Unknown";
}

FlavorAssignmentMode PodSetAssignmentResult::Mode() const {
  if (reasons.empty()) return FlavorAssignmentMode::kFit;
  if (flavors.empty()) return FlavorAssignmentMode::kNoFit;
  FlavorAssignmentMode mode = FlavorAssignmentMode::kFit;
  for (const auto& f : flavors) mode = std::min(mode, f.mode);
  return mode;
}

FlavorAssignmentMode Assignment::RepresentativeMode() const {
  if (pod_sets.empty()) return FlavorAssignmentMode::kNoFit;
  FlavorAssignmentMode mode = FlavorAssignmentMode::kFit;
  for (const auto& ps : pod_sets) mode = std::min(mode, ps.Mode());
  if (deferred && mode == FlavorAssignmentMode::kFit) return FlavorAssignmentMode::kDeferredFit;
  return mode;
}

std::string Assignment::Message() const {
  std::string out;
  for (const auto& ps : pod_sets) {
    if (ps.reasons.empty()) continue;
    std::vector<std::string> reasons = ps.reasons;
    std::sort(reasons.begin(), reasons.end());
    if (!out.empty()) out += "; ";
    out += "couldn't assign flavors to pod set " + ps.name + ": ";
    for (size_t i = 0; i < reasons.size(); ++i) out += (i ? ", " : "") + reasons[i];
  }
  return out;
}

Admission Assignment::ToAdmission(const Snapshot& snap, const std::string& cluster_queue) const {
  Admission a;
  a.cluster_queue = cluster_queue;
  for (const auto& ps : pod_sets) {
    PodSetAssignment out;
    out.name = ps.name;
    out.count = ps.count;
    for (const auto& f : ps.flavors) {
      out.flavors.push_back({f.resource, snap.FlavorName(f.flavor)});
      out.resource_usage.Set(f.resource, ps.requests.Get(f.resource));
    }
    a.pod_sets.push_back(std::move(out));
  }
  return a;
}

std::vector<int> Assignment::FrsNeedingPreemption(const Snapshot& snap) const {
  std::set<int> frs;
  for (const auto& ps : pod_sets) {
    for (const auto& f : ps.flavors) {
      if (f.mode == FlavorAssignmentMode::kPreempt) {
        int fr = snap.FindFr(f.flavor, f.resource);
        if (fr >= 0) frs.insert(fr);
      }
    }
  }
  return {frs.begin(), frs.end()};
}

namespace {

// Finer-grained mode used while scanning flavors (Kueue granularMode).
enum class PMode { kNoFit = 0, kNoCandidates = 1, kPreempt = 2, kReclaim = 3, kFit = 4 };
struct GranularMode {
  PMode pmode = PMode::kNoFit;
  int borrow = INT_MAX;
};
constexpr GranularMode kWorst{PMode::kNoFit, INT_MAX};
constexpr GranularMode kBest{PMode::kFit, 0};

FlavorAssignmentMode ToMode(PMode m) {
  switch (m) {
    case PMode::kNoFit: return FlavorAssignmentMode::kNoFit;
    case PMode::kFit: return FlavorAssignmentMode::kFit;
    default: return FlavorAssignmentMode::kPreempt;
  }
}

// Kueue isPreferred(a, b): is a better than b?
bool IsPreferred(const GranularMode& a, const GranularMode& b, const FlavorFungibility& ff) {
  if (a.pmode == PMode::kNoFit) return false;
  if (b.pmode == PMode::kNoFit) return true;
  bool a_none = a.pmode == PMode::kNoCandidates, b_none = b.pmode == PMode::kNoCandidates;
  if (a_none != b_none) return !a_none;
  if (ff.preference == FungibilityPreference::kPreemptionOverBorrowing) {
    if (a.borrow != b.borrow) return a.borrow < b.borrow;
    return a.pmode > b.pmode;
  }
  if (a.pmode != b.pmode) return a.pmode > b.pmode;
  return a.borrow < b.borrow;
}

bool ShouldTryNextFlavor(const GranularMode& m, const FlavorFungibility& ff) {
  if (m.pmode == PMode::kNoFit || m.pmode == PMode::kNoCandidates) return true;
  bool preempt = m.pmode == PMode::kPreempt || m.pmode == PMode::kReclaim;
  if (preempt && ff.when_can_preempt == FungibilityPolicy::kTryNextFlavor) return true;
  if (m.borrow != 0 && ff.when_can_borrow == FungibilityPolicy::kTryNextFlavor) return true;
  return false;
}

int ReasonSeverity(std::string_view r) {
  if (r == kReasonNoMatchingFlavor) return 4;
  if (r == kReasonExceedsMaxQuota) return 3;
  if (r == kReasonWaitingForQuota) return 2;
  return 0;
}
// By value: callers pass temporaries (a reference to one dangled, and the NoFit reason of a
// resource the ClusterQueue does not cover came out empty).
std::string MostSevere(const std::string& a, const std::string& b) {
  return ReasonSeverity(a) >= ReasonSeverity(b) ? a : b;
}

// One flavor tried for a podSet (FlavorAssignmentAttempt).
struct Attempt {
  int flavor;
  PMode mode;
  std::string no_fit_reason;
};

class Assigner {
 public:
  Assigner(Snapshot& snap, int cq, const Workload& wl, PreemptionOracle* oracle, const std::vector<int32_t>* counts)
      : snap_(snap), cq_(cq), wl_(wl), oracle_(oracle), counts_(counts), spec_(snap.Spec(cq)) {}

  Assignment Run() {
    Assignment a;
    std::map<int, Amount> assigned;  // fr -> usage of podSets processed so far
    const ResourceId pods = snap_.names().Find(ResourceNames::kPods);
    const bool counts_pods = pods >= 0 && snap_.GroupForResource(cq_, pods) >= 0;
    std::string overall_reason;

    for (size_t i = 0; i < wl_.pod_sets.size(); ++i) {
      const PodSet& ps = wl_.pod_sets[i];
      PodSetAssignmentResult psa;
      psa.name = ps.name;
      if (counts_ != nullptr && i < counts_->size()) {
        // A reduced count (PodSetResources.ScaledTo): per-pod requests × the count.
        psa.count = std::max<int32_t>(0, (*counts_)[i]);
        psa.requests = ps.requests.Scaled(psa.count);
      } else {
        psa.count = std::max<int32_t>(0, ps.count - ps.reclaimable);
        psa.requests = PodSetTotal(ps, ps.count);
      }
      if (counts_pods) psa.requests.Set(pods, static_cast<Amount>(psa.count) * 1000);

      std::vector<ResourceId> resources;
      for (const auto& [r, v] : psa.requests.items()) resources.push_back(r);
      std::sort(resources.begin(), resources.end(), [&](ResourceId x, ResourceId y) {
        return snap_.names().Name(x) < snap_.names().Name(y);
      });

      std::map<ResourceId, ResourceAssignmentResult> flavors;
      std::vector<Attempt> attempts;
      bool failed = false;
      for (ResourceId r : resources) {
        if (snap_.GroupForResource(cq_, r) < 0) {
          if (psa.requests.Get(r) == 0) continue;
          psa.reasons = {"resource " + snap_.names().Name(r) + " unavailable in ClusterQueue"};
          flavors.clear();
          failed = true;
          break;
        }
        if (flavors.count(r)) continue;
        std::vector<std::string> reasons;
        bool fit_found = FindFlavor(ps, psa.requests, r, assigned, &flavors, &reasons, &attempts);
        if (!fit_found) {
          // No flavor at all for this group: the podSet fails with the
          // reasons gathered so far (Kueue drops partial group flavors).
          psa.reasons.insert(psa.reasons.end(), reasons.begin(), reasons.end());
          flavors.clear();
          failed = true;
          break;
        }
        psa.reasons.insert(psa.reasons.end(), reasons.begin(), reasons.end());
      }
      for (const auto& [r, f] : flavors) psa.flavors.push_back(f);
      // Usage of this podSet (Assignment.append).
      for (const auto& f : psa.flavors) {
        a.borrowing = std::max(a.borrowing, f.borrow);
        int fr = snap_.FindFr(f.flavor, f.resource);
        Amount v = psa.requests.Get(f.resource);
        assigned[fr] = AddAmount(assigned[fr], v);
      }
      bool nofit = failed || psa.Mode() == FlavorAssignmentMode::kNoFit;
      if (nofit) overall_reason = MostSevere(overall_reason, PodSetNoFitReason(attempts));
      a.pod_sets.push_back(std::move(psa));
      if (failed) break;
    }
    for (const auto& [fr, v] : assigned) {
      if (v != 0) a.usage.push_back({fr, v});
    }
    if (a.RepresentativeMode() == FlavorAssignmentMode::kNoFit) a.no_fit_reason = overall_reason;
    return a;
  }

 private:
  // resolveNoFitReason for one podSet: per resource group the least severe
  // NoFit attempt; then the most severe over groups.
  std::string PodSetNoFitReason(const std::vector<Attempt>& attempts) const {
    if (attempts.empty()) return std::string(kReasonNoMatchingFlavor);
    std::map<int, std::string> group_min;
    for (size_t i = 0; i < attempts.size(); ++i) {
      const Attempt& att = attempts[i];
      if (att.mode != PMode::kNoFit) continue;
      std::vector<int> groups;
      const auto& rgs = snap_.Groups(cq_);
      for (size_t g = 0; g < rgs.size(); ++g) {
        for (const auto& f : rgs[g].flavors) {
          if (f.flavor == att.flavor) {
            groups.push_back(static_cast<int>(g));
            break;
          }
        }
      }
      if (groups.empty()) groups.push_back(-1 - static_cast<int>(i));
      for (int g : groups) {
        auto it = group_min.find(g);
        if (it == group_min.end() || ReasonSeverity(att.no_fit_reason) < ReasonSeverity(it->second)) {
          group_min[g] = att.no_fit_reason;
        }
      }
    }
    std::string out;
    for (const auto& [g, r] : group_min) out = MostSevere(out, r);
    // No flavor was tried and refused (a resource the ClusterQueue does not cover, after
    // others fitted): no matching flavor. A NoFit podSet always has a reason, which the
    // QuotaReserved condition requires (an empty one was refused at every cycle).
    return out.empty() ? std::string(kReasonNoMatchingFlavor) : out;
  }

  // Checks nodeLabels/taints of the flavor against the podSet (step 3).
  // Returns an empty string when the flavor is usable.
  std::string CheckFlavor(int flavor, const PodSet& ps) const {
    const std::string& name = snap_.FlavorName(flavor);
    const ResourceFlavor* rf = snap_.Flavor(flavor);
    if (rf == nullptr) return "flavor " + name + " not found";
    for (const scheduling::Taint& t : rf->node_taints) {
      if (t.effect != scheduling::TaintEffect::kNoSchedule && t.effect != scheduling::TaintEffect::kNoExecute) {
        continue;
      }
      if (!scheduling::TolerationsTolerate(ps.tolerations, t) && !scheduling::TolerationsTolerate(rf->tolerations, t)) {
        return "untolerated taint " + t.String() + " in flavor " + name;
      }
    }
    // nodeSelector restricted to the flavor's label keys.
    for (const auto& [k, v] : ps.node_selector) {
      if (!rf->node_labels.count(k)) continue;
      if (rf->node_labels.at(k) != v) return "flavor " + name + " doesn't match node affinity";
    }
    // Required affinity: expressions restricted to the flavor's keys; a term
    // left empty drops the whole affinity (Kueue flavorSelector). The rest is
    // matched against a node that has only the flavor's labels and no name.
    std::vector<scheduling::NodeSelectorTerm> terms;
    for (const auto& t : ps.required_affinity_terms) {
      scheduling::NodeSelectorTerm copy;
      for (const auto& e : t.match_expressions) {
        if (rf->node_labels.count(e.key)) copy.match_expressions.push_back(e);
      }
      if (copy.match_expressions.empty()) {
        terms.clear();
        break;
      }
      terms.push_back(std::move(copy));
    }
    if (!terms.empty() && !scheduling::MatchesNodeSelectorTerms(terms, rf->node_labels, /*node_name=*/"")) {
      return "flavor " + name + " doesn't match node affinity";
    }
    return "";
  }

  // fitsResourceQuota (step 4).
  GranularMode FitsResourceQuota(int fr, Amount assumed, Amount request, std::string* reason,
                                 std::string* no_fit_reason) {
    *no_fit_reason = std::string(kReasonWaitingForQuota);
    Amount available = snap_.Available(cq_, fr);
    Amount max_capacity = snap_.PotentialAvailable(cq_, fr);
    Amount val = AddAmount(assumed, request);
    const std::string& rname = snap_.names().Name(snap_.FrResource(fr));
    const std::string& fname = snap_.FlavorName(snap_.FrFlavor(fr));
    if (val > max_capacity) {
      *reason = "insufficient quota for " + rname + " in flavor " + fname + ", previously considered podsets requests (" +
                FormatAmount(rname, assumed) + ") + current podset request (" + FormatAmount(rname, request) +
                ") > maximum capacity (" + FormatAmount(rname, max_capacity) + ")";
      *no_fit_reason = std::string(kReasonExceedsMaxQuota);
      return {PMode::kNoFit, 0};
    }
    auto [borrow, may_reclaim] = snap_.BorrowingLevel(cq_, fr, val);
    if (val <= available) return {PMode::kFit, borrow};
    *reason = "insufficient unused quota for " + rname + " in flavor " + fname + ", " +
              FormatAmount(rname, SubAmount(val, available)) + " more needed";
    const auto& bwc = spec_.preemption.borrow_within_cohort;
    bool can_preempt_while_borrowing = bwc.policy != BorrowWithinCohort::Policy::kNever ||
                                       (oracle_ != nullptr && oracle_->FairSharingEnabled() &&
                                        spec_.preemption.reclaim_within_cohort != PreemptionPolicy::kNever);
    if (snap_.Nominal(cq_, fr) >= val || may_reclaim || can_preempt_while_borrowing) {
      if (oracle_ == nullptr) return {PMode::kNoCandidates, borrow};
      auto [possibility, borrow_after] = oracle_->SimulatePreemption(snap_, cq_, wl_, fr, val);
      no_fit_reason->clear();
      switch (possibility) {
        case PreemptionPossibility::kNoCandidates: return {PMode::kNoCandidates, borrow_after};
        case PreemptionPossibility::kPreempt: return {PMode::kPreempt, borrow_after};
        case PreemptionPossibility::kReclaim: return {PMode::kReclaim, borrow_after};
      }
    }
    return {PMode::kNoFit, borrow};
  }

  // findFlavorForPodSets for the group of `resource` (steps 3–5). Returns
  // false when no flavor can be used at all (NoFit).
  bool FindFlavor(const PodSet& ps, const ResourceList& requests, ResourceId resource,
                  const std::map<int, Amount>& assigned, std::map<ResourceId, ResourceAssignmentResult>* out,
                  std::vector<std::string>* reasons, std::vector<Attempt>* attempts) {
    const ResolvedGroup& group = snap_.Groups(cq_)[static_cast<size_t>(snap_.GroupForResource(cq_, resource))];
    // Requested resources of this group, in name order.
    std::vector<size_t> idx;
    for (size_t i = 0; i < group.covered.size(); ++i) {
      if (requests.Has(group.covered[i])) idx.push_back(i);
    }
    std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
      return snap_.names().Name(group.covered[x]) < snap_.names().Name(group.covered[y]);
    });

    std::vector<std::string> status;
    std::vector<ResourceAssignmentResult> best;
    GranularMode best_mode = kWorst;
    const FlavorFungibility& ff = spec_.flavor_fungibility;
    for (const ResolvedFlavor& flavor : group.flavors) {
      std::string mismatch = CheckFlavor(flavor.flavor, ps);
      if (!mismatch.empty()) {
        status.push_back(mismatch);
        attempts->push_back({flavor.flavor, PMode::kNoFit, std::string(kReasonNoMatchingFlavor)});
        continue;
      }
      std::vector<ResourceAssignmentResult> assignments;
      GranularMode rep = kBest;
      std::string flavor_no_fit;
      for (size_t i : idx) {
        int fr = flavor.frs[i];
        auto it = assigned.find(fr);
        Amount already = it == assigned.end() ? 0 : it->second;
        std::string reason, no_fit;
        GranularMode m = FitsResourceQuota(fr, already, requests.Get(group.covered[i]), &reason, &no_fit);
        if (!reason.empty()) {
          status.push_back(reason);
          flavor_no_fit = MostSevere(flavor_no_fit, no_fit);
        }
        if (IsPreferred(rep, m, ff)) rep = m;
        if (rep.pmode == PMode::kNoFit) continue;
        assignments.push_back({group.covered[i], flavor.flavor, ToMode(m.pmode), m.borrow});
      }
      attempts->push_back({flavor.flavor, rep.pmode, rep.pmode == PMode::kNoFit ? flavor_no_fit : ""});
      if (!ShouldTryNextFlavor(rep, ff)) {
        best = std::move(assignments);
        best_mode = rep;
        break;
      }
      if (IsPreferred(rep, best_mode, ff)) {
        best = std::move(assignments);
        best_mode = rep;
      }
    }
    if (best_mode.pmode == PMode::kNoFit) {
      *reasons = std::move(status);
      return false;
    }
    for (auto& r : best) (*out)[r.resource] = r;
    if (best_mode.pmode != PMode::kFit) *reasons = std::move(status);
    return true;
  }

  Snapshot& snap_;
  int cq_;
  const Workload& wl_;
  PreemptionOracle* oracle_;
  const std::vector<int32_t>* counts_;
  const ClusterQueue& spec_;
};

}  // namespace

Assignment AssignFlavors(Snapshot& snap, int cq, const Workload& wl, PreemptionOracle* oracle,
                         const std::vector<int32_t>* counts) {
  return Assigner(snap, cq, wl, oracle, counts).Run();
}

}  // namespace berth::admission
