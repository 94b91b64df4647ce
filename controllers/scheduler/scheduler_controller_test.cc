// The scheduler controller through FakeClient + FakeClock: informers fed by
// the FakeClient's watches, cycles driven synchronously (Settle) until a
// cycle writes nothing. Backoffs expire because Settle advances the FakeClock;
// nothing here waits on time.
#include "controllers/scheduler/scheduler_controller.h"

#include <gtest/gtest.h>

#include <thread>

#include "client/testing/fake_client.h"
#include "client/testing/informer_sync.h"
#include "api/conditions.h"
#include "api/priority_admission.h"
#include "controllers/scheduler/pod_decoder.h"
#include "tests/testing/prometheus_values.h"
#include "client/event_recorder.h"

namespace berth::controllers::scheduler {

using api::FindCondition;
using api::IsConditionTrue;
namespace {

const client::GroupVersionResource kEvents{"", "v1", "events"};
const client::GroupVersionResource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses"};

class SchedulerControllerTest : public ::testing::Test {
 protected:
  SchedulerControllerTest()
      : client_(clock_), factory_(client_, clock_, InformerOpts()), ctl_(client_, factory_, clock_, Options()) {
    factory_.Start();
    EXPECT_TRUE(factory_.WaitForCacheSync(std::chrono::seconds(10)));
  }
  ~SchedulerControllerTest() override {
    ctl_.Stop();
    factory_.Shutdown();
  }

  static client::InformerOptions InformerOpts() { return client::testing::FastInformerOptions(); }
  SchedulerControllerOptions Options() {
    SchedulerControllerOptions o;
    o.metrics = metrics_;
    return o;
  }

  // Waits (bounded, real time) until every informer cache matches the server.
  void WaitCaches() { EXPECT_TRUE(client::testing::WaitForCachesToMatch(client_, ctl_.informers())); }

  // One cycle on caches that match the server, after every backoff expired.
  CycleSummary Cycle() {
    WaitCaches();
    clock_.Advance(std::chrono::seconds(11));
    return ctl_.ScheduleOnce();
  }

  // Cycles until one writes nothing.
  void Settle() {
    for (int round = 0; round < 30; ++round) {
      WaitCaches();
      const int64_t rev = client_.store().CurrentRevision();
      Cycle();
      if (client_.store().CurrentRevision() == rev) return;
    }
    ADD_FAILURE() << "scheduler did not settle";
  }

  // Pods go through the Priority admission plugin first, against the stored
  // classes, as the API server admits them (the FakeClient stores as sent).
  void Create(const client::GroupVersionResource& gvr, const std::string& ns, const api::Object& obj) {
    api::Object admitted = obj;
    if (gvr.resource == "pods") {
      api::StaticObjectLookup lookup;
      auto classes = client_.List(kPriorityClasses);
      ASSERT_TRUE(classes.ok());
      for (const auto& pc : classes.value().items) lookup.Add(api::kPriorityClassesResource, pc);
      Status s = api::AdmitPodPriority({api::Operation::kCreate, nullptr, lookup}, &admitted);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    auto res = client_.Create(gvr.Namespace(ns), admitted);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    clock_.Advance(std::chrono::seconds(1));
  }
  api::Object GetPod(const std::string& name) {
    auto res = client_.Get(kPods.Namespace("default"), name);
    EXPECT_TRUE(res.ok()) << name << ": " << res.status().ToString();
    return res.ok() ? res.value() : api::Object();
  }
  bool PodExists(const std::string& name) { return client_.Get(kPods.Namespace("default"), name).ok(); }
  std::vector<api::Object> Events(const std::string& name, const std::string& reason) {
    std::vector<api::Object> out;
    berth::client::EventRecorder::FlushAll();
    auto list = client_.List(kEvents.Namespace("default"));
    EXPECT_TRUE(list.ok());
    for (const auto& e : list.value().items) {
      if (e["involvedObject"].value("name", "") == name && e.value("reason", "") == reason) out.push_back(e);
    }
    return out;
  }

  void CreateNode(const std::string& name, const std::string& cpu, const std::string& taints_json = "[]") {
    Create(kNodes, "", api::Object::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": {"name": ")" + name +
                                          R"("}, "spec": {"taints": )" + taints_json +
                                          R"(}, "status": {"allocatable": {"cpu": ")" + cpu +
                                          R"(", "memory": "64Gi", "pods": "110"},
             "conditions": [{"type": "Ready", "status": "True"}]}})"));
  }
  void CreateClass(const std::string& name, int value, const std::string& policy) {
    Create(kPriorityClasses, "",
           {{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", name}}},
            {"value", value}, {"preemptionPolicy", policy}});
  }
  // A one-container pod requesting `cpu`; priority comes from its class
  // (resolved at Create, as admission does: no spec.priority is sent).
  static api::Object Pod(const std::string& name, const std::string& cpu, const std::string& priority_class = "") {
    api::Object p = api::Object::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default"},
      "spec": {"containers": [{"name": "main", "image": "busybox", "resources": {"requests": {}}}]}})");
    p["metadata"]["name"] = name;
    p["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu;
    if (!priority_class.empty()) p["spec"]["priorityClassName"] = priority_class;
    return p;
  }
  static std::string PodScheduledMessage(const api::Object& pod) {
    const api::Object* c = FindCondition(pod, "PodScheduled");
    return c ? c->value("message", "") : "";
  }

  // The pod-level preemption trap (examples/priority-pitfalls/pitfall/): a node with 8 cpu
  // filled by 8 one-cpu low-priority workers (a gang), each held by a finalizer so a
  // deleted one stays terminating.
  void FillNodeWithWorkers() {
    CreateNode("node-1", "8");
    CreateClass("low", 100, "PreemptLowerPriority");
    for (int i = 0; i < 8; ++i) {
      api::Object w = Pod("worker-" + std::to_string(i), "1", "low");
      w["metadata"]["finalizers"] = {"test.berth.dev/hold"};
      Create(kPods, "default", w);
    }
    Settle();
    for (int i = 0; i < 8; ++i) ASSERT_EQ(GetPod("worker-" + std::to_string(i))["spec"].value("nodeName", ""), "node-1");
  }
  std::vector<std::string> TerminatingWorkers() {
    std::vector<std::string> out;
    for (int i = 0; i < 8; ++i) {
      api::Object w = GetPod("worker-" + std::to_string(i));
      if (w["metadata"].contains("deletionTimestamp")) out.push_back(api::Name(w));
    }
    return out;
  }

  FakeClock clock_{Time(std::chrono::seconds(1767225600))};
  client::testing::FakeClient client_;
  client::SharedInformerFactory factory_;
  prometheus::Registry registry_;
  std::shared_ptr<SchedulerMetrics> metrics_ = std::make_shared<SchedulerMetrics>(registry_);
  SchedulerController ctl_;
};

// The admitted-but-unplaceable trap: allocatable cpu 5, a 6-cpu pod.
TEST_F(SchedulerControllerTest, InsufficientCpuIsUnschedulableWithKubeSchedulerMessage) {
  CreateNode("node-1", "5");
  Create(kPods, "default", Pod("big", "6"));
  Settle();
  api::Object pod = GetPod("big");
  EXPECT_EQ(pod["spec"].value("nodeName", ""), "");
  const api::Object* c = FindCondition(pod, "PodScheduled");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->value("status", ""), "False");
  EXPECT_EQ(c->value("reason", ""), "Unschedulable");
  const std::string want =
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption "
      "victims found for incoming pod..";
  EXPECT_EQ(c->value("message", ""), want);
  EXPECT_EQ(c->value("message", "").rfind("0/1 nodes are available: 1 Insufficient cpu.", 0), 0u);
  auto events = Events("big", "FailedScheduling");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].value("type", ""), "Warning");
  EXPECT_EQ(events[0].value("message", ""), want);
  EXPECT_EQ(events[0].value("count", 0), 1);
  EXPECT_EQ(events[0]["source"].value("component", ""), "default-scheduler");

  // Retried on a node change; the same verdict writes no second event.
  api::Object node = client_.Get(kNodes, "node-1").value();
  node["metadata"]["labels"] = {{"touched", "yes"}};
  ASSERT_TRUE(client_.Update(kNodes, node).ok());
  Settle();
  EXPECT_EQ(Events("big", "FailedScheduling").size(), 1u);
  EXPECT_EQ(Events("big", "FailedScheduling")[0].value("count", 0), 1);

  // More capacity: the pod is bound.
  node = client_.Get(kNodes, "node-1").value();
  node["status"]["allocatable"]["cpu"] = "8";
  ASSERT_TRUE(client_.Update(kNodes, node).ok());
  Settle();
  EXPECT_EQ(GetPod("big")["spec"].value("nodeName", ""), "node-1");
  EXPECT_TRUE(IsConditionTrue(GetPod("big"), "PodScheduled"));
}

TEST_F(SchedulerControllerTest, BindsToTheNodeThatFits) {
  CreateNode("small", "1");
  CreateNode("large", "4");
  Create(kPods, "default", Pod("p", "2"));
  Settle();
  // One pods/binding write: nodeName and PodScheduled together, no pod update of its own.
  EXPECT_EQ(client_.CallCount("bind"), 1);
  EXPECT_EQ(client_.CallCount("update"), 0);
  EXPECT_EQ(client_.CallCount("updatestatus"), 0);
  api::Object pod = GetPod("p");
  EXPECT_EQ(pod["spec"].value("nodeName", ""), "large");
  const api::Object* c = FindCondition(pod, "PodScheduled");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->value("status", ""), "True");
  EXPECT_FALSE(c->contains("observedGeneration"));
  auto events = Events("p", "Scheduled");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].value("type", ""), "Normal");
  EXPECT_EQ(events[0].value("message", ""), "Successfully assigned default/p to large");
  EXPECT_TRUE(Events("p", "FailedScheduling").empty());
}

TEST_F(SchedulerControllerTest, PreemptsExactlyOneWorkerThenBindsAfterTheVictimIsGone) {
  FillNodeWithWorkers();
  CreateClass("high", 1000, "PreemptLowerPriority");
  Create(kPods, "default", Pod("urgent", "1", "high"));

  CycleSummary s = Cycle();
  EXPECT_EQ(s.preempted, 1);
  std::vector<std::string> victims = TerminatingWorkers();
  ASSERT_EQ(victims.size(), 1u);
  // All workers share a priority and none has started: the reprieve keeps
  // the more important ones (pod key order), so the last one is evicted.
  EXPECT_EQ(victims[0], "worker-7");
  api::Object victim = GetPod(victims[0]);
  const api::Object* dt = FindCondition(victim, "DisruptionTarget");
  ASSERT_NE(dt, nullptr);
  EXPECT_EQ(dt->value("status", ""), "True");
  EXPECT_EQ(dt->value("reason", ""), "PreemptionByScheduler");
  EXPECT_EQ(dt->value("message", ""), "default-scheduler: preempting to accommodate a higher priority pod");
  api::Object urgent = GetPod("urgent");
  auto preempted = Events(victims[0], "Preempted");
  ASSERT_EQ(preempted.size(), 1u);
  EXPECT_EQ(preempted[0].value("message", ""), "Preempted by pod " + api::Uid(urgent) + " on node node-1");
  EXPECT_EQ(urgent["status"].value("nominatedNodeName", ""), "node-1");
  EXPECT_EQ(urgent["spec"].value("nodeName", ""), "");

  // While the victim terminates it holds its cpu: nothing else is evicted and
  // the preemptor waits on its nomination.
  Settle();
  EXPECT_EQ(TerminatingWorkers(), victims);
  urgent = GetPod("urgent");
  EXPECT_EQ(urgent["spec"].value("nodeName", ""), "");
  EXPECT_EQ(urgent["status"].value("nominatedNodeName", ""), "node-1");

  // The victim is gone: the preemptor is bound and its nomination cleared.
  victim = GetPod(victims[0]);
  victim["metadata"]["finalizers"] = api::Object::array();
  ASSERT_TRUE(client_.Update(kPods.Namespace("default"), victim).ok());
  ASSERT_FALSE(PodExists(victims[0]));
  Settle();
  urgent = GetPod("urgent");
  EXPECT_EQ(urgent["spec"].value("nodeName", ""), "node-1");
  EXPECT_FALSE(urgent["status"].contains("nominatedNodeName"));
  EXPECT_TRUE(IsConditionTrue(urgent, "PodScheduled"));
  for (int i = 0; i < 7; ++i) EXPECT_TRUE(PodExists("worker-" + std::to_string(i)));
}

// kube-scheduler's metrics over the same preemption: one attempt per pod per
// cycle by result, a preemption attempt per failed attempt, the victims of
// the plan, the pending queue, and attempts per bound pod.
TEST_F(SchedulerControllerTest, MetricsCountAttemptsPreemptionAndPendingPods) {
  using berth::testing::HistogramCount;
  using berth::testing::HistogramSum;
  using berth::testing::MetricValue;
  FillNodeWithWorkers();
  const std::map<std::string, std::string> scheduled = {{"result", "scheduled"}, {"profile", "default-scheduler"}};
  const std::map<std::string, std::string> unschedulable = {{"result", "unschedulable"}};
  EXPECT_EQ(MetricValue(registry_, "scheduler_schedule_attempts_total", scheduled), 8);
  EXPECT_FALSE(MetricValue(registry_, "scheduler_schedule_attempts_total", unschedulable));
  EXPECT_EQ(HistogramCount(registry_, "scheduler_pod_scheduling_attempts"), 8u);
  EXPECT_EQ(HistogramSum(registry_, "scheduler_pod_scheduling_attempts"), 8) << "each bound at its first attempt";
  EXPECT_EQ(HistogramCount(registry_, "scheduler_scheduling_attempt_duration_seconds", scheduled), 8u);
  EXPECT_EQ(HistogramCount(registry_, "scheduler_scheduling_algorithm_duration_seconds"), 8u);
  EXPECT_EQ(MetricValue(registry_, "scheduler_preemption_attempts_total"), 0);

  CreateClass("high", 1000, "PreemptLowerPriority");
  Create(kPods, "default", Pod("urgent", "1", "high"));
  Cycle();
  EXPECT_EQ(MetricValue(registry_, "scheduler_schedule_attempts_total", unschedulable), 1);
  EXPECT_EQ(MetricValue(registry_, "scheduler_preemption_attempts_total"), 1);
  EXPECT_EQ(HistogramCount(registry_, "scheduler_preemption_victims"), 1u);
  EXPECT_EQ(HistogramSum(registry_, "scheduler_preemption_victims"), 1);
  EXPECT_EQ(MetricValue(registry_, "scheduler_pending_pods", {{"queue", "unschedulable"}}), 1);
  EXPECT_EQ(MetricValue(registry_, "scheduler_pending_pods", {{"queue", "active"}}), 0);

  api::Object victim = GetPod(TerminatingWorkers().at(0));
  victim["metadata"]["finalizers"] = api::Object::array();
  ASSERT_TRUE(client_.Update(kPods.Namespace("default"), victim).ok());
  Settle();
  ASSERT_EQ(GetPod("urgent")["spec"].value("nodeName", ""), "node-1");
  EXPECT_EQ(MetricValue(registry_, "scheduler_schedule_attempts_total", scheduled), 9);
  const double failed = *MetricValue(registry_, "scheduler_schedule_attempts_total", unschedulable);
  EXPECT_EQ(MetricValue(registry_, "scheduler_preemption_attempts_total"), failed);
  EXPECT_EQ(HistogramSum(registry_, "scheduler_pod_scheduling_attempts"), 8 + failed + 1)
      << "urgent needed its failed attempts plus the one that bound it";
  EXPECT_EQ(HistogramCount(registry_, "scheduler_pod_scheduling_sli_duration_seconds",
                           {{"attempts", std::to_string(static_cast<int>(failed) + 1)}}),
            1u);
  EXPECT_EQ(MetricValue(registry_, "scheduler_pending_pods", {{"queue", "unschedulable"}}), 0);
}

TEST_F(SchedulerControllerTest, PreemptionPolicyNeverEvictsNothing) {
  FillNodeWithWorkers();
  CreateClass("high-never", 1000, "Never");
  Create(kPods, "default", Pod("urgent", "1", "high-never"));
  Settle();
  EXPECT_TRUE(TerminatingWorkers().empty());
  api::Object urgent = GetPod("urgent");
  EXPECT_EQ(urgent["spec"].value("nodeName", ""), "");
  EXPECT_FALSE(urgent["status"].contains("nominatedNodeName"));
  EXPECT_EQ(PodScheduledMessage(urgent),
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..");
  EXPECT_EQ(Events("urgent", "FailedScheduling").size(), 1u);
}

TEST_F(SchedulerControllerTest, TaintsNeedTolerations) {
  CreateNode("gpu-node", "8", R"([{"key": "gpu", "value": "true", "effect": "NoSchedule"}])");
  Create(kPods, "default", Pod("plain", "1"));
  api::Object tolerating = Pod("tolerating", "1");
  tolerating["spec"]["tolerations"] = api::Object::parse(R"([{"key": "gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}])");
  Create(kPods, "default", tolerating);
  Settle();
  EXPECT_EQ(GetPod("plain")["spec"].value("nodeName", ""), "");
  EXPECT_EQ(PodScheduledMessage(GetPod("plain")),
            "0/1 nodes are available: 1 node(s) had untolerated taint {gpu: true}. preemption: 0/1 nodes are "
            "available: 1 Preemption is not helpful for scheduling..");
  EXPECT_EQ(GetPod("tolerating")["spec"].value("nodeName", ""), "gpu-node");
}

// The scheduler reads spec.priority as admission wrote it and never
// resolves the class again: a class changed or deleted later does not change
// a pod's priority (upstream: priority is fixed at pod creation).
TEST_F(SchedulerControllerTest, PriorityIsReadFromTheSpecNotTheClass) {
  FillNodeWithWorkers();
  api::Object urgent = Pod("urgent", "1", "low");
  urgent["spec"]["priority"] = 1000;  // what admission of a class of value 1000 writes
  urgent["spec"].erase("priorityClassName");
  ASSERT_TRUE(client_.Create(kPods.Namespace("default"), urgent).ok());
  Cycle();
  EXPECT_EQ(TerminatingWorkers().size(), 1u) << "priority 1000 preempts the value-100 workers";
}

// A higher-priority preemptor takes the space a lower-priority pod was
// nominated to: that nomination is cleared (kubernetes/kubernetes#106780), the
// victim is not deleted twice, and the lower pod does not get the node.
TEST_F(SchedulerControllerTest, HigherPreemptorClearsLowerNomination) {
  CreateNode("node-1", "1");
  CreateClass("mid", 100, "PreemptLowerPriority");
  CreateClass("high", 1000, "PreemptLowerPriority");
  api::Object worker = Pod("worker", "1");
  worker["metadata"]["finalizers"] = {"test.berth.dev/hold"};
  Create(kPods, "default", worker);
  Settle();
  ASSERT_EQ(GetPod("worker")["spec"].value("nodeName", ""), "node-1");

  Create(kPods, "default", Pod("mid", "1", "mid"));
  EXPECT_EQ(Cycle().preempted, 1);
  EXPECT_EQ(GetPod("mid")["status"].value("nominatedNodeName", ""), "node-1");

  Create(kPods, "default", Pod("high", "1", "high"));
  Settle();
  EXPECT_EQ(GetPod("high")["status"].value("nominatedNodeName", ""), "node-1");
  EXPECT_FALSE(GetPod("mid")["status"].contains("nominatedNodeName"));
  EXPECT_EQ(Events("worker", "Preempted").size(), 1u);  // already terminating: not preempted again

  api::Object w = GetPod("worker");
  w["metadata"]["finalizers"] = api::Object::array();
  ASSERT_TRUE(client_.Update(kPods.Namespace("default"), w).ok());
  Settle();
  EXPECT_EQ(GetPod("high")["spec"].value("nodeName", ""), "node-1");
  EXPECT_EQ(GetPod("mid")["spec"].value("nodeName", ""), "");
  EXPECT_TRUE(PodExists("mid"));  // equal or higher priority pods are never victims of a lower one
}

TEST_F(SchedulerControllerTest, OrdersByPriorityThenCreation) {
  CreateNode("node-1", "1");
  CreateClass("high", 1000, "Never");
  Create(kPods, "default", Pod("first-low", "1"));
  Create(kPods, "default", Pod("second-high", "1", "high"));
  Settle();
  EXPECT_EQ(GetPod("second-high")["spec"].value("nodeName", ""), "node-1");
  EXPECT_EQ(GetPod("first-low")["spec"].value("nodeName", ""), "");
}

// The same work on the controller's own thread (Start): woken by the
// informers' events. Bounded real-time polling only, as WaitCaches does.
TEST_F(SchedulerControllerTest, StartedControllerBindsOnItsOwnThread) {
  ctl_.Start();
  CreateNode("node-1", "2");
  // The node in the cache first: a cycle that saw the pod before the node (two informers)
  // would back the pod off for 1 s of the fake clock, which this test never advances.
  WaitCaches();
  Create(kPods, "default", Pod("p", "1"));
  std::string node;
  // Real time only bounds a hang (30 s: the machine may be loaded); it is never asserted.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (node.empty() && std::chrono::steady_clock::now() < give_up) {
    node = GetPod("p")["spec"].value("nodeName", "");
    if (node.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(node, "node-1");
  ctl_.Stop();
}

}  // namespace
}  // namespace berth::controllers::scheduler
