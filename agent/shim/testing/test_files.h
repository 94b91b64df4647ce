// Files for the agent's tests, which run real processes and write real
// cgroup-like trees: a scratch directory per test and whole-file reads.
// Header-only; test code only (it asks GoogleTest for the running test).
#pragma once

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <string_view>
#include <unistd.h>

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

}  // namespace berth::agent::shim::testing
