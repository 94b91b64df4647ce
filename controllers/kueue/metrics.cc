#include "controllers/kueue/metrics.h"

#include <cmath>

#include "api/conditions.h"
#include "controllers/kueue/decoder.h"

namespace berth::controllers::kueue {

using api::FindCondition;

namespace {

using prometheus::Histogram;

const std::map<std::string, std::string> kReplicaRole = {{"replica_role", "standalone"}};

// Kueue's generateExponentialBuckets(count): 1, then 2.5 doubling (count-1 values).
Histogram::BucketBoundaries KueueBuckets(int count) {
  Histogram::BucketBoundaries b = {1};
  double v = 2.5;
  for (int i = 1; i < count; ++i, v *= 2) b.push_back(v);
  return b;
}

// client_golang's prometheus.DefBuckets (Kueue's admission_attempt_duration_seconds).
const Histogram::BucketBoundaries kDefaultBuckets = {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};

prometheus::Family<prometheus::Counter>& Counter(prometheus::Registry& r, const std::string& name,
                                                 const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Labels(kReplicaRole).Register(r);
}
prometheus::Family<prometheus::Gauge>& Gauge(prometheus::Registry& r, const std::string& name,
                                             const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Labels(kReplicaRole).Register(r);
}
prometheus::Family<prometheus::Histogram>& Hist(prometheus::Registry& r, const std::string& name,
                                                const std::string& help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Labels(kReplicaRole).Register(r);
}

const char* StatusName(ClusterQueueMetricStatus s) {
  switch (s) {
    case ClusterQueueMetricStatus::kPending: return "pending";
    case ClusterQueueMetricStatus::kActive: return "active";
    case ClusterQueueMetricStatus::kTerminating: return "terminating";
  }
  return "pending";
}

constexpr char kEvictionReasonsHelp[] =
    "The label 'reason' is the Evicted condition's reason (Preempted, PodsReadyTimeout, ClusterQueueStopped, "
    "LocalQueueStopped, Deactivated); 'underlying_cause' is empty when the reason is the root cause, else "
    "WaitForStart, WaitForRecovery or RequeuingLimitExceeded.";

std::map<std::string, std::string> LocalQueueLabels(const LocalQueueKey& lq) {
  return {{"name", lq.name}, {"namespace", lq.ns}};
}
std::map<std::string, std::string> LocalQueueLabels(const LocalQueueKey& lq, const std::string& priority_class) {
  return {{"name", lq.name}, {"namespace", lq.ns}, {"priority_class", priority_class}};
}
std::string OwnerOf(const LocalQueueKey& lq) { return lq.ns + "/" + lq.name; }
// The owners of counter and histogram series (KueueMetrics::ForgetSeries).
std::string CqOwner(const std::string& cluster_queue) { return "cq/" + cluster_queue; }
std::string LqOwner(const LocalQueueKey& lq) { return "lq/" + OwnerOf(lq); }
std::string CohortOwner(const std::string& cohort) { return "cohort/" + cohort; }

}  // namespace

LocalQueueKey LocalQueueOf(const api::Object& workload) {
  LocalQueueKey k;
  auto meta = workload.find("metadata");
  if (meta != workload.end() && meta->is_object()) k.ns = meta->value("namespace", "");
  auto spec = workload.find("spec");
  if (spec != workload.end() && spec->is_object()) k.name = spec->value("queueName", "");
  return k;
}

LocalQueueMetrics LocalQueueMetricsFromStatus(const LocalQueueKey& queue, const api::Object& status,
                                              int pending_active, int pending_inadmissible) {
  LocalQueueMetrics m;
  m.queue = queue;
  const api::Object with_status{{"status", status}};  // FindCondition reads obj.status.conditions
  if (const api::Object* c = FindCondition(with_status, "Active")) {
    m.active = c->value("status", "Unknown");
  }
  m.pending_active = pending_active;
  m.pending_inadmissible = pending_inadmissible;
  m.reserving_workloads = status.value("reservingWorkloads", 0);
  m.admitted_workloads = status.value("admittedWorkloads", 0);
  // flavorsReservation and flavorsUsage: [{name, resources: [{name, total}]}], the same flavors.
  const api::Object reservation = status.value("flavorsReservation", api::Object::array());
  const api::Object usage = status.value("flavorsUsage", api::Object::array());
  auto total = [](const api::Object& entries, const std::string& flavor, const std::string& resource) {
    for (const api::Object& f : entries) {
      if (f.value("name", "") != flavor) continue;
      for (const api::Object& r : f.value("resources", api::Object::array())) {
        if (r.value("name", "") == resource) return DecodeAmount(r.value("total", api::Object("0")));
      }
    }
    return admission::Amount{0};
  };
  for (const api::Object& f : reservation) {
    for (const api::Object& r : f.value("resources", api::Object::array())) {
      LocalQueueResourceMetrics rm;
      rm.flavor = f.value("name", "");
      rm.resource = r.value("name", "");
      rm.reservation = DecodeAmount(r.value("total", api::Object("0")));
      rm.usage = total(usage, rm.flavor, rm.resource);
      m.resources.push_back(std::move(rm));
    }
  }
  return m;
}

ClusterQueueMetrics ClusterQueueMetricsFromStatus(const std::string& name, const admission::ClusterQueue& spec,
                                                  const api::Object& status, bool deleting, int finished_workloads,
                                                  const admission::ResourceNames& names) {
  ClusterQueueMetrics m;
  m.name = name;
  m.cohort = spec.cohort;
  const bool active = api::IsConditionTrue(api::Object{{"status", status}}, "Active");
  m.status = deleting ? ClusterQueueMetricStatus::kTerminating
                      : active ? ClusterQueueMetricStatus::kActive : ClusterQueueMetricStatus::kPending;
  m.reserving_workloads = status.value("reservingWorkloads", 0);
  m.admitted_workloads = status.value("admittedWorkloads", 0);
  m.finished_workloads = finished_workloads;
  const api::Object reservation = status.value("flavorsReservation", api::Object::array());
  const api::Object usage = status.value("flavorsUsage", api::Object::array());
  // The total of resource i of the k-th flavor entry (FlavorsStatus writes spec order).
  auto total = [](const api::Object& entries, size_t k, size_t i) -> admission::Amount {
    if (k >= entries.size()) return 0;
    const api::Object resources = entries[k].value("resources", api::Object::array());
    return i < resources.size() ? DecodeAmount(resources[i].value("total", api::Object("0"))) : 0;
  };
  size_t k = 0;
  for (const admission::ResourceGroup& g : spec.resource_groups) {
    for (const admission::FlavorQuotas& f : g.flavors) {
      for (size_t i = 0; i < g.covered_resources.size(); ++i) {
        ClusterQueueResourceMetrics r;
        r.flavor = f.flavor;
        r.resource = names.Name(g.covered_resources[i]);
        if (i < f.resources.size()) {
          r.nominal_quota = f.resources[i].nominal;
          r.borrowing_limit = f.resources[i].borrowing_limit;
          r.lending_limit = f.resources[i].lending_limit;
        }
        r.reservation = total(reservation, k, i);
        r.usage = total(usage, k, i);
        m.resources.push_back(std::move(r));
      }
      ++k;
    }
  }
  return m;
}

CohortMetrics CohortMetricsFromSnapshot(const admission::Snapshot& snapshot, int node, int admitted_workloads) {
  CohortMetrics m;
  m.name = snapshot.NodeName(node);
  m.parent_cohort = snapshot.HasParent(node) ? snapshot.NodeName(snapshot.Parent(node)) : "";
  m.root_cohort = snapshot.NodeName(snapshot.Root(node));
  m.admitted_workloads = admitted_workloads;
  std::vector<int> cqs;
  snapshot.SubtreeClusterQueues(node, &cqs);
  for (int fr = 0; fr < snapshot.fr_count(); ++fr) {
    CohortResourceMetrics r;
    r.subtree_quota = snapshot.SubtreeQuota(node, fr);
    for (int cq : cqs) r.subtree_reservation += snapshot.Usage(cq, fr);
    if (r.subtree_quota <= 0 && r.subtree_reservation <= 0) continue;
    r.flavor = snapshot.FlavorName(snapshot.FrFlavor(fr));
    r.resource = snapshot.names().Name(snapshot.FrResource(fr));
    m.resources.push_back(std::move(r));
  }
  return m;
}

Duration QueuedWaitTime(const api::Object& workload, Time now) {
  Time queued = CreationTime(workload);
  if (const api::Object* c = FindCondition(workload, "Requeued")) {
    Time t{};
    if (ParseRfc3339(c->value("lastTransitionTime", ""), &t)) queued = t;
  }
  return now - queued;
}

std::vector<EvictionIncrease> NewEvictions(const api::Object& before, const api::Object& after) {
  // (reason, underlyingCause) -> count, from status.schedulingStats.evictions.
  auto counts = [](const api::Object& wl) {
    std::map<std::pair<std::string, std::string>, int> out;
    auto st = wl.find("status");
    if (st == wl.end() || !st->is_object()) return out;
    const api::Object stats = st->value("schedulingStats", api::Object::object());
    for (const api::Object& e : stats.value("evictions", api::Object::array())) {
      out[{e.value("reason", ""), e.value("underlyingCause", "")}] += e.value("count", 0);
    }
    return out;
  };
  const auto was = counts(before);
  std::vector<EvictionIncrease> out;
  for (const auto& [key, n] : counts(after)) {
    auto it = was.find(key);
    const int increase = n - (it == was.end() ? 0 : it->second);
    if (increase > 0) out.push_back({key.first, key.second, increase});
  }
  return out;
}

std::string PriorityClassName(const api::Object& workload) {
  auto spec = workload.find("spec");
  if (spec == workload.end() || !spec->is_object()) return "";
  auto ref = spec->find("priorityClassRef");
  return ref != spec->end() && ref->is_object() ? ref->value("name", "") : "";
}

KueueMetrics::KueueMetrics(prometheus::Registry& r)
    : admission_attempts_(Counter(r, "kueue_admission_attempts_total",
                                  "The total number of attempts to admit workloads. Each admission attempt might try "
                                  "to admit more than one workload. 'success' means that at least one workload was "
                                  "admitted, 'inadmissible' that none was.")),
      admission_attempt_duration_(Hist(r, "kueue_admission_attempt_duration_seconds",
                                        "The latency of an admission attempt, by 'result' (success|inadmissible).")),
      quota_reserved_workloads_(Counter(r, "kueue_quota_reserved_workloads_total",
                                        "The total number of quota reserved workloads per 'cluster_queue'")),
      quota_reserved_wait_time_(Hist(r, "kueue_quota_reserved_wait_time_seconds",
                                     "The time between a workload was created or requeued until it got quota "
                                     "reservation, per 'cluster_queue'")),
      admitted_workloads_(Counter(r, "kueue_admitted_workloads_total",
                                  "The total number of admitted workloads per 'cluster_queue'")),
      admission_wait_time_(Hist(r, "kueue_admission_wait_time_seconds",
                                "The time between a workload was created or requeued until admission, per "
                                "'cluster_queue'")),
      admission_checks_wait_time_(Hist(r, "kueue_admission_checks_wait_time_seconds",
                                       "The time from when a workload got the quota reservation until admission, per "
                                       "'cluster_queue'")),
      evicted_workloads_(Counter(r, "kueue_evicted_workloads_total",
                                 std::string("The number of evicted workloads per 'cluster_queue'. ") +
                                     kEvictionReasonsHelp)),
      preempted_workloads_(Counter(r, "kueue_preempted_workloads_total",
                                   "The number of preempted workloads per 'preempting_cluster_queue', by the "
                                   "preemption 'reason' (InClusterQueue, InCohortReclamation, InCohortFairSharing, "
                                   "InCohortReclaimWhileBorrowing)")),
      finished_workloads_total_(Counter(r, "kueue_finished_workloads_total",
                                        "The total number of finished workloads per 'cluster_queue'")),
      execution_time_(Hist(r, "kueue_execution_time_seconds",
                           "The time between a workload was admitted until it finished, per 'cluster_queue'")),
      ready_wait_time_(Hist(r, "kueue_ready_wait_time_seconds",
                            "The time between a workload was created or requeued until ready, per 'cluster_queue'")),
      admitted_until_ready_wait_time_(Hist(r, "kueue_admitted_until_ready_wait_time_seconds",
                                           "The time between a workload was admitted until ready, per "
                                           "'cluster_queue'")),
      cluster_queue_info_(Gauge(r, "kueue_cluster_queue_info",
                                "Reports information about the 'cluster_queue': its 'parent_cohort' and "
                                "'root_cohort' (empty when it has none). The value is always 1.")),
      pending_workloads_(Gauge(r, "kueue_pending_workloads",
                               "The number of pending workloads, per 'cluster_queue' and 'status'. 'active' means "
                               "that the workloads are in the admission queue; 'inadmissible' means there was a "
                               "failed admission attempt for these workloads and they won't be retried until "
                               "cluster conditions, which could make this workload admissible, change")),
      reserving_active_workloads_(Gauge(r, "kueue_reserving_active_workloads",
                                        "The number of Workloads that are reserving quota, per 'cluster_queue'")),
      admitted_active_workloads_(Gauge(r, "kueue_admitted_active_workloads",
                                       "The number of admitted Workloads that are active (unsuspended and not "
                                       "finished), per 'cluster_queue'")),
      finished_workloads_(Gauge(r, "kueue_finished_workloads", "The number of finished workloads per 'cluster_queue'.")),
      cluster_queue_status_(Gauge(r, "kueue_cluster_queue_status",
                                  "Reports 'cluster_queue' with its 'status' (with possible values 'pending', "
                                  "'active' or 'terminating'). For a ClusterQueue, the metric only reports a value of "
                                  "1 for one of the statuses.")),
      resource_reservation_(Gauge(r, "kueue_cluster_queue_resource_reservation",
                                  "Reports the cluster_queue's total resource reservation within all the flavors")),
      resource_usage_(Gauge(r, "kueue_cluster_queue_resource_usage",
                            "Reports the cluster_queue's total resource usage within all the flavors")),
      nominal_quota_(Gauge(r, "kueue_cluster_queue_nominal_quota",
                           "Reports the cluster_queue's resource nominal quota within all the flavors")),
      borrowing_limit_(Gauge(r, "kueue_cluster_queue_borrowing_limit",
                             "Reports the cluster_queue's resource borrowing limit within all the flavors")),
      lending_limit_(Gauge(r, "kueue_cluster_queue_lending_limit",
                           "Reports the cluster_queue's resource lending limit within all the flavors")),
      cluster_queue_weighted_share_(
          Gauge(r, "kueue_cluster_queue_weighted_share",
                "Reports a value that representing the maximum of the ratios of usage above nominal\nquota to the "
                "lendable resources in the cohort, among all the resources provided by\nthe ClusterQueue, and divided "
                "by the weight.\nIf zero, it means that the usage of the ClusterQueue is below the nominal quota.\nIf "
                "the ClusterQueue has a weight of zero and is borrowing, this will return NaN.")),
      cohort_weighted_share_(
          Gauge(r, "kueue_cohort_weighted_share",
                "Reports a value that representing the maximum of the ratios of usage above nominal\nquota to the "
                "lendable resources in the Cohort, among all the resources provided by\nthe Cohort, and divided by "
                "the weight.\nIf zero, it means that the usage of the Cohort is below the nominal quota.\nIf the "
                "Cohort has a weight of zero and is borrowing, this will return NaN.")),
      cohort_info_(Gauge(r, "kueue_cohort_info",
                         "Reports Cohort hierarchy information. The metric has value 1 and can be joined using labels.")),
      cohort_subtree_quota_(Gauge(r, "kueue_cohort_subtree_quota",
                                  "Reports the cohort's nominal quota aggregated within the cohort's subtree. The "
                                  "values are reported per resource and flavor")),
      cohort_subtree_reservations_(Gauge(r, "kueue_cohort_subtree_resource_reservations",
                                         "Reports the cohort's resource reservations aggregated within the cohort's "
                                         "subtree. The values are reported per resource and flavor")),
      cohort_subtree_admitted_active_(Gauge(r, "kueue_cohort_subtree_admitted_active_workloads",
                                            "The number of admitted Workloads that are active, per cohort's subtree")),
      cohort_subtree_admitted_total_(Counter(r, "kueue_cohort_subtree_admitted_workloads_total",
                                             "The total number of admitted workloads per cohort's subtree")),
      expected_wait_(Hist(r, "berth_pending_workload_expected_wait_seconds",
                          "The expected wait of the pending workloads with an estimated start time, per "
                          "'cluster_queue', as of the last estimate")),
      lq_quota_reserved_workloads_(Counter(r, "kueue_local_queue_quota_reserved_workloads_total",
                                           "The total number of quota reserved workloads per 'local_queue'")),
      lq_quota_reserved_wait_time_(Hist(r, "kueue_local_queue_quota_reserved_wait_time_seconds",
                                        "The time between a workload was created or requeued until it got quota "
                                        "reservation, per 'local_queue'")),
      lq_admitted_workloads_(Counter(r, "kueue_local_queue_admitted_workloads_total",
                                     "The total number of admitted workloads per 'local_queue'")),
      lq_admission_wait_time_(Hist(r, "kueue_local_queue_admission_wait_time_seconds",
                                   "The time between a workload was created or requeued until admission, per "
                                   "'local_queue'")),
      lq_admission_checks_wait_time_(Hist(r, "kueue_local_queue_admission_checks_wait_time_seconds",
                                          "The time from when a workload got the quota reservation until admission, "
                                          "per 'local_queue'")),
      lq_evicted_workloads_(Counter(r, "kueue_local_queue_evicted_workloads_total",
                                    std::string("The number of evicted workloads per 'local_queue'. ") +
                                        kEvictionReasonsHelp)),
      lq_finished_workloads_total_(Counter(r, "kueue_local_queue_finished_workloads_total",
                                           "The total number of finished workloads per 'local_queue'")),
      lq_execution_time_(Hist(r, "kueue_local_queue_execution_time_seconds",
                              "The time between a workload was admitted until it finished, per 'local_queue'")),
      lq_ready_wait_time_(Hist(r, "kueue_local_queue_ready_wait_time_seconds",
                               "The time between a workload was created or requeued until ready, per 'local_queue'")),
      lq_admitted_until_ready_wait_time_(Hist(r, "kueue_local_queue_admitted_until_ready_wait_time_seconds",
                                              "The time between a workload was admitted until ready, per "
                                              "'local_queue'")),
      lq_pending_workloads_(Gauge(r, "kueue_local_queue_pending_workloads",
                                  "The number of pending workloads, per 'local_queue' and 'status' (active: in the "
                                  "admission queue; inadmissible: set aside after a failed admission attempt)")),
      lq_reserving_active_workloads_(Gauge(r, "kueue_local_queue_reserving_active_workloads",
                                           "The number of Workloads that are reserving quota, per 'localQueue'")),
      lq_admitted_active_workloads_(Gauge(r, "kueue_local_queue_admitted_active_workloads",
                                          "The number of admitted Workloads that are active, per 'localQueue'")),
      lq_status_(Gauge(r, "kueue_local_queue_status",
                       "Reports 'localQueue' with its 'active' status (with possible values 'True', 'False', or "
                       "'Unknown'). For a LocalQueue, the metric only reports a value of 1 for one of the statuses.")),
      lq_resource_reservation_(Gauge(r, "kueue_local_queue_resource_reservation",
                                     "Reports the localQueue's total resource reservation within all the flavors")),
      lq_resource_usage_(Gauge(r, "kueue_local_queue_resource_usage",
                               "Reports the localQueue's total resource usage within all the flavors")),
      lq_afs_usage_(Gauge(r, "kueue_local_queue_admission_fair_sharing_usage",
                          "Reports a value representing the LocalQueue's Admission Fair Sharing usage, calculated "
                          "from the resource-weighted sum of consumed resources and pending admission penalties, "
                          "divided by the LocalQueue's fair sharing weight")) {}

double KueueMetrics::Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

double KueueMetrics::BaseUnits(admission::Amount a) { return static_cast<double>(a) / 1000.0; }

void KueueMetrics::AdmissionAttempt(bool admitted_any, Duration duration) {
  const Labels l = {{"result", admitted_any ? "success" : "inadmissible"}};
  admission_attempts_.Add(l).Increment();
  admission_attempt_duration_.Add(l, kDefaultBuckets).Observe(Seconds(duration));
}

template <class T, class... Args>
T& KueueMetrics::OwnedSeries(prometheus::Family<T>& family, const std::string& owner, const Labels& labels,
                             Args&&... args) {
  T& metric = family.Add(labels, std::forward<Args>(args)...);
  series_[owner].try_emplace({&family, labels}, [&family, &metric] { family.Remove(&metric); });
  return metric;
}

size_t KueueMetrics::OwnersHeld() {
  std::scoped_lock lock(mu_, series_mu_);
  return owned_.size() + series_.size();
}

void KueueMetrics::ForgetSeries(const std::string& owner) {
  std::lock_guard<std::mutex> lock(series_mu_);
  auto it = series_.find(owner);
  if (it == series_.end()) return;
  for (auto& [key, remove] : it->second) remove();
  series_.erase(it);
}

void KueueMetrics::WorkloadAdmitted(const std::string& cluster_queue, const std::vector<std::string>& cohorts,
                                    const LocalQueueKey& local_queue, const std::string& priority_class,
                                    Duration wait) {
  std::lock_guard<std::mutex> lock(series_mu_);
  const Labels l = {{"cluster_queue", cluster_queue}, {"priority_class", priority_class}};
  for (const std::string& c : cohorts) {
    OwnedSeries(cohort_subtree_admitted_total_, CohortOwner(c), {{"cohort", c}, {"priority_class", priority_class}})
        .Increment();
  }
  const std::string cq = CqOwner(cluster_queue);
  OwnedSeries(quota_reserved_workloads_, cq, l).Increment();
  OwnedSeries(admitted_workloads_, cq, l).Increment();
  OwnedSeries(quota_reserved_wait_time_, cq, l, KueueBuckets(14)).Observe(Seconds(wait));
  OwnedSeries(admission_wait_time_, cq, l, KueueBuckets(16)).Observe(Seconds(wait));
  OwnedSeries(admission_checks_wait_time_, cq, l, KueueBuckets(14)).Observe(0);
  const Labels lq = LocalQueueLabels(local_queue, priority_class);
  const std::string lq_owner = LqOwner(local_queue);
  OwnedSeries(lq_quota_reserved_workloads_, lq_owner, lq).Increment();
  OwnedSeries(lq_admitted_workloads_, lq_owner, lq).Increment();
  OwnedSeries(lq_quota_reserved_wait_time_, lq_owner, lq, KueueBuckets(14)).Observe(Seconds(wait));
  OwnedSeries(lq_admission_wait_time_, lq_owner, lq, KueueBuckets(16)).Observe(Seconds(wait));
  OwnedSeries(lq_admission_checks_wait_time_, lq_owner, lq, KueueBuckets(14)).Observe(0);
}

void KueueMetrics::WorkloadEvicted(const std::string& cluster_queue, const LocalQueueKey& local_queue,
                                   const std::string& reason, const std::string& underlying_cause,
                                   const std::string& priority_class) {
  std::lock_guard<std::mutex> lock(series_mu_);
  OwnedSeries(evicted_workloads_, CqOwner(cluster_queue),
              {{"cluster_queue", cluster_queue},
               {"reason", reason},
               {"underlying_cause", underlying_cause},
               {"priority_class", priority_class}})
      .Increment();
  Labels lq = LocalQueueLabels(local_queue, priority_class);
  lq["reason"] = reason;
  lq["underlying_cause"] = underlying_cause;
  OwnedSeries(lq_evicted_workloads_, LqOwner(local_queue), lq).Increment();
}

void KueueMetrics::WorkloadPreempted(const std::string& preempting_cluster_queue, const std::string& reason) {
  std::lock_guard<std::mutex> lock(series_mu_);
  OwnedSeries(preempted_workloads_, CqOwner(preempting_cluster_queue),
              {{"preempting_cluster_queue", preempting_cluster_queue}, {"reason", reason}})
      .Increment();
}

void KueueMetrics::WorkloadFinished(const std::string& cluster_queue, const LocalQueueKey& local_queue,
                                    const std::string& priority_class, Duration execution_time) {
  std::lock_guard<std::mutex> lock(series_mu_);
  const Labels l = {{"cluster_queue", cluster_queue}, {"priority_class", priority_class}};
  const std::string cq = CqOwner(cluster_queue);
  OwnedSeries(finished_workloads_total_, cq, l).Increment();
  OwnedSeries(execution_time_, cq, l, KueueBuckets(14)).Observe(Seconds(execution_time));
  const Labels lq = LocalQueueLabels(local_queue, priority_class);
  OwnedSeries(lq_finished_workloads_total_, LqOwner(local_queue), lq).Increment();
  OwnedSeries(lq_execution_time_, LqOwner(local_queue), lq, KueueBuckets(14)).Observe(Seconds(execution_time));
}

void KueueMetrics::WorkloadReady(const std::string& cluster_queue, const LocalQueueKey& local_queue,
                                 const std::string& priority_class, Duration since_queued, Duration since_admitted) {
  std::lock_guard<std::mutex> lock(series_mu_);
  const Labels l = {{"cluster_queue", cluster_queue}, {"priority_class", priority_class}};
  const std::string cq = CqOwner(cluster_queue);
  OwnedSeries(ready_wait_time_, cq, l, KueueBuckets(14)).Observe(Seconds(since_queued));
  OwnedSeries(admitted_until_ready_wait_time_, cq, l, KueueBuckets(14)).Observe(Seconds(since_admitted));
  const Labels lq = LocalQueueLabels(local_queue, priority_class);
  const std::string lq_owner = LqOwner(local_queue);
  OwnedSeries(lq_ready_wait_time_, lq_owner, lq, KueueBuckets(14)).Observe(Seconds(since_queued));
  OwnedSeries(lq_admitted_until_ready_wait_time_, lq_owner, lq, KueueBuckets(14)).Observe(Seconds(since_admitted));
}

void KueueMetrics::SetOwnedGauges(prometheus::Family<prometheus::Gauge>& family, const std::string& owner,
                                  const std::vector<std::pair<Labels, double>>& values) {
  auto it = owned_.find({&family, owner});
  if (it == owned_.end() && values.empty()) return;  // nothing held, nothing to hold
  if (it == owned_.end()) it = owned_.emplace(std::make_pair(&family, owner), std::set<Labels>{}).first;
  std::set<Labels> now;
  for (const auto& [labels, value] : values) {
    family.Add(labels).Set(value);
    now.insert(labels);
  }
  for (const Labels& old : it->second) {
    if (!now.count(old)) family.Remove(&family.Add(old));
  }
  if (now.empty()) {
    owned_.erase(it);  // an owner with no series holds no entry
  } else {
    it->second = std::move(now);
  }
}

void KueueMetrics::ReportPendingWorkloads(const std::string& cluster_queue, int active, int inadmissible) {
  std::lock_guard<std::mutex> lock(mu_);
  SetOwnedGauges(pending_workloads_, cluster_queue,
                 {{{{"cluster_queue", cluster_queue}, {"status", "active"}}, static_cast<double>(active)},
                  {{{"cluster_queue", cluster_queue}, {"status", "inadmissible"}}, static_cast<double>(inadmissible)}});
}

void KueueMetrics::ReportClusterQueue(const ClusterQueueMetrics& cq) {
  std::lock_guard<std::mutex> lock(mu_);
  const Labels l = {{"cluster_queue", cq.name}};
  SetOwnedGauges(reserving_active_workloads_, cq.name, {{l, static_cast<double>(cq.reserving_workloads)}});
  SetOwnedGauges(admitted_active_workloads_, cq.name, {{l, static_cast<double>(cq.admitted_workloads)}});
  SetOwnedGauges(finished_workloads_, cq.name, {{l, static_cast<double>(cq.finished_workloads)}});
  SetOwnedGauges(cluster_queue_info_, cq.name,
                 {{{{"cluster_queue", cq.name}, {"parent_cohort", cq.cohort}, {"root_cohort", cq.root_cohort}}, 1.0}});
  std::vector<std::pair<Labels, double>> status;
  for (auto s : {ClusterQueueMetricStatus::kPending, ClusterQueueMetricStatus::kActive,
                 ClusterQueueMetricStatus::kTerminating}) {
    status.push_back({{{"cluster_queue", cq.name}, {"status", StatusName(s)}}, s == cq.status ? 1.0 : 0.0});
  }
  SetOwnedGauges(cluster_queue_status_, cq.name, status);

  std::vector<std::pair<Labels, double>> reservation, usage, nominal, borrowing, lending;
  for (const ClusterQueueResourceMetrics& r : cq.resources) {
    const Labels rl = {{"cohort", cq.cohort}, {"cluster_queue", cq.name}, {"flavor", r.flavor}, {"resource", r.resource}};
    reservation.push_back({rl, BaseUnits(r.reservation)});
    usage.push_back({rl, BaseUnits(r.usage)});
    nominal.push_back({rl, BaseUnits(r.nominal_quota)});
    if (r.borrowing_limit) borrowing.push_back({rl, BaseUnits(*r.borrowing_limit)});
    if (r.lending_limit) lending.push_back({rl, BaseUnits(*r.lending_limit)});
  }
  SetOwnedGauges(resource_reservation_, cq.name, reservation);
  SetOwnedGauges(resource_usage_, cq.name, usage);
  SetOwnedGauges(nominal_quota_, cq.name, nominal);
  SetOwnedGauges(borrowing_limit_, cq.name, borrowing);
  SetOwnedGauges(lending_limit_, cq.name, lending);
  std::vector<std::pair<Labels, double>> share;
  if (cq.weighted_share) {
    const double v = std::isinf(*cq.weighted_share) ? std::nan("") : *cq.weighted_share;
    share.push_back({{{"cluster_queue", cq.name}, {"cohort", cq.cohort}}, v});
  }
  SetOwnedGauges(cluster_queue_weighted_share_, cq.name, share);
}

void KueueMetrics::ReportCohortWeightedShare(const std::string& cohort, std::optional<double> weighted_share) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<Labels, double>> share;
  if (weighted_share) share.push_back({{{"cohort", cohort}}, *weighted_share});
  SetOwnedGauges(cohort_weighted_share_, cohort, share);
}

void KueueMetrics::ReportCohort(const CohortMetrics& cohort) {
  std::lock_guard<std::mutex> lock(mu_);
  const Labels l = {{"cohort", cohort.name}};
  SetOwnedGauges(cohort_info_, cohort.name,
                 {{{{"cohort", cohort.name}, {"parent_cohort", cohort.parent_cohort}, {"root_cohort", cohort.root_cohort}},
                   1.0}});
  SetOwnedGauges(cohort_subtree_admitted_active_, cohort.name, {{l, static_cast<double>(cohort.admitted_workloads)}});
  std::vector<std::pair<Labels, double>> quota, reservations;
  for (const CohortResourceMetrics& r : cohort.resources) {
    const Labels rl = {{"cohort", cohort.name}, {"flavor", r.flavor}, {"resource", r.resource}};
    if (r.subtree_quota > 0) quota.push_back({rl, BaseUnits(r.subtree_quota)});
    if (r.subtree_reservation > 0) reservations.push_back({rl, BaseUnits(r.subtree_reservation)});
  }
  SetOwnedGauges(cohort_subtree_quota_, cohort.name, quota);
  SetOwnedGauges(cohort_subtree_reservations_, cohort.name, reservations);
}

void KueueMetrics::ForgetCohort(const std::string& cohort) {
  ForgetSeries(CohortOwner(cohort));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto* family : {&cohort_info_, &cohort_subtree_admitted_active_, &cohort_subtree_quota_,
                       &cohort_subtree_reservations_, &cohort_weighted_share_}) {
    SetOwnedGauges(*family, cohort, {});
  }
}

void KueueMetrics::ReportExpectedWaits(const std::map<std::string, std::vector<double>>& waits) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& cq : expected_wait_queues_) {
    expected_wait_.Remove(&expected_wait_.Add({{"cluster_queue", cq}}, KueueBuckets(16)));
  }
  expected_wait_queues_.clear();
  for (const auto& [cq, values] : waits) {
    prometheus::Histogram& h = expected_wait_.Add({{"cluster_queue", cq}}, KueueBuckets(16));
    for (double v : values) h.Observe(v);
    expected_wait_queues_.insert(cq);
  }
}

void KueueMetrics::ForgetClusterQueue(const std::string& cluster_queue) {
  ForgetSeries(CqOwner(cluster_queue));
  std::lock_guard<std::mutex> lock(mu_);
  for (auto* family : {&pending_workloads_, &reserving_active_workloads_, &admitted_active_workloads_,
                       &finished_workloads_, &cluster_queue_info_, &cluster_queue_status_, &resource_reservation_, &resource_usage_,
                       &nominal_quota_, &borrowing_limit_, &lending_limit_, &cluster_queue_weighted_share_}) {
    SetOwnedGauges(*family, cluster_queue, {});
  }
}

void KueueMetrics::ReportLocalQueue(const LocalQueueMetrics& lq) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string owner = OwnerOf(lq.queue);
  const Labels l = LocalQueueLabels(lq.queue);
  auto with = [&](const char* key, const std::string& value) {
    Labels out = l;
    out[key] = value;
    return out;
  };
  SetOwnedGauges(lq_pending_workloads_, owner,
                 {{with("status", "active"), static_cast<double>(lq.pending_active)},
                  {with("status", "inadmissible"), static_cast<double>(lq.pending_inadmissible)}});
  SetOwnedGauges(lq_reserving_active_workloads_, owner, {{l, static_cast<double>(lq.reserving_workloads)}});
  SetOwnedGauges(lq_admitted_active_workloads_, owner, {{l, static_cast<double>(lq.admitted_workloads)}});
  std::vector<std::pair<Labels, double>> status;
  for (const char* s : {"True", "False", "Unknown"}) status.push_back({with("active", s), lq.active == s ? 1.0 : 0.0});
  SetOwnedGauges(lq_status_, owner, status);
  std::vector<std::pair<Labels, double>> reservation, usage;
  for (const LocalQueueResourceMetrics& r : lq.resources) {
    Labels rl = with("flavor", r.flavor);
    rl["resource"] = r.resource;
    reservation.push_back({rl, BaseUnits(r.reservation)});
    usage.push_back({rl, BaseUnits(r.usage)});
  }
  SetOwnedGauges(lq_resource_reservation_, owner, reservation);
  SetOwnedGauges(lq_resource_usage_, owner, usage);
  std::vector<std::pair<Labels, double>> afs;
  if (lq.admission_fair_sharing_usage) afs.push_back({with("cluster_queue", lq.cluster_queue), *lq.admission_fair_sharing_usage});
  SetOwnedGauges(lq_afs_usage_, owner, afs);
}

void KueueMetrics::ForgetLocalQueue(const LocalQueueKey& local_queue) {
  ForgetSeries(LqOwner(local_queue));
  std::lock_guard<std::mutex> lock(mu_);
  const std::string owner = OwnerOf(local_queue);
  for (auto* family : {&lq_pending_workloads_, &lq_reserving_active_workloads_, &lq_admitted_active_workloads_,
                       &lq_status_, &lq_resource_reservation_, &lq_resource_usage_, &lq_afs_usage_}) {
    SetOwnedGauges(*family, owner, {});
  }
}

}  // namespace berth::controllers::kueue
