#include "api/rbac_strategies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::api {
namespace {

std::vector<std::string> Errors(const FieldErrorList& errs) {
  std::vector<std::string> out;
  for (const auto& e : errs) out.push_back(e.Error());
  return out;
}

Object Binding(const std::string& kind, const std::string& role) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "RoleBinding"},
          {"metadata", {{"name", "b"}, {"namespace", "team-a"}}},
          {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", kind}, {"name", role}}},
          {"subjects", Object::array()}};
}

TEST(RbacStrategiesTest, RoleRefIsImmutable) {
  Object old = Binding("ClusterRole", "edit");
  EXPECT_TRUE(ValidateBindingUpdate(old, old).empty());
  EXPECT_THAT(Errors(ValidateBindingUpdate(Binding("ClusterRole", "admin"), old)),
              testing::ElementsAre("roleRef: Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", "
                                   "Kind:\"ClusterRole\", Name:\"admin\"}: cannot change roleRef"));
  const Strategy* s = StrategyRegistry::Default().Find("rbac.authorization.k8s.io", "RoleBinding");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->ValidateUpdate(Binding("Role", "edit"), old).size(), 1u);
  ASSERT_NE(StrategyRegistry::Default().Find("rbac.authorization.k8s.io", "ClusterRoleBinding"), nullptr);
}

TEST(RbacStrategiesTest, BindingDefaults) {
  const Strategy* s = StrategyRegistry::Default().Find("rbac.authorization.k8s.io", "ClusterRoleBinding");
  ASSERT_NE(s, nullptr);
  Object b = {{"kind", "ClusterRoleBinding"},
              {"roleRef", {{"kind", "ClusterRole"}, {"name", "view"}}},
              {"subjects",
               {{{"kind", "User"}, {"name", "a"}},
                {{"kind", "Group"}, {"name", "g"}},
                {{"kind", "ServiceAccount"}, {"name", "s"}, {"namespace", "n"}}}}};
  s->Default(&b);
  EXPECT_EQ(b["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
  EXPECT_EQ(b["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
  EXPECT_EQ(b["subjects"][1]["apiGroup"], "rbac.authorization.k8s.io");
  EXPECT_FALSE(b["subjects"][2].contains("apiGroup"));
  EXPECT_TRUE(ValidateClusterRoleBinding(b).empty());
}

TEST(RbacStrategiesTest, PolicyRuleMessages) {
  Object role = {{"rules",
                  {{{"verbs", {"get"}}, {"nonResourceURLs", {"/a", "/b"}}, {"apiGroups", {""}}},
                   {{"verbs", Object::array()}, {"apiGroups", {""}}, {"resources", {"pods"}}}}}};
  EXPECT_THAT(Errors(ValidateRole(role)),
              testing::ElementsAre(
                  "rules[0].nonResourceURLs: Invalid value: []string{\"/a\", \"/b\"}: namespaced rules cannot apply to "
                  "non-resource URLs",
                  "rules[0].nonResourceURLs: Invalid value: []string{\"/a\", \"/b\"}: rules cannot apply to both "
                  "regular resources and non-resource URLs",
                  "rules[1].verbs: Required value: verbs must contain at least one value"));
  EXPECT_THAT(Errors(ValidateClusterRole(role)),
              testing::ElementsAre(
                  "rules[0].nonResourceURLs: Invalid value: []string{\"/a\", \"/b\"}: rules cannot apply to both "
                  "regular resources and non-resource URLs",
                  "rules[1].verbs: Required value: verbs must contain at least one value"));
  Object bad_selector = {
      {"aggregationRule", {{"clusterRoleSelectors", {{{"matchExpressions", {{{"key", "a"}, {"operator", "In"}}}}}}}}}};
  EXPECT_THAT(Errors(ValidateClusterRole(bad_selector)),
              testing::ElementsAre(testing::StartsWith(
                  "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values: Required value")));
}

TEST(RbacStrategiesTest, PathSegmentNames) {
  EXPECT_THAT(IsValidPathSegmentName("."), testing::ElementsAre("may not be '.'"));
  EXPECT_THAT(IsValidPathSegmentName("a/b%c"), testing::ElementsAre("may not contain '/'", "may not contain '%'"));
  EXPECT_TRUE(IsValidPathSegmentName("system:basic-user").empty());
  EXPECT_TRUE(IsValidPathSegmentName("Upper_Case").empty());
}

}  // namespace
}  // namespace berth::api
