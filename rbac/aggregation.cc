#include "rbac/aggregation.h"

#include <algorithm>

#include "api/selectors.h"
#include "rbac/policy_rule.h"

namespace berth::rbac {

api::Object AggregatedRules(const api::Object& cluster_role,
                            const std::vector<std::shared_ptr<const api::Object>>& all_cluster_roles) {
  auto rule_it = cluster_role.find("aggregationRule");
  if (rule_it == cluster_role.end() || !rule_it->is_object()) {
    auto own = cluster_role.find("rules");
    return own != cluster_role.end() && own->is_array() ? *own : api::Object::array();
  }
  std::vector<const api::Object*> sorted;
  for (const auto& role : all_cluster_roles) {
    if (role != nullptr) sorted.push_back(role.get());
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const api::Object* a, const api::Object* b) { return api::Name(*a) < api::Name(*b); });
  api::Object out = api::Object::array();
  std::vector<PolicyRule> seen;
  auto selectors = rule_it->find("clusterRoleSelectors");
  if (selectors == rule_it->end() || !selectors->is_array()) return out;
  for (const auto& selector_json : *selectors) {
    auto selector = api::LabelSelector::FromJson(selector_json);
    if (!selector.ok()) continue;
    for (const api::Object* role : sorted) {
      if (api::Name(*role) == api::Name(cluster_role) || !selector->MatchesObject(*role)) continue;
      auto rules = role->find("rules");
      if (rules == role->end() || !rules->is_array()) continue;
      for (const auto& rule : *rules) {
        PolicyRule typed = RuleFromJson(rule);
        if (std::find(seen.begin(), seen.end(), typed) != seen.end()) continue;
        seen.push_back(typed);
        out.push_back(rule);
      }
    }
  }
  return out;
}

}  // namespace berth::rbac
