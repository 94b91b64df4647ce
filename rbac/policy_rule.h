// PolicyRule (rbac.authorization.k8s.io/v1) as a typed value, and Kubernetes' rules for
// matching a request against a rule and for comparing rules.
//
// Matching follows pkg/apis/rbac/v1/evaluation_helpers.go and
// plugin/pkg/auth/authorizer/rbac/rbac.go (RuleAllows):
//   verbs            "*" or the request's verb
//   apiGroups        "*" or the request's group ("" is the core group)
//   resources        "*"; or the request's "resource" (no subresource) or
//                    "resource/subresource" exactly ("pods/log"); or "*/subresource"
//                    for any resource's subresource ("*/scale"). "pods" does not match
//                    a pods/log request, and "pods/*" matches nothing but a
//                    subresource literally named "*".
//   resourceNames    empty = every name; else the request's name must be listed (a
//                    list or create request has no name, so such a rule never allows
//                    it)
//   nonResourceURLs  "*", the path exactly, or a prefix ending in "*" ("/apis/*"
//                    matches "/apis/" and "/apis/batch/v1" but not "/apis")
// Covers (escalation checks) follows staging/src/k8s.io/component-helpers/auth/rbac/
// validation/policy_comparator.go: a servant rule is broken down into one rule per
// group x resource x verb (x resourceName) and per nonResourceURL x verb, and each piece
// must be covered by a single owner rule.
//
// Thread-safety: plain values and pure functions.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"

namespace berth::rbac {

// rbacv1 constants (k8s.io/api/rbac/v1/types.go).
inline constexpr char kGroupName[] = "rbac.authorization.k8s.io";
inline constexpr char kVerbAll[] = "*";
inline constexpr char kAPIGroupAll[] = "*";
inline constexpr char kResourceAll[] = "*";
inline constexpr char kNonResourceAll[] = "*";

struct PolicyRule {
  std::vector<std::string> verbs;
  std::vector<std::string> api_groups;
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;
  std::vector<std::string> non_resource_urls;

  bool operator==(const PolicyRule&) const = default;
};

// From a PolicyRule JSON object; absent, null or non-string members read as empty.
PolicyRule RuleFromJson(const api::Object& rule);
std::vector<PolicyRule> RulesFromJson(const api::Object& rules);  // a JSON array (else none)
// To JSON with upstream's member names; empty lists are omitted (omitempty), except verbs.
api::Object RuleToJson(const PolicyRule& rule);

bool VerbMatches(const PolicyRule& rule, std::string_view verb);
bool APIGroupMatches(const PolicyRule& rule, std::string_view group);
// `combined` is "resource" or "resource/subresource"; `subresource` the part after '/'.
bool ResourceMatches(const PolicyRule& rule, std::string_view combined, std::string_view subresource);
bool ResourceNameMatches(const PolicyRule& rule, std::string_view name);
bool NonResourceURLMatches(const PolicyRule& rule, std::string_view path);

// BreakdownRule: the equivalent rules with at most one verb, group, resource and name each.
std::vector<PolicyRule> BreakdownRule(const PolicyRule& rule);
// Covers: true when every piece of every servant rule is covered by one owner rule; the
// pieces that are not are appended to *missing when it is non-null.
bool Covers(const std::vector<PolicyRule>& owner, const std::vector<PolicyRule>& servant,
            std::vector<PolicyRule>* missing = nullptr);

// CompactString: `{APIGroups:["batch"], Resources:["jobs"], Verbs:["get"]}`, the form
// escalation errors list (Go's %q of a []string: `["a" "b"]`); empty lists are left out.
std::string CompactString(const PolicyRule& rule);
// SubjectsStrings (evaluation_helpers.go), for the bindings' table columns: the names of
// the User and Group subjects, "<namespace>/<name>" of the ServiceAccounts and
// "<kind>/<namespace>/<name>" of any other kind, each in the order given.
struct SubjectStrings {
  std::vector<std::string> users, groups, service_accounts, others;
};
SubjectStrings SubjectsStrings(const api::Object& subjects);

// Go's %q of a []string.
std::string GoQuoteList(const std::vector<std::string>& values);

}  // namespace berth::rbac
