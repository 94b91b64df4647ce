#include "agent/memory_cgroup.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "agent/shim/testing/test_files.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;
using shim::testing::ReadFile;

void Write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

class MemoryCgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = shim::testing::FreshTestDirectory("cgroup-test");
    fs::create_directories(root_ / "mnt");
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(MemoryCgroupTest, DetectsDelegatedUnifiedHierarchyAndEnablesMemory) {
  Write(root_ / "mnt/cgroup.controllers", "cpuset cpu io memory pids\n");
  Write(root_ / "mnt/agent.slice/cgroup.subtree_control", "");
  Write(root_ / "self", "0::/agent.slice\n");
  auto cg = MemoryCgroups::Detect((root_ / "mnt").string(), std::nullopt, (root_ / "self").string());
  ASSERT_TRUE(cg.available()) << cg.reason();
  EXPECT_EQ(cg.parent_dir(), (root_ / "mnt/agent.slice").string());
  EXPECT_EQ(ReadFile(root_ / "mnt/agent.slice/cgroup.subtree_control"), "+memory");

  auto dir = cg.Create("u1-main-0", 64 << 20);
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_EQ(*dir, (root_ / "mnt/agent.slice/berth-u1-main-0").string());
  EXPECT_EQ(ReadFile(fs::path(*dir) / "memory.max"), "67108864");

  EXPECT_FALSE(cg.OomKilled(*dir));  // no memory.events yet
  Write(fs::path(*dir) / "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n");
  EXPECT_FALSE(cg.OomKilled(*dir));
  Write(fs::path(*dir) / "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n");
  EXPECT_TRUE(cg.OomKilled(*dir));
}

TEST_F(MemoryCgroupTest, ReportsWhyLimitsAreUnavailable) {
  auto v1 = MemoryCgroups::Detect((root_ / "mnt").string(), "/", (root_ / "self").string());
  EXPECT_FALSE(v1.available());
  EXPECT_NE(v1.reason().find("no cgroup v2 unified hierarchy"), std::string::npos) << v1.reason();
  EXPECT_EQ(v1.Create("x", 1).status().code(), Code::kUnavailable);

  Write(root_ / "mnt/cgroup.controllers", "cpu pids\n");
  auto no_memory = MemoryCgroups::Detect((root_ / "mnt").string(), "/", (root_ / "self").string());
  EXPECT_FALSE(no_memory.available());
  EXPECT_NE(no_memory.reason().find("memory controller is not available"), std::string::npos);
}

}  // namespace
}  // namespace berth::agent
