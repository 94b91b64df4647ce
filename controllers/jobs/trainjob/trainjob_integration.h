// The TrainJob integration (Kueue's pkg/controller/jobs/trainjob/trainjob_controller.go,
// framework "trainer.kubeflow.org/trainjob").
//
//   PodSets      those of the JobSet the TrainJob builds (trainjob::PodSets: one per
//                replicatedJob, count = replicas × min(parallelism, completions)), built
//                from the runtime snapshot (trainjob_controller.h ResolveRuntime) with
//                Kueue's own runtime patch left out; none while the runtime is missing
//                (the reconciler then creates no Workload).
//   Suspend      spec.suspend.
//   RunWithPodSetsInfo  writes the runtime patch with manager kueue.x-k8s.io/manager
//                (spec.runtimePatches, list-map by manager) carrying, per replicatedJob,
//                the pod template's nodeSelector merged with the flavor's nodeLabels and
//                its tolerations plus the flavor's (tolerations are atomic in a
//                PodSpecPatch), then unsuspends.
//   RestorePodSetsInfo  removes that patch (the templates are the runtime's again).
//   Finished     Complete / Failed condition True.
//   PodsReady    Σ jobsStatus (ready + succeeded) ≥ Σ replicatedJob replicas.
//   IsActive     some pod labelled jobset.sigs.k8s.io/jobset-name=<trainjob> is not
//                terminal — running or still terminating (berth: an evicted TrainJob
//                keeps its quota until its old pods are gone; upstream looks at
//                jobsStatus.active, which ignores terminating pods).
//
// Wrap reads the snapshot (or runtime) and the pods through the client given at
// construction, so it does API reads; errors there leave PodSets empty.
// Thread-safety: see job_integration.h.
#pragma once

#include "controllers/kueue/job_integration.h"

namespace berth::controllers::jobs::trainjob {

inline constexpr char kKueueRuntimePatchManager[] = "kueue.x-k8s.io/manager";

class TrainJobIntegration final : public kueue::JobIntegration {
 public:
  explicit TrainJobIntegration(client::Client& client);
  std::unique_ptr<kueue::GenericJob> Wrap(api::Object job) const override;

 private:
  client::Client& client_;
};

}  // namespace berth::controllers::jobs::trainjob
