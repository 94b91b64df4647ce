// The node agent's half of pod isolation: what sandbox (agent/shim/sandbox.h)
// a container of a pod gets on this node, from the pod's securityContext and
// the node's SandboxOptions (node_agent.h).
//
// Identity (ContainerIdentity), as the kubelet resolves a securityContext
// (pkg/securitycontext/util.go DetermineEffectiveSecurityContext: the
// container's runAsUser, runAsGroup and runAsNonRoot win over the pod's;
// pkg/kubelet/kuberuntime/security_context.go: supplementalGroups and fsGroup
// become supplementary groups):
//   - uid: runAsUser, else the namespace's uid from PodUsers;
//   - gid: runAsGroup; else, with an explicit runAsUser, that user's primary
//     group in the host's passwd database and 0 when it has none (containerd's
//     WithUserID reads the image's /etc/passwd, and the image is the host
//     here); else the allocated uid (gid = uid);
//   - groups: fsGroup, then supplementalGroups (in order, without repeats);
//   - runAsNonRoot true with uid 0: the kubelet's verifyRunAsNonRoot error,
//     `container's runAsUser breaks non-root policy (pod: "<name>_<ns>(<uid>)",
//     container: <name>)` (pkg/kubelet/kuberuntime/security_context_others.go);
//   - uid 0 when the node does not allow root: `container's runAsUser 0 is
//     refused by this node (berth --allow-root-pods is off)`.
//   Both are CreateContainerConfigError messages. A value that is not an
//   integer in [0, shim::kMaxSandboxId] is one too, naming the field.
//
// PodUsers: the per-namespace uid allocation, persisted in
//   <data dir>/pod-users.json ({"version":1,"namespaces":{"<ns>":<uid>,...}},
//   mode 0600, written atomically). A namespace keeps its uid for the life of
//   the data directory; a new namespace gets the lowest free uid of the range.
//   Errors: kInvalid when the file is not that JSON (the agent then starts no
//   sandboxed container: reusing a uid could hand a team another's files),
//   kUnavailable when the range is used up.
//
// Thread-safety: ContainerIdentity and GpuDeviceNodes are pure (GpuDeviceNodes
// stats files); PodUsers is internally synchronized.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/shim/sandbox.h"
#include "api/object.h"
#include "core/status.h"

namespace berth::agent {

inline constexpr char kPodUsersFile[] = "pod-users.json";

class PodUsers {
 public:
  // Loads <data_dir>/pod-users.json when it exists.
  static StatusOr<std::unique_ptr<PodUsers>> Open(const std::string& data_dir, int64_t first_uid, int64_t count);
  // The namespace's uid, allocated (and persisted) on first use.
  StatusOr<int64_t> UidFor(const std::string& ns);

 private:
  PodUsers(std::string path, int64_t first, int64_t count) : path_(std::move(path)), first_(first), count_(count) {}
  const std::string path_;
  const int64_t first_, count_;
  std::mutex mu_;
  std::map<std::string, int64_t> uids_;  // guarded by mu_
};

// The user a container of `pod` runs as (see the file comment). `ns_uid` is
// called only when no runAsUser applies.
StatusOr<shim::SandboxUser> ContainerIdentity(const api::Object& pod, const api::Object& container, bool allow_root,
                                              const std::function<StatusOr<int64_t>()>& ns_uid);

// The owner of the pod's work directory: the identity of a container that
// sets no securityContext of its own (the pod's runAsUser/runAsGroup, else
// the namespace's uid), and whether the pod sets an fsGroup (the directory is
// then group-owned by it, mode 2770; else 0700).
struct WorkDirOwner {
  int64_t uid = 0;
  int64_t gid = 0;
  bool fs_group = false;
};
StatusOr<WorkDirOwner> PodWorkDirOwner(const api::Object& pod, const std::function<StatusOr<int64_t>()>& ns_uid);
// chown + chmod of `dir` as `owner` says (no symlink followed).
Status ApplyWorkDirOwner(const std::string& dir, const WorkDirOwner& owner);

// The host device nodes of the GPUs `indices` under `device_dir`
// (<dir>/nvidia<i>), then <dir>/nvidiactl, nvidia-uvm and nvidia-uvm-tools,
// each only when it exists (a GPU of a declared capacity has no node) (what the NVIDIA container toolkit mounts for a GPU).
std::vector<std::string> GpuDeviceNodes(const std::string& device_dir, const std::vector<int>& indices);

// Removes the writable layers (<run dir>/rootfs) of the runs of `container`
// numbered below `keep`: an ended run's layer is never read again.
void RemoveRootfsBefore(const std::string& pod_dir, const std::string& container, int keep);

}  // namespace berth::agent
