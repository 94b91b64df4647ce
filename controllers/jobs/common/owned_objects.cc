#include "controllers/jobs/common/owned_objects.h"

#include <algorithm>

#include "api/unstructured.h"

namespace berth::controllers::jobs {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

bool IsControlledBy(const api::Object& obj, const std::string& owner_uid) {
  for (const api::Object& ref : ArrayAt(ObjectAt(obj, "metadata"), "ownerReferences")) {
    if (BoolAt(ref, "controller", false) && StringAt(ref, "uid") == owner_uid) return true;
  }
  return false;
}

StatusOr<std::vector<api::Object>> ListOwned(client::Client& client, const client::GroupVersionResource& gvr,
                                             const api::Object& owner, const std::string& label_selector) {
  client::ListOptions opts;
  opts.label_selector = label_selector;
  // Shared items: in process, the stored objects themselves; only the owner's are copied.
  BERTH_ASSIGN_OR_RETURN(client::SharedObjectList list, client.ListShared(gvr.Namespace(api::Namespace(owner)), opts));
  std::vector<api::Object> out;
  for (const client::ObjectPtr& o : list.items) {
    if (IsControlledBy(*o, api::Uid(owner))) out.push_back(*o);
  }
  std::sort(out.begin(), out.end(),
            [](const api::Object& a, const api::Object& b) { return api::Name(a) < api::Name(b); });
  return out;
}

Status CreateIfAbsent(client::Client& client, const client::GroupVersionResource& gvr, const api::Object& obj) {
  auto res = client.Create(gvr.Namespace(api::Namespace(obj)), obj);
  if (!res.ok() && res.status().code() != Code::kAlreadyExists) return res.status();
  return Status::Ok();
}

Status DeleteIfPresent(client::Client& client, const client::GroupVersionResource& gvr, const std::string& ns,
                       const std::string& name, client::PropagationPolicy propagation) {
  client::DeleteOptions opts;
  opts.propagation_policy = propagation;
  Status st = client.Delete(gvr.Namespace(ns), name, opts);
  if (!st.ok() && st.code() != Code::kNotFound) return st;
  return Status::Ok();
}

Status WriteStatusIfChanged(client::Client& client, const client::GroupVersionResource& gvr,
                            const api::Object& original, const api::Object& updated) {
  if (Field(original, "status") == Field(updated, "status")) return Status::Ok();
  return client.UpdateStatus(gvr.Namespace(api::Namespace(updated)), updated).status();
}

bool EffectivelySuspended(const api::Object& job, const api::Object& suspend) {
  if (suspend.is_boolean()) return suspend.get<bool>();
  return !StringAt(ObjectAt(ObjectAt(job, "metadata"), "labels"), "kueue.x-k8s.io/queue-name").empty();
}

bool AnyPodAlive(client::Client& client, const std::string& ns, const std::string& label_selector) {
  client::ListOptions opts;
  opts.label_selector = label_selector;
  auto pods = client.List(client::GroupVersionResource{"", "v1", "pods"}.Namespace(ns), opts);
  if (!pods.ok()) return true;
  for (const api::Object& p : pods.value().items) {
    const std::string phase = StringAt(ObjectAt(p, "status"), "phase");
    if ((phase != "Succeeded" && phase != "Failed") || api::BeingDeleted(p)) return true;
  }
  return false;
}

}  // namespace berth::controllers::jobs
