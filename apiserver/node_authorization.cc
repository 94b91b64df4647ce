#include "apiserver/node_authorization.h"

#include <algorithm>
#include <set>

#include "api/admission_attributes.h"
#include "api/unstructured.h"
#include "core/clock.h"

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

// --- The node's own Node (NodeRestriction's admitNode). ---

// The namespace (prefix) of a label key: "" when it has none (getLabelNamespace).
std::string_view LabelNamespace(std::string_view key) {
  const size_t slash = key.find('/');
  return slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
}

// `ns` is `domain` or a subdomain of it.
bool InDomain(std::string_view ns, std::string_view domain) {
  return ns == domain ||
         (ns.size() > domain.size() && ns.ends_with(domain) && ns[ns.size() - domain.size() - 1] == '.');
}

// The labels a kubelet may set on its own Node (k8s.io/kubelet/pkg/apis/well_known_labels.go
// IsKubeletLabel): kubeletLabels, and the namespaces [*.]kubelet.kubernetes.io and
// [*.]node.kubernetes.io (kubeletLabelNamespaces).
bool IsKubeletLabel(std::string_view key) {
  static constexpr std::string_view kKubeletLabels[] = {
      "kubernetes.io/hostname",                    // LabelHostname
      "topology.kubernetes.io/zone",               // LabelTopologyZone
      "topology.kubernetes.io/region",             // LabelTopologyRegion
      "failure-domain.beta.kubernetes.io/zone",    // LabelFailureDomainBetaZone
      "failure-domain.beta.kubernetes.io/region",  // LabelFailureDomainBetaRegion
      "beta.kubernetes.io/instance-type",          // LabelInstanceType
      "node.kubernetes.io/instance-type",          // LabelInstanceTypeStable
      "kubernetes.io/os",                          // LabelOSStable
      "kubernetes.io/arch",                        // LabelArchStable
      "beta.kubernetes.io/os",                     // LabelOS
      "beta.kubernetes.io/arch",                   // LabelArch
  };
  if (std::find(std::begin(kKubeletLabels), std::end(kKubeletLabels), key) != std::end(kKubeletLabels)) return true;
  const std::string_view ns = LabelNamespace(key);
  return InDomain(ns, "kubelet.kubernetes.io") || InDomain(ns, "node.kubernetes.io");
}

// The labels a node may not add, change or remove (NodeRestriction's getForbiddenLabels):
// [*.]node-restriction.kubernetes.io, and every other label of the kubernetes.io and k8s.io
// namespaces (isKubernetesLabel) that is not a kubelet label. Sorted (sets.String.List).
std::set<std::string> ForbiddenLabels(const std::set<std::string>& modified) {
  std::set<std::string> forbidden;
  for (const std::string& key : modified) {
    const std::string_view ns = LabelNamespace(key);
    if (InDomain(ns, "node-restriction.kubernetes.io")) forbidden.insert(key);
    const bool kubernetes = InDomain(ns, "kubernetes.io") || InDomain(ns, "k8s.io");
    if (kubernetes && !IsKubeletLabel(key)) forbidden.insert(key);
  }
  return forbidden;
}

// The keys whose label differs between `a` and `b` (added, removed or changed: getModifiedLabels).
std::set<std::string> ModifiedLabels(const api::Object& a, const api::Object& b) {
  std::set<std::string> modified;
  auto differing = [&](const api::Object& from, const api::Object& other) {
    for (const auto& [key, value] : from.items()) {
      const auto it = other.find(key);
      if (it == other.end() || *it != value) modified.insert(key);
    }
  };
  differing(a, b);
  differing(b, a);
  return modified;
}

std::string JoinLabels(const std::set<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) {
    if (!out.empty()) out += ", ";
    out += k;
  }
  return out;
}

// A field holds no value: absent, or null (a nil pointer in the Go types).
bool Nil(const api::Object& v) { return v.is_null(); }

// `v` without its null members, recursively: what a Go struct of pointers round-trips to, so
// that two values compare as apiequality.Semantic.DeepEqual compares the decoded structs.
api::Object WithoutNulls(const api::Object& v) {
  if (v.is_object()) {
    api::Object out = api::Object::object();
    for (const auto& [k, x] : v.items()) {
      if (!x.is_null()) out[k] = WithoutNulls(x);
    }
    return out;
  }
  if (v.is_array()) {
    api::Object out = api::Object::array();
    for (const api::Object& x : v) out.push_back(WithoutNulls(x));
    return out;
  }
  return v;
}

// spec.taints of two Nodes as apiequality.Semantic.DeepEqual compares []Taint: in order, an
// absent, null or empty list alike; key, value and effect as strings ("" when absent);
// timeAdded (*metav1.Time) nil alike when absent or null, else the same instant.
bool SameTaints(const api::Object& a, const api::Object& b) {
  const api::Object& x = api::ArrayAt(api::ObjectAt(a, "spec"), "taints");
  const api::Object& y = api::ArrayAt(api::ObjectAt(b, "spec"), "taints");
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    for (const char* field : {"key", "value", "effect"}) {
      if (api::StringAt(x[i], field) != api::StringAt(y[i], field)) return false;
    }
    const api::Object& tx = api::Field(x[i], "timeAdded");
    const api::Object& ty = api::Field(y[i], "timeAdded");
    if (Nil(tx) != Nil(ty)) return false;
    if (Nil(tx) || tx == ty) continue;
    Time px, py;
    if (!ParseRfc3339(api::AsString(tx), &px) || !ParseRfc3339(api::AsString(ty), &py) || px != py) return false;
  }
  return true;
}

// NodeRestriction's admitNode for a node's own Node (the name is checked before): a create
// may not set spec.configSource nor forbidden labels; an update may not set a new non-nil
// spec.configSource, change spec.taints in any way, nor add, change or remove a forbidden
// label. `old` is nullptr on create.
Status AdmitOwnNode(const std::string& node, const api::GroupResource& resource, const api::Object& object,
                    const api::Object* old) {
  const std::string name = api::Name(object);
  const api::Object& config = api::NestedField(object, {"spec", "configSource"});
  const api::Object& labels = api::ObjectAt(api::ObjectAt(object, "metadata"), "labels");
  if (old == nullptr) {
    if (!Nil(config)) {
      return api::AdmissionForbidden(resource, name,
                                     "node \"" + node + "\" is not allowed to create pods with a non-nil configSource");
    }
    const std::set<std::string> forbidden = ForbiddenLabels(ModifiedLabels(labels, api::Object::object()));
    if (!forbidden.empty()) {
      return api::AdmissionForbidden(
          resource, name, "node \"" + node + "\" is not allowed to set the following labels: " + JoinLabels(forbidden));
    }
    return Status::Ok();
  }
  if (!Nil(config) && WithoutNulls(config) != WithoutNulls(api::NestedField(*old, {"spec", "configSource"}))) {
    return api::AdmissionForbidden(
        resource, name, "node \"" + node + "\" is not allowed to update configSource to a new non-nil configSource");
  }
  if (!SameTaints(object, *old)) {
    return api::AdmissionForbidden(resource, name, "node \"" + node + "\" is not allowed to modify taints");
  }
  const std::set<std::string> forbidden =
      ForbiddenLabels(ModifiedLabels(labels, api::ObjectAt(api::ObjectAt(*old, "metadata"), "labels")));
  if (!forbidden.empty()) {
    // Upstream's message names no node.
    return api::AdmissionForbidden(resource, name, "is not allowed to modify labels: " + JoinLabels(forbidden));
  }
  return Status::Ok();
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
      // node_authorizer.go authorizeNode: create, update and patch of the Node and update and
      // patch of its status; never delete (RBAC then refuses: system:node grants no delete).
      if (a.verb == "create" && a.subresource.empty()) return Allowed("its Node");  // the name: AdmitNodeWrite
      if (a.name == node && OneOf(a.verb, {"update", "patch"}) && OneOf(a.subresource, {"", "status"})) {
        return Allowed("its Node");  // what it may change: AdmitNodeWrite
      }
      return {};
    }
    if (a.resource == "pods" && !a.name.empty() &&
        ((a.subresource == "status" && OneOf(a.verb, {"update", "patch"})) ||
         (a.subresource.empty() && a.verb == "delete"))) {
      auto pod = store.GetShared({api::GroupResource{"", "pods"}, a.ns, a.name});
      if (pod.ok() && api::NestedString(**pod, {"spec", "nodeName"}) == node) return Allowed("a pod bound to it");
      // A pod that is gone: the request gets the store's 404, as NodeRestriction answers
      // NotFound (its agent deleting a pod another client removed first is not refused).
      if (!pod.ok() && pod.status().code() == Code::kNotFound) return Allowed("a pod that does not exist");
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
  if (resource.group.empty() && resource.resource == "nodes") {
    if (name != node) {
      return api::AdmissionForbidden(resource, name,
                                     "node \"" + node + "\" is not allowed to modify node \"" + name + "\"");
    }
    return AdmitOwnNode(node, resource, object, old);
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
