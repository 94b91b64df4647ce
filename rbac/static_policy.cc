#include "rbac/static_policy.h"

#include "rbac/aggregation.h"

namespace berth::rbac {

StaticPolicySource::StaticPolicySource(const std::vector<api::Object>& objects) {
  for (const auto& obj : objects) {
    auto kind = obj.is_object() ? obj.value("kind", "") : "";
    auto ptr = std::make_shared<const api::Object>(obj);
    if (kind == "Role") roles_.push_back(ptr);
    if (kind == "ClusterRole") cluster_roles_.push_back(ptr);
    if (kind == "RoleBinding") role_bindings_.push_back(ptr);
    if (kind == "ClusterRoleBinding") cluster_role_bindings_.push_back(ptr);
  }
  // The aggregation controller re-syncs a role whenever a role it selects changes, so
  // chains (view -> edit -> admin) converge; repeat until nothing changes (at most one
  // round per role).
  for (size_t round = 0; round <= cluster_roles_.size(); ++round) {
    bool changed = false;
    for (auto& role : cluster_roles_) {
      if (!role->contains("aggregationRule")) continue;
      api::Object rules = AggregatedRules(*role, cluster_roles_);
      if (role->value("rules", api::Object()) == rules) continue;
      auto copy = std::make_shared<api::Object>(*role);
      (*copy)["rules"] = std::move(rules);
      role = std::move(copy);
      changed = true;
    }
    if (!changed) break;
  }
}

std::vector<std::shared_ptr<const api::Object>> StaticPolicySource::ClusterRoleBindings() const {
  return cluster_role_bindings_;
}

std::vector<std::shared_ptr<const api::Object>> StaticPolicySource::RoleBindings(std::string_view ns) const {
  std::vector<std::shared_ptr<const api::Object>> out;
  for (const auto& b : role_bindings_) {
    if (api::Namespace(*b) == ns) out.push_back(b);
  }
  return out;
}

std::shared_ptr<const api::Object> StaticPolicySource::ClusterRole(std::string_view name) const {
  for (const auto& r : cluster_roles_) {
    if (api::Name(*r) == name) return r;
  }
  return nullptr;
}

std::shared_ptr<const api::Object> StaticPolicySource::Role(std::string_view ns, std::string_view name) const {
  for (const auto& r : roles_) {
    if (api::Namespace(*r) == ns && api::Name(*r) == name) return r;
  }
  return nullptr;
}

}  // namespace berth::rbac
