// Strategies of the rbac.authorization.k8s.io/v1 kinds: Role, ClusterRole, RoleBinding and
// ClusterRoleBinding (Kubernetes v1.32, pkg/apis/rbac/validation/validation.go,
// pkg/apis/rbac/v1/defaults.go, pkg/registry/rbac/*/strategy.go). The messages and paths
// are upstream's.
//
// Names (all four kinds, and roleRef.name): path segment names
// (path.IsValidPathSegmentName): not "." or ".." (`may not be '.'`), no '/' or '%'
// (`may not contain '/'`); "system:basic-user" is valid.
//
// Role / ClusterRole, each rules[i] (validatePolicyRule):
//   verbs empty                 rules[0].verbs: Required value: verbs must contain at least one value
//   nonResourceURLs in a Role   rules[0].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot apply
//   to non-resource URLs nonResourceURLs with apiGroups, resources or resourceNames
//                               rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both
//                               regular resources and non-resource URLs
//   otherwise apiGroups empty   rules[0].apiGroups: Required value: resource rules must supply at least one api group
//             resources empty   rules[0].resources: Required value: resource rules must supply at least one resource
//             resourceNames with several resources
//                               rules[0].resourceNames: Required value: resource names cannot apply to multiple
//                               resources
// ClusterRole aggregationRule: at least one selector (aggregationRule.clusterRoleSelectors:
//   Required value: at least one clusterRoleSelector required if aggregationRule is non-nil),
//   each a valid label selector (ValidateLabelSelector under
//   aggregationRule.clusterRoleSelectors[i]).
//
// RoleBinding / ClusterRoleBinding:
//   defaults (SetDefaults_*): roleRef.apiGroup rbac.authorization.k8s.io when empty;
//     a User or Group subject's apiGroup rbac.authorization.k8s.io when empty.
//   roleRef.apiGroup not rbac.authorization.k8s.io: Unsupported value
//   roleRef.kind: Role or ClusterRole (a ClusterRoleBinding: ClusterRole only), Unsupported value
//   roleRef.name: Required value when empty, else a path segment name
//   subjects[i]: name Required; kind User|Group|ServiceAccount (Unsupported value);
//     ServiceAccount: name a DNS-1123 subdomain, apiGroup "" (Unsupported value), and in a
//     ClusterRoleBinding namespace Required; User/Group: apiGroup rbac.authorization.k8s.io
//     (Unsupported value), an empty name also `Invalid value: "": user name cannot be empty`.
//   update: `roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io",
//     Kind:"ClusterRole", Name:"edit"}: cannot change roleRef`.
// Values that upstream prints with Go's %#v ([]string, rbac.RoleRef) are printed the same.
//
// Who may write these objects (escalation prevention) is the authorizer's business
// (rbac/escalation.h), not the strategy's.
//
// Thread-safety: stateless.
#pragma once

#include "api/field_errors.h"
#include "api/object.h"
#include "api/strategy.h"

namespace berth::api {

// Registers the four RBAC strategies.
void RegisterRbacStrategies(StrategyRegistry* registry);

// The validation of each kind, exposed for tests and tools.
FieldErrorList ValidateRole(const Object& role);
FieldErrorList ValidateClusterRole(const Object& role);
FieldErrorList ValidateRoleBinding(const Object& binding);
FieldErrorList ValidateClusterRoleBinding(const Object& binding);
// roleRef immutability (both binding kinds).
FieldErrorList ValidateBindingUpdate(const Object& binding, const Object& old);
// path.IsValidPathSegmentName.
std::vector<std::string> IsValidPathSegmentName(std::string_view name);

}  // namespace berth::api
