// TrainJobController: the Kubeflow Trainer v2 TrainJob reconciler
// (pkg/controller/trainjob_controller.go), writing through client::Client.
// Status as pkg/apis/trainer/v1alpha1/trainjob_types.go documents it, the runtime snapshot as
// pkg/runtime/core/snapshot.go keeps it, the JobSet as pkg/runtime/core/trainingruntime.go
// builds it.
//
// One reconcile of a TrainJob key ("namespace/name"):
//   1. absent, being deleted, or spec.managedBy naming another controller → nothing;
//      an unsupported runtimeRef kind/group → Failed True "TrainingRuntimeNotSupported"
//      "unsupported runtime: <Kind>.<group>".
//   2. Runtime snapshot (KEP-2599): the ConfigMap "<trainjob>-runtime-snapshot" (key
//      `runtime`, the runtime object as JSON, controller-owned by the TrainJob) is used
//      when it exists; otherwise the referenced ClusterTrainingRuntime / TrainingRuntime is
//      read and the snapshot created, so later edits of the runtime never change this
//      TrainJob. A missing runtime is not an error: the TrainJob waits with condition
//      Created False "RuntimeNotFound" and a Warning Event "TrainJobResourcesCreationFailed",
//      both with builder's RuntimeNotFoundMessage; the condition is removed once the
//      runtime appears (berth's addition: upstream's webhook rejects the TrainJob instead).
//   3. Build(trainjob, snapshot) → JobSet of the same name (and the MPI hostfile
//      ConfigMap); a build error is a Warning Event "TrainJobResourcesCreationFailed".
//      The JobSet is created when absent and, per ShouldApplyJobSet, re-applied only while
//      the TrainJob or the JobSet is suspended — and then only spec.suspend, the JobSet
//      metadata labels/annotations and the replicatedJobs' pod templates change (the
//      fields Kueue's runtime patch injects; trainer#3008), never a running JobSet and
//      never after Complete/Failed (trainer#2981).
//   4. spec.activeDeadlineSeconds (v2.2+; ActiveDeadline): once the deadline has passed the
//      TrainJob gets Failed True "DeadlineExceeded" "TrainJob exceeded its active deadline"
//      and its JobSet is deleted; before, the key is requeued for the deadline (through
//      SetRequeueAfter). The clock does not run while the TrainJob is suspended and
//      restarts on resume (the Suspended False condition's lastTransitionTime).
//   5. status: conditions and jobsStatus from StatusFromJobSet, written when changed.
// A TrainJob carrying the kueue.x-k8s.io/queue-name label with spec.suspend unset is
// treated as suspended (Kueue's webhook default), so no pod exists before admission.
//
// Driving: Reconcile(key) from a work queue (TrainJob, JobSet, runtime informers), or
// ReconcileAll() (every TrainJob in (namespace, name) order) for tests and benchmarks;
// a TrainJob waiting for its runtime is picked up again by the next pass.
// Errors: API failures are returned; the caller requeues with rate limiting.
// Thread-safety: Reconcile may run concurrently for different keys.
#pragma once

#include <optional>
#include <string>

#include "api/object.h"
#include "client/client.h"
#include "controllers/common/event_recorder.h"
#include "controllers/jobs/common/job_kind_reconciler.h"
#include "controllers/jobs/common/resources.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::jobs::trainjob {

inline const client::GroupVersionResource kTrainJobsResource{"trainer.kubeflow.org", "v1alpha1", "trainjobs"};
inline constexpr char kDefaultManagedBy[] = "trainer.kubeflow.org/trainjob-controller";
inline constexpr char kRuntimeSnapshotKey[] = "runtime";

// "<trainjob>-runtime-snapshot".
std::string RuntimeSnapshotName(const std::string& trainjob);

// When the TrainJob's active deadline runs out: its creationTimestamp, or the
// lastTransitionTime of its Suspended False (resumed) condition, plus
// spec.activeDeadlineSeconds; nullopt when the field is unset or the TrainJob is
// (effectively) suspended, or resumed while its Suspended condition still says True (the
// reconcile that records the resume starts the clock), so the deadline is not counted
// while suspended.
std::optional<Time> ActiveDeadline(const api::Object& trainjob);

// The runtime a TrainJob is built from: its snapshot ConfigMap when it exists, else the
// referenced runtime object. kNotFound when neither exists (message from
// RuntimeNotFoundMessage); other API errors as the client reports them.
// `snapshot_found` (optional) tells which one was returned.
StatusOr<api::Object> ResolveRuntime(client::Client& client, const api::Object& trainjob,
                                     bool* snapshot_found = nullptr);

class TrainJobController final : public JobKindReconciler {
 public:
  TrainJobController(client::Client& client, Clock& clock, EventRecorder& recorder)
      : JobKindReconciler(client, clock, kTrainJobsResource), recorder_(recorder) {}

 private:
  Status Sync(const std::string& key, const api::Object& original) override;
  Status ApplyJobSet(const api::Object& built, const api::Object* existing);

  EventRecorder& recorder_;
};

}  // namespace berth::controllers::jobs::trainjob
