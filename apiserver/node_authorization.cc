#include "apiserver/node_authorization.h"

#include <algorithm>

#include "api/admission_attributes.h"
#include "api/unstructured.h"

namespace berth::apiserver {
namespace {

constexpr char kLeaseNamespace[] = "kube-node-lease";

bool OneOf(const std::string& s, std::initializer_list<const char*> values) {
  return std::any_of(values.begin(), values.end(), [&](const char* v) { return s == v; });
}

rbac::Decision Allowed(const std::string& why) { return {true, "node authorizer: " + why}; }

}  // namespace

std::optional<std::string> NodeNameOf(const authn::UserInfo& user) {
  if (!user.name.starts_with(authn::kNodeUserPrefix)) return std::nullopt;
  if (std::find(user.groups.begin(), user.groups.end(), authn::kNodesGroup) == user.groups.end()) return std::nullopt;
  std::string name = user.name.substr(std::string_view(authn::kNodeUserPrefix).size());
  if (name.empty()) return std::nullopt;
  return name;
}

rbac::Decision AuthorizeNode(const std::string& node, const rbac::RequestAttributes& a, store::Store& store) {
  if (!a.resource_request) return {};
  const bool read = OneOf(a.verb, {"get", "list", "watch"});
  if (a.api_group.empty()) {
    if (read && a.subresource.empty() &&
        OneOf(a.resource, {"nodes", "pods", "services", "endpoints", "namespaces", "events"})) {
      return Allowed("read");
    }
    if (a.resource == "nodes") {
      if (a.verb == "create" && a.subresource.empty()) return Allowed("its Node");  // the name: AdmitNodeWrite
      if (a.name == node && OneOf(a.verb, {"update", "patch", "delete"})) return Allowed("its Node");
      return {};
    }
    if (a.resource == "pods" && !a.name.empty() &&
        ((a.subresource == "status" && OneOf(a.verb, {"update", "patch"})) ||
         (a.subresource.empty() && a.verb == "delete"))) {
      auto pod = store.GetShared({api::GroupResource{"", "pods"}, a.ns, a.name});
      if (pod.ok() && api::NestedString(**pod, {"spec", "nodeName"}) == node) return Allowed("a pod bound to it");
      return {};
    }
    if (a.resource == "events" && OneOf(a.verb, {"create", "update", "patch"})) return Allowed("events");
    return {};
  }
  if (a.api_group == "coordination.k8s.io" && a.resource == "leases" && a.ns == kLeaseNamespace) {
    if (OneOf(a.verb, {"list", "watch"})) return Allowed("read");
    if (a.verb == "create" && a.name.empty()) return Allowed("its Lease");  // the name: AdmitNodeWrite
    if (a.name == node && OneOf(a.verb, {"get", "update", "patch"})) return Allowed("its Lease");
    return {};
  }
  if (a.api_group == "events.k8s.io" && a.resource == "events" &&
      OneOf(a.verb, {"create", "update", "patch", "get", "list", "watch"})) {
    return Allowed("events");
  }
  return {};
}

Status AdmitNodeWrite(const std::string& node, const api::GroupResource& resource, const api::Object& object,
                      const api::Object* old) {
  const std::string name = api::Name(object);
  if (resource.group.empty() && resource.resource == "nodes" && name != node) {
    return api::AdmissionForbidden(resource, name,
                                   "node \"" + node + "\" is not allowed to modify node \"" + name + "\"");
  }
  if (resource.group.empty() && resource.resource == "pods") {
    if (old == nullptr) {
      return api::AdmissionForbidden(resource, name,
                                     "pod does not have \"kubernetes.io/config.mirror\" annotation, node \"" + node +
                                         "\" can only create mirror pods");
    }
    if (api::NestedString(*old, {"spec", "nodeName"}) != node) {
      return api::AdmissionForbidden(
          resource, name, "node \"" + node + "\" can only update pod status for pods with spec.nodeName set to itself");
    }
  }
  if (resource.group == "coordination.k8s.io" && resource.resource == "leases" &&
      (name != node || api::Namespace(object) != kLeaseNamespace)) {
    return api::AdmissionForbidden(resource, name,
                                   "can only access node lease with the same name as the requesting node");
  }
  return Status::Ok();
}

}  // namespace berth::apiserver
