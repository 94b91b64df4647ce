// The RBAC objects berth creates at first start: Kubernetes' default ClusterRoles and
// ClusterRoleBindings and Kueue's user-facing ClusterRoles.
//
// Kubernetes (v1.32, plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go), each
// labelled `kubernetes.io/bootstrapping: rbac-defaults` and annotated
// `rbac.authorization.kubernetes.io/autoupdate: "true"`, rules built as upstream's
// NewRule(...).RuleOrDie() (every list sorted):
//   cluster-admin                 * on *.*, and * on every non-resource URL
//   admin / edit / view           aggregationRule selecting rbac.authorization.k8s.io/
//                                 aggregate-to-admin / -edit / -view; edit is labelled
//                                 aggregate-to-admin, view aggregate-to-edit (so admin
//                                 holds edit's rules and edit holds view's)
//   system:aggregate-to-admin     localsubjectaccessreviews; roles and rolebindings
//   system:aggregate-to-edit      write on pods and their attach/exec/portforward/proxy,
//                                 services, configmaps, secrets, serviceaccounts, PVCs,
//                                 replicationcontrollers, batch jobs and cronjobs; read of
//                                 the escalating ones; pods/eviction, serviceaccounts/token,
//                                 impersonate serviceaccounts
//   system:aggregate-to-view      read of the core namespaced kinds (not secrets), their
//                                 status, pods/log, events, the namespace, batch jobs and
//                                 cronjobs and their status
//   system:basic-user             create selfsubjectreviews (authentication.k8s.io),
//                                 selfsubjectaccessreviews and selfsubjectrulesreviews
//   system:discovery              get /livez /readyz /healthz /version /version/ /openapi
//                                 /openapi/* /api /api/* /apis /apis/*
//   system:public-info-viewer     get /livez /readyz /healthz /version /version/
// The aggregate-to-* roles carry only the rules for the groups berth serves (core, batch,
// authorization.k8s.io, rbac.authorization.k8s.io): upstream's apps, autoscaling,
// extensions, policy, networking.k8s.io and discovery.k8s.io rules are left out.
// Bindings (upstream's clusterRoleBindings()): cluster-admin -> Group system:masters;
// system:basic-user and system:discovery -> Group system:authenticated;
// system:public-info-viewer -> Groups system:authenticated and system:unauthenticated.
// The system:node, controller and kube-* roles are not created (berth has no such
// components; node authorization is the API server's).
//
// Kueue (config/components/rbac, namePrefix `kueue-` from config/default): kueue-batch-
// admin-role and kueue-batch-user-role (aggregationRules on rbac.kueue.x-k8s.io/batch-admin
// and /batch-user) and the editor/viewer roles of the resources berth serves:
// clusterqueues, cohorts, localqueues, resourceflavors, workloads (kueue.x-k8s.io), jobs
// (batch), jobsets (jobset.x-k8s.io), pytorchjobs (kubeflow.org), trainjobs
// (trainer.kubeflow.org), and the pending-workloads viewers of the visibility API
// (clusterqueues/pendingworkloads, localqueues/pendingworkloads in
// visibility.kueue.x-k8s.io), with upstream's labels. As upstream, only the *viewer* roles
// aggregate into view/edit/admin (clusterqueue/cohort/resourceflavor viewers into admin
// only); the editor roles aggregate into the batch roles. So a team user bound to `edit`
// in a namespace creates batch Jobs (Kubernetes' own rule) and reads LocalQueues,
// Workloads, JobSets, PyTorchJobs and TrainJobs, but creating JobSets, PyTorchJobs and
// TrainJobs needs `kueue-batch-user-role` bound as well, as Kueue's documentation says.
// JobSet and Trainer ship no roles aggregating into Kubernetes' edit/view (Trainer's
// aggregate into Kubeflow's kubeflow-edit), so none are added.
//
// Thread-safety: a pure function.
#pragma once
#include <string_view>
#include <vector>

#include "api/object.h"

namespace berth::rbac {

inline constexpr char kBootstrappingLabel[] = "kubernetes.io/bootstrapping";
inline constexpr char kBootstrappingLabelValue[] = "rbac-defaults";
inline constexpr char kAutoUpdateAnnotation[] = "rbac.authorization.kubernetes.io/autoupdate";

// ClusterRoles first (in the order above, Kueue's after Kubernetes'), then the
// ClusterRoleBindings; apiVersion rbac.authorization.k8s.io/v1. Aggregated roles have an
// empty rules list: the aggregation controller fills them (aggregation.h).
std::vector<api::Object> BootstrapPolicy();

// The RoleBindings that give `group` a team's rights in namespace `ns`: "<group>-edit" to
// ClusterRole edit and "<group>-batch-user" to kueue-batch-user-role (Kueue's documented
// way to let a namespace's users submit every job kind), both with the Group subject.
// With them the group creates Jobs, JobSets, TrainJobs and PyTorchJobs in `ns` and reads
// its LocalQueues and Workloads, and nothing outside `ns`.
std::vector<api::Object> TeamRoleBindings(std::string_view ns, std::string_view group);

}  // namespace berth::rbac
