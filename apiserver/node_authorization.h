// What a node's own credential may do: kube-apiserver's Node authorizer
// (plugin/pkg/auth/authorizer/node/node_authorizer.go) and NodeRestriction
// admission (plugin/pkg/admission/noderestriction/admission.go), for the
// user system:node:<name> in the group system:nodes (the credential
// `berth node add` issues).
//
// A node may:
//   - read nodes, pods, services, endpoints, namespaces, events and the
//     Leases of kube-node-lease;
//   - get a Secret, ConfigMap or ServiceAccount that a pod bound to it
//     references (volumes, projected sources, env valueFrom, envFrom,
//     imagePullSecrets, spec.serviceAccountName), and create a token
//     (serviceaccounts/token) of such a ServiceAccount: the node authorizer's
//     graph (graph.go, graph_populator.go), found here by scanning the pods of
//     the request's namespace (O(pods in that namespace) per such request);
//     lists and watches of them are not allowed;
//   - create its own Node, and update or patch it and its status (no other subresource),
//     within NodeRestriction's admitNode (below); not delete it: node_authorizer.go
//     authorizeNode allows no delete, nor do the node rules of RBAC's bootstrap policy
//     (policy.go NodeRules: update and patch of nodes), so the answer is RBAC's 403
//     `User "system:node:n" cannot delete resource "nodes" ...`. A Node the admin deleted is
//     registered again with a create, as the agent does (agent/node_agent.cc
//     EnsureNodeRegistered);
//   - create, get, update and patch its own Lease in kube-node-lease;
//   - update or patch the status of a pod bound to it (spec.nodeName), and
//     delete such a pod;
//   - create, update and patch Events in both groups (core and events.k8s.io, one
//     stored object), as the system:node ClusterRole's eventsRule grants upstream
//     (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go); the Node authorizer
//     does not restrict Events to the node's pods, nor does berth.
// What a node may write on its own Node is NodeRestriction's admitNode
// (plugin/pkg/admission/noderestriction/admission.go, unchanged from 1.29 to 1.33, so 1.32's):
//   - on create: no spec.configSource (`node "n" is not allowed to create pods with a non-nil
//     configSource`, upstream's wording) and no forbidden label (`node "n" is not allowed to
//     set the following labels: a, b`, sorted); taints are allowed (--register-with-taints);
//   - on update (PUT or PATCH): no new non-nil spec.configSource
//     (`node "n" is not allowed to update configSource to a new non-nil configSource`); no
//     change of spec.taints at all, adding, removing, changing or reordering (`node "n" is not
//     allowed to modify taints`, compared as apiequality.Semantic.DeepEqual: absent, null and
//     [] alike); no forbidden label added, changed or removed (`is not allowed to modify labels:
//     a, b`, upstream's message, which names no node). Forbidden labels the admin set stay as
//     they are while the node changes others.
// A forbidden label (getForbiddenLabels) is one in [*.]node-restriction.kubernetes.io, or
// any other of the kubernetes.io or k8s.io namespaces ([*.]kubernetes.io, [*.]k8s.io) that
// is not a kubelet label (k8s.io/kubelet/pkg/apis/well_known_labels.go IsKubeletLabel):
// kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch, beta.kubernetes.io/os,
// beta.kubernetes.io/arch, beta.kubernetes.io/instance-type, node.kubernetes.io/instance-type,
// failure-domain.beta.kubernetes.io/{region,zone}, topology.kubernetes.io/{region,zone}, and
// the namespaces [*.]kubelet.kubernetes.io and [*.]node.kubernetes.io. Labels of other
// namespaces (example.com/team, team) and annotations (berth.dev/kubelet-serving-ca) are
// free, as spec.unschedulable is (a node may cordon and uncordon itself upstream too). What
// berth's agent writes (agent/node_agent.cc RegisterNode: the hostname, os and arch labels,
// its annotations, no taints; then status) passes. Status writes keep the stored metadata and
// spec (api/admission_pipeline.cc kUpdateStatus), so they change no label or taint here.
// spec.podCIDR(s) and providerID set once are validation's (ValidateNodeUpdate, for every
// user), not NodeRestriction's.
// Anything else is left to RBAC, which grants nodes nothing by default. The
// object checks are NodeRestriction's, with its messages (`node "n" is not
// allowed to modify node "m"`, `node "n" can only update pod status for pods
// with spec.nodeName set to itself`, `node "n" can only delete pods with
// spec.nodeName set to itself`, `can only access node lease with the same name
// as the requesting node`, `node "n" can only create mirror pods`, and those above), as 403
// Forbidden. A token request by a node must be bound to a pod on that node
// (NodeRestriction's admitServiceAccount: `serviceaccounts "default" is
// forbidden: node requested token not bound to a pod`, `... with a pod binding
// without a uid`, `... bound to a pod scheduled on a different node`, and the
// uid mismatch). A second agent cannot take over a node name: its credential names
// another node.
//
// Thread-safety: pure given the store, which is thread-safe.
#pragma once
#include <optional>
#include <string>

#include "authn/user_info.h"
#include "core/status.h"
#include "rbac/authorizer.h"
#include "store/store.h"

namespace berth::apiserver {

// The node a user is, or nullopt for any other user.
std::optional<std::string> NodeNameOf(const authn::UserInfo& user);

// The Node authorizer for a request of node `node`: allowed, or not (then
// RBAC decides). Pod status writes and deletions are checked against the
// stored pod's spec.nodeName; a pod that does not exist is not this node's.
rbac::Decision AuthorizeNode(const std::string& node, const rbac::RequestAttributes& request, store::Store& store);

// NodeRestriction's check of a TokenRequest (`request`) by node `node` for
// ServiceAccount ns/service_account (see above); kNotFound when the bound pod
// does not exist.
Status AdmitNodeTokenRequest(const std::string& node, const std::string& ns, const std::string& service_account,
                             const api::Object& request, store::Store& store);

// NodeRestriction's check of an admitted create (old == nullptr) or update by
// node `node` of `object` (resource `resource`); other writers never call it. For
// its own Node: admitNode's configSource, taint and label rules (above).
Status AdmitNodeWrite(const std::string& node, const api::GroupResource& resource, const api::Object& object,
                      const api::Object* old);

}  // namespace berth::apiserver
