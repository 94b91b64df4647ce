#include "api/trainer_strategies.h"

#include <memory>
#include <set>
#include <string>

#include "api/kueue_job_webhook.h"
#include "api/pod_validation.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

constexpr std::string_view kImmutable = "field is immutable";
constexpr std::string_view kReservedEnv[] = {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR",
                                             "PET_MASTER_PORT"};

// The OpenAPI type apiextensions reports as the value of a failed CEL rule.
std::string CelType(const Object& v) {
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_string()) return "string";
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_boolean()) return "boolean";
  return "object";
}

bool IsRfc1035Label(const std::string& s) {
  if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return s.back() != '-';
}

FieldErrorList ValidateTrainJob(const Object& obj) {
  FieldErrorList errs;
  const std::string name = Name(obj);
  if (!IsRfc1035Label(name))
    errs.push_back(Invalid(FieldPath(), "object", "metadata.name must match RFC 1035 DNS label format"));
  if (name.size() > 63)
    errs.push_back(Invalid(FieldPath(), "object", "metadata.name must be no more than 63 characters"));
  const Object& spec = Field(obj, "spec");
  const Object& nproc = Field(Field(spec, "trainer"), "numProcPerNode");
  if (!nproc.is_null()) {
    bool ok = (nproc.is_number_integer() && nproc.get<int64_t>() > 0) ||
              (nproc.is_string() && (nproc == "auto" || nproc == "cpu" || nproc == "gpu"));
    if (!ok) {
      errs.push_back(Invalid(FieldPath("spec").Child("trainer").Child("numProcPerNode"), CelType(nproc),
                             "NumProcPerNode must be equal to auto, cpu, gpu, or int value"));
    }
  }
  const Object& managed_by = Field(spec, "managedBy");
  if (managed_by.is_string() && managed_by != "trainer.kubeflow.org/trainjob-controller" &&
      managed_by != "kueue.x-k8s.io/multikueue") {
    errs.push_back(
        Invalid(FieldPath("spec").Child("managedBy"), "string",
                "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set"));
  }
  FieldErrorList env = ValidateTrainJobReservedEnv(obj);
  errs.insert(errs.end(), env.begin(), env.end());
  return errs;
}

class TrainJobStrategy : public Strategy {
 public:
  explicit TrainJobStrategy(KueueJobWebhook kueue) : kueue_(std::move(kueue)) {}
  // Kueue's job webhook: a TrainJob Kueue manages is created suspended (kueue_job_webhook.h).
  void PrepareForCreate(Object* obj) const override { kueue_.Default(obj, kTrainJobFramework, {"spec", "suspend"}); }
  FieldErrorList ValidateCreate(const Object& obj) const override {
    FieldErrorList errs = ValidateTrainJob(obj);
    for (FieldError& e : kueue_.ValidateCreate(obj, kTrainJobFramework)) errs.push_back(std::move(e));
    return errs;
  }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs = ValidateTrainJob(obj);
    for (FieldError& e : kueue_.ValidateUpdate(obj, old, kTrainJobFramework, {"spec", "suspend"})) {
      errs.push_back(std::move(e));
    }
    const Object& spec = Field(obj, "spec");
    const Object& old_spec = Field(old, "spec");
    for (std::string_view f : {"runtimeRef", "initializer", "trainer", "activeDeadlineSeconds", "managedBy"}) {
      const Object& now = Field(spec, f);
      const Object& before = Field(old_spec, f);
      // Transition rules run when the field is present in both objects.
      if (!now.is_null() && !before.is_null() && now != before) {
        errs.push_back(Invalid(FieldPath("spec").Child(f), CelType(now), std::string(kImmutable)));
      }
    }
    return errs;
  }

 private:
  const KueueJobWebhook kueue_;
};

class TrainingRuntimeStrategy : public Strategy {
 public:
  // The pod templates (api/pod_validation.h), which upstream checks only when the
  // JobSet's Jobs and Pods are created; berth on create and update.
  static FieldErrorList ValidateTemplates(const Object& obj) {
    FieldErrorList errs;
    const FieldPath rjobs_path = FieldPath("spec").Child("template").Child("spec").Child("replicatedJobs");
    const Object& rjobs = ArrayAt(NestedField(obj, {"spec", "template", "spec"}), "replicatedJobs");
    for (size_t i = 0; i < rjobs.size(); ++i) {
      for (FieldError& e :
           ValidatePodTemplateSpec(NestedField(rjobs[i], {"template", "spec", "template"}),
                                   rjobs_path.Index(i).Child("template").Child("spec").Child("template"))) {
        errs.push_back(std::move(e));
      }
    }
    return errs;
  }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override { return ValidateTemplates(obj); }
  FieldErrorList ValidateCreate(const Object& obj) const override {
    static const std::pair<std::string_view, std::string_view> kExpected[] = {
        {"trainer", "node"},
        {"dataset-initializer", "dataset-initializer"},
        {"model-initializer", "model-initializer"}};
    FieldErrorList errs = ValidateTemplates(obj);
    const FieldPath rjobs_path = FieldPath("spec").Child("template").Child("spec").Child("replicatedJobs");
    const Object& rjobs = Field(Field(Field(Field(obj, "spec"), "template"), "spec"), "replicatedJobs");
    if (!rjobs.is_array()) return errs;
    for (size_t i = 0; i < rjobs.size(); ++i) {
      const Object& rjob = rjobs[i];
      const Object& ancestor = Field(Field(Field(Field(rjob, "template"), "metadata"), "labels"),
                                     "trainer.kubeflow.org/trainjob-ancestor-step");
      if (!ancestor.is_string()) continue;
      std::string_view container;
      for (const auto& [a, c] : kExpected) {
        if (ancestor == a) container = c;
      }
      if (container.empty()) continue;
      const Object& replicas = Field(rjob, "replicas");
      if (replicas.is_number_integer() && replicas.get<int64_t>() != 1) {
        errs.push_back(Invalid(rjobs_path.Index(i).Child("replicas"), replicas, "always must be 1"));
      }
      const Object& containers =
          Field(Field(Field(Field(Field(rjob, "template"), "spec"), "template"), "spec"), "containers");
      bool found = false;
      if (containers.is_array()) {
        for (const Object& c : containers) found |= Field(c, "name") == container;
      }
      if (!found) {
        errs.push_back(Invalid(
            rjobs_path.Index(i).Child("template").Child("spec").Child("template").Child("spec").Child("containers"),
            containers.is_null() ? Object::array() : containers,
            "must contain the required container for the ancestor: " + ancestor.get<std::string>()));
      }
    }
    return errs;
  }
};

}  // namespace

FieldErrorList ValidateTrainJobReservedEnv(const Object& trainjob) {
  const Object& env = Field(Field(Field(trainjob, "spec"), "trainer"), "env");
  if (!env.is_array()) return {};
  std::set<std::string> reserved;  // sorted, as Go's sets.List
  for (const Object& e : env) {
    const Object& n = Field(e, "name");
    for (std::string_view r : kReservedEnv) {
      if (n.is_string() && n == r) reserved.insert(std::string(r));
    }
  }
  if (reserved.empty()) return {};
  std::string list;
  for (const std::string& r : reserved) list += (list.empty() ? "" : " ") + r;
  return {Invalid(FieldPath("spec").Child("trainer").Child("env"), env,
                  "must not have reserved envs, invalid envs configured: [" + list + "]")};
}

void RegisterTrainerStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& kueue) {
  const std::string group(kTrainerGroupName);
  registry->Register(group, "TrainJob", std::make_unique<TrainJobStrategy>(KueueJobWebhook(kueue)));
  registry->Register(group, "TrainingRuntime", std::make_unique<TrainingRuntimeStrategy>());
  registry->Register(group, "ClusterTrainingRuntime", std::make_unique<TrainingRuntimeStrategy>());
}

}  // namespace berth::api
