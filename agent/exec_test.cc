#include "agent/exec.h"

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <thread>
#include <unistd.h>

#include "agent/process_runner.h"
#include "agent/shim/run_record.h"
#include "agent/shim/sandbox.h"
#include "agent/shim/shim.h"
#include "agent/shim/shim_client.h"
#include "agent/shim/testing/test_files.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;

// Reads `fd` (non-blocking) until EOF (EIO on a pty master), or until
// `until` appears in what was read when it is not empty.
std::string ReadAll(int fd, const std::string& until = "") {
  std::string out;
  const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(20);  // a bound on hangs only
  while (std::chrono::steady_clock::now() < bound) {
    if (!until.empty() && out.find(until) != std::string::npos) break;
    struct pollfd p {
      fd, POLLIN, 0
    };
    poll(&p, 1, 100);
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, n);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      break;
    }
  }
  return out;
}

class ExecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = shim::testing::FreshTestDirectory("exec-test");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  ExecLaunch Launch(std::vector<std::string> argv) {
    ExecLaunch l;
    l.argv = std::move(argv);
    l.env = {"PATH=" + std::string(shim::kDefaultPath), "GREETING=from the container"};
    l.working_dir = dir_.string();
    return l;
  }
  fs::path dir_;
};

TEST_F(ExecTest, RunsInTheContainersEnvironmentWithSeparateStreamsAndItsExitCode) {
  auto p = StartExecProcess(Launch({"sh", "-c", "echo \"$GREETING\"; pwd; echo oops >&2; exit 3"}));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->stdin_fd(), -1);
  EXPECT_EQ(ReadAll((*p)->stdout_fd()), "from the container\n" + dir_.string() + "\n");
  EXPECT_EQ(ReadAll((*p)->stderr_fd()), "oops\n");
  EXPECT_EQ((*p)->Wait(), 3);
}

TEST_F(ExecTest, StdinIsAPipeTheCallerCloses) {
  ExecLaunch l = Launch({"cat"});
  l.stdin = true;
  auto p = StartExecProcess(l);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(write((*p)->stdin_fd(), "hi\n", 3), 3);
  (*p)->CloseStdin();
  EXPECT_EQ(ReadAll((*p)->stdout_fd()), "hi\n");
  EXPECT_EQ((*p)->Wait(), 0);
}

TEST_F(ExecTest, TtyIsTheControllingTerminalWithTheSizeSet) {
  ExecLaunch l = Launch({"sh", "-c", "read x; test -t 0 && test -t 1 && echo is-a-tty; stty size; exit 7"});
  l.stdin = true;
  l.tty = true;
  auto p = StartExecProcess(l);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ((*p)->stderr_fd(), -1);
  EXPECT_EQ((*p)->stdin_fd(), (*p)->stdout_fd());
  (*p)->Resize(123, 45);
  ASSERT_EQ(write((*p)->stdin_fd(), "go\n", 3), 3);
  const std::string out = ReadAll((*p)->stdout_fd());
  EXPECT_NE(out.find("is-a-tty"), std::string::npos) << out;
  EXPECT_NE(out.find("45 123"), std::string::npos) << out;
  EXPECT_EQ((*p)->Wait(), 7);
}

TEST_F(ExecTest, DestroyingTheProcessKillsItsWholeGroup) {
  auto p = StartExecProcess(Launch({"sh", "-c", "sleep 300 & echo $!; wait"}));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const std::string line = ReadAll((*p)->stdout_fd(), "\n");
  const pid_t child = std::stoi(line);
  ASSERT_EQ(kill(child, 0), 0);
  EXPECT_EQ((*p)->TryWait(), std::nullopt);
  p->reset();
  // The background sleep was killed with the group: it is gone, or a zombie
  // waiting for init to reap it.
  const auto bound = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  std::string state = "?";
  while (std::chrono::steady_clock::now() < bound) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, comm;
    if (!(stat >> pid >> comm >> state)) state = "gone";
    if (state == "gone" || state == "Z") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(state == "gone" || state == "Z") << state;
}

TEST_F(ExecTest, KillEndsTheProcessWithSigkill) {
  auto p = StartExecProcess(Launch({"sleep", "300"}));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  (*p)->Kill();
  EXPECT_EQ((*p)->Wait(), 128 + SIGKILL);
}

TEST_F(ExecTest, AnUnknownCommandIsRuncsStartError) {
  auto p = StartExecProcess(Launch({"no-such-command-xyz"}));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInternal);
  EXPECT_EQ(p.status().message(),
            "unable to start container process: exec: \"no-such-command-xyz\": executable file not found in $PATH");
}

// kubectl exec into a sandboxed run (root only): the same PID and mount
// namespaces (it sees the run's init as pid 1, and the run's private /tmp),
// the run's user, and the exit status relayed.
TEST_F(ExecTest, ASandboxedRunsExecEntersItsNamespacesAsItsUser) {
  if (!shim::ProbeSandbox(fs::temp_directory_path().string()).ok()) GTEST_SKIP() << "needs root and namespaces";
  fs::create_directories(dir_ / "work");
  fs::permissions(dir_ / "work", fs::perms::all);
  ContainerLaunch c;
  c.name = "c";
  c.argv = {"/bin/sh", "-c", "echo in-sandbox > /tmp/marker; echo ready; exec sleep 1000"};
  c.env = {{"PATH", std::string(shim::kDefaultPath)}};
  c.working_dir = (dir_ / "work").string();
  c.run_dir = shim::RunDir(dir_.string(), "c", 0);
  c.log_path = shim::ContainerLogPath(dir_.string(), "c", 0);
  c.sandbox.enabled = true;
  c.sandbox.rootfs_dir = c.run_dir + "/rootfs";
  c.sandbox.user = {200321, 200321, {}};
  c.sandbox.mounts = {{shim::SandboxMount::Kind::kBind, c.working_dir, c.working_dir, false, 0}};
  FakeClock clock;
  auto run = ContainerProcess::Start(c, clock, nullptr);
  for (int i = 0; i < 2000 && shim::testing::ReadFile(c.log_path).find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  StatusOr<shim::LaunchRecord> record = shim::ReadLaunchRecord(c.run_dir);
  ASSERT_TRUE(record.ok());
  auto p = StartExecProcess(
      ExecLaunchFor(*record, {"sh", "-c", "cat /proc/1/comm; cat /tmp/marker; id -u; pwd; echo $$ > /dev/null; exit 4"},
                    false, false, c.run_dir));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(ReadAll((*p)->stdout_fd()), "berth-init\nin-sandbox\n200321\n" + c.working_dir + "\n");
  EXPECT_EQ((*p)->Wait(), 4);

  // stdin reaches the command, and its end too.
  ExecLaunch with_stdin = ExecLaunchFor(*record, {"cat"}, true, false, c.run_dir);
  auto cat = StartExecProcess(with_stdin);
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  ASSERT_EQ(write((*cat)->stdin_fd(), "hi\n", 3), 3);
  (*cat)->CloseStdin();
  EXPECT_EQ(ReadAll((*cat)->stdout_fd()), "hi\n");
  EXPECT_EQ((*cat)->Wait(), 0);

  // argv[0] is looked up inside the sandbox, and a signal ends the exec as it ended the command.
  auto missing = StartExecProcess(ExecLaunchFor(*record, {"berth-no-such-tool"}, false, false, c.run_dir));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "unable to start container process: exec: \"berth-no-such-tool\": executable file not found in $PATH");
  auto killed = StartExecProcess(ExecLaunchFor(*record, {"sh", "-c", "kill -TERM $$"}, false, false, c.run_dir));
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ((*killed)->Wait(), 128 + SIGTERM);

  run->Kill();
  ASSERT_TRUE(run->WaitForExit(std::chrono::milliseconds(20000)).has_value());
  auto gone = StartExecProcess(ExecLaunchFor(*record, {"true"}, false, false, c.run_dir));
  EXPECT_EQ(gone.status().code(), Code::kInternal);
  shim::testing::RemoveWhenSupervisorsAreGone(dir_);
}

}  // namespace
}  // namespace berth::agent
