#include "rbac/bootstrap_policy.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <string>

#include "authn/user_info.h"
#include "rbac/policy_rule.h"

namespace berth::rbac {
namespace {

using Strings = std::vector<std::string>;

const Strings kRead = {"get", "list", "watch"};
const Strings kWrite = {"create", "update", "patch", "delete", "deletecollection"};
const Strings kReadWrite = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"};

Strings Sorted(Strings v) {
  std::sort(v.begin(), v.end());
  return v;
}

// NewRule(verbs...).Groups(groups...).Resources(resources...).RuleOrDie(): lists sorted.
api::Object ResourceRule(const Strings& verbs, const Strings& groups, const Strings& resources) {
  return RuleToJson(PolicyRule{Sorted(verbs), Sorted(groups), Sorted(resources), {}, {}});
}
api::Object URLRule(const Strings& verbs, const Strings& urls) {
  return RuleToJson(PolicyRule{Sorted(verbs), {}, {}, {}, Sorted(urls)});
}

api::Object Labels(std::initializer_list<std::pair<const char*, const char*>> labels) {
  api::Object out = api::Object::object();
  for (const auto& [k, v] : labels) out[k] = v;
  return out;
}

api::Object Aggregation(std::initializer_list<const char*> labels) {
  api::Object selectors = api::Object::array();
  for (const char* l : labels) selectors.push_back({{"matchLabels", {{l, "true"}}}});
  return {{"clusterRoleSelectors", selectors}};
}

api::Object ClusterRole(const std::string& name, api::Object labels, api::Object rules,
                        api::Object aggregation = nullptr) {
  api::Object role = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                      {"kind", "ClusterRole"},
                      {"metadata", {{"name", name}}},
                      {"rules", rules.is_null() ? api::Object::array() : std::move(rules)}};
  if (!labels.empty()) role["metadata"]["labels"] = std::move(labels);
  if (!aggregation.is_null()) role["aggregationRule"] = std::move(aggregation);
  return role;
}

// addDefaultMetadata: the bootstrapping label and the autoupdate annotation.
api::Object Default(api::Object obj) {
  obj["metadata"]["labels"][kBootstrappingLabel] = kBootstrappingLabelValue;
  obj["metadata"]["annotations"][kAutoUpdateAnnotation] = "true";
  return obj;
}

// NewClusterBinding(role).Groups(groups...).BindingOrDie().
api::Object ClusterBinding(const std::string& role, std::initializer_list<const char*> groups) {
  api::Object subjects = api::Object::array();
  for (const char* g : groups) subjects.push_back({{"apiGroup", kGroupName}, {"kind", "Group"}, {"name", g}});
  return Default({{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "ClusterRoleBinding"},
                  {"metadata", {{"name", role}}},
                  {"roleRef", {{"apiGroup", kGroupName}, {"kind", "ClusterRole"}, {"name", role}}},
                  {"subjects", subjects}});
}

constexpr char kAggregateToAdmin[] = "rbac.authorization.k8s.io/aggregate-to-admin";
constexpr char kAggregateToEdit[] = "rbac.authorization.k8s.io/aggregate-to-edit";
constexpr char kAggregateToView[] = "rbac.authorization.k8s.io/aggregate-to-view";
constexpr char kBatchAdmin[] = "rbac.kueue.x-k8s.io/batch-admin";
constexpr char kBatchUser[] = "rbac.kueue.x-k8s.io/batch-user";

std::vector<api::Object> KubernetesClusterRoles() {
  const char* core = "";
  std::vector<api::Object> roles;
  roles.push_back(ClusterRole("cluster-admin", {}, {ResourceRule({"*"}, {"*"}, {"*"}), URLRule({"*"}, {"*"})}));
  roles.push_back(ClusterRole("system:discovery", {},
                              {URLRule({"get"}, {"/livez", "/readyz", "/healthz", "/version", "/version/", "/openapi",
                                                 "/openapi/*", "/api", "/api/*", "/apis", "/apis/*"})}));
  roles.push_back(ClusterRole(
      "system:basic-user", {},
      {ResourceRule({"create"}, {"authentication.k8s.io"}, {"selfsubjectreviews"}),
       ResourceRule({"create"}, {"authorization.k8s.io"}, {"selfsubjectaccessreviews", "selfsubjectrulesreviews"})}));
  roles.push_back(ClusterRole("system:public-info-viewer", {},
                              {URLRule({"get"}, {"/livez", "/readyz", "/healthz", "/version", "/version/"})}));
  roles.push_back(ClusterRole("admin", {}, nullptr, Aggregation({kAggregateToAdmin})));
  roles.push_back(ClusterRole("edit", Labels({{kAggregateToAdmin, "true"}}), nullptr, Aggregation({kAggregateToEdit})));
  roles.push_back(ClusterRole("view", Labels({{kAggregateToEdit, "true"}}), nullptr, Aggregation({kAggregateToView})));
  roles.push_back(ClusterRole("system:aggregate-to-admin", Labels({{kAggregateToAdmin, "true"}}),
                              {ResourceRule({"create"}, {"authorization.k8s.io"}, {"localsubjectaccessreviews"}),
                               ResourceRule(kReadWrite, {kGroupName}, {"roles", "rolebindings"})}));
  roles.push_back(ClusterRole(
      "system:aggregate-to-edit", Labels({{kAggregateToEdit, "true"}}),
      {// read on escalating resources
       ResourceRule(kRead, {core},
                    {"pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"}),
       ResourceRule({"impersonate"}, {core}, {"serviceaccounts"}),
       ResourceRule(kWrite, {core}, {"pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"}),
       ResourceRule({"create"}, {core}, {"pods/eviction"}),
       ResourceRule(kWrite, {core},
                    {"replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
                     "services/proxy", "persistentvolumeclaims", "configmaps", "secrets"}),
       ResourceRule({"create"}, {core}, {"serviceaccounts/token"}),
       ResourceRule(kWrite, {"batch"}, {"jobs", "cronjobs"})}));
  roles.push_back(ClusterRole(
      "system:aggregate-to-view", Labels({{kAggregateToView, "true"}}),
      {ResourceRule(
           kRead, {core},
           {"pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts", "services",
            "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"}),
       ResourceRule(kRead, {core},
                    {"limitranges", "resourcequotas", "bindings", "events", "pods/status", "resourcequotas/status",
                     "namespaces/status", "replicationcontrollers/status", "pods/log"}),
       // read of the namespace itself: which namespaces one has access to
       ResourceRule(kRead, {core}, {"namespaces"}),
       ResourceRule(kRead, {"batch"}, {"jobs", "cronjobs", "cronjobs/status", "jobs/status"})}));
  for (auto& r : roles) r = Default(std::move(r));
  return roles;
}

// One of Kueue's editor/viewer roles: `resource` in `group`, labelled with its role name,
// the batch roles it joins and the Kubernetes roles it aggregates into; with_status adds
// `get` on resource/status.
struct KueueRoleSpec {
  const char* name;  // without the kueue- prefix
  const char* group;
  const char* resource;
  bool editor;
  bool with_status;
  std::vector<const char*> aggregate_labels;
};

api::Object KueueRole(const KueueRoleSpec& spec) {
  static const Strings kEditVerbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
  api::Object labels = Labels({{"rbac.kueue.x-k8s.io/role", spec.name}});
  for (const char* l : spec.aggregate_labels) labels[l] = "true";
  api::Object rules = api::Object::array();
  rules.push_back(ResourceRule(spec.editor ? kEditVerbs : kRead, {spec.group}, {spec.resource}));
  if (spec.with_status) rules.push_back(ResourceRule({"get"}, {spec.group}, {std::string(spec.resource) + "/status"}));
  std::string name = std::string("kueue-") + spec.name + "-role";
  return ClusterRole(name, std::move(labels), std::move(rules));
}

std::vector<api::Object> KueueClusterRoles() {
  std::vector<api::Object> roles;
  roles.push_back(ClusterRole("kueue-batch-admin-role", {}, nullptr, Aggregation({kBatchAdmin})));
  roles.push_back(ClusterRole("kueue-batch-user-role", {}, nullptr, Aggregation({kBatchUser})));
  const std::vector<const char*> admin_only = {kBatchAdmin};
  const std::vector<const char*> admin_user = {kBatchAdmin, kBatchUser};
  const std::vector<const char*> admin_view = {kBatchAdmin, kAggregateToAdmin};
  const std::vector<const char*> user_view = {kBatchAdmin, kBatchUser, kAggregateToView, kAggregateToAdmin,
                                              kAggregateToEdit};
  const std::vector<const char*> admin_all_view = {kBatchAdmin, kAggregateToView, kAggregateToAdmin, kAggregateToEdit};
  const char* kueue = "kueue.x-k8s.io";
  const char* visibility = "visibility.kueue.x-k8s.io";
  const std::vector<KueueRoleSpec> specs = {
      {"clusterqueue-editor", kueue, "clusterqueues", true, true, admin_only},
      {"clusterqueue-viewer", kueue, "clusterqueues", false, true, admin_view},
      {"cohort-editor", kueue, "cohorts", true, false, admin_only},
      {"cohort-viewer", kueue, "cohorts", false, false, admin_view},
      {"job-editor", "batch", "jobs", true, true, admin_user},
      {"job-viewer", "batch", "jobs", false, true, user_view},
      {"jobset-editor", "jobset.x-k8s.io", "jobsets", true, true, admin_user},
      {"jobset-viewer", "jobset.x-k8s.io", "jobsets", false, true, user_view},
      {"localqueue-editor", kueue, "localqueues", true, true, admin_only},
      {"localqueue-viewer", kueue, "localqueues", false, true, user_view},
      {"pending-workloads-cq-viewer", visibility, "clusterqueues/pendingworkloads", false, false, admin_all_view},
      {"pending-workloads-lq-viewer", visibility, "localqueues/pendingworkloads", false, false, user_view},
      {"pytorchjob-editor", "kubeflow.org", "pytorchjobs", true, true, admin_user},
      {"pytorchjob-viewer", "kubeflow.org", "pytorchjobs", false, true, user_view},
      {"resourceflavor-editor", kueue, "resourceflavors", true, false, admin_only},
      {"resourceflavor-viewer", kueue, "resourceflavors", false, false, admin_view},
      {"trainjob-editor", "trainer.kubeflow.org", "trainjobs", true, true, admin_user},
      {"trainjob-viewer", "trainer.kubeflow.org", "trainjobs", false, true, user_view},
      {"workload-editor", kueue, "workloads", true, true, admin_only},
      {"workload-viewer", kueue, "workloads", false, true, user_view},
  };
  for (const auto& s : specs) roles.push_back(KueueRole(s));
  return roles;
}

}  // namespace

std::vector<api::Object> BootstrapPolicy() {
  std::vector<api::Object> out = KubernetesClusterRoles();
  for (auto& r : KueueClusterRoles()) out.push_back(std::move(r));
  out.push_back(ClusterBinding("cluster-admin", {authn::kSystemPrivilegedGroup}));
  out.push_back(ClusterBinding("system:discovery", {authn::kAllAuthenticated}));
  out.push_back(ClusterBinding("system:basic-user", {authn::kAllAuthenticated}));
  out.push_back(ClusterBinding("system:public-info-viewer", {authn::kAllAuthenticated, authn::kAllUnauthenticated}));
  return out;
}

std::vector<api::Object> TeamRoleBindings(std::string_view ns, std::string_view group) {
  std::vector<api::Object> out;
  for (const auto& [suffix, role] : {std::pair<const char*, const char*>{"-edit", "edit"},
                                     std::pair<const char*, const char*>{"-batch-user", "kueue-batch-user-role"}}) {
    out.push_back({{"apiVersion", "rbac.authorization.k8s.io/v1"},
                   {"kind", "RoleBinding"},
                   {"metadata", {{"name", std::string(group) + suffix}, {"namespace", std::string(ns)}}},
                   {"roleRef", {{"apiGroup", kGroupName}, {"kind", "ClusterRole"}, {"name", role}}},
                   {"subjects", {{{"apiGroup", kGroupName}, {"kind", "Group"}, {"name", std::string(group)}}}}});
  }
  return out;
}

}  // namespace berth::rbac
