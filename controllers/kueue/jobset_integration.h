// The standalone JobSet integration (Kueue's pkg/controller/jobs/jobset, framework
// "jobset.x-k8s.io/jobset"):
//   PodSets      one per replicatedJob (jobset_children.h PodSets: name, count = replicas ×
//                min(parallelism, completions), the pod template).
//   Suspend      spec.suspend.
//   RunWithPodSetsInfo / RestorePodSetsInfo  the flavor's nodeSelector and tolerations
//                merged into / restored onto replicatedJobs[i].template.spec.template.spec
//                (the JobSet controller copies them to the suspended child Jobs on resume).
//   Finished     Completed / Failed condition True.
//   PodsReady    Σ replicatedJobsStatus (ready + succeeded) ≥ Σ replicas.
//   IsActive     some pod labelled jobset.sigs.k8s.io/jobset-name=<jobset> is not terminal.
// A JobSet a TrainJob creates carries no queue-name label, so only the TrainJob is queued.
// Thread-safety: see job_integration.h.
#pragma once

#include "controllers/kueue/job_integration.h"

namespace berth::controllers::kueue {

class JobSetIntegration final : public JobIntegration {
 public:
  explicit JobSetIntegration(client::Client& client) : client_(client) {}
  std::string Name() const override { return "jobset.x-k8s.io/jobset"; }
  client::GroupVersionResource Resource() const override { return {"jobset.x-k8s.io", "v1alpha2", "jobsets"}; }
  api::GroupVersionKind Kind() const override { return {"jobset.x-k8s.io", "v1alpha2", "JobSet"}; }
  std::unique_ptr<GenericJob> Wrap(api::Object job) const override;
  std::string PodJobNameLabel() const override;

 private:
  client::Client& client_;
};

}  // namespace berth::controllers::kueue
