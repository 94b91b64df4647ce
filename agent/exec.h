// StartExecProcess: the node side of `kubectl exec` — a process started in a
// running container's environment, what runc's `exec` does for the kubelet
// (pkg/kubelet/cri/streaming/remotecommand/exec.go ServeExec -> the CRI's
// ExecSync/Exec -> runc exec).
//
// berth's containers are process groups on the host (no namespaces yet,
// issue 20), so "inside the container" means: the container's complete
// environment and working directory (the run's launch record,
// agent/shim/run_record.h), the same user as the container (the agent's),
// its cgroups (the pid is written to each one's cgroup.procs before the
// command runs; one it cannot join is a start error), argv[0] resolved through the container's PATH
// (shim::CheckLaunch, runc's wording on failure). The process is the leader
// of a new session and process group, so Kill() reaches everything it starts
// that stays in the group; descriptors other than 0, 1, 2 are closed on exec.
//
// With tty: a new pseudo-terminal (posix_openpt); the slave is the process's
// controlling terminal and its stdin, stdout and stderr; the master is
// stdin_fd() and stdout_fd(), stderr_fd() is -1. Without tty: pipes for
// stdout and stderr, and for stdin when asked (else /dev/null).
// Every descriptor handed out is non-blocking and close-on-exec.
//
// Errors: kInternal with runc's start error (executable not found, bad
// working directory), or the failing system call.
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
  bool stdin = false;
  bool tty = false;
};

// The ExecLaunch that runs `command` in the run recorded by `launch`.
ExecLaunch ExecLaunchFor(const shim::LaunchRecord& launch, std::vector<std::string> command, bool stdin, bool tty);

StatusOr<std::unique_ptr<client::ExecProcess>> StartExecProcess(const ExecLaunch& launch);

}  // namespace berth::agent
