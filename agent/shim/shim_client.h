// The node agent's side of the supervisor (shim.h): starting one, and talking
// to a live one through its control socket.
//
// SpawnShim(supervisor, run_dir, timeout): starts `supervisor... run_dir`
//   (e.g. {"/proc/self/exe", "shim"}) with posix_spawn (no copy of the
//   caller's address space) in its own session, stdin /dev/null,
//   stdout/stderr appended to <run dir>/shim.log, an environment of PATH only,
//   default signal handling and no other descriptor of the caller; the
//   supervisor daemonizes (ShimMain), so it is not the caller's child. Waits up
//   to `timeout` of real time for its readiness byte, then reaps the first
//   process (killing it if it has not exited: it is no supervisor). Errors:
//   kInternal "the container supervisor exited before it was ready (see <run
//   dir>/shim.log)" or "...was not ready within Ns", or spawn/pipe failures.
//
// ConnectShim(run_dir): a connected control socket (a file descriptor the
//   caller closes) to the supervisor of that run. A socket, not a pid, is what
//   names a supervisor: after a reboot or the supervisor's death the socket
//   file stays but nobody listens, so a stale record can never lead to
//   signalling an unrelated process. Paths longer than sun_path are reached
//   through /proc/self/fd. Errors: kUnavailable when no supervisor listens
//   (ENOENT, ECONNREFUSED); kInternal otherwise.
//
// The protocol: the agent writes lines "signal <N>\n" (1 ≤ N < 65); the
//   supervisor writes nothing and closes every connection when it exits, so
//   end-of-file on a connection means the run is over (exit.json says how).
//
// Thread-safety: plain functions; a connection is used by one owner.
#pragma once

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace berth::agent::shim {

Status SpawnShim(const std::vector<std::string>& supervisor, const std::string& run_dir,
                 std::chrono::milliseconds timeout);

StatusOr<int> ConnectShim(const std::string& run_dir);

// Sends "signal <sig>\n" on a connection; false when the supervisor is gone.
bool SendSignal(int connection, int sig);

}  // namespace berth::agent::shim
