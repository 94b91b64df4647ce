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

namespace berth::controllers::jobs::jobset {

class JobSetIntegration final : public kueue::JobIntegration {
 public:
  explicit JobSetIntegration(client::Client& client);
  std::unique_ptr<kueue::GenericJob> Wrap(api::Object job) const override;

 private:
  client::Client& client_;
};

}  // namespace berth::controllers::jobs::jobset
