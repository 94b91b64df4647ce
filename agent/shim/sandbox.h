// A container's sandbox: what isolates one container run from the host, from
// berth and from other pods, as runc/containerd give it to the kubelet's
// containers. The node agent decides it (node_agent.h builds it from the pod's
// securityContext, volumes and devices and the node's SandboxOptions); the
// supervisor (`berth shim`, shim.h) sets it up between fork and exec; it is
// recorded in launch.json ("sandbox", run_record.h), so an adopted run and a
// `kubectl exec` (agent/exec.h) enter the same sandbox.
//
// What a sandboxed run gets (each property, how it is enforced and what the
// degraded mode lacks: docs/security.md, "Pod isolation"):
//   - its own PID namespace: a minimal init is pid 1 (as `docker run --init`),
//     the container's main process is pid 2 in a process group of its own;
//     signals from the supervisor reach that group; when the main process
//     exits, init exits and the kernel kills everything left in the namespace
//     (children that called setsid included);
//   - its own mount namespace: the host's root as the read-only lower layer of
//     an overlay whose upper layer is `rootfs_dir` (the run's writable layer,
//     as a container's), every other host mount bound read-only, fresh /proc,
//     a read-only /sys, a minimal /dev (null, zero, full, random, urandom, tty,
//     a private devpts and /dev/shm) plus only the `devices` named here, a
//     private tmpfs on /tmp and /run; each of `hidden_paths` replaced by an
//     empty directory; then `mounts` in order, each target resolved inside the
//     new root (a symlink cannot lead a mount outside it);
//   - an identity: `user` (uid, gid, supplementary groups), no_new_privs, and
//     no capabilities unless the uid is 0 (then Docker's default capability set);
//   - the host's network (pods use the host network in berth, as today).
//
// Thread-safety: data only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace berth::agent::shim {

// One mount made inside the container's mount namespace, after the base layout.
struct SandboxMount {
  enum class Kind {
    kBind,   // `source` (a host path) bound at `target`
    kTmpfs,  // a fresh tmpfs at `target` (emptyDir medium: Memory), `size_bytes` 0 = the kernel's default
  };
  Kind kind = Kind::kBind;
  std::string source;  // absolute host path (kBind only)
  std::string target;  // absolute path inside the container; created when missing
  bool read_only = false;
  int64_t size_bytes = 0;
  bool operator==(const SandboxMount&) const = default;
};

// The identity the container's processes run as (securityContext runAsUser,
// runAsGroup, fsGroup + supplementalGroups, or the node's default).
struct SandboxUser {
  int64_t uid = 0;
  int64_t gid = 0;
  std::vector<int64_t> groups;  // supplementary groups
  bool operator==(const SandboxUser&) const = default;
};

struct SandboxSpec {
  // false: the run is not sandboxed (the node's degraded mode); nothing below applies.
  bool enabled = false;
  // The run's writable layer: the supervisor makes `upper` and `work` in it.
  std::string rootfs_dir;
  // Host directories the container sees as empty (berth's data directory).
  std::vector<std::string> hidden_paths;
  SandboxUser user;
  std::vector<SandboxMount> mounts;
  // Host device nodes bound into the container's /dev at the same path (the GPUs
  // assigned to the container, and the control nodes they need).
  std::vector<std::string> devices;
  bool operator==(const SandboxSpec&) const = default;
};

}  // namespace berth::agent::shim
