// NamespaceSecurityController through FakeClient: blocks never overlap, are read back
// after a restart (a new controller over the same store), are never handed out again
// after a delete, seed the former pod-users.json table, and run out with an error.
#include "controllers/namespacesecurity/namespace_security_controller.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

#include "api/unstructured.h"
#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "core/clock.h"

namespace berth::controllers::namespacesecurity {
namespace {

using namespace std::chrono_literals;

class NamespaceSecurityControllerTest : public ::testing::Test {
 protected:
  NamespaceSecurityControllerTest()
      : client_(clock_),
        factory_(client_, clock_, client::testing::FastInformerOptions()),
        namespaces_(factory_.ForResource(kNamespaces)) {
    factory_.Start();
    EXPECT_TRUE(factory_.WaitForCacheSync(10s));
    CreateNamespace(kAllocatorNamespace);
  }
  ~NamespaceSecurityControllerTest() override { factory_.Shutdown(); }

  void CreateNamespace(const std::string& name, const std::string& phase = "Active") {
    api::Object ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
    auto created = client_.Create(kNamespaces, ns);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    api::Object with_status = *created;
    with_status["status"] = {{"phase", phase}};
    ASSERT_TRUE(client_.UpdateStatus(kNamespaces, with_status).ok());
  }
  void Sync() { ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&namespaces_})); }
  // The namespace's two annotations ("" when absent), checked equal.
  std::string Block(const std::string& name) {
    auto ns = client_.Get(kNamespaces, name);
    EXPECT_TRUE(ns.ok()) << ns.status().ToString();
    if (!ns.ok()) return "";
    const std::string uids = api::NestedString(*ns, {"metadata", "annotations", api::kUidRangeAnnotation});
    EXPECT_EQ(uids, api::NestedString(*ns, {"metadata", "annotations", api::kSupplementalGroupsAnnotation}));
    return uids;
  }
  Status Reconcile(NamespaceSecurityController& ctl, const std::string& name) {
    Sync();
    return ctl.Reconcile(name);
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  client::Informer& namespaces_;
};

TEST_F(NamespaceSecurityControllerTest, BlocksDoNotOverlapSurviveARestartAndAreNeverReused) {
  {
    NamespaceSecurityController ctl(client_, namespaces_);
    CreateNamespace("team-a");
    CreateNamespace("team-b");
    ASSERT_TRUE(Reconcile(ctl, "team-a").ok());
    ASSERT_TRUE(Reconcile(ctl, "team-b").ok());
    ASSERT_TRUE(Reconcile(ctl, "team-a").ok());  // allocated: unchanged
  }
  EXPECT_EQ(Block("team-a"), "1000000000/10000");
  EXPECT_EQ(Block("team-b"), "1000010000/10000");
  // A new controller (a restarted server) reads the record from the store.
  NamespaceSecurityController restarted(client_, namespaces_);
  CreateNamespace("team-c");
  ASSERT_TRUE(Reconcile(restarted, "team-c").ok());
  EXPECT_EQ(Block("team-c"), "1000020000/10000");
  // team-b deleted and recreated: a new block, not its old one.
  ASSERT_TRUE(client_.Delete(kNamespaces, "team-b").ok());
  CreateNamespace("team-b");
  ASSERT_TRUE(Reconcile(restarted, "team-b").ok());
  EXPECT_EQ(Block("team-b"), "1000030000/10000");
  // Terminating and missing namespaces get nothing.
  CreateNamespace("going", "Terminating");
  ASSERT_TRUE(Reconcile(restarted, "going").ok());
  EXPECT_EQ(Block("going"), "");
  EXPECT_TRUE(Reconcile(restarted, "nothing").ok());
  EXPECT_EQ(api::NestedString(*client_.Get(kNamespaces, kAllocatorNamespace),
                              {"metadata", "annotations", kNextUidAnnotation}),
            "1000040000");
}

TEST_F(NamespaceSecurityControllerTest, ARangeThatRunsOutIsAnErrorAndNoBlockIsShared) {
  NamespaceSecurityOptions options;
  options.first = 5000;
  options.count = 25;
  options.block_size = 10;
  NamespaceSecurityController ctl(client_, namespaces_, options);
  for (const char* ns : {"a", "b", "c"}) CreateNamespace(ns);
  ASSERT_TRUE(Reconcile(ctl, "a").ok());
  ASSERT_TRUE(Reconcile(ctl, "b").ok());
  Status s = Reconcile(ctl, "c");
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_EQ(s.message(), "no free block of 10 ids left in [5000, 5025) for namespace \"c\"");
  EXPECT_EQ(Block("a"), "5000/10");
  EXPECT_EQ(Block("b"), "5010/10");
  EXPECT_EQ(Block("c"), "");
}

TEST_F(NamespaceSecurityControllerTest, TheFormerPodUsersTableKeepsEachNamespaceItsUid) {
  const std::string dir = ::testing::TempDir() + "/nssec-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + kLegacyPodUsersFile;
  EXPECT_TRUE(ReadLegacyPodUsers(path)->empty());  // no file: nothing to seed
  std::ofstream(path) << R"({"version":1,"namespaces":{"team-a":200000,"team-b":200001,"gone":1000012345}})";
  auto legacy = ReadLegacyPodUsers(path);
  ASSERT_TRUE(legacy.ok()) << legacy.status().ToString();
  NamespaceSecurityOptions options;
  options.legacy_uids = *legacy;
  NamespaceSecurityController ctl(client_, namespaces_, options);
  CreateNamespace("team-a");
  CreateNamespace("team-b");
  CreateNamespace("team-new");
  // Reconciling any namespace first seeds all of the table's namespaces that exist.
  ASSERT_TRUE(Reconcile(ctl, "team-new").ok());
  EXPECT_EQ(Block("team-a"), "200000/1");
  EXPECT_EQ(Block("team-b"), "200001/1");
  // New blocks start above every old uid (also a namespace's that is gone).
  EXPECT_EQ(Block("team-new"), "1000012346/10000");
  ASSERT_TRUE(Reconcile(ctl, "team-a").ok());
  EXPECT_EQ(Block("team-a"), "200000/1");
  // Once recorded, the table is not read again: a namespace named in it that is created
  // later is a new namespace with a new block.
  CreateNamespace("gone");
  ASSERT_TRUE(Reconcile(ctl, "gone").ok());
  EXPECT_EQ(Block("gone"), "1000022346/10000");

  std::ofstream(path) << "{not json";
  EXPECT_EQ(ReadLegacyPodUsers(path).status().code(), Code::kInvalid);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace berth::controllers::namespacesecurity
