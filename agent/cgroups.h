// Per-pod and per-container cgroups, as the kubelet's cgroup manager and runc
// build them (kubernetes/kubernetes pkg/kubelet/cm: helpers_linux.go
// MilliCPUToShares/MilliCPUToQuota/ResourceConfigForPod,
// pod_container_manager_linux.go EnsureExists, cgroup_manager_linux.go
// CpuSharesToCpuWeight; opencontainers/runc libcontainer/cgroups
// ConvertCPUSharesToCgroupV2Value), on cgroup v2 and on cgroup v1.
//
// Detection (once, at agent start; never fails, what is missing is data):
//   cgroup v2 when `<root>/cgroup.controllers` exists (the unified hierarchy
//   is mounted at root): the agent's cgroup is the "0::<path>" line of
//   /proc/self/cgroup; the berth parent is <root><agent cgroup>/berth (or the
//   configured parent), created when missing. Each of cpu, memory and pids
//   must be listed in <root>/cgroup.controllers and enabled for the parent
//   (written "+c" into the subtree_control of the parent's parent when it is
//   not yet: this fails with EBUSY when the agent's cgroup still holds
//   processes and is not the root, the "no internal processes" rule: run the
//   agent in a delegated cgroup of its own, systemd Delegate=yes, or
//   configure a parent outside it), then enabled for the parent's children
//   ("+cpu +memory +pids" into <parent>/cgroup.subtree_control).
//   cgroup v1 otherwise (also the "hybrid" layout, whose cgroup2 mount at
//   <root>/unified holds no controllers): each of cpu, cpuacct, memory and pids
//   must have its hierarchy at <root>/<controller> (controllers mounted
//   together, as cpu,cpuacct, are one hierarchy) and a line in
//   /proc/self/cgroup; the berth parent <hierarchy><agent's path>/berth (or
//   <hierarchy><configured parent>) is created when missing and must hold the
//   controller's files (cpu.shares, cpuacct.usage, memory.limit_in_bytes,
//   pids.max).
//   Each controller that is not usable gets one entry in unenforced() naming it
//   and why ("memory: ..."); the others are used.
//
// Layout (one directory per hierarchy on v1, one on v2):
//   <parent>/pod<pod uid>/                the pod's cgroup (CreatePod)
//   <parent>/pod<pod uid>/<container>-<run>/  one per container run
//     (CreateContainer); the run's processes join it between fork and exec.
//
// Limits and units (each written only where its controller is enforced):
//   cpu, from limits.cpu L (milli-CPU): quota = L * 100000 / 1000 µs per
//     period of 100000 µs, at least 1000 µs (MilliCPUToQuota); v2 cpu.max
//     "<quota> 100000", v1 cpu.cfs_period_us 100000 + cpu.cfs_quota_us
//     <quota>. No limit: nothing written (the kernel's "max" / -1).
//   cpu, from requests.cpu R (milli-CPU): shares = R * 1024 / 1000 within
//     [2, 262144], 2 without a request (MilliCPUToShares; the kubelet gives a
//     BestEffort pod 2); v1 cpu.shares <shares>, v2 cpu.weight
//     1 + (shares - 2) * 9999 / 262142 (CpuSharesToCpuWeight, range [1, 10000]).
//   memory, from limits.memory (bytes): v2 memory.max <bytes> and
//     memory.swap.max 0 (when the kernel has swap accounting); v1
//     memory.limit_in_bytes <bytes> and memory.memsw.limit_in_bytes <bytes>
//     (when present: no swap beyond the limit). No limit: nothing written.
//   pids (pod level only, as the kubelet's --pod-max-pids): pids.max <n>, or
//     "max" for a limit <= 0.
//   The pod's cgroup gets cpu shares from the sum of its containers' requests,
//   and a cpu quota (memory limit) only when every container, init containers
//   included, declares one: the larger of the app containers' sum and the
//   largest init container's (ResourceConfigForPod / PodLimits).
//
// OOM: a run was OOM killed when its memory cgroup counts an OOM kill: v2
//   memory.events "oom_kill N", v1 memory.oom_control "oom_kill N" (kernel
//   >= 4.13), N > 0; on older v1 kernels, memory.failcnt > 0 and the run's
//   main process ended by SIGKILL.
// Kill: KillAll ends everything left in a run's cgroup: v2 cgroup.kill when
//   the kernel has it (>= 5.14), else SIGKILL to every pid of cgroup.procs,
//   repeated until it is empty (up to kMaxKillRounds). A pid read from
//   cgroup.procs could be reused between the read and the kill (runc's
//   signalAllProcesses shares that window without a freezer).
//
// Thread-safety: immutable after construction; every method only touches the
// files of the named cgroups and may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "core/status.h"

namespace berth::agent {

// pkg/kubelet/cm/helpers_linux.go.
inline constexpr int64_t kMinCpuShares = 2;          // MinShares
inline constexpr int64_t kMaxCpuShares = 262144;     // MaxShares (the kernel's MAX_SHARES, 1 << 18)
inline constexpr int64_t kCpuSharesPerCpu = 1024;    // SharesPerCPU
inline constexpr int64_t kMilliCpuPerCpu = 1000;     // MilliCPUToCPU
inline constexpr int64_t kCpuPeriodMicros = 100000;  // QuotaPeriod (100 ms)
inline constexpr int64_t kMinCpuQuotaMicros = 1000;  // MinQuotaPeriod (1 ms)
// How many rounds KillAll reads cgroup.procs and SIGKILLs what it lists.
inline constexpr int kMaxKillRounds = 1000;

// cpu.shares for a request of `milli_cpu` (MilliCPUToShares): 0 → 2.
int64_t MilliCpuToShares(int64_t milli_cpu);
// CFS quota in µs per `period` µs for a limit of `milli_cpu` (MilliCPUToQuota):
// 0 → 0 (no limit), else at least 1000.
int64_t MilliCpuToQuota(int64_t milli_cpu, int64_t period = kCpuPeriodMicros);
// cgroup v2 cpu.weight for cpu.shares (CpuSharesToCpuWeight, runc's linear
// ConvertCPUSharesToCgroupV2Value): 2 → 1, 1024 → 39, 262144 → 10000.
int64_t CpuSharesToCpuWeight(int64_t shares);

// What a cgroup is limited to; nullopt = no limit.
struct CgroupLimits {
  std::optional<int64_t> cpu_limit_milli;  // limits.cpu in milli-CPU
  int64_t cpu_request_milli = 0;           // requests.cpu in milli-CPU; 0 = none (2 shares)
  std::optional<int64_t> memory_limit_bytes;
  std::optional<int64_t> pids_limit;  // pod cgroups only; <= 0 = "max"
  bool operator==(const CgroupLimits&) const = default;
};

// A container's limits from its spec (resources.limits.cpu/memory,
// resources.requests.cpu; a cpu limit without a request requests the limit,
// as the API server's defaulting). Unparsable quantities are ignored.
CgroupLimits ContainerCgroupLimits(const api::Object& container);
// The pod cgroup's limits (ResourceConfigForPod): cpu request = the pod's
// effective request (scheduling::PodRequests); cpu and memory limits = the
// same formula over the containers' limits, only when every container (init
// containers included) declares one; pids_limit = `pids_limit`.
CgroupLimits PodCgroupLimits(const api::Object& pod, std::optional<int64_t> pids_limit);

enum class CgroupVersion { kNone, kV1, kV2 };

struct CgroupDetectOptions {
  std::string root = "/sys/fs/cgroup";
  std::string proc_self_cgroup = "/proc/self/cgroup";
  // The berth parent as a cgroup path ("/berth.slice"); nullopt = "<the agent's cgroup>/berth".
  std::optional<std::string> parent;
};

class Cgroups {
 public:
  // Probes the machine (see the file comment).
  static Cgroups Detect(const CgroupDetectOptions& options = {});
  // cgroup v2 with `parent_dir` as the berth parent (a delegated cgroup, or a
  // fake tree in tests): the controllers listed in its cgroup.controllers are
  // used, and enabled for its children.
  static Cgroups AtDirectoryV2(const std::string& parent_dir);
  // cgroup v1 with a berth parent per controller ("cpu", "cpuacct", "memory",
  // "pids" → its directory; several controllers may share one).
  static Cgroups AtDirectoriesV1(const std::map<std::string, std::string>& parent_dirs);
  // Nothing enforced, for `reason`.
  static Cgroups Unavailable(const std::string& reason);

  CgroupVersion version() const { return version_; }
  // Whether any controller is used (then every run gets its cgroups).
  bool available() const { return !hierarchies_.empty(); }
  // Whether `controller` ("cpu", "cpuacct", "memory", "pids") is used.
  bool Enforces(std::string_view controller) const;
  // One entry per controller not used, "<controller>: <why>"; empty when all are.
  const std::vector<std::string>& unenforced() const { return unenforced_; }
  // unenforced() joined with "; " ("" when everything is enforced).
  std::string reason() const;
  // The berth parent of each hierarchy used.
  std::vector<std::string> parent_dirs() const;

  // Weights the berth parent as the node's pods together: cpu shares (v2
  // weight) of a request of `milli_cpu`, the node's cpu capacity, as the
  // kubelet's node allocatable cgroup (kubepods; node_container_manager_linux.go
  // getCgroupConfig with MilliCPUToShares). Without it the parent has the
  // default 1024 shares, one busy process's worth, against every other
  // process of the host. Errors: kInternal when the file cannot be written.
  Status SetNodeCpu(int64_t milli_cpu) const;
  // Creates (or updates) the pod's cgroup with `limits`; returns its
  // directories. Errors: kUnavailable when nothing is available, kInvalid
  // for a uid that is not [A-Za-z0-9-], kInternal when a file cannot be written.
  StatusOr<std::vector<std::string>> CreatePod(const std::string& pod_uid, const CgroupLimits& limits) const;
  // Creates the cgroup of one container run, `name` (e.g. "<container>-<run>",
  // [A-Za-z0-9-]), under the pod's (made without limits when missing); returns
  // its directories. Errors as CreatePod.
  StatusOr<std::vector<std::string>> CreateContainer(const std::string& pod_uid, const std::string& name,
                                                     const CgroupLimits& limits) const;
  // Whether every one of `dirs` is a container cgroup of this object's
  // layout (<parent>/pod<uid>/<name> of a hierarchy used, each hierarchy at
  // most once, no ".."): directories read from a record a container could
  // have written are used only then.
  bool Owns(const std::vector<std::string>& dirs) const;

  // Whether the OOM killer ended a process of the cgroup (see the file comment).
  bool OomKilled(const std::vector<std::string>& dirs, bool killed_by_sigkill) const;
  // CPU time the cgroup's processes used, in µs (v2 cpu.stat usage_usec, v1
  // cpuacct.usage / 1000); nullopt when not readable.
  std::optional<int64_t> CpuUsageMicros(const std::vector<std::string>& dirs) const;
  // pids.current; nullopt when not readable.
  std::optional<int64_t> PidsCurrent(const std::vector<std::string>& dirs) const;
  // Kills every process in the cgroups (see "Kill"); true when they are empty.
  bool KillAll(const std::vector<std::string>& dirs) const;
  // KillAll, then removes the directories (best effort).
  void Remove(const std::vector<std::string>& dirs) const;
  // Kills what is left in the pod's container cgroups and removes them and
  // the pod's cgroup (best effort). Call only when none of its runs lives.
  void RemovePod(const std::string& pod_uid) const;
  // The pod's cgroup directories (whether or not they exist).
  std::vector<std::string> PodDirs(const std::string& pod_uid) const;

 private:
  struct Hierarchy {
    std::string parent;                    // the berth parent directory
    std::vector<std::string> controllers;  // those of it berth uses
  };
  Cgroups() = default;
  const Hierarchy* HierarchyOf(std::string_view controller) const;
  // The one of `dirs` in `controller`'s hierarchy ("" when none).
  std::string DirFor(const std::vector<std::string>& dirs, std::string_view controller) const;
  // `pod`: the pod level (pids.max; no swap files), else a container's (pids_limit ignored).
  Status WriteLimits(const std::string& dir, const Hierarchy& h, const CgroupLimits& limits, bool pod) const;
  // Makes <parent>/<relative> in every hierarchy, with the pod-level `limits` when given.
  StatusOr<std::vector<std::string>> MakeDirs(const std::string& relative, const CgroupLimits* pod_limits) const;
  // v2: enables the controllers used for the children of `dir`.
  Status EnableForChildren(const std::string& dir) const;
  // Probes the optional files (swap, memsw, cgroup.kill) in the parents.
  void ProbeFeatures();

  CgroupVersion version_ = CgroupVersion::kNone;
  std::vector<Hierarchy> hierarchies_;
  std::vector<std::string> unenforced_;
  bool swap_max_ = false;     // v2 memory.swap.max
  bool memsw_ = false;        // v1 memory.memsw.limit_in_bytes
  bool cgroup_kill_ = false;  // v2 cgroup.kill
};

}  // namespace berth::agent
