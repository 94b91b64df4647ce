#include "api/kueue_job_webhook.h"

#include <memory>
#include <string>
#include <vector>

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

bool Queued(const Object& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return false;
  auto labels = meta->find("labels");
  if (labels == meta->end() || !labels->is_object()) return false;
  auto queue = labels->find(std::string(kQueueNameLabel));
  return queue != labels->end() && queue->is_string() && !queue->get<std::string>().empty();
}

class KueueJobStrategy final : public Strategy {
 public:
  explicit KueueJobStrategy(std::vector<std::string> path) : path_(std::move(path)) {}
  void PrepareForCreate(Object* obj) const override {
    if (path_.size() == 2) {
      SuspendQueuedJobOnCreate(obj, {path_[0], path_[1]});
    } else {
      SuspendQueuedJobOnCreate(obj, {path_[0], path_[1], path_[2]});
    }
  }

 private:
  std::vector<std::string> path_;
};

}  // namespace

bool SuspendQueuedJobOnCreate(Object* job, std::initializer_list<std::string_view> suspend_path) {
  if (!Queued(*job) || HasControllerOwner(*job)) return false;
  Object* at = job;
  for (std::string_view key : suspend_path) {
    if (at->is_null()) *at = Object::object();  // a missing parent (spec.runPolicy)
    if (!at->is_object()) return false;
    at = &(*at)[std::string(key)];
  }
  if (at->is_boolean() && at->get<bool>()) return false;
  *at = true;
  return true;
}

void RegisterKueueJobStrategies(StrategyRegistry* registry) {
  registry->Register("batch", "Job", std::make_unique<KueueJobStrategy>(std::vector<std::string>{"spec", "suspend"}));
  registry->Register("jobset.x-k8s.io", "JobSet",
                     std::make_unique<KueueJobStrategy>(std::vector<std::string>{"spec", "suspend"}));
  registry->Register("kubeflow.org", "PyTorchJob",
                     std::make_unique<KueueJobStrategy>(std::vector<std::string>{"spec", "runPolicy", "suspend"}));
}

}  // namespace berth::api
