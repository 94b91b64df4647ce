// PodSet: one homogeneous group of pods of a job, as Kueue's job integrations derive them
// (kueue.x-k8s.io Workload spec.podSets[]; Kueue's GenericJob.PodSets): a name (DNS label,
// ≤63), a pod count and the pod template every pod of the group is created from. Each job
// kind derives its podSets beside its translation (controllers/jobs/<kind>/):
//   batch/v1 Job            batchjob::PodSets    one podSet "main"
//   JobSet                  jobset::PodSets      one per replicatedJob
//   TrainJob                trainjob::PodSets    the JobSet it builds, as JobSet's
//   PyTorchJob              pytorchjob::PodSets  one per replica type (master, worker)
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/object.h"

namespace berth::controllers::kueue {

struct PodSet {
  std::string name;
  int32_t count = 0;
  api::Object template_spec = api::Object::object();  // PodTemplateSpec {metadata, spec}
  // The fewest pods the podSet may be admitted with (partial admission; Kueue derives it
  // for batch/v1 Jobs only, from kueue.x-k8s.io/job-min-parallelism). nullopt: none.
  // Last, so PodSet{name, count, template} keeps meaning what it says.
  std::optional<int32_t> min_count;

  // The Workload spec.podSets[] element: {name, count, [minCount], template}.
  api::Object ToWorkloadPodSet() const {
    api::Object out{{"name", name}, {"count", count}, {"template", template_spec}};
    if (min_count) out["minCount"] = *min_count;
    return out;
  }
  bool operator==(const PodSet&) const = default;
};

}  // namespace berth::controllers::kueue
