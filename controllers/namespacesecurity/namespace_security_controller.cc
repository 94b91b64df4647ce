#include "controllers/namespacesecurity/namespace_security_controller.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/pod_validation.h"
#include "api/unstructured.h"
#include "core/file.h"

namespace berth::controllers::namespacesecurity {
namespace {

constexpr size_t kMaxLegacyFileBytes = 4 << 20;

bool Allocated(const api::Object& ns) { return api::NamespaceIdBlock(ns, api::kUidRangeAnnotation).ok(); }

}  // namespace

StatusOr<std::map<std::string, int64_t>> ReadLegacyPodUsers(const std::string& path) {
  std::map<std::string, int64_t> out;
  StatusOr<std::string> text = ReadFileBounded(path, kMaxLegacyFileBytes, /*follow_symlinks=*/false);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) return out;
    return InvalidError(text.status().message());
  }
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.value("version", 0) != 1 || !j.contains("namespaces") || !j["namespaces"].is_object()) {
    return InvalidError(path + " is not a pod-users record (version 1)");
  }
  for (const auto& [ns, uid] : j["namespaces"].items()) {
    if (!uid.is_number_integer() || uid.get<int64_t>() <= 0 || uid.get<int64_t>() > api::kMaxPodId) {
      return InvalidError(path + ": the uid of namespace \"" + ns + "\" is not a valid uid");
    }
    out[ns] = uid.get<int64_t>();
  }
  return out;
}

Status NamespaceSecurityController::Annotate(const std::string& name, const std::string& uid,
                                             const api::IdBlock& block) {
  const std::string value = api::FormatIdBlock(block);
  nlohmann::json patch = {
      {"metadata",
       {{"uid", uid},
        {"annotations", {{api::kUidRangeAnnotation, value}, {api::kSupplementalGroupsAnnotation, value}}}}}};
  auto patched = client_.Patch(kNamespaces, name, client::PatchType::kMerge, patch.dump());
  return patched.status();
}

StatusOr<int64_t> NamespaceSecurityController::LoadNext() {
  BERTH_ASSIGN_OR_RETURN(api::Object record, client_.Get(kNamespaces, kAllocatorNamespace));
  const std::string next = api::NestedString(record, {"metadata", "annotations", kNextUidAnnotation});
  if (!next.empty()) {
    int64_t n = 0;
    try {
      n = std::stoll(next);
    } catch (const std::exception&) {
      return InternalError(std::string("namespace ") + kAllocatorNamespace + ": " + kNextUidAnnotation + " \"" + next +
                           "\" is not a number");
    }
    return std::max(n, options_.first);
  }
  // A store without the record: seed the namespaces of the former table, then start
  // above every uid it handed out.
  int64_t start = options_.first;
  for (const auto& [ns, uid] : options_.legacy_uids) start = std::max(start, uid + 1);
  if (!options_.legacy_uids.empty()) {
    BERTH_ASSIGN_OR_RETURN(client::ObjectList all, client_.List(kNamespaces));
    for (const api::Object& ns : all.items) {
      auto it = options_.legacy_uids.find(api::Name(ns));
      if (it == options_.legacy_uids.end() || Allocated(ns)) continue;
      BERTH_RETURN_IF_ERROR(Annotate(api::Name(ns), api::Uid(ns), api::IdBlock{it->second, 1}));
    }
  }
  record["metadata"]["annotations"][kNextUidAnnotation] = std::to_string(start);
  BERTH_RETURN_IF_ERROR(client_.Update(kNamespaces, record).status());
  return start;
}

Status NamespaceSecurityController::Reconcile(const std::string& name) {
  client::ObjectPtr cached = namespaces_.GetIndexer().Get("", name);
  if (cached == nullptr || Allocated(*cached)) return Status::Ok();
  std::lock_guard<std::mutex> lock(mu_);
  BERTH_ASSIGN_OR_RETURN(int64_t next, LoadNext());  // also seeds the legacy namespaces
  // The stored namespace, now (the cache may be behind, and seeding may have annotated it).
  StatusOr<api::Object> ns = client_.Get(kNamespaces, name);
  if (ns.status().code() == Code::kNotFound) return Status::Ok();
  BERTH_RETURN_IF_ERROR(ns.status());
  if (Allocated(*ns) || api::NestedString(*ns, {"status", "phase"}) == "Terminating") return Status::Ok();
  const api::IdBlock block{next, options_.block_size};
  if (block.end() > options_.first + options_.count) {
    return UnavailableError("no free block of " + std::to_string(options_.block_size) + " ids left in [" +
                            std::to_string(options_.first) + ", " + std::to_string(options_.first + options_.count) +
                            ") for namespace \"" + name + "\"");
  }
  // Record first: a crash after this write loses the block, never hands it out twice.
  BERTH_ASSIGN_OR_RETURN(api::Object record, client_.Get(kNamespaces, kAllocatorNamespace));
  record["metadata"]["annotations"][kNextUidAnnotation] = std::to_string(block.end());
  BERTH_RETURN_IF_ERROR(client_.Update(kNamespaces, record).status());
  return Annotate(name, api::Uid(*ns), block);
}

}  // namespace berth::controllers::namespacesecurity
