// NodeLifecycleController through FakeClient + FakeClock: informers fed by the
// FakeClient's watches; reconciles driven synchronously. Nothing waits on time.
#include "controllers/nodelifecycle/node_lifecycle_controller.h"

#include <algorithm>
#include <gtest/gtest.h>

#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "core/clock.h"

namespace berth::controllers::nodelifecycle {

namespace {

using namespace std::chrono_literals;

const client::GroupVersionResource kNodes{"", "v1", "nodes"};
const client::GroupVersionResource kPods{"", "v1", "pods"};
const client::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
const client::GroupVersionResource kEvents{"", "v1", "events"};

class NodeLifecycleTest : public ::testing::Test {
 protected:
  NodeLifecycleTest()
      : client_(clock_),
        factory_(client_, clock_, client::testing::FastInformerOptions()),
        nodes_(factory_.ForResource(kNodes)),
        leases_(factory_.ForResource(kLeases.Namespace("kube-node-lease"))),
        pods_(factory_.ForResource(kPods)),
        recorder_(client_, clock_, "node-controller"),
        ctl_(client_, nodes_, leases_, pods_, clock_, recorder_) {
    factory_.Start();
    EXPECT_TRUE(factory_.WaitForCacheSync(10s));
    Create(kNodes, "", api::Object::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
      "status": {"conditions": [
        {"type": "Ready", "status": "True", "reason": "KubeletReady"},
        {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory"}]}})"));
    Renew();
    Create(kPods, "default", Pod("plain", api::Object::array()));
    Create(kPods, "default", Pod("tolerates-60s", api::Object::parse(R"([{"key": "node.kubernetes.io/unreachable",
      "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}])")));
    api::Object done = Pod("done", api::Object::array());
    Create(kPods, "default", done);
    api::Object d = client_.Get(kPods.Namespace("default"), "done").value();
    d["status"]["phase"] = "Succeeded";
    EXPECT_TRUE(client_.UpdateStatus(kPods.Namespace("default"), d).ok());
    Reconcile();  // the controller sees the node as soon as it registers
  }
  ~NodeLifecycleTest() override { factory_.Shutdown(); }

  static api::Object Pod(const std::string& name, api::Object tolerations) {
    api::Object pod = api::Object::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default"},
      "spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "x"}]},
      "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})");
    pod["metadata"]["name"] = name;
    pod["spec"]["tolerations"] = std::move(tolerations);
    return pod;
  }
  void Create(const client::GroupVersionResource& gvr, const std::string& ns, const api::Object& obj) {
    auto res = client_.Create(gvr.Namespace(ns), obj);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
  }
  // The agent's heartbeat: the Lease's renewTime = now.
  void Renew() {
    auto lease = client_.Get(kLeases.Namespace("kube-node-lease"), "node-1");
    api::Object l = lease.ok() ? lease.value()
                               : api::Object{{"apiVersion", "coordination.k8s.io/v1"},
                                             {"kind", "Lease"},
                                             {"metadata", {{"name", "node-1"}, {"namespace", "kube-node-lease"}}}};
    l["spec"]["renewTime"] = FormatRfc3339Micro(clock_.Now());
    auto res = lease.ok() ? client_.Update(kLeases.Namespace("kube-node-lease"), l)
                          : client_.Create(kLeases.Namespace("kube-node-lease"), l);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
  }
  // A finalizer keeps the pod readable after a delete, as a Job's tracking finalizer does.
  void Hold(const std::string& name) {
    api::Object pod = Get(kPods, "default", name);
    pod["metadata"]["finalizers"] = {"test.berth/hold"};
    ASSERT_TRUE(client_.Update(kPods.Namespace("default"), pod).ok());
  }
  void SetRenewTime(const std::string& time) {
    api::Object l = Get(kLeases, "kube-node-lease", "node-1");
    l["spec"]["renewTime"] = time;
    ASSERT_TRUE(client_.Update(kLeases.Namespace("kube-node-lease"), l).ok());
  }
  void SetOutOfServiceTaint() {
    api::Object node = Get(kNodes, "", "node-1");
    node["spec"]["taints"].push_back({{"key", kOutOfServiceTaint}, {"value", "nodeshutdown"}, {"effect", "NoExecute"}});
    ASSERT_TRUE(client_.Update(kNodes, node).ok());
  }
  std::vector<std::string> EventMessages(const std::string& reason) {
    berth::client::EventRecorder::FlushAll();
    std::vector<std::string> out;
    auto events = client_.List(kEvents.Namespace("default"));
    EXPECT_TRUE(events.ok());
    for (const api::Object& e : events.value().items) {
      if (e.value("reason", "") == reason) out.push_back(e.value("message", ""));
    }
    return out;
  }
  NodeVerdict Reconcile() {
    EXPECT_TRUE(client::testing::WaitForCachesToMatch(client_, {&nodes_, &leases_, &pods_}));
    auto v = ctl_.Reconcile("node-1");
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_TRUE(client::testing::WaitForCachesToMatch(client_, {&nodes_, &leases_, &pods_}));
    return v.ok() ? v.value() : NodeVerdict{};
  }
  api::Object Get(const client::GroupVersionResource& gvr, const std::string& ns, const std::string& name) {
    return client_.Get(gvr.Namespace(ns), name).value();
  }
  static std::string Condition(const api::Object& obj, const std::string& type, const char* field = "status") {
    for (const api::Object& c : obj.value("status", api::Object::object()).value("conditions", api::Object::array())) {
      if (c.value("type", "") == type) return c.value(field, "");
    }
    return "";
  }
  static std::vector<std::string> TaintEffects(const api::Object& node) {
    std::vector<std::string> out;
    for (const api::Object& t : node.value("spec", api::Object::object()).value("taints", api::Object::array())) {
      if (t.value("key", "") == kUnreachableTaint) out.push_back(t.value("effect", ""));
    }
    return out;
  }

  FakeClock clock_{Time{} + std::chrono::hours(24 * 365 * 56)};
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  client::Informer& nodes_;
  client::Informer& leases_;
  client::Informer& pods_;
  EventRecorder recorder_;
  NodeLifecycleController ctl_;
};

TEST_F(NodeLifecycleTest, FreshHeartbeatLeavesTheNodeAloneAndAsksToLookAgainAtTheDeadline) {
  clock_.Advance(10s);
  NodeVerdict v = Reconcile();
  EXPECT_TRUE(v.healthy);
  EXPECT_EQ(v.recheck_after, 31s);  // 40 s grace - 10 s elapsed + 1 s
  EXPECT_EQ(Condition(Get(kNodes, "", "node-1"), "Ready"), "True");
  EXPECT_TRUE(TaintEffects(Get(kNodes, "", "node-1")).empty());
  EXPECT_EQ(Get(kPods, "default", "plain")["status"]["phase"], "Running");
}

TEST_F(NodeLifecycleTest, MissedHeartbeatsMakeTheNodeUnreachableAndEvictItsPods) {
  Hold("plain");
  Hold("tolerates-60s");
  clock_.Advance(41s);
  NodeVerdict v = Reconcile();
  EXPECT_FALSE(v.healthy);
  api::Object node = Get(kNodes, "", "node-1");
  EXPECT_EQ(Condition(node, "Ready"), "Unknown");
  EXPECT_EQ(Condition(node, "Ready", "reason"), "NodeStatusUnknown");
  EXPECT_EQ(Condition(node, "Ready", "message"), "Kubelet stopped posting node status.");
  EXPECT_EQ(Condition(node, "MemoryPressure"), "Unknown");
  EXPECT_EQ(TaintEffects(node), (std::vector<std::string>{"NoSchedule", "NoExecute"}));

  // Evicted as the taint manager does: marked for deletion, never set Failed (its processes
  // may still run on the unreachable host).
  api::Object plain = Get(kPods, "default", "plain");
  EXPECT_TRUE(api::BeingDeleted(plain));
  EXPECT_EQ(plain["status"]["phase"], "Running");
  EXPECT_EQ(Condition(plain, "DisruptionTarget"), "True");
  EXPECT_EQ(Condition(plain, "DisruptionTarget", "reason"), "DeletionByTaintManager");
  EXPECT_EQ(Condition(plain, "DisruptionTarget", "message"), "Taint manager: deleting due to NoExecute taint");
  EXPECT_EQ(EventMessages("TaintManagerEviction"), std::vector<std::string>{"Marking for deletion Pod default/plain"});
  api::Object done = Get(kPods, "default", "done");  // terminal pods are left alone
  EXPECT_EQ(done["status"]["phase"], "Succeeded");
  EXPECT_FALSE(api::BeingDeleted(done));
  // The tolerating pod has 60 s from the moment the node became unreachable (t = 40 s).
  EXPECT_FALSE(api::BeingDeleted(Get(kPods, "default", "tolerates-60s")));
  EXPECT_EQ(v.recheck_after, 60s);  // 40 + 60 - 41 + 1
  // Neither is Ready any more (upstream MarkPodsNotReady), tolerating or not.
  EXPECT_EQ(Condition(Get(kPods, "default", "plain"), "Ready"), "False");
  EXPECT_EQ(Condition(Get(kPods, "default", "tolerates-60s"), "Ready"), "False");
  const std::vector<std::string> not_ready = EventMessages("NodeNotReady");  // the Node's own, and each pod's
  EXPECT_EQ(std::count(not_ready.begin(), not_ready.end(), "Node is not ready"), 2) << not_ready.size();

  clock_.Advance(58s);
  Reconcile();
  EXPECT_FALSE(api::BeingDeleted(Get(kPods, "default", "tolerates-60s")));
  clock_.Advance(1s);
  Reconcile();
  EXPECT_TRUE(api::BeingDeleted(Get(kPods, "default", "tolerates-60s")));
  // Reconciling again changes nothing: still one pair of taints, the evicted pods untouched.
  const std::string rv = api::ResourceVersion(Get(kPods, "default", "plain"));
  clock_.Advance(std::chrono::minutes(10));
  Reconcile();
  EXPECT_EQ(TaintEffects(Get(kNodes, "", "node-1")).size(), 2u);
  plain = Get(kPods, "default", "plain");
  EXPECT_EQ(api::ResourceVersion(plain), rv);
  EXPECT_EQ(plain["status"]["phase"], "Running");
  EXPECT_EQ(EventMessages("TaintManagerEviction").size(), 2u);
}

// Pods marked for deletion on a lost node stay until someone knows their processes are gone:
// an administrator's out-of-service taint on the not-Ready node (pod GC's gcTerminating) fails
// and deletes them; while the node is Ready the taint collects nothing.
TEST_F(NodeLifecycleTest, PodsEvictedFromALostNodeGoOnlyOnceItIsMarkedOutOfService) {
  Hold("plain");
  Hold("done");
  // Ready, with the taint and a pod being deleted: not collected (the agent stops it itself).
  SetOutOfServiceTaint();
  ASSERT_TRUE(client_.Delete(kPods.Namespace("default"), "done", {}).ok());
  Reconcile();
  EXPECT_EQ(Get(kPods, "default", "done")["status"]["phase"], "Succeeded");
  api::Object node = Get(kNodes, "", "node-1");
  node["spec"]["taints"] = api::Object::array();
  ASSERT_TRUE(client_.Update(kNodes, node).ok());

  clock_.Advance(41s);
  Reconcile();
  clock_.Advance(std::chrono::hours(1));
  Reconcile();
  api::Object plain = Get(kPods, "default", "plain");
  EXPECT_TRUE(api::BeingDeleted(plain));
  EXPECT_EQ(plain["status"]["phase"], "Running");

  SetOutOfServiceTaint();
  Reconcile();
  plain = Get(kPods, "default", "plain");  // a finalizer keeps it readable
  EXPECT_EQ(plain["status"]["phase"], "Failed");
  EXPECT_EQ(Condition(plain, "DisruptionTarget", "reason"), "DeletionByTaintManager");
  EXPECT_EQ(Get(kPods, "default", "done")["status"]["phase"], "Succeeded");  // terminal: its phase stays
}

// The heartbeat is when the controller saw it change, by its own clock: a renewTime written far
// in the future does not keep a silent node alive, and one that goes back (the agent's clock
// stepped back) still counts as a renewal.
TEST_F(NodeLifecycleTest, AHeartbeatCountsWhenItChangesWhateverTimeItNames) {
  Hold("plain");
  SetRenewTime("2100-01-01T00:00:00.000000Z");
  EXPECT_TRUE(Reconcile().healthy);
  clock_.Advance(30s);
  EXPECT_TRUE(Reconcile().healthy);
  clock_.Advance(11s);
  NodeVerdict v = Reconcile();
  EXPECT_FALSE(v.healthy);
  EXPECT_TRUE(api::BeingDeleted(Get(kPods, "default", "plain")));
  SetRenewTime("2000-01-01T00:00:00.000000Z");
  v = Reconcile();
  EXPECT_TRUE(v.healthy);
  EXPECT_EQ(v.recheck_after, 41s);
  EXPECT_EQ(Condition(Get(kNodes, "", "node-1"), "Ready"), "True");
}

TEST_F(NodeLifecycleTest, ARestartedControllerGivesAStaleNodeAFullGracePeriod) {
  // The Lease is old (the whole control plane was down), but this controller
  // sees the node for the first time now: nothing happens for 40 s.
  clock_.Advance(std::chrono::minutes(10));
  NodeLifecycleController fresh(client_, nodes_, leases_, pods_, clock_, recorder_);
  EXPECT_TRUE(client::testing::WaitForCachesToMatch(client_, {&nodes_, &leases_, &pods_}));
  auto v = fresh.Reconcile("node-1");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.value().healthy);
  EXPECT_EQ(v.value().recheck_after, 41s);
  EXPECT_EQ(Get(kPods, "default", "plain")["status"]["phase"], "Running");
  clock_.Advance(41s);
  v = fresh.Reconcile("node-1");
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v.value().healthy);
}

TEST_F(NodeLifecycleTest, ARenewedHeartbeatMakesTheNodeSchedulableAgain) {
  clock_.Advance(41s);
  Reconcile();
  Renew();
  NodeVerdict v = Reconcile();
  EXPECT_TRUE(v.healthy);
  api::Object node = Get(kNodes, "", "node-1");
  EXPECT_TRUE(TaintEffects(node).empty());
  EXPECT_EQ(Condition(node, "Ready"), "True");
  EXPECT_EQ(Condition(node, "Ready", "reason"), "KubeletReady");
  EXPECT_EQ(Condition(node, "MemoryPressure"), "False");
}

// Pod GC's gcOrphaned: pods bound to a node name without a Node.
TEST_F(NodeLifecycleTest, PodsOfADeletedNodeAreFailedAndDeletedAfterTheQuarantine) {
  ASSERT_TRUE(client_.Delete(kNodes.Namespace(""), "node-1", {}).ok());
  NodeVerdict v = Reconcile();
  EXPECT_TRUE(v.healthy);
  EXPECT_EQ(v.recheck_after, 41s);  // 40 s quarantine + 1 s
  clock_.Advance(39s);
  v = Reconcile();
  EXPECT_EQ(v.recheck_after, 2s);
  EXPECT_EQ(Get(kPods, "default", "plain")["status"]["phase"], "Running");

  clock_.Advance(1s);
  v = Reconcile();
  EXPECT_FALSE(v.healthy);
  for (const char* name : {"plain", "tolerates-60s", "done"}) {
    EXPECT_EQ(client_.Get(kPods.Namespace("default"), name).status().code(), Code::kNotFound) << name;
  }
}

TEST_F(NodeLifecycleTest, AnOrphanIsMarkedFailedByPodGCBeforeItIsDeleted) {
  // A finalizer keeps the pod readable after its deletion, as a Job's tracking finalizer does.
  api::Object plain = Get(kPods, "default", "plain");
  plain["metadata"]["finalizers"] = {"batch.kubernetes.io/job-tracking"};
  ASSERT_TRUE(client_.Update(kPods.Namespace("default"), plain).ok());
  ASSERT_TRUE(client_.Delete(kNodes.Namespace(""), "node-1", {}).ok());
  Reconcile();
  clock_.Advance(40s);
  Reconcile();
  plain = Get(kPods, "default", "plain");
  EXPECT_TRUE(plain["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(plain["status"]["phase"], "Failed");
  EXPECT_EQ(Condition(plain, "DisruptionTarget"), "True");
  EXPECT_EQ(Condition(plain, "DisruptionTarget", "reason"), "DeletionByPodGC");
  EXPECT_EQ(Condition(plain, "DisruptionTarget", "message"), "PodGC: node no longer exists");
}

TEST_F(NodeLifecycleTest, ANodeRegisteredAgainWithinTheQuarantineKeepsItsPods) {
  api::Object node = Get(kNodes, "", "node-1");
  ASSERT_TRUE(client_.Delete(kNodes.Namespace(""), "node-1", {}).ok());
  Reconcile();
  clock_.Advance(10s);
  node["metadata"].erase("uid");
  node["metadata"].erase("resourceVersion");
  node["metadata"].erase("creationTimestamp");
  Create(kNodes, "", node);
  Renew();
  EXPECT_TRUE(Reconcile().healthy);
  clock_.Advance(35s);  // past the first quarantine's end: it no longer applies
  Renew();
  EXPECT_TRUE(Reconcile().healthy);
  EXPECT_EQ(Get(kPods, "default", "plain")["status"]["phase"], "Running");
  // Missing again: a new quarantine of its own.
  ASSERT_TRUE(client_.Delete(kNodes.Namespace(""), "node-1", {}).ok());
  EXPECT_EQ(Reconcile().recheck_after, 41s);
}

TEST_F(NodeLifecycleTest, APodBoundToANodeThatNeverExistedIsCollected) {
  api::Object ghost = Pod("ghost", api::Object::array());
  ghost["spec"]["nodeName"] = "no-such-node";
  Create(kPods, "default", ghost);
  EXPECT_TRUE(client::testing::WaitForCachesToMatch(client_, {&nodes_, &leases_, &pods_}));
  auto v = ctl_.Reconcile("no-such-node");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->recheck_after, 41s);
  clock_.Advance(40s);
  ASSERT_TRUE(ctl_.Reconcile("no-such-node").ok());
  EXPECT_EQ(client_.Get(kPods.Namespace("default"), "ghost").status().code(), Code::kNotFound);
  EXPECT_EQ(Get(kPods, "default", "plain")["status"]["phase"], "Running");  // node-1's pods are not orphans
}

}  // namespace
}  // namespace berth::controllers::nodelifecycle
