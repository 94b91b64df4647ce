// RBAC authorization: may this user do this verb on this resource?
//
// Kubernetes' RBAC authorizer (plugin/pkg/auth/authorizer/rbac/rbac.go and
// pkg/registry/rbac/validation/rule.go): a request is allowed when some
// ClusterRoleBinding, or some RoleBinding of the request's namespace, names
// the user (User subject), one of their groups (Group subject) or their
// ServiceAccount, and the ClusterRole or Role it refers to has a rule that
// covers the request. There is no deny rule; a request nothing allows is
// denied. Roles and bindings are read through a PolicySource, so the
// authorizer holds no state of its own and is pure.
//
// Thread-safety: Authorizer is const after construction and safe from any
// number of threads if its PolicySource is.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "authn/user_info.h"
#include "core/status.h"

namespace berth::rbac {

// What a request asks to do (Kubernetes' authorizer.AttributesRecord,
// staging/src/k8s.io/apiserver/pkg/authorization/authorizer/interfaces.go).
struct RequestAttributes {
  authn::UserInfo user;
  // Resource requests: get list watch create update patch delete
  // deletecollection; also impersonate, bind, escalate, use.
  // Non-resource requests: the lower-case HTTP method ("get", "post", ...).
  std::string verb;
  bool resource_request = true;
  std::string api_group;    // "" = the core group; "*" never
  std::string api_version;  // informational; rules do not match on it
  std::string resource;     // plural: "pods", "clusterqueues"
  std::string subresource;  // "status", "log", "" for the object itself
  std::string ns;           // "" = cluster-scoped, or every namespace
  std::string name;         // "" = the collection
  std::string path;         // non-resource requests: "/healthz", "/api"
};

struct Decision {
  bool allowed = false;
  // Why, as the RBAC authorizer's reason (rule.go's describers):
  //   RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"
  //   RBAC: allowed by RoleBinding "team-a-edit/team-a" of ClusterRole "edit" to User "alice"
  //   RBAC: allowed by RoleBinding "ci/team-a" of Role "runner" to ServiceAccount "builder/team-a"
  // (a RoleBinding is named "<name>/<namespace>", a ServiceAccount "<name>/<namespace>").
  // On a denial: "" when every referenced role resolved, else `RBAC: ` and the
  // resolution errors (one: its text; several: "[a, b]", Go's aggregate), e.g.
  //   RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found
  // which kube-apiserver appends to the 403 message after ": ".
  std::string reason;
};

// Read access to the stored RBAC objects (JSON as stored, rbac.authorization.k8s.io/v1).
// Implementations: an informer-backed cache in apiserver/, a fixed list in tests.
class PolicySource {
 public:
  virtual ~PolicySource() = default;
  virtual std::vector<std::shared_ptr<const api::Object>> ClusterRoleBindings() const = 0;
  virtual std::vector<std::shared_ptr<const api::Object>> RoleBindings(std::string_view ns) const = 0;
  // nullptr when absent.
  virtual std::shared_ptr<const api::Object> ClusterRole(std::string_view name) const = 0;
  virtual std::shared_ptr<const api::Object> Role(std::string_view ns, std::string_view name) const = 0;
};

class Authorizer {
 public:
  explicit Authorizer(const PolicySource* policy);  // not owned; outlives this
  Decision Authorize(const RequestAttributes& request) const;
  // The rules that apply to `user` in `ns` ("" = cluster-wide rules only), each
  // a PolicyRule object {verbs, apiGroups, resources, resourceNames,
  // nonResourceURLs}, for SelfSubjectRulesReview and escalation checks.
  // Order: ClusterRoleBindings first, then the RoleBindings of `ns`, each binding's
  // role's rules in order (upstream's VisitRulesFor); a rule granted twice appears twice.
  // Bindings whose role is missing contribute nothing (rules are additive); the errors
  // resolving them are appended to *errors when it is non-null (as upstream's RulesFor
  // returns them beside the rules).
  std::vector<api::Object> RulesFor(const authn::UserInfo& user, std::string_view ns,
                                    std::vector<std::string>* errors = nullptr) const;

  // The rules a roleRef {apiGroup, kind, name} grants in `binding_ns` ("" for a
  // ClusterRoleBinding): GetRoleReferenceRules. Errors (NotFound): `role.rbac.authorization.k8s.io
  // "x" not found` (also for a Role referenced from a ClusterRoleBinding), `clusterrole...`,
  // and `unsupported role reference kind: "X"`.
  StatusOr<std::vector<api::Object>> RoleReferenceRules(const api::Object& role_ref, std::string_view binding_ns) const;

 private:
  const PolicySource* policy_;
};

// The status of a SelfSubjectRulesReview (authorization.k8s.io/v1) as RBAC alone answers
// it (plugin/pkg/auth/authorizer/rbac/rbac.go RulesFor and pkg/registry/authorization/
// selfsubjectrulesreview/rest.go): {"resourceRules": [{verbs, apiGroups, resources,
// resourceNames}] for every rule with resources, "nonResourceRules": [{verbs,
// nonResourceURLs}] for every rule with nonResourceURLs, "incomplete": false} and
// "evaluationError" (AggregateError of the resolution errors) when a role is missing.
// Empty lists are written as [] (kubectl prints them).
api::Object SubjectRulesReviewStatus(const Authorizer& authorizer, const authn::UserInfo& user, std::string_view ns);

// The message of the 403 Forbidden Status kube-apiserver writes
// (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/errors.go,
// forbiddenMessage), e.g.
//   User "alice" cannot delete resource "pods" in API group "" in the namespace "team-b"
// for a resource request and
//   User "alice" cannot get path "/metrics"
// for a non-resource one; "at the cluster scope" replaces the namespace clause when the
// request has none, and a subresource is written "pods/log". The caller prefixes
// `pods "canary" is forbidden: ` and appends `: <Decision.reason>` when the reason is not
// empty (responsewriters.Forbidden).
std::string ForbiddenMessage(const RequestAttributes& request);

// utilerrors.NewAggregate(errors).Error(): "" for none, the text of one, "[a, b]" for
// several distinct ones (duplicates dropped).
std::string AggregateError(const std::vector<std::string>& errors);

}  // namespace berth::rbac
