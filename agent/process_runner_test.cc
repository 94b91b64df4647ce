#include "agent/process_runner.h"

#include <atomic>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <thread>

#include "agent/shim/container_log.h"
#include "agent/shim/launcher.h"
#include "agent/shim/run_record.h"
#include "agent/shim/shim_client.h"
#include "agent/shim/testing/test_files.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kRealTimeout{20000};  // only a bound on hangs, never asserted

using shim::testing::ReadFile;

class ProcessRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = shim::testing::FreshTestDirectory("proc-test");
    fs::create_directories(dir_);
  }
  void TearDown() override {
    // A test that failed half-way must not leave containers behind.
    for (const auto& [n, run] : shim::ListRuns(dir_.string(), "c")) {
      if (StatusOr<int> c = shim::ConnectShim(run); c.ok()) {
        shim::SendSignal(*c, SIGKILL);
        close(*c);
      } else {
        shim::KillSupervisor(run);
      }
    }
    shim::testing::RemoveWhenSupervisorsAreGone(dir_);
  }

  // A run of container "c" (a new run number each call) running `script`
  // after writing its process group id to $DIR/pid.
  ContainerLaunch Shell(const std::string& script) {
    ContainerLaunch l;
    l.name = "c";
    l.argv = {"/bin/sh", "-c", "echo $$ > \"$DIR/pid\"; " + script};
    l.env = {{"PATH", std::string(kDefaultPath)}, {"DIR", dir_.string()}};
    l.working_dir = dir_.string();
    l.run = next_run_++;
    l.run_dir = shim::RunDir(dir_.string(), "c", l.run);
    l.log_path = shim::ContainerLogPath(dir_.string(), "c", l.run);
    return l;
  }
  // The process group id of the last run started (from $DIR/pid).
  pid_t Pgid() {
    for (int i = 0; i < 2000 && ReadFile(dir_ / "pid").empty(); ++i) std::this_thread::sleep_for(milliseconds(10));
    return std::stoi(ReadFile(dir_ / "pid"));
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
  int next_run_ = 0;
};

// A supervisor that starts only once `gate` (a file) exists.
SupervisorOptions GatedSupervisor(const fs::path& gate) {
  SupervisorOptions o;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  o.command = {"/bin/sh", "-c", "while [ ! -e '" + gate.string() + "' ]; do sleep 0.01; done; exec \"$0\" shim \"$1\"",
               self};
  o.launcher = false;
  return o;
}

// Start hands the run over and returns: the supervisor's start and readiness are the
// watcher's, and the run is neither running nor over until it answers.
TEST_F(ProcessRunnerTest, StartReturnsBeforeTheSupervisorAnswers) {
  auto l = Shell("echo started; while :; do sleep 0.05; done");
  auto p = ContainerProcess::Start(l, clock_, nullptr, GatedSupervisor(dir_ / "gate"));
  std::atomic<int> notified{0};
  p->SetNotify([&] { ++notified; });
  EXPECT_FALSE(p->ready());
  EXPECT_FALSE(p->running());
  EXPECT_FALSE(p->exit().has_value());
  EXPECT_EQ(notified.load(), 0);
  std::ofstream(dir_ / "gate") << "";
  ASSERT_TRUE(p->WaitReady(kRealTimeout));
  EXPECT_TRUE(p->running());
  // The watcher thread notifies after it wakes the waiters, so a waiter can see
  // the state before the call: wait (bounded) for it, then check it was one.
  const auto notified_to = [&](int n) {
    for (int i = 0; i < 1000 && notified.load() < n; ++i) std::this_thread::sleep_for(milliseconds(10));
    return notified.load();
  };
  EXPECT_EQ(notified_to(1), 1) << "once ready";
  ASSERT_TRUE(WaitForLog(l, "started"));
  EXPECT_EQ(notified.load(), 1) << "nothing more while it runs";
  p->Kill();
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(notified_to(2), 2) << "and once over";
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(notified.load(), 2) << "and never again";
}

// Terminate, Tick and Kill before the supervisor answers are sent once it does, SIGTERM
// first; a Kill is sent even when the handle was destroyed meanwhile.
TEST_F(ProcessRunnerTest, SignalsAskedForWhileTheSupervisorStartsAreSentOnceItAnswers) {
  {
    auto l = Shell("trap 'echo term; exit 9' TERM; echo ready; while :; do sleep 0.05; done");
    auto p = ContainerProcess::Start(l, clock_, nullptr, GatedSupervisor(dir_ / "gate1"));
    p->Terminate(seconds(30));
    EXPECT_FALSE(p->ready());
    std::ofstream(dir_ / "gate1") << "";
    auto e = p->WaitForExit(kRealTimeout);
    ASSERT_TRUE(e.has_value());
    // SIGTERM can arrive before the trap is set (the shell then dies of it) or after it.
    EXPECT_TRUE(e->exit_code == 9 || e->signal == SIGTERM) << e->exit_code << " " << e->signal;
  }
  {
    auto l = Shell("trap '' TERM; echo ready; while :; do sleep 0.05; done");
    auto p = ContainerProcess::Start(l, clock_, nullptr, GatedSupervisor(dir_ / "gate2"));
    p->Terminate(seconds(0));  // a grace of 0: SIGTERM and SIGKILL at once
    std::ofstream(dir_ / "gate2") << "";
    auto e = p->WaitForExit(kRealTimeout);
    ASSERT_TRUE(e.has_value());
    // SIGTERM can end it before its trap is set; else SIGKILL does.
    EXPECT_TRUE(e->signal == SIGKILL || e->signal == SIGTERM) << e->signal;
    EXPECT_TRUE(p->killed_at_deadline());
  }
  auto l = Shell("trap '' TERM; echo ready; while :; do sleep 0.05; done");
  {
    auto p = ContainerProcess::Start(l, clock_, nullptr, GatedSupervisor(dir_ / "gate3"));
    p->Kill();
    std::thread open([&] {
      std::this_thread::sleep_for(milliseconds(50));
      std::ofstream(dir_ / "gate3") << "";
    });
    p.reset();  // waits for the supervisor to answer, sends the kill, detaches
    open.join();
  }
  auto adopted = ContainerProcess::Adopt(l.run_dir, clock_, nullptr);
  ASSERT_NE(adopted, nullptr);
  auto e = adopted->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_FALSE(e->lost);
}

TEST_F(ProcessRunnerTest, ExitCodeAndLogsAreCaptured) {
  auto l = Shell("echo out; echo err >&2; pwd; exit 3");
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_EQ(e->signal, 0);
  EXPECT_TRUE(e->start_error.empty());
  EXPECT_EQ(e->started_at, clock_.Now());
  EXPECT_EQ(ReadFile(l.log_path), "out\nerr\n" + fs::canonical(dir_).string() + "\n");
  EXPECT_FALSE(ProcessGroupExists(Pgid()));
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

// Supervisors are forked by the process's launcher (agent/shim/launcher.h),
// and do not depend on it: its death ends no run, and the next start gets a
// new one.
TEST_F(ProcessRunnerTest, RunsForkedByTheLauncherOutliveIt) {
  auto l = Shell("trap 'exit 9' TERM; while :; do sleep 0.05; done");
  auto p = ContainerProcess::Start(l, clock_, nullptr);
  ASSERT_TRUE(p->WaitReady(kRealTimeout));
  ASSERT_TRUE(p->running());
  const pid_t launcher = shim::ShimLauncherPid(SupervisorOptions{}.command);
  ASSERT_NE(launcher, 0);
  ASSERT_EQ(kill(launcher, SIGKILL), 0);
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_TRUE(p->running());
  EXPECT_TRUE(ProcessGroupExists(Pgid()));
  p->Terminate(seconds(30));
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 9);
  EXPECT_FALSE(e->lost);
  auto next = ContainerProcess::Start(Shell("exit 0"), clock_, nullptr);
  e = next->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 0);
  EXPECT_EQ(e->start_error, "");
  EXPECT_NE(shim::ShimLauncherPid(SupervisorOptions{}.command), 0);
  EXPECT_NE(shim::ShimLauncherPid(SupervisorOptions{}.command), launcher);
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
  EXPECT_EQ(names.find("LD_BIND_NOW"), std::string::npos) << names;  // the supervisor's own
}

TEST_F(ProcessRunnerTest, SignalledProcessReportsSignalAndExitCode) {
  auto p = ContainerProcess::Start(Shell("kill -KILL $$"), clock_, nullptr);
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->exit_code, 137);
}

TEST_F(ProcessRunnerTest, SigtermTrappedExitsWithinGrace) {
  auto l = Shell(
      "trap 'echo bye > \"$DIR/terminated\"; exit 0' TERM; echo ready; "
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
  EXPECT_FALSE(ProcessGroupExists(Pgid()));
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
  EXPECT_TRUE(ProcessGroupExists(Pgid()));
  clock_.Advance(seconds(1));
  EXPECT_TRUE(p->Tick());
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_EQ(e->exit_code, 137);
  EXPECT_TRUE(p->killed_at_deadline());
  EXPECT_EQ(e->finished_at, FakeClock().Now() + seconds(30));
  EXPECT_FALSE(ProcessGroupExists(Pgid()));
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
  EXPECT_FALSE(ProcessGroupExists(Pgid()));
  pid_t child = std::stoi(ReadFile(dir_ / "child"));
  EXPECT_NE(kill(child, 0), 0);  // gone, not even a zombie
  // Nothing of the group is left to reap.
  EXPECT_EQ(waitpid(-Pgid(), nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST_F(ProcessRunnerTest, StartErrorsNameTheCause) {
  struct Case {
    std::vector<std::string> argv;
    std::string working_dir;  // "" = the test dir
    std::string message;
  } cases[] = {
      {{"berth-no-such-binary", "x"},
       "",
       "unable to start container process: exec: \"berth-no-such-binary\": executable file not found in $PATH"},
      {{"/no/such/berth-binary"},
       "",
       "unable to start container process: exec: \"/no/such/berth-binary\": stat /no/such/berth-binary: no "
       "such file or directory"},
      {{"./not-executable"}, "", "unable to start container process: exec: \"./not-executable\": permission denied"},
      {{}, "", "container \"c\" has no command: berth runs processes, not images, so command is required"},
      {{"/bin/true"},
       "/no/such/dir",
       "unable to start container process: chdir to cwd (\"/no/such/dir\") set in config.json failed: no such "
       "file or directory"},
  };
  std::ofstream(dir_ / "not-executable") << "data\n";
  for (const auto& c : cases) {
    auto l = Shell("");
    l.argv = c.argv;
    if (!c.working_dir.empty()) l.working_dir = c.working_dir;
    auto p = ContainerProcess::Start(l, clock_, nullptr);
    ASSERT_TRUE(p->WaitReady(kRealTimeout));
    auto e = p->exit();
    ASSERT_TRUE(e.has_value()) << c.message;
    EXPECT_EQ(e->exit_code, 128);
    EXPECT_EQ(e->start_error, c.message);
  }
}

TEST_F(ProcessRunnerTest, DestructionDetachesAndAdoptReattachesToTheLiveRun) {
  auto l = Shell("trap 'echo term; exit 9' TERM; echo ready; while :; do sleep 0.05; done");
  {
    auto p = ContainerProcess::Start(l, clock_, nullptr);
    ASSERT_TRUE(WaitForLog(l, "ready"));
  }
  // The handle is gone (as after an agent restart); the container is not.
  pid_t pgid = Pgid();
  EXPECT_TRUE(ProcessGroupExists(pgid));
  clock_.Advance(seconds(100));
  auto adopted = ContainerProcess::Adopt(l.run_dir, clock_, nullptr);
  EXPECT_TRUE(adopted->running());
  EXPECT_EQ(adopted->started_at(), FakeClock().Now());  // from the launch record
  adopted->Terminate(seconds(30));
  auto e = adopted->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 9);
  EXPECT_EQ(e->started_at, FakeClock().Now());
  EXPECT_EQ(e->finished_at, clock_.Now());  // seen as it happened
  EXPECT_TRUE(WaitForLog(l, "term"));
}

// A sandboxed run (agent/shim/sandbox.h; root only): SIGTERM reaches the main
// process through its init, a detached handle re-adopts it, and the process
// started with setsid is gone with it.
TEST_F(ProcessRunnerTest, ASandboxedRunIsSignalledThroughItsInitAndAdopted) {
  if (!shim::ProbeSandbox(fs::temp_directory_path().string()).ok()) GTEST_SKIP() << "needs root and namespaces";
  fs::create_directories(dir_ / "work");
  auto l = Shell("trap 'echo term; exit 9' TERM; setsid sleep 1077 & echo ready $$; while :; do sleep 0.05; done");
  l.working_dir = (dir_ / "work").string();
  l.sandbox.enabled = true;
  l.sandbox.rootfs_dir = l.run_dir + "/" + shim::kRootfsDir;
  l.sandbox.mounts = {{shim::SandboxMount::Kind::kBind, dir_.string(), dir_.string(), false, 0}};
  {
    auto p = ContainerProcess::Start(l, clock_, nullptr);
    ASSERT_TRUE(WaitForLog(l, "ready 2"));
  }
  EXPECT_NE(shim::SandboxInitAlive(l.run_dir), 0);
  auto adopted = ContainerProcess::Adopt(l.run_dir, clock_, nullptr);
  EXPECT_TRUE(adopted->running());
  adopted->Terminate(seconds(30));
  auto e = adopted->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 9);
  EXPECT_TRUE(WaitForLog(l, "term"));
  EXPECT_EQ(shim::testing::FindProcess("sleep 1077"), 0);
  EXPECT_EQ(shim::SandboxInitAlive(l.run_dir), 0);
}

TEST_F(ProcessRunnerTest, ARunThatEndedWhileNobodyWatchedKeepsItsRecordedExit) {
  auto l = Shell("read x; exit 4");  // waits for nothing: stdin is /dev/null, so it exits at once
  { auto p = ContainerProcess::Start(l, clock_, nullptr); }
  // Wait for the supervisor to record the exit and be gone, with no handle attached.
  for (int i = 0; i < 2000 && (!fs::exists(l.run_dir + "/exit.json") || fs::exists(l.run_dir + "/shim.sock")); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  RealClock real;
  auto adopted = ContainerProcess::Adopt(l.run_dir, real, nullptr);
  auto e = adopted->exit();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 4);
  EXPECT_FALSE(e->lost);
  StatusOr<shim::ExitRecord> record = shim::ReadExitRecord(l.run_dir);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(e->finished_at, record->finished_at);  // the supervisor's time, not the adopter's
  // With a clock behind the record (a FakeClock), the time is never in the clock's future.
  auto behind = ContainerProcess::Adopt(l.run_dir, clock_, nullptr);
  EXPECT_EQ(behind->exit()->finished_at, clock_.Now());
}

// A supervisor whose connection slots are all taken (its container can do
// that to its own socket) closes new connections at once: the run is still
// running, never lost, and the handle attaches once a slot frees.
TEST_F(ProcessRunnerTest, ASupervisorWithEveryConnectionTakenIsStillRunning) {
  auto l = Shell("echo ready; sleep 1000");
  { auto p = ContainerProcess::Start(l, clock_, nullptr); }
  ASSERT_TRUE(WaitForLog(l, "ready"));
  // Take every slot (16; the handle that started the run may still hold one
  // until the supervisor reads its end): connect until it refuses.
  std::vector<int> taken;
  for (int i = 0; i < 32; ++i) {
    StatusOr<int> c = shim::ConnectShim(l.run_dir);
    if (!c.ok()) break;
    taken.push_back(*c);
  }
  EXPECT_GE(taken.size(), 15u);
  EXPECT_LE(taken.size(), 16u);
  EXPECT_FALSE(shim::ConnectShim(l.run_dir).ok());
  auto adopted = ContainerProcess::Adopt(l.run_dir, clock_, nullptr);
  EXPECT_TRUE(adopted->running());
  EXPECT_FALSE(adopted->WaitForExit(milliseconds(700)).has_value()) << "declared over while its supervisor lives";
  for (int fd : taken) close(fd);
  std::this_thread::sleep_for(milliseconds(700));  // the watcher retries every 500 ms
  adopted->Kill();
  auto e = adopted->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->signal, SIGKILL);
  EXPECT_FALSE(e->lost);
}

// A cgroup directory in a launch record (which the container could rewrite)
// is used only when it has the agent's layout: <parent>/pod<uid>/<name>.
TEST_F(ProcessRunnerTest, ACgroupDirectoryOutsideTheAgentsParentIsNeverTouched) {
  const fs::path parent = dir_ / "cgroup-parent";
  fs::create_directories(parent);
  std::ofstream(parent / "cgroup.controllers") << "memory\n";
  Cgroups cgroups = Cgroups::AtDirectoryV2(parent.string());
  ASSERT_TRUE(cgroups.available());
  auto l = Shell("exit 0");
  { auto p = ContainerProcess::Start(l, clock_, nullptr)->WaitForExit(kRealTimeout); }
  for (const fs::path& victim : {dir_ / "victim", parent / "victim", parent / "podu1", parent / "podu1/../x"}) {
    fs::create_directories(victim);
    StatusOr<shim::LaunchRecord> record = shim::ReadLaunchRecord(l.run_dir);
    ASSERT_TRUE(record.ok());
    record->cgroup_dirs = {victim.string()};
    ASSERT_TRUE(shim::WriteLaunchRecord(l.run_dir, *record).ok());
    auto adopted = ContainerProcess::Adopt(l.run_dir, clock_, &cgroups);
    ASSERT_TRUE(adopted->exit().has_value());
    EXPECT_TRUE(fs::exists(victim)) << victim;
  }
  // The agent's own layout is removed once the run is over.
  const fs::path own = parent / "podu1/c-0";
  fs::create_directories(own);
  StatusOr<shim::LaunchRecord> record = shim::ReadLaunchRecord(l.run_dir);
  record->cgroup_dirs = {own.string()};
  ASSERT_TRUE(shim::WriteLaunchRecord(l.run_dir, *record).ok());
  auto adopted = ContainerProcess::Adopt(l.run_dir, clock_, &cgroups);
  ASSERT_TRUE(adopted->exit().has_value());
  EXPECT_FALSE(fs::exists(own));
}

// Whatever is left of a run whose supervisor is gone, the run is reported
// lost with what was found, never as a made-up exit and never by crashing.
TEST_F(ProcessRunnerTest, ARunWithoutAReadableExitRecordIsLostWithTheReason) {
  auto l = Shell("exit 0");
  { auto p = ContainerProcess::Start(l, clock_, nullptr)->WaitForExit(kRealTimeout); }
  struct Case {
    std::string exit_json;  // "" = no file
    std::string detail;
  } cases[] = {
      {"", "its supervisor is gone and recorded no exit status"},
      {R"({"version":1,"exitCode":0,"sig)",
       "its exit status is unreadable: " + l.run_dir + "/exit.json is not valid JSON"},
      {R"({"version":1,"exitCode":-5,"signal":0,"startError":"","startedAt":0,"finishedAt":0})",
       "field \"exitCode\" must be an integer in [0, 255]"},
  };
  for (const Case& c : cases) {
    fs::remove(l.run_dir + "/exit.json");
    if (!c.exit_json.empty()) std::ofstream(l.run_dir + "/exit.json") << c.exit_json;
    auto adopted = ContainerProcess::Adopt(l.run_dir, clock_, nullptr);
    auto e = adopted->exit();
    ASSERT_TRUE(e.has_value());
    EXPECT_TRUE(e->lost);
    EXPECT_EQ(e->exit_code, 137);
    EXPECT_NE(e->lost_detail.find(c.detail), std::string::npos) << e->lost_detail;
  }
  // The verdict is kept: a later adoption reports the same end.
  fs::remove(l.run_dir + "/exit.json");
  auto first = ContainerProcess::Adopt(l.run_dir, clock_, nullptr)->exit();
  clock_.Advance(seconds(30));
  auto again = ContainerProcess::Adopt(l.run_dir, clock_, nullptr)->exit();
  ASSERT_TRUE(first.has_value() && again.has_value());
  EXPECT_TRUE(again->lost);
  EXPECT_EQ(again->finished_at, first->finished_at);
  EXPECT_EQ(again->lost_detail, first->lost_detail);
  // Without a launch record (the agent writes it before anything starts) and
  // without a live supervisor, a directory is no run at all.
  fs::remove(l.run_dir + "/launch.json");
  EXPECT_EQ(ContainerProcess::Adopt(l.run_dir, clock_, nullptr), nullptr);
}

}  // namespace
}  // namespace berth::agent
