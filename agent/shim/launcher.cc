#include "agent/shim/launcher.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <map>
#include <mutex>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <string_view>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/shim/run_record.h"
#include "agent/shim/shim.h"
#include "agent/shim/shim_client.h"

namespace berth::agent::shim {
namespace {

constexpr char kHelloPrefix[] = "berth-launcher 1 ";
constexpr size_t kRequestFds = 2;  // the log, the readiness pipe's write end

Status ErrnoError(const std::string& what) { return InternalError(what + ": " + std::strerror(errno)); }

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Whether the other end of a SOCK_SEQPACKET socket has closed.
bool HungUp(int socket) {
  pollfd p{socket, 0, 0};  // POLLHUP is reported whatever is asked for
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  return r > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

// ---- The agent's side.

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
  if (l.connection.socket >= 0 && HungUp(l.connection.socket)) {
    Forget(l);
    return true;
  }
  return l.connection.socket < 0;
}

// ---- The launcher's side.

// This process's argv strings, from argv[0] to the NUL ending the last one
// (empty when they are not laid out one after the other, as exec does).
std::span<char> ArgvArea(int argc, char** argv) {
  if (argc <= 0) return {};
  char* end = argv[0];
  for (int i = 0; i < argc; ++i) {
    if (argv[i] != end) return {};
    end += std::strlen(argv[i]) + 1;
  }
  return {argv[0], static_cast<size_t>(end - argv[0])};
}

struct Request {
  std::string run_dir;
  int log_fd = -1;
  int ready_fd = -1;
};

// Reads one request. Returns 1 with *request set, 0 at end of file (or when
// the socket fails), -1 for a malformed message (reported on stderr, the
// descriptors it carried closed).
int ReceiveRequest(int socket, size_t max_run_dir, Request* request) {
  char buf[PATH_MAX + 1];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 16)];
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    std::cerr << "berth shim launcher: recvmsg: " << std::strerror(errno) << "\n";
    return 0;
  }
  std::vector<int> fds;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      fds.push_back(fd);
    }
  }
  // SOCK_SEQPACKET reads end of file and an empty message alike: the agent
  // never sends one, and at end of file the other end has hung up.
  if (n == 0 && fds.empty() && HungUp(socket)) return 0;
  const std::string_view dir(buf, static_cast<size_t>(n));
  const char* problem = nullptr;
  if ((msg.msg_flags & MSG_CTRUNC) != 0) {
    problem = "too many descriptors";
  } else if ((msg.msg_flags & MSG_TRUNC) != 0) {
    problem = "run directory longer than PATH_MAX";
  } else if (fds.size() != kRequestFds) {
    problem = "not two descriptors";
  } else if (dir.empty()) {
    problem = "no run directory";
  } else if (dir.find('\0') != std::string_view::npos) {
    problem = "a NUL in the run directory";
  } else if (dir.size() > max_run_dir) {
    problem = "run directory longer than the command line can hold";
  }
  if (problem != nullptr) {
    for (int fd : fds) close(fd);
    std::cerr << "berth shim launcher: malformed request ignored: " << problem << "\n";
    return -1;
  }
  request->run_dir.assign(dir);
  request->log_fd = fds[0];
  request->ready_fd = fds[1];
  return 1;
}

static_assert(kLauncherFd == kReadyFd, "the readiness pipe replaces the launcher's socket in a supervisor");

// The child of the launcher for one request: it sets up what SpawnShim's
// posix_spawn sets up, forks the supervisor and exits. Returns (in the
// supervisor) RunShim's exit code.
int StartSupervisor(const Request& r, std::span<char> area, const std::string& argv0) {
  setsid();
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(r.log_fd, 1) < 0 || dup2(r.log_fd, 2) < 0 ||
      dup2(r.ready_fd, kReadyFd) < 0) {
    _exit(1);
  }
  // Nothing of the launcher's (its socket is replaced by the readiness pipe at
  // kReadyFd, which equals kLauncherFd).
  if (syscall(SYS_close_range, static_cast<unsigned>(kReadyFd + 1), ~0u, 0u) != 0) {
    for (int fd = kReadyFd + 1; fd < 65536; ++fd) close(fd);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  // Daemonize, as ShimMain does: the supervisor is nobody's child.
  pid_t supervisor = fork();
  if (supervisor < 0) {
    std::cerr << "berth shim: fork: " << std::strerror(errno) << "\n";
    _exit(1);
  }
  if (supervisor > 0) _exit(0);
  if (!SetSupervisorCommandLine(area, argv0, r.run_dir)) {
    std::cerr << "berth shim: the run directory does not fit the launcher's command line\n";
    _exit(1);
  }
  return RunShim(r.run_dir, kReadyFd);
}

int Serve(int argc, char** argv) {
  prctl(PR_SET_NAME, "berth-launcher");
  // Descriptors 0-2 exist, so that received ones never land on them.
  while (true) {
    int fd = open("/dev/null", O_RDWR);
    if (fd < 0) break;
    if (fd > 2) {
      close(fd);
      break;
    }
  }
  fcntl(kLauncherFd, F_SETFD, FD_CLOEXEC);
  const std::span<char> area = ArgvArea(argc, argv);
  const std::string argv0 = argv[0];
  // Blank the padding: the launcher shows as `<argv0> shim --launcher`.
  std::memset(argv[3], 0, std::strlen(argv[3]));
  const size_t overhead = argv0.size() + 1 + std::strlen("shim") + 1 + 1;  // SetSupervisorCommandLine
  const size_t max_run_dir = area.size() > overhead ? std::min<size_t>(area.size() - overhead, PATH_MAX - 1) : 0;
  const std::string hello = kHelloPrefix + std::to_string(getpid()) + " " + std::to_string(max_run_dir);
  if (send(kLauncherFd, hello.data(), hello.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(hello.size())) return 1;
  while (true) {
    Request r;
    const int got = ReceiveRequest(kLauncherFd, max_run_dir, &r);
    if (got == 0) return 0;
    if (got < 0) continue;
    const pid_t child = fork();
    if (child == 0) return StartSupervisor(r, area, argv0);
    if (child < 0) {
      const std::string error = "berth shim launcher: fork: " + std::string(std::strerror(errno)) + "\n";
      (void)!write(r.log_fd, error.data(), error.size());
    }
    close(r.log_fd);
    close(r.ready_fd);
    if (child > 0) {
      while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  }
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
  if (HungUp(it->second.connection.socket)) {
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
  const size_t prefix = std::strlen(kHelloPrefix);
  if (static_cast<size_t>(n) <= prefix || std::strncmp(hello, kHelloPrefix, prefix) != 0 ||
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
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kRequestFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * kRequestFds);
  const int fds[kRequestFds] = {log_fd, ready_fd};
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t n;
  do {
    n = sendmsg(socket, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  return n < 0 ? errno : 0;
}

int ShimLauncherMain(int argc, char** argv) {
  int type = 0;
  socklen_t len = sizeof type;
  if (argc != 4 || std::string_view(argv[1]) != "shim" || std::string_view(argv[2]) != "--launcher" ||
      getsockopt(kLauncherFd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) {
    std::cerr << "usage: " << (argc > 0 ? argv[0] : "berth")
              << " shim --launcher <padding>, with a SOCK_SEQPACKET socket at descriptor " << kLauncherFd
              << " (the node agent starts it)\n";
    return 2;
  }
  // Daemonize, as ShimMain does.
  pid_t launcher = fork();
  if (launcher < 0) {
    std::cerr << "berth shim launcher: fork: " << std::strerror(errno) << "\n";
    return 1;
  }
  if (launcher > 0) _exit(0);
  return Serve(argc, argv);
}

bool SetSupervisorCommandLine(std::span<char> area, const std::string& argv0, const std::string& run_dir) {
  const std::string tail = std::string("shim") + '\0' + run_dir + '\0';
  if (argv0.size() + 1 + tail.size() > area.size()) return false;
  std::memset(area.data(), 0, area.size());
  std::memcpy(area.data(), argv0.data(), argv0.size());
  std::memcpy(area.data() + area.size() - tail.size(), tail.data(), tail.size());
  return true;
}

}  // namespace berth::agent::shim
