#include "rbac/authorizer.h"

#include <algorithm>
#include <functional>

#include "api/field_errors.h"
#include "api/unstructured.h"
#include "rbac/policy_rule.h"

namespace berth::rbac {
namespace {

// appliesToUser (rule.go): does one binding subject name this user?
bool AppliesToUser(const authn::UserInfo& user, const api::Object& subject, std::string_view binding_ns) {
  const std::string kind = api::StringAt(subject, "kind");
  const std::string name = api::StringAt(subject, "name");
  if (kind == "User") return user.name == name;
  if (kind == "Group") return std::find(user.groups.begin(), user.groups.end(), name) != user.groups.end();
  if (kind == "ServiceAccount") {
    std::string ns = api::StringAt(subject, "namespace");
    if (ns.empty()) ns = std::string(binding_ns);
    if (ns.empty()) return false;
    return user.name == std::string(authn::kServiceAccountUserPrefix) + ns + ":" + name;
  }
  return false;
}

// describeSubject (rule.go).
std::string DescribeSubject(const api::Object& subject, std::string_view binding_ns) {
  const std::string kind = api::StringAt(subject, "kind");
  std::string name = api::StringAt(subject, "name");
  if (kind == "ServiceAccount") {
    const std::string& ns = api::StringAt(subject, "namespace");
    name += "/" + (ns.empty() ? std::string(binding_ns) : ns);
  }
  return kind + " " + api::GoQuote(name);
}

// The index of the first subject of `binding` that names the user, or -1.
int AppliesTo(const authn::UserInfo& user, const api::Object& binding, std::string_view binding_ns) {
  const api::Object& subjects = api::ArrayAt(binding, "subjects");
  for (size_t i = 0; i < subjects.size(); ++i) {
    if (AppliesToUser(user, subjects[i], binding_ns)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::string AggregateError(const std::vector<std::string>& errors) {
  std::vector<std::string> seen;
  std::string result;
  for (const auto& e : errors) {
    if (std::find(seen.begin(), seen.end(), e) != seen.end()) continue;
    if (!seen.empty()) result += ", ";
    seen.push_back(e);
    result += e;
  }
  return seen.size() <= 1 ? result : "[" + result + "]";
}

namespace {

// A binding's rules or the error resolving its role, with the describer of the source.
using Visitor = std::function<bool(const std::string* source, const api::Object* rule, const Status* err)>;

// VisitRulesFor (rule.go): ClusterRoleBindings, then the RoleBindings of `ns`; the visitor
// returns false to stop.
void VisitRulesFor(const Authorizer& authorizer, const PolicySource& policy, const authn::UserInfo& user,
                   std::string_view ns, const Visitor& visit) {
  for (const auto& binding : policy.ClusterRoleBindings()) {
    int subject = AppliesTo(user, *binding, "");
    if (subject < 0) continue;
    const api::Object& ref = api::ObjectAt(*binding, "roleRef");
    auto rules = authorizer.RoleReferenceRules(ref, "");
    if (!rules.ok()) {
      if (!visit(nullptr, nullptr, &rules.status())) return;
      continue;
    }
    std::string source = "ClusterRoleBinding " + api::GoQuote(api::Name(*binding)) + " of " +
                         api::StringAt(ref, "kind") + " " + api::GoQuote(api::StringAt(ref, "name")) + " to " +
                         DescribeSubject((*binding)["subjects"][subject], "");
    for (const auto& rule : *rules) {
      if (!visit(&source, &rule, nullptr)) return;
    }
  }
  if (ns.empty()) return;
  for (const auto& binding : policy.RoleBindings(ns)) {
    int subject = AppliesTo(user, *binding, ns);
    if (subject < 0) continue;
    const api::Object& ref = api::ObjectAt(*binding, "roleRef");
    auto rules = authorizer.RoleReferenceRules(ref, ns);
    if (!rules.ok()) {
      if (!visit(nullptr, nullptr, &rules.status())) return;
      continue;
    }
    std::string source = "RoleBinding " + api::GoQuote(api::Name(*binding) + "/" + api::Namespace(*binding)) + " of " +
                         api::StringAt(ref, "kind") + " " + api::GoQuote(api::StringAt(ref, "name")) + " to " +
                         DescribeSubject((*binding)["subjects"][subject], api::Namespace(*binding));
    for (const auto& rule : *rules) {
      if (!visit(&source, &rule, nullptr)) return;
    }
  }
}

// RuleAllows (rbac.go).
bool RuleAllows(const RequestAttributes& request, const PolicyRule& rule) {
  if (request.resource_request) {
    std::string combined = request.resource;
    if (!request.subresource.empty()) combined += "/" + request.subresource;
    return VerbMatches(rule, request.verb) && APIGroupMatches(rule, request.api_group) &&
           ResourceMatches(rule, combined, request.subresource) && ResourceNameMatches(rule, request.name);
  }
  return VerbMatches(rule, request.verb) && NonResourceURLMatches(rule, request.path);
}

}  // namespace

Authorizer::Authorizer(const PolicySource* policy) : policy_(policy) {}

StatusOr<std::vector<api::Object>> Authorizer::RoleReferenceRules(const api::Object& role_ref,
                                                                  std::string_view binding_ns) const {
  const std::string kind = api::StringAt(role_ref, "kind");
  const std::string name = api::StringAt(role_ref, "name");
  std::shared_ptr<const api::Object> role;
  if (kind == "Role") {
    if (!binding_ns.empty()) role = policy_->Role(binding_ns, name);
    if (role == nullptr) return NotFoundError("role.rbac.authorization.k8s.io " + api::GoQuote(name) + " not found");
  } else if (kind == "ClusterRole") {
    role = policy_->ClusterRole(name);
    if (role == nullptr) {
      return NotFoundError("clusterrole.rbac.authorization.k8s.io " + api::GoQuote(name) + " not found");
    }
  } else {
    return NotFoundError("unsupported role reference kind: " + api::GoQuote(kind));
  }
  std::vector<api::Object> rules;
  auto it = role->find("rules");
  if (it != role->end() && it->is_array()) rules.assign(it->begin(), it->end());
  return rules;
}

Decision Authorizer::Authorize(const RequestAttributes& request) const {
  Decision decision;
  std::vector<std::string> errors;
  VisitRulesFor(*this, *policy_, request.user, request.ns,
                [&](const std::string* source, const api::Object* rule, const Status* err) {
                  if (rule != nullptr && RuleAllows(request, RuleFromJson(*rule))) {
                    decision.allowed = true;
                    decision.reason = "RBAC: allowed by " + *source;
                    return false;
                  }
                  if (err != nullptr) errors.push_back(err->message());
                  return true;
                });
  if (!decision.allowed && !errors.empty()) decision.reason = "RBAC: " + AggregateError(errors);
  return decision;
}

std::vector<api::Object> Authorizer::RulesFor(const authn::UserInfo& user, std::string_view ns,
                                              std::vector<std::string>* errors) const {
  std::vector<api::Object> rules;
  VisitRulesFor(*this, *policy_, user, ns, [&](const std::string*, const api::Object* rule, const Status* err) {
    if (rule != nullptr) rules.push_back(*rule);
    if (err != nullptr && errors != nullptr) errors->push_back(err->message());
    return true;
  });
  return rules;
}

api::Object SubjectRulesReviewStatus(const Authorizer& authorizer, const authn::UserInfo& user, std::string_view ns) {
  std::vector<std::string> errors;
  api::Object resource_rules = api::Object::array();
  api::Object non_resource_rules = api::Object::array();
  for (const auto& json : authorizer.RulesFor(user, ns, &errors)) {
    PolicyRule rule = RuleFromJson(json);
    if (!rule.resources.empty()) {
      api::Object r = {{"verbs", rule.verbs}, {"resources", rule.resources}};  // omitempty but verbs
      if (!rule.api_groups.empty()) r["apiGroups"] = rule.api_groups;
      if (!rule.resource_names.empty()) r["resourceNames"] = rule.resource_names;
      resource_rules.push_back(std::move(r));
    }
    if (!rule.non_resource_urls.empty()) {
      non_resource_rules.push_back({{"verbs", rule.verbs}, {"nonResourceURLs", rule.non_resource_urls}});
    }
  }
  api::Object status = {{"resourceRules", std::move(resource_rules)},
                        {"nonResourceRules", std::move(non_resource_rules)},
                        {"incomplete", false}};
  if (!errors.empty()) status["evaluationError"] = AggregateError(errors);
  return status;
}

std::string ForbiddenMessage(const RequestAttributes& request) {
  const std::string user = api::GoQuote(request.user.name);
  if (!request.resource_request) {
    return "User " + user + " cannot " + request.verb + " path " + api::GoQuote(request.path);
  }
  std::string resource = request.resource;
  if (!request.subresource.empty()) resource += "/" + request.subresource;
  std::string out = "User " + user + " cannot " + request.verb + " resource " + api::GoQuote(resource) +
                    " in API group " + api::GoQuote(request.api_group);
  if (!request.ns.empty()) return out + " in the namespace " + api::GoQuote(request.ns);
  return out + " at the cluster scope";
}

}  // namespace berth::rbac
