#include "rbac/aggregation.h"

#include <gtest/gtest.h>

namespace berth::rbac {
namespace {

std::shared_ptr<const api::Object> CR(const std::string& name, api::Object labels, api::Object rules,
                                      api::Object aggregation = nullptr) {
  api::Object r = {{"kind", "ClusterRole"}, {"metadata", {{"name", name}, {"labels", labels}}}, {"rules", rules}};
  if (!aggregation.is_null()) r["aggregationRule"] = aggregation;
  return std::make_shared<const api::Object>(r);
}

api::Object R(const std::string& verb, const std::string& resource) {
  return {{"verbs", {verb}}, {"apiGroups", {""}}, {"resources", {resource}}};
}

api::Object Selectors(api::Object list) { return {{"clusterRoleSelectors", list}}; }

TEST(AggregatedRulesTest, UnionInSelectorThenNameOrderDeduplicated) {
  auto target = CR("target", api::Object::object(), api::Object::array({R("stale", "x")}),
                   Selectors({{{"matchLabels", {{"a", "true"}}}}, {{"matchLabels", {{"b", "true"}}}}}));
  std::vector<std::shared_ptr<const api::Object>> all = {
      target,
      CR("zeta", {{"a", "true"}}, api::Object::array({R("get", "pods"), R("list", "pods")})),
      CR("alpha", {{"a", "true"}}, api::Object::array({R("get", "secrets"), R("get", "pods")})),
      CR("beta", {{"b", "true"}}, api::Object::array({R("watch", "pods"), R("get", "secrets")})),
      CR("other", {{"c", "true"}}, api::Object::array({R("delete", "pods")})),
  };
  api::Object want = api::Object::array({R("get", "secrets"), R("get", "pods"), R("list", "pods"), R("watch", "pods")});
  EXPECT_EQ(AggregatedRules(*target, all), want);
}

TEST(AggregatedRulesTest, SelfIsSkippedAndEmptyListsEqualAbsent) {
  auto self = CR("self", {{"a", "true"}}, api::Object::array({R("get", "self")}),
                 Selectors({{{"matchLabels", {{"a", "true"}}}}}));
  api::Object with_empty = {
      {"verbs", {"get"}}, {"apiGroups", {""}}, {"resources", {"pods"}}, {"resourceNames", api::Object::array()}};
  std::vector<std::shared_ptr<const api::Object>> all = {
      self, CR("one", {{"a", "true"}}, api::Object::array({R("get", "pods")})),
      CR("two", {{"a", "true"}}, api::Object::array({with_empty}))};
  EXPECT_EQ(AggregatedRules(*self, all), api::Object::array({R("get", "pods")}));
}

TEST(AggregatedRulesTest, NoAggregationRuleKeepsOwnRules) {
  auto plain = CR("plain", api::Object::object(), api::Object::array({R("get", "pods")}));
  EXPECT_EQ(AggregatedRules(*plain, {plain}), api::Object::array({R("get", "pods")}));
}

TEST(AggregatedRulesTest, MatchExpressionsAndNothingMatching) {
  auto target = CR("t", api::Object::object(), nullptr,
                   Selectors({{{"matchExpressions", {{{"key", "tier"}, {"operator", "In"}, {"values", {"x"}}}}}}}));
  std::vector<std::shared_ptr<const api::Object>> all = {target,
                                                         CR("x", {{"tier", "x"}}, api::Object::array({R("get", "a")})),
                                                         CR("y", {{"tier", "y"}}, api::Object::array({R("get", "b")}))};
  EXPECT_EQ(AggregatedRules(*target, all), api::Object::array({R("get", "a")}));
  auto none = CR("n", api::Object::object(), nullptr, Selectors({{{"matchLabels", {{"nope", "true"}}}}}));
  EXPECT_EQ(AggregatedRules(*none, all), api::Object::array());
}

}  // namespace
}  // namespace berth::rbac
