// The node agent's side of the supervisor (shim.h): starting one, and talking
// to a live one through its control socket.
//
// SpawnShim(supervisor, run_dir, timeout): starts `supervisor... run_dir`
//   (e.g. {"/proc/self/exe", "shim"}) with posix_spawn (no copy of the
//   caller's address space) in its own session, stdin /dev/null,
//   stdout/stderr appended to <run dir>/shim.log, an environment of PATH and
//   kBindNowEnv (shim.h) only, default signal handling and no other descriptor of the caller; the
//   supervisor daemonizes (ShimMain), so it is not the caller's child. Waits up
//   to `timeout` of real time for its readiness byte, then reaps the first
//   process (killing it if it has not exited: it is no supervisor). Errors:
//   kInternal "the container supervisor exited before it was ready (see <run
//   dir>/shim.log)" or "...was not ready within Ns", or spawn/pipe failures.
//   Each call execs the whole binary (~420 page faults, ~12 ms of CPU for
//   berth on a 2-core VM): the agent starts supervisors with LaunchShim
//   (launcher.h), which forks them from a long-lived launcher with the same
//   guarantees, and falls back to SpawnShim.
// AwaitReadiness(ready_fd, timeout) / ReadinessError(result, timeout, run_dir):
//   the readiness wait both share: 1 (the byte came), 0 (timed out) or -1
//   (every write end closed without it), the read end closed; and the error
//   above for a result other than 1.
//
// ConnectShim(run_dir): a connected control socket (a file descriptor the
//   caller closes) to the supervisor of that run, its hello read and checked
//   (up to 2 s of real time). A socket, not a pid, is what
//   names a supervisor: after a reboot or the supervisor's death the socket
//   file stays but nobody listens, so a stale record can never lead to
//   signalling an unrelated process. Paths longer than sun_path are reached
//   through /proc/self/fd. Errors: kUnavailable when no supervisor listens
//   (ENOENT, ECONNREFUSED, not a socket), or it closed the connection or
//   named another run instead of its hello; kInternal otherwise.
//
// The protocol: on every connection the supervisor first writes its hello,
//   HelloLine(its run directory) = "berth-shim 1 <realpath of the run dir>\n";
//   ConnectShim checks it (a socket file linked or moved from another run is
//   refused). Then the agent writes lines "signal <N>\n" (1 ≤ N < 65) and the
//   supervisor writes nothing more; it closes every connection when it exits.
//   End-of-file alone does not prove the run is over (a supervisor with all
//   its connection slots taken closes new ones at once): the run is over when
//   exit.json exists or the supervisor is verified gone (SupervisorAlive).
//
// SupervisorAlive(run_dir): the pid of the run's supervisor when it is
//   verifiably alive: <run dir>/shim.pid ("<pid> <start time>", written by
//   the supervisor before it reported ready) names a live process with that
//   start time (/proc/<pid>/stat, so a reused pid does not match) whose
//   command line ends with "shim\0<run dir>\0" (an exec'd supervisor's
//   argv; a launcher-forked one rewrites its argv area to end so, launcher.h);
//   else 0. Reads /proc only.
// KillSupervisor(run_dir): SIGKILL to that verified supervisor through a
//   pidfd opened before the check is repeated (so it cannot reach a process
//   that replaced it); its container's main process dies with it
//   (PDEATHSIG). For runs whose socket cannot be reached. Returns whether a
//   signal was sent.
//
// Thread-safety: plain functions; a connection is used by one owner.
#pragma once

#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace berth::agent::shim {

Status SpawnShim(const std::vector<std::string>& supervisor, const std::string& run_dir,
                 std::chrono::milliseconds timeout);
// What a supervisor starts with, both close-on-exec: *log_fd, <run dir>/shim.log
// opened for appending, and the readiness pipe (ready[0] read, ready[1] write).
// Errors: kInternal "cannot open <path>: ..." or "pipe: ...", nothing left open.
Status OpenSupervisorIo(const std::string& run_dir, int* log_fd, int ready[2]);
// SpawnShim with descriptors from OpenSupervisorIo, which it closes.
Status SpawnShimWith(const std::vector<std::string>& supervisor, const std::string& run_dir, int log_fd,
                     const int ready[2], std::chrono::milliseconds timeout);
int AwaitReadiness(int ready_fd, std::chrono::milliseconds timeout);
Status ReadinessError(int result, std::chrono::milliseconds timeout, const std::string& run_dir);

StatusOr<int> ConnectShim(const std::string& run_dir);

std::string HelloLine(const std::string& run_dir);
int SupervisorAlive(const std::string& run_dir);
// ClaimUnreleasedRun(run_dir): for a restarted agent, a run that never ran its
// program (its agent stopped between writing launch.json and the supervisor's
// ReleaseRun): no exit.json, no shim.pid, no `released`, no live supervisor.
// Creates `released` itself (O_EXCL), so that a supervisor still starting can
// no longer release the program (ReleaseRun fails), and returns true: the run
// may be removed and started afresh under its number, as the kubelet creates a
// container that the runtime never started. False when the program may have
// run (then the run is adopted, or lost) or the claim failed.
bool ClaimUnreleasedRun(const std::string& run_dir);
bool KillSupervisor(const std::string& run_dir);
// Written by the supervisor: "<pid> <start time>\n" of the calling process.
Status WriteSupervisorRecord(const std::string& run_dir);
// "<pid> <start time>\n" of `pid`, written atomically to `path` (mode 0600), not
// synced (core/file.h kDeferred): it names a live process, which a crash of the
// host ends anyway, and a record a crash left empty or missing reads as no process.
Status WriteProcessRecord(const std::string& path, pid_t pid);
// Field 22 of /proc/<pid>/stat (the start time in clock ticks since boot), or "" when no
// such process is readable: with the pid, names one process for as long as the host runs.
std::string ProcessStartTime(pid_t pid);
// Whether `pid` is that process (`start_time` as ProcessStartTime read it) and has not
// exited: a zombie, exited and not yet reaped, is not live.
bool ProcessLive(pid_t pid, std::string_view start_time);
// The host pid of a sandboxed run's init (<run dir>/init.pid, written by its
// supervisor) when that process is alive with the recorded start time, else 0.
int SandboxInitAlive(const std::string& run_dir);

// Starts `args` detached, as a supervisor (and the shim launcher, launcher.h)
// is started: posix_spawn (no copy of the caller's page tables), its own
// session, stdin /dev/null, stdout `out_fd` (-1: /dev/null), stderr `err_fd`
// (-1: the caller's), `fd3` at descriptor 3 and no other descriptor of the
// caller, an environment of PATH and kBindNowEnv only, default signal handling
// and an empty mask. Returns the pid of its first process, which daemonizes (reap it with
// ReapFirstProcess), or kInternal "cannot start <what> <args[0]>: <errno>".
StatusOr<pid_t> SpawnDetached(const std::vector<std::string>& args, int out_fd, int err_fd, int fd3,
                              const std::string& what);
// Reaps the first process of a SpawnDetached daemon (it exits as soon as it
// has forked); one still there is no daemon and is killed.
void ReapFirstProcess(pid_t first);

// Sends "signal <sig>\n" on a connection; false when the supervisor is gone.
bool SendSignal(int connection, int sig);

}  // namespace berth::agent::shim
