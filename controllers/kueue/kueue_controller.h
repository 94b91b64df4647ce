// KueueController: Kueue's core controllers and scheduler in one process
// component, fed by shared informers through rate-limited work queues and
// writing only through client::Client (Kueue's pkg/scheduler/scheduler.go and
// pkg/controller/core; the admission layer of docs/architecture.md "admission/ and
// placement/").
//
// Reconcilers (each level-triggered on one key):
//   Workload      (ns/name)  resolves LocalQueue → ClusterQueue and keeps the
//                 pending queues (admission::QueueManager) in step with the
//                 objects; writes QuotaReserved=False "Misconfigured"
//                 "LocalQueue X doesn't exist" / "ClusterQueue X doesn't
//                 exist", "Suspended" "ClusterQueue X is inactive" (only when
//                 changed); drops finished, inactive and quota-holding
//                 workloads from the queues (kubernetes-sigs/kueue#1654, #6711);
//                 evicts admitted workloads of a HoldAndDrain ClusterQueue
//                 ("ClusterQueueStopped") or
//                 LocalQueue ("LocalQueueStopped") or with spec.active=false
//                 ("Deactivated"); releases the quota of an evicted Workload no
//                 job integration owns (it has no pods). Before all that,
//                 Kueue's time-driven steps (workload_lifecycle.h):
//                 deactivation, requeue backoff, PodsReady timeout, each
//                 rechecked on the Clock when it is due.
//   ClusterQueue  (name)     Active condition, counts, flavorsReservation /
//                 flavorsUsage (queue_status.h), with Fair Sharing on
//                 fairSharing.weightedShare (admission/fair_sharing.h, from
//                 a snapshot with usage) and a reconcile of its ancestor
//                 Cohorts; removes the
//                 kueue.x-k8s.io/resource-in-use finalizer of a deleted
//                 ClusterQueue once no workload holds quota in it.
//   LocalQueue    (ns/name)  status (queue_status.h). With the Configuration's
//                 admissionFairSharing, every usageSamplingInterval (a
//                 delayed re-add on the Clock) the LocalQueue's consumed
//                 history is decayed towards its admitted usage and written to
//                 status.fairSharing.admissionFairSharingStatus, and its
//                 usage / spec.fairSharing.weight is handed to the
//                 QueueManager, which orders the workloads of a
//                 UsageBasedAdmissionFairSharing ClusterQueue by it; each
//                 admission there adds its entry penalty at once
//                 (admission/admission_fair_sharing.h).
//                 A Workload event reconciles its ClusterQueue and LocalQueue
//                 after kUpdatesBatchPeriod (Kueue's AddAfter with
//                 constants.UpdatesBatchPeriod), so a burst of workload
//                 changes costs one status write per queue, not one each;
//                 their own spec changes reconcile them at once.
//   ResourceFlavor (name)    removes the resource-in-use finalizer of a
//                 deleted flavor once no ClusterQueue references it.
//   Jobs          one JobReconciler per registered JobIntegration.
//   Cohort        (name)     status.fairSharing.weightedShare while Fair
//                 Sharing is on (removed when off; Kueue's cohort
//                 reconciler), kueue_cohort_weighted_share and the cohort
//                 subtree metrics. Its own events reconcile it at once; a
//                 ClusterQueue reconcile reconciles the queue's old and new
//                 ancestor Cohorts after kUpdatesBatchPeriod (each pass
//                 snapshots the Cohort's tree: with 1,000 ClusterQueues under
//                 churn, one pass per ClusterQueue status change took a
//                 quarter of the server's CPU and held the controller's lock
//                 the scheduler needs).
// Scheduler: one cycle = snapshot from the informer caches (with assumed
// writes, kueue_cache.h) and QueueManager::Heads under the lock →
// admission::Schedule without it (as Kueue's scheduler computes on its
// snapshot outside its cache lock; the heads are in flight in the
// QueueManager meanwhile, still pending for every count) → apply under the
// lock again. A head that left the flight while the cycle ran (deleted,
// replaced by a namesake, deactivated, moved) is neither admitted, requeued
// nor told it is pending; one whose spec changed (podSets, priority) is
// requeued to be tried again as it is now (its metadata.generation moved;
// the Workload loop may not have read the update yet); a victim replaced,
// finished, evicted or released meanwhile is not evicted. An admitted head's
// flight ends once its write succeeded. Then, in this order: admitted → status.admission + QuotaReserved/Admitted
// True, Events QuotaReserved and Admitted; preemption → each victim
// Evicted=True "Preempted" + Preempted=True with Kueue's message, Event
// "Preempted"; pending → QuotaReserved=False with the engine's reason/message
// ("Pending" Event), handed to the pendingverdict work queue: the cycle does
// not wait for these writes, a newer verdict for the same workload replaces
// one not yet written, and a verdict the workload already shows, or a stale
// one (the workload holds quota, finished, was recreated, or its
// QuotaReserved condition changed status since the cycle), is dropped.
// A failed admission write requeues the workload (Kueue's ForgetWorkload
// has nothing to undo here: only written statuses are assumed). With waitForPodsReady
// blockAdmission, admissions wait while an admitted workload is not
// PodsReady (QuotaReserved=False "WaitingForPodsReady").
//
// Running: Start() starts the informers' consumers — one worker thread per
// work queue and one scheduler thread that runs a cycle whenever something
// changed. For tests and benchmarks, the same work is driven
// synchronously with EnqueueAll / ProcessQueued / ScheduleOnce (no thread).
// Either way a cycle writes its admissions, then its evictions, at once on
// kCycleWriteThreads threads (controllers/common/concurrent_writes.h; Kueue
// issues each admission's write in its own goroutine), so a durable store
// commits them together; the cycle waits for them before it goes on.
//
// Time: every timestamp from the injected Clock.
// Thread-safety: the public methods may be called from any thread; one lock
// serialises the engine state (queues, names, snapshot building).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "admission/admission_fair_sharing.h"
#include "admission/queue_manager.h"
#include "client/client.h"
#include "client/informer.h"
#include "client/work_queue.h"
#include "controllers/common/concurrent_writes.h"
#include "controllers/common/event_recorder.h"
#include "controllers/common/reconcile_loop.h"
#include "controllers/kueue/configuration.h"
#include "controllers/kueue/job_integration.h"
#include "controllers/kueue/job_reconciler.h"
#include "controllers/kueue/kueue_cache.h"
#include "controllers/kueue/metrics.h"
#include "controllers/kueue/start_time_estimates.h"
#include "controllers/kueue/workload_lifecycle.h"
#include "core/clock.h"

namespace berth::controllers::kueue {

// Delay of a workload-driven ClusterQueue / LocalQueue status reconcile
// (Kueue's constants.UpdatesBatchPeriod).
inline constexpr Duration kUpdatesBatchPeriod = std::chrono::seconds(1);

struct KueueControllerOptions {
  std::string component = "kueue-admission";  // Event source
  // Kueue's Prometheus metrics (metrics.h); null: none recorded. Events are
  // recorded after their write succeeded; the ClusterQueue gauges whenever
  // its status is computed, the pending gauges also after each cycle.
  std::shared_ptr<KueueMetrics> metrics;
  // Kueue's Configuration (configuration.h): fairSharing (the cycle's
  // CycleOptions, weighted-share statuses and gauges), waitForPodsReady (PodsReady
  // condition, timeout eviction, requeue backoff, deactivation after
  // backoffLimitCount, blockAdmission: workload_lifecycle.h) and
  // manageJobsWithoutQueueName. integrations.frameworks is applied by whoever
  // registers the job integrations (ControllerManager).
  KueueConfiguration config;
  // Estimated start times (start_time_estimates.h): every pending Workload's
  // is recomputed at most once per `estimate_period` after a change (a
  // cycle, a Workload event), off the scheduling path, and written as its
  // EstimatedStart condition when the wait is kEstimateRewriteMin or more
  // (or unknown), then rewritten when it moved by more than
  // max(kEstimateRewriteMin, 10 % of the wait) or its reason changed
  // (EstimateWorthWriting), at most `estimate_writes_per_pass` writes per pass
  // (the rest follow at the next). Zero period: off. A pass also waits at
  // least kEstimateDutyFactor times the previous pass's duration, so the
  // replay takes at most about 1/kEstimateDutyFactor of a core however long
  // the queues grow (a 50,000-Workload backlog makes a pass take seconds).
  Duration estimate_period{};
  size_t estimate_writes_per_pass = 200;
  // Tests only: called by ScheduleOnce after the cycle is computed and before
  // its results are applied (no lock held), to act in that window.
  std::function<void()> between_cycle_phases;
};

// What a scheduling cycle did (for callers that loop and for tests).
struct CycleSummary {
  int heads = 0;
  int admitted = 0;
  int preempted = 0;     // victims evicted this cycle
  int pending = 0;  // verdicts handed to the pendingverdict queue
};

// A pending workload as Kueue's visibility API reports it (visibility.h).
struct PendingWorkloadEntry {
  client::ObjectPtr workload;  // as cached
  int32_t priority = 0;        // the effective priority the queue orders by
};

class KueueController {
 public:
  KueueController(client::Client& client, client::SharedInformerFactory& factory, Clock& clock,
                  KueueControllerOptions options = {});
  ~KueueController();  // Stop()

  // Registers a job kind; call before Start (or before driving synchronously).
  void AddJobIntegration(std::unique_ptr<JobIntegration> integration);

  // Every informer this controller reads (to start them / wait for sync).
  std::vector<client::Informer*> informers();

  void Start();
  void Stop();

  // --- Synchronous driving (tests, benchmarks) ---------------------------
  // Enqueues every known object in every work queue (a resync).
  void EnqueueAll();
  // Every work queue idle (ReconcileLoop::Idle); the scheduling cycle aside.
  bool Idle() const;
  // Drains every work queue on the calling thread; returns keys processed.
  int ProcessQueued();
  // Runs one scheduling cycle on the calling thread. One caller at a time: the
  // scheduler thread, or a test that did not Start() (a cycle's Heads() ends
  // the flight of the previous cycle's heads).
  CycleSummary ScheduleOnce();

  KueueCache& cache() { return cache_; }

  // What the controller holds per Workload or job, for leak checks: each figure is back to
  // zero once the Workloads and jobs it was about are gone and a scheduling cycle has run.
  // Call while no work queue runs (synchronous driving): the estimates are the estimate
  // queue's own.
  struct PerObjectState {
    size_t queued_workloads = 0;   // Workloads the queue manager knows (by key)
    size_t pending_verdicts = 0;   // scheduling verdicts not yet written
    size_t written_estimates = 0;  // EstimatedStart conditions remembered
    size_t assumed_workloads = 0;  // Workload writes the informer has not shown yet
    size_t job_warnings = 0;       // jobs warned about the queue-name annotation
    bool operator==(const PerObjectState&) const = default;
    friend std::ostream& operator<<(std::ostream& os, const PerObjectState& s) {
      return os << "{queued_workloads " << s.queued_workloads << ", pending_verdicts " << s.pending_verdicts
                << ", written_estimates " << s.written_estimates << ", assumed_workloads " << s.assumed_workloads
                << ", job_warnings " << s.job_warnings << "}";
    }
  };
  PerObjectState HeldPerObject();

  // The pending workloads of a ClusterQueue in queue order: the active heap
  // and the inadmissible workloads sorted together, as Kueue's
  // Manager.PendingWorkloadsInfo (pkg/cache/queue/manager.go). nullopt when
  // the ClusterQueue has no queue. A head a running scheduling cycle has in
  // flight is listed, as Kueue's ClusterQueue.Snapshot lists its inflight
  // workload. Any thread.
  std::optional<std::vector<PendingWorkloadEntry>> PendingWorkloads(const std::string& cluster_queue);

  // The last estimates (start_time_estimates.h), computed at `at`; null
  // before the first pass. Any thread.
  struct Estimates {
    Time at{};
    admission::EstimateResult result;
    std::set<std::string> replayed;  // the ClusterQueues this pass replayed (the rest were carried)
  };
  std::shared_ptr<const Estimates> LatestEstimates() const;
  // One estimate pass now (what the "estimates" work queue runs): replays,
  // from copies taken under the engine lock, the cohort trees that changed
  // since the last pass (every tree at the first pass; other trees keep
  // their estimates: trees share no quota), then publishes and writes.
  // Returns the first write error; the failed writes, like those beyond
  // estimate_writes_per_pass, are made by the next pass, which this one
  // schedules.
  Status RecomputeEstimates();

 private:

  void RegisterHandlers();
  ReconcileLoop& AddQueue(const std::string& name, ReconcileFunc reconcile, ReconcileLoopOptions options = {});
  void RequestSchedule();
  // Every Workload without a quota reservation is reconciled again (a queue
  // or namespace it may depend on appeared or changed). Coalesced through the
  // "pendingworkloads" loop: a burst of such changes (a thousand
  // ClusterQueues, LocalQueues and Namespaces created while 50,000 Workloads
  // wait) costs a scan or two of the cache, not one per change.
  void EnqueuePendingWorkloads();
  Status ScanPendingWorkloads();

  Status ReconcileWorkload(const std::string& key);
  Status ReconcileClusterQueue(const std::string& name);
  Status ReconcileLocalQueue(const std::string& key);
  Status ReconcileResourceFlavor(const std::string& name);
  // Cohort status: status.fairSharing.weightedShare while Fair Sharing is on
  // (removed otherwise), and kueue_cohort_weighted_share.
  Status ReconcileCohort(const std::string& name);
  // Writes the latest pending verdict of a workload (see the header comment).
  Status WritePendingVerdict(const std::string& key);
  void PublishPendingVerdict(const api::Object& workload, const std::string& reason, const std::string& message);

  Status WriteWorkloadStatus(const api::Object& wl);
  // Admission Fair Sharing: whether the ClusterQueue object orders by
  // LocalQueue usage (the Configuration's section and
  // spec.admissionScope.admissionMode UsageBasedAdmissionFairSharing).
  bool UsesAdmissionFairSharing(const api::Object& cluster_queue) const;
  // After `wl` was admitted: its LocalQueue's usage decayed to `now` plus the
  // entry penalty of the admission (admission/admission_fair_sharing.h), when
  // its ClusterQueue uses Admission Fair Sharing. Takes mu_.
  // The cache's snapshot with Admission Fair Sharing's LocalQueue usage on each quota
  // holder (preemption's candidate order). Requires mu_.
  admission::Snapshot SchedulingSnapshot();
  void SettleEntryPenalty(const api::Object& wl, const admission::Admission& admission, Time now);
  // The usage LocalQueue `key` orders by (its consumed resources by resourceWeights, over
  // its weight; local_queue null: weight 1), handed to the QueueManager. Requires mu_.
  double PublishLocalQueueUsage(const std::string& key, const api::Object* local_queue,
                                const admission::UsageAmounts& consumed);
  // Writes a lifecycle step (workload_lifecycle.h) and records its Event.
  Status ApplyLifecycleStep(const LifecycleStep& step);
  // kueue_pending_workloads of a ClusterQueue from the queues. Caller holds mu_.
  void ReportPendingWorkloads(const std::string& cluster_queue);
  Status RemoveFinalizer(const client::ResourceRef& ref, const api::Object& obj);

  client::Client& client_;
  client::SharedInformerFactory& factory_;
  Clock& clock_;
  const KueueControllerOptions options_;
  KueueCache cache_;
  EventRecorder recorder_;

  std::mutex mu_;  // engine state below
  admission::QueueManager queues_;
  admission::AfsUsageLedger afs_ledger_;  // LocalQueue "ns/name" -> consumed history
  std::map<std::string, std::string> uid_by_key_;  // workload key -> uid in queues_
  // ClusterQueues whose spec, deletion, Active condition, flavors or cohorts
  // changed since their last reconcile: only then are their inadmissible
  // workloads retried by the reconcile (as Kueue's clusterQueue handlers); a
  // status reconcile caused by a workload event changes nothing they wait on.
  std::set<std::string> cq_spec_changed_;
  // ClusterQueue -> its ancestor Cohorts, nearest first, as last reconciled.
  std::map<std::string, std::vector<std::string>> cq_ancestors_;

  std::vector<std::unique_ptr<ReconcileLoop>> work_;
  ReconcileLoop* wl_queue_ = nullptr;
  ReconcileLoop* cq_queue_ = nullptr;         // a ClusterQueue's own changes
  ReconcileLoop* lq_queue_ = nullptr;         // a LocalQueue's own changes
  ReconcileLoop* cq_status_queue_ = nullptr;  // batched status after Workload events
  ReconcileLoop* lq_status_queue_ = nullptr;
  ReconcileLoop* rf_queue_ = nullptr;
  ReconcileLoop* verdict_queue_ = nullptr;
  ReconcileLoop* cohort_queue_ = nullptr;
  struct PendingVerdict {
    std::string uid, reason, message;
    // QuotaReserved's lastTransitionTime when the cycle decided ("" without
    // the condition): a workload admitted (and maybe evicted) since then has
    // another one, and the verdict is stale.
    std::string quota_reserved_transition;
    bool operator==(const PendingVerdict&) const = default;
  };
  std::mutex verdict_mu_;
  std::map<std::string, PendingVerdict> verdicts_;  // workload key -> latest verdict not yet written
  std::vector<std::unique_ptr<JobReconciler>> jobs_;

  // Estimated start times.
  ReconcileLoop* estimate_queue_ = nullptr;
  ReconcileLoop* pending_queue_ = nullptr;  // EnqueuePendingWorkloads
  // Marks the ClusterQueue's cohort tree ("" = every tree) for the next
  // estimate pass, and schedules it (ScheduleEstimatePass).
  void RequestEstimates(const std::string& cluster_queue);
  // Schedules the next estimate pass EstimateDelay later (estimate_period, or
  // kEstimateDutyFactor times the last pass if longer), marking nothing: a
  // pass with no tree marked replays none and writes what is left to write.
  void ScheduleEstimatePass();
  // What the "estimates" work queue runs: holds the pass until
  // kEstimateDutyFactor times the last pass after its end, then
  // RecomputeEstimates; always Ok (its write errors wait for the next pass).
  Status RunEstimatePass(const std::string& key);
  // The owning job's JobIntegration::ActiveDeadline, the job read from its
  // integration's informer (no I/O).
  std::optional<Duration> JobDeadline(const api::Object& workload);
  RunTimeHistory history_;
  mutable std::mutex estimates_mu_;
  std::shared_ptr<const Estimates> estimates_;
  std::set<std::string> estimate_dirty_;  // ClusterQueues whose trees changed
  bool estimate_dirty_all_ = false;
  Duration estimate_pass_duration_{};  // the last pass's, by the Clock
  Time estimate_pass_end_{};           // when it ended
  // uid -> the EstimatedStart condition last written (and the start it said).
  std::unordered_map<std::string, WrittenEstimate> written_estimates_;  // estimate queue only

  std::mutex sched_mu_;
  std::condition_variable sched_cv_;
  bool schedule_requested_ = true;
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> threads_;
  // A cycle's admission and eviction writes: with the caller, four at once, enough for the
  // store's group commit to take most of them together; more threads took CPU from the
  // loops that release quota on a loaded 2-core machine (Kueue's large-scale benchmark
  // with SQLite: 8 threads evicted about twice as many workloads as 3).
  static constexpr int kCycleWriteThreads = 3;
  ConcurrentWrites writes_{"kueue-writes", kCycleWriteThreads};
};

}  // namespace berth::controllers::kueue
