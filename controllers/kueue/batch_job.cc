#include "controllers/kueue/batch_job.h"

#include <algorithm>

namespace berth::controllers::kueue {

namespace {

int64_t IntAt(const api::Object& obj, const char* a, const char* b, int64_t def) {
  auto x = obj.find(a);
  if (x == obj.end() || !x->is_object()) return def;
  auto y = x->find(b);
  if (y == x->end() || !y->is_number_integer()) return def;
  return y->get<int64_t>();
}

bool ConditionTrue(const api::Object& job, const std::string& type) {
  auto st = job.find("status");
  if (st == job.end() || !st->is_object() || !st->contains("conditions")) return false;
  for (const api::Object& c : (*st)["conditions"]) {
    if (c.value("type", "") == type && c.value("status", "") == "True") return true;
  }
  return false;
}

std::string ConditionMessage(const api::Object& job, const std::string& type) {
  for (const api::Object& c : job["status"]["conditions"]) {
    if (c.value("type", "") == type) return c.value("message", "");
  }
  return "";
}

class BatchJob final : public GenericJob {
 public:
  explicit BatchJob(api::Object job) : job_(std::move(job)) {}

  const api::Object& object() const override { return job_; }

  std::vector<PodSetTemplate> PodSets() const override {
    int64_t count = IntAt(job_, "spec", "parallelism", 1);
    int64_t completions = IntAt(job_, "spec", "completions", -1);
    if (completions >= 0 && completions < count) count = completions;
    api::Object tmpl = job_.contains("spec") ? job_["spec"].value("template", api::Object::object())
                                             : api::Object::object();
    return {{"main", static_cast<int32_t>(count), std::move(tmpl)}};
  }

  bool IsSuspended() const override {
    auto spec = job_.find("spec");
    return spec != job_.end() && spec->is_object() && spec->value("suspend", false);
  }
  void Suspend() override { job_["spec"]["suspend"] = true; }

  Status RunWithPodSetsInfo(const std::vector<PodSetInfo>& infos) override {
    if (infos.size() != 1) return InvalidError("expecting 1 pod set, got " + std::to_string(infos.size()));
    InjectPodSetInfo(infos[0], &job_["spec"]["template"]["spec"]);
    job_["spec"]["suspend"] = false;
    return Status::Ok();
  }

  bool RestorePodSetsInfo(const std::vector<PodSetInfo>& infos) override {
    if (infos.size() != 1) return false;
    return RestorePodSetInfo(infos[0], &job_["spec"]["template"]["spec"]);
  }

  std::optional<JobFinishedState> Finished() const override {
    if (ConditionTrue(job_, "Complete") || ConditionTrue(job_, "SuccessCriteriaMet")) {
      return JobFinishedState{true, "Job finished successfully"};
    }
    if (ConditionTrue(job_, "Failed")) {
      std::string msg = ConditionMessage(job_, "Failed");
      return JobFinishedState{false, msg.empty() ? "Job failed" : msg};
    }
    return std::nullopt;
  }

  bool PodsReady() const override {
    int64_t ready = IntAt(job_, "status", "ready", 0) + IntAt(job_, "status", "succeeded", 0);
    return ready >= PodSets()[0].count;
  }

  bool IsActive() const override {
    return IntAt(job_, "status", "active", 0) > 0 || IntAt(job_, "status", "terminating", 0) > 0;
  }

 private:
  api::Object job_;
};

}  // namespace

std::unique_ptr<GenericJob> BatchJobIntegration::Wrap(api::Object job) const {
  return std::make_unique<BatchJob>(std::move(job));
}

}  // namespace berth::controllers::kueue
