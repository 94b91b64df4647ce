// ClusterView over a FakeClient: relations as Kueue and the job controllers record them.
#include "cli/diagnostics/cluster_view.h"

#include <gtest/gtest.h>

#include "client/testing/fake_client.h"

namespace berth::cli::diagnostics {
namespace {

class ClusterViewTest : public ::testing::Test {
 protected:
  ClusterViewTest() : client_(clock_) {}

  api::Object Create(const client::GroupVersionResource& gvr, const std::string& ns, api::Object obj) {
    auto res = client_.Create(gvr.Namespace(ns), obj);
    EXPECT_TRUE(res.ok()) << res.status().ToString();
    return res.ok() ? res.value() : api::Object();
  }
  static api::Object Owned(const std::string& kind, const std::string& name, const std::string& ns,
                           const api::Object& owner) {
    api::Object meta = {{"name", name}, {"namespace", ns}};
    if (!owner.is_null()) {
      meta["ownerReferences"] = {{{"kind", owner.value("kind", "")}, {"name", api::Name(owner)}, {"uid", api::Uid(owner)}}};
    }
    return {{"kind", kind}, {"metadata", meta}};
  }
  ClusterView Fetch() {
    auto v = ClusterView::Fetch(client_);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    return v.ok() ? std::move(v).value() : ClusterView();
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
};

TEST_F(ClusterViewTest, PodsOfFollowTheOwnerChainAndWorkloadForTheOwnerReference) {
  // TrainJob -> JobSet -> Job -> Pods, as the Trainer, JobSet and Job controllers write them.
  api::Object tj = Create(resources::kTrainJobs, "t", Owned("TrainJob", "llm", "t", nullptr));
  api::Object js = Create(resources::kJobSets, "t", Owned("JobSet", "llm", "t", tj));
  api::Object job = Create(resources::kJobs, "t", Owned("Job", "llm-node-0", "t", js));
  Create(resources::kPods, "t", Owned("Pod", "llm-node-0-1", "t", job));
  Create(resources::kPods, "t", Owned("Pod", "llm-node-0-0", "t", job));
  Create(resources::kPods, "t", Owned("Pod", "other", "t", nullptr));
  Create(resources::kWorkloads, "t", Owned("Workload", "trainjob-llm-5f2a1", "t", tj));

  ClusterView view = Fetch();
  const api::Object* trainjob = view.Find(resources::kTrainJobs, "t", "llm");
  ASSERT_NE(trainjob, nullptr);
  std::vector<std::string> names;
  for (const api::Object* p : view.PodsOf(*trainjob)) names.push_back(api::Name(*p));
  EXPECT_EQ(names, (std::vector<std::string>{"llm-node-0-0", "llm-node-0-1"}));
  EXPECT_EQ(view.PodsOf(*view.Find(resources::kJobs, "t", "llm-node-0")).size(), 2u);
  const api::Object* wl = view.WorkloadFor(*trainjob);
  ASSERT_NE(wl, nullptr);
  EXPECT_EQ(api::Name(*wl), "trainjob-llm-5f2a1");
  EXPECT_EQ(view.WorkloadFor(*view.Find(resources::kJobSets, "t", "llm")), nullptr);
  EXPECT_EQ(view.FindByUid(api::Uid(js)), view.Find(resources::kJobSets, "t", "llm"));
}

TEST_F(ClusterViewTest, NodeCapacitySumsTheNodesAFlavorSelects) {
  auto node = [&](const std::string& name, const std::string& pool, const std::string& cpu) {
    Create(resources::kNodes, "",
           {{"kind", "Node"},
            {"metadata", {{"name", name}, {"labels", {{"pool", pool}}}}},
            {"status", {{"allocatable", {{"cpu", cpu}, {"nvidia.com/gpu", "8"}}}}}});
  };
  node("gpu-b", "gpu", "31500m");
  node("gpu-a", "gpu", "32");
  node("cpu-a", "cpu", "16");
  Create(resources::kResourceFlavors, "",
         {{"kind", "ResourceFlavor"}, {"metadata", {{"name", "a100"}}}, {"spec", {{"nodeLabels", {{"pool", "gpu"}}}}}});
  Create(resources::kResourceFlavors, "", {{"kind", "ResourceFlavor"}, {"metadata", {{"name", "any"}}}});

  ClusterView view = Fetch();
  FlavorCapacity gpu = view.NodeCapacity(*view.ResourceFlavor("a100"));
  EXPECT_EQ(gpu.nodes, (std::vector<std::string>{"gpu-a", "gpu-b"}));
  EXPECT_EQ(gpu.allocatable.at("cpu").milli(), 63500);
  EXPECT_EQ(gpu.allocatable.at("nvidia.com/gpu").milli(), 16000);
  FlavorCapacity any = view.NodeCapacity(*view.ResourceFlavor("any"));
  EXPECT_EQ(any.nodes.size(), 3u);
  EXPECT_EQ(any.allocatable.at("cpu").milli(), 79500);
}

TEST_F(ClusterViewTest, QueuesPriorityClassesAndEvents) {
  Create(resources::kClusterQueues, "", {{"kind", "ClusterQueue"}, {"metadata", {{"name", "cq"}}}});
  Create(resources::kLocalQueues, "t",
         {{"kind", "LocalQueue"}, {"metadata", {{"name", "lq"}, {"namespace", "t"}}}, {"spec", {{"clusterQueue", "cq"}}}});
  Create(resources::kLocalQueues, "t",
         {{"kind", "LocalQueue"}, {"metadata", {{"name", "dangling"}, {"namespace", "t"}}}, {"spec", {{"clusterQueue", "gone"}}}});
  Create(resources::kPriorityClasses, "", {{"kind", "PriorityClass"}, {"metadata", {{"name", "low"}}}, {"value", 10}, {"globalDefault", true}});
  Create(resources::kPriorityClasses, "", {{"kind", "PriorityClass"}, {"metadata", {{"name", "high"}}}, {"value", 1000}});
  api::Object pod = Create(resources::kPods, "t", Owned("Pod", "p", "t", nullptr));
  auto event = [&](const std::string& name, const std::string& when, const std::string& uid) {
    Create(resources::kEvents, "t",
           {{"kind", "Event"},
            {"metadata", {{"name", name}, {"namespace", "t"}}},
            {"involvedObject", {{"kind", "Pod"}, {"namespace", "t"}, {"name", "p"}, {"uid", uid}}},
            {"lastTimestamp", when}});
  };
  event("p.b", "2026-01-01T00:00:05Z", api::Uid(pod));
  event("p.a", "2026-01-01T00:00:09Z", api::Uid(pod));
  event("p.c", "2026-01-01T00:00:05Z", api::Uid(pod));
  event("old", "2026-01-01T00:00:01Z", "uid-of-an-earlier-pod-named-p");

  ClusterView view = Fetch();
  EXPECT_EQ(api::Name(*view.ClusterQueueFor(*view.LocalQueue("t", "lq"))), "cq");
  EXPECT_EQ(view.ClusterQueueFor(*view.LocalQueue("t", "dangling")), nullptr);
  EXPECT_EQ(api::Name(*view.ResolvePriorityClass("")), "low");
  EXPECT_EQ(api::Name(*view.ResolvePriorityClass("high")), "high");
  EXPECT_EQ(view.ResolvePriorityClass("missing"), nullptr);
  std::vector<std::string> names;
  for (const api::Object* e : view.EventsFor(*view.Find(resources::kPods, "t", "p"))) names.push_back(api::Name(*e));
  EXPECT_EQ(names, (std::vector<std::string>{"p.b", "p.c", "p.a"}));
}

TEST_F(ClusterViewTest, FetchSkipsKindsTheServerDoesNotServeAndFailsOnOtherErrors) {
  client_.InjectError("list", Status(Code::kNotFound, "the server could not find the requested resource"));
  EXPECT_TRUE(ClusterView::Fetch(client_).ok());
  client_.InjectError("list", Status(Code::kForbidden, "workloads.kueue.x-k8s.io is forbidden"));
  auto denied = ClusterView::Fetch(client_);
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.status().code(), Code::kForbidden);
}

}  // namespace
}  // namespace berth::cli::diagnostics
