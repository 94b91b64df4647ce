#include "agent/pod_sandbox.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "agent/shim/run_record.h"
#include "agent/shim/testing/test_files.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;

api::Object Pod(const std::string& pod_sc = "{}") {
  return api::Object::parse(R"({"metadata":{"name":"w-0","namespace":"team-a","uid":"u-1"},
    "spec":{"securityContext":)" +
                            pod_sc + "}}");
}
api::Object Container(const std::string& sc = "") {
  api::Object c = {{"name", "main"}};
  if (!sc.empty()) c["securityContext"] = api::Object::parse(sc);
  return c;
}
StatusOr<int64_t> NsUid() { return 200007; }
StatusOr<int64_t> NoNsUid() {
  ADD_FAILURE() << "the namespace uid was asked although runAsUser applies";
  return 1;
}

TEST(ContainerIdentityTest, WithoutSecurityContextTheNamespacesUidIsUidAndGid) {
  StatusOr<shim::SandboxUser> u = ContainerIdentity(Pod(), Container(), false, NsUid);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(*u, (shim::SandboxUser{200007, 200007, {}}));
}

TEST(ContainerIdentityTest, TheContainersSettingsWinOverThePods) {
  auto pod = Pod(R"({"runAsUser":1000,"runAsGroup":1001,"fsGroup":2000,"supplementalGroups":[3000,2000,3001]})");
  StatusOr<shim::SandboxUser> u = ContainerIdentity(pod, Container(), false, NoNsUid);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(*u, (shim::SandboxUser{1000, 1001, {2000, 3000, 3001}}));
  u = ContainerIdentity(pod, Container(R"({"runAsUser":1500})"), false, NoNsUid);
  EXPECT_EQ(*u, (shim::SandboxUser{1500, 1001, {2000, 3000, 3001}}));
  u = ContainerIdentity(pod, Container(R"({"runAsUser":1500,"runAsGroup":1600})"), false, NoNsUid);
  EXPECT_EQ(*u, (shim::SandboxUser{1500, 1600, {2000, 3000, 3001}}));
  // runAsGroup alone keeps the namespace's uid.
  u = ContainerIdentity(Pod(), Container(R"({"runAsGroup":1600})"), false, NsUid);
  EXPECT_EQ(*u, (shim::SandboxUser{200007, 1600, {}}));
  // An explicit runAsUser without a group: that user's group in the host's passwd (root's is 0; none → 0).
  u = ContainerIdentity(Pod(), Container(R"({"runAsUser":4242420})"), false, NoNsUid);
  EXPECT_EQ(*u, (shim::SandboxUser{4242420, 0, {}}));
}

TEST(ContainerIdentityTest, RootIsRefusedUnlessTheNodeAllowsItAndNeverWithRunAsNonRoot) {
  Status s = ContainerIdentity(Pod(R"({"runAsUser":0})"), Container(), false, NoNsUid).status();
  EXPECT_EQ(s.message(), "container's runAsUser 0 is refused by this node (berth --allow-root-pods is off)");
  StatusOr<shim::SandboxUser> u = ContainerIdentity(Pod(R"({"runAsUser":0})"), Container(), true, NoNsUid);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->uid, 0);
  s = ContainerIdentity(Pod(R"({"runAsNonRoot":true})"), Container(R"({"runAsUser":0})"), true, NoNsUid).status();
  EXPECT_EQ(s.message(), "container's runAsUser breaks non-root policy (pod: \"w-0_team-a(u-1)\", container: main)");
  // The container's runAsNonRoot: false wins over the pod's true.
  u = ContainerIdentity(Pod(R"({"runAsNonRoot":true})"), Container(R"({"runAsUser":0,"runAsNonRoot":false})"), true,
                        NoNsUid);
  EXPECT_TRUE(u.ok());
  // runAsNonRoot without runAsUser: the node's uid is never 0.
  EXPECT_TRUE(ContainerIdentity(Pod(R"({"runAsNonRoot":true})"), Container(), false, NsUid).ok());
}

TEST(ContainerIdentityTest, IdsOutOfRangeAreConfigErrorsNamingTheField) {
  Status s = ContainerIdentity(Pod(), Container(R"({"runAsUser":-1})"), false, NsUid).status();
  EXPECT_EQ(s.message(), "container main: securityContext.runAsUser must be an integer in [0, 4294967294]");
  s = ContainerIdentity(Pod(R"({"supplementalGroups":["x"]})"), Container(), false, NsUid).status();
  EXPECT_NE(s.message().find("supplementalGroups"), std::string::npos);
}

class PodUsersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = shim::testing::FreshTestDirectory("pod-users").string();
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(PodUsersTest, ANamespaceKeepsItsUidAcrossRestartsAndTeamsNeverShare) {
  {
    auto users = PodUsers::Open(dir_, 300000, 3);
    ASSERT_TRUE(users.ok());
    EXPECT_EQ(*(*users)->UidFor("team-a"), 300000);
    EXPECT_EQ(*(*users)->UidFor("team-b"), 300001);
    EXPECT_EQ(*(*users)->UidFor("team-a"), 300000);
  }
  EXPECT_EQ((fs::status(dir_ + "/pod-users.json").permissions() & fs::perms::all),
            fs::perms::owner_read | fs::perms::owner_write);
  auto users = PodUsers::Open(dir_, 300000, 3);
  ASSERT_TRUE(users.ok());
  EXPECT_EQ(*(*users)->UidFor("team-b"), 300001);
  EXPECT_EQ(*(*users)->UidFor("team-c"), 300002);
  Status full = (*users)->UidFor("team-d").status();
  EXPECT_EQ(full.code(), Code::kUnavailable);
  EXPECT_EQ(full.message(), "no free pod uid left in [300000, 300003) for namespace \"team-d\"");
}

TEST_F(PodUsersTest, ACorruptTableIsRefusedNotReset) {
  std::ofstream(dir_ + "/pod-users.json") << "{\"version\":1,\"namespaces\":{\"team-a\":\"x\"}}";
  Status s = PodUsers::Open(dir_, 300000, 3).status();
  EXPECT_EQ(s.code(), Code::kInvalid);
  EXPECT_NE(s.message().find("team-a"), std::string::npos);
  std::ofstream(dir_ + "/pod-users.json", std::ios::trunc) << "{";
  EXPECT_EQ(PodUsers::Open(dir_, 300000, 3).status().code(), Code::kInvalid);
}

TEST_F(PodUsersTest, GpuNodesAreTheHeldOnesAndTheControlNodesThatExist) {
  std::ofstream(dir_ + "/nvidia1");
  std::ofstream(dir_ + "/nvidia3");
  std::ofstream(dir_ + "/nvidiactl");
  std::ofstream(dir_ + "/nvidia-uvm");
  EXPECT_EQ(GpuDeviceNodes(dir_, {1, 3}), (std::vector<std::string>{dir_ + "/nvidia1", dir_ + "/nvidia3",
                                                                    dir_ + "/nvidiactl", dir_ + "/nvidia-uvm"}));
  EXPECT_TRUE(GpuDeviceNodes(dir_, {}).empty());
  // Declared (virtual) GPUs have no device node: GPU 5 is assigned by CUDA_VISIBLE_DEVICES only.
  EXPECT_EQ(GpuDeviceNodes(dir_, {1, 5}),
            (std::vector<std::string>{dir_ + "/nvidia1", dir_ + "/nvidiactl", dir_ + "/nvidia-uvm"}));
}

TEST_F(PodUsersTest, TheWorkDirectoryBelongsToThePodsUser) {
  const std::string work = dir_ + "/work";
  fs::create_directories(work);
  StatusOr<WorkDirOwner> owner = PodWorkDirOwner(Pod(), NsUid);
  ASSERT_TRUE(owner.ok());
  if (geteuid() != 0) GTEST_SKIP() << "chown needs root";
  ASSERT_TRUE(ApplyWorkDirOwner(work, *owner).ok());
  struct stat st;
  ASSERT_EQ(stat(work.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200007u);
  EXPECT_EQ(st.st_gid, 200007u);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  owner = PodWorkDirOwner(Pod(R"({"runAsUser":1000,"fsGroup":2000})"), NoNsUid);
  ASSERT_TRUE(ApplyWorkDirOwner(work, *owner).ok());
  ASSERT_EQ(stat(work.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1000u);
  EXPECT_EQ(st.st_gid, 2000u);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
}

TEST_F(PodUsersTest, OlderRunsWritableLayersAreRemoved) {
  for (int run = 0; run < 3; ++run) fs::create_directories(shim::RunDir(dir_, "c", run) + "/rootfs/upper");
  RemoveRootfsBefore(dir_, "c", 2);
  EXPECT_FALSE(fs::exists(shim::RunDir(dir_, "c", 0) + "/rootfs"));
  EXPECT_FALSE(fs::exists(shim::RunDir(dir_, "c", 1) + "/rootfs"));
  EXPECT_TRUE(fs::exists(shim::RunDir(dir_, "c", 2) + "/rootfs"));
  EXPECT_TRUE(fs::exists(shim::RunDir(dir_, "c", 0)));
}

}  // namespace
}  // namespace berth::agent
