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

bool Names(const api::Object& o, std::string_view key, const std::string& name) {
  return o.is_object() && api::StringAt(o, key) == name;
}

// Whether `pod` references `kind` (secrets, configmaps, serviceaccounts) `name` as the
// node authorizer's graph records it (plugin/pkg/auth/authorizer/node/graph_populator.go,
// podutil.VisitPodSecretNames and VisitPodConfigmapNames): its ServiceAccount, volumes
// (secret, configMap, projected sources), env valueFrom and envFrom of every container,
// and imagePullSecrets.
bool PodReferences(const api::Object& pod, const std::string& kind, const std::string& name) {
  const api::Object& spec = api::Field(pod, "spec");
  if (kind == "serviceaccounts") return api::StringAt(spec, "serviceAccountName") == name;
  const bool secret = kind == "secrets";
  if (secret) {
    for (const api::Object& ref : api::ArrayAt(spec, "imagePullSecrets")) {
      if (Names(ref, "name", name)) return true;
    }
  }
  for (const api::Object& v : api::ArrayAt(spec, "volumes")) {
    if (secret ? Names(api::Field(v, "secret"), "secretName", name) : Names(api::Field(v, "configMap"), "name", name)) {
      return true;
    }
    for (const api::Object& src : api::ArrayAt(api::Field(v, "projected"), "sources")) {
      if (Names(api::Field(src, secret ? "secret" : "configMap"), "name", name)) return true;
    }
  }
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    for (const api::Object& c : api::ArrayAt(spec, list)) {
      for (const api::Object& e : api::ArrayAt(c, "env")) {
        if (Names(api::NestedField(e, {"valueFrom", secret ? "secretKeyRef" : "configMapKeyRef"}), "name", name)) {
          return true;
        }
      }
      for (const api::Object& e : api::ArrayAt(c, "envFrom")) {
        if (Names(api::Field(e, secret ? "secretRef" : "configMapRef"), "name", name)) return true;
      }
    }
  }
  return false;
}

// Whether a pod bound to `node` in namespace `ns` references the object: a scan of the
// namespace's pods (upstream keeps a graph; this costs O(pods in the namespace) per
// request, which only nodes' reads of these kinds pay).
bool NodeHasPodReferencing(const std::string& node, const std::string& ns, const std::string& kind,
                           const std::string& name, store::Store& store) {
  if (ns.empty() || name.empty()) return false;
  store::ListOptions options;
  options.ns = ns;
  auto pods = store.List(api::GroupResource{"", "pods"}, options);
  if (!pods.ok()) return false;
  return std::any_of(pods->items.begin(), pods->items.end(), [&](const store::ObjectPtr& pod) {
    return api::NestedString(*pod, {"spec", "nodeName"}) == node && PodReferences(*pod, kind, name);
  });
}

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
    // Secrets, ConfigMaps and ServiceAccounts its pods use (get only), and tokens of
    // those ServiceAccounts (which pod: AdmitNodeTokenRequest).
    if (a.verb == "get" && a.subresource.empty() && OneOf(a.resource, {"secrets", "configmaps", "serviceaccounts"}) &&
        NodeHasPodReferencing(node, a.ns, a.resource, a.name, store)) {
      return Allowed("a pod bound to it references it");
    }
    if (a.resource == "serviceaccounts" && a.subresource == "token" && a.verb == "create" &&
        NodeHasPodReferencing(node, a.ns, a.resource, a.name, store)) {
      return Allowed("a pod bound to it runs as it");
    }
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

Status AdmitNodeTokenRequest(const std::string& node, const std::string& ns, const std::string& service_account,
                             const api::Object& request, store::Store& store) {
  const api::GroupResource resource{"", "serviceaccounts"};
  const api::Object& ref = api::NestedField(request, {"spec", "boundObjectRef"});
  if (!ref.is_object() || api::StringAt(ref, "kind") != "Pod") {
    return api::AdmissionForbidden(resource, service_account, "node requested token not bound to a pod");
  }
  const std::string uid = api::StringAt(ref, "uid");
  if (uid.empty()) {
    return api::AdmissionForbidden(resource, service_account, "node requested token with a pod binding without a uid");
  }
  BERTH_ASSIGN_OR_RETURN(store::ObjectPtr pod,
                         store.GetShared({api::GroupResource{"", "pods"}, ns, api::StringAt(ref, "name")}));
  if (api::NestedString(*pod, {"metadata", "uid"}) != uid) {
    return api::AdmissionForbidden(resource, service_account,
                                   "the UID in the bound object reference (" + uid +
                                       ") does not match the UID in record. The object might have been deleted and "
                                       "then recreated");
  }
  if (api::NestedString(*pod, {"spec", "nodeName"}) != node) {
    return api::AdmissionForbidden(resource, service_account,
                                   "node requested token bound to a pod scheduled on a different node");
  }
  return Status::Ok();
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
