#include "controllers/serviceaccount/serviceaccounts_controller.h"

#include "api/unstructured.h"

namespace berth::controllers::serviceaccount {

Status ServiceAccountsController::Reconcile(const std::string& ns) {
  client::ObjectPtr namespace_obj = namespaces_.GetIndexer().Get("", ns);
  if (namespace_obj == nullptr) return Status::Ok();
  if (api::NestedString(*namespace_obj, {"status", "phase"}) == "Terminating") return Status::Ok();
  for (const std::string& name : names_) {
    if (service_accounts_.GetIndexer().Get(ns, name) != nullptr) continue;
    api::Object sa = {
        {"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", name}, {"namespace", ns}}}};
    auto created = client_.Create(kServiceAccounts.Namespace(ns), sa);
    // AlreadyExists: the cache was behind. Forbidden in a namespace being deleted:
    // upstream's controller ignores it too (the namespace is going away).
    if (!created.ok() && created.status().code() != Code::kAlreadyExists) {
      if (created.status().code() == Code::kForbidden) continue;
      return created.status();
    }
  }
  return Status::Ok();
}

}  // namespace berth::controllers::serviceaccount
