#include "rbac/authorizer.h"

#include <gtest/gtest.h>

#include "rbac/static_policy.h"

namespace berth::rbac {
namespace {

api::Object Role(const std::string& kind, const std::string& ns, const std::string& name, api::Object rules) {
  api::Object r = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                   {"kind", kind},
                   {"metadata", {{"name", name}}},
                   {"rules", std::move(rules)}};
  if (!ns.empty()) r["metadata"]["namespace"] = ns;
  return r;
}

api::Object Binding(const std::string& kind, const std::string& ns, const std::string& name,
                    const std::string& role_kind, const std::string& role, api::Object subjects) {
  api::Object b = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                   {"kind", kind},
                   {"metadata", {{"name", name}}},
                   {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", role_kind}, {"name", role}}},
                   {"subjects", std::move(subjects)}};
  if (!ns.empty()) b["metadata"]["namespace"] = ns;
  return b;
}

api::Object User(const std::string& name) {
  return {{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", name}};
}
api::Object Group(const std::string& name) {
  return {{"kind", "Group"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", name}};
}
api::Object SA(const std::string& name, const std::string& ns = "") {
  api::Object s = {{"kind", "ServiceAccount"}, {"name", name}};
  if (!ns.empty()) s["namespace"] = ns;
  return s;
}

api::Object PodReader() {
  return api::Object::array({{{"verbs", {"get", "list"}}, {"apiGroups", {""}}, {"resources", {"pods"}}}});
}

RequestAttributes Req(authn::UserInfo user, std::string verb, std::string group, std::string resource, std::string ns,
                      std::string name = "", std::string subresource = "") {
  RequestAttributes r;
  r.user = std::move(user);
  r.verb = std::move(verb);
  r.api_group = std::move(group);
  r.resource = std::move(resource);
  r.ns = std::move(ns);
  r.name = std::move(name);
  r.subresource = std::move(subresource);
  return r;
}

authn::UserInfo Alice() { return {"alice", "", {"team-a", "system:authenticated"}, {}}; }

class AuthorizerTest : public ::testing::Test {
 protected:
  AuthorizerTest()
      : policy_({
            Role("ClusterRole", "", "pod-reader", PodReader()),
            Role("Role", "team-a", "cm-writer",
                 api::Object::array({{{"verbs", {"create"}}, {"apiGroups", {""}}, {"resources", {"configmaps"}}}})),
            Role("ClusterRole", "", "healthz",
                 api::Object::array({{{"verbs", {"get"}}, {"nonResourceURLs", {"/healthz", "/apis/*"}}}})),
            Binding("ClusterRoleBinding", "", "ops-read", "ClusterRole", "pod-reader", {User("ops")}),
            Binding("ClusterRoleBinding", "", "everyone-healthz", "ClusterRole", "healthz",
                    {Group("system:authenticated")}),
            Binding("RoleBinding", "team-a", "team-a-pods", "ClusterRole", "pod-reader", {Group("team-a")}),
            Binding("RoleBinding", "team-a", "team-a-cm", "Role", "cm-writer", {User("alice")}),
            Binding("RoleBinding", "team-a", "builder", "ClusterRole", "pod-reader", {SA("builder")}),
            Binding("RoleBinding", "team-a", "other-sa", "ClusterRole", "pod-reader", {SA("deployer", "team-b")}),
            // A ServiceAccount subject without namespace in a ClusterRoleBinding names no one.
            Binding("ClusterRoleBinding", "", "sa-no-ns", "ClusterRole", "pod-reader", {SA("builder")}),
        }),
        authorizer_(&policy_) {}

  StaticPolicySource policy_;
  Authorizer authorizer_;
};

TEST_F(AuthorizerTest, ClusterRoleBindingToUserAllowsEverywhere) {
  authn::UserInfo ops{"ops", "", {}, {}};
  Decision d = authorizer_.Authorize(Req(ops, "get", "", "pods", "team-b", "x"));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.reason, R"(RBAC: allowed by ClusterRoleBinding "ops-read" of ClusterRole "pod-reader" to User "ops")");
  EXPECT_TRUE(authorizer_.Authorize(Req(ops, "list", "", "pods", "")).allowed);  // all namespaces
  EXPECT_FALSE(authorizer_.Authorize(Req(ops, "delete", "", "pods", "team-b", "x")).allowed);
  EXPECT_FALSE(authorizer_.Authorize(Req(ops, "get", "", "pods", "team-b", "x", "log")).allowed);
}

TEST_F(AuthorizerTest, RoleBindingToClusterRoleGrantsOnlyItsNamespace) {
  Decision d = authorizer_.Authorize(Req(Alice(), "list", "", "pods", "team-a"));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.reason,
            R"(RBAC: allowed by RoleBinding "team-a-pods/team-a" of ClusterRole "pod-reader" to Group "team-a")");
  EXPECT_FALSE(authorizer_.Authorize(Req(Alice(), "list", "", "pods", "team-b")).allowed);
  EXPECT_FALSE(authorizer_.Authorize(Req(Alice(), "list", "", "pods", "")).allowed);
  EXPECT_EQ(authorizer_.Authorize(Req(Alice(), "list", "", "pods", "team-b")).reason, "");
}

TEST_F(AuthorizerTest, RoleBindingToRole) {
  Decision d = authorizer_.Authorize(Req(Alice(), "create", "", "configmaps", "team-a"));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.reason, R"(RBAC: allowed by RoleBinding "team-a-cm/team-a" of Role "cm-writer" to User "alice")");
  authn::UserInfo bob{"bob", "", {"team-a"}, {}};
  EXPECT_FALSE(authorizer_.Authorize(Req(bob, "create", "", "configmaps", "team-a")).allowed);
}

TEST_F(AuthorizerTest, ServiceAccountSubjects) {
  authn::UserInfo builder{"system:serviceaccount:team-a:builder", "", {"system:serviceaccounts"}, {}};
  Decision d = authorizer_.Authorize(Req(builder, "get", "", "pods", "team-a", "p"));
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(
      d.reason,
      R"(RBAC: allowed by RoleBinding "builder/team-a" of ClusterRole "pod-reader" to ServiceAccount "builder/team-a")");
  // The binding's namespace defaults the subject's; the CRB's subject has none.
  EXPECT_FALSE(authorizer_.Authorize(Req(builder, "get", "", "pods", "team-b", "p")).allowed);
  authn::UserInfo b_builder{"system:serviceaccount:team-b:builder", "", {}, {}};
  EXPECT_FALSE(authorizer_.Authorize(Req(b_builder, "get", "", "pods", "team-a", "p")).allowed);
  authn::UserInfo deployer{"system:serviceaccount:team-b:deployer", "", {}, {}};
  Decision d2 = authorizer_.Authorize(Req(deployer, "get", "", "pods", "team-a", "p"));
  EXPECT_TRUE(d2.allowed);
  EXPECT_EQ(
      d2.reason,
      R"(RBAC: allowed by RoleBinding "other-sa/team-a" of ClusterRole "pod-reader" to ServiceAccount "deployer/team-b")");
}

TEST_F(AuthorizerTest, NonResourceRequests) {
  RequestAttributes r;
  r.user = Alice();
  r.resource_request = false;
  r.verb = "get";
  r.path = "/healthz";
  EXPECT_TRUE(authorizer_.Authorize(r).allowed);
  r.path = "/apis/batch/v1";
  EXPECT_TRUE(authorizer_.Authorize(r).allowed);
  r.path = "/apis";
  EXPECT_FALSE(authorizer_.Authorize(r).allowed);
  r.path = "/healthz";
  r.verb = "post";
  EXPECT_FALSE(authorizer_.Authorize(r).allowed);
}

TEST(AuthorizerErrorsTest, MissingRolesAreReportedOnDenial) {
  StaticPolicySource policy({
      Binding("ClusterRoleBinding", "", "dangling", "ClusterRole", "gone", {User("alice")}),
      Binding("ClusterRoleBinding", "", "crb-to-role", "Role", "r", {User("alice")}),
      Binding("RoleBinding", "ns", "rb", "Role", "missing", {User("alice")}),
  });
  Authorizer authorizer(&policy);
  Decision d = authorizer.Authorize(Req(Alice(), "get", "", "pods", ""));
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(
      d.reason,
      R"(RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "r" not found])");
  Decision d2 = authorizer.Authorize(Req(Alice(), "get", "", "pods", "ns"));
  EXPECT_EQ(
      d2.reason,
      R"(RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found, role.rbac.authorization.k8s.io "r" not found, role.rbac.authorization.k8s.io "missing" not found])");
  auto unsupported = authorizer.RoleReferenceRules({{"kind", "Foo"}, {"name", "x"}}, "ns");
  ASSERT_FALSE(unsupported.ok());
  EXPECT_EQ(unsupported.status().message(), R"(unsupported role reference kind: "Foo")");
}

TEST_F(AuthorizerTest, RulesForListsClusterThenNamespaceRules) {
  auto rules = authorizer_.RulesFor(Alice(), "team-a");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0]["nonResourceURLs"], api::Object({"/healthz", "/apis/*"}));
  EXPECT_EQ(rules[1], PodReader()[0]);
  EXPECT_EQ(rules[2]["resources"], api::Object({"configmaps"}));
  EXPECT_EQ(authorizer_.RulesFor(Alice(), "").size(), 1u);
}

TEST_F(AuthorizerTest, SubjectRulesReviewStatusSplitsRules) {
  api::Object status = SubjectRulesReviewStatus(authorizer_, Alice(), "team-a");
  EXPECT_EQ(status["resourceRules"],
            api::Object::array({{{"verbs", {"get", "list"}}, {"apiGroups", {""}}, {"resources", {"pods"}}},
                                {{"verbs", {"create"}}, {"apiGroups", {""}}, {"resources", {"configmaps"}}}}));
  EXPECT_EQ(status["nonResourceRules"],
            api::Object::array({{{"verbs", {"get"}}, {"nonResourceURLs", {"/healthz", "/apis/*"}}}}));
  EXPECT_EQ(status["incomplete"], false);
  EXPECT_FALSE(status.contains("evaluationError"));
  StaticPolicySource dangling(
      std::vector<api::Object>{Binding("RoleBinding", "ns", "rb", "Role", "missing", {User("alice")})});
  Authorizer a(&dangling);
  api::Object s2 = SubjectRulesReviewStatus(a, Alice(), "ns");
  EXPECT_EQ(s2["resourceRules"], api::Object::array());
  EXPECT_EQ(s2["evaluationError"], R"(role.rbac.authorization.k8s.io "missing" not found)");
}

TEST(AggregateErrorTest, AsUtilErrors) {
  EXPECT_EQ(AggregateError({}), "");
  EXPECT_EQ(AggregateError({"a"}), "a");
  EXPECT_EQ(AggregateError({"a", "a"}), "a");
  EXPECT_EQ(AggregateError({"a", "b", "a"}), "[a, b]");
}

TEST(ForbiddenMessageTest, UpstreamText) {
  authn::UserInfo alice{"alice", "", {"team-a"}, {}};
  EXPECT_EQ(ForbiddenMessage(Req(alice, "delete", "", "pods", "team-b", "canary")),
            R"(User "alice" cannot delete resource "pods" in API group "" in the namespace "team-b")");
  EXPECT_EQ(
      ForbiddenMessage(Req(alice, "create", "kueue.x-k8s.io", "clusterqueues", "")),
      R"(User "alice" cannot create resource "clusterqueues" in API group "kueue.x-k8s.io" at the cluster scope)");
  EXPECT_EQ(ForbiddenMessage(Req(alice, "get", "", "pods", "team-b", "canary", "log")),
            R"(User "alice" cannot get resource "pods/log" in API group "" in the namespace "team-b")");
  RequestAttributes r;
  r.user = alice;
  r.resource_request = false;
  r.verb = "get";
  r.path = "/metrics";
  EXPECT_EQ(ForbiddenMessage(r), R"(User "alice" cannot get path "/metrics")");
  r.user.name = "system:anonymous";
  r.verb = "post";
  r.path = "/api";
  EXPECT_EQ(ForbiddenMessage(r), R"(User "system:anonymous" cannot post path "/api")");
}

}  // namespace
}  // namespace berth::rbac
