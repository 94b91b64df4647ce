// JobReconciler: Kueue's generic job reconciler (pkg/controller/jobframework/
// reconciler.go) for one job kind, over the JobIntegration interface.
//
// For a job (key "namespace/name") it:
//   1. Ignores jobs without the kueue.x-k8s.io/queue-name LABEL. A job that
//      carries the queue name as an ANNOTATION instead gets one Warning Event
//      "QueueNameAnnotationIgnored" saying only the label is honoured (the
//      annotation was removed in Kueue v1beta2; the seeds' trap), and runs
//      unmanaged as in Kueue.
//   2. Finds its Workload (owner-uid index); if none, suspends a running job
//      and creates one: name "<kind>-<job name>-<5 hex>" (hash of the job name
//      and kind), spec.queueName from the label, podSets from the job,
//      priority from the kueue.x-k8s.io/priority-class label
//      (WorkloadPriorityClass value, priorityClassRef kind
//      WorkloadPriorityClass), else the pod templates' priorityClassName
//      (PriorityClass value), else the globalDefault PriorityClass, else 0;
//      spec.maximumExecutionTimeSeconds from the kueue.x-k8s.io/max-exec-time-seconds
//      label (api::MaxExecTimeSecondsFromLabel: a positive int32, else unset; Kueue's
//      ConstructWorkload); label kueue.x-k8s.io/job-uid; a controller owner reference to
//      the job.
//      A missing class is a Warning Event and a retry, as Kueue's error.
//   3. Finished job → Workload Finished=True (Succeeded/Failed).
//   3a. The Workload no longer matches the job (EquivalentToWorkload: a parallelism,
//      request or container change, or a max-exec-time-seconds label changed while the job
//      was suspended; Kueue's ensureOneWorkload) → stop the job
//      (StopJob; Event "Stopped" "No matching Workload; restoring pod templates
//      according to existent Workload"); once the job reports no active pod, delete the
//      Workload (uid precondition; Event "DeletedWorkload" "Deleted not matching
//      Workload: <ns>/<name>"); the next reconcile creates a new one from the job as it
//      is now, which queues again (step 2). Kueue deletes at once; berth keeps the old
//      Workload's quota until the pods are gone, as on eviction (departure 4), so the
//      ClusterQueue never counts less than what runs. The same-write suspend of a running
//      batch/v1 Job whose pod count changes (api/job_strategy.h) keeps its Job controller
//      from creating pods beyond the admitted count before this step runs.
//   4. Workload evicted → stop the job (StopJob, Event "Stopped"); once the job reports no
//      active pod, release the quota (workload_status.h ReleaseQuota) — never
//      before (docs/architecture.md, departure 4). Kueue records no Event then;
//      berth records "Requeued" "... quota released, workload requeued
//      (<reason>)" only when Requeued became True (Preempted, NodeFailures),
//      none for a workload that is not requeued (Deactivated, PodsReadyTimeout
//      backoff, stopped queues).
//   5. Workload admitted and job suspended → inject the flavors' nodeLabels
//      and tolerations and unsuspend (Event "Started" "Admitted by
//      clusterQueue <cq>").
//   6. Workload not admitted and job running → stop it (StopJob, no Event).
//
// StopJob (Kueue's stopJob with the batch/v1 Job's custom Stop): suspend the job (one
// Update), reset its start time (GenericJob::ResetStartTime, an UpdateStatus), restore its
// templates' nodeSelector/tolerations from the Workload's podSets (an Update), each only
// when it changes something — separate writes because a started Job's template is
// immutable until it is suspended and its startTime cleared (api/job_strategy.h).
// Step 5 also resets a start time left on a suspended job before injecting.
//   7. Job switched to another WorkloadPriorityClass (label) while pending →
//      Workload priority and priorityClassRef follow (Kueue PR #7289). A
//      class's value edit does not re-prioritize (Kueue behaviour,
//      kubernetes-sigs/kueue#8322).
//
// Errors: API failures are returned (the caller requeues with rate limiting).
// Thread-safety: Reconcile may run on several threads for different keys.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "controllers/common/event_recorder.h"
#include "controllers/kueue/job_integration.h"
#include "controllers/kueue/kueue_cache.h"
#include "core/clock.h"

namespace berth::controllers::kueue {

struct JobReconcilerOptions {
  // waitForPodsReady enabled: the Workload's PodsReady condition follows the
  // job (workload_lifecycle.h PodsReadyCondition), written before anything
  // else once the job has a Workload (Kueue reconciler step 5).
  bool wait_for_pods_ready = false;
  // manageJobsWithoutQueueName: a job without the queue-name label is managed
  // too (its Workload has an empty queueName and waits "LocalQueue  doesn't
  // exist"), except in kube-system and kueue-system (Kueue's default
  // managedJobsNamespaceSelector).
  bool manage_jobs_without_queue_name = false;
};

// Kueue's EquivalentToWorkload: the Workload's spec.maximumExecutionTimeSeconds is the
// job's max-exec-time-seconds label as api::MaxExecTimeSecondsFromLabel reads it (both
// unset counts as equal; Kueue updates no Workload in place for it, the mismatch makes a
// new one), and the job's podSets match the Workload's, both pruned and defaulted by the
// Workload schema first (api::Registry::Default(), as the API server
// stores a Workload; Kueue compares defaulted Go structs) — same number, and
// for each (by position) the count, initContainers and containers; tolerations too while
// the Workload holds no quota (once admitted they carry the flavors' tolerations). When the
// Workload holds quota the counts are those of status.admission.podSetAssignments
// (expectedRunningPodSets); a suspended job also matches the Workload's own podSets.
bool EquivalentToWorkload(const GenericJob& job, const api::Object& wl);

class JobReconciler {
 public:
  JobReconciler(client::Client& client, client::SharedInformerFactory& factory, KueueCache& cache,
                EventRecorder& recorder, Clock& clock, std::unique_ptr<JobIntegration> integration,
                JobReconcilerOptions options = {});

  const JobIntegration& integration() const { return *integration_; }
  client::Informer& jobs() { return *jobs_; }
  // Jobs of this kind warned about the queue-name annotation that still exist (KueueController::
  // HeldPerObject).
  size_t WarnedJobs();

  Status Reconcile(const std::string& key);

  // The Workload name Kueue gives a job's Workload.
  static std::string WorkloadName(const std::string& job_name, const api::GroupVersionKind& kind);

 private:
  StatusOr<api::Object> NewWorkload(const GenericJob& job);
  // Priority and its class reference (null when none) for a job.
  StatusOr<std::pair<int32_t, api::Object>> ResolvePriority(const GenericJob& job);
  Status UpdateJob(const GenericJob& job);
  // StopJob (see above); `*job` is re-wrapped around each written object. Returns whether it
  // wrote anything. An empty `event_message` records no Event.
  StatusOr<bool> StopJob(std::unique_ptr<GenericJob>* job, const api::Object& wl, const std::string& event_message);
  Status UpdateWorkloadStatus(const api::Object& wl);

  client::Client& client_;
  KueueCache& cache_;
  EventRecorder& recorder_;
  Clock& clock_;
  std::unique_ptr<JobIntegration> integration_;
  const JobReconcilerOptions options_;
  client::Informer* jobs_;
  std::mutex mu_;
  // Jobs warned about the queue-name annotation: key -> the uid warned; erased when the
  // job is gone.
  std::map<std::string, std::string> warned_;
};

}  // namespace berth::controllers::kueue
