// agent/local_storage.h: usage as du measures it (symlinks, hard links, sparse files, depth,
// the entry bound), the kubelet's limit and node-pressure messages, the threshold syntax and
// the eviction ranking.
#include "agent/local_storage.h"

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace berth::agent {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kMiB = 1 << 20;

class LocalStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("berth-storage-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A file of `bytes` of written (allocated) data.
  static void WriteFile(const fs::path& p, int64_t bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary);
    std::string chunk(64 * 1024, 'x');
    for (int64_t left = bytes; left > 0; left -= static_cast<int64_t>(chunk.size())) {
      out.write(chunk.data(), static_cast<std::streamsize>(std::min<int64_t>(left, chunk.size())));
    }
  }
  // What the directory itself and its metadata take: a few blocks per entry at most.
  static void ExpectAbout(int64_t measured, int64_t data, int entries) {
    EXPECT_GE(measured, data);
    EXPECT_LE(measured, data + entries * 64 * 1024) << "measured " << measured << " for " << data << " bytes";
  }

  fs::path root_;
};

TEST_F(LocalStorageTest, UsageCountsAllocatedBytesOfEveryFileBelowTheDirectory) {
  WriteFile(root_ / "a", 3 * kMiB);
  WriteFile(root_ / "sub" / "dir" / "b", 2 * kMiB);
  DiskUsage u = MeasureDiskUsage(root_.string());
  ExpectAbout(u.bytes, 5 * kMiB, 5);
  EXPECT_EQ(u.entries, 5);  // root, a, sub, sub/dir, sub/dir/b
  EXPECT_FALSE(u.truncated);
  EXPECT_EQ(MeasureDiskUsage((root_ / "missing").string()).bytes, 0);
}

TEST_F(LocalStorageTest, SymlinksAreNotFollowedHardLinksCountOnceSparseFilesCountWhatTheyAllocate) {
  const fs::path outside = root_ / "outside";
  WriteFile(outside / "big", 8 * kMiB);
  const fs::path pod = root_ / "pod";
  fs::create_directories(pod);
  fs::create_symlink(outside / "big", pod / "link-to-file");
  fs::create_directory_symlink(outside, pod / "link-to-dir");
  WriteFile(pod / "data", 2 * kMiB);
  fs::create_hard_link(pod / "data", pod / "data-again");
  fs::create_hard_link(pod / "data", pod / "data-third");
  {
    int fd = open((pod / "sparse").c_str(), O_CREAT | O_WRONLY, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 1LL << 40), 0);  // a 1 TiB hole
    close(fd);
  }
  DiskUsage u = MeasureDiskUsage(pod.string());
  ExpectAbout(u.bytes, 2 * kMiB, 7);
}

TEST_F(LocalStorageTest, ADirectoryNestedDeeperThanTheOpenDirectoryBoundIsStillMeasured) {
  // Three times the stack bound: the walk defers what lies deeper and still reaches the bottom.
  fs::path p = root_;
  int dir = open(root_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  for (int i = 0; i < 3 * kMaxDiskUsageDepth; ++i) {
    ASSERT_EQ(mkdirat(dir, "d", 0755), 0);
    int next = openat(dir, "d", O_RDONLY | O_DIRECTORY);
    close(dir);
    dir = next;
    ASSERT_GE(dir, 0);
  }
  int file = openat(dir, "bottom", O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(file, 0);
  std::string chunk(kMiB, 'y');
  for (int i = 0; i < 4; ++i) ASSERT_EQ(write(file, chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
  close(file);
  close(dir);
  DiskUsage u = MeasureDiskUsage(root_.string());
  EXPECT_FALSE(u.truncated);
  EXPECT_EQ(u.entries, 3 * kMaxDiskUsageDepth + 2);
  ExpectAbout(u.bytes, 4 * kMiB, 3 * kMaxDiskUsageDepth + 2);
}

TEST_F(LocalStorageTest, AWalkStopsAtItsEntryBoundAndSaysTheResultIsALowerBound) {
  for (int i = 0; i < 50; ++i) WriteFile(root_ / ("f" + std::to_string(i)), 4096);
  DiskUsage bounded = MeasureDiskUsage(root_.string(), 20);
  EXPECT_TRUE(bounded.truncated);
  EXPECT_EQ(bounded.entries, 20);
  DiskUsage all = MeasureDiskUsage(root_.string());
  EXPECT_FALSE(all.truncated);
  EXPECT_EQ(all.entries, 51);
  EXPECT_LT(bounded.bytes, all.bytes);
}

api::Object Pod(const std::string& json) { return api::Object::parse(json); }

const char* kPodWithLimits = R"({
  "metadata": {"name": "p", "namespace": "ns", "uid": "u1"},
  "spec": {
    "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "1Mi"}},
                {"name": "ram", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}},
                {"name": "free", "emptyDir": {}}],
    "initContainers": [{"name": "init", "resources": {"limits": {"ephemeral-storage": "3Mi"}}}],
    "containers": [{"name": "a", "resources": {"limits": {"ephemeral-storage": "2Mi"}}},
                   {"name": "b", "resources": {"limits": {"ephemeral-storage": "500Ki"}}},
                   {"name": "c"}]}})";

TEST_F(LocalStorageTest, PodUsageSplitsContainersLogsAndEmptyDirsAndTotalsTheDirectory) {
  const api::Object pod = Pod(kPodWithLimits);
  WriteFile(root_ / "runs" / "a" / "1" / "rootfs" / "tmp" / "x", 3 * kMiB);
  WriteFile(root_ / "logs" / "a" / "0.log", 1 * kMiB);
  WriteFile(root_ / "logs" / "b" / "0.log", 256 * 1024);
  WriteFile(root_ / "volumes" / "kubernetes.io~empty-dir" / "scratch" / "f", 512 * 1024);
  WriteFile(root_ / "work" / "shared", 2 * kMiB);
  PodStorageUsage u = MeasurePodStorage(root_.string(), pod);
  ExpectAbout(u.containers.at("a"), 4 * kMiB, 8);
  ExpectAbout(u.containers.at("b"), 256 * 1024, 3);
  EXPECT_EQ(u.containers.at("c"), 0);
  EXPECT_EQ(u.containers.at("init"), 0);
  ExpectAbout(u.empty_dirs.at("scratch"), 512 * 1024, 2);
  EXPECT_FALSE(u.empty_dirs.contains("ram"));  // a tmpfs, charged to memory
  EXPECT_EQ(u.empty_dirs.at("free"), 0);
  ExpectAbout(u.total, 4 * kMiB + 256 * 1024 + 512 * 1024 + 2 * kMiB, 20);
}

TEST_F(LocalStorageTest, TheFirstExceededLimitNamesItselfAsTheKubeletSaysIt) {
  const api::Object pod = Pod(kPodWithLimits);
  EXPECT_TRUE(HasLocalStorageLimits(pod));
  PodStorageUsage u;
  u.containers = {{"a", kMiB}, {"b", 100}, {"c", 0}};
  u.empty_dirs = {{"scratch", kMiB}, {"free", 0}};
  u.total = 2 * kMiB;
  EXPECT_EQ(LocalStorageLimitViolation(pod, u), std::nullopt) << "usage equal to a limit is within it";

  u.empty_dirs["scratch"] = kMiB + 1;
  EXPECT_EQ(LocalStorageLimitViolation(pod, u), "Usage of EmptyDir volume \"scratch\" exceeds the limit \"1Mi\". ");

  u.empty_dirs["scratch"] = 0;
  u.total = 3 * kMiB + 1;  // the pod's limit: max(2Mi + 500Ki, init 3Mi) = 3Mi
  EXPECT_EQ(LocalStorageLimitViolation(pod, u),
            "Pod ephemeral local storage usage exceeds the total limit of containers 3Mi. ");

  u.total = kMiB;
  u.containers["b"] = 500 * 1024 + 1;
  EXPECT_EQ(LocalStorageLimitViolation(pod, u), "Container b exceeded its local ephemeral storage limit \"500Ki\". ");

  u.containers["b"] = 0;
  u.truncated = true;
  ASSERT_TRUE(LocalStorageLimitViolation(pod, u).has_value());
  EXPECT_TRUE(LocalStorageLimitViolation(pod, u)->starts_with("Pod ephemeral local storage usage cannot be measured"));

  const api::Object unlimited = Pod(R"({"spec": {"volumes": [{"name": "v", "emptyDir": {}}],
                                        "containers": [{"name": "a"}]}})");
  EXPECT_FALSE(HasLocalStorageLimits(unlimited));
  u.containers = {{"a", 1LL << 40}};
  u.total = 1LL << 40;
  EXPECT_EQ(LocalStorageLimitViolation(unlimited, u), std::nullopt);
}

TEST_F(LocalStorageTest, EvictionHardTakesThePercentOrQuantityOfNodefsAvailableOnly) {
  StatusOr<EvictionThreshold> def = ParseEvictionHard(kDefaultEvictionHard);
  ASSERT_TRUE(def.ok()) << def.status().ToString();
  EXPECT_EQ(def->Bytes(1000 * kMiB), 100 * kMiB);
  EXPECT_TRUE(def->Met({1000 * kMiB, 100 * kMiB - 1}));
  EXPECT_FALSE(def->Met({1000 * kMiB, 100 * kMiB}));

  StatusOr<EvictionThreshold> abs = ParseEvictionHard("nodefs.available<5Gi");
  ASSERT_TRUE(abs.ok());
  EXPECT_EQ(abs->Bytes(1), 5LL << 30);

  for (std::string_view off : {"", "none"}) {
    StatusOr<EvictionThreshold> t = ParseEvictionHard(off);
    ASSERT_TRUE(t.ok());
    EXPECT_FALSE(t->enabled());
    EXPECT_FALSE(t->Met({100, 0}));
  }
  for (std::string_view bad :
       {"memory.available<100Mi", "nodefs.available", "nodefs.available<0%", "nodefs.available<101%",
        "nodefs.available<x%", "nodefs.available<-1Gi", "nodefs.available<1Gb", "nodefs.available<nan%"}) {
    StatusOr<EvictionThreshold> t = ParseEvictionHard(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), Code::kInvalid);
    EXPECT_TRUE(t.status().message().starts_with("--eviction-hard \"" + std::string(bad) + "\": "))
        << t.status().message();
  }
}

TEST_F(LocalStorageTest, DiskPressureEvictsPodsOverTheirRequestThenLowerPriorityThenLargerUsage) {
  std::vector<DiskPressureCandidate> pods = {
      {"within-request-low-priority", -10, 5 * kMiB, 10 * kMiB},
      {"over-high-priority-big", 1000, 100 * kMiB, 0},
      {"over-low-priority-small", 0, 2 * kMiB, kMiB},
      {"over-low-priority-big", 0, 50 * kMiB, kMiB},
      {"critical", kSystemCriticalPriority, 900 * kMiB, 0},
  };
  RankForDiskPressure(&pods);
  std::vector<std::string> order;
  for (const auto& p : pods) order.push_back(p.uid);
  // A critical priority (a tenant may give its pod system-node-critical) only ranks it last
  // among those over their request: upstream spares critical static pods only.
  EXPECT_EQ(order, (std::vector<std::string>{"over-low-priority-big", "over-low-priority-small",
                                             "over-high-priority-big", "critical", "within-request-low-priority"}));
}

TEST_F(LocalStorageTest, NodePressureMessageNamesThresholdAvailableAndContainersOverTheirRequest) {
  const api::Object pod = Pod(R"({"spec": {"containers": [
      {"name": "writer", "resources": {"requests": {"ephemeral-storage": "1Mi"}}},
      {"name": "quiet", "resources": {"requests": {"ephemeral-storage": "1Gi"}}},
      {"name": "unrequested"}]}})");
  PodStorageUsage u;
  u.containers = {{"writer", 3 * kMiB}, {"quiet", kMiB}, {"unrequested", 4096}};
  StatusOr<EvictionThreshold> t = ParseEvictionHard("nodefs.available<10%");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(DiskPressureEvictionMessage(*t, {1024 * kMiB, 50 * kMiB}, pod, u),
            "The node was low on resource: ephemeral-storage. Threshold quantity: 107374182, available: 50Mi. "
            "Container writer was using 3Mi, request is 1Mi, has larger consumption of ephemeral-storage. "
            "Container unrequested was using 4Ki, request is 0, has larger consumption of ephemeral-storage. ");
  EXPECT_EQ(PodEphemeralStorageRequest(pod), 1024 * kMiB + kMiB);
}

TEST_F(LocalStorageTest, APodToleratingTheDiskPressureTaintIsAdmittedUnderPressure) {
  EXPECT_FALSE(ToleratesDiskPressure(Pod(R"({"spec": {}})")));
  EXPECT_TRUE(ToleratesDiskPressure(Pod(R"({"spec": {"tolerations": [{"operator": "Exists"}]}})")));
  EXPECT_TRUE(ToleratesDiskPressure(Pod(
      R"({"spec": {"tolerations": [{"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"}]}})")));
  EXPECT_TRUE(
      ToleratesDiskPressure(Pod(R"({"spec": {"tolerations": [{"key": "node.kubernetes.io/disk-pressure"}]}})")));
  EXPECT_FALSE(ToleratesDiskPressure(Pod(
      R"({"spec": {"tolerations": [{"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoExecute"}]}})")));
  EXPECT_FALSE(ToleratesDiskPressure(Pod(R"({"spec": {"tolerations": [{"key": "other", "operator": "Exists"}]}})")));
}

}  // namespace
}  // namespace berth::agent
