// Kueue's mutating webhook for the job kinds it integrates
// (jobframework.ApplyDefaultForSuspend, registered for CREATE only), with
// manageJobsWithoutQueueName=false: a job created with the
// kueue.x-k8s.io/queue-name label is stored suspended, so no pod of it can
// exist before its Workload is admitted. The Kueue job reconciler unsuspends
// it on admission (controllers/kueue/job_reconciler.h).
//
// Not suspended: a job without the label (not Kueue's), and a job with a
// controller ownerReference (a JobSet of a TrainJob, the Jobs of a JobSet:
// the owner is the unit Kueue admits, as upstream's "owner managed by Kueue").
// An explicit `suspend: true` stays; an explicit `suspend: false` is
// overridden, as upstream does.
//
// Kinds and their suspend field:
//   batch/v1 Job                   spec.suspend
//   jobset.x-k8s.io JobSet         spec.suspend
//   kubeflow.org/v1 PyTorchJob     spec.runPolicy.suspend
//   trainer.kubeflow.org TrainJob  spec.suspend (api/trainer_strategies.cc calls
//                                  SuspendQueuedJobOnCreate from its strategy)
//
// Thread-safety: pure functions; the strategies are stateless.
#pragma once

#include <initializer_list>
#include <string_view>

#include "api/object.h"
#include "api/strategy.h"

namespace berth::api {

inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";

// Sets the field at `suspend_path` (e.g. {"spec", "runPolicy", "suspend"}) to
// true when `job` is queued and not owned by a controller (see above).
// Returns true when it changed the object.
bool SuspendQueuedJobOnCreate(Object* job, std::initializer_list<std::string_view> suspend_path);

// Registers the webhook for batch/Job, jobset.x-k8s.io/JobSet and
// kubeflow.org/PyTorchJob (kinds that have no other strategy).
void RegisterKueueJobStrategies(StrategyRegistry* registry);

}  // namespace berth::api
