// The node agent's half of pod isolation: what sandbox (agent/shim/sandbox.h)
// a container of a pod gets on this node, from the pod's securityContext and
// the node's SandboxOptions (node_agent.h).
//
// Identity (ContainerIdentity), as the kubelet resolves a securityContext
// (pkg/securitycontext/util.go DetermineEffectiveSecurityContext: the
// container's runAsUser, runAsGroup and runAsNonRoot win over the pod's;
// pkg/kubelet/kuberuntime/security_context.go: supplementalGroups and fsGroup
// become supplementary groups), within the namespace's block of ids
// (api/namespace_security.h: the Namespace's openshift.io/sa.scc.uid-range and
// supplemental-groups annotations, written by the control plane) as OpenShift's
// SCC strategies MustRunAsRange (uid) and MustRunAs (groups) check them
// (openshift/apiserver-library-go pkg/securitycontextconstraints/user/
// mustrunasrange.go):
//   - uid: runAsUser, else the uid block's base (OpenShift's Generate);
//   - gid: runAsGroup, else the group block's base, also with an explicit
//     runAsUser (containerd's WithUserID reads the image's /etc/passwd; the
//     image is the host here, whose groups are not the namespace's);
//   - groups: fsGroup, then supplementalGroups (in order, without repeats);
//   - policy kMustRunAsRange (the default): runAsUser and runAsGroup (container
//     or pod), fsGroup and every supplementalGroup must lie in the block, else
//     `<field path>: Invalid value: <id>: must be in the ranges: [<first>,
//     <last>] (namespace "<ns>": openshift.io/sa.scc.uid-range "<base>/<size>")`
//     (mustrunasrange.go's detail, the path as the pod names it, e.g.
//     spec.containers[0].securityContext.runAsUser,
//     spec.securityContext.supplementalGroups[1]); kRunAsAny (single-tenant
//     hosts): any id;
//   - a namespace without the annotations: `namespace "<ns>" has no
//     openshift.io/sa.scc.uid-range yet ...` (never a shared default uid);
//     the node retries the container;
//   - runAsNonRoot true with uid 0: the kubelet's verifyRunAsNonRoot error,
//     `container's runAsUser breaks non-root policy (pod: "<name>_<ns>(<uid>)",
//     container: <name>)` (pkg/kubelet/kuberuntime/security_context_others.go);
//   - uid 0 when the node does not allow root: `container's runAsUser 0 is
//     refused by this node (berth --allow-root-pods is off)`; when it does,
//     uid 0 (and then gid and groups 0) are outside the range check.
//   All are CreateContainerConfigError messages. A value that is not an
//   integer in [0, shim::kMaxSandboxId] is one too, naming the field.
//
// Thread-safety: ContainerIdentity and GpuDeviceNodes are pure (GpuDeviceNodes
// stats files; the NamespaceIdsFunc is called on the caller's thread).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/shim/sandbox.h"
#include "api/namespace_security.h"
#include "api/object.h"
#include "core/status.h"

namespace berth::agent {

// Which ids a pod may name (SCC terms): kMustRunAsRange, its namespace's block
// only (`berth --pod-id-policy=MustRunAsRange`, the default); kRunAsAny, any id
// (single-tenant hosts).
enum class PodIdPolicy { kMustRunAsRange, kRunAsAny };

// The node's rules for a pod's identity.
struct IdentityRules {
  bool allow_root = false;  // --allow-root-pods
  PodIdPolicy policy = PodIdPolicy::kMustRunAsRange;
};

// A namespace's blocks: its uids and its gids (api/namespace_security.h).
struct NamespaceIds {
  std::string ns;
  api::IdBlock uids;
  api::IdBlock groups;
};
using NamespaceIdsFunc = std::function<StatusOr<NamespaceIds>()>;

// The blocks of Namespace object `ns`; kUnavailable when it has no
// openshift.io/sa.scc.uid-range yet, kInvalid when malformed (both become the
// container's CreateContainerConfigError). A namespace with only the uid range
// uses it for groups too.
StatusOr<NamespaceIds> NamespaceIdsOf(const api::Object& ns);

// The user a container of `pod` runs as (see the file comment). `ns_ids` is
// called at most once, and not at all with kRunAsAny when runAsUser and
// runAsGroup are both set.
StatusOr<shim::SandboxUser> ContainerIdentity(const api::Object& pod, const api::Object& container,
                                              const IdentityRules& rules, const NamespaceIdsFunc& ns_ids);

// The owner of the pod's work directory: the identity of a container that
// sets no securityContext of its own (the pod's runAsUser/runAsGroup, else
// the block's base), checked as ContainerIdentity checks them, and whether the pod sets an fsGroup (the directory is
// then group-owned by it, mode 2770; else 0700).
struct WorkDirOwner {
  int64_t uid = 0;
  int64_t gid = 0;
  bool fs_group = false;
};
StatusOr<WorkDirOwner> PodWorkDirOwner(const api::Object& pod, const IdentityRules& rules,
                                       const NamespaceIdsFunc& ns_ids);
// chown + chmod of `dir` as `owner` says (no symlink followed).
Status ApplyWorkDirOwner(const std::string& dir, const WorkDirOwner& owner);

// The host device nodes of the GPUs `indices` under `device_dir`
// (<dir>/nvidia<i>), then <dir>/nvidiactl, nvidia-uvm and nvidia-uvm-tools,
// each only when it exists (a GPU of a declared capacity has no node) (what the NVIDIA container toolkit mounts for a
// GPU).
std::vector<std::string> GpuDeviceNodes(const std::string& device_dir, const std::vector<int>& indices);

// Removes the writable layers (<run dir>/rootfs) of the runs of `container`
// numbered below `keep`: an ended run's layer is never read again.
void RemoveRootfsBefore(const std::string& pod_dir, const std::string& container, int keep);

}  // namespace berth::agent
