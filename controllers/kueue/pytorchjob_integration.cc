#include "controllers/kueue/pytorchjob_integration.h"

#include <algorithm>

#include "controllers/job/object_fields.h"
#include "controllers/job/owned_objects.h"
#include "controllers/pytorchjob/pytorchjob_pods.h"

namespace berth::controllers::kueue {

namespace {

using jobs::ArrayAt;
using jobs::BoolAt;
using jobs::IntAt;
using jobs::MutableObject;
using jobs::ObjectAt;

class PyTorchJob final : public GenericJob {
 public:
  PyTorchJob(api::Object job, bool pods_alive) : job_(std::move(job)), pods_alive_(pods_alive) {}

  const api::Object& object() const override { return job_; }

  std::vector<PodSetTemplate> PodSets() const override {
    std::vector<PodSetTemplate> out;
    for (const jobs::PodSet& ps : pytorchjob::PodSets(job_)) out.push_back({ps.name, ps.count, ps.template_spec});
    return out;
  }
  bool IsSuspended() const override { return BoolAt(ObjectAt(ObjectAt(job_, "spec"), "runPolicy"), "suspend", false); }
  void Suspend() override { MutableObject(&MutableObject(&job_, "spec"), "runPolicy")["suspend"] = true; }

  Status RunWithPodSetsInfo(const std::vector<PodSetInfo>& infos) override {
    const std::vector<std::string> types = pytorchjob::ReplicaTypes(job_);
    if (infos.size() != types.size()) {
      return InvalidError("expecting " + std::to_string(types.size()) + " pod sets, got " + std::to_string(infos.size()));
    }
    for (size_t i = 0; i < types.size(); ++i) {
      InjectPodSetInfo(infos[i], &PodSpec(types[i]));
    }
    MutableObject(&MutableObject(&job_, "spec"), "runPolicy")["suspend"] = false;
    return Status::Ok();
  }

  bool RestorePodSetsInfo(const std::vector<PodSetInfo>& infos) override {
    const std::vector<std::string> types = pytorchjob::ReplicaTypes(job_);
    if (infos.size() != types.size()) return false;
    bool changed = false;
    for (size_t i = 0; i < types.size(); ++i) {
      changed = RestorePodSetInfo(infos[i], &PodSpec(types[i])) || changed;
    }
    return changed;
  }

  std::optional<JobFinishedState> Finished() const override {
    if (jobs::HasTrueCondition(job_, "Succeeded")) {
      return JobFinishedState{true, jobs::ConditionField(job_, "Succeeded", "message")};
    }
    if (jobs::HasTrueCondition(job_, "Failed")) {
      return JobFinishedState{false, jobs::ConditionField(job_, "Failed", "message")};
    }
    return std::nullopt;
  }

  bool PodsReady() const override {
    int64_t want = 0, ready = 0;
    for (const PodSetTemplate& ps : PodSets()) want += ps.count;
    const api::Object& st = ObjectAt(ObjectAt(job_, "status"), "replicaStatuses");
    for (auto it = st.begin(); it != st.end(); ++it) ready += IntAt(*it, "active", 0) + IntAt(*it, "succeeded", 0);
    return want > 0 && ready >= want;
  }

  bool IsActive() const override { return pods_alive_; }

 private:
  api::Object& PodSpec(const std::string& type) {
    api::Object& replica = MutableObject(&MutableObject(&job_["spec"], "pytorchReplicaSpecs"), type);
    return MutableObject(&MutableObject(&replica, "template"), "spec");
  }

  api::Object job_;
  bool pods_alive_;
};

}  // namespace

std::unique_ptr<GenericJob> PyTorchJobIntegration::Wrap(api::Object job) const {
  pytorchjob::ApplyDefaults(&job);  // replica-type keys as the operator's webhook writes them
  const bool alive = jobs::AnyPodAlive(client_, api::Namespace(job),
                                       PodJobNameLabel() + "=" + api::Name(job));
  return std::make_unique<PyTorchJob>(std::move(job), alive);
}

std::string PyTorchJobIntegration::PodJobNameLabel() const { return std::string(pytorchjob::kJobNameLabel); }

}  // namespace berth::controllers::kueue
