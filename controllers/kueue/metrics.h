// KueueMetrics: the Prometheus metrics of Kueue's controllers and scheduler
// (Kueue pkg/metrics/metrics.go), with Kueue's names, label
// names and histogram buckets, registered on a prometheus::Registry that the
// binary serves as /metrics (docs/metrics.md lists them and what is not
// produced).
//
// Two kinds of methods:
//   - events, named after what happened, called by KueueController where it
//     writes the change (never on a failed write): an admission cycle, a
//     quota reservation + admission (berth has no admission checks: both
//     happen in one write), an eviction, a preemption, a finished workload,
//     a workload turning PodsReady;
//   - state, set from the controller's cache whenever a ClusterQueue's status
//     is computed (ReportClusterQueue) and whenever a cycle moved workloads
//     between the active and inadmissible queues (ReportPendingWorkloads).
//     A ClusterQueue's series that are not reported again (a flavor removed
//     from its spec, a borrowingLimit unset) are removed; ForgetClusterQueue
//     removes all of them when the ClusterQueue is gone.
//
// Every ClusterQueue metric has its LocalQueue counterpart (Kueue's
// local_queue_* metrics, labelled name and namespace instead of
// cluster_queue), which Kueue serves behind its LocalQueueMetrics gate and
// berth always serves: the event methods take the workload's LocalQueue, and
// ReportLocalQueue sets its state whenever its status is computed.
//
// Every metric carries replica_role="standalone" (Kueue's label; berth has no
// leader election). Units: durations in seconds; resource amounts in the
// resource's base unit as Kueue reports them (cpu in cores, memory in bytes,
// a count for extended resources).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <set>
#include <string>
#include <vector>

#include "admission/model.h"
#include "admission/snapshot.h"
#include "api/object.h"
#include "core/clock.h"

namespace berth::controllers::kueue {

// A LocalQueue: the `namespace` and `name` labels of the local_queue_* metrics.
struct LocalQueueKey {
  std::string ns;
  std::string name;
  bool operator==(const LocalQueueKey&) const = default;
};
// The LocalQueue a workload was submitted to: metadata.namespace, spec.queueName.
LocalQueueKey LocalQueueOf(const api::Object& workload);

// The state of one LocalQueue, as its status was just computed.
struct LocalQueueResourceMetrics {
  std::string flavor;
  std::string resource;
  admission::Amount reservation = 0;  // status.flavorsReservation
  admission::Amount usage = 0;        // status.flavorsUsage
};
struct LocalQueueMetrics {
  LocalQueueKey queue;
  std::string active = "Unknown";  // its Active condition's status: True, False or Unknown
  int pending_active = 0;          // pending workloads in their ClusterQueue's heap
  int pending_inadmissible = 0;    // ... set aside as inadmissible
  int reserving_workloads = 0;     // status.reservingWorkloads
  int admitted_workloads = 0;      // status.admittedWorkloads
  std::vector<LocalQueueResourceMetrics> resources;
  // Admission Fair Sharing: the usage its workloads are ordered by (LocalQueueUsage:
  // weighted consumed resources, penalties included, over the LocalQueue's weight) and its
  // ClusterQueue; unset when that ClusterQueue does not use it.
  std::optional<double> admission_fair_sharing_usage;
  std::string cluster_queue;
};
// The metrics view of a LocalQueue whose status (queue_status.h
// LocalQueueStatus) was just computed; the pending split comes from the
// queue manager.
LocalQueueMetrics LocalQueueMetricsFromStatus(const LocalQueueKey& queue, const api::Object& status,
                                              int pending_active, int pending_inadmissible);

// kueue_cluster_queue_status{status}: Kueue's three ClusterQueue states.
enum class ClusterQueueMetricStatus { kPending, kActive, kTerminating };

// One (flavor, resource) pair of a ClusterQueue's spec with its quotas and
// what workloads hold of it.
struct ClusterQueueResourceMetrics {
  std::string flavor;
  std::string resource;
  admission::Amount nominal_quota = 0;
  std::optional<admission::Amount> borrowing_limit;  // nullopt: not reported
  std::optional<admission::Amount> lending_limit;    // nullopt: not reported
  admission::Amount reservation = 0;  // held by workloads with QuotaReserved=True
  admission::Amount usage = 0;        // held by admitted workloads
};

// The state of one ClusterQueue, as its status was just computed.
struct ClusterQueueMetrics {
  std::string name;
  std::string cohort;  // spec.cohortName ("" when none)
  std::string root_cohort;  // the root of its cohort tree ("" when none)
  ClusterQueueMetricStatus status = ClusterQueueMetricStatus::kPending;
  int reserving_workloads = 0;  // status.reservingWorkloads
  int admitted_workloads = 0;   // status.admittedWorkloads
  int finished_workloads = 0;   // Finished=True workloads admitted by it that still exist
  std::vector<ClusterQueueResourceMetrics> resources;  // spec order
  // Fair Sharing on: the ClusterQueue's weighted share (DRS
  // PreciseWeightedShare; +inf for a zero-weight borrower). nullopt: off.
  std::optional<double> weighted_share;
};

// The metrics view of a ClusterQueue whose status was just computed
// (queue_status.h ClusterQueueStatus): status from its Active condition and
// `deleting`, counts and the flavorsReservation / flavorsUsage totals from
// `status`, quotas from the decoded `spec` (both in spec order).
ClusterQueueMetrics ClusterQueueMetricsFromStatus(const std::string& name, const admission::ClusterQueue& spec,
                                                  const api::Object& status, bool deleting, int finished_workloads,
                                                  const admission::ResourceNames& names);

// One Cohort of the tree (a Cohort object or one only named by ClusterQueues),
// with its totals over its subtree, as Kueue's cache reports them
// (pkg/cache/scheduler/cohort_metrics.go, clusterqueue.go reportActiveWorkloads).
struct CohortResourceMetrics {
  std::string flavor;
  std::string resource;
  admission::Amount subtree_quota = 0;        // nominal quota of the subtree (SubtreeQuota)
  admission::Amount subtree_reservation = 0;  // held by the subtree's ClusterQueues
};
struct CohortMetrics {
  std::string name;
  std::string parent_cohort;  // "" for a root
  std::string root_cohort;    // itself for a root
  int admitted_workloads = 0;  // admitted workloads of every ClusterQueue in the subtree
  // Every (flavor, resource) with a positive quota or reservation (Kueue clears
  // the series that are zero), in flavor-resource order.
  std::vector<CohortResourceMetrics> resources;
};
// The metrics view of the Cohort at `node` of a snapshot with usage;
// `admitted_workloads` is counted by the caller (the snapshot does not tell
// admitted from reserving).
CohortMetrics CohortMetricsFromSnapshot(const admission::Snapshot& snapshot, int node, int admitted_workloads);

// Kueue's workload.QueuedWaitTime: `now` minus the Requeued condition's
// lastTransitionTime when the workload has that condition, else minus its
// creationTimestamp.
Duration QueuedWaitTime(const api::Object& workload, Time now);

// The workload's priority class name (spec.priorityClassRef.name), "" when none:
// the priority_class label.
std::string PriorityClassName(const api::Object& workload);

// The evictions a status write added, from Kueue's per-workload counters
// status.schedulingStats.evictions[{reason, underlyingCause, count}]: every
// entry whose count grew from `before` to `after`, with the increase. This is
// how the waitForPodsReady steps (workload_lifecycle.h: PodsReadyTimeout with
// cause WaitForStart/WaitForRecovery, Deactivated with cause
// RequeuingLimitExceeded) report their evictions.
struct EvictionIncrease {
  std::string reason;
  std::string underlying_cause;
  int count = 0;
};
std::vector<EvictionIncrease> NewEvictions(const api::Object& before, const api::Object& after);

class KueueMetrics {
 public:
  explicit KueueMetrics(prometheus::Registry& registry);
  KueueMetrics(const KueueMetrics&) = delete;
  KueueMetrics& operator=(const KueueMetrics&) = delete;

  // --- Events ---------------------------------------------------------
  // One scheduling cycle over at least one head: kueue_admission_attempts_total
  // and kueue_admission_attempt_duration_seconds, result "success" when it
  // admitted at least one workload, else "inadmissible".
  void AdmissionAttempt(bool admitted_any, Duration duration);
  // Quota reserved and admitted in the same write (no admission checks):
  // kueue_quota_reserved_workloads_total, kueue_admitted_workloads_total,
  // kueue_quota_reserved_wait_time_seconds and kueue_admission_wait_time_seconds
  // observe `wait` (since created or requeued, Kueue's QueuedWaitTime), and
  // kueue_admission_checks_wait_time_seconds observes 0.
  // (Also the local_queue_ counters and histograms of `local_queue`, here and
  // in the other event methods.)
  // kueue_cohort_subtree_admitted_workloads_total counts it once for each
  // of `cohorts`, the ClusterQueue's ancestor Cohorts.
  void WorkloadAdmitted(const std::string& cluster_queue, const std::vector<std::string>& cohorts,
                        const LocalQueueKey& local_queue, const std::string& priority_class, Duration wait);
  // kueue_evicted_workloads_total{reason, underlying_cause} ("" when the
  // reason is the root cause; see NewEvictions for the waitForPodsReady ones).
  void WorkloadEvicted(const std::string& cluster_queue, const LocalQueueKey& local_queue, const std::string& reason,
                       const std::string& underlying_cause, const std::string& priority_class);
  // kueue_preempted_workloads_total{preempting_cluster_queue, reason}, reason
  // the preemption reason (InClusterQueue, InCohortReclamation,
  // InCohortFairSharing, InCohortReclaimWhileBorrowing).
  void WorkloadPreempted(const std::string& preempting_cluster_queue, const std::string& reason);
  // kueue_finished_workloads_total and kueue_execution_time_seconds (since the
  // workload was admitted).
  void WorkloadFinished(const std::string& cluster_queue, const LocalQueueKey& local_queue,
                        const std::string& priority_class, Duration execution_time);
  // PodsReady became True for the first time (waitForPodsReady):
  // kueue_ready_wait_time_seconds observes `since_queued` (created or
  // requeued until ready), kueue_admitted_until_ready_wait_time_seconds
  // `since_admitted`.
  void WorkloadReady(const std::string& cluster_queue, const LocalQueueKey& local_queue,
                     const std::string& priority_class, Duration since_queued, Duration since_admitted);

  // --- State ----------------------------------------------------------
  // kueue_pending_workloads{status="active"|"inadmissible"}.
  void ReportPendingWorkloads(const std::string& cluster_queue, int active, int inadmissible);
  // kueue_reserving_active_workloads, kueue_admitted_active_workloads,
  // kueue_finished_workloads, kueue_cluster_queue_info{parent_cohort,
  // root_cohort} (always 1), kueue_cluster_queue_status (1 for the current
  // status, 0 for the other two), kueue_cluster_queue_resource_reservation,
  // _resource_usage, _nominal_quota, _borrowing_limit, _lending_limit.
  void ReportClusterQueue(const ClusterQueueMetrics& cq);
  // (kueue_cluster_queue_weighted_share{cluster_queue, cohort}: set from
  // cq.weighted_share, NaN for +inf as Kueue reports it; removed when
  // nullopt.)
  // kueue_cohort_weighted_share{cohort} (Fair Sharing on): the Cohort's
  // weighted share, +inf as is (Kueue's cohort reconciler does not map it);
  // nullopt removes the series.
  void ReportCohortWeightedShare(const std::string& cohort, std::optional<double> weighted_share);
  // kueue_cohort_info{parent_cohort, root_cohort} (always 1),
  // kueue_cohort_subtree_quota and _subtree_resource_reservations{flavor,
  // resource}, kueue_cohort_subtree_admitted_active_workloads.
  void ReportCohort(const CohortMetrics& cohort);
  // Removes every series of the Cohort: its gauges, weighted share included,
  // and kueue_cohort_subtree_admitted_workloads_total (Kueue's ClearCohortMetrics
  // and ClearCohortAdmittedWorkloadsMetrics).
  void ForgetCohort(const std::string& cohort);
  // Removes every series labelled with this ClusterQueue: pending, state and
  // resource gauges, and its counters and histograms (admitted, evicted,
  // preempting, finished, wait times), as Kueue's ClearClusterQueueMetrics
  // (pkg/metrics/metrics.go): a server that sees queues come and go keeps no
  // series of the ones that went.
  void ForgetClusterQueue(const std::string& cluster_queue);

  // kueue_local_queue_pending_workloads{status}, _reserving_active_workloads,
  // _admitted_active_workloads, _status{active} (1 for the current value, 0
  // for the other two), _resource_reservation and _resource_usage{flavor,
  // resource}, and kueue_local_queue_admission_fair_sharing_usage{cluster_queue} while
  // lq.admission_fair_sharing_usage is set (Kueue's localqueue_controller.go).
  void ReportLocalQueue(const LocalQueueMetrics& lq);
  // Removes every series of this LocalQueue, gauges, counters and histograms
  // (Kueue's ClearLocalQueueMetrics).
  void ForgetLocalQueue(const LocalQueueKey& local_queue);
  // How many (family, queue or cohort) pairs hold gauge series, and how many queues or
  // cohorts hold counter or histogram series: what the metrics keep per object, for leak
  // checks (zero once every queue and cohort reported is forgotten).
  size_t OwnersHeld();

  // berth_pending_workload_expected_wait_seconds{cluster_queue}: the
  // expected waits (seconds from now to the estimated start,
  // start_time_estimates.h) of the pending workloads of each ClusterQueue
  // that have an estimate, as a histogram rebuilt at every estimate pass (a
  // distribution of the queue as it is now, not a count over time; Kueue's
  // admission_wait_time buckets). A ClusterQueue absent from `waits` loses its series.
  void ReportExpectedWaits(const std::map<std::string, std::vector<double>>& waits);

  // Seconds as Prometheus wants them.
  static double Seconds(Duration d);
  // A milli-unit amount in the resource's base unit.
  static double BaseUnits(admission::Amount a);

 private:
  using Labels = std::map<std::string, std::string>;
  // Sets `values` as the series `owner` (a ClusterQueue, Cohort or
  // "namespace/name" of a LocalQueue) owns in `family`, removing those it
  // owned before and no longer reports. Caller holds mu_.
  void SetOwnedGauges(prometheus::Family<prometheus::Gauge>& family, const std::string& owner,
                      const std::vector<std::pair<Labels, double>>& values);

  prometheus::Family<prometheus::Counter>& admission_attempts_;
  prometheus::Family<prometheus::Histogram>& admission_attempt_duration_;
  prometheus::Family<prometheus::Counter>& quota_reserved_workloads_;
  prometheus::Family<prometheus::Histogram>& quota_reserved_wait_time_;
  prometheus::Family<prometheus::Counter>& admitted_workloads_;
  prometheus::Family<prometheus::Histogram>& admission_wait_time_;
  prometheus::Family<prometheus::Histogram>& admission_checks_wait_time_;
  prometheus::Family<prometheus::Counter>& evicted_workloads_;
  prometheus::Family<prometheus::Counter>& preempted_workloads_;
  prometheus::Family<prometheus::Counter>& finished_workloads_total_;
  prometheus::Family<prometheus::Histogram>& execution_time_;
  prometheus::Family<prometheus::Histogram>& ready_wait_time_;
  prometheus::Family<prometheus::Histogram>& admitted_until_ready_wait_time_;
  prometheus::Family<prometheus::Gauge>& cluster_queue_info_;
  prometheus::Family<prometheus::Gauge>& pending_workloads_;
  prometheus::Family<prometheus::Gauge>& reserving_active_workloads_;
  prometheus::Family<prometheus::Gauge>& admitted_active_workloads_;
  prometheus::Family<prometheus::Gauge>& finished_workloads_;
  prometheus::Family<prometheus::Gauge>& cluster_queue_status_;
  prometheus::Family<prometheus::Gauge>& resource_reservation_;
  prometheus::Family<prometheus::Gauge>& resource_usage_;
  prometheus::Family<prometheus::Gauge>& nominal_quota_;
  prometheus::Family<prometheus::Gauge>& borrowing_limit_;
  prometheus::Family<prometheus::Gauge>& lending_limit_;
  prometheus::Family<prometheus::Gauge>& cluster_queue_weighted_share_;
  prometheus::Family<prometheus::Gauge>& cohort_weighted_share_;
  prometheus::Family<prometheus::Gauge>& cohort_info_;
  prometheus::Family<prometheus::Gauge>& cohort_subtree_quota_;
  prometheus::Family<prometheus::Gauge>& cohort_subtree_reservations_;
  prometheus::Family<prometheus::Gauge>& cohort_subtree_admitted_active_;
  prometheus::Family<prometheus::Counter>& cohort_subtree_admitted_total_;
  prometheus::Family<prometheus::Histogram>& expected_wait_;
  std::set<std::string> expected_wait_queues_;  // ClusterQueues with a series
  // local_queue_*
  prometheus::Family<prometheus::Counter>& lq_quota_reserved_workloads_;
  prometheus::Family<prometheus::Histogram>& lq_quota_reserved_wait_time_;
  prometheus::Family<prometheus::Counter>& lq_admitted_workloads_;
  prometheus::Family<prometheus::Histogram>& lq_admission_wait_time_;
  prometheus::Family<prometheus::Histogram>& lq_admission_checks_wait_time_;
  prometheus::Family<prometheus::Counter>& lq_evicted_workloads_;
  prometheus::Family<prometheus::Counter>& lq_finished_workloads_total_;
  prometheus::Family<prometheus::Histogram>& lq_execution_time_;
  prometheus::Family<prometheus::Histogram>& lq_ready_wait_time_;
  prometheus::Family<prometheus::Histogram>& lq_admitted_until_ready_wait_time_;
  prometheus::Family<prometheus::Gauge>& lq_pending_workloads_;
  prometheus::Family<prometheus::Gauge>& lq_reserving_active_workloads_;
  prometheus::Family<prometheus::Gauge>& lq_admitted_active_workloads_;
  prometheus::Family<prometheus::Gauge>& lq_status_;
  prometheus::Family<prometheus::Gauge>& lq_resource_reservation_;
  prometheus::Family<prometheus::Gauge>& lq_resource_usage_;
  prometheus::Family<prometheus::Gauge>& lq_afs_usage_;

  std::mutex mu_;
  // (family, cluster queue) -> label sets of the series it owns there.
  std::map<std::pair<const void*, std::string>, std::set<Labels>> owned_;

  // The counter and histogram series each ClusterQueue ("cq/<name>"), LocalQueue
  // ("lq/<ns>/<name>") or Cohort ("cohort/<name>") has, to remove with it (ForgetSeries).
  // Held across each event method's Add and update, so a series is never removed between.
  std::mutex series_mu_;
  std::map<std::string, std::map<std::pair<const void*, Labels>, std::function<void()>>> series_;
  // family.Add(labels, args...), noted as `owner`'s; under series_mu_.
  template <class T, class... Args>
  T& OwnedSeries(prometheus::Family<T>& family, const std::string& owner, const Labels& labels, Args&&... args);
  void ForgetSeries(const std::string& owner);
};

}  // namespace berth::controllers::kueue
