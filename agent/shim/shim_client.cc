#include "agent/shim/shim_client.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/shim/run_record.h"
#include "agent/shim/shim.h"

namespace berth::agent::shim {
namespace {

Status ErrnoError(const std::string& what) { return InternalError(what + ": " + std::strerror(errno)); }

}  // namespace

Status SpawnShim(const std::vector<std::string>& supervisor, const std::string& run_dir,
                 std::chrono::milliseconds timeout) {
  if (supervisor.empty()) return InternalError("no container supervisor configured");
  const std::string log_path = run_dir + "/" + kShimLogFile;
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return ErrnoError("cannot open " + log_path);
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) != 0) {
    close(log_fd);
    return ErrnoError("pipe");
  }
  std::vector<std::string> args = supervisor;
  args.push_back(run_dir);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::string path_env = "PATH=" + std::string(kDefaultPath);
  char* envp[] = {path_env.data(), nullptr};

  // posix_spawn (vfork-like: no copy of the agent's page tables, which for a
  // server holding many objects costs more than the supervisor's whole start).
  // The supervisor daemonizes itself (ShimMain forks and its first process
  // exits), so it ends up nobody's child.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  posix_spawn_file_actions_adddup2(&actions, ready[1], kReadyFd);
  posix_spawn_file_actions_addclosefrom_np(&actions, kReadyFd + 1);
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
  close(ready[1]);
  close(log_fd);
  if (rc != 0) {
    close(ready[0]);
    errno = rc;
    return ErrnoError("cannot start the container supervisor " + supervisor[0]);
  }
  pollfd p{ready[0], POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, static_cast<int>(timeout.count()));
  } while (r < 0 && errno == EINTR);
  char byte = 0;
  ssize_t n = r > 0 ? read(ready[0], &byte, 1) : -1;
  close(ready[0]);
  // Reap the first process (it exits as soon as it has forked). One that is
  // still there after the wait is not a supervisor: it is our unreaped child,
  // so killing it by pid cannot reach anyone else.
  if (waitpid(first, nullptr, WNOHANG) == 0) {
    kill(first, SIGKILL);
    while (waitpid(first, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (r == 0) {
    return InternalError("the container supervisor was not ready within " + std::to_string(timeout.count() / 1000) +
                         "s (see " + log_path + ")");
  }
  if (n != 1) return InternalError("the container supervisor exited before it was ready (see " + log_path + ")");
  return Status::Ok();
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
  if (rc == 0) return fd;
  close(fd);
  if (err == ENOENT || err == ECONNREFUSED) {
    return UnavailableError("no container supervisor listens at " + run_dir + "/" + kSocketFile);
  }
  errno = err;
  return ErrnoError("connect " + run_dir + "/" + kSocketFile);
}

bool SendSignal(int connection, int sig) {
  char line[32];
  int len = std::snprintf(line, sizeof line, "signal %d\n", sig);
  return send(connection, line, static_cast<size_t>(len), MSG_NOSIGNAL | MSG_DONTWAIT) == len;
}

}  // namespace berth::agent::shim
