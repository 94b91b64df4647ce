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
//   - create its own Node, and update, patch or delete it and its status;
//   - create, get, update and patch its own Lease in kube-node-lease;
//   - update or patch the status of a pod bound to it (spec.nodeName), and
//     delete such a pod;
//   - create, update and patch Events in both groups (core and events.k8s.io, one
//     stored object), as the system:node ClusterRole's eventsRule grants upstream
//     (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go); the Node authorizer
//     does not restrict Events to the node's pods, nor does berth.
// Anything else is left to RBAC, which grants nodes nothing by default. The
// object checks are NodeRestriction's, with its messages (`node "n" is not
// allowed to modify node "m"`, `node "n" can only update pod status for pods
// with spec.nodeName set to itself`, `node "n" can only delete pods with
// spec.nodeName set to itself`, `can only access node lease with the same name
// as the requesting node`, `node "n" can only create mirror pods`), as 403
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
// node `node` of `object` (resource `resource`); other writers never call it.
Status AdmitNodeWrite(const std::string& node, const api::GroupResource& resource, const api::Object& object,
                      const api::Object* old);

}  // namespace berth::apiserver
