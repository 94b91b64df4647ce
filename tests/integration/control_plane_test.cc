// The control plane end to end, as `berth server` assembles it: ApiServer over
// a MemoryStore, the ControllerManager (Kueue admission, job controllers,
// placement) and a NodeAgent running pods as real processes, all talking over
// HTTP through client::HttpClient. Jobs here are shell commands; the waits are
// bounded polls on object state (no assertion depends on timing).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <set>
#include <memory>
#include <string>
#include <thread>

#include "agent/node_agent.h"
#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"
#include "apiserver/api_server.h"
#include "client/http_client.h"
#include "controllers/manager/controller_manager.h"
#include "core/clock.h"
#include "store/memory_store.h"

namespace berth {
namespace {

using namespace std::chrono_literals;

const client::GroupVersionResource kJobs{"batch", "v1", "jobs"};
const client::GroupVersionResource kPods{"", "v1", "pods"};
const client::GroupVersionResource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads"};
const client::GroupVersionResource kEvents{"", "v1", "events"};

bool HasCondition(const api::Object& obj, const std::string& type, const std::string& status = "True") {
  const api::Object conditions = obj.value("status", api::Object::object()).value("conditions", api::Object::array());
  for (const api::Object& c : conditions) {
    if (c.value("type", "") == type && c.value("status", "") == status) return true;
  }
  return false;
}

class ControlPlaneTest : public ::testing::Test {
 protected:
  ControlPlaneTest()
      : store_(clock_),
        pipeline_(api::Registry::Default(), api::StrategyRegistry::Default(), api::Convert),
        server_(api::Registry::Default(), pipeline_, store_, clock_) {}

  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    client::RestConfig rest;
    rest.server = "http://127.0.0.1:" + std::to_string(server_.port());
    rest.url = client::ParseServerUrl(rest.server).value();
    client_ = std::make_unique<client::HttpClient>(rest);
    manager_ = std::make_unique<controllers::ControllerManager>(*client_, clock_);
    manager_->Start();
    char tmpl[] = "/tmp/berth-control-plane-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    agent::NodeAgentOptions o;
    o.node_name = "node-0";
    o.capacity = *agent::ParseResourceList("cpu=2,memory=4Gi");
    o.data_dir = dir_;
    agent_ = std::make_unique<agent::NodeAgent>(*client_, clock_, o);
    ASSERT_TRUE(agent_->Start().ok());
    server_.RegisterPodLogSource("node-0", agent_.get());
  }

  void TearDown() override {
    server_.UnregisterPodLogSource("node-0");
    agent_.reset();
    manager_.reset();
    server_.Stop();
    std::filesystem::remove_all(dir_);
  }

  // Applies a multi-document YAML (create only).
  void Apply(const std::string& yaml) {
    auto docs = api::ParseYamlStream(yaml);
    ASSERT_TRUE(docs.ok()) << docs.status().ToString();
    for (const api::Object& doc : docs.value()) {
      client::RawRequest r;
      r.method = "POST";
      const std::string api_version = doc.value("apiVersion", "");
      const std::string kind = doc.value("kind", "");
      std::string plural = kind;
      for (auto& ch : plural) ch = static_cast<char>(std::tolower(ch));
      plural += plural.back() == 's' ? "es" : "s";
      const std::string ns = doc["metadata"].value("namespace", "");
      std::string path = api_version.find('/') == std::string::npos ? "/api/" + api_version : "/apis/" + api_version;
      if (!ns.empty()) path += "/namespaces/" + ns;
      r.target = path + "/" + plural;
      r.body = doc.dump();
      auto res = client_->Do(r);
      ASSERT_TRUE(res.ok()) << res.status().ToString();
      ASSERT_EQ(res.value().status, 201) << kind << ": " << res.value().body;
    }
  }

  // Polls `pred` until it holds (true) or 90 s of real time passed (false).
  bool WaitFor(const std::function<bool()>& pred) {
    for (auto deadline = std::chrono::steady_clock::now() + 90s; std::chrono::steady_clock::now() < deadline;) {
      if (pred()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return pred();
  }

  api::Object Get(const client::GroupVersionResource& gvr, const std::string& ns, const std::string& name) {
    auto res = client_->Get(gvr.Namespace(ns), name);
    return res.ok() ? res.value() : api::Object();
  }

  std::vector<api::Object> WorkloadsOf(const std::string& ns, const std::string& job) {
    std::vector<api::Object> out;
    auto list = client_->List(kWorkloads.Namespace(ns));
    if (!list.ok()) return out;
    for (const api::Object& wl : list.value().items) {
      for (const api::Object& ref : wl["metadata"].value("ownerReferences", api::Object::array())) {
        if (ref.value("name", "") == job) out.push_back(wl);
      }
    }
    return out;
  }

  std::string PodLog(const std::string& ns, const std::string& pod) {
    auto res = client_->Do({"GET", "/api/v1/namespaces/" + ns + "/pods/" + pod + "/log", {}, ""});
    return res.ok() && res.value().status == 200 ? res.value().body : "";
  }

  RealClock& clock_ = RealClock::Get();
  store::MemoryStore store_;
  api::AdmissionPipeline pipeline_;
  apiserver::ApiServer server_;
  std::unique_ptr<client::HttpClient> client_;
  std::unique_ptr<controllers::ControllerManager> manager_;
  std::unique_ptr<agent::NodeAgent> agent_;
  std::string dir_;
};

constexpr char kQueues[] = R"(
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 2}
      - {name: memory, nominalQuota: 4Gi}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: user-queue, namespace: team-a}
spec: {clusterQueue: cluster-queue}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 10
)";

// A queued indexed Job of `pods` pods, each requesting `cpu` and running `script`.
std::string QueuedJob(const std::string& name, const std::string& priority, int pods, const std::string& cpu,
                      const std::string& script) {
  return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\n  labels:\n    kueue.x-k8s.io/queue-name: user-queue\n"
         "    kueue.x-k8s.io/priority-class: " + priority +
         "\nspec:\n  completionMode: Indexed\n  completions: " + std::to_string(pods) +
         "\n  parallelism: " + std::to_string(pods) +
         "\n  template:\n    spec:\n      restartPolicy: Never\n      terminationGracePeriodSeconds: 5\n"
         "      containers:\n      - name: main\n        image: busybox\n        command: [/bin/sh, -c, '" + script +
         "']\n        resources:\n          requests: {cpu: \"" + cpu + "\"}\n";
}

TEST_F(ControlPlaneTest, QueuedJobIsAdmittedPlacedRunAndFinishes) {
  Apply(kQueues);
  Apply(QueuedJob("hello", "low", 2, "500m", "echo hello from $JOB_COMPLETION_INDEX"));

  ASSERT_TRUE(WaitFor([&] { return HasCondition(Get(kJobs, "team-a", "hello"), "Complete"); }))
      << Get(kJobs, "team-a", "hello").dump(2);
  auto wls = WorkloadsOf("team-a", "hello");
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_TRUE(HasCondition(wls[0], "Admitted"));
  EXPECT_EQ(wls[0]["status"]["admission"]["clusterQueue"], "cluster-queue");
  ASSERT_TRUE(WaitFor([&] { return HasCondition(WorkloadsOf("team-a", "hello")[0], "Finished"); }));

  // Both pods ran on node-0; their logs are served through pods/log.
  auto pods = client_->List(kPods.Namespace("team-a"), {.label_selector = "job-name=hello"});
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods.value().items.size(), 2u);
  std::set<std::string> logs;
  for (const api::Object& p : pods.value().items) {
    EXPECT_EQ(p["spec"]["nodeName"], "node-0");
    EXPECT_EQ(p["status"]["phase"], "Succeeded");
    logs.insert(PodLog("team-a", api::Name(p)));
  }
  EXPECT_EQ(logs, (std::set<std::string>{"hello from 0\n", "hello from 1\n"}));
}

TEST_F(ControlPlaneTest, HigherPriorityJobPreemptsTheWholeLowerPriorityJobWhichIsReadmittedAfter) {
  Apply(kQueues);
  // The low job takes the whole quota (2 x 1 cpu) and runs until terminated.
  Apply(QueuedJob("low", "low", 2, "1", "trap \"echo term; exit 143\" TERM; while true; do sleep 0.1; done"));
  ASSERT_TRUE(WaitFor([&] {
    auto pods = client_->List(kPods.Namespace("team-a"), {.label_selector = "job-name=low"});
    if (!pods.ok() || pods.value().items.size() != 2) return false;
    for (const api::Object& p : pods.value().items) {
      if (p["status"].value("phase", "") != "Running") return false;
    }
    return true;
  }));

  Apply(QueuedJob("high", "high", 1, "2", "echo high done"));
  // The whole low workload is evicted by preemption, its pods terminate, and
  // the high job runs to completion.
  ASSERT_TRUE(WaitFor([&] { return HasCondition(Get(kJobs, "team-a", "high"), "Complete"); }))
      << WorkloadsOf("team-a", "high")[0].dump(2);
  bool preempted_event = false;
  auto events = client_->List(kEvents.Namespace("team-a"));
  ASSERT_TRUE(events.ok());
  for (const api::Object& e : events.value().items) {
    if (e.value("reason", "") == "Preempted" && e["involvedObject"].value("kind", "") == "Workload") {
      preempted_event = true;
    }
  }
  EXPECT_TRUE(preempted_event);

  // The low job comes back: re-admitted once the high one finished, its
  // pods running again.
  ASSERT_TRUE(WaitFor([&] {
    auto wls = WorkloadsOf("team-a", "low");
    if (wls.size() != 1 || !HasCondition(wls[0], "Admitted")) return false;
    auto pods = client_->List(kPods.Namespace("team-a"), {.label_selector = "job-name=low"});
    int running = 0;
    for (const api::Object& p : pods.ok() ? pods.value().items : std::vector<api::Object>{}) {
      if (p["status"].value("phase", "") == "Running" && !p["metadata"].contains("deletionTimestamp")) ++running;
    }
    return running == 2;
  }));
}

// A kind whose quota release waits for its pods (TrainJob, PyTorchJob): a
// low-priority job runs until preempted, a high-priority one takes the whole
// quota, completes, and the low one comes back. The low job's quota is given
// back only once its pods are gone, which only pod events can signal.
struct PreemptionCase {
  std::string name;
  std::string setup;            // extra objects (a runtime)
  std::string low, high;        // the jobs' manifests
  std::string pod_label;        // pod label naming the job
  std::string high_done;        // condition type of a finished high job
  client::GroupVersionResource resource;
  friend void PrintTo(const PreemptionCase& c, std::ostream* os) { *os << c.name; }
};

class JobKindPreemptionTest : public ControlPlaneTest, public ::testing::WithParamInterface<PreemptionCase> {
 protected:
  int RunningPods(const std::string& job) {
    auto pods = client_->List(kPods.Namespace("team-a"), {.label_selector = GetParam().pod_label + "=" + job});
    int running = 0;
    for (const api::Object& p : pods.ok() ? pods.value().items : std::vector<api::Object>{}) {
      if (p["status"].value("phase", "") == "Running" && !p["metadata"].contains("deletionTimestamp")) ++running;
    }
    return running;
  }
};

TEST_P(JobKindPreemptionTest, LowJobIsPreemptedAsAWholeAndReadmittedAfterTheHighOne) {
  const PreemptionCase& c = GetParam();
  Apply(kQueues);
  if (!c.setup.empty()) Apply(c.setup);
  Apply(c.low);
  ASSERT_TRUE(WaitFor([&] { return RunningPods("low") == 2; }));
  Apply(c.high);
  ASSERT_TRUE(WaitFor([&] { return HasCondition(Get(c.resource, "team-a", "high"), c.high_done); }))
      << Get(c.resource, "team-a", "high").dump(2);
  auto low = WorkloadsOf("team-a", "low");
  ASSERT_EQ(low.size(), 1u);
  ASSERT_TRUE(WaitFor([&] { return RunningPods("low") == 2 && HasCondition(WorkloadsOf("team-a", "low")[0], "Admitted"); }));
}

constexpr char kLoopUntilTerm[] = "trap \"exit 143\" TERM; while true; do sleep 0.1; done";

std::string TrainJob(const std::string& name, const std::string& priority, const std::string& cpu) {
  return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\n  labels:\n    kueue.x-k8s.io/queue-name: user-queue\n"
         "    kueue.x-k8s.io/priority-class: " + priority +
         "\nspec:\n  runtimeRef: {name: shell-runtime}\n  trainer:\n    numNodes: 2\n"
         "    resourcesPerNode: {requests: {cpu: \"" + cpu + "\"}}\n" +
         (name == "high" ? "    command: [/bin/sh, -c, 'echo done']\n" : "");
}

constexpr char kShellRuntime[] = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: shell-runtime}
spec:
  mlPolicy: {numNodes: 1}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                terminationGracePeriodSeconds: 5
                containers:
                - name: node
                  image: busybox
                  command: [/bin/sh, -c, 'trap "exit 143" TERM; while true; do sleep 0.1; done']
)";

std::string PyTorchJob(const std::string& name, const std::string& priority, const std::string& cpu) {
  const std::string script = name == "high" ? "echo done" : kLoopUntilTerm;
  auto replica = [&](const std::string& type) {
    return "    " + type + ":\n      replicas: 1\n      template:\n        spec:\n"
           "          terminationGracePeriodSeconds: 5\n          containers:\n          - name: pytorch\n"
           "            image: busybox\n            command: [/bin/sh, -c, '" + script + "']\n"
           "            resources: {requests: {cpu: \"" + cpu + "\"}}\n";
  };
  return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: " + name +
         "\n  namespace: team-a\n  labels:\n    kueue.x-k8s.io/queue-name: user-queue\n"
         "    kueue.x-k8s.io/priority-class: " + priority + "\nspec:\n  pytorchReplicaSpecs:\n" +
         replica("Master") + replica("Worker");
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, JobKindPreemptionTest,
    ::testing::Values(
        PreemptionCase{"TrainJob", kShellRuntime, TrainJob("low", "low", "1"), TrainJob("high", "high", "1"),
                       "jobset.sigs.k8s.io/jobset-name", "Complete",
                       {"trainer.kubeflow.org", "v1alpha1", "trainjobs"}},
        PreemptionCase{"PyTorchJob", "", PyTorchJob("low", "low", "1"), PyTorchJob("high", "high", "1"),
                       "training.kubeflow.org/job-name", "Succeeded", {"kubeflow.org", "v1", "pytorchjobs"}}),
    [](const ::testing::TestParamInfo<PreemptionCase>& info) { return info.param.name; });

}  // namespace
}  // namespace berth
