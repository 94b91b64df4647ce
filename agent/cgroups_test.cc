#include "agent/cgroups.h"

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

class CgroupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = shim::testing::FreshTestDirectory("cgroups-test");
    fs::create_directories(root_ / "mnt");
  }
  void TearDown() override { fs::remove_all(root_); }

  // A delegated cgroup v2 tree: the agent in /agent.slice, its berth parent
  // with every controller (and swap accounting, cgroup.kill).
  Cgroups FakeV2() {
    Write(root_ / "mnt/cgroup.controllers", "cpuset cpu io memory pids\n");
    Write(root_ / "mnt/agent.slice/cgroup.subtree_control", "");
    Write(root_ / "mnt/agent.slice/berth/cgroup.controllers", "cpu memory pids\n");
    Write(root_ / "mnt/agent.slice/berth/memory.swap.max", "max\n");
    Write(root_ / "self", "0::/agent.slice\n");
    return Cgroups::Detect({(root_ / "mnt").string(), (root_ / "self").string(), std::nullopt});
  }
  // A cgroup v1 host as this machine kind: one hierarchy per controller, the
  // agent's memory cgroup nested, swap accounting on.
  Cgroups FakeV1(bool with_pids = true) {
    std::string self = "0::/\n1:cpu:/\n2:cpuacct:/\n4:memory:/session/7\n";
    for (const char* c : {"cpu", "cpuacct", "memory", "pids"}) Write(root_ / "mnt" / c / "cgroup.procs", "");
    Write(root_ / "mnt/cpu/berth/cpu.shares", "1024\n");
    Write(root_ / "mnt/cpuacct/berth/cpuacct.usage", "0\n");
    Write(root_ / "mnt/memory/session/7/berth/memory.limit_in_bytes", "9223372036854771712\n");
    Write(root_ / "mnt/memory/session/7/berth/memory.memsw.limit_in_bytes", "9223372036854771712\n");
    if (with_pids) {
      self += "8:pids:/\n";
      Write(root_ / "mnt/pids/berth/pids.max", "max\n");
    }
    Write(root_ / "self", self);
    return Cgroups::Detect({(root_ / "mnt").string(), (root_ / "self").string(), std::nullopt});
  }
  fs::path V1(const std::string& controller, const std::string& rest) {
    return root_ / "mnt" / controller / (controller == "memory" ? "session/7/berth" : "berth") / rest;
  }

  fs::path root_;
};

TEST(CgroupConversionsTest, FollowTheKubelet) {
  // MilliCPUToShares: 0 and tiny requests are the minimum, 2.
  EXPECT_EQ(MilliCpuToShares(0), 2);
  EXPECT_EQ(MilliCpuToShares(1), 2);
  EXPECT_EQ(MilliCpuToShares(500), 512);
  EXPECT_EQ(MilliCpuToShares(1000), 1024);
  EXPECT_EQ(MilliCpuToShares(2500), 2560);
  EXPECT_EQ(MilliCpuToShares(1'000'000), 262144);
  // MilliCPUToQuota: none for 0, at least 1 ms.
  EXPECT_EQ(MilliCpuToQuota(0), 0);
  EXPECT_EQ(MilliCpuToQuota(1), 1000);
  EXPECT_EQ(MilliCpuToQuota(10), 1000);
  EXPECT_EQ(MilliCpuToQuota(500), 50000);
  EXPECT_EQ(MilliCpuToQuota(1000), 100000);
  EXPECT_EQ(MilliCpuToQuota(2500), 250000);
  // CpuSharesToCpuWeight: [2, 262144] onto [1, 10000].
  EXPECT_EQ(CpuSharesToCpuWeight(2), 1);
  EXPECT_EQ(CpuSharesToCpuWeight(512), 20);
  EXPECT_EQ(CpuSharesToCpuWeight(1024), 39);
  EXPECT_EQ(CpuSharesToCpuWeight(2560), 98);
  EXPECT_EQ(CpuSharesToCpuWeight(262144), 10000);
}

TEST(CgroupConversionsTest, LimitsComeFromTheContainersAndSumForThePod) {
  api::Object pod = api::Object::parse(R"({"spec":{
    "initContainers":[{"name":"i","resources":{"limits":{"cpu":"2","memory":"32Mi"}}}],
    "containers":[
      {"name":"a","resources":{"requests":{"cpu":"250m"},"limits":{"cpu":"500m","memory":"64Mi"}}},
      {"name":"b","resources":{"limits":{"cpu":"1","memory":"128Mi"}}}]}})");
  const api::Object& a = pod["spec"]["containers"][0];
  const api::Object& b = pod["spec"]["containers"][1];
  EXPECT_EQ(ContainerCgroupLimits(a), (CgroupLimits{500, 250, 64 << 20, std::nullopt}));
  // No request: the limit is the request (API defaulting).
  EXPECT_EQ(ContainerCgroupLimits(b), (CgroupLimits{1000, 1000, 128 << 20, std::nullopt}));
  EXPECT_EQ(ContainerCgroupLimits(api::Object::parse(R"({"name":"c"})")), CgroupLimits{});
  // Pod: max(sum of containers, the largest init container).
  EXPECT_EQ(PodCgroupLimits(pod, 64), (CgroupLimits{2000, 2000, 192 << 20, 64}));
  // A container without a memory limit: no pod memory limit (the cpu one stays).
  pod["spec"]["containers"][1]["resources"]["limits"].erase("memory");
  EXPECT_EQ(PodCgroupLimits(pod, std::nullopt), (CgroupLimits{2000, 2000, std::nullopt, std::nullopt}));
}

TEST_F(CgroupsTest, V2DetectsTheDelegatedTreeAndWritesPodAndContainerFiles) {
  Cgroups cg = FakeV2();
  ASSERT_EQ(cg.version(), CgroupVersion::kV2);
  ASSERT_TRUE(cg.available());
  EXPECT_TRUE(cg.unenforced().empty()) << cg.reason();
  const fs::path berth = root_ / "mnt/agent.slice/berth";
  EXPECT_EQ(cg.parent_dirs(), std::vector<std::string>{berth.string()});
  EXPECT_EQ(ReadFile(berth / "cgroup.subtree_control"), "+cpu +memory +pids");
  ASSERT_TRUE(cg.SetNodeCpu(8000).ok());
  EXPECT_EQ(ReadFile(berth / "cpu.weight"), "313");  // 8192 shares

  auto pod = cg.CreatePod("u1", {2500, 1500, int64_t{1} << 30, 64});
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(*pod, std::vector<std::string>{(berth / "podu1").string()});
  EXPECT_EQ(ReadFile(berth / "podu1/cpu.weight"), "59");  // 1536 shares
  EXPECT_EQ(ReadFile(berth / "podu1/cpu.max"), "250000 100000");
  EXPECT_EQ(ReadFile(berth / "podu1/memory.max"), "1073741824");
  EXPECT_EQ(ReadFile(berth / "podu1/pids.max"), "64");
  EXPECT_FALSE(fs::exists(berth / "podu1/memory.swap.max"));
  EXPECT_EQ(ReadFile(berth / "podu1/cgroup.subtree_control"), "+cpu +memory +pids");

  auto run = cg.CreateContainer("u1", "main-0", {500, 0, 64 << 20, std::nullopt});
  ASSERT_TRUE(run.ok()) << run.status();
  const fs::path dir = berth / "podu1/main-0";
  EXPECT_EQ(*run, std::vector<std::string>{dir.string()});
  EXPECT_EQ(ReadFile(dir / "cpu.weight"), "1");  // no request: 2 shares
  EXPECT_EQ(ReadFile(dir / "cpu.max"), "50000 100000");
  EXPECT_EQ(ReadFile(dir / "memory.max"), "67108864");
  EXPECT_EQ(ReadFile(dir / "memory.swap.max"), "0");
  EXPECT_FALSE(fs::exists(dir / "pids.max"));
  EXPECT_TRUE(cg.Owns(*run));

  // A pod without pids or limits: nothing but the weight.
  auto bare = cg.CreatePod("u2", {});
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(ReadFile(berth / "podu2/cpu.weight"), "1");
  EXPECT_FALSE(fs::exists(berth / "podu2/cpu.max"));
  EXPECT_FALSE(fs::exists(berth / "podu2/memory.max"));
  EXPECT_FALSE(fs::exists(berth / "podu2/pids.max"));
  EXPECT_EQ(cg.CreatePod("../x", {}).status().code(), Code::kInvalid);
  EXPECT_EQ(cg.CreateContainer("u1", "a/b", {}).status().code(), Code::kInvalid);
}

TEST_F(CgroupsTest, V2CpuLimitsAtTheBoundaries) {
  Cgroups cg = FakeV2();
  struct Case {
    std::optional<int64_t> milli;  // limit = request
    std::string weight, max;       // "" = not written
  } cases[] = {{std::nullopt, "1", ""},       {0, "1", ""},
               {1, "1", "1000 100000"},       {500, "20", "50000 100000"},
               {1000, "39", "100000 100000"}, {2500, "98", "250000 100000"}};
  int n = 0;
  for (const Case& c : cases) {
    const std::string name = "c-" + std::to_string(n++);
    auto dirs = cg.CreateContainer("u1", name, {c.milli, c.milli.value_or(0), std::nullopt, std::nullopt});
    ASSERT_TRUE(dirs.ok()) << dirs.status();
    const fs::path dir = dirs->front();
    EXPECT_EQ(ReadFile(dir / "cpu.weight"), c.weight) << name;
    EXPECT_EQ(ReadFile(dir / "cpu.max"), c.max) << name;
    EXPECT_FALSE(fs::exists(dir / "memory.max")) << name;
  }
}

TEST_F(CgroupsTest, V1UsesEveryHierarchyAndWritesTheV1Files) {
  Cgroups cg = FakeV1();
  ASSERT_EQ(cg.version(), CgroupVersion::kV1);
  EXPECT_TRUE(cg.unenforced().empty()) << cg.reason();
  EXPECT_EQ(cg.parent_dirs(),
            (std::vector<std::string>{V1("cpu", "").parent_path().string(), V1("cpuacct", "").parent_path().string(),
                                      V1("memory", "").parent_path().string(), V1("pids", "").parent_path().string()}));
  ASSERT_TRUE(cg.SetNodeCpu(2000).ok());
  EXPECT_EQ(ReadFile(V1("cpu", "cpu.shares")), "2048");
  auto pod = cg.CreatePod("u1", {1500, 1500, 256 << 20, 64});
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->size(), 4u);
  EXPECT_EQ(ReadFile(V1("cpu", "podu1/cpu.shares")), "1536");
  EXPECT_EQ(ReadFile(V1("cpu", "podu1/cpu.cfs_period_us")), "100000");
  EXPECT_EQ(ReadFile(V1("cpu", "podu1/cpu.cfs_quota_us")), "150000");
  EXPECT_EQ(ReadFile(V1("memory", "podu1/memory.limit_in_bytes")), "268435456");
  EXPECT_FALSE(fs::exists(V1("memory", "podu1/memory.memsw.limit_in_bytes")));
  EXPECT_EQ(ReadFile(V1("pids", "podu1/pids.max")), "64");
  EXPECT_FALSE(fs::exists(V1("cpu", "podu1/cgroup.subtree_control")));

  auto run = cg.CreateContainer("u1", "main-3", {1000, 500, 128 << 20, std::nullopt});
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(*run,
            (std::vector<std::string>{V1("cpu", "podu1/main-3").string(), V1("cpuacct", "podu1/main-3").string(),
                                      V1("memory", "podu1/main-3").string(), V1("pids", "podu1/main-3").string()}));
  EXPECT_EQ(ReadFile(V1("cpu", "podu1/main-3/cpu.shares")), "512");
  EXPECT_EQ(ReadFile(V1("cpu", "podu1/main-3/cpu.cfs_quota_us")), "100000");
  EXPECT_EQ(ReadFile(V1("memory", "podu1/main-3/memory.limit_in_bytes")), "134217728");
  EXPECT_EQ(ReadFile(V1("memory", "podu1/main-3/memory.memsw.limit_in_bytes")), "134217728");
  EXPECT_FALSE(fs::exists(V1("pids", "podu1/main-3/pids.max")));
  EXPECT_TRUE(cg.Owns(*run));
  // Each hierarchy at most once, and only the layout <parent>/pod<uid>/<name>.
  EXPECT_FALSE(cg.Owns({run->front(), run->front()}));
  EXPECT_FALSE(cg.Owns({V1("cpu", "podu1").string()}));
  EXPECT_FALSE(cg.Owns({V1("cpu", "podu1/../podu2/x").string()}));

  Write(V1("cpuacct", "podu1/main-3/cpuacct.usage"), "2500000000\n");
  EXPECT_EQ(cg.CpuUsageMicros(*run), 2500000);
  Write(V1("pids", "podu1/pids.current"), "17\n");
  EXPECT_EQ(cg.PidsCurrent(*pod), 17);

  // A berth parent removed since detection is made again.
  fs::remove_all(V1("pids", ""));
  ASSERT_TRUE(cg.CreatePod("u9", {std::nullopt, 0, std::nullopt, 8}).ok());
  EXPECT_EQ(ReadFile(V1("pids", "podu9/pids.max")), "8");
}

TEST_F(CgroupsTest, V1CpuLimitsAtTheBoundaries) {
  Cgroups cg = FakeV1();
  struct Case {
    std::optional<int64_t> milli;
    std::string shares, quota;
  } cases[] = {{std::nullopt, "2", ""}, {0, "2", ""}, {1, "2", "1000"}, {500, "512", "50000"}, {1000, "1024", "100000"},
               {2500, "2560", "250000"}};
  int n = 0;
  for (const Case& c : cases) {
    const std::string name = "c-" + std::to_string(n++);
    ASSERT_TRUE(cg.CreateContainer("u1", name, {c.milli, c.milli.value_or(0), std::nullopt, std::nullopt}).ok());
    EXPECT_EQ(ReadFile(V1("cpu", "podu1/" + name + "/cpu.shares")), c.shares) << name;
    EXPECT_EQ(ReadFile(V1("cpu", "podu1/" + name + "/cpu.cfs_quota_us")), c.quota) << name;
    EXPECT_FALSE(fs::exists(V1("memory", "podu1/" + name + "/memory.limit_in_bytes"))) << name;
  }
}

TEST_F(CgroupsTest, OomKillsAreReadFromEachFormat) {
  Cgroups v2 = FakeV2();
  const std::vector<std::string> d2 = {(root_ / "mnt/agent.slice/berth/podu1/c-0").string()};
  EXPECT_FALSE(v2.OomKilled(d2, true));  // no memory.events
  Write(d2[0] + "/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\noom_group_kill 0\n");
  EXPECT_FALSE(v2.OomKilled(d2, true));
  Write(d2[0] + "/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n");
  EXPECT_TRUE(v2.OomKilled(d2, false));
  Write(d2[0] + "/cpu.stat", "usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n");
  EXPECT_EQ(v2.CpuUsageMicros(d2), 1234);

  fs::remove_all(root_ / "mnt");
  Cgroups v1 = FakeV1();
  ASSERT_EQ(v1.version(), CgroupVersion::kV1);
  const std::vector<std::string> d1 = {V1("cpu", "podu1/c-0").string(), V1("memory", "podu1/c-0").string()};
  const fs::path oom = V1("memory", "podu1/c-0/memory.oom_control");
  Write(oom, "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  Write(V1("memory", "podu1/c-0/memory.failcnt"), "5\n");
  EXPECT_FALSE(v1.OomKilled(d1, true));  // the kernel counts kills: none
  Write(oom, "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  EXPECT_TRUE(v1.OomKilled(d1, false));
  // Kernels before 4.13: the limit was hit (failcnt) and the run SIGKILLed.
  Write(oom, "oom_kill_disable 0\nunder_oom 0\n");
  EXPECT_TRUE(v1.OomKilled(d1, true));
  EXPECT_FALSE(v1.OomKilled(d1, false));
  Write(V1("memory", "podu1/c-0/memory.failcnt"), "0\n");
  EXPECT_FALSE(v1.OomKilled(d1, true));
}

TEST_F(CgroupsTest, WhatIsMissingIsNamedPerController) {
  Cgroups v1 = FakeV1(/*with_pids=*/false);
  EXPECT_EQ(v1.version(), CgroupVersion::kV1);
  EXPECT_TRUE(v1.Enforces("memory"));
  EXPECT_FALSE(v1.Enforces("pids"));
  ASSERT_EQ(v1.unenforced().size(), 1u);
  EXPECT_EQ(v1.unenforced()[0].rfind("pids: ", 0), 0u) << v1.unenforced()[0];

  fs::remove_all(root_ / "mnt");
  Write(root_ / "mnt/cgroup.controllers", "memory pids\n");
  Write(root_ / "mnt/agent.slice/berth/cgroup.controllers", "memory\n");
  Write(root_ / "self", "0::/agent.slice\n");
  Cgroups v2 = Cgroups::Detect({(root_ / "mnt").string(), (root_ / "self").string(), std::nullopt});
  EXPECT_TRUE(v2.Enforces("memory"));
  ASSERT_EQ(v2.unenforced().size(), 2u) << v2.reason();
  EXPECT_NE(v2.unenforced()[0].find("cpu: the cgroup v2 cpu controller is not available"), std::string::npos);
  // pids is available at the root but not delegated to the parent.
  EXPECT_NE(v2.unenforced()[1].find("pids: not enabled for"), std::string::npos) << v2.unenforced()[1];
  EXPECT_EQ(ReadFile(root_ / "mnt/agent.slice/cgroup.subtree_control"), "+pids");

  Cgroups none = Cgroups::Detect({(root_ / "nothing").string(), (root_ / "self").string(), std::nullopt});
  EXPECT_FALSE(none.available());
  EXPECT_EQ(none.unenforced().size(), 4u);
  EXPECT_EQ(none.CreatePod("u1", {}).status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace berth::agent
