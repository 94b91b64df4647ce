// PyTorchJobController: the Training Operator v1 PyTorchJob reconciler (common job
// controller + pkg/controller.v1/pytorch), writing through client::Client. One reconcile of
// a key ("namespace/name"), defaults applied (pytorchjob_pods.h ApplyDefaults):
//   - suspended (spec.runPolicy.suspend, or unset with the kueue.x-k8s.io/queue-name label:
//     Kueue's webhook default): every pod and Service of the job is deleted; condition
//     Suspended True "JobSuspended";
//   - otherwise the pods and Services of Pods()/Services() that do not exist are created.
//     Pod names are fixed ("<job>-worker-3"), so a pod that still terminates blocks its own
//     replacement (AlreadyExists): replacements start only after predecessors are gone
//     (docs/architecture.md, departure 3);
//   - status: replicaStatuses {<Type>: {active (Running pods), succeeded, failed}}, conditions Created,
//     Running (every pod running), Succeeded (the Master pod, or every pod without Master,
//     succeeded), Failed (a pod failed with restartPolicy Never), Suspended False on resume.
//   - a pod Failed with restartPolicy OnFailure/Always (its node was lost: the agent would
//     have restarted the container in place) is deleted and, once gone, created again, as
//     the Training Operator's ReconcilePods restarts it; the job does not fail. With
//     Kueue's waitForPodsReady the Workload is then evicted and requeued as a whole when
//     the replacement is not ready within recoveryTimeout.
// Not done: backoffLimit, cleanPodPolicy, activeDeadlineSeconds, elastic policy.
// Driving, errors, thread-safety: as job_controller.h.
#pragma once

#include <string>

#include "client/client.h"
#include "controllers/jobs/common/job_kind_reconciler.h"
#include "controllers/jobs/common/resources.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::jobs::pytorchjob {

inline const client::GroupVersionResource kPyTorchJobsResource{"kubeflow.org", "v1", "pytorchjobs"};

class PyTorchJobController final : public JobKindReconciler {
 public:
  PyTorchJobController(client::Client& client, Clock& clock)
      : JobKindReconciler(client, clock, kPyTorchJobsResource) {}

 private:
  Status Sync(const std::string& key, const api::Object& original) override;
};

}  // namespace berth::controllers::jobs::pytorchjob
