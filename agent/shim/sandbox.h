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
//     a private devpts and /dev/shm) plus only the `devices` named here, /tmp
//     a directory on disk beside the writable layer (`rootfs_dir`/tmp, 1777),
//     a private sized tmpfs on /run; each of `hidden_paths` replaced by an
//     empty directory; then `mounts` in order, each target resolved inside the
//     new root (a symlink cannot lead a mount outside it);
//   - an identity: `user` (uid, gid, supplementary groups), no_new_privs, and
//     no capabilities unless the uid is 0 (then Docker's default capability set);
//   - the host's network (pods use the host network in berth, as today).
//
// How it is set up (upstream: runc libcontainer/rootfs_linux.go
// prepareRoot/mountToRootfs/pivotRoot, standard_init_linux.go finalizeNamespace;
// tini/docker-init for the init):
//   the supervisor calls EnterSandboxPidNamespace() before it forks, so its
//   child is pid 1 of a new PID namespace; that child (SandboxInitMain) makes
//   a new mount namespace, marks `/` rprivate, mounts the overlay at
//   <rootfs_dir>/merged (upper, work beside it), rbinds every other host mount
//   read-only (mount_setattr AT_RECURSIVE; a remount per mount on kernels
//   without it), mounts proc, a read-only rbind of /sys, the minimal /dev,
//   binds <rootfs_dir>/tmp (1777) at /tmp, mounts a tmpfs at /run, a tmpfs (0755)
//   over each hidden path, then
//   each `mounts` entry and each device, every target opened with openat2
//   RESOLVE_IN_ROOT below the new root (mkdir -p inside it, a symlink resolves
//   inside it), pivot_root's into it and detaches the old root. It then forks
//   the main process (pid 2, its own process group) and stays as its init:
//   forwards kSandboxForwardedSignals to the main process group, reaps every
//   process re-parented to it, and when the main process ends writes its wait
//   status to the status pipe and exits (128 + signal when it was signalled:
//   pid 1 cannot re-raise a signal on itself), which makes the kernel kill
//   what remains in the namespace. The main process takes `user`
//   (EnterSandboxIdentity), resolves argv[0] inside the new root
//   (CheckLaunch) and executes (ExecInChild).
//
// Start errors (written to the report pipe as ReportStartError, read by
// ReadExecReport): runc's words, e.g. `error mounting "/src" to rootfs at
// "/dst": mount /src:/dst (via /proc/self/fd/7), flags: 0x5000: no such file or
// directory` for a mount, and CheckLaunch's for the program.
//
// Thread-safety: data, and functions meant for a single-threaded child after fork.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace berth::agent::shim {

struct LaunchRecord;  // run_record.h

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

// The sandbox's own tmpfs mounts are sized (an unsized tmpfs may take half of
// the host's RAM, and tmpfs pages are not always charged to a pod that has no
// memory limit). Upstream: runc's default spec mounts /dev as tmpfs
// "mode=755,size=65536k" (libcontainer/specconv/example.go); Docker's /dev/shm
// is 64 MiB (moby daemon/config DefaultShmSize = 64 MiB, docker run --shm-size).
// /run: runc, containerd and Docker mount nothing there (it is part of the
// image's writable layer); podman's --systemd mode mounts a tmpfs at /run
// without a size (libpod container_internal_linux.go setupSystemd). berth
// mounts a tmpfs so host sockets under /run are not visible, sized as /dev.
inline constexpr int64_t kSandboxDevTmpfsBytes = 64 << 20;
inline constexpr int64_t kSandboxShmBytes = 64 << 20;
inline constexpr int64_t kSandboxRunTmpfsBytes = 64 << 20;
// The empty directory over each hidden path: a tmpfs that holds only the mount
// points created under it.
inline constexpr int64_t kSandboxHiddenTmpfsBytes = 1 << 20;
// The container's /tmp: this directory of `rootfs_dir`, on disk, bound at /tmp
// (a container's /tmp is part of its writable layer; it counts toward the pod's
// ephemeral storage with the run's directory).
inline constexpr const char* kSandboxTmpDir = "tmp";

// Bounds of a spec read from a launch record: a uid or gid is a 32-bit value
// other than (uid_t)-1 (the kernel's "no change"); at most kMaxSandboxEntries
// mounts, devices, hidden paths and groups (the kernel's NGROUPS_MAX is 65536;
// a pod has at most a few hundred volumes).
inline constexpr int64_t kMaxSandboxId = 4294967294;
inline constexpr size_t kMaxSandboxEntries = 1024;

// Checks a spec (from the agent, or read back from launch.json): absolute
// paths without "." or ".." components (targets, sources, rootfs_dir,
// hidden paths, devices), ids within [0, kMaxSandboxId], counts within
// kMaxSandboxEntries, a tmpfs size >= 0. kInvalid naming the field.
Status ValidateSandboxSpec(const SandboxSpec& spec);

// Signals the init forwards to the main process group (docker-init/tini
// forward every catchable signal; these are the ones the supervisor and a
// terminal send).
inline constexpr int kSandboxForwardedSignals[] = {1, 2, 3, 10, 12, 14, 15, 18, 20, 21, 22, 28};

// Whether this process can set up sandboxes: it is root, and a throwaway
// child can unshare the mount and PID namespaces and mount an overlay of `/`
// with its upper and work directories in a temporary directory under
// `scratch_dir` (removed again). kUnavailable saying what failed otherwise
// ("not running as root (uid 1000)", "overlay of / under /x: invalid
// argument", ...). Forks: call it before threads hold locks a child needs
// (it uses no allocation after fork).
Status ProbeSandbox(const std::string& scratch_dir);

// --- The supervisor's side ---

// unshare(CLONE_NEWPID): the caller's next child is pid 1 of a new PID
// namespace. Returns 0 or the errno.
int EnterSandboxPidNamespace();

// The sandbox's pid 1: the forked child, stdin/stdout/stderr in place, the
// cgroup already joined. Sets up the mounts (above), forks the main process
// (which runs `binary` resolved inside the new root) and runs the init loop.
// On a start error it writes ReportStartError to `report_fd` and exits 127;
// `status_fd` receives the main process's raw wait status (an int) before the
// init exits. Both are close-on-exec pipes' write ends. It forks the main
// process only once it passed the gate `gate_fd` (shim.h PassGateOrExit), after
// the mounts: the supervisor makes the launch record durable meanwhile.
// `launch.sandbox` is the spec.
[[noreturn]] void SandboxInitMain(const LaunchRecord& launch, int report_fd, int status_fd, int gate_fd);

// --- Shared with kubectl exec (agent/exec.h) ---

// Takes the identity in a child about to exec: the capability bounding set
// reduced (to nothing for uid != 0, to DockerDefaultCapabilities() for uid 0),
// setgroups(groups), setgid, setuid (which clears the permitted and
// effective capabilities of a non-zero uid), the capabilities of uid 0
// limited to the same default set, PR_SET_NO_NEW_PRIVS. Returns 0 or the
// errno of the call that failed, `*what` naming it.
int EnterSandboxIdentity(const SandboxUser& user, const char** what);

// Docker's default capabilities (moby oci/caps/defaults.go DefaultCapabilities):
// CHOWN, DAC_OVERRIDE, FSETID, FOWNER, MKNOD, NET_RAW, SETGID, SETUID, SETFCAP,
// SETPCAP, NET_BIND_SERVICE, SYS_CHROOT, KILL, AUDIT_WRITE.
uint64_t DockerDefaultCapabilities();

// Writes a start error as text to a report pipe (the child's half of
// ReadExecReport, shim.h): {kReportTextStage, length} then the bytes (at most
// kMaxStartErrorBytes).
void ReportStartError(int report_fd, const std::string& message);
inline constexpr size_t kMaxStartErrorBytes = 4096;

}  // namespace berth::agent::shim
