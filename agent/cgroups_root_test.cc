// Real cgroups with real processes (root only): the limits a run gets from
// agent/cgroups.h hold on this machine's kernel, whichever cgroup version it has.
#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "agent/cgroups.h"
#include "agent/process_runner.h"
#include "agent/shim/shim_client.h"
#include "agent/shim/testing/test_files.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

constexpr milliseconds kRealTimeout{30000};  // only a bound on hangs

class RealCgroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    cgroups_ = Cgroups::Detect();
    for (const char* c : {"cpu", "memory", "pids"}) {
      if (!cgroups_->Enforces(c)) GTEST_SKIP() << "cgroups not writable here: " << cgroups_->reason();
    }
    dir_ = shim::testing::FreshTestDirectory("real-cgroups");
    fs::create_directories(dir_);
    uid_ = "test" + std::to_string(getpid()) + "-" + std::to_string(++counter_);
  }
  void TearDown() override {
    if (!cgroups_) return;
    for (const auto& [n, run] : shim::ListRuns(dir_.string(), "c")) shim::KillSupervisor(run);
    shim::testing::RemoveWhenSupervisorsAreGone(dir_);
    cgroups_->RemovePod(uid_);  // the berth parent stays, as for an agent (others may use it)
  }

  ContainerLaunch Shell(const std::string& script, CgroupLimits limits) {
    ContainerLaunch l;
    l.name = "c";
    l.argv = {"/bin/sh", "-c", script};
    l.env = {{"PATH", "/usr/bin:/bin"}};
    l.working_dir = dir_.string();
    l.run = next_run_++;
    l.run_dir = shim::RunDir(dir_.string(), "c", l.run);
    l.log_path = shim::ContainerLogPath(dir_.string(), "c", l.run);
    l.pod_uid = uid_;
    l.cgroup_name = "c-" + std::to_string(l.run);
    l.limits = limits;
    return l;
  }
  static bool AllGone(const std::vector<std::string>& dirs) {
    return std::none_of(dirs.begin(), dirs.end(), [](const std::string& d) { return fs::exists(d); });
  }

  static inline int counter_ = 0;
  std::optional<Cgroups> cgroups_;
  fs::path dir_;
  std::string uid_;
  FakeClock clock_;
  int next_run_ = 0;
};

TEST_F(RealCgroupsTest, ABusyLoopLimitedTo500mUsesHalfACpu) {
  ASSERT_TRUE(cgroups_->CreatePod(uid_, {}).ok());
  CgroupLimits limits;
  limits.cpu_limit_milli = 500;
  limits.cpu_request_milli = 500;
  auto p = ContainerProcess::Start(Shell("while :; do :; done", limits), clock_, &*cgroups_);
  ASSERT_TRUE(p->WaitReady(kRealTimeout));
  ASSERT_TRUE(p->running());
  const std::vector<std::string> dirs = p->cgroup_dirs();
  ASSERT_FALSE(dirs.empty());
  std::this_thread::sleep_for(milliseconds(300));
  // The quota bounds every window; a window below 0.35 can only be a machine
  // busy with other work, so up to three windows of 3 s are measured.
  double best = 0;
  for (int window = 0; window < 3 && best < 0.35; ++window) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::optional<int64_t> u0 = cgroups_->CpuUsageMicros(dirs);
    std::this_thread::sleep_for(milliseconds(3000));
    const std::optional<int64_t> u1 = cgroups_->CpuUsageMicros(dirs);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(u0 && u1);
    const double cpus = static_cast<double>(*u1 - *u0) / 1e6 / seconds;
    std::cerr << "busy loop at limits.cpu 500m used " << cpus << " CPU\n";
    EXPECT_LE(cpus, 0.65);
    best = std::max(best, cpus);
  }
  EXPECT_GE(best, 0.35);
  p->Kill();
  ASSERT_TRUE(p->WaitForExit(kRealTimeout).has_value());
  EXPECT_TRUE(AllGone(dirs));
}

// The container's process and what it forks are in the run's cgroup of every
// hierarchy (on cgroup v1 it moved itself alone, through `tasks`: shim.h
// OpenCgroupProcs), as /proc/<pid>/cgroup of a grandchild shows.
TEST_F(RealCgroupsTest, TheRunsProcessesAreInItsCgroupInEveryHierarchy) {
  ASSERT_TRUE(cgroups_->CreatePod(uid_, {}).ok());
  const fs::path out = dir_ / "cgroup.txt";
  auto p = ContainerProcess::Start(Shell("cat /proc/self/cgroup > " + out.string() + ".tmp && mv " + out.string() +
                                             ".tmp " + out.string() + "; sleep 30",
                                         {}),
                                   clock_, &*cgroups_);
  ASSERT_TRUE(p->WaitReady(kRealTimeout));
  const std::vector<std::string> dirs = p->cgroup_dirs();
  ASSERT_FALSE(dirs.empty());
  for (int i = 0; i < 3000 && !fs::exists(out); ++i) std::this_thread::sleep_for(milliseconds(10));
  const std::string text = shim::testing::ReadFile(out.string());
  ASSERT_FALSE(text.empty());
  // Each directory is <mount><path>; some line "<id>:<controllers>:<path>" names its path.
  for (const std::string& dir : dirs) {
    bool found = false;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      const std::string path = line.substr(line.find(':', line.find(':') + 1) + 1);
      if (path.size() > 1 && dir.size() > path.size() && dir.ends_with(path)) found = true;
    }
    EXPECT_TRUE(found) << dir << " is not in\n" << text;
  }
  p->Kill();
  ASSERT_TRUE(p->WaitForExit(kRealTimeout).has_value());
  EXPECT_TRUE(AllGone(dirs));
}

TEST_F(RealCgroupsTest, AForkBombIsContainedByThePodsPidsLimitAndEndsWithTheRun) {
  ASSERT_TRUE(cgroups_->CreatePod(uid_, {std::nullopt, 0, std::nullopt, 64}).ok());
  const std::vector<std::string> pod = cgroups_->PodDirs(uid_);
  // A bomb whose processes fork forever (dash's `f | f &` bomb dies out at the limit before it
  // is sampled), and a background process that leaves the process group.
  auto p = ContainerProcess::Start(
      Shell("setsid sleep 600 & exec bash -c 'f() { while :; do f & done; }; f' 2>/dev/null", {}), clock_, &*cgroups_);
  ASSERT_TRUE(p->WaitReady(kRealTimeout));
  ASSERT_TRUE(p->running());
  const std::vector<std::string> dirs = p->cgroup_dirs();
  int64_t peak = 0;
  for (int i = 0; i < 30; ++i) {
    std::this_thread::sleep_for(milliseconds(100));
    peak = std::max(peak, cgroups_->PidsCurrent(pod).value_or(0));
  }
  EXPECT_GE(peak, 32) << "the bomb did not run";
  EXPECT_LE(peak, 64);
  // The node still forks freely.
  for (int i = 0; i < 20; ++i) {
    pid_t child = fork();
    ASSERT_GE(child, 0) << "fork failed outside the pod";
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);
  }
  p->Kill();
  ASSERT_TRUE(p->WaitForExit(kRealTimeout).has_value());
  EXPECT_TRUE(AllGone(dirs));
  // Killed processes stay counted until their reaper (init, for orphans) reaps them.
  for (int i = 0; i < 200 && cgroups_->PidsCurrent(pod).value_or(-1) != 0; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(cgroups_->PidsCurrent(pod).value_or(-1), 0);
  cgroups_->RemovePod(uid_);
  EXPECT_TRUE(AllGone(pod));
}

TEST_F(RealCgroupsTest, ARunOverItsMemoryLimitIsOomKilled) {
  ASSERT_TRUE(cgroups_->CreatePod(uid_, {std::nullopt, 0, 64 << 20, std::nullopt}).ok());
  CgroupLimits limits;
  limits.memory_limit_bytes = 32 << 20;
  // tail keeps the whole (newline-free) line in memory.
  auto p =
      ContainerProcess::Start(Shell("head -c 268435456 /dev/zero | tail -n 1 >/dev/null", limits), clock_, &*cgroups_);
  const std::vector<std::string> dirs = p->cgroup_dirs();
  ASSERT_FALSE(dirs.empty());
  auto e = p->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->oom_killed);
  EXPECT_NE(e->exit_code, 0);
  EXPECT_TRUE(AllGone(dirs));
  // A run within its limit is not.
  auto ok =
      ContainerProcess::Start(Shell("head -c 1048576 /dev/zero | tail -n 1 >/dev/null", limits), clock_, &*cgroups_);
  auto e2 = ok->WaitForExit(kRealTimeout);
  ASSERT_TRUE(e2.has_value());
  EXPECT_FALSE(e2->oom_killed);
  EXPECT_EQ(e2->exit_code, 0);
}

}  // namespace
}  // namespace berth::agent
