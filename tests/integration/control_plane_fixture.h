// ControlPlaneTest: the whole control plane in one process, as `berth server`
// assembles it, for the integration tests of tests/integration: an ApiServer
// (HTTP on an ephemeral port) over a MemoryStore or, for restart tests, a
// SqliteStore in the test's data directory; the ControllerManager (Kueue
// admission, the job-kind controllers, placement, node lifecycle); and one
// NodeAgent "node-0" (cpu 2, memory 4Gi unless SetNodeCapacity) running pods as real processes. Every
// component talks to the server over HTTP through client::HttpClient.
//
// Waits are bounded polls on object state (WaitFor: 90 s of real time), so no
// assertion depends on timing. RestartControlPlane() stops every component and
// starts new ones over the same store file and agent data directory, as a
// `berth server` restart does.
//
// Thread-safety: gtest fixture; use from the test's thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/registry.h>

#include "agent/node_agent.h"
#include "agent/shim/sandbox.h"
#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"
#include "apiserver/api_server.h"
#include "apiserver/in_process_client.h"
#include "client/http_client.h"
#include "controllers/manager/controller_manager.h"
#include "core/clock.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace berth::integration {

// The tests using this fixture live in namespace berth::integration and name these directly.
inline const client::GroupVersionResource kJobs{"batch", "v1", "jobs"};
inline const client::GroupVersionResource kPods{"", "v1", "pods"};
inline const client::GroupVersionResource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads"};
inline const client::GroupVersionResource kEvents{"", "v1", "events"};

// Whether obj has a status condition of `type` with `status`.
inline bool HasCondition(const api::Object& obj, const std::string& type, const std::string& status = "True") {
  const api::Object conditions = obj.value("status", api::Object::object()).value("conditions", api::Object::array());
  for (const api::Object& c : conditions) {
    if (c.value("type", "") == type && c.value("status", "") == status) return true;
  }
  return false;
}

// Namespace team-a with the LocalQueue user-queue on the ClusterQueue
// cluster-queue (nominalQuota cpu 2, memory 4Gi: node-0's capacity;
// preemption withinClusterQueue LowerPriority), and the
// WorkloadPriorityClasses high (1000) and low (10).
inline constexpr char kQueues[] = R"(
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

class ControlPlaneTest : public ::testing::Test {
 protected:
  ControlPlaneTest() : pipeline_(api::Registry::Default(), api::StrategyRegistry::Default(), api::Convert) {}

  void SetUp() override {
    char tmpl[] = "/tmp/berth-control-plane-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    StartControlPlane();
  }

  void TearDown() override {
    StopControlPlane();
    std::filesystem::remove_all(dir_);
  }

  // Set before SetUp (in the derived fixture's constructor): the store is
  // SQLite at <dir>/berth.db instead of memory.
  void UseSqliteStore() { sqlite_ = true; }
  // Set before SetUp: node-0's capacity ("cpu=2,memory=4Gi" unless set;
  // agent::ParseResourceList syntax, e.g. "cpu=2,memory=4Gi,nvidia.com/gpu=8").
  void SetNodeCapacity(std::string capacity) { node_capacity_ = std::move(capacity); }

  void StartControlPlane() {
    if (sqlite_) {
      auto opened = store::SqliteStore::Open(dir_ + "/berth.db", clock_);
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      store_ = std::move(opened).value();
    } else if (store_ == nullptr) {
      store_ = std::make_unique<store::MemoryStore>(clock_);
    }
    apiserver::ApiServerOptions server_options;
    server_options.metrics_registry = metrics_;  // apiserver_request_total: what every component wrote
    server_ = std::make_unique<apiserver::ApiServer>(api::Registry::Default(), pipeline_, *store_, clock_,
                                                     server_options);
    ASSERT_TRUE(server_->Start().ok());
    client::RestConfig rest;
    rest.server = "http://127.0.0.1:" + std::to_string(server_->port());
    rest.url = client::ParseServerUrl(rest.server).value();
    client_ = std::make_unique<client::HttpClient>(rest);
    // As `berth server`: the controllers use the in-process client (the control plane's own
    // identity, which alone may write a namespace's id block).
    controller_client_ = apiserver::NewInProcessClient(*server_);
    manager_ = std::make_unique<controllers::ControllerManager>(*controller_client_, clock_);
    manager_->Start();
    StartAgent();
  }

  void StartAgent() {
    agent::NodeAgentOptions o;
    o.node_name = "node-0";
    o.capacity = *agent::ParseResourceList(node_capacity_);
    o.data_dir = dir_ + "/node-0";
    o.sandbox.enabled = sandbox_;
    // An absolute floor, not the default 10 % free: the shared host disk's fill level is
    // not this test's to control (tests/e2e/lib.sh says more).
    o.eviction_hard = *agent::ParseEvictionHard("nodefs.available<1Gi");
    agent_ = std::make_unique<agent::NodeAgent>(*client_, clock_, o);
    ASSERT_TRUE(agent_->Start().ok());
    server_->RegisterPodLogSource("node-0", agent_.get());
  }

  // Replaces node-0's agent (no pod may run yet) with one that sandboxes its pods
  // (agent/shim/sandbox.h), as `berth server` does as root: needed by pods that mount
  // volumes. Returns "" when done, else why this host cannot (not root, no namespaces).
  std::string SandboxNode() {
    if (Status probe = agent::shim::ProbeSandbox(dir_); !probe.ok()) return probe.message();
    server_->UnregisterPodLogSource("node-0");
    agent_.reset();
    sandbox_ = true;
    StartAgent();
    return "";
  }

  // Stops the agent (its processes are killed; pods stay as they are in the
  // API), the controllers and the server; a SQLite store is closed.
  void StopControlPlane() {
    if (server_ == nullptr) return;
    server_->UnregisterPodLogSource("node-0");
    agent_.reset();
    manager_.reset();
    controller_client_.reset();
    server_->Stop();
    client_.reset();
    server_.reset();
    if (sqlite_) store_.reset();
  }

  // A new server, controllers and agent over the same store and data
  // directory (the client_ changes: the port is a new ephemeral one).
  void RestartControlPlane() {
    StopControlPlane();
    StartControlPlane();
  }

  // Creates every document of a multi-document YAML (POST, expecting 201).
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
    using namespace std::chrono_literals;
    for (auto deadline = std::chrono::steady_clock::now() + 90s; std::chrono::steady_clock::now() < deadline;) {
      if (pred()) return true;
      std::this_thread::sleep_for(50ms);
    }
    return pred();
  }

  // The object, or null when the Get fails.
  api::Object Get(const client::GroupVersionResource& gvr, const std::string& ns, const std::string& name) {
    auto res = client_->Get(gvr.Namespace(ns), name);
    return res.ok() ? res.value() : api::Object();
  }

  // Objects of `gvr` in `ns` (matching `selector`); empty when the List fails.
  std::vector<api::Object> List(const client::GroupVersionResource& gvr, const std::string& ns,
                                const std::string& selector = "") {
    client::ListOptions options;
    options.label_selector = selector;
    auto res = client_->List(gvr.Namespace(ns), options);
    return res.ok() ? res.value().items : std::vector<api::Object>{};
  }

  // Workloads in `ns` with an ownerReference naming `job`.
  std::vector<api::Object> WorkloadsOf(const std::string& ns, const std::string& job) {
    std::vector<api::Object> out;
    for (const api::Object& wl : List(kWorkloads, ns)) {
      for (const api::Object& ref : wl["metadata"].value("ownerReferences", api::Object::array())) {
        if (ref.value("name", "") == job) out.push_back(wl);
      }
    }
    return out;
  }

  // Accepted writes (POST, PUT, PATCH, DELETE answered 2xx) the API server has
  // counted so far, by "VERB resource[/subresource]" (apiserver_request_total).
  std::map<std::string, double> AcceptedWrites() {
    std::map<std::string, double> out;
    for (const prometheus::MetricFamily& f : metrics_->Collect()) {
      if (f.name != "apiserver_request_total") continue;
      for (const prometheus::ClientMetric& m : f.metric) {
        std::map<std::string, std::string> l;
        for (const prometheus::ClientMetric::Label& label : m.label) l[label.name] = label.value;
        const std::string& verb = l["verb"];
        if (verb != "POST" && verb != "PUT" && verb != "PATCH" && verb != "DELETE") continue;
        if (l["code"].empty() || l["code"][0] != '2') continue;
        const std::string key = verb + " " + l["resource"] + (l["subresource"].empty() ? "" : "/" + l["subresource"]);
        out[key] += m.counter.value;
      }
    }
    return out;
  }

  std::string PodLog(const std::string& ns, const std::string& pod) {
    auto res = client_->Do({"GET", "/api/v1/namespaces/" + ns + "/pods/" + pod + "/log", {}, ""});
    return res.ok() && res.value().status == 200 ? res.value().body : "";
  }

  RealClock& clock_ = RealClock::Get();
  std::unique_ptr<store::Store> store_;
  api::AdmissionPipeline pipeline_;
  std::shared_ptr<prometheus::Registry> metrics_ = std::make_shared<prometheus::Registry>();
  std::unique_ptr<apiserver::ApiServer> server_;
  std::unique_ptr<client::HttpClient> client_;
  std::unique_ptr<client::Client> controller_client_;  // the controllers' in-process client
  std::unique_ptr<controllers::ControllerManager> manager_;
  std::unique_ptr<agent::NodeAgent> agent_;
  std::string dir_;
  bool sqlite_ = false;
  std::string node_capacity_ = "cpu=2,memory=4Gi";
  bool sandbox_ = false;
};

}  // namespace berth::integration
