#include "client/client.h"

namespace berth::client {

std::string GroupVersionResource::String() const {
  if (group.empty()) return version + "/" + resource;
  return resource + "." + version + "." + group;
}

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kJson: return "application/json-patch+json";
    case PatchType::kMerge: return "application/merge-patch+json";
    case PatchType::kStrategicMerge: return "application/strategic-merge-patch+json";
    case PatchType::kApply: return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

std::string_view PropagationPolicyName(PropagationPolicy policy) {
  switch (policy) {
    case PropagationPolicy::kOrphan: return "Orphan";
    case PropagationPolicy::kBackground: return "Background";
    case PropagationPolicy::kForeground: return "Foreground";
  }
  return "Background";
}

api::Object DeleteOptionsToJson(const DeleteOptions& options) {
  api::Object body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (options.grace_period_seconds) body["gracePeriodSeconds"] = *options.grace_period_seconds;
  if (options.propagation_policy) {
    body["propagationPolicy"] = std::string(PropagationPolicyName(*options.propagation_policy));
  }
  if (options.preconditions.uid) body["preconditions"]["uid"] = *options.preconditions.uid;
  if (options.preconditions.resource_version) {
    body["preconditions"]["resourceVersion"] = *options.preconditions.resource_version;
  }
  if (options.dry_run) body["dryRun"] = {"All"};
  return body;
}

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded: return "ADDED";
    case WatchEventType::kModified: return "MODIFIED";
    case WatchEventType::kDeleted: return "DELETED";
    case WatchEventType::kBookmark: return "BOOKMARK";
    case WatchEventType::kError: return "ERROR";
  }
  return "ERROR";
}

std::optional<WatchEventType> ParseWatchEventType(std::string_view name) {
  for (auto t : {WatchEventType::kAdded, WatchEventType::kModified, WatchEventType::kDeleted,
                 WatchEventType::kBookmark, WatchEventType::kError}) {
    if (WatchEventTypeName(t) == name) return t;
  }
  return std::nullopt;
}

Status Client::Bind(const ResourceRef& pods, const std::string& pod, const std::string& node,
                    const CreateOptions& options) {
  return MethodNotAllowedError("pods/binding is not served by this client");
}

StatusOr<SharedObjectList> Client::ListShared(const ResourceRef& ref, const ListOptions& options) {
  BERTH_ASSIGN_OR_RETURN(ObjectList list, List(ref, options));
  SharedObjectList out;
  out.items.reserve(list.items.size());
  for (api::Object& item : list.items) out.items.push_back(std::make_shared<const api::Object>(std::move(item)));
  out.resource_version = std::move(list.resource_version);
  out.continue_token = std::move(list.continue_token);
  out.remaining_item_count = list.remaining_item_count;
  return out;
}

}  // namespace berth::client
