// TerminatedPodGC over FakeClient: an informer fed by the FakeClient's watch;
// Collect driven synchronously once the cache matches the server.
#include "controllers/podgc/terminated_pod_gc.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "core/clock.h"

namespace berth::controllers::podgc {
namespace {

using namespace std::chrono_literals;

const client::GroupVersionResource kPods{"", "v1", "pods"};

class TerminatedPodGCTest : public ::testing::Test {
 protected:
  TerminatedPodGCTest()
      : client_(clock_),
        factory_(client_, clock_, client::testing::FastInformerOptions()),
        pods_(factory_.ForResource(kPods)) {
    factory_.Start();
    EXPECT_TRUE(factory_.WaitForCacheSync(10s));
  }
  ~TerminatedPodGCTest() override { factory_.Shutdown(); }

  // A pod in `phase`, created one second of the FakeClock after the previous one.
  void Pod(const std::string& ns, const std::string& name, const std::string& phase, bool finalizer = false) {
    clock_.Advance(1s);
    api::Object pod = api::Object::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "spec": {"nodeName": "node-0", "containers": [{"name": "main", "image": "x"}]}})");
    pod["metadata"] = {{"name", name}, {"namespace", ns}};
    if (finalizer) pod["metadata"]["finalizers"] = {"batch.kubernetes.io/job-tracking"};
    auto made = client_.Create(kPods.Namespace(ns), pod);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    api::Object stored = made.value();
    stored["status"]["phase"] = phase;
    ASSERT_TRUE(client_.UpdateStatus(kPods.Namespace(ns), stored).ok());
  }
  std::set<std::string> Names() {
    std::set<std::string> out;
    auto list = client_.List(kPods);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    if (!list.ok()) return out;
    for (const api::Object& p : list.value().items) {
      out.insert(api::Namespace(p) + "/" + api::Name(p));
    }
    return out;
  }
  StatusOr<int64_t> Collect(int64_t threshold) {
    EXPECT_TRUE(client::testing::WaitForCachesToMatch(client_, {&pods_}));
    return TerminatedPodGC(client_, pods_, threshold).Collect();
  }

  FakeClock clock_;
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  client::Informer& pods_;
};

TEST_F(TerminatedPodGCTest, TheOldestTerminalPodsBeyondTheThresholdAreDeletedAndNoOtherPod) {
  // Created in this order: names do not sort as creation does.
  Pod("b", "running-0", "Running");  // older than all: never collected
  Pod("b", "pending-0", "Pending");
  Pod("z", "failed-1", "Failed");
  Pod("y", "done-2", "Succeeded");
  Pod("a", "done-3", "Succeeded");
  Pod("a", "done-4", "Succeeded");
  Pod("a", "done-5", "Succeeded");

  auto deleted = Collect(3);  // 5 terminal, 3 kept: the two oldest go
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, 2);
  EXPECT_EQ(Names(), (std::set<std::string>{"a/done-3", "a/done-4", "a/done-5", "b/running-0", "b/pending-0"}));

  // At the threshold: nothing more.
  deleted = Collect(3);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 0);
  EXPECT_EQ(Names().size(), 5u);
}

TEST_F(TerminatedPodGCTest, AThresholdOfZeroOrLessCollectsNothing) {
  Pod("a", "done-1", "Succeeded");
  Pod("a", "done-2", "Failed");
  for (int64_t threshold : {0, -1}) {
    auto deleted = Collect(threshold);
    ASSERT_TRUE(deleted.ok());
    EXPECT_EQ(*deleted, 0);
  }
  EXPECT_EQ(Names().size(), 2u);
}

// A pod whose Job has not counted it yet keeps its job-tracking finalizer: the delete only
// marks it, and a pod already marked is neither counted again nor deleted again.
TEST_F(TerminatedPodGCTest, APodHeldByAFinalizerIsMarkedOnceAndNotCountedAfter) {
  Pod("a", "held-1", "Succeeded", /*finalizer=*/true);
  Pod("a", "done-2", "Succeeded");
  Pod("a", "done-3", "Succeeded");

  auto deleted = Collect(2);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 1);
  auto held = client_.Get(kPods.Namespace("a"), "held-1");
  ASSERT_TRUE(held.ok()) << "a pod with a finalizer is marked, not removed";
  EXPECT_TRUE(held.value()["metadata"].contains("deletionTimestamp"));

  // Marked: out of the count, so the two others stay.
  deleted = Collect(2);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 0);
  EXPECT_EQ(Names(), (std::set<std::string>{"a/held-1", "a/done-2", "a/done-3"}));
}

// One collector for the server's life: the pods it counts are those terminal now, as they
// change after it was made (a running pod that fails later counts; one being deleted does not).
TEST_F(TerminatedPodGCTest, ACollectorMadeBeforeThePodsCountsThemAsTheyFinish) {
  TerminatedPodGC gc(client_, pods_, 1);
  Pod("a", "running-1", "Running");
  Pod("a", "done-2", "Succeeded");
  ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&pods_}));
  EXPECT_EQ(gc.Collect().value(), 0);

  api::Object failed = client_.Get(kPods.Namespace("a"), "running-1").value();
  failed["status"]["phase"] = "Failed";
  ASSERT_TRUE(client_.UpdateStatus(kPods.Namespace("a"), failed).ok());
  ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&pods_}));
  EXPECT_EQ(gc.Collect().value(), 1);  // the older of the two
  EXPECT_EQ(Names(), (std::set<std::string>{"a/done-2"}));

  Pod("a", "held-3", "Succeeded", /*finalizer=*/true);
  ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&pods_}));
  EXPECT_EQ(gc.Collect().value(), 1);  // done-2, the older
  ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&pods_}));
  EXPECT_EQ(gc.Collect().value(), 0);
  EXPECT_EQ(Names(), (std::set<std::string>{"a/held-3"}));
  Pod("a", "done-4", "Succeeded");
  ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&pods_}));
  EXPECT_EQ(gc.Collect().value(), 1);  // held-3 is older and terminal, and not yet marked
  ASSERT_TRUE(client::testing::WaitForCachesToMatch(client_, {&pods_}));
  EXPECT_TRUE(client_.Get(kPods.Namespace("a"), "held-3").value()["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(gc.Collect().value(), 0);  // marked: out of the count
  EXPECT_EQ(Names(), (std::set<std::string>{"a/held-3", "a/done-4"}));
}

}  // namespace
}  // namespace berth::controllers::podgc
