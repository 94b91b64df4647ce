#include "agent/shim/supervisor_image.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "agent/shim/shim.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U  // Linux 6.3: executable even under vm.memfd_noexec=1
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020  // Linux 6.3: the mode (its x bits) cannot change
#endif

namespace berth::agent::shim {
namespace {

Status ErrnoError(const std::string& what) { return InternalError(what + ": " + std::strerror(errno)); }

// Runs `<path> shim --check` and waits up to 10 s for it: OK when it exits 0.
Status CheckProgram(const std::string& path) {
  std::string program = path, shim = "shim", check = kShimCheckArgument;
  char* argv[] = {program.data(), shim.data(), check.data(), nullptr};
  char* envp[] = {nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    return InternalError("cannot execute the supervisor program: " + std::string(std::strerror(spawned)));
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  pid_t done;
  while ((done = waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (done == 0) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return InternalError("the supervisor program's check did not exit within 10s");
  }
  if (done < 0) return ErrnoError("waiting for the supervisor program's check");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return InternalError("the supervisor program's check ended with status " + std::to_string(status));
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> Install(std::span<const unsigned char> image) {
  if (image.empty()) {
    return UnavailableError("this binary embeds no supervisor program (sanitizer and fuzzing builds do not)");
  }
  int fd = memfd_create("berth-supervisor", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
  if (fd < 0 && errno == EINVAL) fd = memfd_create("berth-supervisor", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 && (errno == EACCES || errno == EPERM)) {
    return ErrnoError("memfd_create (executable memfds are forbidden here, vm.memfd_noexec)");
  }
  if (fd < 0) return ErrnoError("memfd_create");
  auto fail = [fd](Status s) {
    close(fd);
    return s;
  };
  for (size_t done = 0; done < image.size();) {
    const ssize_t n = write(fd, image.data() + done, image.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(ErrnoError("writing the supervisor program"));
    done += static_cast<size_t>(n);
  }
  constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
  if (fcntl(fd, F_ADD_SEALS, kSeals | F_SEAL_EXEC | F_SEAL_SEAL) != 0 &&
      (errno != EINVAL || fcntl(fd, F_ADD_SEALS, kSeals | F_SEAL_SEAL) != 0)) {
    return fail(ErrnoError("sealing the supervisor program"));
  }
  // This process as the mounted /proc numbers it (which need not be its own
  // PID namespace's), and the descriptor checked to be the memfd through it.
  char self[32] = {0};
  const ssize_t self_len = readlink("/proc/self", self, sizeof self - 1);
  if (self_len <= 0) return fail(ErrnoError("/proc/self (is /proc mounted for this PID namespace?)"));
  const std::string path = "/proc/" + std::string(self, static_cast<size_t>(self_len)) + "/fd/" + std::to_string(fd);
  struct stat by_path, by_fd;
  if (stat(path.c_str(), &by_path) != 0) return fail(ErrnoError(path));
  if (fstat(fd, &by_fd) != 0) return fail(ErrnoError("fstat of the supervisor program"));
  if (by_path.st_dev != by_fd.st_dev || by_path.st_ino != by_fd.st_ino) {
    return fail(InternalError(path + " is not the supervisor program's memfd (/proc is another PID namespace's)"));
  }
  if (Status checked = CheckProgram(path); !checked.ok()) return fail(checked);
  return std::vector<std::string>{path, "shim"};
}

}  // namespace

StatusOr<std::vector<std::string>> InstallSupervisorImage(std::span<const unsigned char> image) {
  static std::mutex mu;
  // By the image's address: the embedded one is installed once.
  static auto* installed = new std::map<const unsigned char*, StatusOr<std::vector<std::string>>>;  // guarded by mu
  std::lock_guard<std::mutex> lock(mu);
  auto it = installed->find(image.data());
  if (it == installed->end()) it = installed->emplace(image.data(), Install(image)).first;
  return it->second;
}

}  // namespace berth::agent::shim
