// The pod volume manager (agent/volumes.h): what each volume kind leaves on the node,
// the kubelet's atomic writer layout, FailedMount texts and back-off, hostPath prefixes,
// subPath containment, the ServiceAccount token mount, and each container's mounts.
#include "agent/volumes.h"

#include <atomic>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

#include "agent/service_account_token.h"
#include "agent/testing/token_client.h"
#include "api/limits.h"
#include "core/base64.h"

namespace berth::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using shim::SandboxMount;
using testing_support::TokenClient;

const client::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};
const client::GroupVersionResource kSecrets{"", "v1", "secrets"};
const client::GroupVersionResource kServiceAccounts{"", "v1", "serviceaccounts"};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

mode_t ModeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

class VolumesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("berth-volumes-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "pod");
    fs::create_directories(root_ / "data" / "models");
    fs::create_directories(root_ / "data2");
    Create(kServiceAccounts, {{"metadata", {{"name", "default"}}}});
  }
  void TearDown() override { fs::remove_all(root_); }

  void Create(const client::GroupVersionResource& gvr, api::Object obj) {
    obj["metadata"]["namespace"] = "team-a";
    ASSERT_TRUE(client_.Create(gvr.Namespace("team-a"), obj, {}).ok());
  }
  void Update(const client::GroupVersionResource& gvr, const std::string& name, const api::Object& data) {
    StatusOr<api::Object> obj = client_.Get(gvr.Namespace("team-a"), name, {});
    ASSERT_TRUE(obj.ok());
    (*obj)["data"] = data;
    ASSERT_TRUE(client_.Update(gvr.Namespace("team-a"), *obj, {}).ok());
  }
  // A pod with `volumes` and one container "c" with `mounts`.
  static api::Object Pod(api::Object volumes, api::Object mounts = api::Object::array()) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata",
             {{"name", "p"}, {"namespace", "team-a"}, {"uid", "uid-1"}, {"labels", {{"app", "train"}, {"b", "x\"y"}}}}},
            {"spec",
             {{"volumes", std::move(volumes)},
              {"containers",
               {{{"name", "c"},
                 {"volumeMounts", std::move(mounts)},
                 {"resources", {{"limits", {{"memory", "256Mi"}}}}}}}}}}};
  }
  PodVolumes Make(PodVolumes::Options o = {}) {
    o.pod_dir = (root_ / "pod").string();
    if (o.host_path_prefixes.empty()) o.host_path_prefixes = {(root_ / "data").string()};
    return PodVolumes(client_, clock_, std::move(o));
  }
  fs::path Vol(const char* plugin, const std::string& name) { return root_ / "pod" / "volumes" / plugin / name; }
  static const api::Object& Container(const api::Object& pod) { return pod["spec"]["containers"][0]; }

  FakeClock clock_{Time(std::chrono::seconds(1'800'000'000))};
  TokenClient client_{clock_};
  fs::path root_;
};

TEST_F(VolumesTest, EmptyDirIsADirectoryBoundWritableUnlessTheMountSaysReadOnly) {
  const api::Object pod = Pod({{{"name", "scratch"}, {"emptyDir", api::Object::object()}}},
                              {{{"name", "scratch"}, {"mountPath", "/scratch"}},
                               {{"name", "scratch"}, {"mountPath", "/ro"}, {"readOnly", true}}});
  PodVolumes v = Make();
  EXPECT_TRUE(v.Sync(pod).empty());
  EXPECT_TRUE(v.Ready());
  const fs::path dir = Vol(kEmptyDirPlugin, "scratch");
  ASSERT_TRUE(fs::is_directory(dir));
  EXPECT_EQ(ModeOf(dir), 0777u);
  StatusOr<std::vector<SandboxMount>> mounts = v.MountsFor(Container(pod));
  ASSERT_TRUE(mounts.ok()) << mounts.status().ToString();
  EXPECT_EQ(*mounts, (std::vector<SandboxMount>{{SandboxMount::Kind::kBind, dir.string(), "/scratch", false, 0},
                                                {SandboxMount::Kind::kBind, dir.string(), "/ro", true, 0}}));
}

TEST_F(VolumesTest, MemoryEmptyDirIsATmpfsOfTheSmallerOfSizeLimitAndThePodMemoryLimit) {
  PodVolumes v = Make();
  api::Object pod = Pod({{{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "64Mi"}}}}},
                        {{{"name", "shm"}, {"mountPath", "/dev/shm"}}});
  v.Sync(pod);
  StatusOr<std::vector<SandboxMount>> mounts = v.MountsFor(Container(pod));
  ASSERT_TRUE(mounts.ok());
  EXPECT_EQ(*mounts, (std::vector<SandboxMount>{{SandboxMount::Kind::kTmpfs, "", "/dev/shm", false, 64 << 20}}));

  PodVolumes big = Make();
  pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] = "1Gi";  // above the pod's 256Mi limit
  big.Sync(pod);
  EXPECT_EQ(big.MountsFor(Container(pod))->at(0).size_bytes, 256 << 20);
}

// Without a memory limit on every container the node's allocatable memory bounds it, whatever
// sizeLimit says (calculateEmptyDirMemorySize): an unbounded tmpfs would take the host's RAM.
TEST_F(VolumesTest, AMemoryEmptyDirOfAPodWithoutMemoryLimitsIsBoundedByTheNode) {
  PodVolumes::Options o;
  o.node.allocatable["memory"] = Quantity::MustParse("8Gi");
  PodVolumes v = Make(o);
  api::Object pod = Pod({{{"name", "shm"}, {"emptyDir", {{"medium", "Memory"}, {"sizeLimit", "1E"}}}}},
                        {{{"name", "shm"}, {"mountPath", "/dev/shm"}}});
  pod["spec"]["containers"][0].erase("resources");
  v.Sync(pod);
  EXPECT_EQ(v.MountsFor(Container(pod))->at(0).size_bytes, int64_t{8} << 30);
  PodVolumes unsized = Make(o);
  pod["spec"]["volumes"][0]["emptyDir"].erase("sizeLimit");
  unsized.Sync(pod);
  EXPECT_EQ(unsized.MountsFor(Container(pod))->at(0).size_bytes, int64_t{8} << 30);
}

TEST_F(VolumesTest, ConfigMapIsWrittenWithTheAtomicWriterLayout) {
  Create(kConfigMaps, {{"metadata", {{"name", "cfg"}}},
                       {"data", {{"train.yaml", "lr: 1"}, {"hostfile", "a slots=1"}}},
                       {"binaryData", {{"blob", Base64Encode(std::string("\x00\x01", 2))}}}});
  const api::Object pod =
      Pod({{{"name", "config"}, {"configMap", {{"name", "cfg"}}}}}, {{{"name", "config"}, {"mountPath", "/etc/cfg"}}});
  PodVolumes v = Make();
  EXPECT_TRUE(v.Sync(pod).empty());
  const fs::path dir = Vol(kConfigMapPlugin, "config");
  ASSERT_TRUE(fs::is_symlink(dir / "..data"));
  const std::string ts = fs::read_symlink(dir / "..data").string();
  EXPECT_TRUE(ts.starts_with("..2027_01_15_08_00_00.")) << ts;  // the Clock's UTC time
  EXPECT_EQ(ModeOf(dir / ts), 0755u);
  for (const char* key : {"train.yaml", "hostfile", "blob"}) {
    EXPECT_TRUE(fs::is_symlink(dir / key)) << key;
    EXPECT_EQ(fs::read_symlink(dir / key).string(), std::string("..data/") + key);
    EXPECT_EQ(ModeOf(dir / key), 0644u) << key;
  }
  EXPECT_EQ(Slurp(dir / "train.yaml"), "lr: 1");
  EXPECT_EQ(Slurp(dir / "blob"), std::string("\x00\x01", 2));
  StatusOr<std::vector<SandboxMount>> mounts = v.MountsFor(Container(pod));
  ASSERT_TRUE(mounts.ok());
  EXPECT_EQ(*mounts, (std::vector<SandboxMount>{{SandboxMount::Kind::kBind, dir.string(), "/etc/cfg", true, 0}}));
}

TEST_F(VolumesTest, ItemsChooseKeysPathsAndModes) {
  Create(kConfigMaps, {{"metadata", {{"name", "cfg"}}}, {"data", {{"a", "A"}, {"b", "B"}}}});
  Create(kSecrets, {{"metadata", {{"name", "creds"}}}, {"data", {{"key", Base64Encode("s3cr3t")}}}});
  const api::Object pod =
      Pod({{{"name", "config"},
            {"configMap",
             {{"name", "cfg"}, {"defaultMode", 0600}, {"items", {{{"key", "a"}, {"path", "sub/dir/a.txt"}}}}}}},
           {{"name", "creds"},
            {"secret", {{"secretName", "creds"}, {"items", {{{"key", "key"}, {"path", "id"}, {"mode", 0400}}}}}}}});
  PodVolumes v = Make();
  EXPECT_TRUE(v.Sync(pod).empty());
  const fs::path config = Vol(kConfigMapPlugin, "config");
  EXPECT_EQ(Slurp(config / "sub/dir/a.txt"), "A");
  EXPECT_EQ(ModeOf(config / "sub/dir/a.txt"), 0600u);
  EXPECT_FALSE(fs::exists(config / "b"));
  EXPECT_EQ(fs::read_symlink(config / "sub").string(), "..data/sub");
  const fs::path creds = Vol(kSecretPlugin, "creds");
  EXPECT_EQ(Slurp(creds / "id"), "s3cr3t");
  EXPECT_EQ(ModeOf(creds / "id"), 0400u);
}

TEST_F(VolumesTest, AMissingConfigMapIsAFailedMountRetriedWithBackOff) {
  const api::Object pod = Pod({{{"name", "config"}, {"configMap", {{"name", "cfg"}}}}});
  PodVolumes v = Make();
  EXPECT_EQ(v.Sync(pod),
            std::vector<std::string>{"MountVolume.SetUp failed for volume \"config\" : configmap \"cfg\" not found"});
  EXPECT_FALSE(v.Ready());
  EXPECT_EQ(v.NextSync(), clock_.Now() + 500ms);
  clock_.Advance(499ms);
  EXPECT_TRUE(v.Sync(pod).empty());  // not due yet
  clock_.Advance(1ms);
  EXPECT_EQ(v.Sync(pod).size(), 1u);
  EXPECT_EQ(v.NextSync(), clock_.Now() + 1s);  // doubled
  Create(kConfigMaps, {{"metadata", {{"name", "cfg"}}}, {"data", {{"k", "v"}}}});
  clock_.Advance(1s);
  EXPECT_TRUE(v.Sync(pod).empty());
  EXPECT_TRUE(v.Ready());
  EXPECT_EQ(Slurp(Vol(kConfigMapPlugin, "config") / "k"), "v");

  PodVolumes secret = Make();
  EXPECT_EQ(secret.Sync(Pod({{{"name", "creds"}, {"secret", {{"secretName", "nope"}}}}})),
            std::vector<std::string>{"MountVolume.SetUp failed for volume \"creds\" : secret \"nope\" not found"});
}

TEST_F(VolumesTest, OptionalSourcesAndMissingKeys) {
  Create(kConfigMaps, {{"metadata", {{"name", "cfg"}}}, {"data", {{"k", "v"}}}});
  PodVolumes optional = Make();
  EXPECT_TRUE(optional.Sync(Pod({{{"name", "o"}, {"configMap", {{"name", "gone"}, {"optional", true}}}}})).empty());
  EXPECT_TRUE(optional.Ready());
  EXPECT_TRUE(fs::is_directory(Vol(kConfigMapPlugin, "o")));
  EXPECT_FALSE(fs::exists(Vol(kConfigMapPlugin, "o") / "k"));

  PodVolumes key = Make();
  EXPECT_EQ(
      key.Sync(Pod({{{"name", "m"}, {"configMap", {{"name", "cfg"}, {"items", {{{"key", "x"}, {"path", "x"}}}}}}}})),
      std::vector<std::string>{
          "MountVolume.SetUp failed for volume \"m\" : configmap references non-existent config key: x"});
  PodVolumes optional_key = Make();
  EXPECT_TRUE(optional_key
                  .Sync(Pod({{{"name", "m"},
                              {"configMap",
                               {{"name", "cfg"},
                                {"optional", true},
                                {"items", {{{"key", "x"}, {"path", "x"}}, {{"key", "k"}, {"path", "k"}}}}}}}}))
                  .empty());
  EXPECT_EQ(Slurp(Vol(kConfigMapPlugin, "m") / "k"), "v");
}

TEST_F(VolumesTest, AConfigMapUpdateIsSwappedInAtomicallyAtTheResync) {
  Create(kConfigMaps, {{"metadata", {{"name", "cfg"}}}, {"data", {{"a", "1"}, {"b", "2"}}}});
  const api::Object pod = Pod({{{"name", "config"}, {"configMap", {{"name", "cfg"}}}}});
  PodVolumes v = Make();
  v.Sync(pod);
  const fs::path dir = Vol(kConfigMapPlugin, "config");
  const fs::path first = fs::read_symlink(dir / "..data");
  // Unchanged at the resync: the same directory.
  clock_.Advance(kVolumeResyncInterval);
  v.Sync(pod);
  EXPECT_EQ(fs::read_symlink(dir / "..data"), first);
  Update(kConfigMaps, "cfg", {{"a", "one"}, {"c", "3"}});
  clock_.Advance(kVolumeResyncInterval - 1s);
  v.Sync(pod);
  EXPECT_EQ(Slurp(dir / "a"), "1");  // not due yet
  clock_.Advance(1s);
  v.Sync(pod);
  EXPECT_NE(fs::read_symlink(dir / "..data"), first);
  EXPECT_FALSE(fs::exists(dir / first));  // the old directory is gone
  EXPECT_EQ(Slurp(dir / "a"), "one");
  EXPECT_EQ(Slurp(dir / "c"), "3");
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "b")));  // its link too
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "..data_tmp")));
}

TEST_F(VolumesTest, ProjectedMergesSourcesAndRequestsABoundTokenForTheAudience) {
  Create(kConfigMaps, {{"metadata", {{"name", "ca"}}}, {"data", {{"ca.crt", "PEM"}}}});
  const api::Object pod =
      Pod({{{"name", "kube-api"},
            {"projected",
             {{"defaultMode", 0440},
              {"sources",
               {{{"serviceAccountToken", {{"path", "token"}, {"audience", "vault"}, {"expirationSeconds", 7200}}}},
                {{"configMap", {{"name", "ca"}}}},
                {{"downwardAPI",
                  {{"items", {{{"path", "namespace"}, {"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}}}}}}}}}});
  PodVolumes v = Make();
  EXPECT_TRUE(v.Sync(pod).empty());
  ASSERT_EQ(client_.requests.size(), 1u);
  EXPECT_EQ(client_.requests[0].first, "team-a/serviceaccounts/default/token");
  EXPECT_EQ(client_.requests[0].second["spec"], nlohmann::json::parse(R"({"expirationSeconds":7200,
    "audiences":["vault"],"boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"p","uid":"uid-1"}})"));
  const fs::path dir = Vol(kProjectedPlugin, "kube-api");
  EXPECT_EQ(Slurp(dir / "token"), "token-1");
  EXPECT_EQ(Slurp(dir / "ca.crt"), "PEM");
  EXPECT_EQ(Slurp(dir / "namespace"), "team-a");
  EXPECT_EQ(ModeOf(dir / "token"), 0440u);
  // Refreshed at 80 % of its lifetime (5760 s), on the resync after it.
  clock_.Advance(5700s);
  v.Sync(pod);
  EXPECT_EQ(client_.requests.size(), 1u);
  clock_.Advance(60s);
  v.Sync(pod);
  EXPECT_EQ(client_.requests.size(), 2u);
  EXPECT_EQ(Slurp(dir / "token"), "token-2");
}

TEST_F(VolumesTest, DownwardApiWritesFieldsMapsAndResources) {
  const api::Object pod = Pod(
      {{{"name", "info"},
        {"downwardAPI",
         {{"items",
           {{{"path", "name"}, {"fieldRef", {{"fieldPath", "metadata.name"}}}},
            {{"path", "labels"}, {"fieldRef", {{"fieldPath", "metadata.labels"}}}},
            {{"path", "mem"},
             {"resourceFieldRef", {{"containerName", "c"}, {"resource", "limits.memory"}, {"divisor", "1Mi"}}}}}}}}}});
  PodVolumes v = Make();
  EXPECT_TRUE(v.Sync(pod).empty());
  const fs::path dir = Vol(kDownwardApiPlugin, "info");
  EXPECT_EQ(Slurp(dir / "name"), "p");
  EXPECT_EQ(Slurp(dir / "labels"), "app=\"train\"\nb=\"x\\\"y\"");
  EXPECT_EQ(Slurp(dir / "mem"), "256");
}

TEST_F(VolumesTest, HostPathMustBeAtOrBelowAnAllowedPrefixAfterSymlinks) {
  const std::string data = (root_ / "data").string();
  fs::create_symlink("/etc", root_ / "data" / "escape");
  fs::create_symlink(root_ / "data" / "models", root_ / "data" / "alias");
  auto mounts = [&](const std::string& path) {
    const api::Object pod =
        Pod({{{"name", "h"}, {"hostPath", {{"path", path}}}}}, {{{"name", "h"}, {"mountPath", "/mnt"}}});
    PodVolumes v = Make();
    EXPECT_TRUE(v.Sync(pod).empty());
    return v.MountsFor(Container(pod));
  };
  ASSERT_TRUE(mounts(data).ok());  // the prefix itself
  EXPECT_EQ(mounts(data)->at(0).source, fs::canonical(data).string());
  EXPECT_EQ(mounts(data + "/models")->at(0).source, fs::canonical(data + "/models").string());
  EXPECT_EQ(mounts(data + "/alias")->at(0).source, fs::canonical(data + "/models").string());
  const std::string allowed = " is not allowed on this node (allowed prefixes: " + data + ")";
  EXPECT_EQ(mounts(data + "2").status().message(), "hostPath volume \"h\" path \"" + data + "2\"" + allowed);
  EXPECT_EQ(mounts(data + "/escape").status().message(),
            "hostPath volume \"h\" path \"" + data + "/escape\"" + allowed);
  EXPECT_EQ(mounts(data + "/escape/new").status().message(),
            "hostPath volume \"h\" path \"" + data + "/escape/new\"" + allowed);
  EXPECT_FALSE(fs::exists("/etc/new"));
  EXPECT_EQ(mounts("/etc").status().code(), Code::kInvalid);
  EXPECT_EQ(mounts("relative").status().message(), "hostPath volume \"h\" path \"relative\" must be an absolute path");

  PodVolumes none(client_, clock_, {.pod_dir = (root_ / "pod").string()});
  const api::Object pod =
      Pod({{{"name", "h"}, {"hostPath", {{"path", data}}}}}, {{{"name", "h"}, {"mountPath", "/m"}}});
  none.Sync(pod);
  EXPECT_EQ(none.MountsFor(Container(pod)).status().message(),
            "hostPath volume \"h\" path \"" + data +
                "\" is not allowed on this node (this node allows no hostPath "
                "volumes)");
}

TEST_F(VolumesTest, HostPathNeverIsInOrAboveBerthsDataEvenUnderAnAllowedPrefix) {
  // The allowed prefix holds the server's data directory (as a test's $WORK does).
  const std::string data = (root_ / "data").string();
  const std::string berth = data + "/berth";
  fs::create_directories(berth + "/pki");
  fs::create_directories(data + "/models");
  fs::create_symlink(berth + "/pki", root_ / "data" / "keys");
  auto mounts = [&](const std::string& path) {
    const api::Object pod =
        Pod({{{"name", "h"}, {"hostPath", {{"path", path}}}}}, {{{"name", "h"}, {"mountPath", "/mnt"}}});
    PodVolumes::Options o;
    o.protected_paths = {berth};
    PodVolumes v = Make(o);
    EXPECT_TRUE(v.Sync(pod).empty());
    return v.MountsFor(Container(pod));
  };
  const std::string holds =
      "\" is not allowed on this node (it holds berth's data directory " + fs::canonical(berth).string() + ")";
  EXPECT_TRUE(mounts(data + "/models").ok());
  EXPECT_TRUE(mounts(data + "/berth2").ok());  // a sibling with the same string prefix
  EXPECT_EQ(mounts(data).status().message(), "hostPath volume \"h\" path \"" + data + holds);  // contains it
  EXPECT_EQ(mounts(berth).status().message(), "hostPath volume \"h\" path \"" + berth + holds);
  EXPECT_EQ(mounts(berth + "/pki").status().message(), "hostPath volume \"h\" path \"" + berth + "/pki" + holds);
  EXPECT_EQ(mounts(data + "/keys").status().message(), "hostPath volume \"h\" path \"" + data + "/keys" + holds);
  EXPECT_EQ(mounts(berth + "/new").status().message(), "hostPath volume \"h\" path \"" + berth + "/new" + holds);
  EXPECT_FALSE(fs::exists(berth + "/new"));
}

TEST_F(VolumesTest, HostPathTypesAreCheckedAndCreatedAsUpstream) {
  const std::string data = (root_ / "data").string();
  std::ofstream(data + "/file") << "x";
  auto sync = [&](const std::string& path, const std::string& type) {
    PodVolumes v = Make();
    return v.Sync(Pod({{{"name", "h"}, {"hostPath", {{"path", path}, {"type", type}}}}}));
  };
  const mode_t old_umask = umask(022);
  EXPECT_TRUE(sync(data + "/made/dir", "DirectoryOrCreate").empty());
  EXPECT_TRUE(fs::is_directory(data + "/made/dir"));
  EXPECT_EQ(sync(data + "/new.txt", "FileOrCreate"), std::vector<std::string>{});
  umask(old_umask);
  EXPECT_TRUE(fs::is_regular_file(data + "/new.txt"));
  // root:0755 directories and a root:0644 file, as the kubelet makes them (umask 022).
  struct stat st {};
  ASSERT_EQ(stat((data + "/made").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_EQ(st.st_uid, getuid());
  ASSERT_EQ(stat((data + "/new.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_TRUE(sync(data + "/untyped", "").empty());
  EXPECT_TRUE(fs::is_directory(data + "/untyped"));
  EXPECT_TRUE(sync(data + "/file", "File").empty());
  EXPECT_TRUE(sync(data, "Directory").empty());
  EXPECT_EQ(sync(data + "/absent", "Directory"),
            std::vector<std::string>{"MountVolume.SetUp failed for volume \"h\" : hostPath type check failed: " + data +
                                     "/absent is not a directory"});
  EXPECT_FALSE(fs::exists(data + "/absent"));
  EXPECT_EQ(sync(data, "File").at(0),
            "MountVolume.SetUp failed for volume \"h\" : hostPath type check failed: " + data + " is not a file");
  EXPECT_EQ(sync(data + "/file", "Socket").at(0).substr(42),
            "hostPath type check failed: " + data + "/file is not a socket file");
  EXPECT_EQ(sync(data + "/file", "CharDevice").at(0).substr(42),
            "hostPath type check failed: " + data + "/file is not a character device");
  EXPECT_EQ(sync(data + "/file", "BlockDevice").at(0).substr(42),
            "hostPath type check failed: " + data + "/file is not a block device");
}

// A pod that can write under the allowed prefix swaps a directory of the path for a
// symlink to a directory outside while the agent creates the missing rest: nothing
// is ever created outside the prefix (the creation walks descriptors, never a symlink).
TEST_F(VolumesTest, CreatingAMissingHostPathNeverFollowsASymlinkSwappedInByARacingPod) {
  const fs::path data = root_ / "data", outside = root_ / "outside";
  fs::create_directories(data / "team" / "victim");
  fs::create_directories(outside);
  fs::create_symlink(outside, data / "team" / "swap");
  std::atomic<bool> stop{false};
  std::thread swapper([&] {
    const std::string a = (data / "team" / "victim").string(), b = (data / "team" / "swap").string();
    while (!stop.load()) syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE);
  });
  int created = 0;
  for (int i = 0; i < 2000 && !HasFailure(); ++i) {
    for (const char* type : {"DirectoryOrCreate", "FileOrCreate"}) {
      const std::string leaf = std::string(type) == "FileOrCreate" ? "f" : "d/e";
      PodVolumes v = Make();
      if (v.Sync(Pod({{{"name", "h"},
                       {"hostPath", {{"path", (data / "team" / "victim" / leaf).string()}, {"type", type}}}}}))
              .empty()) {
        ++created;
      }
      ASSERT_TRUE(fs::is_empty(outside)) << "created outside the prefix at iteration " << i;
      std::error_code ec;
      for (const char* d : {"victim", "swap"}) {
        fs::remove_all(data / "team" / d / "d", ec);
        fs::remove(data / "team" / d / "f", ec);
      }
    }
  }
  stop = true;
  swapper.join();
  EXPECT_GT(created, 0);  // the race was not won by the swapper every time
}

TEST_F(VolumesTest, SubPathStaysInsideItsVolume) {
  PodVolumes v = Make();
  api::Object pod = Pod({{{"name", "s"}, {"emptyDir", api::Object::object()}}},
                        {{{"name", "s"}, {"mountPath", "/out"}, {"subPath", "run/1"}}});
  v.Sync(pod);
  const fs::path dir = Vol(kEmptyDirPlugin, "s");
  StatusOr<std::vector<SandboxMount>> ok = v.MountsFor(Container(pod));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->at(0).source, (fs::canonical(dir) / "run/1").string());
  EXPECT_TRUE(fs::is_directory(dir / "run/1"));  // made, as the kubelet does

  fs::create_symlink("/etc", dir / "out");  // a container could plant this
  pod["spec"]["containers"][0]["volumeMounts"][0]["subPath"] = "out";
  EXPECT_EQ(v.MountsFor(Container(pod)).status().message(),
            "volume mount \"s\": subPath \"out\" leads outside the volume");
  pod["spec"]["containers"][0]["volumeMounts"][0]["subPath"] = "out/new";
  EXPECT_EQ(v.MountsFor(Container(pod)).status().message(),
            "volume mount \"s\": subPath \"out/new\" leads outside the volume");
  EXPECT_FALSE(fs::exists("/etc/new"));
  pod["spec"]["containers"][0]["volumeMounts"][0]["subPath"] = "../x";
  EXPECT_EQ(v.MountsFor(Container(pod)).status().message(),
            "volume mount \"s\": subPath \"../x\" must be a relative path without '..'");
  pod["spec"]["containers"][0]["volumeMounts"][0].erase("subPath");
  pod["spec"]["containers"][0]["volumeMounts"][0]["subPathExpr"] = "$(POD)";
  EXPECT_EQ(v.MountsFor(Container(pod)).status().message(),
            "volume mount \"s\" at /out: subPathExpr is not implemented by berth");
}

TEST_F(VolumesTest, TheServiceAccountTokenIsMountedUnlessTheSpecOrContainerSaysOtherwise) {
  const std::string token_dir = (root_ / "pod" / kServiceAccountDir).string();
  const SandboxMount token{SandboxMount::Kind::kBind, token_dir, kServiceAccountMountPath, true, 0};
  api::Object pod = Pod(api::Object::array());
  PodVolumes on = Make({.service_account_tokens = true});
  on.Sync(pod);
  EXPECT_EQ(*on.MountsFor(Container(pod)), std::vector<SandboxMount>{token});
  EXPECT_TRUE(fs::is_directory(token_dir));  // the bind source exists before the token does

  PodVolumes off = Make();  // the node writes no tokens
  off.Sync(pod);
  EXPECT_TRUE(off.MountsFor(Container(pod))->empty());

  api::Object no = pod;
  no["spec"]["automountServiceAccountToken"] = false;
  PodVolumes pod_says = Make({.service_account_tokens = true});
  pod_says.Sync(no);
  EXPECT_TRUE(pod_says.MountsFor(Container(no))->empty());

  Create(kServiceAccounts, {{"metadata", {{"name", "quiet"}}}, {"automountServiceAccountToken", false}});
  api::Object quiet = pod;
  quiet["spec"]["serviceAccountName"] = "quiet";
  PodVolumes sa_says = Make({.service_account_tokens = true});
  sa_says.Sync(quiet);
  EXPECT_TRUE(sa_says.MountsFor(Container(quiet))->empty());
  quiet["spec"]["automountServiceAccountToken"] = true;  // the pod wins
  PodVolumes pod_wins = Make({.service_account_tokens = true});
  pod_wins.Sync(quiet);
  EXPECT_EQ(*pod_wins.MountsFor(Container(quiet)), std::vector<SandboxMount>{token});

  api::Object own = Pod({{{"name", "t"}, {"emptyDir", api::Object::object()}}},
                        {{{"name", "t"}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount/"}}});
  PodVolumes owned = Make({.service_account_tokens = true});
  owned.Sync(own);
  ASSERT_EQ(owned.MountsFor(Container(own))->size(), 1u);
  EXPECT_EQ(owned.MountsFor(Container(own))->at(0).kind, SandboxMount::Kind::kBind);
  EXPECT_EQ(owned.MountsFor(Container(own))->at(0).source, Vol(kEmptyDirPlugin, "t").string());
}

TEST_F(VolumesTest, ConfigurationErrorsOfMounts) {
  PodVolumes v = Make();
  api::Object pod = Pod({{{"name", "claim"}, {"persistentVolumeClaim", {{"claimName", "x"}}}}},
                        {{{"name", "claim"}, {"mountPath", "/d"}}});
  EXPECT_TRUE(v.Sync(pod).empty());
  EXPECT_TRUE(v.Ready());
  EXPECT_EQ(v.MountsFor(Container(pod)).status().message(),
            "volume \"claim\": persistentVolumeClaim volumes are not supported by berth");
  pod["spec"]["containers"][0]["volumeMounts"][0]["name"] = "other";
  EXPECT_EQ(v.MountsFor(Container(pod)).status().message(),
            "cannot find volume \"other\" to mount into container \"c\"");

  api::Object many = Pod(api::Object::array());
  for (size_t i = 0; i <= api::kMaxPodVolumes; ++i) {
    many["spec"]["volumes"].push_back({{"name", "v" + std::to_string(i)}, {"emptyDir", api::Object::object()}});
  }
  PodVolumes too_many = Make();
  too_many.Sync(many);
  EXPECT_TRUE(too_many.Ready());  // the containers get the error below instead of waiting
  EXPECT_EQ(too_many.MountsFor(Container(many)).status().message(),
            "the pod has 257 volumes, more than the 256 a node sets up");
  EXPECT_FALSE(fs::exists(Vol(kEmptyDirPlugin, "v0")));
}

TEST_F(VolumesTest, AtomicWriterRefusesPathsOutsideItsDirectory) {
  const std::string dir = (root_ / "w").string();
  for (const char* bad : {"../x", "/abs", "a/../../x", "..data"}) {
    Status s = WriteAtomicPayload(dir, {{bad, {"x", 0644}}}, clock_.Now());
    EXPECT_EQ(s.code(), Code::kInvalid) << bad;
  }
  EXPECT_FALSE(fs::exists(root_ / "x"));
}

TEST_F(VolumesTest, VolumesBelongToThePodUserOrItsFsGroup) {
  if (::geteuid() != 0) GTEST_SKIP() << "chown needs root";
  Create(kConfigMaps, {{"metadata", {{"name", "cfg"}}}, {"data", {{"k", "v"}}}});
  api::Object pod = Pod({{{"name", "config"}, {"configMap", {{"name", "cfg"}, {"defaultMode", 0400}}}},
                         {{"name", "scratch"}, {"emptyDir", api::Object::object()}}});
  PodVolumes plain = Make({.owner = shim::SandboxUser{200001, 200001, {}}});
  ASSERT_TRUE(plain.Sync(pod).empty());
  struct stat st {};
  ASSERT_EQ(::stat((Vol(kConfigMapPlugin, "config") / "k").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200001u);
  EXPECT_EQ(st.st_gid, 200001u);
  EXPECT_EQ(st.st_mode & 07777, 0400u);
  ASSERT_EQ(::stat(Vol(kEmptyDirPlugin, "scratch").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 200001u);

  fs::remove_all(root_ / "pod" / "volumes");
  pod["spec"]["securityContext"]["fsGroup"] = 3000;
  PodVolumes grouped = Make({.owner = shim::SandboxUser{200001, 200001, {3000}}});
  ASSERT_TRUE(grouped.Sync(pod).empty());
  ASSERT_EQ(::stat((Vol(kConfigMapPlugin, "config") / "k").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 3000u);
  EXPECT_EQ(st.st_mode & 07777, 0440u);  // group-readable
  const fs::path ts = Vol(kConfigMapPlugin, "config") / fs::read_symlink(Vol(kConfigMapPlugin, "config") / "..data");
  EXPECT_EQ(ModeOf(ts), 02755u);  // setgid
  ASSERT_EQ(::stat(Vol(kEmptyDirPlugin, "scratch").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 3000u);
  EXPECT_EQ(st.st_mode & 07777, 02777u);
  clock_.Advance(kVolumeResyncInterval);  // unchanged: not rewritten
  ASSERT_TRUE(grouped.Sync(pod).empty());
  EXPECT_EQ(Vol(kConfigMapPlugin, "config") / fs::read_symlink(Vol(kConfigMapPlugin, "config") / "..data"), ts);
}

}  // namespace
}  // namespace berth::agent
