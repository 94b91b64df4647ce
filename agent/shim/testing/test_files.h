// Files for the agent's tests, which run real processes and write real
// cgroup-like trees: a scratch directory per test and whole-file reads.
// Header-only; test code only (it asks GoogleTest for the running test).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace berth::agent::shim::testing {

// <tmp>/berth-<what>-<pid>-<running test's name>, removed if an earlier run
// left it (the caller creates it as it needs). The pid and test name keep
// tests, and test binaries running at once, apart.
inline std::filesystem::path FreshTestDirectory(std::string_view what) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("berth-" + std::string(what) + "-" + std::to_string(::getpid()) + "-" +
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

}  // namespace berth::agent::shim::testing
