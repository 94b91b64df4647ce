// ClusterRole aggregation: the rules of a ClusterRole with an aggregationRule are the
// union of the rules of every other ClusterRole its clusterRoleSelectors select.
//
// Upstream: pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go
// (syncClusterRole). For each selector in order, the selected ClusterRoles sorted by name,
// the role itself skipped, each rule is appended unless an equal rule is already there
// (semantic equality: an absent list equals an empty one). The controller writes the
// result to the role's `rules` when it differs; that loop is the caller's (the API
// server's controller), this is the pure part.
//
// Thread-safety: a pure function.
#pragma once
#include <memory>
#include <vector>

#include "api/object.h"

namespace berth::rbac {

// The aggregated rules of `cluster_role` (a JSON array of PolicyRule objects) from
// `all_cluster_roles` (which may include `cluster_role` itself). A role without an
// aggregationRule yields its own rules unchanged. A selector that does not parse selects
// nothing (validation refuses such roles; upstream's controller stops with the error).
api::Object AggregatedRules(const api::Object& cluster_role,
                            const std::vector<std::shared_ptr<const api::Object>>& all_cluster_roles);

}  // namespace berth::rbac
