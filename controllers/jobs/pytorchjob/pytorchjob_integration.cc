#include "controllers/jobs/pytorchjob/pytorchjob_integration.h"

#include <algorithm>

#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/jobs/common/owned_objects.h"
#include "controllers/jobs/pytorchjob/pytorchjob_controller.h"
#include "controllers/jobs/pytorchjob/pytorchjob_pods.h"

namespace berth::controllers::jobs::pytorchjob {

namespace {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

class PyTorchJob final : public kueue::GenericJob {
 public:
  PyTorchJob(api::Object job, bool pods_alive) : job_(std::move(job)), pods_alive_(pods_alive) {}

  const api::Object& object() const override { return job_; }

  std::vector<PodSet> PodSets() const override { return pytorchjob::PodSets(job_); }
  bool IsSuspended() const override { return BoolAt(ObjectAt(ObjectAt(job_, "spec"), "runPolicy"), "suspend", false); }
  void Suspend() override { MutableObject(&MutableObject(&job_, "spec"), "runPolicy")["suspend"] = true; }

  Status RunWithPodSetsInfo(const std::vector<kueue::PodSetInfo>& infos) override {
    const std::vector<std::string> types = pytorchjob::ReplicaTypes(job_);
    BERTH_RETURN_IF_ERROR(kueue::InjectPodSetsInfo(infos, types.size(), PodSpecs(types)));
    MutableObject(&MutableObject(&job_, "spec"), "runPolicy")["suspend"] = false;
    return Status::Ok();
  }
  bool RestorePodSetsInfo(const std::vector<kueue::PodSetInfo>& infos) override {
    const std::vector<std::string> types = pytorchjob::ReplicaTypes(job_);
    return kueue::RestorePodSetsInfo(infos, types.size(), PodSpecs(types));
  }
  std::optional<kueue::JobFinishedState> Finished() const override {
    return kueue::FinishedByConditions(job_, "Succeeded");
  }

  bool PodsReady() const override {
    int64_t want = 0, ready = 0;
    for (const PodSet& ps : PodSets()) want += ps.count;
    const api::Object& st = ObjectAt(ObjectAt(job_, "status"), "replicaStatuses");
    for (auto it = st.begin(); it != st.end(); ++it) ready += IntAt(*it, "active", 0) + IntAt(*it, "succeeded", 0);
    return want > 0 && ready >= want;
  }

  bool IsActive() const override { return pods_alive_; }

 private:
  // spec.pytorchReplicaSpecs[types[i]].template.spec
  kueue::PodSpecAt PodSpecs(std::vector<std::string> types) {
    return [this, types = std::move(types)](size_t i) {
      api::Object& replica = MutableObject(&MutableObject(&job_["spec"], "pytorchReplicaSpecs"), types[i]);
      return &MutableObject(&MutableObject(&replica, "template"), "spec");
    };
  }

  api::Object job_;
  bool pods_alive_;
};

}  // namespace

PyTorchJobIntegration::PyTorchJobIntegration(client::Client& client)
    : JobIntegration("kubeflow.org/pytorchjob", kPyTorchJobsResource, {"kubeflow.org", "v1", "PyTorchJob"},
                     std::string(kJobNameLabel)),
      client_(client) {}

std::optional<Duration> PyTorchJobIntegration::ActiveDeadline(const api::Object& job) const {
  const int64_t s = IntAt(ObjectAt(ObjectAt(job, "spec"), "runPolicy"), "activeDeadlineSeconds", 0);
  if (s <= 0) return std::nullopt;
  return std::chrono::seconds(s);
}

std::unique_ptr<kueue::GenericJob> PyTorchJobIntegration::Wrap(api::Object job) const {
  pytorchjob::ApplyDefaults(&job);  // replica-type keys as the operator's webhook writes them
  const bool alive = jobs::AnyPodAlive(client_, api::Namespace(job),
                                       PodJobNameLabel() + "=" + api::Name(job));
  return std::make_unique<PyTorchJob>(std::move(job), alive);
}

}  // namespace berth::controllers::jobs::pytorchjob
