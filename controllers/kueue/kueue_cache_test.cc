// KueueCache::QueueSnapshot: the queue tree is rebuilt when a flavor,
// ClusterQueue or Cohort is added, deleted or changes its spec or
// deletionTimestamp, and reused across status writes (a ClusterQueue's status
// reconcile must not cost O(queues)).
#include "controllers/kueue/kueue_cache.h"

#include <gtest/gtest.h>

#include "api/conditions.h"
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

// A Cohort's spec (its parent) is read by the tree; its status is not.
TEST_F(QueueSnapshotTest, ACohortsParentRebuildsTheTreeAndItsStatusDoesNot) {
  ASSERT_TRUE(client_.Create(kClusterQueues, ClusterQueue("b", "2", "team")).ok());
  ASSERT_TRUE(client_
                  .Create(kCohorts, {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                     {"kind", "Cohort"},
                                     {"metadata", {{"name", "team"}}},
                                     {"spec", api::Object::object()}})
                  .ok());
  Wait();
  const auto before = cache_.QueueSnapshot();
  EXPECT_FALSE(before->HasParent(before->CohortIndex("team")));

  api::Object cohort = client_.Get(kCohorts, "team").value();
  cohort["status"] = {{"fairSharing", {{"weightedShare", 0}}}};
  ASSERT_TRUE(client_.UpdateStatus(kCohorts, cohort).ok());
  api::Object flavor = client_.Get(kResourceFlavors, "default").value();
  flavor["metadata"]["labels"] = {{"seen", "yes"}};  // metadata the decoder does not read
  ASSERT_TRUE(client_.Update(kResourceFlavors, flavor).ok());
  Wait();
  EXPECT_EQ(cache_.QueueSnapshot(), before);

  cohort = client_.Get(kCohorts, "team").value();
  cohort["spec"]["parentName"] = "org";
  ASSERT_TRUE(client_.Update(kCohorts, cohort).ok());
  Wait();
  const auto after = cache_.QueueSnapshot();
  ASSERT_NE(after, before);
  const int team = after->CohortIndex("team");
  ASSERT_TRUE(after->HasParent(team));
  EXPECT_EQ(after->NodeName(after->Parent(team)), "org");
}

// A Workload holding `cpu` of flavor "default" in ClusterQueue `cq`.
api::Object Holder(const std::string& name, const std::string& cq, const std::string& cpu) {
  api::Object wl = api::Object::parse(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
    "metadata": {"namespace": "ns"},
    "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": []}}}]},
    "status": {
      "admission": {"podSetAssignments": [{"name": "main", "count": 1, "flavors": {"cpu": "default"}}]},
      "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                      "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})");
  wl["metadata"]["name"] = name;
  wl["metadata"]["uid"] = "uid-" + name;
  wl["status"]["admission"]["clusterQueue"] = cq;
  wl["status"]["admission"]["podSetAssignments"][0]["resourceUsage"] = {{"cpu", cpu}};
  return wl;
}

// BuildSnapshot(&cluster_queues) adds the listed ClusterQueues' holders only
// (informer and assumed), so their usage and their Cohort's read as in a full
// build when the Cohort's subtree is the list.
TEST_F(QueueSnapshotTest, APartialSnapshotHoldsTheListedQueuesHolders) {
  ASSERT_TRUE(client_.Create(kClusterQueues, ClusterQueue("b", "4", "team")).ok());
  ASSERT_TRUE(client_.Create(kClusterQueues, ClusterQueue("c", "4", "team")).ok());
  for (auto [name, cq] : {std::pair{"wa", "a"}, {"wb", "b"}, {"wc", "c"}}) {
    ASSERT_TRUE(client_.Create(kWorkloads.Namespace("ns"), Holder(name, cq, "1")).ok());
  }
  // A pending Workload whose admission to "a" the informer has not shown yet.
  api::Object pending = Holder("wa2", "a", "2");
  pending.erase("status");
  auto created = client_.Create(kWorkloads.Namespace("ns"), pending);
  ASSERT_TRUE(created.ok());
  Wait();
  api::Object assumed = Holder("wa2", "a", "2");
  assumed["metadata"] = created.value()["metadata"];
  assumed["metadata"]["resourceVersion"] = "999999";
  cache_.Assume(assumed);

  auto usage = [](const admission::Snapshot& s, const std::string& node_name) {
    int node = s.ClusterQueueIndex(node_name);
    if (node < 0) node = s.CohortIndex(node_name);
    return s.Usage(node, s.FindFr(s.FlavorIndex("default"), s.names().Find("cpu")));
  };
  const admission::Snapshot full = cache_.BuildSnapshot();
  EXPECT_EQ(usage(full, "a"), 3000);
  EXPECT_EQ(usage(full, "b"), 1000);
  EXPECT_EQ(usage(full, "team"), 2000);

  const std::vector<std::string> team = {"b", "c"};
  const admission::Snapshot partial = cache_.BuildSnapshot(&team);
  EXPECT_EQ(usage(partial, "team"), usage(full, "team"));
  EXPECT_EQ(usage(partial, "b"), 1000);
  EXPECT_EQ(usage(partial, "a"), 0);

  const std::vector<std::string> only_a = {"a"};
  EXPECT_EQ(usage(cache_.BuildSnapshot(&only_a), "a"), 3000);  // the assumed one included
  EXPECT_EQ(usage(cache_.BuildSnapshot(&only_a), "team"), 0);
}

// Writers of one Workload (the scheduler's admission, a pending verdict, a job
// reconciler's condition) assume their results in whatever order their threads
// get to it. Whatever that order, the newest write is what the cache shows
// until the informer catches up, so an admission is never hidden behind the
// older pending verdict assumed after it (a cycle would count its quota as
// free and admit another workload into it).
TEST_F(QueueSnapshotTest, TheNewestOfTheAssumedWritesStaysWhateverTheOrderTheyAreAssumedIn) {
  auto cpu_held = [&] {
    const admission::Snapshot s = cache_.BuildSnapshot();
    return s.Usage(s.ClusterQueueIndex("a"), s.FindFr(s.FlavorIndex("default"), s.names().Find("cpu")));
  };
  int n = 0;
  for (const bool admission_first : {true, false}) {
    SCOPED_TRACE(admission_first ? "the admission assumed first" : "the verdict assumed first");
    const std::string name = "w" + std::to_string(n++);
    api::Object pending = Holder(name, "a", "3");
    pending.erase("status");
    auto created = client_.Create(kWorkloads.Namespace("ns"), pending);
    ASSERT_TRUE(created.ok());
    Wait();
    // Two writes after the one the informer shows: a pending verdict, then the admission.
    api::Object verdict = created.value();
    verdict["status"]["conditions"] = api::Object::parse(
        R"([{"type": "QuotaReserved", "status": "False", "reason": "Pending",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}])");
    verdict["metadata"]["resourceVersion"] = "999998";
    api::Object admitted = Holder(name, "a", "3");
    admitted["metadata"] = created.value()["metadata"];
    admitted["metadata"]["resourceVersion"] = "999999";
    if (admission_first) {
      cache_.Assume(admitted);
      cache_.Assume(verdict);
    } else {
      cache_.Assume(verdict);
      cache_.Assume(admitted);
    }
    client::ObjectPtr shown = cache_.GetWorkload("ns/" + name);
    ASSERT_NE(shown, nullptr);
    EXPECT_EQ(api::ResourceVersion(*shown), "999999");
    EXPECT_TRUE(api::IsConditionTrue(*shown, "QuotaReserved"));
    EXPECT_EQ(cpu_held(), 3000 * n);  // this one and the previous one
  }
}

}  // namespace
}  // namespace berth::controllers::kueue
