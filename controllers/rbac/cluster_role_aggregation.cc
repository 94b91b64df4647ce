#include "controllers/rbac/cluster_role_aggregation.h"

#include <memory>
#include <utility>

#include "api/unstructured.h"
#include "rbac/aggregation.h"

namespace berth::controllers::rbac {

Status ClusterRoleAggregationController::Reconcile(const std::string& name) {
  client::ObjectPtr role = cluster_roles_.GetIndexer().Get("", name);
  if (role == nullptr || !role->contains("aggregationRule")) return Status::Ok();
  std::vector<std::shared_ptr<const api::Object>> all;
  for (client::ObjectPtr& r : cluster_roles_.GetIndexer().List()) all.push_back(std::move(r));
  api::Object rules = berth::rbac::AggregatedRules(*role, all);
  const api::Object& current = api::ArrayAt(*role, "rules");
  if (rules == current || (rules.empty() && current.empty())) return Status::Ok();
  api::Object updated = *role;
  updated["rules"] = std::move(rules);
  return client_.Update(kClusterRoles, updated).status();
}

std::vector<std::string> ClusterRoleAggregationController::AggregatedRoleNames() const {
  std::vector<std::string> names;
  for (const client::ObjectPtr& r : cluster_roles_.GetIndexer().List()) {
    if (r->contains("aggregationRule")) names.push_back(api::Name(*r));
  }
  return names;
}

}  // namespace berth::controllers::rbac
