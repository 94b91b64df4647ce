#include "controllers/jobs/common/job_kind_reconciler.h"

#include "client/indexer.h"
#include "controllers/jobs/common/owned_objects.h"

namespace berth::controllers::jobs {

Status JobKindReconciler::Reconcile(const std::string& key) {
  auto [ns, name] = client::SplitMetaNamespaceKey(key);
  auto got = client_.Get(resource_.Namespace(ns), name);
  if (!got.ok()) return got.status().code() == Code::kNotFound ? Status::Ok() : got.status();
  if (api::BeingDeleted(got.value())) return Status::Ok();
  return Sync(key, got.value());
}

Status JobKindReconciler::ReconcileAll() {
  BERTH_ASSIGN_OR_RETURN(client::ObjectList list, client_.List(resource_));
  Status first = Status::Ok();
  for (const api::Object& obj : list.items) {
    Status st = Reconcile(client::MetaNamespaceKey(obj));
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace berth::controllers::jobs
