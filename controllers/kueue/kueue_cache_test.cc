// KueueCache::QueueSnapshot: the queue tree is rebuilt when a flavor,
// ClusterQueue or Cohort is added, deleted or changes its spec or
// deletionTimestamp, and reused across status writes (a ClusterQueue's status
// reconcile must not cost O(queues)).
#include "controllers/kueue/kueue_cache.h"

#include <gtest/gtest.h>

#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "controllers/kueue/decoder.h"

namespace berth::controllers::kueue {
namespace {

api::Object ClusterQueue(const std::string& name, const std::string& cpu, const std::string& cohort = "") {
  api::Object cq = {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                    {"kind", "ClusterQueue"},
                    {"metadata", {{"name", name}}},
                    {"spec",
                     {{"resourceGroups",
                       {{{"coveredResources", {"cpu"}},
                         {"flavors", {{{"name", "default"}, {"resources", {{{"name", "cpu"}, {"nominalQuota", cpu}}}}}}}}}}}}};
  if (!cohort.empty()) cq["spec"]["cohortName"] = cohort;
  return cq;
}

class QueueSnapshotTest : public ::testing::Test {
 protected:
  QueueSnapshotTest() : client_(clock_), factory_(client_, clock_, client::testing::FastInformerOptions()), cache_(factory_) {}
  ~QueueSnapshotTest() override { factory_.Shutdown(); }

  void SetUp() override {
    ASSERT_TRUE(client_
                    .Create(kResourceFlavors, {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                               {"kind", "ResourceFlavor"},
                                               {"metadata", {{"name", "default"}}}})
                    .ok());
    ASSERT_TRUE(client_.Create(kClusterQueues, ClusterQueue("a", "4")).ok());
    factory_.Start();
    ASSERT_TRUE(factory_.WaitForCacheSync(std::chrono::seconds(10)));
    Wait();
  }
  void Wait() { ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, cache_.informers())); }
  api::Object GetCq(const std::string& name) { return client_.Get(kClusterQueues, name).value(); }
  int64_t NominalCpu(const admission::Snapshot& s, const std::string& cq) {
    const int idx = s.ClusterQueueIndex(cq);
    return idx < 0 ? -1 : s.Spec(idx).resource_groups.at(0).flavors.at(0).resources.at(0).nominal;
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  KueueCache cache_;
};

TEST_F(QueueSnapshotTest, StatusWritesReuseTheTreeAndSpecChangesRebuildIt) {
  const auto first = cache_.QueueSnapshot();
  EXPECT_EQ(NominalCpu(*first, "a"), 4000);
  EXPECT_EQ(cache_.QueueSnapshot(), first);

  // A status write: the same tree.
  api::Object cq = GetCq("a");
  cq["status"] = {{"pendingWorkloads", 3}};
  ASSERT_TRUE(client_.UpdateStatus(kClusterQueues, cq).ok());
  Wait();
  EXPECT_EQ(cache_.QueueSnapshot(), first);

  // A spec change: a new tree with the new quota.
  cq = GetCq("a");
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "6";
  ASSERT_TRUE(client_.Update(kClusterQueues, cq).ok());
  Wait();
  const auto second = cache_.QueueSnapshot();
  EXPECT_NE(second, first);
  EXPECT_EQ(NominalCpu(*second, "a"), 6000);
  EXPECT_EQ(NominalCpu(*first, "a"), 4000);  // a reader's tree does not change under it

  // A ClusterQueue added (in a cohort), then deleted.
  ASSERT_TRUE(client_.Create(kClusterQueues, ClusterQueue("b", "2", "team")).ok());
  Wait();
  const auto third = cache_.QueueSnapshot();
  ASSERT_GE(third->ClusterQueueIndex("b"), 0);
  EXPECT_TRUE(third->HasParent(third->ClusterQueueIndex("b")));
  ASSERT_TRUE(client_.Delete(kClusterQueues, "b").ok());
  Wait();
  EXPECT_LT(cache_.QueueSnapshot()->ClusterQueueIndex("b"), 0);

  // The flavor deleted: "a" loses it (inactive).
  ASSERT_TRUE(client_.Delete(kResourceFlavors, "default").ok());
  Wait();
  const auto fourth = cache_.QueueSnapshot();
  EXPECT_FALSE(fourth->Active(fourth->ClusterQueueIndex("a")));
  EXPECT_TRUE(second->Active(second->ClusterQueueIndex("a")));
}

}  // namespace
}  // namespace berth::controllers::kueue
