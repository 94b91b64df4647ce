// Files and processes for the agent's tests, which run real processes and
// write real cgroup-like trees: a scratch directory per test, whole-file
// reads, /proc fields, and the launch record of a shell-script run and its
// exit record.
// Header-only; test code only (it asks GoogleTest for the running test).
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unistd.h>

#include "agent/shim/container_log.h"
#include "agent/shim/run_record.h"
#include "core/clock.h"

namespace berth::agent::shim::testing {

// <tmp>/berth-<what>-<pid>-<running test's name>, removed if an earlier run
// left it (the caller creates it as it needs). The pid and test name keep
// tests, and test binaries running at once, apart.
inline std::filesystem::path FreshTestDirectory(std::string_view what) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("berth-" + std::string(what) + "-" + std::to_string(::getpid()) + "-" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir;
}

// The whole content of the file at `path` ("" when it cannot be read).
inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The pid of a process whose command line (arguments joined by spaces)
// contains `text`, or 0.
inline pid_t FindProcess(std::string_view text) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = ReadFile(e.path() / "cmdline");
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    if (cmdline.find(text) != std::string::npos) return static_cast<pid_t>(std::stoi(name));
  }
  return 0;
}

// Waits (real time, up to 10 s) until no supervisor of a run under `dir` is
// left, then removes `dir`: supervisors a test ended may still be writing
// their records.
inline void RemoveWhenSupervisorsAreGone(const std::filesystem::path& dir) {
  for (int i = 0; i < 1000 && FindProcess("shim " + dir.string() + "/") != 0; ++i) {
    ::usleep(10000);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

// Field `n` (1-based) of /proc/<pid>/stat, or "" when the process is gone.
inline std::string StatField(pid_t pid, int n) {
  std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= n && (rest >> field); ++i) {
  }
  return field;
}

// Whether `pid` is a live process (not gone, not a zombie).
inline bool Alive(pid_t pid) {
  std::string state = StatField(pid, 3);
  return !state.empty() && state != "Z";
}

// Writes the launch record of run `run` of container "c" running `/bin/sh -c
// script` (env PATH and DIR=`dir`, working directory `dir`/work) under the pod
// directory `base` (default: `dir`); returns the run directory.
inline std::string WriteShellLaunch(const std::string& dir, const std::string& script, int run = 0,
                                    const std::string& base = "", LogRotation rotation = {}) {
  LaunchRecord l;
  l.container = "c";
  l.run = run;
  l.argv = {"/bin/sh", "-c", script};
  l.env = {"PATH=/usr/bin:/bin", "DIR=" + dir};
  l.working_dir = dir + "/work";
  const std::string pod = base.empty() ? dir : base;
  l.log_path = ContainerLogPath(pod, "c", run);
  l.started_at = RealClock::Get().Now();
  l.log_rotation = rotation;
  const std::string run_dir = RunDir(pod, "c", run);
  EXPECT_TRUE(WriteLaunchRecord(run_dir, l).ok());
  return run_dir;
}

// Waits (real time, up to 20 s) until the run's exit.json exists, and reads it.
inline StatusOr<ExitRecord> WaitForExit(const std::string& run_dir) {
  for (int i = 0; i < 2000; ++i) {
    if (std::filesystem::exists(run_dir + "/exit.json")) return ReadExitRecord(run_dir);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return InternalError("no exit.json");
}

}  // namespace berth::agent::shim::testing
