// Rule matching and Covers, with the cases of upstream's plugin/pkg/auth/authorizer/rbac/
// rbac_test.go (TestRuleMatches) and component-helpers' policy_comparator_test.go.
#include "rbac/policy_rule.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace berth::rbac {
namespace {

struct Request {
  std::string verb, group, resource, subresource, name, path;
  bool resource_request = true;
};

Request Res(std::string verb, std::string group, std::string resource, std::string subresource = "",
            std::string name = "") {
  return Request{
      std::move(verb), std::move(group), std::move(resource), std::move(subresource), std::move(name), "", true};
}
Request Url(std::string verb, std::string path) {
  return Request{std::move(verb), "", "", "", "", std::move(path), false};
}

// rbac.go RuleAllows over the helpers.
bool Allows(const PolicyRule& rule, const Request& r) {
  if (!r.resource_request) return VerbMatches(rule, r.verb) && NonResourceURLMatches(rule, r.path);
  std::string combined = r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
  return VerbMatches(rule, r.verb) && APIGroupMatches(rule, r.group) &&
         ResourceMatches(rule, combined, r.subresource) && ResourceNameMatches(rule, r.name);
}

PolicyRule Rule(std::vector<std::string> verbs, std::vector<std::string> groups, std::vector<std::string> resources,
                std::vector<std::string> names = {}) {
  return PolicyRule{std::move(verbs), std::move(groups), std::move(resources), std::move(names), {}};
}
PolicyRule Urls(std::vector<std::string> verbs, std::vector<std::string> urls) {
  return PolicyRule{std::move(verbs), {}, {}, {}, std::move(urls)};
}

struct Case {
  const char* name;
  PolicyRule rule;
  std::vector<std::pair<Request, bool>> expected;
};

TEST(RuleMatchesTest, UpstreamTable) {
  const std::vector<Case> cases = {
      {"star verb, exact match other",
       Rule({"*"}, {"group1"}, {"resource1"}),
       {{Res("verb1", "group1", "resource1"), true},
        {Res("verb1", "group2", "resource1"), false},
        {Res("verb1", "group1", "resource2"), false},
        {Res("verb2", "group1", "resource1"), true}}},
      {"star group, exact match other",
       Rule({"verb1"}, {"*"}, {"resource1"}),
       {{Res("verb1", "group1", "resource1"), true},
        {Res("verb1", "group2", "resource1"), true},
        {Res("verb1", "group1", "resource2"), false},
        {Res("verb2", "group1", "resource1"), false}}},
      {"star resource, exact match other",
       Rule({"verb1"}, {"group1"}, {"*"}),
       {{Res("verb1", "group1", "resource1"), true},
        {Res("verb1", "group2", "resource1"), false},
        {Res("verb1", "group1", "resource2"), true},
        {Res("verb2", "group1", "resource1"), false}}},
      {"tuple expansion",
       Rule({"verb1", "verb2"}, {"group1", "group2"}, {"resource1", "resource2"}),
       {{Res("verb1", "group1", "resource1"), true},
        {Res("verb2", "group2", "resource2"), true},
        {Res("verb3", "group1", "resource1"), false}}},
      {"subresource expansion",
       Rule({"*"}, {"*"}, {"resource1/subresource1"}),
       {{Res("verb1", "group1", "resource1", "subresource1"), true},
        {Res("verb1", "group2", "resource1", "subresource2"), false},
        {Res("verb1", "group1", "resource2", "subresource1"), false},
        {Res("verb1", "group1", "resource1"), false}}},
      {"star nonresource, exact match other",
       Urls({"verb1"}, {"*"}),
       {{Url("verb1", "/foo"), true},
        {Url("verb1", "/foo/bar"), true},
        {Url("verb1", "/foo/bar/one"), true},
        {Url("verb2", "/foo"), false}}},
      {"star nonresource subpath",
       Urls({"verb1"}, {"/foo/*"}),
       {{Url("verb1", "/foo"), false},
        {Url("verb1", "/foo/bar"), true},
        {Url("verb1", "/foo/bar/one"), true},
        {Url("verb1", "/notfoo"), false},
        {Url("verb1", "/notfoo/bar"), false}}},
      {"star verb, exact nonresource",
       Urls({"*"}, {"/foo", "/foo/bar/one"}),
       {{Url("verb1", "/foo"), true},
        {Url("verb1", "/foo/bar"), false},
        {Url("verb1", "/foo/bar/one"), true},
        {Url("verb2", "/foo"), true}}},
      // Beyond upstream's table: the resource forms the brief names.
      {"pods does not match its subresources",
       Rule({"get"}, {""}, {"pods"}),
       {{Res("get", "", "pods"), true},
        {Res("get", "", "pods", "log"), false},
        {Res("get", "", "pods", "status"), false}}},
      {"pods/log matches only pods/log",
       Rule({"get"}, {""}, {"pods/log"}),
       {{Res("get", "", "pods", "log"), true},
        {Res("get", "", "pods"), false},
        {Res("get", "", "pods", "exec"), false}}},
      {"*/scale matches any resource's scale",
       Rule({"update"}, {"*"}, {"*/scale"}),
       {{Res("update", "apps", "deployments", "scale"), true},
        {Res("update", "", "replicationcontrollers", "scale"), true},
        {Res("update", "apps", "deployments"), false},
        {Res("update", "apps", "deployments", "status"), false}}},
      {"pods/* is not a wildcard",
       Rule({"get"}, {""}, {"pods/*"}),
       {{Res("get", "", "pods", "log"), false}, {Res("get", "", "pods"), false}, {Res("get", "", "pods", "*"), true}}},
      {"star resource matches subresources", Rule({"get"}, {""}, {"*"}), {{Res("get", "", "pods", "log"), true}}},
      {"core group is the empty string",
       Rule({"get"}, {""}, {"pods"}),
       {{Res("get", "", "pods"), true}, {Res("get", "batch", "pods"), false}}},
      {"resourceNames restrict to the names listed",
       Rule({"get", "list"}, {""}, {"configmaps"}, {"cm1"}),
       {{Res("get", "", "configmaps", "", "cm1"), true},
        {Res("get", "", "configmaps", "", "cm2"), false},
        {Res("list", "", "configmaps"), false}}},
      {"nonResourceURL prefix without slash",
       Urls({"get"}, {"/healthz*"}),
       {{Url("get", "/healthz"), true}, {Url("get", "/healthz/etcd"), true}, {Url("get", "/health"), false}}},
  };
  for (const auto& c : cases) {
    for (const auto& [request, want] : c.expected) {
      EXPECT_EQ(Allows(c.rule, request), want) << c.name << ": " << request.verb << " " << request.group << "/"
                                               << request.resource << "/" << request.subresource << " " << request.path;
    }
  }
}

TEST(RuleMatchesTest, NonResourceRuleNeverMatchesResourceRequest) {
  PolicyRule r = Urls({"*"}, {"*"});
  EXPECT_FALSE(Allows(r, Res("get", "", "pods")));
  PolicyRule resources = Rule({"*"}, {"*"}, {"*"});
  EXPECT_FALSE(Allows(resources, Url("get", "/healthz")));
}

TEST(CoversTest, UpstreamComparatorCases) {
  struct C {
    const char* name;
    std::vector<PolicyRule> owner, servant;
    bool covers;
    std::vector<PolicyRule> missing;
  };
  const std::vector<C> cases = {
      {"exact match", {Rule({"get"}, {"v1"}, {"builds"})}, {Rule({"get"}, {"v1"}, {"builds"})}, true, {}},
      {"subresource wildcard", {Rule({"get"}, {"v1"}, {"*/scale"})}, {Rule({"get"}, {"v1"}, {"foo/scale"})}, true, {}},
      {"multiple rules covering single rule",
       {Rule({"delete"}, {"v1"}, {"deployments"}), Rule({"delete"}, {"v1"}, {"builds"}),
        Rule({"update"}, {"v1"}, {"builds", "deployments"})},
       {Rule({"delete", "update"}, {"v1"}, {"builds", "deployments"})},
       true,
       {}},
      {"multiple api groups",
       {Rule({"get"}, {"group1", "group2"}, {"pods"})},
       {Rule({"get"}, {"group1", "group2"}, {"pods"})},
       true,
       {}},
      {"single api group fails",
       {Rule({"get"}, {"group1"}, {"pods"})},
       {Rule({"get"}, {"group1", "group2"}, {"pods"})},
       false,
       {Rule({"get"}, {"group2"}, {"pods"})}},
      {"resource name: owner without names covers names",
       {Rule({"get"}, {"v1"}, {"builds"})},
       {Rule({"get"}, {"v1"}, {"builds"}, {"foo"})},
       true,
       {}},
      {"resource name: equal",
       {Rule({"get"}, {"v1"}, {"builds"}, {"foo"})},
       {Rule({"get"}, {"v1"}, {"builds"}, {"foo"})},
       true,
       {}},
      {"resource name: owner with names does not cover all names",
       {Rule({"get"}, {"v1"}, {"builds"}, {"foo"})},
       {Rule({"get"}, {"v1"}, {"builds"})},
       false,
       {Rule({"get"}, {"v1"}, {"builds"})}},
      {"resource name: extra name missing",
       {Rule({"get"}, {"v1"}, {"builds"}, {"foo"})},
       {Rule({"get"}, {"v1"}, {"builds"}, {"foo", "bar"})},
       false,
       {Rule({"get"}, {"v1"}, {"builds"}, {"bar"})}},
      {"nonResourceURLs", {Urls({"get"}, {"/apis"})}, {Urls({"get"}, {"/apis"})}, true, {}},
      {"nonResourceURLs star", {Urls({"get"}, {"*"})}, {Urls({"get"}, {"/apis", "/apis/v1", "/"})}, true, {}},
      {"nonResourceURLs star after prefix",
       {Urls({"get"}, {"/api/*"})},
       {Urls({"get"}, {"/api/v1/foo", "/apis/v1/foo"})},
       false,
       {Urls({"get"}, {"/apis/v1/foo"})}},
      {"nonResourceURLs with other fields",
       {Rule({"get"}, {"v1"}, {"builds"}), Urls({"get"}, {"/apis"})},
       {Rule({"get"}, {"v1"}, {"builds"}), Urls({"get"}, {"/apis"})},
       true,
       {}},
      {"star verb owner", {Rule({"*"}, {"*"}, {"*"})}, {Rule({"escalate", "bind"}, {"x"}, {"roles/status"})}, true, {}},
      {"resource owner does not cover URLs",
       {Rule({"*"}, {"*"}, {"*"})},
       {Urls({"get"}, {"/healthz"})},
       false,
       {Urls({"get"}, {"/healthz"})}},
  };
  for (const auto& c : cases) {
    std::vector<PolicyRule> missing;
    EXPECT_EQ(Covers(c.owner, c.servant, &missing), c.covers) << c.name;
    EXPECT_EQ(missing, c.missing) << c.name;
  }
}

TEST(PolicyRuleTest, CompactStringAsUpstream) {
  EXPECT_EQ(CompactString(Rule({"get", "list"}, {""}, {"pods"})),
            R"({APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]})");
  EXPECT_EQ(CompactString(Rule({"get"}, {"batch"}, {"jobs"}, {"a"})),
            R"({APIGroups:["batch"], Resources:["jobs"], ResourceNames:["a"], Verbs:["get"]})");
  EXPECT_EQ(CompactString(Urls({"get"}, {"/healthz"})), R"({NonResourceURLs:["/healthz"], Verbs:["get"]})");
}

TEST(PolicyRuleTest, JsonRoundTripOmitsEmptyLists) {
  api::Object json = {{"verbs", {"get"}}, {"apiGroups", {""}}, {"resources", {"pods"}}};
  PolicyRule rule = RuleFromJson(json);
  EXPECT_EQ(rule, Rule({"get"}, {""}, {"pods"}));
  EXPECT_EQ(RuleToJson(rule), json);
  // Members of the wrong type read as empty.
  EXPECT_EQ(RuleFromJson({{"verbs", "get"}, {"resources", {1, "pods"}}}), Rule({}, {}, {"pods"}));
}

TEST(PolicyRuleTest, SubjectsStrings) {
  api::Object subjects = {{{"kind", "User"}, {"name", "alice"}},
                          {{"kind", "ServiceAccount"}, {"name", "builder"}, {"namespace", "team-a"}},
                          {{"kind", "Group"}, {"name", "team-a"}},
                          {{"kind", "Robot"}, {"name", "r2"}},
                          {{"kind", "User"}, {"name", "bob"}}};
  SubjectStrings s = SubjectsStrings(subjects);
  EXPECT_EQ(s.users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_EQ(s.groups, (std::vector<std::string>{"team-a"}));
  EXPECT_EQ(s.service_accounts, (std::vector<std::string>{"team-a/builder"}));
  EXPECT_EQ(s.others, (std::vector<std::string>{"Robot//r2"}));
}

}  // namespace
}  // namespace berth::rbac
