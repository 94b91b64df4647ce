#include "rbac/escalation.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "api/field_errors.h"
#include "api/unstructured.h"
#include "rbac/policy_rule.h"

namespace berth::rbac {
namespace {

// compact.go: rules with one group, one resource, at most one name and nothing else are
// merged when they differ only in verbs (first-seen verb order); others are kept as they
// are. Upstream iterates a map for the merged ones; the caller sorts the descriptions.
std::vector<PolicyRule> CompactRules(const std::vector<PolicyRule>& rules) {
  std::vector<PolicyRule> out;
  std::map<std::tuple<std::string, std::string, bool, std::string>, PolicyRule> simple;
  for (const auto& rule : rules) {
    bool is_simple = rule.resource_names.size() <= 1 && rule.non_resource_urls.empty() && rule.api_groups.size() == 1 &&
                     rule.resources.size() == 1;
    if (!is_simple) {
      out.push_back(rule);
      continue;
    }
    auto key = std::make_tuple(rule.api_groups[0], rule.resources[0], !rule.resource_names.empty(),
                               rule.resource_names.empty() ? std::string() : rule.resource_names[0]);
    auto [it, inserted] = simple.emplace(key, rule);
    if (inserted) continue;
    for (const auto& verb : rule.verbs) {
      if (std::find(it->second.verbs.begin(), it->second.verbs.end(), verb) == it->second.verbs.end()) {
        it->second.verbs.push_back(verb);
      }
    }
  }
  for (auto& [key, rule] : simple) out.push_back(std::move(rule));
  return out;
}

std::vector<api::Object> RulesOf(const api::Object& role) {
  const api::Object& rules = api::Field(role, "rules");
  if (!rules.is_array()) return {};
  return std::vector<api::Object>(rules.begin(), rules.end());
}

// fullAuthority (clusterrole/policybased/storage.go): cluster-admin's rules.
std::vector<api::Object> FullAuthority() {
  return {RuleToJson(PolicyRule{{"*"}, {"*"}, {"*"}, {}, {}}), RuleToJson(PolicyRule{{"*"}, {}, {}, {}, {"*"}})};
}

// IsOnlyMutatingGCFields (pkg/registry/rbac/helpers.go): equal once ownerReferences and
// finalizers (and the server-maintained metadata) are taken from the old object.
bool IsOnlyMutatingGCFields(const api::Object& obj, const api::Object& old) {
  api::Object a = obj;
  api::Object b = old;
  for (api::Object* o : {&a, &b}) {
    if (!o->is_object()) return false;
    api::Object& meta = (*o)["metadata"];
    if (!meta.is_object()) meta = api::Object::object();
    for (const char* f : {"ownerReferences", "finalizers", "managedFields", "resourceVersion", "selfLink", "generation",
                          "uid", "creationTimestamp"}) {
      meta.erase(f);
    }
  }
  return a == b;
}

Status Forbidden(const api::Object& obj, std::string_view resource, std::string_view why) {
  return ForbiddenError(std::string(resource) + "." + kGroupName + " " + api::GoQuote(api::Name(obj)) +
                        " is forbidden: " + std::string(why));
}

}  // namespace

bool EscalationAllowed(const authn::UserInfo& user) { return authn::IsSystemMaster(user); }

bool RoleEscalationAuthorized(const Authorizer& authorizer, const authn::UserInfo& user, std::string_view resource,
                              std::string_view ns, std::string_view name) {
  if (resource != "roles" && resource != "clusterroles") return false;
  RequestAttributes attrs;
  attrs.user = user;
  attrs.verb = "escalate";
  attrs.api_group = kGroupName;
  attrs.api_version = "v1";
  attrs.resource = std::string(resource);
  attrs.ns = std::string(ns);
  attrs.name = std::string(name);
  return authorizer.Authorize(attrs).allowed;
}

bool BindingAuthorized(const Authorizer& authorizer, const authn::UserInfo& user, const api::Object& role_ref,
                       std::string_view binding_ns) {
  const std::string kind = api::StringAt(role_ref, "kind");
  RequestAttributes attrs;
  attrs.user = user;
  attrs.verb = "bind";
  attrs.ns = std::string(binding_ns);
  attrs.api_group = api::StringAt(role_ref, "apiGroup");
  attrs.name = api::StringAt(role_ref, "name");
  if (kind == "ClusterRole") {
    attrs.resource = "clusterroles";
  } else if (kind == "Role") {
    attrs.resource = "roles";
  } else {
    return false;
  }
  return authorizer.Authorize(attrs).allowed;
}

Status ConfirmNoEscalation(const Authorizer& authorizer, const authn::UserInfo& user, std::string_view ns,
                           const std::vector<api::Object>& rules) {
  std::vector<PolicyRule> owner;
  std::vector<std::string> errors;
  for (const auto& r : authorizer.RulesFor(user, ns, &errors)) owner.push_back(RuleFromJson(r));
  std::vector<PolicyRule> servant;
  for (const auto& r : rules) servant.push_back(RuleFromJson(r));
  std::size_t permissions = 0;
  for (const PolicyRule& r : servant) {
    const std::size_t verbs = r.verbs.size();
    const std::size_t resource = verbs * r.api_groups.size() * r.resources.size() *
                                 std::max<std::size_t>(1, r.resource_names.size());
    permissions += resource + verbs * r.non_resource_urls.size();
    if (permissions > kMaxEscalationCheckPermissions) {
      return ForbiddenError("user " + api::GoQuote(user.name) +
                            " is attempting to grant RBAC permissions that expand to more than " +
                            std::to_string(kMaxEscalationCheckPermissions) +
                            " single permissions, which berth does not check; grant fewer, or use '*'");
    }
  }
  std::vector<PolicyRule> missing;
  if (Covers(owner, servant, &missing)) return Status::Ok();
  std::set<std::string> descriptions;  // sets.NewString(...).List(): sorted, unique
  for (const auto& rule : CompactRules(missing)) descriptions.insert(CompactString(rule));
  std::string msg = "user " + api::GoQuote(user.name) + " (groups=" + GoQuoteList(user.groups) +
                    ") is attempting to grant RBAC permissions not currently held:\n";
  bool first = true;
  for (const auto& d : descriptions) {
    if (!first) msg += "\n";
    msg += d;
    first = false;
  }
  // fmt's %v of a []error holding the one aggregate.
  if (!errors.empty()) msg += "; resolution errors: [" + AggregateError(errors) + "]";
  return ForbiddenError(std::move(msg));
}

Status CheckRbacWrite(const Authorizer& authorizer, const authn::UserInfo& user, const api::Object& obj,
                      const api::Object* old) {
  const std::string kind = api::StringAt(obj, "kind");
  const bool role = kind == "Role" || kind == "ClusterRole";
  const bool binding = kind == "RoleBinding" || kind == "ClusterRoleBinding";
  if (!role && !binding) return Status::Ok();
  if (EscalationAllowed(user)) return Status::Ok();
  const std::string ns = (kind == "Role" || kind == "RoleBinding") ? api::Namespace(obj) : std::string();
  const char* resource = kind == "Role"          ? "roles"
                         : kind == "ClusterRole" ? "clusterroles"
                         : kind == "RoleBinding" ? "rolebindings"
                                                 : "clusterrolebindings";
  if (role) {
    if (RoleEscalationAuthorized(authorizer, user, resource, ns, api::Name(obj))) return Status::Ok();
    if (old != nullptr && IsOnlyMutatingGCFields(obj, *old)) return Status::Ok();
    Status s = ConfirmNoEscalation(authorizer, user, ns, RulesOf(obj));
    if (!s.ok()) return Forbidden(obj, resource, s.message());
    if (kind == "ClusterRole") {
      const api::Object& aggregation = api::Field(obj, "aggregationRule");
      bool check = old == nullptr ? !aggregation.is_null() : aggregation != api::Field(*old, "aggregationRule");
      if (check && !ConfirmNoEscalation(authorizer, user, "", FullAuthority()).ok()) {
        return Forbidden(obj, resource, "must have cluster-admin privileges to use the aggregationRule");
      }
    }
    return Status::Ok();
  }
  if (old != nullptr && IsOnlyMutatingGCFields(obj, *old)) return Status::Ok();
  const api::Object& role_ref = api::Field(obj, "roleRef");
  if (BindingAuthorized(authorizer, user, role_ref, ns)) return Status::Ok();
  auto rules = authorizer.RoleReferenceRules(role_ref, ns);
  if (!rules.ok()) {
    // The policy-based storage reads the role through the role's own REST storage
    // (role.AuthorizerAdapter over the registry), so a missing one is that
    // storage's 404.
    const std::string ref_kind = api::StringAt(role_ref, "kind");
    if (ref_kind == "Role" || ref_kind == "ClusterRole") {
      return NotFoundError(std::string(ref_kind == "Role" ? "roles" : "clusterroles") + ".rbac.authorization.k8s.io " +
                           api::GoQuote(api::StringAt(role_ref, "name")) + " not found");
    }
    return BadRequestError(rules.status().message());
  }
  Status s = ConfirmNoEscalation(authorizer, user, ns, *rules);
  if (!s.ok()) return Forbidden(obj, resource, s.message());
  return Status::Ok();
}

}  // namespace berth::rbac
