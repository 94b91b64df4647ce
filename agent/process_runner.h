// ContainerProcess: one run of one container as a host process group — what
// a container runtime (containerd + runc) does for the kubelet, minus images
// and namespaces.
//
// Start:
//   - argv[0] without "/" is looked up in the container's PATH (kDefaultPath
//     when unset); with "/" it is taken relative to the working directory.
//   - The child gets its own process group (pgid == pid), stdin /dev/null,
//     stdout and stderr into one pipe read by the monitor thread into the log
//     file (container_log.h), the exact environment given (nothing inherited),
//     default signal dispositions and an empty signal mask, and joins the
//     memory cgroup when a limit is set and cgroups are available.
//   - Failures before the program runs are start errors, reported as an exit
//     with start_error set, exit code 128 (containerd's), and runc's wording:
//       no command:   container "c" has no command: berth runs processes, not
//                     images, so command is required
//       not in PATH:  unable to start container process: exec: "foo":
//                     executable file not found in $PATH
//       missing path: unable to start container process: exec: "/x/y": stat
//                     /x/y: no such file or directory
//       bad cwd:      unable to start container process: chdir to cwd ("/x")
//                     set in config.json failed: no such file or directory
// Exit: when the main process exits, the rest of its process group is
// SIGKILLed (a container ends with its init process) and every member is
// reaped; the agent makes itself a child subreaper (PR_SET_CHILD_SUBREAPER,
// process-wide, on first Start) so orphaned grandchildren are reaped here and
// neither zombies nor orphans outlive the container. exit_code is the
// process's exit status, or 128 + signal when a signal ended it (as runtimes
// report); oom_killed when the cgroup saw an OOM kill.
// Termination (kubelet killContainer): Terminate(grace) sends SIGTERM to the
// whole group and sets the deadline clock.Now() + grace; Tick() sends SIGKILL
// to the group once the Clock reaches the deadline and the process still
// runs. SIGKILL is sent nowhere else (except Kill() and the destructor), so
// with a FakeClock a test controls exactly when it happens. A grace of 0
// kills at once.
//
// Times (started_at, finished_at, log timestamps) come from the injected Clock.
//
// Thread-safety: all public methods may be called from any thread. One
// monitor thread per process watches the pid (pidfd) and copies output to
// the log; the destructor kills the group if still running and joins it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/container_env.h"
#include "agent/container_log.h"
#include "agent/memory_cgroup.h"
#include "core/clock.h"

namespace berth::agent {

// Everything needed to start one run of a container.
struct ContainerLaunch {
  std::string name;               // container name (for messages and the cgroup name)
  std::vector<std::string> argv;  // command + args; empty = no command (start error)
  std::vector<EnvVar> env;        // the complete environment
  std::string working_dir;        // absolute; must exist
  std::string log_path;           // ContainerLogPath(...)
  std::optional<int64_t> memory_limit_bytes;
  std::string cgroup_name;        // unique per run, e.g. "<pod uid>-<container>-<n>"
};

// How a run ended.
struct ContainerExit {
  int exit_code = 0;        // 0..255; 128 + signal when signalled; 128 on start errors
  int signal = 0;           // the terminating signal, 0 when it exited
  bool oom_killed = false;
  std::string start_error;  // non-empty: the process never ran (reason StartError)
  // The run was lost: a previous agent started it and this one found it gone
  // (kubelet's ContainerStatusUnknown, see kContainerLostMessage). exit_code
  // is then 137, the value the kubelet reports.
  bool lost = false;
  Time started_at{};
  Time finished_at{};
  bool operator==(const ContainerExit&) const = default;
};

// Leftover containers of an agent that died without stopping them (kill -9 of
// the server): each started container's process group is recorded in
// `<pod dir>/process-groups` as "<pgid> <start time in clock ticks>" (the
// start time from /proc/<pgid>/stat guards against a reused pid), and
// KillLeftoverProcessGroups(<agent data dir>/pods) SIGKILLs every recorded group
// whose leader is still that same process, or whose leader is gone while the
// group lives on (Linux reuses no pid that names a live process group), then
// forgets the records. Returns how
// many groups it killed; `pods_with_records`, when given, receives the names
// of the pod directories that had records (the pods a previous agent ran), in
// directory-name order. Linux only (/proc).
void RecordProcessGroup(const std::string& pod_dir, pid_t pgid);
int KillLeftoverProcessGroups(const std::string& pods_dir, std::vector<std::string>* pods_with_records = nullptr);

// The kubelet's text for a container whose run it cannot find any more
// (kubelet_pods.go, reason ContainerStatusUnknown, exit code 137).
inline constexpr char kContainerLostMessage[] = "The container could not be located when the pod was terminated";

class ContainerProcess {
 public:
  // Starts the run. Never fails: a start failure is a process that has
  // already exited with start_error set. `cgroups` may be nullptr.
  static std::unique_ptr<ContainerProcess> Start(const ContainerLaunch& launch, Clock& clock,
                                                 const MemoryCgroups* cgroups);
  ~ContainerProcess();
  ContainerProcess(const ContainerProcess&) = delete;
  ContainerProcess& operator=(const ContainerProcess&) = delete;

  // The process id (= process group id); 0 after a start error.
  pid_t pid() const { return pid_; }
  Time started_at() const { return started_at_; }

  // The exit once the process and its whole group are gone and reaped.
  std::optional<ContainerExit> exit() const;
  bool running() const { return !exit().has_value(); }
  // Blocks up to `real_timeout` of real time for the exit.
  std::optional<ContainerExit> WaitForExit(std::chrono::milliseconds real_timeout) const;

  // SIGTERM to the group now; SIGKILL from Tick() at clock.Now() + grace.
  // A second call can only shorten the deadline (as a second DELETE with a
  // shorter grace period).
  void Terminate(Duration grace);
  // Enforces the termination deadline; call periodically. Returns true if it
  // sent SIGKILL now.
  bool Tick();
  // The SIGKILL deadline, once Terminate was called.
  std::optional<Time> kill_deadline() const;
  // Whether SIGKILL was sent because the grace period ran out.
  bool killed_at_deadline() const;
  // SIGKILL to the group now.
  void Kill();

 private:
  ContainerProcess(Clock& clock) : clock_(clock) {}
  void Monitor(int pidfd, int out_fd, std::unique_ptr<ContainerLogWriter> log);
  void Finish(ContainerExit exit);
  void SignalGroup(int sig);

  Clock& clock_;
  const MemoryCgroups* cgroups_ = nullptr;
  std::string cgroup_dir_;
  pid_t pid_ = 0;
  Time started_at_{};
  std::thread monitor_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::optional<ContainerExit> exit_;
  bool group_alive_ = false;  // guarded by mu_: the group may still receive signals
  std::optional<Time> kill_deadline_;
  bool killed_at_deadline_ = false;
};

// Whether any process of group `pgid` exists (zombies included).
bool ProcessGroupExists(pid_t pgid);

}  // namespace berth::agent
