#include "agent/shim/shim_client.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/shim/run_record.h"
#include "agent/shim/shim.h"
#include "core/file.h"

namespace berth::agent::shim {
namespace {

Status ErrnoError(const std::string& what) { return InternalError(what + ": " + std::strerror(errno)); }

}  // namespace

Status OpenSupervisorIo(const std::string& run_dir, int* log_fd, int ready[2]) {
  const std::string log_path = run_dir + "/" + kShimLogFile;
  *log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (*log_fd < 0) return ErrnoError("cannot open " + log_path);
  if (pipe2(ready, O_CLOEXEC) != 0) {
    Status error = ErrnoError("pipe");
    close(*log_fd);
    return error;
  }
  return Status::Ok();
}

Status SpawnShim(const std::vector<std::string>& supervisor, const std::string& run_dir,
                 std::chrono::milliseconds timeout) {
  if (supervisor.empty()) return InternalError("no container supervisor configured");
  int log_fd = -1;
  int ready[2];
  BERTH_RETURN_IF_ERROR(OpenSupervisorIo(run_dir, &log_fd, ready));
  return SpawnShimWith(supervisor, run_dir, log_fd, ready, timeout);
}

Status SpawnShimWith(const std::vector<std::string>& supervisor, const std::string& run_dir, int log_fd,
                     const int ready[2], std::chrono::milliseconds timeout) {
  std::vector<std::string> args = supervisor;
  args.push_back(run_dir);
  // The supervisor daemonizes itself (ShimMain forks and its first process
  // exits), so it ends up nobody's child.
  static_assert(kReadyFd == 3, "SpawnDetached passes one descriptor, at 3");
  StatusOr<pid_t> first = SpawnDetached(args, log_fd, log_fd, ready[1], "the container supervisor");
  close(ready[1]);
  close(log_fd);
  if (!first.ok()) {
    close(ready[0]);
    return first.status();
  }
  const int ready_result = AwaitReadiness(ready[0], timeout);
  ReapFirstProcess(*first);
  return ReadinessError(ready_result, timeout, run_dir);
}

StatusOr<pid_t> SpawnDetached(const std::vector<std::string>& args, int out_fd, int err_fd, int fd3,
                              const std::string& what) {
  if (args.empty()) return InternalError("no command for " + what);
  std::vector<std::string> words = args;
  std::vector<char*> argv;
  for (auto& a : words) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string path_env = "PATH=" + std::string(kDefaultPath);
  std::string bind_now = std::string(kBindNowEnv);
  char* envp[] = {path_env.data(), bind_now.data(), nullptr};
  // posix_spawn (vfork-like: no copy of the caller's page tables, which for a
  // server holding many objects costs more than the supervisor's whole start).
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  if (err_fd >= 0) posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawn_file_actions_adddup2(&actions, fd3, 3);
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t first = 0;
  int rc = posix_spawn(&first, argv[0], &actions, &attr, argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    errno = rc;
    return ErrnoError("cannot start " + what + " " + args[0]);
  }
  return first;
}

void ReapFirstProcess(pid_t first) {
  // One that is still there is not the daemon: it is our unreaped child, so
  // killing it by pid cannot reach anyone else.
  if (waitpid(first, nullptr, WNOHANG) == 0) {
    kill(first, SIGKILL);
    while (waitpid(first, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

int AwaitReadiness(int ready_fd, std::chrono::milliseconds timeout) {
  pollfd p{ready_fd, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, static_cast<int>(timeout.count()));
  } while (r < 0 && errno == EINTR);
  char byte = 0;
  ssize_t n = r > 0 ? read(ready_fd, &byte, 1) : -1;
  close(ready_fd);
  if (r == 0) return 0;
  return n == 1 ? 1 : -1;
}

Status ReadinessError(int result, std::chrono::milliseconds timeout, const std::string& run_dir) {
  if (result == 1) return Status::Ok();
  const std::string log_path = run_dir + "/" + kShimLogFile;
  if (result == 0) {
    return InternalError("the container supervisor was not ready within " + std::to_string(timeout.count() / 1000) +
                         "s (see " + log_path + ")");
  }
  return InternalError("the container supervisor exited before it was ready (see " + log_path + ")");
}

StatusOr<int> ConnectShim(const std::string& run_dir) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoError("socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string path = run_dir + "/" + kSocketFile;
  int dir_fd = -1;
  if (path.size() >= sizeof addr.sun_path) {
    // Too long for sun_path: reach the directory through a descriptor.
    dir_fd = open(run_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
      int err = errno;
      close(fd);
      if (err == ENOENT) return UnavailableError("no container supervisor at " + path);
      errno = err;
      return ErrnoError("open " + run_dir);
    }
    path = "/proc/self/fd/" + std::to_string(dir_fd) + "/" + kSocketFile;
  }
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  int rc;
  do {
    rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  int err = errno;
  if (dir_fd >= 0) close(dir_fd);
  if (rc == 0) {
    // The hello: which run this supervisor serves.
    const std::string want = HelloLine(run_dir);
    std::string got;
    while (got.size() < want.size() + 1 && got.find('\n') == std::string::npos) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 2000) <= 0) break;
      char buf[512];
      ssize_t n = read(fd, buf, std::min(sizeof buf, want.size() + 1 - got.size()));
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    if (got == want) return fd;
    close(fd);
    if (got.empty()) return UnavailableError("the container supervisor at " + run_dir + " closed the connection");
    return UnavailableError("the socket at " + run_dir + " is not this run's supervisor");
  }
  close(fd);
  if (err == ENOTSOCK) err = ECONNREFUSED;
  if (err == ENOENT || err == ECONNREFUSED) {
    return UnavailableError("no container supervisor listens at " + run_dir + "/" + kSocketFile);
  }
  errno = err;
  return ErrnoError("connect " + run_dir + "/" + kSocketFile);
}

std::string HelloLine(const std::string& run_dir) {
  char resolved[PATH_MAX];
  const std::string dir = realpath(run_dir.c_str(), resolved) != nullptr ? std::string(resolved) : run_dir;
  return "berth-shim 1 " + dir + "\n";
}

std::string ProcessStartTime(pid_t pid) {
  StatusOr<std::string> stat = ReadFileBounded("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!stat.ok()) return "";
  size_t close = stat->rfind(')');  // the command may contain spaces and parentheses
  if (close == std::string::npos || close + 2 >= stat->size()) return "";
  std::string rest = stat->substr(close + 2);
  size_t pos = 0;
  for (int field = 3; field < 22; ++field) {
    pos = rest.find(' ', pos);
    if (pos == std::string::npos) return "";
    ++pos;
  }
  return rest.substr(pos, rest.find(' ', pos) - pos);
}

bool ProcessLive(pid_t pid, std::string_view start_time) {
  StatusOr<std::string> stat = ReadFileBounded("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!stat.ok()) return false;
  const size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size() || (*stat)[close + 2] == 'Z') return false;
  return ProcessStartTime(pid) == start_time;
}

namespace {

// pid of the supervisor named by <run dir>/shim.pid when it is that same live
// process and serves this run, else 0.
pid_t VerifiedSupervisor(const std::string& run_dir) {
  StatusOr<std::string> record = ReadFileBounded(run_dir + "/" + kSupervisorFile, 64, /*follow_symlinks=*/false);
  if (!record.ok()) return 0;
  long long pid = 0;
  char start[32] = {0};
  if (std::sscanf(record->c_str(), "%lld %31s", &pid, start) != 2 || pid <= 1 || pid > 1 << 22) return 0;
  if (ProcessStartTime(static_cast<pid_t>(pid)) != start) return 0;
  StatusOr<std::string> cmdline = ReadFileBounded("/proc/" + std::to_string(pid) + "/cmdline", 1 << 16);
  if (!cmdline.ok()) return 0;
  const std::string suffix = std::string("shim") + '\0' + run_dir + '\0';
  if (cmdline->size() < suffix.size() ||
      cmdline->compare(cmdline->size() - suffix.size(), suffix.size(), suffix) != 0) {
    return 0;
  }
  if (!ProcessLive(static_cast<pid_t>(pid), start)) return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace

Status WriteProcessRecord(const std::string& path, pid_t pid) {
  return WriteFileAtomically(path, std::to_string(pid) + " " + ProcessStartTime(pid) + "\n", 0600,
                             FileDurability::kDeferred);
}

Status WriteSupervisorRecord(const std::string& run_dir) {
  return WriteProcessRecord(run_dir + "/" + kSupervisorFile, getpid());
}

int SandboxInitAlive(const std::string& run_dir) {
  StatusOr<std::string> record = ReadFileBounded(run_dir + "/" + kInitFile, 64, /*follow_symlinks=*/false);
  if (!record.ok()) return 0;
  long long pid = 0;
  char start[32] = {0};
  if (std::sscanf(record->c_str(), "%lld %31s", &pid, start) != 2 || pid <= 1 || pid > 1 << 22) return 0;
  if (!ProcessLive(static_cast<pid_t>(pid), start)) return 0;
  return static_cast<int>(pid);
}

int SupervisorAlive(const std::string& run_dir) { return VerifiedSupervisor(run_dir); }

bool ClaimUnreleasedRun(const std::string& run_dir) {
  struct stat st;
  for (const char* file : {kExitFile, kSupervisorFile, kReleasedFile}) {
    if (lstat((run_dir + "/" + file).c_str(), &st) == 0 || errno != ENOENT) return false;
  }
  if (lstat((run_dir + "/" + kLaunchFile).c_str(), &st) != 0 || VerifiedSupervisor(run_dir) != 0) return false;
  return MarkReleased(run_dir).ok();
}

bool KillSupervisor(const std::string& run_dir) {
  const pid_t pid = VerifiedSupervisor(run_dir);
  if (pid == 0) return false;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;
  // The pidfd pins the process: checked again after opening it, the pid can no
  // longer name anything else.
  bool sent = VerifiedSupervisor(run_dir) == pid && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) == 0;
  close(pidfd);
  return sent;
}

bool SendSignal(int connection, int sig) {
  char line[32];
  int len = std::snprintf(line, sizeof line, "signal %d\n", sig);
  return send(connection, line, static_cast<size_t>(len), MSG_NOSIGNAL | MSG_DONTWAIT) == len;
}

}  // namespace berth::agent::shim
