// The PyTorchJob integration (Kueue's pkg/controller/jobs/kubeflow/jobs/pytorchjob,
// framework "kubeflow.org/pytorchjob"):
//   PodSets      one per replica type in the Training Operator's order (Master, Worker,
//                then others by name), named lower-case, count = replicas, template = the
//                replica template (pytorchjob_pods.h PodSets).
//   Suspend      spec.runPolicy.suspend.
//   RunWithPodSetsInfo / RestorePodSetsInfo  the flavor's nodeSelector and tolerations
//                merged into / restored onto spec.pytorchReplicaSpecs[<Type>].template.spec
//                (Kueue podset.Merge), then unsuspended.
//   Finished     Succeeded / Failed condition True.
//   PodsReady    Σ replicaStatuses active+succeeded ≥ Σ replicas.
//   IsActive     some pod labelled training.kubeflow.org/job-name=<job> is not terminal —
//                running or still terminating (berth keeps an evicted Workload's quota until
//                the pods are gone; Kueue looks at replicaStatuses.active).
// Wrap lists the job's pods through the client given at construction.
// Thread-safety: see job_integration.h.
#pragma once

#include "controllers/kueue/job_integration.h"

namespace berth::controllers::jobs::pytorchjob {

class PyTorchJobIntegration final : public kueue::JobIntegration {
 public:
  explicit PyTorchJobIntegration(client::Client& client);
  std::unique_ptr<kueue::GenericJob> Wrap(api::Object job) const override;
  std::optional<Duration> ActiveDeadline(const api::Object& job) const override;

 private:
  client::Client& client_;
};

}  // namespace berth::controllers::jobs::pytorchjob
