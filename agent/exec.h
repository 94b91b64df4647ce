// StartExecProcess: the node side of `kubectl exec` — a process started in a
// running container's environment, what runc's `exec` does for the kubelet
// (pkg/kubelet/cri/streaming/remotecommand/exec.go ServeExec -> the CRI's
// ExecSync/Exec -> runc exec).
//
// "Inside the container" means: the container's complete environment and
// working directory (the run's launch record, agent/shim/run_record.h), its
// cgroups (the pid is written to each one's cgroup.procs before the command
// runs; one it cannot join is a start error), argv[0] resolved through the container's PATH
// (shim::CheckLaunch, runc's wording on failure). The process is the leader
// of a new session and process group, so Kill() reaches everything it starts
// that stays in the group; descriptors other than 0, 1, 2 are closed on exec.
//
// An unsandboxed run's exec runs as the agent's user on the host. A sandboxed
// run's (ExecLaunch::sandbox enabled) joins the run's namespaces as `runc exec`
// and `nsenter --fork` do: the forked child enters the mount and PID
// namespaces of the run's init (setns on a pidfd of the pid recorded in
// <run dir>/init.pid, verified by its start time), then forks the command,
// which is in the PID namespace and takes the container's identity
// (shim::EnterSandboxIdentity: user, groups, no capabilities unless uid 0,
// no_new_privs) and the container's system call filter (shim/seccomp.h, built
// before fork) before argv[0] is resolved inside the sandbox's root. The
// intermediate process blocks every signal, waits for the command and exits
// as it did (the same signal re-raised), so Wait() reports the command's
// status; a signal sent to the process group reaches the command directly.
// With tty the command leads a session of its own in the PID namespace (the
// terminal's foreground group must be visible there: a shell restores it on
// exit) and dies with the intermediate (PR_SET_PDEATHSIG), so Kill() still
// ends it.
//
// With tty: a new pseudo-terminal (posix_openpt); the slave is the process's
// controlling terminal and its stdin, stdout and stderr; the master is
// stdin_fd() and stdout_fd(), stderr_fd() is -1. Without tty: pipes for
// stdout and stderr, and for stdin when asked (else /dev/null).
// Every descriptor handed out is non-blocking and close-on-exec.
//
// Errors: kInternal with runc's start error (executable not found, bad
// working directory), or the failing system call; a sandboxed run whose init
// is gone is kInternal "container not found".
//
// Thread-safety: see client::ExecProcess (Kill from any thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "agent/shim/run_record.h"
#include "client/container_exec.h"
#include "core/status.h"

namespace berth::agent {

struct ExecLaunch {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value", the complete environment
  std::string working_dir;
  std::vector<std::string> cgroup_dirs;  // the pid joins <dir>/cgroup.procs of each
  shim::SandboxSpec sandbox;              // enabled: enter the sandbox of the run in run_dir
  std::string run_dir;                    // the run's directory (its init.pid); sandboxed runs only
  bool stdin = false;
  bool tty = false;
};

// The ExecLaunch that runs `command` in the run recorded by `launch` in `run_dir`.
ExecLaunch ExecLaunchFor(const shim::LaunchRecord& launch, std::vector<std::string> command, bool stdin, bool tty,
                         const std::string& run_dir = "");

StatusOr<std::unique_ptr<client::ExecProcess>> StartExecProcess(const ExecLaunch& launch);

}  // namespace berth::agent
