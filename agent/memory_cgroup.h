// cgroup v2 memory limits for container processes, where the machine lets
// the agent use them.
//
// Detection (once, at agent start): the unified hierarchy is mounted at
// `mount` (default /sys/fs/cgroup) with the "memory" controller listed in
// its cgroup.controllers, and `<mount>/<parent>` is a directory the agent can
// create sub-cgroups in, where <parent> is the agent's own cgroup from
// /proc/self/cgroup ("0::/path") unless given. The memory controller is then
// enabled for children in <parent>/cgroup.subtree_control ("+memory"); this
// fails (EBUSY) when the agent's cgroup still holds processes and is not the
// root ("no internal processes" rule), which is reported as unavailable: run
// the agent in its own cgroup (systemd Delegate=yes) or pass a delegated parent.
// When unavailable, reason() says why and limits are not enforced (the agent
// logs this once; pods still run).
//
// Per container run: a cgroup "<parent>/berth-<name>" with memory.max = the
// container's memory limit and memory.swap.max = 0 (when the file exists); the
// child process joins it between fork and exec through cgroup.procs. After the
// process has exited, memory.events "oom_kill N" with N > 0 means the kernel
// OOM killer ended a process of the container → reason OOMKilled.
//
// Thread-safety: the object is immutable after Detect; its methods only touch
// the files of the named cgroup and may be called from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/status.h"

namespace berth::agent {

class MemoryCgroups {
 public:
  // Probes the machine (see above). Never fails: unavailability is data.
  static MemoryCgroups Detect(const std::string& mount = "/sys/fs/cgroup",
                              std::optional<std::string> parent = std::nullopt,
                              const std::string& proc_self_cgroup = "/proc/self/cgroup");
  // Available with an explicit directory (tests, or a pre-delegated cgroup).
  static MemoryCgroups AtDirectory(const std::string& dir) { return MemoryCgroups(dir, ""); }

  bool available() const { return reason_.empty(); }
  // Why limits are not enforced ("" when available).
  const std::string& reason() const { return reason_; }
  // The directory sub-cgroups are created in.
  const std::string& parent_dir() const { return dir_; }

  // Creates the cgroup for one container run and sets its memory limit.
  // Returns its directory. Errors: kUnavailable when not available, kInternal
  // when the files cannot be written.
  StatusOr<std::string> Create(const std::string& name, int64_t memory_limit_bytes) const;
  // Whether the OOM killer acted in the cgroup (memory.events oom_kill > 0).
  bool OomKilled(const std::string& cgroup_dir) const;
  // Removes the (empty) cgroup; best effort.
  void Remove(const std::string& cgroup_dir) const;

 private:
  MemoryCgroups(std::string dir, std::string reason) : dir_(std::move(dir)), reason_(std::move(reason)) {}
  std::string dir_;
  std::string reason_;
};

}  // namespace berth::agent
