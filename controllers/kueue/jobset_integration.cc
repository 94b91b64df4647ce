#include "controllers/kueue/jobset_integration.h"

#include <algorithm>

#include "controllers/job/object_fields.h"
#include "controllers/job/owned_objects.h"
#include "controllers/jobset/jobset_children.h"

namespace berth::controllers::kueue {

namespace {

using jobs::ArrayAt;
using jobs::BoolAt;
using jobs::IntAt;
using jobs::MutableObject;
using jobs::ObjectAt;

class JobSet final : public GenericJob {
 public:
  JobSet(api::Object job, bool pods_alive) : job_(std::move(job)), pods_alive_(pods_alive) {}

  const api::Object& object() const override { return job_; }

  std::vector<PodSetTemplate> PodSets() const override {
    std::vector<PodSetTemplate> out;
    for (const jobs::PodSet& ps : jobset::PodSets(job_)) out.push_back({ps.name, ps.count, ps.template_spec});
    return out;
  }
  bool IsSuspended() const override { return BoolAt(ObjectAt(job_, "spec"), "suspend", false); }
  void Suspend() override { MutableObject(&job_, "spec")["suspend"] = true; }

  Status RunWithPodSetsInfo(const std::vector<PodSetInfo>& infos) override {
    api::Object& rjobs = jobs::MutableArray(&MutableObject(&job_, "spec"), "replicatedJobs");
    if (infos.size() != rjobs.size()) {
      return InvalidError("expecting " + std::to_string(rjobs.size()) + " pod sets, got " + std::to_string(infos.size()));
    }
    for (size_t i = 0; i < infos.size(); ++i) {
      InjectPodSetInfo(infos[i], &PodSpec(&rjobs[i]));
    }
    job_["spec"]["suspend"] = false;
    return Status::Ok();
  }

  bool RestorePodSetsInfo(const std::vector<PodSetInfo>& infos) override {
    api::Object& rjobs = jobs::MutableArray(&MutableObject(&job_, "spec"), "replicatedJobs");
    if (infos.size() != rjobs.size()) return false;
    bool changed = false;
    for (size_t i = 0; i < infos.size(); ++i) {
      changed = RestorePodSetInfo(infos[i], &PodSpec(&rjobs[i])) || changed;
    }
    return changed;
  }

  std::optional<JobFinishedState> Finished() const override {
    if (jobs::HasTrueCondition(job_, "Completed")) {
      return JobFinishedState{true, jobs::ConditionField(job_, "Completed", "message")};
    }
    if (jobs::HasTrueCondition(job_, "Failed")) {
      return JobFinishedState{false, jobs::ConditionField(job_, "Failed", "message")};
    }
    return std::nullopt;
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
  static api::Object& PodSpec(api::Object* rjob) {
    api::Object& job_spec = MutableObject(&MutableObject(rjob, "template"), "spec");
    return MutableObject(&MutableObject(&job_spec, "template"), "spec");
  }

  api::Object job_;
  bool pods_alive_;
};

}  // namespace

std::unique_ptr<GenericJob> JobSetIntegration::Wrap(api::Object job) const {
  const bool alive = jobs::AnyPodAlive(client_, api::Namespace(job),
                                       PodJobNameLabel() + "=" + api::Name(job));
  return std::make_unique<JobSet>(std::move(job), alive);
}

std::string JobSetIntegration::PodJobNameLabel() const { return std::string(jobset::kJobSetNameKey); }

}  // namespace berth::controllers::kueue
