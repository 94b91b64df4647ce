// RBAC escalation prevention: a user may create or change a role, or a binding, only if
// they already hold every permission it grants, unless they are explicitly allowed to
// escalate (verb `escalate` on the role) or to bind (verb `bind` on the referenced role).
//
// Upstream: pkg/registry/rbac/escalation_check.go (EscalationAllowed,
// RoleEscalationAuthorized, BindingAuthorized), pkg/registry/rbac/validation/rule.go
// (ConfirmNoEscalation), pkg/registry/rbac/validation/compact.go (CompactRules) and the
// policy-based storages of pkg/registry/rbac/{role,clusterrole,rolebinding,
// clusterrolebinding}/policybased/storage.go, whose order of checks CheckRbacWrite follows:
//   1. a member of system:masters always passes (EscalationAllowed);
//   2. Role/ClusterRole: `escalate` on the role (RoleEscalationAuthorized) passes;
//      RoleBinding/ClusterRoleBinding: `bind` on the referenced role in the binding's
//      namespace ("" for a ClusterRoleBinding) passes (BindingAuthorized);
//   3. an update that changes nothing but metadata.ownerReferences/finalizers passes
//      (IsOnlyMutatingGCFields);
//   4. otherwise ConfirmNoEscalation of the role's rules, or of the referenced role's
//      rules (a missing role: 404 `clusterroles.rbac.authorization.k8s.io "x" not found`,
//      the role storage's answer, which the policy-based storage returns unchanged; a
//      roleRef kind other than Role/ClusterRole: 400), in the object's namespace; a ClusterRole with an aggregationRule
//      also needs cluster-admin's rules
//      ("must have cluster-admin privileges to use the aggregationRule").
// Refusals are 403 Forbidden `<resource>.rbac.authorization.k8s.io "<name>" is forbidden: <why>`.
//
// Thread-safety: pure functions over a thread-safe Authorizer.
#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "authn/user_info.h"
#include "core/status.h"
#include "rbac/authorizer.h"

namespace berth::rbac {

// EscalationAllowed: the user is in system:masters.
bool EscalationAllowed(const authn::UserInfo& user);

// RoleEscalationAuthorized: may `user` do verb "escalate" on `resource` ("roles" or
// "clusterroles"; anything else: false) named `name` in `ns`?
bool RoleEscalationAuthorized(const Authorizer& authorizer, const authn::UserInfo& user, std::string_view resource,
                              std::string_view ns, std::string_view name);

// BindingAuthorized: may `user` do verb "bind" on the role `role_ref` {apiGroup, kind,
// name} names ("roles" for kind Role, "clusterroles" for ClusterRole, else false) in
// `binding_ns`?
bool BindingAuthorized(const Authorizer& authorizer, const authn::UserInfo& user, const api::Object& role_ref,
                       std::string_view binding_ns);

// The most single permissions (verb x group x resource x name, or verb x URL)
// the rules of one write may expand to for ConfirmNoEscalation. Upstream
// checks any number; berth refuses more (403, "... expands to N single
// permissions, more than 100000 ...") so that one write of a role with
// hundreds of thousands of verbs cannot hold a request thread for seconds.
// Real roles expand to a few thousand at most (cluster-admin's `*` is one).
inline constexpr std::size_t kMaxEscalationCheckPermissions = 100'000;

// ConfirmNoEscalation: OK when the user's rules in `ns` (Authorizer::RulesFor) cover
// `rules` (PolicyRule JSON objects, policy_rule.h Covers). Else Forbidden with the bare
// upstream text
//   user "bob" (groups=["team-a" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:
//   {APIGroups:["kueue.x-k8s.io"], Resources:["clusterqueues"], Verbs:["create" "delete"]}
// (missing pieces compacted per group/resource/name, one per line, sorted), followed by
// `; resolution errors: [<AggregateError>]` when a binding of the user names a missing role.
Status ConfirmNoEscalation(const Authorizer& authorizer, const authn::UserInfo& user, std::string_view ns,
                           const std::vector<api::Object>& rules);

// The whole check of a create (old == nullptr) or update of `obj`, a Role, ClusterRole,
// RoleBinding or ClusterRoleBinding (by obj.kind; other kinds pass), in the order above.
Status CheckRbacWrite(const Authorizer& authorizer, const authn::UserInfo& user, const api::Object& obj,
                      const api::Object* old);

}  // namespace berth::rbac
