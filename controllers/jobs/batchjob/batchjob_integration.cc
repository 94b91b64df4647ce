#include "controllers/jobs/batchjob/batchjob_integration.h"

#include <algorithm>

#include "api/conditions.h"
#include "api/kueue_job_webhook.h"
#include "api/unstructured.h"
#include "controllers/jobs/batchjob/job_pods.h"
#include "controllers/jobs/common/resources.h"

namespace berth::controllers::jobs::batchjob {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

class BatchJob final : public kueue::GenericJob {
 public:
  explicit BatchJob(api::Object job) : job_(std::move(job)) {}

  const api::Object& object() const override { return job_; }

  std::vector<PodSet> PodSets() const override { return batchjob::PodSets(job_); }

  bool IsSuspended() const override {
    auto spec = job_.find("spec");
    return spec != job_.end() && spec->is_object() && spec->value("suspend", false);
  }
  void Suspend() override { job_["spec"]["suspend"] = true; }

  Status RunWithPodSetsInfo(const std::vector<kueue::PodSetInfo>& infos) override {
    BERTH_RETURN_IF_ERROR(kueue::InjectPodSetsInfo(infos, 1, PodSpec()));
    // Partial admission: the Job runs with the admitted count (and as many completions
    // with job-completions-equal-parallelism).
    if (MinParallelism(job_)) SetParallelism(infos[0].count);
    job_["spec"]["suspend"] = false;
    return Status::Ok();
  }

  bool RestorePodSetsInfo(const std::vector<kueue::PodSetInfo>& infos) override {
    bool changed = false;
    // Partial admission: back to the Workload's count (the Job's own parallelism).
    if (!infos.empty() && MinParallelism(job_) && IntAt(ObjectAt(job_, "spec"), "parallelism", 0) != infos[0].count) {
      SetParallelism(infos[0].count);
      changed = true;
    }
    return kueue::RestorePodSetsInfo(infos, 1, PodSpec()) || changed;
  }

  std::optional<kueue::JobFinishedState> Finished() const override {
    if (IsConditionTrue(job_, "Complete") || IsConditionTrue(job_, "SuccessCriteriaMet")) {
      return kueue::JobFinishedState{true, "Job finished successfully"};
    }
    if (IsConditionTrue(job_, "Failed")) {
      std::string msg = ConditionField(job_, "Failed", "message");
      return kueue::JobFinishedState{false, msg.empty() ? "Job failed" : msg};
    }
    return std::nullopt;
  }

  bool PodsReady() const override {
    const api::Object& status = ObjectAt(job_, "status");
    int64_t ready = IntAt(status, "ready", 0) + IntAt(status, "succeeded", 0);
    return ready >= PodSets()[0].count;
  }

  bool IsActive() const override {
    const api::Object& status = ObjectAt(job_, "status");
    return IntAt(status, "active", 0) > 0 || IntAt(status, "terminating", 0) > 0;
  }

  bool ResetStartTime() override {
    auto status = job_.find("status");
    return status != job_.end() && status->is_object() && status->erase("startTime") > 0;
  }

 private:
  // spec.template.spec, the one podSet's.
  kueue::PodSpecAt PodSpec() {
    return [this](size_t) { return &job_["spec"]["template"]["spec"]; };
  }

  // Kueue's Job.RunWithPodSetsInfo / RestorePodSetsInfo: parallelism, and completions with
  // job-completions-equal-parallelism.
  void SetParallelism(int32_t count) {
    job_["spec"]["parallelism"] = count;
    if (api::CompletionsEqualParallelism(job_)) job_["spec"]["completions"] = count;
  }

  api::Object job_;
};

}  // namespace

BatchJobIntegration::BatchJobIntegration() : JobIntegration("batch/job", kJobsResource, {"batch", "v1", "Job"}) {}

std::unique_ptr<kueue::GenericJob> BatchJobIntegration::Wrap(api::Object job) const {
  return std::make_unique<BatchJob>(std::move(job));
}

std::optional<Duration> BatchJobIntegration::ActiveDeadline(const api::Object& job) const {
  const int64_t s = IntAt(ObjectAt(job, "spec"), "activeDeadlineSeconds", 0);
  if (s <= 0) return std::nullopt;
  return std::chrono::seconds(s);
}

}  // namespace berth::controllers::jobs::batchjob
