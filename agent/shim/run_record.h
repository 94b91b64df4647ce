// The on-disk record of one run of a container: what the node agent asked the
// supervisor (`berth shim`, shim.h) to run, and how it ended. The records are
// the runtime's memory across agent restarts, as containerd's task state is
// for the kubelet: a restarted agent rebuilds each pod's containers from them
// (node_agent.h, "Restart").
//
// Layout, one directory per run (run = the container's restartCount when it
// started, as its log file <pod dir>/logs/<container>/<run>.log):
//   <pod dir>/runs/<container>/<run>/
//     launch.json   written by the agent before the supervisor starts, made
//                   durable by the supervisor before the container runs
//                   (mode 0600: it holds the container's environment)
//     released      created (empty, durable) by the supervisor right before the
//                   container's program may run (ReleaseRun), or by a restarted
//                   agent taking back a run that never got that far
//     exit.json     written by the supervisor when the container ended, or by
//                   the agent when the run failed to start; atomic
//                   (core/file.h), so it is whole or absent
//     shim.sock     the supervisor's control socket (shim_client.h), present
//                   while it runs
//     shim.pid      "<pid> <start time>" of the live supervisor (shim_client.h)
//     shim.log      the supervisor's own diagnostics
//     init.pid      "<pid> <start time>" (host pid) of a sandboxed run's init,
//                   written by the supervisor once the container started
//     rootfs/       a sandboxed run's writable layer (sandbox.h)
//
// launch.json: {"version":1,"container","run","argv":[...],"env":["N=v",...],
//   "workingDir","logPath","cgroupDirs":[...] (the run's cgroup directories, one
//   per cgroup v1 hierarchy or one on v2, agent/cgroups.h; records written
//   before read "cgroupDir": "" = none, else one directory),"startedAt" (ns since the epoch, the agent's Clock),
//   "devices":[indices],"ports":[{"host","key","port"}],
//   "logMaxBytes","logMaxFiles","sandbox"} ("ports" and the log rotation may
//   be absent: no ports, the kubelet's default rotation; "sandbox" absent: the
//   run is not sandboxed).
// "sandbox": {"rootfsDir","hiddenPaths":[...],"user":{"uid","gid","groups":[...]},
//   "mounts":[{"kind":"bind"|"tmpfs","source","target","readOnly","sizeBytes"}],
//   "devices":[...]}, checked with ValidateSandboxSpec on read.
// exit.json: {"version":1,"exitCode","signal","startError","startedAt",
//   "finishedAt"} (ns since the epoch; the supervisor's real time), and
//   "lost": true with "lostDetail" when the agent found the run lost (its
//   verdict is kept, so every later replay reports the same end).
//
// Errors: reading a missing record is kNotFound; a record that is not the
// JSON above (truncated, corrupt, a field of the wrong type, or over
// kMaxRecordBytes) is kInvalid naming the file and the reason. Never throws.
//
// Thread-safety: plain functions over files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/shim/container_log.h"
#include "agent/shim/sandbox.h"
#include "core/clock.h"
#include "core/file.h"
#include "core/status.h"

namespace berth::agent::shim {

inline constexpr char kLaunchFile[] = "launch.json";
inline constexpr char kExitFile[] = "exit.json";
inline constexpr char kSocketFile[] = "shim.sock";
inline constexpr char kShimLogFile[] = "shim.log";
inline constexpr char kSupervisorFile[] = "shim.pid";
inline constexpr char kInitFile[] = "init.pid";
inline constexpr char kRootfsDir[] = "rootfs";
// A launch record holds argv and env; Kubernetes bounds a Pod object at 1.5 MiB.
inline constexpr size_t kMaxRecordBytes = 4 << 20;

// "<pod_dir>/runs/<container>/<run>".
std::string RunDir(const std::string& pod_dir, std::string_view container, int run);
// The run directories of `container` under `pod_dir`, as (run, dir) in run
// order: names of 1 to 10 digits within int range (anything else is not a run).
std::vector<std::pair<int, std::string>> ListRuns(const std::string& pod_dir, std::string_view container);

// A rendezvous port the agent mapped for the run (agent/host_resolver.h):
// held on `host` under `key` while the run lives, also across agent restarts.
struct PortAllocation {
  std::string host;
  std::string key;
  int port = 0;
  bool operator==(const PortAllocation&) const = default;
};

struct LaunchRecord {
  std::string container;
  int run = 0;
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value", the complete environment
  std::string working_dir;
  std::string log_path;
  std::vector<std::string> cgroup_dirs;  // the cgroups the run's processes join; empty = none
  Time started_at{};
  std::vector<int> devices;
  std::vector<PortAllocation> ports;
  LogRotation log_rotation;  // how the supervisor rotates log_path
  SandboxSpec sandbox;       // enabled = false: not sandboxed
  bool operator==(const LaunchRecord&) const = default;
};

struct ExitRecord {
  int exit_code = 0;  // 128 + signal when signalled
  int signal = 0;
  std::string start_error;  // non-empty: the program never ran
  Time started_at{};
  Time finished_at{};
  bool lost = false;  // recorded by the agent: no supervisor recorded the end
  std::string lost_detail;
  bool operator==(const ExitRecord&) const = default;
};

// WriteLaunchRecord creates run_dir and writes launch.json whole (a rename) but
// not yet durable against a crash of the host (core/file.h kDeferred): the
// supervisor makes it durable with ReleaseRun while its container's sandbox is
// set up, and lets the container's program run only after that (shim.h), so
// the fsyncs are off a start's critical path yet no program runs whose run a
// rebooted host could forget.
Status WriteLaunchRecord(const std::string& run_dir, const LaunchRecord& record);
// ReleaseRun(run_dir): what the supervisor does before the container's program
//   may run: fsyncs launch.json, creates `released` (O_EXCL, empty) and fsyncs
//   the run directory. After any crash, a run without `released` (and without
//   shim.pid, which supervisors before it wrote once the program ran) never ran
//   its program. Errors: kAlreadyExists when `released` exists (the agent took
//   the run back, shim_client.h ClaimUnreleasedRun: the program must not run);
//   kInternal naming the file for a failed open or fsync.
// MarkReleased(run_dir) creates `released` alone (O_EXCL): the one step the
//   supervisor's ReleaseRun and the agent's ClaimUnreleasedRun race on, so only
//   one of them wins a run. kAlreadyExists when it exists.
inline constexpr char kReleasedFile[] = "released";
Status ReleaseRun(const std::string& run_dir);
Status MarkReleased(const std::string& run_dir);
StatusOr<LaunchRecord> ReadLaunchRecord(const std::string& run_dir);
// WriteExitRecord is durable when it returns, unless `durability` is kDeferred:
// the supervisor tells its watchers of the end first (they read the record at
// once) and makes it durable with SyncExitRecord before it exits.
Status WriteExitRecord(const std::string& run_dir, const ExitRecord& record,
                       FileDurability durability = FileDurability::kSynced);
Status SyncExitRecord(const std::string& run_dir);
StatusOr<ExitRecord> ReadExitRecord(const std::string& run_dir);

}  // namespace berth::agent::shim
