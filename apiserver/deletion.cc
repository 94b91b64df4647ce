#include "apiserver/deletion.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "api/unstructured.h"
#include "apiserver/object_ops.h"

namespace berth::apiserver {

using nlohmann::json;

bool HasFinalizer(const api::Object& obj, std::string_view finalizer) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return false;
  auto f = m->find("finalizers");
  if (f == m->end() || !f->is_array()) return false;
  for (const auto& v : *f) {
    if (v.is_string() && v.get_ref<const std::string&>() == finalizer) return true;
  }
  return false;
}

namespace {

// metadata.finalizers' strings, in order.
std::vector<std::string> Finalizers(const api::Object& obj) {
  std::vector<std::string> out;
  const json& list = api::NestedField(obj, {"metadata", "finalizers"});
  if (!list.is_array()) return out;
  for (const json& f : list) {
    if (f.is_string()) out.push_back(f.get<std::string>());
  }
  return out;
}

bool SameSet(std::vector<std::string> a, std::vector<std::string> b) {
  for (auto* v : {&a, &b}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return a == b;
}

}  // namespace

std::string_view FinalizerPolicy(const api::Object& obj, std::string_view otherwise) {
  if (HasFinalizer(obj, kFinalizerOrphan)) return kPropagationOrphan;
  if (HasFinalizer(obj, kFinalizerForeground)) return kPropagationForeground;
  return otherwise;
}

bool GarbageCollectorIgnores(const api::GroupResource& resource) {
  return resource.group.empty() && resource.resource == "events";
}

std::string_view Deleter::DefaultPropagationPolicy(const api::ResourceDefinition& def) {
  // batch/v1 Job kept OrphanDependents as its default (DefaultGarbageCollectionPolicy).
  if (def.group == "batch" && def.names.kind == "Job") return kPropagationOrphan;
  return kPropagationBackground;
}

StatusOr<store::DeleteResult> Deleter::Delete(const api::ResourceDefinition& def, const store::ObjectKey& key,
                                              const DeleteRequest& request) const {
  BERTH_ASSIGN_OR_RETURN(api::Object current, store_.Get(key));
  if (def.group.empty() && def.names.kind == "Namespace" &&
      std::find(std::begin(kImmortalNamespaces), std::end(kImmortalNamespaces), key.name) !=
          std::end(kImmortalNamespaces)) {
    return ForbiddenError("namespaces \"" + key.name + "\" is forbidden: this namespace may not be deleted");
  }
  auto check_preconditions = [&](const api::Object& obj) -> Status {
    if (request.precondition_uid && *request.precondition_uid != api::Uid(obj)) {
      return store::ConflictPrecondition(key, "UID", *request.precondition_uid, api::Uid(obj));
    }
    if (request.precondition_resource_version &&
        *request.precondition_resource_version != api::ResourceVersion(obj)) {
      return store::ConflictPrecondition(key, "ResourceVersion", *request.precondition_resource_version,
                                         api::ResourceVersion(obj));
    }
    return Status::Ok();
  };
  BERTH_RETURN_IF_ERROR(check_preconditions(current));

  const bool collected = !GarbageCollectorIgnores(key.resource);  // else nothing would remove them
  const bool is_namespace = def.group.empty() && def.names.kind == "Namespace";
  // The finalizers the object is marked with: upstream's
  // deletionFinalizersForGarbageCollection. The propagation policy is the request's
  // when it names one, else the one an orphan or foregroundDeletion finalizer already
  // on the object asks for (orphan first), else the kind's default; the object's
  // garbage-collector finalizers are replaced by the policy's, so a stale one (left by
  // a client, or by a deletion cut off between its two writes) never overrides the
  // policy the request asked for.
  auto finalizers_for = [&](const api::Object& obj) {
    const std::string_view policy = request.propagation_policy.empty()
                                        ? FinalizerPolicy(obj, DefaultPropagationPolicy(def))
                                        : std::string_view(request.propagation_policy);
    std::vector<std::string> out = Finalizers(obj);
    if (collected) {
      std::erase_if(out, [](const std::string& f) { return f == kFinalizerOrphan || f == kFinalizerForeground; });
    }
    if (collected && policy == kPropagationOrphan) out.emplace_back(kFinalizerOrphan);
    if (collected && policy == kPropagationForeground) out.emplace_back(kFinalizerForeground);
    if (is_namespace && std::find(out.begin(), out.end(), kFinalizerNamespace) == out.end()) {
      out.emplace_back(kFinalizerNamespace);
    }
    return out;
  };
  // An object already being deleted keeps the finalizers it has (upstream also
  // switches between orphan and foreground then; berth leaves them as they are).
  auto needs_update = [&](const api::Object& obj) {
    if (api::BeingDeleted(obj)) return false;
    if (!SameSet(Finalizers(obj), finalizers_for(obj))) return true;
    if (!is_namespace) return false;
    auto st = obj.find("status");
    return st == obj.end() || !st->is_object() || st->value("phase", json()) != "Terminating";
  };
  if (request.dry_run) {
    store::DeleteResult r;
    r.object = std::move(current);
    return r;
  }
  if (needs_update(current)) {
    auto updated = store_.GuaranteedUpdate(key, [&](const api::Object& obj) -> StatusOr<api::Object> {
      BERTH_RETURN_IF_ERROR(check_preconditions(obj));
      api::Object next = obj;
      if (!api::BeingDeleted(obj)) next["metadata"]["finalizers"] = finalizers_for(obj);
      if (is_namespace) next["status"]["phase"] = "Terminating";
      return next;
    });
    if (!updated.ok()) return updated.status();
    current = std::move(updated).value();
  }
  store::DeleteOptions so;
  so.preconditions.uid = api::Uid(current);
  so.grace_period_seconds =
      GracePeriodFor(def.group, def.names.kind, current, request.grace_period_seconds);
  return store_.Delete(key, so);
}

}  // namespace berth::apiserver
