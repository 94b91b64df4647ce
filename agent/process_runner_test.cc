#include "agent/process_runner.h"

#include <fcntl.h>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/testing/test_files.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kRealTimeout{20000};  // only a bound on hangs, never asserted

using testing::ReadFile;

class ProcessRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDirectory("proc-test");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ContainerLaunch Shell(const std::string& script) {
    ContainerLaunch l;
    l.name = "c";
    l.argv = {"/bin/sh", "-c", script};
    l.env = {{"PATH", std::string(kDefaultPath)}, {"DIR", dir_.string()}};
    l.working_dir = dir_.string();
    l.log_path = ContainerLogPath(dir_.string(), "c", 0);
    return l;
  }
  // Waits (real time, bounded) until the log contains `text`.
  bool WaitForLog(const ContainerLaunch& l, const std::string& text) {
    for (int i = 0; i < 2000; ++i) {
      if (ReadFile(l.log_path).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }

  fs::path dir_;
  FakeClock clock_;
};

TEST_F(ProcessRunnerTest, ExitCodeAndLogsAreCaptured) {
  auto l = Shell("echo out; echo err >&2; pwd; exit 3");
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  ASSERT_GT(p->pid(), 0);
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_EQ(e->signal, 0);
  EXPECT_TRUE(e->start_error.empty());
  EXPECT_EQ(e->started_at, clock_.Now());
  EXPECT_EQ(ReadFile(l.log_path), "out\nerr\n" + fs::canonical(dir_).string() + "\n");
  EXPECT_FALSE(ProcessGroupExists(p->pid()));
}

TEST_F(ProcessRunnerTest, TheContainerInheritsNoDescriptorOfTheAgent) {
  // A descriptor the agent holds without close-on-exec (as a listening socket
  // or a log file could be) must not reach the container.
  const int leaked = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(leaked, 3);
  // ls replaces the shell (no pipeline whose pipes the shell would hold while
  // ls reads its table) and opens the lowest free descriptor to read
  // /proc/self/fd: 3 when only stdin, stdout and stderr were inherited.
  auto l = Shell("exec ls /proc/self/fd");
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  auto e = p->WaitForExit(kRealTimeout);
  ::close(leaked);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_EQ(ReadFile(l.log_path), "0\n1\n2\n3\n");
}

// A process group leader running `sleep 60`, as a container left by a dead agent.
pid_t SpawnGroup() {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

TEST_F(ProcessRunnerTest, LeftoverProcessGroupsOfADeadAgentAreKilledOnlyWhenStillTheSameProcess) {
  const std::string pods = (dir_ / "pods").string();
  fs::create_directories(pods + "/ns_a_uid1");
  fs::create_directories(pods + "/ns_b_uid2");
  pid_t leftover = SpawnGroup();
  pid_t unrelated = SpawnGroup();
  RecordProcessGroup(pods + "/ns_a_uid1", leftover);
  // A record whose pid now belongs to another process (different start time).
  { std::ofstream(pods + "/ns_b_uid2/process-groups") << unrelated << " 1\n"; }

  EXPECT_EQ(KillLeftoverProcessGroups(pods), 1);
  int status = 0;
  ASSERT_EQ(waitpid(leftover, &status, 0), leftover);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_EQ(waitpid(unrelated, &status, WNOHANG), 0);  // still running
  EXPECT_FALSE(fs::exists(pods + "/ns_a_uid1/process-groups"));  // records are forgotten
  EXPECT_EQ(KillLeftoverProcessGroups(pods), 0);
  kill(unrelated, SIGKILL);
  waitpid(unrelated, &status, 0);

  // The leader died (the agent's PDEATHSIG) but its child lives on in the group.
  int forked[2];
  ASSERT_EQ(pipe(forked), 0);
  pid_t leader = fork();
  if (leader == 0) {
    setpgid(0, 0);
    if (fork() == 0) {
      execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      _exit(127);
    }
    (void)!write(forked[1], "x", 1);  // the child exists: the group outlives the leader
    pause();
    _exit(0);
  }
  setpgid(leader, leader);
  char byte;
  ASSERT_EQ(read(forked[0], &byte, 1), 1);
  close(forked[0]);
  close(forked[1]);
  RecordProcessGroup(pods + "/ns_a_uid1", leader);
  kill(leader, SIGKILL);
  ASSERT_EQ(waitpid(leader, &status, 0), leader);
  ASSERT_EQ(kill(-leader, 0), 0);  // the orphaned child keeps the group alive
  EXPECT_EQ(KillLeftoverProcessGroups(pods), 1);
  for (int i = 0; i < 200 && kill(-leader, 0) == 0; ++i) {
    // When this process is a child subreaper (the runner makes it one), the killed
    // orphan is its child: reap the zombie so the group can vanish.
    while (waitpid(-leader, nullptr, WNOHANG) > 0) {
    }
    usleep(10000);
  }
  EXPECT_NE(kill(-leader, 0), 0);  // gone
}

TEST_F(ProcessRunnerTest, EnvironmentIsExactlyTheGivenOne) {
  auto pod = api::Object::parse(R"json({
    "metadata": {"name": "w-1", "namespace": "ns", "uid": "uid-9",
                 "annotations": {"batch.kubernetes.io/job-completion-index": "3"}},
    "spec": {"nodeName": "n1", "containers": [{"name": "c",
      "command": ["/bin/sh", "-c", "echo \"$RANK $POD $NODE $GREETING\"; env | sort | cut -d= -f1 | tr '\\n' ' '"],
      "env": [{"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
              {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
              {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
              {"name": "GREETING", "value": "hi $(POD)"}]}]}})json");
  auto cmd = ResolveCommand(pod, "c", NodeFacts{});
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  ContainerLaunch l = Shell("");
  l.argv = cmd->argv;
  l.env = cmd->env;
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 0);
  // sh adds PWD (and may add SHLVL/_); nothing of the agent's own environment leaks in.
  std::string log = ReadFile(l.log_path);
  EXPECT_EQ(log.substr(0, log.find('\n') + 1), "3 w-1 n1 hi w-1\n");
  std::string names = log.substr(log.find('\n') + 1);
  for (const char* want : {"GREETING ", "HOSTNAME ", "NODE ", "PATH ", "POD ", "RANK "}) {
    EXPECT_NE(names.find(want), std::string::npos) << want << " in " << names;
  }
  EXPECT_EQ(names.find("HOME "), std::string::npos) << names;
}

TEST_F(ProcessRunnerTest, SignalledProcessReportsSignalAndExitCode) {
  auto p = ContainerProcess::Start(Shell("kill -KILL $$"), clock_, nullptr);
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->exit_code, 137);
}

TEST_F(ProcessRunnerTest, SigtermTrappedExitsWithinGrace) {
  auto l = Shell("trap 'echo bye > \"$DIR/terminated\"; exit 0' TERM; echo ready; "
                 "while :; do sleep 0.05; done");
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  ASSERT_TRUE(WaitForLog(l, "ready"));
  p->Terminate(seconds(30));
  EXPECT_EQ(p->kill_deadline(), clock_.Now() + seconds(30));
  auto e = p->WaitForExit(kRealTimeout);  // the fake clock never moves: only SIGTERM can end it
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_EQ(e->signal, 0);
  EXPECT_FALSE(p->killed_at_deadline());
  EXPECT_EQ(ReadFile(dir_ / "terminated"), "bye\n");
  EXPECT_FALSE(p->Tick());
  EXPECT_FALSE(ProcessGroupExists(p->pid()));
}

TEST_F(ProcessRunnerTest, SigtermIgnoredIsKilledExactlyAtTheDeadline) {
  auto l = Shell("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  ASSERT_TRUE(WaitForLog(l, "ready"));
  p->Terminate(seconds(30));
  EXPECT_FALSE(p->Tick());
  clock_.Advance(seconds(29));
  EXPECT_FALSE(p->Tick());
  // Still alive one second before the deadline, although SIGTERM was delivered.
  EXPECT_FALSE(p->WaitForExit(milliseconds(300)).has_value());
  EXPECT_TRUE(ProcessGroupExists(p->pid()));
  clock_.Advance(seconds(1));
  EXPECT_TRUE(p->Tick());
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->exit_code, 137);
  EXPECT_TRUE(p->killed_at_deadline());
  EXPECT_EQ(e->finished_at, FakeClock().Now() + seconds(30));
  EXPECT_FALSE(ProcessGroupExists(p->pid()));
}

TEST_F(ProcessRunnerTest, ZeroGraceKillsAtOnce) {
  auto l = Shell("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  ASSERT_TRUE(WaitForLog(l, "ready"));
  p->Terminate(Duration::zero());
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGKILL);
}

TEST_F(ProcessRunnerTest, BackgroundChildrenAndOrphansDieWithTheContainer) {
  // A background child, and a double-forked grandchild orphaned at once.
  auto l = Shell("sleep 1000 & (sleep 1000 &) ; echo $! > \"$DIR/child\"; exit 5");
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 5);
  EXPECT_FALSE(ProcessGroupExists(p->pid()));
  pid_t child = std::stoi(ReadFile(dir_ / "child"));
  EXPECT_NE(kill(child, 0), 0);  // gone, not even a zombie
  // Nothing of the group is left to reap.
  EXPECT_EQ(waitpid(-p->pid(), nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(ProcessRunnerTest, StartErrorsNameTheCause) {
  struct Case {
    std::vector<std::string> argv;
    std::string working_dir;  // "" = the test dir
    std::string message;
  } cases[] = {
      {{"berth-no-such-binary", "x"}, "",
       "unable to start container process: exec: \"berth-no-such-binary\": executable file not found in $PATH"},
      {{"/no/such/berth-binary"}, "",
       "unable to start container process: exec: \"/no/such/berth-binary\": stat /no/such/berth-binary: no "
       "such file or directory"},
      {{"./not-executable"}, "",
       "unable to start container process: exec: \"./not-executable\": permission denied"},
      {{}, "", "container \"c\" has no command: berth runs processes, not images, so command is required"},
      {{"/bin/true"}, "/no/such/dir",
       "unable to start container process: chdir to cwd (\"/no/such/dir\") set in config.json failed: no such "
       "file or directory"},
  };
  std::ofstream(dir_ / "not-executable") << "data\n";
  for (const auto& c : cases) {
    auto l = Shell("");
    l.argv = c.argv;
    if (!c.working_dir.empty()) l.working_dir = c.working_dir;
    auto p = ContainerProcess::Start(l, clock_, nullptr);
    auto e = p->exit();
    ASSERT_TRUE(e.has_value()) << c.message;
    EXPECT_EQ(p->pid(), 0);
    EXPECT_EQ(e->exit_code, 128);
    EXPECT_EQ(e->start_error, c.message);
  }
}

TEST_F(ProcessRunnerTest, DestructorKillsARunningGroup) {
  auto l = Shell("echo $$ > \"$DIR/pid\"; echo ready; sleep 1000");
  pid_t pgid;
  {
    auto p = ContainerProcess::Start(l, clock_, nullptr);
    ASSERT_TRUE(WaitForLog(l, "ready"));
    pgid = p->pid();
    EXPECT_TRUE(ProcessGroupExists(pgid));
  }
  EXPECT_FALSE(ProcessGroupExists(pgid));
}

}  // namespace
}  // namespace berth::agent
