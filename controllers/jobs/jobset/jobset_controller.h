// JobSetController: the JobSet reconciler (kubernetes-sigs/jobset
// pkg/controllers/jobset_controller.go), writing through client::Client. One reconcile of
// a JobSet key ("namespace/name"):
//   1. reads the JobSet (absent or being deleted → nothing; children go by garbage
//      collection) with the webhook defaults applied (jobset_children.h ApplyDefaults) and
//      the child Jobs it controls (label jobset.sigs.k8s.io/jobset-name and a controller
//      ownerReference);
//   2. plans with PlanJobSet: previous-attempt and finished-JobSet Jobs are deleted with
//      propagationPolicy Foreground (pods first, as upstream); new-attempt Jobs are
//      created only once every previous-attempt Job is gone (docs/architecture.md,
//      departure 3: BlockingRecreate semantics always); suspend/resume edits are
//      written with Update;
//   3. creates the headless Service (HeadlessService) when absent and the JobSet is not
//      finished;
//   4. writes status (replicatedJobsStatus, restarts, restartsCountTowardsMax,
//      terminalState, conditions stamped with the Clock) when it changed, and the plan's
//      Event (e.g. Warning "FailedJobs") through the EventRecorder.
// A JobSet carrying the kueue.x-k8s.io/queue-name label with spec.suspend unset is treated
// as suspended (Kueue's webhook default).
//
// Driving: Reconcile(key) from a work queue fed by JobSet and Job informers, or
// ReconcileAll() (every JobSet in (namespace, name) order) for tests and benchmarks.
// Errors: API failures are returned; the caller requeues with rate limiting.
// Thread-safety: Reconcile may run concurrently for different keys.
#pragma once

#include <string>

#include "client/client.h"
#include "controllers/jobs/common/job_kind_reconciler.h"
#include "controllers/jobs/common/resources.h"
#include "controllers/common/event_recorder.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::jobs::jobset {

inline const client::GroupVersionResource kJobSetsResource{"jobset.x-k8s.io", "v1alpha2", "jobsets"};

class JobSetController final : public JobKindReconciler {
 public:
  JobSetController(client::Client& client, Clock& clock, EventRecorder& recorder)
      : JobKindReconciler(client, clock, kJobSetsResource), recorder_(recorder) {}

 private:
  Status Sync(const std::string& key, const api::Object& original) override;

  EventRecorder& recorder_;
};

}  // namespace berth::controllers::jobs::jobset
