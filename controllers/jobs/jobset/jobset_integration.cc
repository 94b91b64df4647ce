#include "controllers/jobs/jobset/jobset_integration.h"

#include <algorithm>

#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/jobs/common/owned_objects.h"
#include "controllers/jobs/jobset/jobset_children.h"
#include "controllers/jobs/jobset/jobset_controller.h"

namespace berth::controllers::jobs::jobset {

namespace {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

class JobSet final : public kueue::GenericJob {
 public:
  JobSet(api::Object job, bool pods_alive) : job_(std::move(job)), pods_alive_(pods_alive) {}

  const api::Object& object() const override { return job_; }

  std::vector<PodSet> PodSets() const override { return jobset::PodSets(job_); }
  bool IsSuspended() const override { return BoolAt(ObjectAt(job_, "spec"), "suspend", false); }
  void Suspend() override { MutableObject(&job_, "spec")["suspend"] = true; }

  Status RunWithPodSetsInfo(const std::vector<kueue::PodSetInfo>& infos) override {
    BERTH_RETURN_IF_ERROR(kueue::InjectPodSetsInfo(infos, ReplicatedJobs().size(), PodSpecs()));
    job_["spec"]["suspend"] = false;
    return Status::Ok();
  }
  bool RestorePodSetsInfo(const std::vector<kueue::PodSetInfo>& infos) override {
    return kueue::RestorePodSetsInfo(infos, ReplicatedJobs().size(), PodSpecs());
  }
  std::optional<kueue::JobFinishedState> Finished() const override {
    return kueue::FinishedByConditions(job_, "Completed");
  }

  bool PodsReady() const override {
    int64_t want = 0, ready = 0;
    for (const api::Object& r : ArrayAt(ObjectAt(job_, "spec"), "replicatedJobs")) want += IntAt(r, "replicas", 1);
    for (const api::Object& s : ArrayAt(ObjectAt(job_, "status"), "replicatedJobsStatus")) {
      ready += IntAt(s, "ready", 0) + IntAt(s, "succeeded", 0);
    }
    return want > 0 && ready >= want;
  }

  bool IsActive() const override { return pods_alive_; }

 private:
  api::Object& ReplicatedJobs() { return MutableArray(&MutableObject(&job_, "spec"), "replicatedJobs"); }
  // replicatedJobs[i].template.spec.template.spec
  kueue::PodSpecAt PodSpecs() {
    return [this](size_t i) {
      api::Object& job_spec = MutableObject(&MutableObject(&ReplicatedJobs()[i], "template"), "spec");
      return &MutableObject(&MutableObject(&job_spec, "template"), "spec");
    };
  }

  api::Object job_;
  bool pods_alive_;
};

}  // namespace

JobSetIntegration::JobSetIntegration(client::Client& client)
    : JobIntegration("jobset.x-k8s.io/jobset", kJobSetsResource, {"jobset.x-k8s.io", "v1alpha2", "JobSet"},
                     std::string(kJobSetNameKey)),
      client_(client) {}

std::unique_ptr<kueue::GenericJob> JobSetIntegration::Wrap(api::Object job) const {
  const bool alive = jobs::AnyPodAlive(client_, api::Namespace(job),
                                       PodJobNameLabel() + "=" + api::Name(job));
  return std::make_unique<JobSet>(std::move(job), alive);
}

}  // namespace berth::controllers::jobs::jobset
