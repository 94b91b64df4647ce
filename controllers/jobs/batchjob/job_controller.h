// JobController: the batch/v1 Job reconciler (the Kubernetes Job controller,
// pkg/controller/job), writing through client::Client. One reconcile of a Job key
// ("namespace/name"):
//   1. reads the Job (absent or being deleted → nothing) and the pods it controls
//      (label batch.kubernetes.io/controller-uid=<uid> and a controller ownerReference);
//   2. plans with job_pods.h PlanJob — suspend deletes every active pod; pods are created
//      for missing indexes / up to parallelism; a terminating pod still counts as live, so
//      its replacement is created only once it is gone or terminal (docs/architecture.md,
//      departure 3: podReplacementPolicy: Failed for every Job);
//   3. deletes (a pod deleted because the Job is suspended or has more pods than it needs is
//      first patched with kRemovedByJobControllerAnnotation, so its end is not counted:
//      upstream deleteJobPods removes the job-tracking finalizer first), then creates (names
//      from NewPod with core/ids.h RandomNameSuffix), then writes status (active, ready,
//      terminating, succeeded, failed, completedIndexes, conditions stamped with the Clock;
//      startTime when first running unsuspended and again on resume, completionTime on
//      Complete) only when it changed;
//   4. records Events on the Job as upstream (source "job-controller"): for each pod
//      created Normal SuccessfulCreate "Created pod: <name>" (Warning FailedCreate "Error
//      creating: <error>" when the create fails) and deleted Normal SuccessfulDelete
//      "Deleted pod: <name>" (Warning FailedDelete "Error deleting: <error>"), as
//      pkg/controller/controller_utils.go RealPodControl; once the status is written, on
//      the transition to Complete Normal Completed "Job completed", to Failed Warning with
//      the condition's reason and message (BackoffLimitExceeded "Job has reached the
//      specified backoff limit", DeadlineExceeded "Job was active longer than specified
//      deadline", ...), as job_controller.go recordJobFinished; to Suspended True Normal
//      Suspended "Job suspended", and back Normal Resumed "Job resumed" (syncJob);
//   5. a Job with spec.activeDeadlineSeconds still running is requeued for when the
//      deadline passes (SetRequeueAfter; upstream's queue.AddAfter), when PlanJob fails it
//      with DeadlineExceeded and deletes its pods; a Job whose replacement pods wait for
//      the pod-failure backoff (job_pods.h) is requeued for when the earliest delay ends
//      (upstream enqueueSyncJobWithDelay), whichever comes first. Pods replacing failed
//      pods of a Job with backoffLimitPerIndex carry their index's failure count.
// A Job carrying the kueue.x-k8s.io/queue-name label with spec.suspend unset is treated as
// suspended (Kueue's webhook default, owned_objects.h EffectivelySuspended).
//
// Driving: Reconcile(key) from a work queue fed by Job and Pod informers (pods map to
// their Job through the controller ownerReference), or ReconcileAll() for tests and
// benchmarks (every Job, in (namespace, name) order).
// Errors: API failures are returned; the caller requeues with rate limiting.
// Thread-safety: Reconcile may run concurrently for different keys.
#pragma once

#include <string>

#include "client/client.h"
#include "client/event_recorder.h"
#include "controllers/jobs/common/job_kind_reconciler.h"
#include "controllers/jobs/common/resources.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::jobs::batchjob {

// The Events' source and reasons (pkg/controller/job/job_controller.go,
// pkg/controller/controller_utils.go).
inline constexpr char kJobControllerComponent[] = "job-controller";
inline constexpr char kSuccessfulCreateReason[] = "SuccessfulCreate";
inline constexpr char kFailedCreateReason[] = "FailedCreate";
inline constexpr char kSuccessfulDeleteReason[] = "SuccessfulDelete";
inline constexpr char kFailedDeleteReason[] = "FailedDelete";
inline constexpr char kCompletedReason[] = "Completed";
inline constexpr char kCompletedMessage[] = "Job completed";
inline constexpr char kSuspendedReason[] = "Suspended";
inline constexpr char kSuspendedMessage[] = "Job suspended";
inline constexpr char kResumedReason[] = "Resumed";
inline constexpr char kResumedMessage[] = "Job resumed";

struct JobPlan;

class JobController final : public JobKindReconciler {
 public:
  JobController(client::Client& client, Clock& clock)
      : JobKindReconciler(client, clock, kJobsResource), recorder_(client, clock, kJobControllerComponent) {}

 private:
  Status Sync(const std::string& key, const api::Object& original) override;
  // The Events of the condition transitions `plan` makes on `original` (step 4).
  void RecordTransitions(const api::Object& original, const JobPlan& plan);

  client::EventRecorder recorder_;
};

}  // namespace berth::controllers::jobs::batchjob
