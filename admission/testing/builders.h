// Fluent test builders for admission tests (as Kueue's pkg/util/testing
// MakeWorkload(...).Request(...).Obj()). Test-only: production code never
// includes this header.
//
// Quantities are written as Kubernetes text ("1", "500m", "8Gi") and parsed
// with Quantity::MustParse; resource names are interned in the ResourceNames
// table passed to each builder.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admission/model.h"
#include "admission/queue_manager.h"
#include "admission/scheduler.h"
#include "admission/snapshot.h"
#include "core/quantity.h"

namespace berth::admission::testing {

inline Amount Q(const std::string& text) { return Quantity::MustParse(text).milli(); }

// A fixed instant, plus seconds.
inline Time T(double seconds = 0) {
  return Time(std::chrono::seconds(1767225600)) +
         std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

class FlavorBuilder {
 public:
  explicit FlavorBuilder(std::string name) { f_.name = std::move(name); }
  FlavorBuilder& Label(std::string k, std::string v) {
    f_.node_labels[std::move(k)] = std::move(v);
    return *this;
  }
  FlavorBuilder& Taint(std::string k, std::string v,
                       scheduling::TaintEffect e = scheduling::TaintEffect::kNoSchedule) {
    f_.node_taints.push_back({std::move(k), std::move(v), e});
    return *this;
  }
  FlavorBuilder& Toleration(std::string k, scheduling::Toleration::Operator op, std::string v = "",
                            std::optional<scheduling::TaintEffect> e = std::nullopt) {
    f_.tolerations.push_back({std::move(k), op, std::move(v), e});
    return *this;
  }
  ResourceFlavor Obj() const { return f_; }

 private:
  ResourceFlavor f_;
};

// One flavor of a resource group: FlavorQuotasBuilder("on-demand").Resource("cpu", "50", "10").
class FlavorQuotasBuilder {
 public:
  explicit FlavorQuotasBuilder(std::string flavor) : flavor_(std::move(flavor)) {}
  FlavorQuotasBuilder& Resource(std::string name, const std::string& nominal,
                                std::optional<std::string> borrowing_limit = std::nullopt,
                                std::optional<std::string> lending_limit = std::nullopt) {
    ResourceQuota q;
    q.nominal = Q(nominal);
    if (borrowing_limit) q.borrowing_limit = Q(*borrowing_limit);
    if (lending_limit) q.lending_limit = Q(*lending_limit);
    resources_.push_back({std::move(name), q});
    return *this;
  }
  std::string flavor_;
  std::vector<std::pair<std::string, ResourceQuota>> resources_;
};

inline ResourceGroup MakeGroup(ResourceNames& names, std::vector<FlavorQuotasBuilder> flavors) {
  ResourceGroup g;
  if (!flavors.empty()) {
    for (const auto& [r, q] : flavors[0].resources_) g.covered_resources.push_back(names.Intern(r));
  }
  for (const auto& f : flavors) {
    FlavorQuotas fq;
    fq.flavor = f.flavor_;
    for (const auto& [r, q] : f.resources_) fq.resources.push_back(q);
    g.flavors.push_back(std::move(fq));
  }
  return g;
}

class ClusterQueueBuilder {
 public:
  ClusterQueueBuilder(ResourceNames& names, std::string name) : names_(names) { cq_.name = std::move(name); }
  ClusterQueueBuilder& Cohort(std::string c) {
    cq_.cohort = std::move(c);
    return *this;
  }
  ClusterQueueBuilder& StrictFIFO() {
    cq_.queueing_strategy = QueueingStrategy::kStrictFIFO;
    return *this;
  }
  ClusterQueueBuilder& Group(std::vector<FlavorQuotasBuilder> flavors) {
    cq_.resource_groups.push_back(MakeGroup(names_, std::move(flavors)));
    return *this;
  }
  ClusterQueueBuilder& WithinClusterQueue(PreemptionPolicy p) {
    cq_.preemption.within_cluster_queue = p;
    return *this;
  }
  ClusterQueueBuilder& ReclaimWithinCohort(PreemptionPolicy p) {
    cq_.preemption.reclaim_within_cohort = p;
    return *this;
  }
  ClusterQueueBuilder& BorrowWithinCohort(BorrowWithinCohort::Policy p, std::optional<int32_t> threshold = {}) {
    cq_.preemption.borrow_within_cohort = {p, threshold};
    return *this;
  }
  ClusterQueueBuilder& Fungibility(FungibilityPolicy when_can_borrow, FungibilityPolicy when_can_preempt,
                                   FungibilityPreference pref = FungibilityPreference::kUnset) {
    cq_.flavor_fungibility = {when_can_borrow, when_can_preempt, pref};
    return *this;
  }
  ClusterQueueBuilder& Stop(StopPolicy p = StopPolicy::kHold) {
    cq_.stop_policy = p;
    return *this;
  }
  ClusterQueueBuilder& FairWeight(double w) {
    cq_.fair_weight = w;
    return *this;
  }
  ClusterQueue Obj() const { return cq_; }

 private:
  ResourceNames& names_;
  ClusterQueue cq_;
};

class CohortBuilder {
 public:
  CohortBuilder(ResourceNames& names, std::string name) : names_(names) { c_.name = std::move(name); }
  CohortBuilder& Parent(std::string p) {
    c_.parent = std::move(p);
    return *this;
  }
  CohortBuilder& Group(std::vector<FlavorQuotasBuilder> flavors) {
    c_.resource_groups.push_back(MakeGroup(names_, std::move(flavors)));
    return *this;
  }
  CohortBuilder& FairWeight(double w) {
    c_.fair_weight = w;
    return *this;
  }
  Cohort Obj() const { return c_; }

 private:
  ResourceNames& names_;
  Cohort c_;
};

// MakeWorkload: one podSet "main" × 1 by default; Request() applies to the
// last podSet.
class WorkloadBuilder {
 public:
  WorkloadBuilder(ResourceNames& names, std::string name, std::string ns = "default") : names_(names) {
    w_.name = std::move(name);
    w_.namespace_name = std::move(ns);
    w_.uid = w_.namespace_name + "/" + w_.name;
    w_.pod_sets.push_back(PodSet{});
    w_.queue_order_timestamp = T();
  }
  WorkloadBuilder& Queue(std::string cq) {
    w_.cluster_queue = std::move(cq);
    return *this;
  }
  // spec.queueName (and the namespace it is in).
  WorkloadBuilder& LocalQueue(std::string ns, std::string lq) {
    w_.namespace_name = std::move(ns);
    w_.queue_name = std::move(lq);
    return *this;
  }
  WorkloadBuilder& Priority(int32_t p) {
    w_.priority = p;
    return *this;
  }
  WorkloadBuilder& Created(Time t) {
    w_.queue_order_timestamp = t;
    return *this;
  }
  WorkloadBuilder& Uid(std::string uid) {
    w_.uid = std::move(uid);
    return *this;
  }
  // Replaces the podSets with named ones of the given counts.
  WorkloadBuilder& PodSets(std::vector<std::pair<std::string, int32_t>> sets) {
    w_.pod_sets.clear();
    for (auto& [n, c] : sets) {
      PodSet ps;
      ps.name = n;
      ps.count = c;
      w_.pod_sets.push_back(std::move(ps));
    }
    return *this;
  }
  WorkloadBuilder& Count(int32_t c) {
    w_.pod_sets.back().count = c;
    return *this;
  }
  WorkloadBuilder& Request(const std::string& resource, const std::string& amount) {
    w_.pod_sets.back().requests.Set(names_.Intern(resource), Q(amount));
    return *this;
  }
  WorkloadBuilder& MinCount(int32_t n) {
    w_.pod_sets.back().min_count = n;
    return *this;
  }
  WorkloadBuilder& Reclaimable(int32_t n) {
    w_.pod_sets.back().reclaimable = n;
    return *this;
  }
  WorkloadBuilder& NodeSelector(std::string k, std::string v) {
    w_.pod_sets.back().node_selector[std::move(k)] = std::move(v);
    return *this;
  }
  WorkloadBuilder& AffinityTerm(scheduling::NodeSelectorTerm t) {
    w_.pod_sets.back().required_affinity_terms.push_back(std::move(t));
    return *this;
  }
  WorkloadBuilder& Toleration(std::string k, scheduling::Toleration::Operator op, std::string v = "",
                              std::optional<scheduling::TaintEffect> e = std::nullopt) {
    w_.pod_sets.back().tolerations.push_back({std::move(k), op, std::move(v), e});
    return *this;
  }
  WorkloadBuilder& NamespaceMismatch() {
    w_.namespace_matches = false;
    return *this;
  }
  WorkloadBuilder& Inactive() {
    w_.active = false;
    return *this;
  }
  WorkloadBuilder& Finished() {
    w_.finished = true;
    return *this;
  }
  WorkloadBuilder& RequeueAt(Time t) {
    w_.requeue_at = t;
    return *this;
  }
  // Holds quota in `cq`: podSet i's resources on flavors[i] (resource ->
  // flavor); a single map applies to every podSet.
  WorkloadBuilder& Admitted(const std::string& cq, std::vector<std::map<std::string, std::string>> flavors,
                            Time reserved_at = T()) {
    w_.cluster_queue = cq;
    Admission a;
    a.cluster_queue = cq;
    for (size_t i = 0; i < w_.pod_sets.size(); ++i) {
      const PodSet& ps = w_.pod_sets[i];
      const auto& fl = flavors.size() == 1 ? flavors[0] : flavors.at(i);
      PodSetAssignment psa;
      psa.name = ps.name;
      psa.count = ps.count - ps.reclaimable;
      psa.resource_usage = PodSetTotal(ps, ps.count);
      for (const auto& [r, v] : psa.resource_usage.items()) {
        auto it = fl.find(names_.Name(r));
        if (it == fl.end()) it = fl.find("*");
        psa.flavors.push_back({r, it->second});
      }
      a.pod_sets.push_back(std::move(psa));
    }
    w_.admission = std::move(a);
    w_.state = AdmissionState::kAdmitted;
    w_.quota_reserved_time = reserved_at;
    return *this;
  }
  // All resources of all podSets on one flavor.
  WorkloadBuilder& Admitted(const std::string& cq, const std::string& flavor, Time reserved_at = T()) {
    return Admitted(cq, std::vector<std::map<std::string, std::string>>{{{"*", flavor}}}, reserved_at);
  }
  WorkloadBuilder& Evicting(std::string preemptor_uid = "") {
    w_.state = AdmissionState::kEvicting;
    w_.evicted_for = std::move(preemptor_uid);
    return *this;
  }
  Workload Obj() const { return w_; }

 private:
  ResourceNames& names_;
  Workload w_;
};

// Snapshot + queues + cycles, as Kueue's TestSchedule harness: admitted
// workloads go to the snapshot, pending ones to the queues; Cycle() pops the
// heads, runs Schedule and requeues every head not admitted.
class Harness {
 public:
  ResourceNames names;
  std::vector<ResourceFlavor> flavors;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<Cohort> cohorts;
  std::unique_ptr<Snapshot> snapshot;
  QueueManager queues;
  Time now = T(100);
  CycleOptions options;

  // Builds the snapshot and queues; `admitted` hold quota.
  void Build(const std::vector<Workload>& admitted = {}) {
    snapshot = std::make_unique<Snapshot>(names, flavors, cluster_queues, cohorts);
    for (const auto& cq : cluster_queues) {
      int idx = snapshot->ClusterQueueIndex(cq.name);
      int root = snapshot->Root(idx);
      std::string root_name = root == idx ? "" : snapshot->NodeName(root);
      queues.AddOrUpdateClusterQueue(cq.name, cq.queueing_strategy, root_name, snapshot->Active(idx));
    }
    for (const auto& w : admitted) BERTH_CHECK_OK(snapshot->AddWorkload(w));
  }
  void Submit(const Workload& w) { queues.AddOrUpdateWorkload(w, now); }

  CycleResult Cycle() {
    std::vector<Workload> heads = queues.Heads();
    CycleResult r = Schedule(*snapshot, heads, now, options);
    for (const auto& h : heads) {
      const EntryResult* e = r.Find(h.uid);
      if (e == nullptr || e->outcome == EntryOutcome::kAdmitted || e->outcome == EntryOutcome::kDropped) {
        queues.DeleteWorkload(h.uid);  // holds quota now (or never could): its update ends the flight
        continue;
      }
      queues.RequeueWorkload(h, e->requeue_reason, now);
    }
    return r;
  }

  // The workload's flavor per resource in its admission, "cpu=on-demand,...".
  std::string Flavors(const EntryResult& e) const {
    std::string out;
    if (!e.admission) return out;
    for (const auto& ps : e.admission->pod_sets) {
      if (!out.empty()) out += ";";
      std::string one;
      for (const auto& f : ps.flavors) one += (one.empty() ? "" : ",") + names.Name(f.resource) + "=" + f.flavor;
      out += one;
    }
    return out;
  }
  Amount UsageOf(const std::string& cq, const std::string& flavor, const std::string& resource) const {
    int q = snapshot->ClusterQueueIndex(cq);
    int fr = snapshot->FindFr(snapshot->FlavorIndex(flavor), names.Find(resource));
    return fr < 0 ? 0 : snapshot->Usage(q, fr);
  }
};

}  // namespace berth::admission::testing
