// ClusterRoleAggregationController: kube-controller-manager's
// clusterrole-aggregation controller
// (pkg/controller/clusterroleaggregation/clusterroleaggregation_controller.go).
//
// A ClusterRole with an aggregationRule has, as its rules, the union of the
// rules of every ClusterRole its clusterRoleSelectors match
// (rbac/aggregation.h AggregatedRules); this controller writes that union
// into the object whenever it differs, so the authorizer and `kubectl get
// clusterrole edit -o yaml` see it. Any ClusterRole change re-queues every
// aggregated ClusterRole (upstream's enqueueAll), so chains such as view ->
// edit -> admin (edit carries aggregate-to-admin, view aggregate-to-edit)
// settle over successive passes: writing edit's rules is itself a change.
//
// Driving: a ReconcileLoop keyed by ClusterRole name, fed by the clusterroles
// informer (controller_manager.h). Writes are updates with the informer's
// resourceVersion; a conflict is retried by the loop.
// Thread-safety: Reconcile may run concurrently for different names.
#pragma once

#include <string>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "core/status.h"

namespace berth::controllers::rbac {

inline const client::GroupVersionResource kClusterRoles{"rbac.authorization.k8s.io", "v1", "clusterroles"};

class ClusterRoleAggregationController {
 public:
  ClusterRoleAggregationController(client::Client& client, client::Informer& cluster_roles)
      : client_(client), cluster_roles_(cluster_roles) {}

  // Brings the rules of ClusterRole `name` to its aggregation; a role without
  // an aggregationRule, or gone, is left alone.
  Status Reconcile(const std::string& name);

  // The names of every ClusterRole with an aggregationRule in the informer's
  // cache: the keys a change of any ClusterRole re-queues.
  std::vector<std::string> AggregatedRoleNames() const;

 private:
  client::Client& client_;
  client::Informer& cluster_roles_;
};

}  // namespace berth::controllers::rbac
