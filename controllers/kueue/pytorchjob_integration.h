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

namespace berth::controllers::kueue {

class PyTorchJobIntegration final : public JobIntegration {
 public:
  explicit PyTorchJobIntegration(client::Client& client) : client_(client) {}
  std::string Name() const override { return "kubeflow.org/pytorchjob"; }
  client::GroupVersionResource Resource() const override { return {"kubeflow.org", "v1", "pytorchjobs"}; }
  api::GroupVersionKind Kind() const override { return {"kubeflow.org", "v1", "PyTorchJob"}; }
  std::unique_ptr<GenericJob> Wrap(api::Object job) const override;
  std::string PodJobNameLabel() const override;

 private:
  client::Client& client_;
};

}  // namespace berth::controllers::kueue
