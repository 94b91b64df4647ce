#include "agent/shim/shim.h"

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <signal.h>
#include <sstream>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "agent/shim/container_log.h"
#include "agent/shim/run_record.h"
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

class ShimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::FreshTestDirectory("shim").string();
    fs::create_directories(dir_ + "/work");
  }
  void TearDown() override {
    // A test that failed half-way must not leave containers behind.
    for (const auto& [n, run] : ListRuns(dir_, "c")) {
      if (StatusOr<int> c = ConnectShim(run); c.ok()) {
        SendSignal(*c, SIGKILL);
        close(*c);
      }
    }
    testing::RemoveWhenSupervisorsAreGone(dir_);
  }

  // Writes the launch record of run `run` of container "c" running `script`.
  std::string Launch(const std::string& script, int run = 0, const std::string& base = "", LogRotation rotation = {}) {
    return testing::WriteShellLaunch(dir_, script, run, base, rotation);
  }
  bool WaitForFile(const std::string& path) {
    for (int i = 0; i < 2000; ++i) {
      if (!ReadFile(path).empty()) return true;
      std::this_thread::sleep_for(milliseconds(10));
    }
    return false;
  }

  std::string dir_;
};

TEST_F(ShimTest, RecordsTheExitAndTheLogOfItsContainerAndRemovesItsSocket) {
  std::string run = Launch("echo out; echo err >&2; exit 3");
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->exit_code, 3);
  EXPECT_EQ(exit->signal, 0);
  EXPECT_EQ(exit->start_error, "");
  EXPECT_GE(exit->finished_at, exit->started_at);
  EXPECT_EQ(ReadFile(ContainerLogPath(dir_, "c", 0)), "out\nerr\n");
  for (int i = 0; i < 200 && fs::exists(run + "/shim.sock"); ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_FALSE(fs::exists(run + "/shim.sock"));
  EXPECT_EQ(ConnectShim(run).status().code(), Code::kUnavailable);
}

// The container joins each cgroup the record names through the file that moves it
// alone without the kernel's global lock: `tasks` where the directory has one
// (cgroup v1), else cgroup.procs (v2); "0" is itself. Fake directories: the files
// written are the check.
TEST_F(ShimTest, TheContainerJoinsThroughTasksOnCgroupV1AndCgroupProcsOnV2) {
  const std::string v1 = dir_ + "/cg-v1", v2 = dir_ + "/cg-v2";
  fs::create_directories(v1);
  fs::create_directories(v2);
  std::ofstream(v1 + "/" + kCgroupV1TasksFile) << "";
  std::string run = Launch("exit 0");
  StatusOr<LaunchRecord> launch = ReadLaunchRecord(run);
  ASSERT_TRUE(launch.ok()) << launch.status();
  launch->cgroup_dirs = {v1, v2};
  ASSERT_TRUE(WriteLaunchRecord(run, *launch).ok());
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->start_error, "");
  EXPECT_EQ(ReadFile(v1 + "/tasks"), "0");
  EXPECT_FALSE(fs::exists(v1 + "/cgroup.procs"));
  EXPECT_EQ(ReadFile(v2 + "/cgroup.procs"), "0");
  EXPECT_FALSE(fs::exists(v2 + "/tasks"));
}

// On a real cgroup2 hierarchy (mounted here for the test: root only) the container's first
// process is cloned straight into the run's cgroup, and it and what it forks are there;
// a plain directory is no cgroup2 and gets no descriptor.
TEST_F(ShimTest, OnCgroupV2TheContainerIsClonedIntoItsCgroup) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount cgroup2";
  const std::string mnt = dir_ + "/cg2";
  fs::create_directories(mnt);
  if (mount("none", mnt.c_str(), "cgroup2", 0, nullptr) != 0) GTEST_SKIP() << "cannot mount cgroup2 here";
  const std::string name = "berth-shim-test-" + std::to_string(getpid());
  const std::string cg = mnt + "/" + name;
  fs::create_directories(cg);
  EXPECT_EQ(OpenCgroupV2Directory({dir_ + "/work"}), -1);
  EXPECT_EQ(OpenCgroupV2Directory({cg, cg}), -1);
  const int fd = OpenCgroupV2Directory({cg});
  EXPECT_GE(fd, 0);
  if (fd >= 0) close(fd);

  std::string run = Launch("cat /proc/self/cgroup > $DIR/work/cgroup.txt");
  StatusOr<LaunchRecord> launch = ReadLaunchRecord(run);
  ASSERT_TRUE(launch.ok()) << launch.status();
  launch->cgroup_dirs = {cg};
  ASSERT_TRUE(WriteLaunchRecord(run, *launch).ok());
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->start_error, "");
  EXPECT_EQ(exit->exit_code, 0);
  // The cgroup2 line of /proc/<cat>/cgroup: "0::/<name>" (the mount shows the hierarchy's root).
  EXPECT_NE(ReadFile(dir_ + "/work/cgroup.txt").find("0::/" + name + "\n"), std::string::npos)
      << ReadFile(dir_ + "/work/cgroup.txt");
  for (int i = 0; i < 200 && rmdir(cg.c_str()) != 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(umount2(mnt.c_str(), MNT_DETACH), 0);
}

// A run the agent took back (`released` created by ClaimUnreleasedRun before the supervisor
// got there) never runs its program: the supervisor records a start error instead.
TEST_F(ShimTest, ARunTakenBackByTheAgentNeverRunsItsProgram) {
  std::string run = Launch("touch $DIR/work/ran");
  EXPECT_TRUE(ClaimUnreleasedRun(run));
  EXPECT_FALSE(ClaimUnreleasedRun(run));  // once taken, or once released, it is not unreleased
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->start_error,
            "unable to start container process: the node agent took the run back before its program started");
  EXPECT_FALSE(fs::exists(dir_ + "/work/ran"));

  // A run that started is released and cannot be taken back.
  std::string started = Launch("exit 0", 1);
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), started, kReady).ok());
  ASSERT_TRUE(WaitForExit(started).ok());
  EXPECT_TRUE(fs::exists(started + "/" + kReleasedFile));
  EXPECT_FALSE(ClaimUnreleasedRun(started));
}

// The supervisor rotates its container's log by itself: no agent, nor any handle, exists here.
TEST_F(ShimTest, RotatesTheLogAsTheLaunchRecordSaysWithNoAgent) {
  std::string run = Launch("i=0; while [ $i -lt 2000 ]; do echo \"line $i\"; i=$((i+1)); done", 0, "", {2000, 3});
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_ + "/logs/c")) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".ts")) continue;
    ++files;
    EXPECT_TRUE(name == "0.log" || name.starts_with("0.log.")) << name;
    EXPECT_LE(fs::file_size(e.path()) + fs::file_size(e.path().string() + ".ts"), 2000u + 64) << name;
  }
  EXPECT_EQ(files, 3);
  StatusOr<LogChunk> log = ReadContainerLog(ContainerLogPath(dir_, "c", 0), {});
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE(log->text.ends_with("line 1998\nline 1999\n")) << log->text;
  EXPECT_LT(log->text.size(), 6000u);
}

TEST_F(ShimTest, IsNotTheStartersChildAndHasItsOwnSession) {
  std::string run = Launch("echo $PPID > \"$DIR/shim\"; echo $$ > \"$DIR/pid\"; exec sleep 1000");
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  ASSERT_TRUE(WaitForFile(dir_ + "/shim"));
  pid_t shim = std::stoi(ReadFile(dir_ + "/shim"));
  EXPECT_NE(StatField(shim, 4), std::to_string(getpid()));  // parent: init or a subreaper, not us
  EXPECT_NE(StatField(shim, 6), StatField(getpid(), 6));    // session
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);             // nothing of ours to reap
  // A stop signal meant for the server leaves the supervisor and its container alone.
  ASSERT_EQ(kill(shim, SIGTERM), 0);
  ASSERT_EQ(kill(shim, SIGINT), 0);
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_TRUE(Alive(shim));
  EXPECT_TRUE(Alive(std::stoi(ReadFile(dir_ + "/pid"))));
}

TEST_F(ShimTest, SignalsReachTheWholeGroupOnlyThroughTheSocket) {
  std::string run = Launch("trap 'echo term; exit 7' TERM; echo ready; while :; do sleep 0.05; done");
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  ASSERT_TRUE(WaitForFile(ContainerLogPath(dir_, "c", 0)));
  StatusOr<int> c = ConnectShim(run);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // Lines that are not the protocol are ignored.
  ASSERT_EQ(write(*c, "hello\nsignal 999\nsignal x\n", 26), 26);
  std::this_thread::sleep_for(milliseconds(100));
  EXPECT_FALSE(fs::exists(run + "/exit.json"));
  EXPECT_TRUE(SendSignal(*c, SIGTERM));
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 7);
  // The supervisor closes the connection when it is done: end of file.
  char byte;
  EXPECT_EQ(read(*c, &byte, 1), 0);
  close(*c);
  EXPECT_NE(ReadFile(ContainerLogPath(dir_, "c", 0)).find("term"), std::string::npos);
}

TEST_F(ShimTest, KilledSupervisorTakesItsContainerAndLeavesNoExitRecord) {
  std::string run = Launch("echo $PPID > \"$DIR/shim\"; echo $$ > \"$DIR/pid\"; exec sleep 1000");
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  ASSERT_TRUE(WaitForFile(dir_ + "/pid"));
  pid_t shim = std::stoi(ReadFile(dir_ + "/shim"));
  pid_t container = std::stoi(ReadFile(dir_ + "/pid"));
  ASSERT_EQ(kill(shim, SIGKILL), 0);
  for (int i = 0; i < 500 && Alive(container); ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_FALSE(Alive(container));
  EXPECT_FALSE(fs::exists(run + "/exit.json"));
  // Its socket file stays behind, and names nobody.
  EXPECT_TRUE(fs::exists(run + "/shim.sock"));
  EXPECT_EQ(ConnectShim(run).status().code(), Code::kUnavailable);
}

TEST_F(ShimTest, ExitOfTheMainProcessEndsBackgroundChildrenAndOrphans) {
  std::string run = Launch("sleep 1000 & (sleep 1000 & echo $! > \"$DIR/orphan\") ; echo $! > \"$DIR/child\"; exit 5");
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 5);
  for (const char* f : {"child", "orphan"}) {
    pid_t pid = std::stoi(ReadFile(dir_ + "/" + f));
    EXPECT_FALSE(Alive(pid)) << f;
    EXPECT_EQ(StatField(pid, 3), "") << f << " left a zombie";
  }
}

// A container's first process goes on past the gate only on the supervisor's byte; a gate
// closed without one (the launch record could not be made durable) or a supervisor that
// died ends it with 127 before the program runs.
TEST_F(ShimTest, TheGateLetsTheChildGoOnlyOnItsByte) {
  for (bool open_it : {true, false}) {
    int gate[2];
    ASSERT_EQ(pipe2(gate, O_CLOEXEC), 0);
    const pid_t pid = fork();
    if (pid == 0) {
      close(gate[1]);
      PassGateOrExit(gate[0]);
      _exit(42);  // the program would run here
    }
    close(gate[0]);
    if (open_it) ASSERT_EQ(write(gate[1], "G", 1), 1);
    close(gate[1]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), open_it ? 42 : 127);
  }
}

TEST_F(ShimTest, StartErrorsAreExitRecordsInRuncsWording) {
  struct Case {
    std::vector<std::string> argv;
    std::string message;
  } cases[] = {
      {{"berth-no-such-binary"},
       "unable to start container process: exec: \"berth-no-such-binary\": executable file not found in $PATH"},
      {{"/no/such/berth-binary"},
       "unable to start container process: exec: \"/no/such/berth-binary\": stat /no/such/berth-binary: no such "
       "file or directory"},
      {{}, "container \"c\" has no command: berth runs processes, not images, so command is required"},
  };
  int n = 0;
  for (const Case& c : cases) {
    std::string run = Launch("", n);
    LaunchRecord l = *ReadLaunchRecord(run);
    l.argv = c.argv;
    ASSERT_TRUE(WriteLaunchRecord(run, l).ok());
    ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
    // The record is written before the supervisor reports ready.
    StatusOr<ExitRecord> exit = ReadExitRecord(run);
    ASSERT_TRUE(exit.ok()) << c.message;
    EXPECT_EQ(exit->exit_code, 128);
    EXPECT_EQ(exit->start_error, c.message);
    ++n;
  }
}

TEST_F(ShimTest, AnUnreadableLaunchRecordIsAStartErrorNotACrash) {
  const std::string run = RunDir(dir_, "c", 0);
  fs::create_directories(run);
  std::ofstream(run + "/launch.json") << R"({"version":1,"container":"c","argv":"not a list"})";
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  StatusOr<ExitRecord> exit = ReadExitRecord(run);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 128);
  EXPECT_NE(exit->start_error.find("launch.json"), std::string::npos) << exit->start_error;
}

TEST_F(ShimTest, RunDirectoriesLongerThanASocketPathWork) {
  const std::string pod = dir_ + "/" + std::string(120, 'p');
  std::string run = Launch("echo ready; sleep 1000", 0, pod);
  ASSERT_GT(run.size() + 10, sizeof(sockaddr_un::sun_path));
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), run, kReady).ok());
  StatusOr<int> c = ConnectShim(run);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(SendSignal(*c, SIGKILL));
  StatusOr<ExitRecord> exit = WaitForExit(run);
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->exit_code, 137);
  EXPECT_EQ(exit->signal, SIGKILL);
  close(*c);
}

// A socket file moved or linked from another run answers with that run's
// hello: the client refuses it, and the run's own supervisor stays reachable
// by its verified process.
TEST_F(ShimTest, ASocketOfAnotherRunIsRefusedAndTheSupervisorIsVerifiedByItsProcess) {
  // exec: run a's supervisor is SIGKILLed below, and PDEATHSIG reaches only the main
  // process; a child of a shell would outlive the test.
  std::string a = Launch("exec sleep 1000", 0);
  std::string b = Launch("exec sleep 1000", 1);
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), a, kReady).ok());
  ASSERT_TRUE(SpawnShim(testing::SupervisorCommand(), b, kReady).ok());
  fs::remove(a + "/shim.sock");
  fs::create_symlink(b + "/shim.sock", a + "/shim.sock");
  StatusOr<int> c = ConnectShim(a);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Code::kUnavailable);
  EXPECT_EQ(c.status().message(), "the socket at " + a + " is not this run's supervisor");
  EXPECT_NE(SupervisorAlive(a), 0);
  EXPECT_NE(SupervisorAlive(a), SupervisorAlive(b));
  // A forged record naming another process (here: this test) is not a supervisor.
  std::ofstream(b + "/shim.pid", std::ios::trunc) << getpid() << " 1\n";
  EXPECT_EQ(SupervisorAlive(b), 0);
  EXPECT_FALSE(KillSupervisor(b));
  EXPECT_TRUE(KillSupervisor(a));
  for (int i = 0; i < 500 && SupervisorAlive(a) != 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(SupervisorAlive(a), 0);
  StatusOr<int> cb = ConnectShim(b);
  ASSERT_TRUE(cb.ok());
  SendSignal(*cb, SIGKILL);
  close(*cb);
}

TEST_F(ShimTest, ASupervisorThatNeverStartsIsReported) {
  std::string run = Launch("true");
  Status s = SpawnShim({"/bin/false"}, run, kReady);
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("exited before it was ready"), std::string::npos) << s.message();
  s = SpawnShim({"/bin/sh", "-c", "sleep 5", "sh"}, run, milliseconds(200));
  EXPECT_NE(s.message().find("was not ready within"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace berth::agent::shim
