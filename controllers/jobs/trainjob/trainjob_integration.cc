#include "controllers/jobs/trainjob/trainjob_integration.h"

#include <algorithm>

#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/jobs/common/owned_objects.h"
#include "controllers/jobs/jobset/jobset_children.h"
#include "controllers/jobs/trainjob/trainjob_builder.h"
#include "controllers/jobs/trainjob/trainjob_controller.h"

namespace berth::controllers::jobs::trainjob {

namespace {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

// The TrainJob without Kueue's runtime patch; true when it had one.
bool WithoutKueuePatch(const api::Object& tj, api::Object* out) {
  *out = tj;
  api::Object& spec = api::MutableObject(out, "spec");
  if (!spec.contains("runtimePatches") || !spec["runtimePatches"].is_array()) return false;
  api::Object& patches = spec["runtimePatches"];
  const size_t before = patches.size();
  patches.erase(std::remove_if(patches.begin(), patches.end(),
                               [](const api::Object& p) { return StringAt(p, "manager") == kKueueRuntimePatchManager; }),
                patches.end());
  const bool had = patches.size() != before;
  if (patches.empty()) spec.erase("runtimePatches");
  return had;
}

class TrainJob final : public kueue::GenericJob {
 public:
  TrainJob(api::Object job, std::vector<PodSet> pod_sets, int64_t replicas, bool pods_alive)
      : job_(std::move(job)), pod_sets_(std::move(pod_sets)), replicas_(replicas), pods_alive_(pods_alive) {}

  const api::Object& object() const override { return job_; }
  std::vector<PodSet> PodSets() const override { return pod_sets_; }
  bool IsSuspended() const override { return BoolAt(ObjectAt(job_, "spec"), "suspend", false); }
  void Suspend() override { job_["spec"]["suspend"] = true; }

  Status RunWithPodSetsInfo(const std::vector<kueue::PodSetInfo>& infos) override {
    if (infos.size() != pod_sets_.size()) {
      return InvalidError("invalid podset infos: expecting " + std::to_string(pod_sets_.size()) + " podset, got " +
                          std::to_string(infos.size()));
    }
    api::Object rjobs = api::Object::array();
    for (size_t i = 0; i < infos.size(); ++i) {
      if (infos[i].node_selector.empty() && infos[i].tolerations.empty()) continue;
      const api::Object& tmpl_spec = ObjectAt(pod_sets_[i].template_spec, "spec");
      api::Object pod_spec = api::Object::object();
      if (!infos[i].node_selector.empty()) {
        api::Object ns = ObjectAt(tmpl_spec, "nodeSelector");
        for (const auto& [k, v] : infos[i].node_selector) ns[k] = v;
        pod_spec["nodeSelector"] = ns;
      }
      if (!infos[i].tolerations.empty()) {
        api::Object tols = ArrayAt(tmpl_spec, "tolerations");
        for (const api::Object& t : infos[i].tolerations) {
          if (std::find(tols.begin(), tols.end(), t) == tols.end()) tols.push_back(t);
        }
        pod_spec["tolerations"] = tols;
      }
      rjobs.push_back({{"name", pod_sets_[i].name}, {"template", {{"spec", {{"template", {{"spec", pod_spec}}}}}}}});
    }
    api::Object stripped;
    WithoutKueuePatch(job_, &stripped);
    job_ = std::move(stripped);
    if (!rjobs.empty()) {
      api::MutableArray(&api::MutableObject(&job_, "spec"), "runtimePatches")
          .push_back({{"manager", kKueueRuntimePatchManager},
                      {"trainingRuntimeSpec", {{"template", {{"spec", {{"replicatedJobs", rjobs}}}}}}}});
    }
    job_["spec"]["suspend"] = false;
    return Status::Ok();
  }

  bool RestorePodSetsInfo(const std::vector<kueue::PodSetInfo>&) override {
    api::Object stripped;
    if (!WithoutKueuePatch(job_, &stripped)) return false;
    job_ = std::move(stripped);
    return true;
  }

  std::optional<kueue::JobFinishedState> Finished() const override {
    return kueue::FinishedByConditions(job_, "Complete", "TrainJob failed");
  }

  bool PodsReady() const override {
    int64_t ready = 0;
    for (const api::Object& s : ArrayAt(ObjectAt(job_, "status"), "jobsStatus")) {
      ready += IntAt(s, "ready", 0) + IntAt(s, "succeeded", 0);
    }
    return replicas_ > 0 && ready >= replicas_;
  }

  bool IsActive() const override { return pods_alive_; }

 private:
  api::Object job_;
  std::vector<PodSet> pod_sets_;
  int64_t replicas_;
  bool pods_alive_;
};

}  // namespace

TrainJobIntegration::TrainJobIntegration(client::Client& client)
    : JobIntegration("trainer.kubeflow.org/trainjob", kTrainJobsResource,
                     {"trainer.kubeflow.org", "v1alpha1", "TrainJob"}, std::string(jobset::kJobSetNameKey)),
      client_(client) {}

std::unique_ptr<kueue::GenericJob> TrainJobIntegration::Wrap(api::Object job) const {
  std::vector<PodSet> pod_sets;
  int64_t replicas = 0;
  auto runtime = trainjob::ResolveRuntime(client_, job);
  if (runtime.ok()) {
    api::Object base;
    WithoutKueuePatch(job, &base);
    auto sets = trainjob::PodSets(base, runtime.value());
    if (sets.ok()) pod_sets = std::move(sets).value();
    auto built = trainjob::Build(base, runtime.value());
    if (built.ok()) {
      for (const api::Object& rjob : ArrayAt(ObjectAt(built.value().jobset, "spec"), "replicatedJobs")) {
        replicas += IntAt(rjob, "replicas", 1);
      }
    }
  }
  const bool pods_alive = jobs::AnyPodAlive(client_, api::Namespace(job),
                                            PodJobNameLabel() + "=" + api::Name(job));
  return std::make_unique<TrainJob>(std::move(job), std::move(pod_sets), replicas, pods_alive);
}

}  // namespace berth::controllers::jobs::trainjob
