// Strategies of the trainer.kubeflow.org kinds: the rules Kubeflow Trainer writes as CEL
// in its CRDs (x-kubernetes-validations) and in its validating webhooks
// (pkg/webhooks/trainjob_webhook.go, trainingruntime_webhook.go, the torch plugin's
// Validate), as far as they can be checked on the object alone. The checks that need the
// referenced runtime (it may be created later) are made by the TrainJob controller
// (controllers/jobs/trainjob/trainjob_builder.h) and reported as conditions and events.
//
// TrainJob (create and update)
//   CEL (root; reported at the root path with value "object", as apiextensions does):
//     metadata.name must match RFC 1035 DNS label format
//     metadata.name must be no more than 63 characters
//   CEL spec.trainer.numProcPerNode: an integer > 0 or one of "auto", "cpu", "gpu"
//     ("NumProcPerNode must be equal to auto, cpu, gpu, or int value");
//   CEL spec.managedBy: trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue
//     ("ManagedBy must be trainer.kubeflow.org/trainjob-controller or
//     kueue.x-k8s.io/multikueue if set");
//   webhook (torch plugin): spec.trainer.env may not set PET_NNODES, PET_NPROC_PER_NODE,
//     PET_NODE_RANK, PET_MASTER_ADDR, PET_MASTER_PORT:
//       spec.trainer.env: Invalid value: [...]: must not have reserved envs, invalid envs
//       configured: [PET_MASTER_ADDR PET_NPROC_PER_NODE]
//     Upstream checks this only for torch runtimes; berth checks it for every TrainJob (a
//     PET_* variable means nothing to the other runtimes' launchers).
//   update, CEL `self == oldSelf` ("field is immutable"): spec.runtimeRef,
//     spec.initializer, spec.trainer, spec.activeDeadlineSeconds, spec.managedBy.
//   Negative numNodes and activeDeadlineSeconds < 1 are schema bounds (resources/).
//   Not done: runtimePatches may change only while suspended with no active Job (needs
//   the JobSet), torchtune model checks.
// TrainingRuntime / ClusterTrainingRuntime (create only, as upstream)
//   a replicatedJob labelled trainer.kubeflow.org/trainjob-ancestor-step = trainer |
//   dataset-initializer | model-initializer must have replicas 1
//   (`spec.template.spec.replicatedJobs[i].replicas: Invalid value: 2: always must be 1`)
//   and contain the container node / dataset-initializer / model-initializer
//   (`...replicatedJobs[i].template.spec.template.spec.containers: Invalid value: [...]:
//   must contain the required container for the ancestor: trainer`).
//   On create and update (berth; upstream only when the Jobs and Pods are made): each
//   replicatedJob's pod template, api/pod_validation.h, at
//   spec.template.spec.replicatedJobs[i].template.spec.template.spec.
//
// Thread-safety: the strategies are stateless.
#pragma once

#include <string_view>

#include "api/kueue_job_webhook.h"
#include "api/strategy.h"

namespace berth::api {

inline constexpr std::string_view kTrainerGroupName = "trainer.kubeflow.org";

// The reserved-env rule above, for a TrainJob object; shared with the controller.
FieldErrorList ValidateTrainJobReservedEnv(const Object& trainjob);

// Registers the TrainJob, TrainingRuntime and ClusterTrainingRuntime strategies; the
// TrainJob's create applies Kueue's job webhook with `kueue` (api/kueue_job_webhook.h).
void RegisterTrainerStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& kueue = {});

}  // namespace berth::api
