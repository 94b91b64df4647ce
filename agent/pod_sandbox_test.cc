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
constexpr int64_t kBase = 1000010000;  // team-a's block: [kBase, kBase + 10000)
const api::IdBlock kBlock{kBase, 10000};
StatusOr<NamespaceIds> TeamA() { return NamespaceIds{"team-a", kBlock, kBlock}; }
StatusOr<NamespaceIds> NotAllocated() { return NamespaceIdsOf(api::Object{{"metadata", {{"name", "team-a"}}}}); }
StatusOr<NamespaceIds> NotAsked() {
  ADD_FAILURE() << "the namespace's ids were read although runAsUser and runAsGroup are set under RunAsAny";
  return TeamA();
}
const IdentityRules kRange;                                          // MustRunAsRange, no root
const IdentityRules kRangeRoot{true, PodIdPolicy::kMustRunAsRange};  // --allow-root-pods
const IdentityRules kAny{false, PodIdPolicy::kRunAsAny};

TEST(ContainerIdentityTest, WithoutSecurityContextTheBlocksBaseIsUidAndGid) {
  StatusOr<shim::SandboxUser> u = ContainerIdentity(Pod(), Container(), kRange, TeamA);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(*u, (shim::SandboxUser{kBase, kBase, {}}));
  u = ContainerIdentity(Pod(), Container(), kAny, TeamA);
  EXPECT_EQ(*u, (shim::SandboxUser{kBase, kBase, {}}));
}

TEST(ContainerIdentityTest, TheContainersSettingsWinOverThePods) {
  auto pod = Pod(R"({"runAsUser":1000010100,"runAsGroup":1000010101,"fsGroup":1000012000,
                     "supplementalGroups":[1000013000,1000012000,1000013001]})");
  StatusOr<shim::SandboxUser> u = ContainerIdentity(pod, Container(), kRange, TeamA);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(*u, (shim::SandboxUser{1000010100, 1000010101, {1000012000, 1000013000, 1000013001}}));
  u = ContainerIdentity(pod, Container(R"({"runAsUser":1000015000})"), kRange, TeamA);
  EXPECT_EQ(*u, (shim::SandboxUser{1000015000, 1000010101, {1000012000, 1000013000, 1000013001}}));
  u = ContainerIdentity(pod, Container(R"({"runAsUser":1000015000,"runAsGroup":1000016000})"), kRange, TeamA);
  EXPECT_EQ(*u, (shim::SandboxUser{1000015000, 1000016000, {1000012000, 1000013000, 1000013001}}));
  // runAsGroup alone keeps the block's base uid.
  u = ContainerIdentity(Pod(), Container(R"({"runAsGroup":1000016000})"), kRange, TeamA);
  EXPECT_EQ(*u, (shim::SandboxUser{kBase, 1000016000, {}}));
  // runAsUser alone: the block's base gid, not the host passwd's group of that uid.
  u = ContainerIdentity(Pod(), Container(R"({"runAsUser":1000019999})"), kRange, TeamA);
  EXPECT_EQ(*u, (shim::SandboxUser{1000019999, kBase, {}}));
}

// The attacks of issue 20: another team's uid, gid 0, the shadow group, an fsGroup
// outside the block; each named by its field, as OpenShift's MustRunAsRange does.
TEST(ContainerIdentityTest, IdsOutsideTheNamespacesBlockAreRefusedNamingTheField) {
  auto pod = api::Object::parse(R"({"metadata":{"name":"w-0","namespace":"team-a","uid":"u-1"},
    "spec":{"initContainers":[{"name":"init"}],"containers":[{"name":"side"},{"name":"main"}]}})");
  auto refused = [&](const api::Object& p, const std::string& sc) {
    return ContainerIdentity(p, Container(sc), kRange, TeamA).status().message();
  };
  EXPECT_EQ(refused(pod, R"({"runAsUser":1000000000})"),
            "spec.containers[1].securityContext.runAsUser: Invalid value: 1000000000: must be in the ranges: "
            "[1000010000, 1000019999] (namespace \"team-a\": openshift.io/sa.scc.uid-range \"1000010000/10000\")");
  EXPECT_EQ(refused(pod, R"({"runAsUser":1000020000})"),
            "spec.containers[1].securityContext.runAsUser: Invalid value: 1000020000: must be in the ranges: "
            "[1000010000, 1000019999] (namespace \"team-a\": openshift.io/sa.scc.uid-range \"1000010000/10000\")");
  EXPECT_EQ(refused(pod, R"({"runAsGroup":0})"),
            "spec.containers[1].securityContext.runAsGroup: Invalid value: 0: must be in the ranges: [1000010000, "
            "1000019999] (namespace \"team-a\": openshift.io/sa.scc.supplemental-groups \"1000010000/10000\")");
  api::Object with_pod_sc = pod;
  with_pod_sc["spec"]["securityContext"] = {{"supplementalGroups", {1000010001, 42}}};
  EXPECT_EQ(refused(with_pod_sc, ""),
            "spec.securityContext.supplementalGroups[1]: Invalid value: 42: must be in the ranges: [1000010000, "
            "1000019999] (namespace \"team-a\": openshift.io/sa.scc.supplemental-groups \"1000010000/10000\")");
  with_pod_sc["spec"]["securityContext"] = {{"fsGroup", 100}};
  EXPECT_EQ(refused(with_pod_sc, "").substr(0, 52), "spec.securityContext.fsGroup: Invalid value: 100: mu");
  with_pod_sc["spec"]["securityContext"] = {{"runAsUser", 5}};
  EXPECT_EQ(refused(with_pod_sc, "").substr(0, 47), "spec.securityContext.runAsUser: Invalid value: ");
  // An init container's path.
  Status s =
      ContainerIdentity(pod, api::Object{{"name", "init"}, {"securityContext", {{"runAsUser", 7}}}}, kRange, TeamA)
          .status();
  EXPECT_EQ(s.message().substr(0, 50), "spec.initContainers[0].securityContext.runAsUser: ");
  // The block's edges are in.
  EXPECT_TRUE(
      ContainerIdentity(pod, Container(R"({"runAsUser":1000010000,"runAsGroup":1000019999})"), kRange, TeamA).ok());
  // RunAsAny (single-tenant hosts): any id, and the namespace is not read when both are set.
  StatusOr<shim::SandboxUser> u =
      ContainerIdentity(with_pod_sc, Container(R"({"runAsUser":1000000000,"runAsGroup":0})"), kAny, NotAsked);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(*u, (shim::SandboxUser{1000000000, 0, {}}));
}

TEST(ContainerIdentityTest, ANamespaceWithoutItsBlockWaitsNeverFallsBackToASharedUid) {
  Status s = ContainerIdentity(Pod(), Container(), kRange, NotAllocated).status();
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_EQ(s.message(),
            "namespace \"team-a\" has no openshift.io/sa.scc.uid-range yet: its pods start once the control plane "
            "has allocated its ids");
  EXPECT_EQ(ContainerIdentity(Pod(), Container(), kAny, NotAllocated).status().code(), Code::kUnavailable);
  // Only the uid range: groups use it too; a malformed one is an error.
  auto ids = NamespaceIdsOf(
      api::Object::parse(R"({"metadata":{"name":"a","annotations":{"openshift.io/sa.scc.uid-range":"200000/1"}}})"));
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->groups, (api::IdBlock{200000, 1}));
  EXPECT_EQ(NamespaceIdsOf(api::Object::parse(R"({"metadata":{"name":"a","annotations":{
                             "openshift.io/sa.scc.uid-range":"200000/1",
                             "openshift.io/sa.scc.supplemental-groups":"x"}}})"))
                .status()
                .code(),
            Code::kInvalid);
}

TEST(ContainerIdentityTest, RootIsRefusedUnlessTheNodeAllowsItAndNeverWithRunAsNonRoot) {
  Status s = ContainerIdentity(Pod(R"({"runAsUser":0})"), Container(), kRange, TeamA).status();
  EXPECT_EQ(s.message(), "container's runAsUser 0 is refused by this node (berth --allow-root-pods is off)");
  s = ContainerIdentity(Pod(R"({"runAsUser":0})"), Container(), kAny, TeamA).status();
  EXPECT_EQ(s.message(), "container's runAsUser 0 is refused by this node (berth --allow-root-pods is off)");
  // Allowed: uid 0 (and gid/groups 0) are outside the range check.
  StatusOr<shim::SandboxUser> u = ContainerIdentity(Pod(R"({"runAsUser":0,"runAsGroup":0,"supplementalGroups":[0]})"),
                                                    Container(), kRangeRoot, TeamA);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(*u, (shim::SandboxUser{0, 0, {0}}));
  // ... but not for a non-root user: gid 0 is outside the block.
  EXPECT_FALSE(ContainerIdentity(Pod(R"({"runAsGroup":0})"), Container(), kRangeRoot, TeamA).ok());
  s = ContainerIdentity(Pod(R"({"runAsNonRoot":true})"), Container(R"({"runAsUser":0})"), kRangeRoot, TeamA).status();
  EXPECT_EQ(s.message(), "container's runAsUser breaks non-root policy (pod: \"w-0_team-a(u-1)\", container: main)");
  // The container's runAsNonRoot: false wins over the pod's true.
  u = ContainerIdentity(Pod(R"({"runAsNonRoot":true})"), Container(R"({"runAsUser":0,"runAsNonRoot":false})"),
                        kRangeRoot, TeamA);
  EXPECT_TRUE(u.ok());
  // runAsNonRoot without runAsUser: the block's base is never 0.
  EXPECT_TRUE(ContainerIdentity(Pod(R"({"runAsNonRoot":true})"), Container(), kRange, TeamA).ok());
}

TEST(ContainerIdentityTest, IdsNotIntegersAreConfigErrorsNamingTheField) {
  Status s = ContainerIdentity(Pod(), Container(R"({"runAsUser":-1})"), kAny, TeamA).status();
  EXPECT_EQ(s.message(), "container main: securityContext.runAsUser must be an integer in [0, 4294967294]");
  s = ContainerIdentity(Pod(R"({"supplementalGroups":["x"]})"), Container(), kAny, TeamA).status();
  EXPECT_EQ(s.message(), "spec.securityContext.supplementalGroups[0] must be an integer in [0, 4294967294]");
}

class PodSandboxFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = shim::testing::FreshTestDirectory("pod-sandbox").string();
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(PodSandboxFilesTest, GpuNodesAreTheHeldOnesAndTheControlNodesThatExist) {
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

TEST_F(PodSandboxFilesTest, TheWorkDirectoryBelongsToThePodsUser) {
  const std::string work = dir_ + "/work";
  fs::create_directories(work);
  StatusOr<WorkDirOwner> owner = PodWorkDirOwner(Pod(), kRange, TeamA);
  ASSERT_TRUE(owner.ok());
  if (geteuid() != 0) GTEST_SKIP() << "chown needs root";
  ASSERT_TRUE(ApplyWorkDirOwner(work, *owner).ok());
  struct stat st;
  ASSERT_EQ(stat(work.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, static_cast<uid_t>(kBase));
  EXPECT_EQ(st.st_gid, static_cast<gid_t>(kBase));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  owner = PodWorkDirOwner(Pod(R"({"runAsUser":1000010100,"fsGroup":1000012000})"), kRange, TeamA);
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  ASSERT_TRUE(ApplyWorkDirOwner(work, *owner).ok());
  ASSERT_EQ(stat(work.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 1000010100u);
  EXPECT_EQ(st.st_gid, 1000012000u);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  // The work directory is checked as the containers are: no other team's owner.
  EXPECT_EQ(PodWorkDirOwner(Pod(R"({"fsGroup":42})"), kRange, TeamA).status().code(), Code::kInvalid);
}

TEST_F(PodSandboxFilesTest, OlderRunsWritableLayersAreRemoved) {
  for (int run = 0; run < 3; ++run) fs::create_directories(shim::RunDir(dir_, "c", run) + "/rootfs/upper");
  RemoveRootfsBefore(dir_, "c", 2);
  EXPECT_FALSE(fs::exists(shim::RunDir(dir_, "c", 0) + "/rootfs"));
  EXPECT_FALSE(fs::exists(shim::RunDir(dir_, "c", 1) + "/rootfs"));
  EXPECT_TRUE(fs::exists(shim::RunDir(dir_, "c", 2) + "/rootfs"));
  EXPECT_TRUE(fs::exists(shim::RunDir(dir_, "c", 0)));
}

}  // namespace
}  // namespace berth::agent
