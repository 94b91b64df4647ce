// A PolicySource over a fixed list of RBAC objects: for tests, and for evaluating a policy
// offline (e.g. the bootstrap policy with a manifest's bindings) without a store.
//
// Thread-safety: immutable after construction; safe from any number of threads.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "rbac/authorizer.h"

namespace berth::rbac {

class StaticPolicySource : public PolicySource {
 public:
  // Objects of kind Role, ClusterRole, RoleBinding and ClusterRoleBinding (by `kind`;
  // others are ignored), kept in the order given. ClusterRoles with an aggregationRule are
  // stored with their aggregated rules (aggregation.h), as the controller would write them
  // once it has converged.
  explicit StaticPolicySource(const std::vector<api::Object>& objects);

  std::vector<std::shared_ptr<const api::Object>> ClusterRoleBindings() const override;
  std::vector<std::shared_ptr<const api::Object>> RoleBindings(std::string_view ns) const override;
  std::shared_ptr<const api::Object> ClusterRole(std::string_view name) const override;
  std::shared_ptr<const api::Object> Role(std::string_view ns, std::string_view name) const override;

 private:
  std::vector<std::shared_ptr<const api::Object>> roles_, cluster_roles_, role_bindings_, cluster_role_bindings_;
};

}  // namespace berth::rbac
