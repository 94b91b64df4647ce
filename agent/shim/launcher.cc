// The launcher process (`<supervisor> shim --launcher <padding>`): the side of
// launcher.h that runs in the supervisor program. The agent's side is
// launcher_client.cc.
#include "agent/shim/launcher.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <poll.h>
#include <signal.h>
#include <string_view>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/shim/shim.h"

namespace berth::agent::shim {
namespace {

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
  if (n == 0 && fds.empty() && SocketHungUp(socket)) return 0;
  const std::string_view dir(buf, static_cast<size_t>(n));
  const char* problem = nullptr;
  if ((msg.msg_flags & MSG_CTRUNC) != 0) {
    problem = "too many descriptors";
  } else if ((msg.msg_flags & MSG_TRUNC) != 0) {
    problem = "run directory longer than PATH_MAX";
  } else if (fds.size() != kLauncherRequestFds) {
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
  const std::string argv0 = kSupervisorDisplayName;
  // The launcher shows as `berth-shim shim --launcher` (the padding blanked).
  const std::string shown = argv0 + '\0' + "shim" + '\0' + "--launcher" + '\0';
  if (area.size() >= shown.size()) {
    std::memset(area.data(), 0, area.size());
    std::memcpy(area.data(), shown.data(), shown.size());
  }
  const size_t overhead = argv0.size() + 1 + std::strlen("shim") + 1 + 1;  // SetSupervisorCommandLine
  const size_t max_run_dir = area.size() > overhead ? std::min<size_t>(area.size() - overhead, PATH_MAX - 1) : 0;
  const std::string hello =
      std::string(kLauncherHelloPrefix) + std::to_string(getpid()) + " " + std::to_string(max_run_dir);
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

std::span<char> ArgvArea(int argc, char** argv) {
  if (argc <= 0) return {};
  char* end = argv[0];
  for (int i = 0; i < argc; ++i) {
    if (argv[i] != end) return {};
    end += std::strlen(argv[i]) + 1;
  }
  return {argv[0], static_cast<size_t>(end - argv[0])};
}

namespace {
// The argv area SetSupervisorCommandLine last wrote (this process's, and after a fork its
// child's copy at the same address).
std::span<char> supervisor_area;
}  // namespace

bool SetSupervisorCommandLine(std::span<char> area, const std::string& argv0, const std::string& run_dir) {
  const std::string tail = std::string("shim") + '\0' + run_dir + '\0';
  if (argv0.size() + 1 + tail.size() > area.size()) return false;
  std::memset(area.data(), 0, area.size());
  std::memcpy(area.data(), argv0.data(), argv0.size());
  std::memcpy(area.data() + area.size() - tail.size(), tail.data(), tail.size());
  supervisor_area = area;
  return true;
}

void ReplaceSupervisorCommandLine(std::string_view shown) {
  if (supervisor_area.size() <= shown.size()) return;
  std::memset(supervisor_area.data(), 0, supervisor_area.size());
  std::memcpy(supervisor_area.data(), shown.data(), shown.size());
}

bool SocketHungUp(int socket) {
  pollfd p{socket, 0, 0};  // POLLHUP is reported whatever is asked for
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  return r > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace berth::agent::shim
