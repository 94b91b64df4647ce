#include "agent/shim/launcher.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <poll.h>
#include <regex>
#include <set>
#include <signal.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "agent/shim/container_log.h"
#include "agent/shim/run_record.h"
#include "agent/shim/shim.h"
#include "agent/shim/shim_client.h"
#include "agent/shim/testing/supervisor_command.h"
#include "agent/shim/testing/test_files.h"

namespace berth::agent::shim {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::Alive;
using testing::ReadFile;
using testing::StatField;
using testing::WaitForExit;

constexpr milliseconds kReady{10000};

bool WaitUntil(const std::function<bool()>& done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

// The processes whose parent is `pid`.
std::vector<pid_t> Children(pid_t pid) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (StatField(std::stoi(name), 4) == std::to_string(pid)) out.push_back(std::stoi(name));
  }
  return out;
}

// The descriptors of `pid` and what they point to, with socket and pipe
// inode numbers and `base` (a pod directory) left out.
std::multiset<std::string> Descriptors(pid_t pid, const std::string& base = "") {
  std::multiset<std::string> out;
  const fs::path dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& e : fs::directory_iterator(dir)) {
    std::error_code ec;
    std::string target = fs::read_symlink(e.path(), ec).string();
    target = std::regex_replace(target, std::regex(R"(\[\d+\])"), "[]");
    if (!base.empty() && target.starts_with(base)) target = "<pod>" + target.substr(base.size());
    out.insert(e.path().filename().string() + " -> " + target);
  }
  return out;
}

// The lines of /proc/<pid>/status starting with `key`.
std::string StatusLine(pid_t pid, const std::string& key) {
  std::istringstream in(ReadFile("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(key + ":")) return line;
  }
  return "";
}

class LauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDirectory("launcher").string();
    fs::create_directories(dir_ + "/work");
  }
  void TearDown() override {
    for (const std::string& base : {dir_, dir_ + "/a", dir_ + "/b"}) {
      for (const auto& [n, run] : ListRuns(base, "c")) {
        if (StatusOr<int> c = ConnectShim(run); c.ok()) {
          SendSignal(*c, SIGKILL);
          close(*c);
        } else {
          KillSupervisor(run);
        }
      }
    }
    testing::RemoveWhenSupervisorsAreGone(dir_);
  }

  // Writes the launch record of run `run` of container "c" running `script`
  // under the pod directory `base` (default: the test's directory).
  std::string Launch(const std::string& script, int run = 0, const std::string& base = "") {
    return testing::WriteShellLaunch(dir_, script, run, base);
  }

  std::string dir_;
};

TEST_F(LauncherTest, ARunStartedThroughTheLauncherIsReadyAndItsSupervisorIsVerified) {
  std::string run = Launch("echo $PPID > \"$DIR/shim\"; exec sleep 1000");
  ASSERT_TRUE(LaunchShim(testing::SupervisorCommand(), run, kReady).ok());
  const pid_t launcher = ShimLauncherPid(testing::SupervisorCommand());
  ASSERT_NE(launcher, 0);
  const pid_t shim = SupervisorAlive(run);
  ASSERT_NE(shim, 0) << "cmdline: " << ReadFile("/proc/" + std::to_string(shim) + "/cmdline");
  ASSERT_TRUE(WaitUntil([&] { return !ReadFile(dir_ + "/shim").empty(); }));
  EXPECT_EQ(std::stoi(ReadFile(dir_ + "/shim")), shim);
  // Daemonized: neither the launcher's child nor ours, in a session of its own.
  EXPECT_NE(StatField(shim, 4), std::to_string(launcher));
  EXPECT_NE(StatField(shim, 4), std::to_string(getpid()));
  EXPECT_NE(StatField(shim, 6), StatField(launcher, 6));
  EXPECT_NE(StatField(shim, 6), StatField(getpid(), 6));
  EXPECT_NE(StatField(launcher, 6), StatField(getpid(), 6));
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);  // nothing of ours to reap
  // Its command line names the run as an exec'd supervisor's does.
  const std::string cmdline = ReadFile("/proc/" + std::to_string(shim) + "/cmdline");
  const std::string tail = std::string("shim") + '\0' + run + '\0';
  const std::string argv0 = kSupervisorDisplayName;  // whatever path it was executed from
  EXPECT_TRUE(cmdline.starts_with(argv0 + '\0')) << cmdline;
  EXPECT_TRUE(cmdline.ends_with(tail)) << cmdline;
  EXPECT_EQ(cmdline.size(), testing::SupervisorCommand()[0].size() + 1 + std::string("shim").size() + 1 +
                                std::string("--launcher").size() + 1 + kLauncherPadding + 1);
  EXPECT_EQ(testing::FindProcess("shim " + run), shim);  // as pgrep -f sees it
  EXPECT_EQ(ReadFile("/proc/" + std::to_string(shim) + "/comm"), "berth-shim\n");
  EXPECT_EQ(ReadFile("/proc/" + std::to_string(shim) + "/environ"),
            "PATH=" + std::string(kDefaultPath) + '\0' + std::string(kBindNowEnv) + '\0');
  // The launcher shows as what it is.
  std::string launcher_cmdline = ReadFile("/proc/" + std::to_string(launcher) + "/cmdline");
  launcher_cmdline.erase(launcher_cmdline.find_last_not_of('\0') + 1);
  EXPECT_EQ(launcher_cmdline, argv0 + '\0' + "shim" + '\0' + "--launcher");
  EXPECT_EQ(ReadFile("/proc/" + std::to_string(launcher) + "/comm"), "berth-launcher\n");
  // The launcher reaped the process in between.
  EXPECT_TRUE(WaitUntil([&] { return Children(launcher).empty(); }));

  // KillSupervisor reaches it (and its container dies with it).
  EXPECT_TRUE(KillSupervisor(run));
  EXPECT_TRUE(WaitUntil([&] { return SupervisorAlive(run) == 0 && !Alive(shim); }));
  EXPECT_FALSE(fs::exists(run + "/exit.json"));
  // The next start goes to the same launcher.
  std::string next = Launch("exit 6", 1);
  ASSERT_TRUE(LaunchShim(testing::SupervisorCommand(), next, kReady).ok());
  EXPECT_EQ(ShimLauncherPid(testing::SupervisorCommand()), launcher);
  StatusOr<ExitRecord> exit = WaitForExit(next);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_code, 6);
}

// A forked supervisor holds what an exec'd one holds: the same descriptors,
// signal mask and dispositions, and environment; and the launcher is one
// thread with its socket and standard streams only.
TEST_F(LauncherTest, AForkedSupervisorHasWhatAnExecdOneHas) {
  const std::string a = Launch("exec sleep 1000", 0, dir_ + "/a");
  const std::string b = Launch("exec sleep 1000", 0, dir_ + "/b");
  const int leaked = ::open("/dev/null", O_RDONLY);  // the agent's, not close-on-exec
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), a, kReady).ok());
  ASSERT_TRUE(LaunchShim(testing::SupervisorCommand(), b, kReady).ok());
  ::close(leaked);
  const pid_t execd = SupervisorAlive(a), forked = SupervisorAlive(b);
  ASSERT_NE(execd, 0);
  ASSERT_NE(forked, 0);
  const pid_t launcher = ShimLauncherPid(testing::SupervisorCommand());
  ASSERT_NE(launcher, 0);
  // (Each closes the readiness pipe just after writing to it.)
  WaitUntil([&] { return Descriptors(forked, dir_ + "/b") == Descriptors(execd, dir_ + "/a"); });
  EXPECT_EQ(Descriptors(forked, dir_ + "/b"), Descriptors(execd, dir_ + "/a"));
  const std::multiset<std::string> fds = Descriptors(forked, dir_ + "/b");
  EXPECT_EQ(fds.count("0 -> /dev/null"), 1u);
  EXPECT_EQ(fds.count("1 -> <pod>/runs/c/0/shim.log"), 1u);
  EXPECT_EQ(fds.count("2 -> <pod>/runs/c/0/shim.log"), 1u);
  for (const char* key : {"SigBlk", "SigIgn", "SigCgt", "Threads", "NoNewPrivs", "CapEff", "Cpus_allowed_list"}) {
    EXPECT_EQ(StatusLine(forked, key), StatusLine(execd, key)) << key;
  }
  EXPECT_EQ(ReadFile("/proc/" + std::to_string(forked) + "/environ"),
            ReadFile("/proc/" + std::to_string(execd) + "/environ"));
  // The launcher: one thread; /dev/null, /dev/null, our stderr and its socket.
  EXPECT_EQ(StatusLine(launcher, "Threads"), "Threads:\t1");
  std::multiset<std::string> launcher_fds = Descriptors(launcher);
  EXPECT_EQ(launcher_fds.size(), 4u);
  EXPECT_EQ(launcher_fds.count("0 -> /dev/null"), 1u);
  EXPECT_EQ(launcher_fds.count("1 -> /dev/null"), 1u);
  EXPECT_EQ(launcher_fds.count("3 -> socket:[]"), 1u);
  EXPECT_EQ(ReadFile("/proc/" + std::to_string(launcher) + "/environ"),
            "PATH=" + std::string(kDefaultPath) + '\0' + std::string(kBindNowEnv) + '\0');
}

TEST_F(LauncherTest, ASupervisorOutlivesItsKilledLauncherAndTheNextStartStartsANewOne) {
  std::string run = Launch("while [ ! -e \"$DIR/go\" ]; do sleep 0.02; done; echo done; exit 4");
  ASSERT_TRUE(LaunchShim(testing::SupervisorCommand(), run, kReady).ok());
  const pid_t launcher = ShimLauncherPid(testing::SupervisorCommand());
  ASSERT_NE(launcher, 0);
  const pid_t shim = SupervisorAlive(run);
  ASSERT_NE(shim, 0);
  ASSERT_EQ(kill(launcher, SIGKILL), 0);
  ASSERT_TRUE(WaitUntil([&] { return !Alive(launcher); }));
  EXPECT_EQ(ShimLauncherPid(testing::SupervisorCommand()), 0);
  // The run goes on, and ends as it would have.
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_EQ(SupervisorAlive(run), shim);
  EXPECT_FALSE(fs::exists(run + "/exit.json"));
  std::ofstream(dir_ + "/go") << "";
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_code, 4);
  EXPECT_EQ(exit->start_error, "");
  EXPECT_EQ(ReadFile(ContainerLogPath(dir_, "c", 0)), "done\n");
  // The next start gets a new launcher.
  std::string next = Launch("exec sleep 1000", 1);
  ASSERT_TRUE(LaunchShim(testing::SupervisorCommand(), next, kReady).ok());
  const pid_t again = ShimLauncherPid(testing::SupervisorCommand());
  EXPECT_NE(again, 0);
  EXPECT_NE(again, launcher);
  EXPECT_NE(SupervisorAlive(next), 0);
}

TEST_F(LauncherTest, MalformedRequestsAreDroppedAndTheLauncherGoesOn) {
  StatusOr<ShimLauncherConnection> c = StartShimLauncher(testing::SupervisorCommand(), kReady);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->max_run_dir, static_cast<size_t>(PATH_MAX - 1));
  // Sends `dir` with `n` descriptors, each the write end of a pipe whose read
  // end is returned: end of file there once the launcher closed them all.
  auto send = [&](const std::string& dir, int n) {
    std::vector<int> ours, theirs;
    for (int i = 0; i < n; ++i) {
      int p[2];
      EXPECT_EQ(pipe2(p, O_CLOEXEC), 0);
      ours.push_back(p[0]);
      theirs.push_back(p[1]);
    }
    iovec iov{const_cast<char*>(dir.data()), dir.size()};
    std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max(n, 1)));
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (n > 0) {
      msg.msg_control = control.data();
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
      cmsghdr* cm = CMSG_FIRSTHDR(&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
      std::memcpy(CMSG_DATA(cm), theirs.data(), sizeof(int) * n);
    }
    EXPECT_EQ(sendmsg(c->socket, &msg, MSG_NOSIGNAL), static_cast<ssize_t>(dir.size())) << std::strerror(errno);
    for (int fd : theirs) close(fd);
    return ours;
  };
  auto closed_by_launcher = [](const std::vector<int>& fds) {
    bool all = true;
    for (int fd : fds) {
      pollfd p{fd, POLLIN, 0};
      char byte;
      all = all && poll(&p, 1, 5000) == 1 && read(fd, &byte, 1) == 0;
      close(fd);
    }
    return all;
  };
  const std::string run = Launch("exec sleep 1000");
  EXPECT_TRUE(closed_by_launcher(send(run, 0)));
  EXPECT_TRUE(closed_by_launcher(send(run, 1))) << "one descriptor";
  EXPECT_TRUE(closed_by_launcher(send(run, 3))) << "three descriptors";
  EXPECT_TRUE(closed_by_launcher(send(run, 20))) << "more than the launcher reads";
  EXPECT_TRUE(closed_by_launcher(send(std::string("/a\0b", 4), 2))) << "a NUL";
  EXPECT_TRUE(closed_by_launcher(send("/" + std::string(PATH_MAX - 1, 'x'), 2))) << "longer than the maximum";
  EXPECT_TRUE(closed_by_launcher(send("/" + std::string(2 * PATH_MAX, 'x'), 2))) << "longer than PATH_MAX";
  EXPECT_TRUE(closed_by_launcher(send("", 2))) << "empty";
  EXPECT_TRUE(Alive(c->pid));
  EXPECT_TRUE(Children(c->pid).empty());
  // A well-formed request after them all is served.
  const int log = ::open((run + "/shim.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  int ready[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  EXPECT_EQ(SendShimRequest(c->socket, run, log, ready[1]), 0);
  close(log);
  close(ready[1]);
  EXPECT_EQ(AwaitReadiness(ready[0], kReady), 1);
  EXPECT_NE(SupervisorAlive(run), 0);
  // End of file on its socket ends the launcher, not the supervisors it started.
  close(c->socket);
  EXPECT_TRUE(WaitUntil([&] { return !Alive(c->pid); }));
  EXPECT_NE(SupervisorAlive(run), 0);
}

TEST_F(LauncherTest, ConcurrentStartsShareOneLauncher) {
  std::vector<std::string> runs;
  for (int i = 0; i < 8; ++i) runs.push_back(Launch("exit " + std::to_string(i), i));
  std::vector<Status> started(runs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < runs.size(); ++i) {
    threads.emplace_back([&, i] { started[i] = LaunchShim(testing::SupervisorCommand(), runs[i], kReady); });
  }
  for (auto& t : threads) t.join();
  const pid_t launcher = ShimLauncherPid(testing::SupervisorCommand());
  EXPECT_NE(launcher, 0);
  for (size_t i = 0; i < runs.size(); ++i) {
    ASSERT_TRUE(started[i].ok()) << started[i];
    StatusOr<ExitRecord> exit = WaitForExit(runs[i]);
    ASSERT_TRUE(exit.ok()) << exit.status();
    EXPECT_EQ(exit->exit_code, static_cast<int>(i));
  }
  EXPECT_TRUE(WaitUntil([&] { return Children(launcher).empty(); })) << "zombies";
}

TEST_F(LauncherTest, ACommandThatIsNoLauncherIsExecdForEveryRun) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  // `--launcher` makes it exit: no launcher starts, and each run is exec'd.
  const std::vector<std::string> plain = {"/bin/sh", "-c", "[ \"$1\" = --launcher ] && exit 3; exec \"$0\" shim \"$1\"",
                                          self};
  EXPECT_EQ(StartShimLauncher(plain, kReady).status().message(), "the shim launcher exited before it was ready");
  std::string run = Launch("exit 2");
  ASSERT_TRUE(LaunchShim(plain, run, kReady).ok());
  EXPECT_EQ(ShimLauncherPid(plain), 0);
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_code, 2);
  std::string next = Launch("exit 3", 1);
  ASSERT_TRUE(LaunchShim(plain, next, kReady).ok());
  exit = WaitForExit(next);
  ASSERT_TRUE(exit.ok()) << exit.status();
  EXPECT_EQ(exit->exit_code, 3);
  // One that says anything else on the socket is no launcher either.
  EXPECT_EQ(StartShimLauncher({"/bin/sh", "-c", "echo hello >&3; sleep 1", "sh"}, kReady).status().message(),
            "the shim launcher sent no hello");
}

TEST(SetSupervisorCommandLineTest, FillsTheAreaToItsEndOrRefuses) {
  std::string area(40, 'x');
  ASSERT_TRUE(SetSupervisorCommandLine(area, "/x/berth", "/r/1"));
  const std::string tail = std::string("shim") + '\0' + "/r/1" + '\0';
  EXPECT_EQ(area, "/x/berth" + std::string(40 - 8 - tail.size(), '\0') + tail);
  std::string exact(8 + 1 + tail.size(), 'x');
  ASSERT_TRUE(SetSupervisorCommandLine(exact, "/x/berth", "/r/1"));
  EXPECT_EQ(exact, "/x/berth" + std::string(1, '\0') + tail);
  std::string small(exact.size() - 1, 'x');
  EXPECT_FALSE(SetSupervisorCommandLine(small, "/x/berth", "/r/1"));
  EXPECT_EQ(small, std::string(exact.size() - 1, 'x'));
}

}  // namespace
}  // namespace berth::agent::shim
