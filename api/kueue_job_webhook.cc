#include "api/kueue_job_webhook.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/job_kinds_validation.h"
#include "api/jobset_webhook.h"

namespace berth::api {
namespace {

bool HasControllerOwner(const Object& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return false;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return false;
  for (const Object& ref : *refs) {
    if (ref.is_object() && ref.value("controller", false)) return true;
  }
  return false;
}

// The queue-name label's value, "" when absent.
std::string QueueName(const Object& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return "";
  auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) return "";
  auto queue = labels->find(std::string(kQueueNameLabel));
  return queue != labels->end() && queue->is_string() ? queue->get<std::string>() : "";
}

bool Queued(const Object& obj) { return !QueueName(obj).empty(); }

std::string NamespaceOf(const Object& obj) {
  auto meta = obj.find("metadata");
  return meta != obj.end() && meta->is_object() ? meta->value("namespace", "") : "";
}

// The suspend field, its missing parents created; nullptr when a parent is
// not an object (the schema rejects such a job anyway).
Object* SuspendField(Object* job, const std::vector<std::string>& path) {
  Object* at = job;
  for (const std::string& key : path) {
    if (at->is_null()) *at = Object::object();
    if (!at->is_object()) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

// Kueue's defaulting on create, the kind's own webhook defaults (`defaults`, may be null)
// on create and update, and the kind's own checks (api/job_kinds_validation.h) on create
// and update.
class KueueJobStrategy final : public Strategy {
 public:
  using Defaults = void (*)(Object*);
  using Validate = FieldErrorList (*)(const Object&);
  KueueJobStrategy(KueueJobWebhook webhook, std::string_view framework, std::vector<std::string> path,
                   Defaults defaults, Validate validate)
      : webhook_(std::move(webhook)),
        framework_(framework),
        path_(std::move(path)),
        defaults_(defaults),
        validate_(validate) {}
  void PrepareForCreate(Object* obj) const override { webhook_.Default(obj, framework_, path_); }
  void Default(Object* obj) const override {
    if (defaults_ != nullptr) defaults_(obj);
  }
  FieldErrorList ValidateCreate(const Object& obj) const override { return validate_(obj); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs = validate_(obj);
    for (FieldError& e : webhook_.ValidateUpdate(obj, old, framework_, path_)) errs.push_back(std::move(e));
    return errs;
  }

 private:
  const KueueJobWebhook webhook_;
  const std::string framework_;
  const std::vector<std::string> path_;
  const Defaults defaults_;
  const Validate validate_;
};

}  // namespace

bool KueueManagesNamespace(std::string_view ns) { return ns != "kube-system" && ns != "kueue-system"; }

bool KueueJobWebhook::Default(Object* job, std::string_view framework,
                              const std::vector<std::string>& suspend_path) const {
  const bool queued = Queued(*job);
  if (options_.frameworks.count(framework) == 0) {
    // Not Kueue's: an absent suspend on a labelled job must not read as suspended.
    if (!queued || HasControllerOwner(*job)) return false;
    Object* suspend = SuspendField(job, suspend_path);
    if (suspend == nullptr || !suspend->is_null()) return false;
    *suspend = false;
    return true;
  }
  if (!Manages(*job, framework)) return false;
  Object* suspend = SuspendField(job, suspend_path);
  if (suspend == nullptr || (suspend->is_boolean() && suspend->get<bool>())) return false;
  *suspend = true;
  return true;
}

FieldErrorList KueueJobWebhook::ValidateUpdate(const Object& job, const Object& old, std::string_view framework,
                                               const std::vector<std::string>& suspend_path) const {
  if (options_.frameworks.count(framework) == 0) return {};
  const Object* suspend = &job;
  for (const std::string& key : suspend_path) {
    if (!suspend->is_object() || !suspend->contains(key)) {
      suspend = nullptr;
      break;
    }
    suspend = &(*suspend)[key];
  }
  if (suspend != nullptr && suspend->is_boolean() && suspend->get<bool>()) return {};
  const std::string now = QueueName(job);
  if (now == QueueName(old)) return {};
  return {Invalid(FieldPath("metadata").Child("labels").Key(kQueueNameLabel), now, "field is immutable")};
}

bool KueueJobWebhook::Manages(const Object& job, std::string_view framework) const {
  if (options_.frameworks.count(framework) == 0 || HasControllerOwner(job)) return false;
  return Queued(job) || (options_.manage_jobs_without_queue_name && KueueManagesNamespace(NamespaceOf(job)));
}

void RegisterKueueJobStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& options) {
  const KueueJobWebhook webhook(options);
  registry->Register(
      "jobset.x-k8s.io", "JobSet",
      std::make_unique<KueueJobStrategy>(webhook, kJobSetFramework, std::vector<std::string>{"spec", "suspend"},
                                         &DefaultJobSet, &ValidateJobSetTemplatesAndPatterns));
  registry->Register("kubeflow.org", "PyTorchJob",
                     std::make_unique<KueueJobStrategy>(webhook, kPyTorchJobFramework,
                                                        std::vector<std::string>{"spec", "runPolicy", "suspend"},
                                                        nullptr, &ValidatePyTorchJobTemplates));
}

}  // namespace berth::api
