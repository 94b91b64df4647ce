// The shim launcher: a zygote for container supervisors, as Android's zygote
// is for apps. Exec'ing `/proc/self/exe shim <run dir>` (SpawnShim,
// shim_client.h) loads the whole berth binary and its shared libraries for
// every container start (~420 page faults, ~12 ms of CPU on a 2-core VM); the
// launcher is one process that has done so once and forks a supervisor
// (shim.h RunShim) per request (bench/shim_start.py measures both ways). It is
// exec'd with LD_BIND_NOW (kBindNowEnv): the binary is linked -z now, but
// Debian's libstdc++, libre2, libfmt and libyaml-cpp are not, so without it
// every forked supervisor resolved those libraries' symbols lazily again on
// first call (do_lookup_x/_dl_fixup were ~8 % of the supervisors' CPU in a flood
// of short Jobs); now the launcher binds them once and the forks inherit them.
// berth starts its launcher from the small static supervisor program it
// embeds (supervisor_image.h), so a fork copies and maps in far less than one
// of the whole binary; the launcher works the same from any binary whose main
// dispatches `shim` (the test binaries, berth itself as the fallback).
// As with any zygote, every supervisor shares the launcher's address-space
// layout (ASLR is drawn per exec), and a supervisor inherits the launcher's
// working directory, umask, limits and cgroup, which are the agent's when it
// started the launcher (an exec'd one inherits the agent's at each start).
//
// LaunchShim(supervisor, run_dir, timeout): starts the supervisor of run_dir
//   as SpawnShim does, with the same guarantees (its own session, stdin
//   /dev/null, stdout/stderr appended to <run dir>/shim.log, the readiness
//   pipe at kReadyFd and no other descriptor, default signal dispositions and
//   an empty mask, an environment of PATH and kBindNowEnv only, daemonized: nobody's child but
//   init's or the nearest subreaper's) and the same readiness wait, timeouts
//   and errors, but forked by the process-wide launcher of `supervisor`
//   instead of exec'd. The launcher is started on the first call (for one
//   exec, under the mutex, waiting up to `timeout` for its hello). When the
//   send finds it dead (EPIPE/ECONNRESET), a new one is started once. When
//   no launcher can be started, or the run directory does not fit its argv
//   area (see below), or its socket is full, the supervisor is started with
//   SpawnShim; a launcher that failed to start is not tried again for that
//   command (one warning is logged). When the readiness pipe closes without
//   its byte and the launcher that had the request has died meanwhile (it
//   may have died holding it, before forking), SpawnShim is tried once,
//   provided no supervisor of the run lives (SupervisorAlive) and it has no
//   exit.json.
// ShimLauncherPid(supervisor): the pid of the live launcher of that command,
//   0 when none was started or it is known to be dead. For tests and
//   diagnostics.
//
// The launcher (`<supervisor...> --launcher <padding>`, e.g. `/proc/self/exe
//   shim --launcher <4,200 bytes>`; ShimMain dispatches it to
//   ShimLauncherMain) is started with posix_spawn as a supervisor is (own
//   session, stdin and stdout /dev/null, stderr the agent's, PATH and
//   kBindNowEnv only, default signals) with one end of an AF_UNIX SOCK_SEQPACKET socketpair at
//   kLauncherFd (the agent's end is close-on-exec), and daemonizes as
//   ShimMain does. It is single-threaded (a fresh exec). Once ready it sends
//   its hello, "berth-launcher 1 <pid> <max run dir bytes>". Each request is
//   one message: the run directory's bytes (no NUL; at most the hello's
//   maximum, < PATH_MAX) with SCM_RIGHTS {the shim.log descriptor, the write
//   end of the readiness pipe}. For each, it forks; that child makes a new
//   session, puts /dev/null, the log and the pipe at 0, 1+2 and kReadyFd,
//   closes every other descriptor, empties its signal mask, resets every
//   disposition and forks the supervisor, then exits; the launcher reaps it
//   and closes the two descriptors it received. The supervisor rewrites its
//   command line (SetSupervisorCommandLine) so that /proc/<pid>/cmdline ends
//   with "shim\0<run dir>\0", as VerifiedSupervisor (shim_client.cc) checks,
//   and runs RunShim(run dir, kReadyFd). A malformed message (not exactly two
//   descriptors, an empty, truncated or oversized directory, one with a NUL)
//   is reported on stderr and dropped with the descriptors it carried; the
//   launcher goes on. It exits at end of file on its socket: when every
//   process holding the agent's end (the agent) has gone. Supervisors never
//   depend on it: killing it leaves them and their containers running.
// Command line: the padding argument reserves the room. The supervisor zeroes
//   the whole argv area and writes "berth-shim\0" (kSupervisorDisplayName) at
//   its start and "shim\0<run dir>\0" to end at its last byte (setproctitle
//   style, keeping the final NUL, so the kernel reports the whole area and
//   nothing past it): its /proc/<pid>/cmdline is
//   "berth-shim\0\0...\0shim\0<run dir>\0", which ps and pgrep -f show as
//   `berth-shim` + blanks + `shim <run dir>`, whatever path the program was
//   executed from (a /proc/<pid>/fd/<n> path names a process that may be gone,
//   and would show a sandboxed pod a host pid). (prctl
//   PR_SET_MM_ARG_END could shrink the area to fit, but needs
//   CAP_SYS_RESOURCE, which the machines this was written on do not grant even
//   to root.) The launcher rewrites its own area likewise, so it shows as
//   `berth-shim shim --launcher`.
//
// Thread-safety: LaunchShim and ShimLauncherPid may be called from any thread;
// one mutex guards the launchers (held while one is started and while a
// request is sent, never during the readiness wait). ShimLauncherMain is a
// process's main.
#pragma once

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "core/status.h"

namespace berth::agent::shim {

// The descriptor the launcher's socket is passed on.
inline constexpr int kLauncherFd = 3;
// The program name supervisors and launchers show in their command lines.
inline constexpr char kSupervisorDisplayName[] = "berth-shim";
// The size of the padding argument a launcher is started with.
inline constexpr size_t kLauncherPadding = 4200;
// The start of a launcher's hello, which goes on "<pid> <max run dir bytes>".
inline constexpr char kLauncherHelloPrefix[] = "berth-launcher 1 ";
// The descriptors a request carries: the log, the readiness pipe's write end.
inline constexpr size_t kLauncherRequestFds = 2;

Status LaunchShim(const std::vector<std::string>& supervisor, const std::string& run_dir,
                  std::chrono::milliseconds timeout);
pid_t ShimLauncherPid(const std::vector<std::string>& supervisor);

// A launcher started by StartShimLauncher: its socket (the caller closes it;
// the launcher exits at its end of file), its pid and the longest run
// directory its supervisors' command lines can name.
struct ShimLauncherConnection {
  int socket = -1;
  pid_t pid = 0;
  size_t max_run_dir = 0;
};
// Starts a launcher of `supervisor` and waits up to `timeout` of real time for
// its hello. Errors: kInternal "the shim launcher exited before it was ready",
// "...was not ready within Ns", "...sent no hello" (a command that is no
// launcher), or socket/spawn failures.
StatusOr<ShimLauncherConnection> StartShimLauncher(const std::vector<std::string>& supervisor,
                                                   std::chrono::milliseconds timeout);
// Sends one request (see above). Returns 0, or the errno of sendmsg (EPIPE or
// ECONNRESET: the launcher is gone; EAGAIN: its socket is full). Never blocks
// and never raises SIGPIPE.
int SendShimRequest(int socket, const std::string& run_dir, int log_fd, int ready_fd);

// `<argv0> shim --launcher <padding>` with the socket at kLauncherFd: forks
// (the first process exits at once) and serves requests in the child until
// end of file. Returns 2 with a usage message on stderr for other arguments
// or without a SOCK_SEQPACKET socket at kLauncherFd; in a forked supervisor,
// returns RunShim's exit code.
int ShimLauncherMain(int argc, char** argv);

// Writes the supervisor's command line (see above) into `area` (a process's
// argv strings, from argv[0] to the NUL ending the last one). Returns false,
// changing nothing, when argv0, "shim" and run_dir do not fit.
bool SetSupervisorCommandLine(std::span<char> area, const std::string& argv0, const std::string& run_dir);

// In a process forked from a supervisor (a sandbox's init), replaces the command line
// SetSupervisorCommandLine wrote with `shown` alone, so that the run directory's host
// path is not shown to the pod (/proc/1/cmdline is readable by every process in the
// sandbox). Does nothing when SetSupervisorCommandLine has not run or `shown` does not fit.
void ReplaceSupervisorCommandLine(std::string_view shown);

// This process's argv strings, from argv[0] to the NUL ending the last one
// (empty when they are not laid out one after the other, as exec does).
std::span<char> ArgvArea(int argc, char** argv);

// Whether the other end of a SOCK_SEQPACKET socket has closed (POLLHUP,
// POLLERR or POLLNVAL right now). Never blocks.
bool SocketHungUp(int socket);

}  // namespace berth::agent::shim
