// The agent's side of launcher.h: starting launchers and sending them
// requests. The launcher process itself is launcher.cc.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/shim/launcher.h"
#include "agent/shim/run_record.h"
#include "agent/shim/shim.h"
#include "agent/shim/shim_client.h"

namespace berth::agent::shim {
namespace {

Status ErrnoError(const std::string& what) { return InternalError(what + ": " + std::strerror(errno)); }

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

struct Launcher {
  ShimLauncherConnection connection;  // socket -1: none running
  uint64_t generation = 0;            // launchers started so far
  bool disabled = false;              // one failed to start: SpawnShim from now on
};

// Never destroyed: supervisors may be started until the process exits.
std::mutex& LaunchersMutex() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::map<std::vector<std::string>, Launcher>& Launchers() {  // guarded by LaunchersMutex()
  static auto* launchers = new std::map<std::vector<std::string>, Launcher>;
  return *launchers;
}

void Forget(Launcher& l) {
  if (l.connection.socket >= 0) close(l.connection.socket);
  l.connection = {};
}

// Sends the request to the command's launcher (started or restarted as the
// file comment says). Returns the launcher generation it went to, or 0 when
// the caller is to SpawnShim.
uint64_t SendToLauncher(const std::vector<std::string>& supervisor, const std::string& run_dir, int log_fd,
                        int ready_fd, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(LaunchersMutex());
  Launcher& l = Launchers()[supervisor];
  for (int attempt = 0; attempt < 2 && !l.disabled; ++attempt) {
    if (l.connection.socket < 0) {
      StatusOr<ShimLauncherConnection> started = StartShimLauncher(supervisor, timeout);
      if (!started.ok()) {
        l.disabled = true;
        spdlog::warn(
            "cannot start the shim launcher ({}): container supervisors are started by exec'ing {} from now on",
            started.status().message(), Joined(supervisor));
        return 0;
      }
      l.connection = *started;
      ++l.generation;
    }
    if (run_dir.size() > l.connection.max_run_dir) return 0;  // its command line could not name the run
    const int err = SendShimRequest(l.connection.socket, run_dir, log_fd, ready_fd);
    if (err == 0) return l.generation;
    // Full (EAGAIN) or worse: this one is exec'd. Dead: a new one is started, once.
    if (err != EPIPE && err != ECONNRESET && err != ENOTCONN) return 0;
    Forget(l);
  }
  return 0;
}

// Whether launcher `generation` of the command has died (it hung up, or was replaced).
bool LauncherDied(const std::vector<std::string>& supervisor, uint64_t generation) {
  std::lock_guard<std::mutex> lock(LaunchersMutex());
  Launcher& l = Launchers()[supervisor];
  if (l.generation != generation) return true;
  if (l.connection.socket >= 0 && SocketHungUp(l.connection.socket)) {
    Forget(l);
    return true;
  }
  return l.connection.socket < 0;
}

}  // namespace

Status LaunchShim(const std::vector<std::string>& supervisor, const std::string& run_dir,
                  std::chrono::milliseconds timeout) {
  if (supervisor.empty()) return InternalError("no container supervisor configured");
  int log_fd = -1;
  int ready[2];
  BERTH_RETURN_IF_ERROR(OpenSupervisorIo(run_dir, &log_fd, ready));
  const uint64_t generation = SendToLauncher(supervisor, run_dir, log_fd, ready[1], timeout);
  if (generation == 0) return SpawnShimWith(supervisor, run_dir, log_fd, ready, timeout);  // same descriptors
  close(ready[1]);
  close(log_fd);
  const int result = AwaitReadiness(ready[0], timeout);
  // Every write end closed without the byte while the launcher died: it died
  // holding the request, before it forked (a forked supervisor holds the pipe
  // until it is ready or dead). Start it the old way, unless anything of the run lives or ended.
  if (result == -1 && LauncherDied(supervisor, generation) && SupervisorAlive(run_dir) == 0 &&
      access((run_dir + "/" + kExitFile).c_str(), F_OK) != 0 && errno == ENOENT) {
    return SpawnShim(supervisor, run_dir, timeout);
  }
  return ReadinessError(result, timeout, run_dir);
}

pid_t ShimLauncherPid(const std::vector<std::string>& supervisor) {
  std::lock_guard<std::mutex> lock(LaunchersMutex());
  auto it = Launchers().find(supervisor);
  if (it == Launchers().end() || it->second.connection.socket < 0) return 0;
  if (SocketHungUp(it->second.connection.socket)) {
    Forget(it->second);
    return 0;
  }
  return it->second.connection.pid;
}

StatusOr<ShimLauncherConnection> StartShimLauncher(const std::vector<std::string>& supervisor,
                                                   std::chrono::milliseconds timeout) {
  if (supervisor.empty()) return InternalError("no container supervisor configured");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return ErrnoError("socketpair");
  std::vector<std::string> args = supervisor;
  args.push_back("--launcher");
  args.push_back(std::string(kLauncherPadding, '-'));
  // As SpawnShim starts a supervisor, but with the socket at kLauncherFd and
  // the agent's stderr for the launcher's own complaints.
  static_assert(kLauncherFd == 3, "SpawnDetached passes one descriptor, at 3");
  StatusOr<pid_t> first = SpawnDetached(args, /*out_fd=*/-1, /*err_fd=*/-1, sv[1], "the shim launcher");
  close(sv[1]);
  if (!first.ok()) {
    close(sv[0]);
    return first.status();
  }
  pollfd p{sv[0], POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, static_cast<int>(timeout.count()));
  } while (r < 0 && errno == EINTR);
  char hello[128];
  ssize_t n = r > 0 ? recv(sv[0], hello, sizeof hello - 1, MSG_DONTWAIT) : -1;
  ReapFirstProcess(*first);  // one still there is no launcher
  auto fail = [&](const std::string& message) {
    close(sv[0]);
    return InternalError(message);
  };
  if (r == 0) return fail("the shim launcher was not ready within " + std::to_string(timeout.count() / 1000) + "s");
  if (n <= 0) return fail("the shim launcher exited before it was ready");
  hello[n] = '\0';
  ShimLauncherConnection c;
  c.socket = sv[0];
  long long pid = 0;
  unsigned long long max_run_dir = 0;
  int end = 0;
  const size_t prefix = std::strlen(kLauncherHelloPrefix);
  if (static_cast<size_t>(n) <= prefix || std::strncmp(hello, kLauncherHelloPrefix, prefix) != 0 ||
      std::sscanf(hello + prefix, "%lld %llu%n", &pid, &max_run_dir, &end) != 2 ||
      static_cast<size_t>(end) != static_cast<size_t>(n) - prefix || pid <= 1) {
    return fail("the shim launcher sent no hello");
  }
  c.pid = static_cast<pid_t>(pid);
  c.max_run_dir = static_cast<size_t>(max_run_dir);
  return c;
}

int SendShimRequest(int socket, const std::string& run_dir, int log_fd, int ready_fd) {
  iovec iov{const_cast<char*>(run_dir.data()), run_dir.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kLauncherRequestFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * kLauncherRequestFds);
  const int fds[kLauncherRequestFds] = {log_fd, ready_fd};
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t n;
  do {
    n = sendmsg(socket, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  return n < 0 ? errno : 0;
}

}  // namespace berth::agent::shim
