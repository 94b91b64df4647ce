#include "agent/shim/supervisor_image.h"

#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "agent/shim/container_log.h"
#include "agent/shim/launcher.h"
#include "agent/shim/shim_client.h"
#include "agent/shim/testing/supervisor_command.h"
#include "agent/shim/testing/test_files.h"

namespace berth::agent::shim {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string Link(const std::string& path) {
  std::error_code ec;
  return fs::read_symlink(path, ec).string();
}

// How many of this process's descriptors are memfds named berth-supervisor.
int SupervisorMemfds() {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    if (Link(e.path().string()).starts_with("/memfd:berth-supervisor")) ++n;
  }
  return n;
}

std::span<const unsigned char> Bytes(std::string_view s) {
  return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}

TEST(SupervisorImageTest, TheEmbeddedProgramIsStaticAndIsInstalledSealed) {
  const std::span<const unsigned char> image = EmbeddedSupervisorImage();
  if (image.empty()) GTEST_SKIP() << "this build embeds no supervisor program (sanitizers)";
  // A static executable: no interpreter, so none of the server's shared
  // libraries (or its allocator) is loaded into a supervisor.
  ASSERT_GT(image.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, image.data(), sizeof ehdr);
  ASSERT_EQ(std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG), 0);
  EXPECT_EQ(ehdr.e_type, ET_DYN);  // position-independent (-static-pie): its address is randomized
  ASSERT_LE(ehdr.e_phoff + ehdr.e_phnum * sizeof(Elf64_Phdr), image.size());
  int loads = 0;
  for (int i = 0; i < ehdr.e_phnum; ++i) {
    Elf64_Phdr ph;
    std::memcpy(&ph, image.data() + ehdr.e_phoff + i * sizeof ph, sizeof ph);
    EXPECT_NE(ph.p_type, PT_INTERP) << "the supervisor program is dynamically linked";
    loads += ph.p_type == PT_LOAD;
  }
  EXPECT_GT(loads, 0);

  StatusOr<std::vector<std::string>> command = InstallSupervisorImage(image);
  ASSERT_TRUE(command.ok()) << command.status();
  ASSERT_EQ(command->size(), 2u);
  EXPECT_EQ((*command)[1], "shim");
  const std::string prefix = "/proc/" + std::to_string(getpid()) + "/fd/";
  ASSERT_TRUE((*command)[0].starts_with(prefix)) << (*command)[0];
  EXPECT_EQ(Link((*command)[0]), "/memfd:berth-supervisor (deleted)");
  const int fd = std::stoi((*command)[0].substr(prefix.size()));
  EXPECT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);  // no container or child inherits it
  const int seals = fcntl(fd, F_GET_SEALS);
  // Its mode cannot change where the kernel can seal it (6.3, F_SEAL_EXEC).
  if ((seals & 0x0020) != 0) {
    EXPECT_EQ(fchmod(fd, 0644), -1);
    EXPECT_EQ(errno, EPERM);
  }
  EXPECT_EQ(seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
            F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  // Nothing can change it: writing its first byte (the same value) is refused.
  errno = 0;
  EXPECT_EQ(pwrite(fd, image.data(), 1, 0), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(ftruncate(fd, 1), -1);
  // Its content is the image.
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(static_cast<size_t>(st.st_size), image.size());
  std::vector<unsigned char> back(image.size());
  ASSERT_EQ(pread(fd, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  EXPECT_TRUE(std::equal(back.begin(), back.end(), image.begin()));

  // Once per process: the same command, and no second memfd.
  const int memfds = SupervisorMemfds();
  StatusOr<std::vector<std::string>> again = InstallSupervisorImage(image);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *command);
  EXPECT_EQ(SupervisorMemfds(), memfds);
  // The shim tests of this binary run their supervisors from it.
  EXPECT_EQ(testing::SupervisorCommand(), *command);
}

TEST(SupervisorImageTest, SupervisorsAndTheLauncherRunFromTheInstalledProgram) {
  const std::span<const unsigned char> image = EmbeddedSupervisorImage();
  if (image.empty()) GTEST_SKIP() << "this build embeds no supervisor program (sanitizers)";
  StatusOr<std::vector<std::string>> command = InstallSupervisorImage(image);
  ASSERT_TRUE(command.ok()) << command.status();
  const std::string dir = testing::FreshTestDirectory("supervisor-image").string();
  fs::create_directories(dir + "/work");
  for (bool launcher : {false, true}) {
    const int n = launcher ? 1 : 0;
    const std::string run =
        testing::WriteShellLaunch(dir, "until [ -e go" + std::to_string(n) + " ]; do sleep 0.01; done; echo ran", n);
    const Status started =
        launcher ? LaunchShim(*command, run, milliseconds(10000)) : SpawnShim(*command, run, milliseconds(10000));
    ASSERT_TRUE(started.ok()) << started;
    const pid_t supervisor = SupervisorAlive(run);
    ASSERT_NE(supervisor, 0);
    EXPECT_EQ(Link("/proc/" + std::to_string(supervisor) + "/exe"), "/memfd:berth-supervisor (deleted)")
        << (launcher ? "launched" : "exec'd");
    // It shows as berth-shim, not as the path it was executed from.
    const std::string cmdline = testing::ReadFile("/proc/" + std::to_string(supervisor) + "/cmdline");
    EXPECT_TRUE(cmdline.starts_with(std::string(kSupervisorDisplayName) + '\0')) << cmdline;
    EXPECT_TRUE(cmdline.ends_with(std::string("shim") + '\0' + run + '\0')) << cmdline;
    EXPECT_EQ(cmdline.find("/proc/"), std::string::npos) << cmdline;
    if (launcher) {
      const pid_t l = ShimLauncherPid(*command);
      ASSERT_NE(l, 0);
      EXPECT_EQ(Link("/proc/" + std::to_string(l) + "/exe"), "/memfd:berth-supervisor (deleted)");
    }
    std::ofstream(dir + "/work/go" + std::to_string(n)).put('\n');
    StatusOr<ExitRecord> exit = testing::WaitForExit(run);
    ASSERT_TRUE(exit.ok()) << exit.status();
    EXPECT_EQ(exit->exit_code, 0);
    EXPECT_EQ(exit->start_error, "");
    StatusOr<LogChunk> log = ReadContainerLog(ContainerLogPath(dir, "c", n), {});
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_EQ(log->text, "ran\n");
  }
  testing::RemoveWhenSupervisorsAreGone(dir);
}

// /proc need not be the PID namespace's of the process that installs: in a
// new PID namespace getpid() is 1 while the mounted /proc still numbers the
// process as the host does, and /proc/1/fd/<n> is another process's
// descriptor. The path must name the installer as /proc sees it.
TEST(SupervisorImageTest, ItIsInstalledInAPidNamespaceWhoseProcIsTheHosts) {
  const std::span<const unsigned char> image = EmbeddedSupervisorImage();
  if (image.empty()) GTEST_SKIP() << "this build embeds no supervisor program (sanitizers)";
  if (geteuid() != 0) GTEST_SKIP() << "a PID namespace needs root";
  const pid_t outer = fork();
  ASSERT_GE(outer, 0);
  if (outer == 0) {
    if (unshare(CLONE_NEWPID) != 0) _exit(10);
    const pid_t inner = fork();
    if (inner < 0) _exit(11);
    if (inner == 0) {
      if (getpid() != 1) _exit(12);
      // A copy at another address: installed afresh, not the parent's cached result.
      std::vector<unsigned char> copy(image.begin(), image.end());
      StatusOr<std::vector<std::string>> command = InstallSupervisorImage(copy);
      if (!command.ok()) _exit(13);
      char self[32] = {0};
      if (readlink("/proc/self", self, sizeof self - 1) <= 0) _exit(14);
      if (!(*command)[0].starts_with("/proc/" + std::string(self) + "/fd/")) _exit(15);
      if (std::string(self) == "1") _exit(16);
      if (Link((*command)[0]) != "/memfd:berth-supervisor (deleted)") _exit(17);
      _exit(0);
    }
    int status = 0;
    while (waitpid(inner, &status, 0) < 0 && errno == EINTR) {
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 20);
  }
  int status = 0;
  ASSERT_EQ(waitpid(outer, &status, 0), outer);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 unshare, 11 fork, 12 not pid 1, 13 install failed, 14 /proc/self, "
                                       "15 the path names another pid, 16 /proc is the namespace's, 17 not the memfd";
}

TEST(SupervisorImageTest, AnImageThatCannotServeIsRefusedAndLeavesNothingOpen) {
  const int memfds = SupervisorMemfds();
  // None embedded.
  StatusOr<std::vector<std::string>> none = InstallSupervisorImage({});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::kUnavailable);
  EXPECT_EQ(none.status().message(), "this binary embeds no supervisor program (sanitizer and fuzzing builds do not)");
  // Not a program.
  static constexpr std::string_view kText = "this is no program\n";
  StatusOr<std::vector<std::string>> text = InstallSupervisorImage(Bytes(kText));
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "cannot execute the supervisor program: Exec format error");
  // A program that runs but fails the check.
  static constexpr std::string_view kFails = "#!/bin/sh\nexit 3\n";
  StatusOr<std::vector<std::string>> fails = InstallSupervisorImage(Bytes(kFails));
  ASSERT_FALSE(fails.ok());
  EXPECT_EQ(fails.status().message(), "the supervisor program's check ended with status 768");
  // One that passes it is installed (the check is `shim --check`, exit 0).
  static constexpr std::string_view kPasses = "#!/bin/sh\n[ \"$1 $2\" = \"shim --check\" ] && exit 0; exit 1\n";
  StatusOr<std::vector<std::string>> passes = InstallSupervisorImage(Bytes(kPasses));
  ASSERT_TRUE(passes.ok()) << passes.status();
  EXPECT_EQ(SupervisorMemfds(), memfds + 1);  // the refused ones were closed
}

}  // namespace
}  // namespace berth::agent::shim
