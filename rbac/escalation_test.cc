#include "rbac/escalation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rbac/static_policy.h"

namespace berth::rbac {
namespace {

api::Object Rule(std::vector<std::string> verbs, std::string group, std::vector<std::string> resources) {
  return {{"verbs", verbs}, {"apiGroups", {group}}, {"resources", resources}};
}

api::Object ClusterRole(const std::string& name, api::Object rules) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata", {{"name", name}}},
          {"rules", rules}};
}

api::Object RoleIn(const std::string& ns, const std::string& name, api::Object rules) {
  api::Object r = ClusterRole(name, std::move(rules));
  r["kind"] = "Role";
  r["metadata"]["namespace"] = ns;
  return r;
}

api::Object BindingOf(const std::string& kind, const std::string& ns, const std::string& name,
                      const std::string& role_kind, const std::string& role, const std::string& user) {
  api::Object b = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                   {"kind", kind},
                   {"metadata", {{"name", name}}},
                   {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", role_kind}, {"name", role}}},
                   {"subjects", {{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", user}}}}};
  if (!ns.empty()) b["metadata"]["namespace"] = ns;
  return b;
}

const authn::UserInfo kBob{"bob", "", {"team-a", "system:authenticated"}, {}};

class EscalationTest : public ::testing::Test {
 protected:
  EscalationTest()
      : policy_({
            ClusterRole("job-runner", api::Object::array({Rule({"get", "list", "create"}, "batch", {"jobs"})})),
            ClusterRole("queue-admin",
                        api::Object::array({Rule({"create", "delete"}, "kueue.x-k8s.io", {"clusterqueues"})})),
            ClusterRole("rbac-manager", api::Object::array({Rule({"create", "update"}, "rbac.authorization.k8s.io",
                                                                 {"roles", "rolebindings"})})),
            ClusterRole("escalator", api::Object::array({Rule({"escalate"}, "rbac.authorization.k8s.io", {"roles"})})),
            ClusterRole("binder", api::Object::array({{{"verbs", {"bind"}},
                                                       {"apiGroups", {"rbac.authorization.k8s.io"}},
                                                       {"resources", {"clusterroles"}},
                                                       {"resourceNames", {"queue-admin"}}}})),
            BindingOf("RoleBinding", "team-a", "bob-jobs", "ClusterRole", "job-runner", "bob"),
            BindingOf("RoleBinding", "team-a", "bob-rbac", "ClusterRole", "rbac-manager", "bob"),
            BindingOf("RoleBinding", "team-b", "bob-escalate", "ClusterRole", "escalator", "bob"),
            BindingOf("RoleBinding", "team-c", "bob-bind", "ClusterRole", "binder", "bob"),
        }),
        authorizer_(&policy_) {}

  StaticPolicySource policy_;
  Authorizer authorizer_;
};

TEST_F(EscalationTest, ConfirmNoEscalationCoversHeldRules) {
  EXPECT_TRUE(ConfirmNoEscalation(authorizer_, kBob, "team-a", {Rule({"get", "create"}, "batch", {"jobs"})}).ok());
  EXPECT_TRUE(ConfirmNoEscalation(authorizer_, kBob, "team-a", {}).ok());
  Status s = ConfirmNoEscalation(authorizer_, kBob, "team-a",
                                 {Rule({"get", "delete"}, "batch", {"jobs"}),
                                  Rule({"create", "delete"}, "kueue.x-k8s.io", {"clusterqueues", "resourceflavors"})});
  EXPECT_EQ(s.code(), Code::kForbidden);
  EXPECT_EQ(s.message(),
            "user \"bob\" (groups=[\"team-a\" \"system:authenticated\"]) is attempting to grant RBAC permissions not "
            "currently held:\n"
            "{APIGroups:[\"batch\"], Resources:[\"jobs\"], Verbs:[\"delete\"]}\n"
            "{APIGroups:[\"kueue.x-k8s.io\"], Resources:[\"clusterqueues\"], Verbs:[\"create\" \"delete\"]}\n"
            "{APIGroups:[\"kueue.x-k8s.io\"], Resources:[\"resourceflavors\"], Verbs:[\"create\" \"delete\"]}");
  // The rules held in another namespace do not count.
  EXPECT_FALSE(ConfirmNoEscalation(authorizer_, kBob, "team-b", {Rule({"get"}, "batch", {"jobs"})}).ok());
}

// A role whose rules expand to more single permissions than berth checks is
// refused at once, whichever dimension is large: the check's cost is bounded.
TEST_F(EscalationTest, RulesExpandingBeyondTheBoundAreRefusedWithoutChecking) {
  std::vector<std::string> many;
  for (std::size_t i = 0; i <= kMaxEscalationCheckPermissions; ++i) many.push_back("v" + std::to_string(i));
  Status verbs = ConfirmNoEscalation(authorizer_, kBob, "team-a", {Rule(many, "batch", {"jobs"})});
  EXPECT_EQ(verbs.code(), Code::kForbidden);
  EXPECT_EQ(verbs.message(),
            "user \"bob\" is attempting to grant RBAC permissions that expand to more than 100000 single "
            "permissions, which berth does not check; grant fewer, or use '*'");
  // 400 x 400 resources and verbs: the product counts, not each list.
  std::vector<std::string> verbs400(many.begin(), many.begin() + 400), resources400;
  for (int i = 0; i < 400; ++i) resources400.push_back("r" + std::to_string(i));
  EXPECT_EQ(ConfirmNoEscalation(authorizer_, kBob, "team-a", {Rule(verbs400, "batch", resources400)}).code(),
            Code::kForbidden);
  // Under the bound it is checked as usual (and here not held).
  std::vector<std::string> under(many.begin(), many.begin() + 10'000);
  Status checked = ConfirmNoEscalation(authorizer_, kBob, "team-a", {Rule(under, "batch", {"jobs"})});
  EXPECT_THAT(checked.message(), ::testing::HasSubstr("not currently held"));
}

TEST(EscalationErrorsTest, ResolutionErrorsAreAppended) {
  StaticPolicySource policy(
      std::vector<api::Object>{BindingOf("RoleBinding", "ns", "dangling", "ClusterRole", "gone", "bob")});
  Authorizer authorizer(&policy);
  Status s = ConfirmNoEscalation(authorizer, kBob, "ns", {Rule({"get"}, "", {"pods"})});
  EXPECT_EQ(s.message(),
            "user \"bob\" (groups=[\"team-a\" \"system:authenticated\"]) is attempting to grant RBAC permissions not "
            "currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}; resolution errors: "
            "[clusterrole.rbac.authorization.k8s.io \"gone\" not found]");
}

TEST_F(EscalationTest, HelpersAsUpstream) {
  EXPECT_TRUE(EscalationAllowed({"root", "", {"system:masters"}, {}}));
  EXPECT_FALSE(EscalationAllowed(kBob));
  EXPECT_TRUE(RoleEscalationAuthorized(authorizer_, kBob, "roles", "team-b", "any"));
  EXPECT_FALSE(RoleEscalationAuthorized(authorizer_, kBob, "roles", "team-a", "any"));
  EXPECT_FALSE(RoleEscalationAuthorized(authorizer_, kBob, "rolebindings", "team-b", "any"));
  api::Object ref = {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "queue-admin"}};
  EXPECT_TRUE(BindingAuthorized(authorizer_, kBob, ref, "team-c"));
  EXPECT_FALSE(BindingAuthorized(authorizer_, kBob, ref, "team-a"));
  ref["name"] = "job-runner";
  EXPECT_FALSE(BindingAuthorized(authorizer_, kBob, ref, "team-c"));
  ref["kind"] = "Thing";
  EXPECT_FALSE(BindingAuthorized(authorizer_, kBob, ref, "team-c"));
}

TEST_F(EscalationTest, CheckRbacWriteRoles) {
  api::Object ok_role = RoleIn("team-a", "reader", api::Object::array({Rule({"get"}, "batch", {"jobs"})}));
  EXPECT_TRUE(CheckRbacWrite(authorizer_, kBob, ok_role, nullptr).ok());
  api::Object bad =
      RoleIn("team-a", "quota", api::Object::array({Rule({"create"}, "kueue.x-k8s.io", {"clusterqueues"})}));
  Status s = CheckRbacWrite(authorizer_, kBob, bad, nullptr);
  EXPECT_EQ(s.code(), Code::kForbidden);
  EXPECT_EQ(s.message(),
            "roles.rbac.authorization.k8s.io \"quota\" is forbidden: user \"bob\" (groups=[\"team-a\" "
            "\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n"
            "{APIGroups:[\"kueue.x-k8s.io\"], Resources:[\"clusterqueues\"], Verbs:[\"create\"]}");
  // `escalate` on roles in team-b lets any role through there.
  api::Object bad_b = bad;
  bad_b["metadata"]["namespace"] = "team-b";
  EXPECT_TRUE(CheckRbacWrite(authorizer_, kBob, bad_b, nullptr).ok());
  // system:masters always passes.
  EXPECT_TRUE(CheckRbacWrite(authorizer_, {"root", "", {"system:masters"}, {}}, bad, nullptr).ok());
  // An update that only touches ownerReferences/finalizers passes.
  api::Object gc = bad;
  gc["metadata"]["finalizers"] = {"x"};
  gc["metadata"]["resourceVersion"] = "12";
  EXPECT_TRUE(CheckRbacWrite(authorizer_, kBob, gc, &bad).ok());
  api::Object changed = bad;
  changed["rules"][0]["verbs"] = {"delete"};
  EXPECT_FALSE(CheckRbacWrite(authorizer_, kBob, changed, &bad).ok());
}

TEST_F(EscalationTest, CheckRbacWriteAggregationRuleNeedsClusterAdmin) {
  api::Object agg = ClusterRole("agg", api::Object::array());
  agg["aggregationRule"] = {{"clusterRoleSelectors", {{{"matchLabels", {{"x", "true"}}}}}}};
  Status s = CheckRbacWrite(authorizer_, kBob, agg, nullptr);
  EXPECT_EQ(s.code(), Code::kForbidden);
  EXPECT_EQ(s.message(),
            "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: must have cluster-admin privileges to use "
            "the aggregationRule");
  StaticPolicySource admin_policy(
      {ClusterRole("all",
                   api::Object::array({Rule({"*"}, "*", {"*"}), {{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}}})),
       BindingOf("ClusterRoleBinding", "", "bob-all", "ClusterRole", "all", "bob")});
  Authorizer admin(&admin_policy);
  EXPECT_TRUE(CheckRbacWrite(admin, kBob, agg, nullptr).ok());
}

TEST_F(EscalationTest, CheckRbacWriteBindings) {
  // Binding a role whose rules bob holds in team-a.
  api::Object rb = BindingOf("RoleBinding", "team-a", "carol-jobs", "ClusterRole", "job-runner", "carol");
  EXPECT_TRUE(CheckRbacWrite(authorizer_, kBob, rb, nullptr).ok());
  // Binding the quota role: not held.
  api::Object quota = BindingOf("RoleBinding", "team-a", "carol-quota", "ClusterRole", "queue-admin", "carol");
  Status s = CheckRbacWrite(authorizer_, kBob, quota, nullptr);
  EXPECT_EQ(s.code(), Code::kForbidden);
  EXPECT_EQ(s.message(),
            "rolebindings.rbac.authorization.k8s.io \"carol-quota\" is forbidden: user \"bob\" (groups=[\"team-a\" "
            "\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n"
            "{APIGroups:[\"kueue.x-k8s.io\"], Resources:[\"clusterqueues\"], Verbs:[\"create\" \"delete\"]}");
  // ...unless bob may `bind` it there.
  quota["metadata"]["namespace"] = "team-c";
  EXPECT_TRUE(CheckRbacWrite(authorizer_, kBob, quota, nullptr).ok());
  // A ClusterRoleBinding is checked against cluster-wide rules only.
  api::Object crb = BindingOf("ClusterRoleBinding", "", "carol-jobs", "ClusterRole", "job-runner", "carol");
  EXPECT_EQ(CheckRbacWrite(authorizer_, kBob, crb, nullptr).code(), Code::kForbidden);
  // A missing role is the role storage's 404 (rolebinding/policybased/storage.go returns it).
  api::Object missing = BindingOf("RoleBinding", "team-a", "x", "Role", "nope", "carol");
  Status m = CheckRbacWrite(authorizer_, kBob, missing, nullptr);
  EXPECT_EQ(m.code(), Code::kNotFound);
  EXPECT_EQ(m.message(), "roles.rbac.authorization.k8s.io \"nope\" not found");
  // Other kinds pass.
  EXPECT_TRUE(CheckRbacWrite(authorizer_, kBob, {{"kind", "Pod"}}, nullptr).ok());
}

}  // namespace
}  // namespace berth::rbac
