#include "agent/node_agent.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <signal.h>
#include <spawn.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>

#include "agent/shim/run_record.h"
#include "agent/shim/shim_client.h"
#include "agent/shim/testing/test_files.h"
#include "api/unstructured.h"
#include "client/testing/fake_client.h"

namespace berth::agent {
namespace {

using client::testing::FakeClient;
using namespace std::chrono_literals;

const client::GroupVersionResource kPods{"", "v1", "pods"};
const client::GroupVersionResource kNodes{"", "v1", "nodes"};
const client::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};

// Waits (real time) for a condition the agent's threads bring about. Not a
// timing assertion: the limit only bounds a hung test.
std::string testing_ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool WaitFor(const std::function<bool()>& pred, int tries = 2000) {
  for (int i = 0; i < tries; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

using shim::testing::FindProcess;

// Supervisors that wait for `gate` (a file) before they start, for the runs whose directory
// contains `held` ("" = every run); the others start at once.
SupervisorOptions GatedSupervisor(const std::string& gate, const std::string& held) {
  SupervisorOptions o;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  o.command = {"/bin/sh", "-c",
               "case \"$1\" in *" + held + "*) while [ ! -e '" + gate +
                   "' ]; do sleep 0.01; done;; esac; exec \"$0\" shim \"$1\"",
               self};
  o.launcher = false;  // every start is this exec
  return o;
}

class NodeAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-node-agent-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    NodeAgentOptions o;
    o.node_name = "node-a";
    o.capacity = *ParseResourceList("cpu=8,memory=32Gi,nvidia.com/gpu=2");
    o.data_dir = dir_;
    o.address = "10.0.0.5";
    o.cgroups = Cgroups::Unavailable("cgroups are not used in these tests");
    o.poll_interval = 5ms;
    // An absolute floor, not the default 10 % free: the shared host disk's fill level is
    // not this test's to control (tests/e2e/lib.sh says more).
    o.eviction_hard = *ParseEvictionHard("nodefs.available<1Gi");
    options_ = o;
    agent_ = std::make_unique<NodeAgent>(client_, clock_, o);
    ASSERT_TRUE(agent_->Start().ok());
  }
  void TearDown() override {
    agent_.reset();  // kills what its pods run
    shim::testing::RemoveWhenSupervisorsAreGone(dir_);
  }

  // A pod bound to node-a with one container running `script` under /bin/sh.
  api::Object ShellPod(const std::string& name, const std::string& script, const std::string& restart = "Never") {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", "default"}}},
            {"spec",
             {{"nodeName", "node-a"},
              {"restartPolicy", restart},
              {"containers", {{{"name", "main"}, {"image", "busybox"}, {"command", {"/bin/sh", "-c", script}}}}}}}};
  }
  api::Object Create(const api::Object& pod) {
    StatusOr<api::Object> created = client_.Create(kPods.Namespace("default"), pod);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? *created : api::Object();
  }
  std::optional<api::Object> GetPod(const std::string& name) {
    StatusOr<api::Object> p = client_.Get(kPods.Namespace("default"), name);
    if (!p.ok()) return std::nullopt;
    return *p;
  }
  // Another node, "node-b" at 10.0.0.9, where the test places pods this agent does not run.
  void CreateNodeB() {
    api::Object node_b = {{"apiVersion", "v1"},
                          {"kind", "Node"},
                          {"metadata", {{"name", "node-b"}}},
                          {"status", {{"addresses", {{{"type", "InternalIP"}, {"address", "10.0.0.9"}}}}}}};
    ASSERT_TRUE(client_.Create(kNodes, node_b).ok());
  }
  // Replaces the agent by one whose supervisors wait for `gate` (GatedSupervisor).
  void RestartWithGatedSupervisors(const std::string& gate, const std::string& held) {
    agent_.reset();
    NodeAgentOptions gated = options_;
    gated.supervisor = GatedSupervisor(gate, held);
    agent_ = std::make_unique<NodeAgent>(client_, clock_, gated);
    ASSERT_TRUE(agent_->Start().ok());
  }
  // Whether the agent handed run 0 of `name`'s container "main" to a supervisor (its launch record is written).
  bool LaunchRecorded(const std::string& name) {
    std::optional<api::Object> pod = GetPod(name);
    return pod &&
           std::filesystem::exists(shim::RunDir(dir_ + "/pods/default_" + name + "_" + api::Uid(*pod), "main", 0) +
                                   "/" + shim::kLaunchFile);
  }
  std::string Phase(const std::string& name) {
    std::optional<api::Object> p = GetPod(name);
    if (!p || !p->contains("status")) return "";
    return (*p)["status"].value("phase", "");
  }
  std::string Log(const std::string& name, client::PodLogOptions o = {}) {
    StatusOr<std::string> log = agent_->ReadPodLog("default", name, o);
    return log.ok() ? *log : "<" + log.status().ToString() + ">";
  }
  bool LogContains(const std::string& name, const std::string& text) {
    return Log(name).find(text) != std::string::npos;
  }
  Status DeleteWithGrace(const std::string& name, int64_t grace) {
    client::DeleteOptions d;
    d.grace_period_seconds = grace;
    return client_.Delete(kPods.Namespace("default"), name, d);
  }
  // The last status a watch saw for `name` before the object was deleted.
  static api::Object LastStatusBeforeDelete(client::WatchStream& watch) {
    api::Object last;
    while (true) {
      StatusOr<std::optional<client::WatchEvent>> e = watch.Next(5s);
      if (!e.ok() || !e->has_value()) return last;
      if ((*e)->type == client::WatchEventType::kDeleted) return last;
      last = (*e)->object->value("status", api::Object());
    }
  }

  FakeClock clock_;
  FakeClient client_{clock_};
  std::string dir_;
  NodeAgentOptions options_;
  std::unique_ptr<NodeAgent> agent_;
};

TEST_F(NodeAgentTest, RegistersNodeWithCapacityConditionsAndAddresses) {
  StatusOr<api::Object> node = client_.Get(kNodes, "node-a");
  ASSERT_TRUE(node.ok()) << node.status();
  const api::Object& status = (*node)["status"];
  EXPECT_EQ(status["capacity"]["cpu"], "8");
  EXPECT_EQ(status["capacity"]["memory"], "32Gi");
  EXPECT_EQ(status["capacity"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(status["capacity"]["pods"], "110");
  // Undeclared: the size of the data directory's filesystem, as the kubelet's root filesystem.
  StatusOr<FilesystemStats> fs = StatFilesystem(dir_);
  ASSERT_TRUE(fs.ok());
  EXPECT_EQ(status["capacity"]["ephemeral-storage"],
            Quantity::FromUnits(fs->capacity, Quantity::Format::kBinarySI).String());
  EXPECT_EQ(status["allocatable"], status["capacity"]);
  api::Object ready;
  for (const auto& c : status["conditions"]) {
    if (c["type"] == "Ready") ready = c;
  }
  EXPECT_EQ(ready["status"], "True");
  EXPECT_EQ(ready["reason"], "KubeletReady");
  EXPECT_EQ(ready["message"], "kubelet is posting ready status");
  EXPECT_EQ(status["addresses"][0], (api::Object{{"type", "InternalIP"}, {"address", "10.0.0.5"}}));
  EXPECT_EQ(status["addresses"][1], (api::Object{{"type", "Hostname"}, {"address", "node-a"}}));
  EXPECT_EQ(status["nodeInfo"]["operatingSystem"], "linux");
  EXPECT_EQ((*node)["metadata"]["labels"]["kubernetes.io/hostname"], "node-a");
}

// The streaming server's port and CA are on the Node (status.daemonEndpoints and the
// berth.dev/kubelet-serving-ca annotation), also when the Node is registered again; a
// restart without a streaming server publishes port 0 and removes the annotation.
TEST_F(NodeAgentTest, PublishesTheStreamingServersPortAndCaOnItsNode) {
  EXPECT_EQ(client_.Get(kNodes, "node-a").value()["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"], 0);
  agent_.reset();
  NodeAgentOptions o = options_;
  o.kubelet_port = 10250;
  o.kubelet_serving_ca_pem = "-----BEGIN CERTIFICATE-----\nnode-a-ca\n-----END CERTIFICATE-----\n";
  agent_ = std::make_unique<NodeAgent>(client_, clock_, o);
  ASSERT_TRUE(agent_->Start().ok());
  api::Object node = client_.Get(kNodes, "node-a").value();
  EXPECT_EQ(node["metadata"]["annotations"]["berth.dev/kubelet-serving-ca"], o.kubelet_serving_ca_pem);
  EXPECT_EQ(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"], 10250);

  ASSERT_TRUE(client_.Delete(kNodes, "node-a", {}).ok());
  const int64_t renewals = agent_->lease_renewals();
  clock_.Advance(kNodeLeaseRenewInterval);
  ASSERT_TRUE(WaitFor([&] { return agent_->lease_renewals() > renewals; }));
  node = client_.Get(kNodes, "node-a").value();
  EXPECT_EQ(node["metadata"]["annotations"]["berth.dev/kubelet-serving-ca"], o.kubelet_serving_ca_pem);
  EXPECT_EQ(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"], 10250);

  agent_.reset();
  agent_ = std::make_unique<NodeAgent>(client_, clock_, options_);
  ASSERT_TRUE(agent_->Start().ok());
  node = client_.Get(kNodes, "node-a").value();
  EXPECT_FALSE(node["metadata"]["annotations"].contains("berth.dev/kubelet-serving-ca")) << node["metadata"];
  EXPECT_EQ(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"], 0);
}

// The informer's cache: the pods bound to this node only.
TEST_F(NodeAgentTest, CachedPodFindsOnlyThisNodesPods) {
  Create(ShellPod("mine", "sleep 600"));
  api::Object other = ShellPod("theirs", "exit 0");
  other["spec"]["nodeName"] = "node-b";
  Create(other);
  ASSERT_TRUE(WaitFor([&] { return agent_->CachedPod("default", "mine").ok(); }));
  EXPECT_EQ(api::Name(*agent_->CachedPod("default", "mine").value()), "mine");
  StatusOr<client::ObjectPtr> theirs = agent_->CachedPod("default", "theirs");
  EXPECT_EQ(theirs.status().code(), Code::kNotFound);
  EXPECT_EQ(theirs.status().message(), "pods \"theirs\" not found");
}

TEST_F(NodeAgentTest, RenewsLeaseEveryTenSecondsOfClockTime) {
  client::ResourceRef leases = kLeases.Namespace("kube-node-lease");
  StatusOr<api::Object> lease = client_.Get(leases, "node-a");
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "node-a");
  EXPECT_EQ((*lease)["spec"]["leaseDurationSeconds"], 40);
  EXPECT_EQ((*lease)["spec"]["renewTime"], FormatRfc3339Micro(clock_.Now()));
  EXPECT_EQ((*lease)["metadata"]["ownerReferences"][0]["kind"], "Node");
  EXPECT_EQ(agent_->lease_renewals(), 1);

  clock_.Advance(9s);
  // A pod handled after the advance proves a full loop pass saw the new time.
  Create(ShellPod("probe", "exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("probe") == "Succeeded"; }));
  EXPECT_EQ(agent_->lease_renewals(), 1);

  clock_.Advance(1s);
  ASSERT_TRUE(WaitFor([&] { return agent_->lease_renewals() == 2; }));
  lease = client_.Get(leases, "node-a");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ((*lease)["spec"]["renewTime"], FormatRfc3339Micro(clock_.Now()));
}

// A Node deleted through the API is registered again at the next renewal,
// with a Lease owned by the new Node; the pod running meanwhile keeps running.
TEST_F(NodeAgentTest, ADeletedNodeIsRegisteredAgainAtTheNextRenewal) {
  Create(ShellPod("long", "sleep 600"));
  ASSERT_TRUE(WaitFor([&] { return Phase("long") == "Running"; }));
  const std::string old_uid = api::Uid(client_.Get(kNodes, "node-a").value());
  ASSERT_TRUE(client_.Delete(kNodes, "node-a", {}).ok());
  const int64_t renewals = agent_->lease_renewals();
  clock_.Advance(kNodeLeaseRenewInterval);
  ASSERT_TRUE(WaitFor([&] { return agent_->lease_renewals() > renewals; }));
  StatusOr<api::Object> node = client_.Get(kNodes, "node-a");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_NE(api::Uid(*node), old_uid);
  EXPECT_EQ((*node)["status"]["capacity"]["cpu"], "8");
  StatusOr<api::Object> lease = client_.Get(kLeases.Namespace("kube-node-lease"), "node-a");
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_EQ((*lease)["metadata"]["ownerReferences"][0]["uid"], api::Uid(*node));
  EXPECT_EQ(Phase("long"), "Running");
}

// The Lease does not wait for pod work: while the supervisors of many pods are still
// starting, it is renewed (else the control plane fails every pod of the node: NodeLost).
TEST_F(NodeAgentTest, LeaseIsRenewedWhileContainersStart) {
  const std::string gate = dir_ + "/gate";
  ASSERT_NO_FATAL_FAILURE(RestartWithGatedSupervisors(gate, ""));
  for (int i = 0; i < 6; ++i) Create(ShellPod("slow-" + std::to_string(i), "sleep 600"));
  // Every start is handed to its supervisor (its launch record written) without waiting for the others.
  ASSERT_TRUE(WaitFor([&] {
    for (int i = 0; i < 6; ++i) {
      if (!LaunchRecorded("slow-" + std::to_string(i))) return false;
    }
    return true;
  }));
  const int64_t renewals = agent_->lease_renewals();
  clock_.Advance(kNodeLeaseRenewInterval);
  ASSERT_TRUE(WaitFor([&] { return agent_->lease_renewals() > renewals; }));
  for (int i = 0; i < 6; ++i) EXPECT_NE(Phase("slow-" + std::to_string(i)), "Running") << i;
  std::ofstream(gate) << "";
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(WaitFor([&] { return Phase("slow-" + std::to_string(i)) == "Running"; })) << i;
  }
}

// One pod's container start does not wait for another's (the kubelet's pod workers): while
// the supervisor of a-slow is held, b-fast (synced after it in the same pass) starts and
// runs; a-slow shows ContainerCreating until its supervisor answers, then Running.
TEST_F(NodeAgentTest, APodsStartDoesNotWaitForAnothersSupervisor) {
  const std::string gate = dir_ + "/gate";
  ASSERT_NO_FATAL_FAILURE(RestartWithGatedSupervisors(gate, "a-slow"));
  Create(ShellPod("a-slow", "echo started; sleep 600"));
  Create(ShellPod("b-fast", "echo started; sleep 600"));
  ASSERT_TRUE(WaitFor([&] { return Phase("b-fast") == "Running" && LogContains("b-fast", "started"); }))
      << Phase("b-fast");
  // Its status waits kStartingStatusDelay for the start, then shows it creating.
  ASSERT_TRUE(LaunchRecorded("a-slow"));
  std::optional<api::Object> slow = GetPod("a-slow");
  ASSERT_TRUE(slow.has_value());
  EXPECT_FALSE(api::NestedField(*slow, {"status", "containerStatuses"}).is_array()) << slow->dump();
  clock_.Advance(kStartingStatusDelay);
  ASSERT_TRUE(WaitFor([&] {
    slow = GetPod("a-slow");
    return api::NestedField(*slow, {"status", "containerStatuses"}).is_array();
  }));
  EXPECT_EQ((*slow)["status"].value("phase", ""), "Pending");
  const api::Object* statuses = api::NestedField(*slow, {"status", "containerStatuses"}).is_array()
                                    ? &(*slow)["status"]["containerStatuses"]
                                    : nullptr;
  ASSERT_NE(statuses, nullptr);
  EXPECT_EQ((*statuses)[0]["state"]["waiting"].value("reason", ""), "ContainerCreating");
  std::ofstream(gate) << "";
  EXPECT_TRUE(WaitFor([&] { return Phase("a-slow") == "Running" && LogContains("a-slow", "started"); }));
  slow = GetPod("a-slow");
  EXPECT_TRUE((*slow)["status"]["containerStatuses"][0]["state"].contains("running"));
}

// A pod deleted while its container's next run is starting: the lifecycle sees nothing
// running and no restart to come, but the run may yet start, so no terminal phase is written
// until its supervisor answered (then the run is stopped, and the pod finishes and goes).
TEST_F(NodeAgentTest, NoTerminalPhaseIsWrittenWhileARunStarts) {
  const std::string gate = dir_ + "/gate";
  ASSERT_NO_FATAL_FAILURE(RestartWithGatedSupervisors(gate, "/runs/main/1"));
  const std::string uid = api::Uid(Create(ShellPod("restarts", "exit 1", "OnFailure")));
  // Run 0 exits 1; run 1 starts at once (the first restart has no back-off) and its supervisor is held.
  const std::string run1 = shim::RunDir(dir_ + "/pods/default_restarts_" + uid, "main", 1);
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(run1 + "/" + shim::kLaunchFile); }));
  ASSERT_TRUE(DeleteWithGrace("restarts", 30).ok());
  clock_.Advance(kStartingStatusDelay * 2);
  std::this_thread::sleep_for(100ms);  // several passes
  // Still there, and not terminal: Running, or no status at all when run 0 started and exited
  // within one pass (its status was still deferred when run 1 began to start).
  ASSERT_TRUE(GetPod("restarts").has_value());
  const std::string phase = Phase("restarts");
  EXPECT_TRUE(phase == "Running" || phase.empty()) << GetPod("restarts")->dump();
  std::ofstream(gate) << "";
  EXPECT_TRUE(WaitFor([&] { return !GetPod("restarts").has_value(); })) << Phase("restarts");
}

// Probes belong to a run: those of a run that exited are not run while the next run's
// supervisor is still starting (they would probe, and a liveness failure would kill, the new
// run before it ran). Run 0 exits, run 1 is held; the old run's liveness probe comes due
// meanwhile and must not run; run 1's own probes start with it.
TEST_F(NodeAgentTest, ProbesOfAnExitedRunDoNotRunWhileTheNextRunStarts) {
  const std::string gate = dir_ + "/gate";
  ASSERT_NO_FATAL_FAILURE(RestartWithGatedSupervisors(gate, "/runs/main/1"));
  api::Object pod = ShellPod("probed", "echo up; while [ ! -f exit ]; do sleep 0.02; done; exit 1", "Always");
  pod["spec"]["containers"][0]["livenessProbe"] =
      api::Object::parse(R"({"exec": {"command": ["false"]}, "initialDelaySeconds": 5, "periodSeconds": 1})");
  const std::string uid = api::Uid(Create(pod));
  ASSERT_TRUE(WaitFor([&] { return Phase("probed") == "Running" && LogContains("probed", "up"); }));
  const std::string pod_dir = dir_ + "/pods/default_probed_" + uid;
  std::ofstream(pod_dir + "/work/exit").put('x');
  const std::string run1 = shim::RunDir(pod_dir, "main", 1);
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(run1 + "/" + shim::kLaunchFile); }));
  auto probe_events = [&] {
    berth::client::EventRecorder::FlushAll();
    std::vector<std::string> seen;
    const client::GroupVersionResource events{"", "v1", "events"};
    const std::vector<api::Object> items = client_.List(events.Namespace("default"))->items;
    for (const api::Object& e : items) {
      if (api::NestedString(e, {"involvedObject", "name"}) != "probed") continue;
      const std::string reason = api::NestedString(e, {"reason"});
      if (reason == "Unhealthy" || reason == "Killing")
        seen.push_back(reason + ": " + api::NestedString(e, {"message"}));
    }
    return seen;
  };
  // Run 0's liveness probe is due 5 s after it started; the clock passes that by far. A pod
  // created and finished afterwards shows that passes ran meanwhile (probe outcomes are read
  // in the pass after they come in).
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(1s);
    std::this_thread::sleep_for(20ms);
  }
  for (const std::string marker : {"marker-1", "marker-2"}) {
    Create(ShellPod(marker, "exit 0"));
    ASSERT_TRUE(WaitFor([&] { return Phase(marker) == "Succeeded"; }));
  }
  EXPECT_EQ(probe_events(), std::vector<std::string>());
  std::filesystem::remove(pod_dir + "/work/exit");
  std::ofstream(gate) << "";
  ASSERT_TRUE(WaitFor([&] {
    std::optional<api::Object> p = GetPod("probed");
    return p && api::NestedField(*p, {"status", "containerStatuses"}).is_array() &&
           (*p)["status"]["containerStatuses"][0].value("restartCount", 0) == 1 &&
           (*p)["status"]["containerStatuses"][0]["state"].contains("running");
  })) << GetPod("probed")->dump();
  // Run 1's probe runs on its own schedule: failing after its initial delay, it restarts run 1.
  clock_.Advance(10s);  // past its initial delay
  ASSERT_TRUE(WaitFor([&] { return !probe_events().empty(); }));
  const std::vector<std::string> seen = probe_events();
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), "Unhealthy: Liveness probe failed: ") << ::testing::PrintToString(seen);
}

// A start error is known only once the supervisor answers: reported then, with its Failed
// event and the exit runc's wording gives it, as before.
TEST_F(NodeAgentTest, AStartErrorIsReportedOnceTheSupervisorAnswers) {
  const std::string gate = dir_ + "/gate";
  ASSERT_NO_FATAL_FAILURE(RestartWithGatedSupervisors(gate, "broken"));
  api::Object pod = ShellPod("broken", "");
  pod["spec"]["containers"][0]["command"] = {"/no/such/program"};
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return LaunchRecorded("broken"); }));
  clock_.Advance(kStartingStatusDelay);
  ASSERT_TRUE(WaitFor([&] {
    std::optional<api::Object> p = GetPod("broken");
    return p && api::NestedString(*p, {"status", "phase"}) == "Pending" &&
           api::NestedField(*p, {"status", "containerStatuses"}).is_array();
  })) << GetPod("broken")->dump();
  std::ofstream(gate) << "";
  ASSERT_TRUE(WaitFor([&] { return Phase("broken") == "Failed"; })) << Phase("broken");
  const api::Object terminated = (*GetPod("broken"))["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated.value("reason", ""), "StartError");
  EXPECT_EQ(terminated.value("exitCode", 0), 128);
  EXPECT_NE(terminated.value("message", "").find("/no/such/program"), std::string::npos) << terminated.dump();
}

TEST_F(NodeAgentTest, SucceededPodHasExitCodeZeroAndLog) {
  Create(ShellPod("hello", "echo hi; exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("hello") == "Succeeded"; })) << Phase("hello");
  api::Object status = (*GetPod("hello"))["status"];
  const api::Object& terminated = status["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 0);
  EXPECT_EQ(terminated["reason"], "Completed");
  EXPECT_EQ(status["podIP"], "10.0.0.5");
  EXPECT_EQ(status["hostIP"], "10.0.0.5");
  EXPECT_EQ(Log("hello"), "hi\n");
  // Terminal pods keep their status and hold nothing, not even a worker: a node that ran
  // 100,000 pods does not pass over them.
  EXPECT_TRUE(WaitFor([&] { return agent_->ActivePods().empty(); }));
  EXPECT_EQ(Phase("hello"), "Succeeded");
}

// The agent owns a finished pod's status, as the kubelet's status manager does: another
// client's write of a different phase over it (a finished pod set Running again, or Failed)
// is written back, nothing runs again, and a pod set Running and then deleted gracefully is
// deleted (it stayed Terminating: the agent waited for a terminal phase that never came).
TEST_F(NodeAgentTest, AFinishedPodsStatusWrittenOverByAnotherClientIsWrittenBack) {
  Create(ShellPod("done", "echo hi; exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("done") == "Succeeded" && agent_->ActivePods().empty(); }));
  const api::Object finished = (*GetPod("done"))["status"];
  // Writes `phase` (and a running container) over the pod's status; its resourceVersion.
  auto overwrite = [&](const std::string& phase) {
    api::Object pod = *GetPod("done");
    pod["status"]["phase"] = phase;
    pod["status"]["containerStatuses"][0]["state"] = {{"running", {{"startedAt", "2026-01-01T00:00:00Z"}}}};
    StatusOr<api::Object> written = client_.UpdateStatus(kPods.Namespace("default"), pod);
    EXPECT_TRUE(written.ok() || written.status().code() == Code::kConflict) << written.status();
    return written.ok() ? api::ResourceVersion(*written) : std::string();
  };
  for (const std::string phase : {"Running", "Failed", "Pending"}) {
    ASSERT_NE(overwrite(phase), "");
    ASSERT_TRUE(WaitFor([&] { return Phase("done") == "Succeeded"; })) << phase;
    const api::Object status = (*GetPod("done"))["status"];
    EXPECT_EQ(status["containerStatuses"], finished["containerStatuses"]) << phase;
    EXPECT_EQ(status["conditions"], finished["conditions"]) << phase;
  }
  EXPECT_EQ(Log("done"), "hi\n");  // it never ran again
  EXPECT_TRUE(agent_->ActivePods().empty());
  // Set Running again and deleted with a grace period while it shows Running (the delete is
  // conditional on that revision, so the API server marks it Terminating instead of removing a
  // terminal pod at once): the agent deletes it.
  bool deleted = false;
  for (int attempt = 0; attempt < 100 && !deleted; ++attempt) {
    const std::string running = overwrite("Running");
    if (running.empty()) continue;  // the agent wrote its status back first
    client::DeleteOptions d;
    d.grace_period_seconds = 30;
    d.preconditions.resource_version = running;
    const Status s = client_.Delete(kPods.Namespace("default"), "done", d);
    ASSERT_TRUE(s.ok() || s.code() == Code::kConflict) << s;
    deleted = s.ok();
  }
  ASSERT_TRUE(deleted);
  EXPECT_TRUE(WaitFor([&] { return !GetPod("done").has_value(); })) << GetPod("done")->dump();
}

// A graceful node shutdown syncs every pod on every pass, so it meets a pod whose terminal
// write (Failed, Terminated) the informer has not shown yet: the older revision the cache shows
// is not another client's write over the finished status. Nothing is written back over it (the
// write would conflict with the agent's own, and warn that the phase was written over). The
// informer is held behind the store while "slow" keeps the shutdown's passes going.
TEST_F(NodeAgentTest, AFinishedPodsOlderCachedRevisionIsNotTakenForAnotherClientsWrite) {
  api::Object quick = ShellPod("quick", "trap 'exit 0' TERM; echo ready; while :; do sleep 0.02; done");
  api::Object slow = ShellPod("slow", "trap 'sleep 1; exit 0' TERM; echo ready; while :; do sleep 0.02; done");
  slow["spec"]["terminationGracePeriodSeconds"] = 30;
  Create(quick);
  Create(slow);
  ASSERT_TRUE(WaitFor([&] { return LogContains("quick", "ready") && LogContains("slow", "ready"); }));
  ASSERT_TRUE(WaitFor([&] { return Phase("quick") == "Running" && Phase("slow") == "Running"; }));
  ASSERT_TRUE(WaitFor([&] {
    StatusOr<client::ObjectPtr> cached = agent_->CachedPod("default", "quick");
    return cached.ok() && api::NestedString(**cached, {"status", "phase"}) == "Running";
  }));
  std::atomic<bool> hold{true};
  client_.BeforeWatchEvent([&](const client::WatchEvent& e) {
    while (hold.load() && e.object != nullptr && api::Name(*e.object) == "quick" &&
           api::NestedString(*e.object, {"status", "phase"}) == "Failed") {
      std::this_thread::sleep_for(1ms);
    }
  });
  const int quick_writes = client_.CallCount("updatestatus default/quick");
  // The hold ends once "slow" is reported (its last write; the shutdown then stops the agent,
  // which waits for the informer): by then the passes of slow's second met "quick" finished.
  std::thread release([&] {
    WaitFor([&] { return Phase("slow") == "Failed"; });
    hold = false;
  });
  agent_->Shutdown(60s);
  release.join();
  client_.BeforeWatchEvent(nullptr);
  const api::Object status = (*GetPod("quick"))["status"];
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "Terminated");
  // Its shutdown status written once, and never written back.
  EXPECT_EQ(client_.CallCount("updatestatus default/quick"), quick_writes + 1);
  EXPECT_EQ(Phase("slow"), "Failed");
}

// A supervisor killed while its container runs (the agent running throughout): the run is
// lost (ContainerStatusUnknown, 137), and the server log says so, the one trace an operator has
// of why a long run ended.
TEST_F(NodeAgentTest, ARunLostWhileTheAgentRunsIsLogged) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
  spdlog::default_logger()->sinks().push_back(sink);
  struct Detach {
    std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink;
    ~Detach() {
      auto& sinks = spdlog::default_logger()->sinks();
      sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
    }
  } detach{sink};
  const std::string uid = api::Uid(Create(ShellPod("long", "echo ready; sleep 600")));
  ASSERT_TRUE(WaitFor([&] { return LogContains("long", "ready") && Phase("long") == "Running"; }));
  const pid_t shim = FindProcess("shim " + dir_ + "/pods/default_long_" + uid + "/runs/main/0");
  ASSERT_GT(shim, 0);
  ASSERT_EQ(kill(shim, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return Phase("long") == "Failed"; })) << GetPod("long")->dump();
  const api::Object terminated = (*GetPod("long"))["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["reason"], "ContainerStatusUnknown");
  EXPECT_EQ(terminated["exitCode"], 137);
  bool logged = false;
  for (const std::string& line : sink->last_formatted()) {
    logged |= line.find("node node-a: run 0 of container main of pod default/long is lost: its supervisor is gone") !=
              std::string::npos;
  }
  EXPECT_TRUE(logged);
}

// The pod's cgroup gets pids.max and the summed limits, each run's cgroup its
// container's limits (a fake cgroup v2 tree: the files written are the check).
TEST_F(NodeAgentTest, PodAndContainerCgroupsGetTheLimitsOfTheSpec) {
  agent_.reset();
  const std::string parent = dir_ + "/cgroup";
  std::filesystem::create_directories(parent);
  std::ofstream(parent + "/cgroup.controllers") << "cpu memory pids\n";
  NodeAgentOptions o = options_;
  o.cgroups = Cgroups::AtDirectoryV2(parent);
  o.sandbox.pod_pids_limit = 100;
  agent_ = std::make_unique<NodeAgent>(client_, clock_, o);
  ASSERT_TRUE(agent_->Start().ok());
  EXPECT_TRUE(agent_->UnenforcedCgroups().empty());
  api::Object pod = ShellPod("limited", "sleep 30");
  pod["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "250m"}}},
                                               {"limits", {{"cpu", "500m"}, {"memory", "64Mi"}}}};
  const std::string uid = api::Uid(Create(pod));
  ASSERT_TRUE(WaitFor([&] { return Phase("limited") == "Running"; })) << (*GetPod("limited")).dump();
  const std::string pod_dir = parent + "/pod" + uid;
  EXPECT_EQ(testing_ReadFile(pod_dir + "/pids.max"), "100");
  EXPECT_EQ(testing_ReadFile(pod_dir + "/cpu.max"), "50000 100000");
  EXPECT_EQ(testing_ReadFile(pod_dir + "/cpu.weight"), "10");  // 256 shares
  EXPECT_EQ(testing_ReadFile(pod_dir + "/memory.max"), "67108864");
  EXPECT_EQ(testing_ReadFile(pod_dir + "/main-0/cpu.max"), "50000 100000");
  EXPECT_EQ(testing_ReadFile(pod_dir + "/main-0/memory.max"), "67108864");
  EXPECT_EQ(testing_ReadFile(pod_dir + "/main-0/cgroup.procs"), "0");  // the process joined it
  StatusOr<shim::LaunchRecord> record =
      shim::ReadLaunchRecord(shim::RunDir(dir_ + "/pods/default_limited_" + uid, "main", 0));
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_EQ(record->cgroup_dirs, std::vector<std::string>{pod_dir + "/main-0"});
  ASSERT_TRUE(DeleteWithGrace("limited", 0).ok());
  EXPECT_TRUE(WaitFor([&] { return !GetPod("limited").has_value(); }));
}

TEST_F(NodeAgentTest, FailingPodIsFailedWithItsExitCode) {
  Create(ShellPod("broken", "echo oops >&2; exit 3"));
  ASSERT_TRUE(WaitFor([&] { return Phase("broken") == "Failed"; })) << Phase("broken");
  api::Object status = (*GetPod("broken"))["status"];
  const api::Object& terminated = status["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 3);
  EXPECT_EQ(terminated["reason"], "Error");
  EXPECT_EQ(Log("broken"), "oops\n");
}

TEST_F(NodeAgentTest, MissingBinaryIsAStartError) {
  api::Object pod = ShellPod("nobin", "");
  pod["spec"]["containers"][0]["command"] = {"no-such-program-berth"};
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return Phase("nobin") == "Failed"; })) << Phase("nobin");
  api::Object terminated = (*GetPod("nobin"))["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 128);
  EXPECT_EQ(terminated["reason"], "StartError");
  EXPECT_NE(terminated["message"].get<std::string>().find("executable file not found in $PATH"), std::string::npos);
}

// Under OnFailure a container whose command is missing is restarted as a crashing one is:
// each attempt counts in restartCount, and from the second one it waits in CrashLoopBackOff
// for 10 s, then 20 s, of the agent's clock (kubelet doBackOff).
TEST_F(NodeAgentTest, MissingBinaryUnderOnFailureRestartsWithCrashLoopBackOff) {
  api::Object pod = ShellPod("nobin", "", "OnFailure");
  pod["spec"]["containers"][0]["command"] = {"no-such-program-berth"};
  const std::string uid = api::Uid(Create(pod));
  auto status = [&] { return (*GetPod("nobin"))["status"]["containerStatuses"][0]; };
  auto waiting = [&](int restarts, const std::string& backoff) {
    std::optional<api::Object> p = GetPod("nobin");
    if (!p || !(*p)["status"].contains("containerStatuses")) return false;
    const api::Object& cs = (*p)["status"]["containerStatuses"][0];
    return cs["restartCount"] == restarts && cs["state"].contains("waiting") &&
           cs["state"]["waiting"].value("message", "") ==
               "back-off " + backoff + " restarting failed container=main pod=nobin_default(" + uid + ")";
  };
  ASSERT_TRUE(WaitFor([&] { return waiting(1, "10s"); })) << status();
  api::Object cs = status();
  EXPECT_EQ(cs["state"]["waiting"]["reason"], "CrashLoopBackOff");
  EXPECT_EQ(cs["lastState"]["terminated"]["exitCode"], 128);
  EXPECT_EQ(cs["lastState"]["terminated"]["reason"], "StartError");
  EXPECT_EQ(Phase("nobin"), "Running");
  clock_.Advance(9s);
  std::this_thread::sleep_for(50ms);  // several polls: nothing starts before the backoff ends
  EXPECT_TRUE(waiting(1, "10s")) << status();
  clock_.Advance(1s);
  ASSERT_TRUE(WaitFor([&] { return waiting(2, "20s"); })) << status();
}

// The kubelet's Events (node_agent.h "Events"): a container exiting 1 under OnFailure is
// started again and again; each start repeats Pulled/Created/Started and each back-off
// wait records BackOff, all aggregated into one Event object per reason whose count
// grows, so a crash loop adds no objects.
TEST_F(NodeAgentTest, ACrashLoopRecordsAggregatedContainerEvents) {
  const std::string uid = api::Uid(Create(ShellPod("crash", "exit 1", "OnFailure")));
  const client::GroupVersionResource events{"", "v1", "events"};
  auto counts = [&] {
    std::map<std::string, int64_t> out;
    berth::client::EventRecorder::FlushAll();
    const std::vector<api::Object> items = client_.List(events.Namespace("default"))->items;
    for (const api::Object& e : items) {
      EXPECT_EQ(e["involvedObject"]["name"], "crash");
      EXPECT_EQ(e["involvedObject"]["fieldPath"], "spec.containers{main}");
      EXPECT_EQ(e["source"], (api::Object{{"component", "kubelet"}, {"host", "node-a"}}));
      out[e["reason"].get<std::string>() + ": " + e["message"].get<std::string>()] += e["count"].get<int64_t>();
    }
    return out;
  };
  const std::string backoff = "BackOff: Back-off restarting failed container main in pod crash_default(" + uid + ")";
  ASSERT_TRUE(WaitFor([&] { return counts()[backoff] == 1; }));  // run 2 ended: waits 10 s
  clock_.Advance(10s);
  ASSERT_TRUE(WaitFor([&] { return counts()[backoff] == 2; }));  // run 3 ended: waits 20 s
  clock_.Advance(20s);
  ASSERT_TRUE(WaitFor([&] { return counts()[backoff] == 3; }));
  EXPECT_EQ(counts(), (std::map<std::string, int64_t>{
                          {"Pulled: Container image \"busybox\" already present on machine", 4},
                          {"Created: Created container main", 4},
                          {"Started: Started container main", 4},
                          {backoff, 3},
                      }));
  berth::client::EventRecorder::FlushAll();
  EXPECT_EQ(client_.List(events.Namespace("default"))->items.size(), 4u);
}

// Volumes (agent/volumes.h): a pod whose ConfigMap is missing stays ContainerCreating
// with the kubelet's FailedMount event; once the ConfigMap exists its files are on the
// node, and without the sandbox the mount is a CreateContainerConfigError. A hostPath
// mounted at its own path needs no sandbox.
TEST_F(NodeAgentTest, VolumesWaitForTheirConfigMapAndNeedTheSandboxToBeMounted) {
  api::Object pod = ShellPod("vol", "exit 0");
  pod["spec"]["volumes"] = api::Object::array({{{"name", "config"}, {"configMap", {{"name", "cm"}}}}});
  pod["spec"]["containers"][0]["volumeMounts"] = api::Object::array({{{"name", "config"}, {"mountPath", "/etc/cfg"}}});
  const std::string uid = api::Uid(Create(pod));
  const client::GroupVersionResource events{"", "v1", "events"};
  auto has_event = [&](const std::string& reason, const std::string& message) {
    berth::client::EventRecorder::FlushAll();
    const std::vector<api::Object> items = client_.List(events.Namespace("default"))->items;
    for (const api::Object& e : items) {
      if (e["reason"] == reason && e["message"] == message) return true;
    }
    return false;
  };
  ASSERT_TRUE(WaitFor([&] {
    return has_event("FailedMount", "MountVolume.SetUp failed for volume \"config\" : configmap \"cm\" not found");
  }));
  // The container's state.waiting, {} while there is none (no status yet, or a state
  // without waiting): always an object, so the polls below can read it.
  auto waiting = [&] {
    std::optional<api::Object> p = GetPod("vol");
    if (!p) return api::Object::object();
    const api::Object& statuses = api::NestedField(*p, {"status", "containerStatuses"});
    if (!statuses.is_array() || statuses.empty()) return api::Object::object();
    const api::Object& waiting = api::NestedField(statuses[0], {"state", "waiting"});
    return waiting.is_object() ? waiting : api::Object::object();
  };
  ASSERT_TRUE(WaitFor([&] { return waiting().value("reason", "") == "ContainerCreating"; })) << waiting();
  // `kubectl logs` names the container's waiting reason (the kubelet's validateContainerLogStatus).
  const Status creating = BadRequestError("container \"main\" in pod \"vol\" is waiting to start: ContainerCreating");
  ASSERT_TRUE(WaitFor([&] { return agent_->ReadPodLog("default", "vol", {}).status() == creating; }))
      << agent_->ReadPodLog("default", "vol", {}).status();
  api::Object cm = {{"metadata", {{"name", "cm"}, {"namespace", "default"}}}, {"data", {{"k", "v"}}}};
  ASSERT_TRUE(client_.Create(client::GroupVersionResource{"", "v1", "configmaps"}.Namespace("default"), cm).ok());
  clock_.Advance(1s);  // past the first retry's back-off
  ASSERT_TRUE(WaitFor([&] { return waiting().value("reason", "") == "CreateContainerConfigError"; })) << waiting();
  EXPECT_EQ(waiting()["message"], kVolumesNeedSandboxMessage);
  ASSERT_TRUE(WaitFor([&] {
    return agent_->ReadPodLog("default", "vol", {}).status() ==
           BadRequestError("container \"main\" in pod \"vol\" is waiting to start: CreateContainerConfigError");
  })) << agent_->ReadPodLog("default", "vol", {}).status();
  EXPECT_EQ(testing_ReadFile(dir_ + "/pods/default_vol_" + uid + "/volumes/kubernetes.io~configmap/config/k"), "v");

  api::Object host = ShellPod("host", "test -d /tmp");
  host["spec"]["volumes"] =
      api::Object::array({{{"name", "tmp"}, {"hostPath", {{"path", "/tmp"}, {"type", "Directory"}}}}});
  host["spec"]["containers"][0]["volumeMounts"] = api::Object::array({{{"name", "tmp"}, {"mountPath", "/tmp"}}});
  Create(host);
  ASSERT_TRUE(WaitFor([&] { return Phase("host") == "Succeeded"; })) << Phase("host");
}

TEST_F(NodeAgentTest, DeletionRecordsKillingAndAMissingBinaryFailed) {
  api::Object pod = ShellPod("nobin", "");
  pod["spec"]["containers"][0]["command"] = {"no-such-program-berth"};
  Create(pod);
  Create(ShellPod("sleeper", "while true; do sleep 0.05; done"));
  ASSERT_TRUE(WaitFor([&] { return Phase("sleeper") == "Running" && Phase("nobin") == "Failed"; }));
  ASSERT_TRUE(DeleteWithGrace("sleeper", 30).ok());
  const client::GroupVersionResource events{"", "v1", "events"};
  auto reasons = [&](const std::string& pod_name) {
    std::vector<std::string> out;
    berth::client::EventRecorder::FlushAll();
    const std::vector<api::Object> items = client_.List(events.Namespace("default"))->items;
    for (const api::Object& e : items) {
      if (e["involvedObject"]["name"] != pod_name) continue;
      out.push_back(e["type"].get<std::string>() + " " + e["reason"].get<std::string>() + " " +
                    e["message"].get<std::string>());
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  ASSERT_TRUE(WaitFor([&] { return reasons("sleeper").size() == 4; })) << ::testing::PrintToString(reasons("sleeper"));
  EXPECT_EQ(reasons("sleeper")[1], "Normal Killing Stopping container main");
  std::vector<std::string> nobin = reasons("nobin");
  ASSERT_EQ(nobin.size(), 3u) << ::testing::PrintToString(nobin);
  EXPECT_EQ(nobin[0], "Normal Created Created container main");
  EXPECT_EQ(nobin[1], "Normal Pulled Container image \"busybox\" already present on machine");
  EXPECT_TRUE(nobin[2].starts_with("Warning Failed Error: ")) << nobin[2];
}

TEST_F(NodeAgentTest, DeletionSendsSigtermAndRemovesPodAfterProcessExit) {
  Create(ShellPod("graceful", "trap 'echo term; exit 0' TERM; echo ready; while true; do sleep 0.05; done"));
  ASSERT_TRUE(WaitFor([&] { return LogContains("graceful", "ready"); })) << Log("graceful");
  ASSERT_TRUE(WaitFor([&] { return Phase("graceful") == "Running"; }));
  std::string rv = (*GetPod("graceful"))["metadata"]["resourceVersion"];
  const std::string uid = (*GetPod("graceful"))["metadata"]["uid"];
  StatusOr<std::unique_ptr<client::WatchStream>> watch =
      client_.Watch(kPods.Namespace("default"), {.resource_version = rv, .field_selector = "metadata.name=graceful"});
  ASSERT_TRUE(watch.ok());

  ASSERT_TRUE(DeleteWithGrace("graceful", 30).ok());
  // The clock never reaches the deadline: the process exits on SIGTERM alone.
  ASSERT_TRUE(WaitFor([&] { return !GetPod("graceful").has_value(); }));
  api::Object last = LastStatusBeforeDelete(**watch);
  const api::Object& terminated = last["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(terminated["exitCode"], 0);
  EXPECT_TRUE(agent_->ActivePods().empty());
  // The pod object is gone; its log, written up to the end, is still readable by uid
  // (what a `kubectl logs -f` follower reads last).
  // (by name once the agent's informer has seen the deletion too)
  EXPECT_TRUE(
      WaitFor([&] { return agent_->ReadPodLog("default", "graceful", {}).status().code() == Code::kNotFound; }));
  client::PodLogOptions by_uid;
  by_uid.container = "main";
  by_uid.uid = uid;
  StatusOr<std::string> log = agent_->ReadPodLog("default", "graceful", by_uid);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  // (the shell may also report its sleep child "Terminated" in between)
  EXPECT_EQ(log->rfind("ready\n", 0), 0u) << *log;
  EXPECT_TRUE(log->size() >= 5 && log->compare(log->size() - 5, 5, "term\n") == 0) << *log;
}

TEST_F(NodeAgentTest, ProcessIgnoringSigtermIsKilledAtDeadlineAndPodLastsUntilThen) {
  Create(ShellPod("stubborn", "trap 'echo term' TERM; echo ready; while true; do sleep 0.05; done"));
  ASSERT_TRUE(WaitFor([&] { return LogContains("stubborn", "ready"); })) << Log("stubborn");
  std::string rv = (*GetPod("stubborn"))["metadata"]["resourceVersion"];
  StatusOr<std::unique_ptr<client::WatchStream>> watch =
      client_.Watch(kPods.Namespace("default"), {.resource_version = rv, .field_selector = "metadata.name=stubborn"});
  ASSERT_TRUE(watch.ok());

  ASSERT_TRUE(DeleteWithGrace("stubborn", 5).ok());
  ASSERT_TRUE(WaitFor([&] { return LogContains("stubborn", "term"); })) << Log("stubborn");
  clock_.Advance(4s);
  // Loop passes after the advance (a new pod handled) still leave the pod in place.
  Create(ShellPod("marker", "exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("marker") == "Succeeded"; }));
  ASSERT_TRUE(GetPod("stubborn").has_value());
  EXPECT_TRUE((*GetPod("stubborn"))["metadata"].contains("deletionTimestamp"));

  clock_.Advance(1s);  // the deadline: SIGKILL
  ASSERT_TRUE(WaitFor([&] { return !GetPod("stubborn").has_value(); }));
  api::Object last = LastStatusBeforeDelete(**watch);
  EXPECT_EQ(last["containerStatuses"][0]["state"]["terminated"]["exitCode"], 137);
}

TEST_F(NodeAgentTest, EnvFromFieldRefAndDevicesReachTheProcess) {
  api::Object pod = ShellPod("envpod", "echo name=$POD_NAME node=$NODE gpu=$CUDA_VISIBLE_DEVICES");
  pod["spec"]["containers"][0]["env"] = {
      {{"name", "POD_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}},
      {{"name", "NODE"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}}};
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "1"}}}};
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return Phase("envpod") == "Succeeded"; })) << Phase("envpod");
  EXPECT_EQ(Log("envpod"), "name=envpod node=node-a gpu=0\n");
}

TEST_F(NodeAgentTest, InitContainerRunsFirstInTheSharedWorkDir) {
  api::Object pod = ShellPod("init", "cat f");
  pod["spec"]["initContainers"] = {{{"name", "prepare"}, {"command", {"/bin/sh", "-c", "echo from-init > f"}}}};
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return Phase("init") == "Succeeded"; })) << Phase("init");
  EXPECT_EQ(Log("init"), "from-init\n");
  client::PodLogOptions o;
  o.container = "prepare";
  EXPECT_EQ(Log("init", o), "");
}

TEST_F(NodeAgentTest, PodLogErrorsUseKubernetesWording) {
  api::Object pod = ShellPod("two", "exit 0");
  pod["spec"]["containers"].push_back({{"name", "side"}, {"command", {"/bin/sh", "-c", "exit 0"}}});
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return Phase("two") == "Succeeded"; })) << Phase("two");
  StatusOr<std::string> log = agent_->ReadPodLog("default", "two", {});
  EXPECT_EQ(log.status(),
            BadRequestError("a container name must be specified for pod two, choose one of: [main side]"));
  client::PodLogOptions o;
  o.container = "nope";
  EXPECT_EQ(agent_->ReadPodLog("default", "two", o).status(),
            BadRequestError("container nope is not valid for pod two"));
  o.container = "main";
  o.previous = true;
  EXPECT_EQ(agent_->ReadPodLog("default", "two", o).status(),
            BadRequestError("previous terminated container \"main\" in pod \"two\" not found"));
  EXPECT_EQ(agent_->ReadPodLog("default", "absent", {}).status(), NotFoundError("pods \"absent\" not found"));
}

TEST_F(NodeAgentTest, PodsOfOtherNodesAreNotRun) {
  api::Object pod = ShellPod("elsewhere", "exit 0");
  pod["spec"]["nodeName"] = "node-b";
  Create(pod);
  Create(ShellPod("here", "exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("here") == "Succeeded"; }));
  EXPECT_EQ(Phase("elsewhere"), "");
}

// A master pod being deleted is no endpoint: a worker of a job created again under the same
// names waits for the new master instead of joining the old one while it stops.
TEST_F(NodeAgentTest, AMasterBeingDeletedResolvesNothingUntilItsReplacementIsPlaced) {
  CreateNodeB();
  auto master = [&](const std::string& name) {
    api::Object m = ShellPod(name, "sleep 600");
    m["spec"]["nodeName"] = "node-b";
    m["spec"]["hostname"] = "job-node-0-0";
    m["spec"]["subdomain"] = "job";
    return m;
  };
  api::Object old_master = master("job-node-0-0-old");
  old_master["metadata"]["finalizers"] = {"test.berth/hold"};
  Create(old_master);
  ASSERT_TRUE(DeleteWithGrace("job-node-0-0-old", 30).ok());  // stopping on node-b
  api::Object worker = ShellPod("job-node-0-1-new", "echo $MASTER_ADDR");
  worker["spec"]["containers"][0]["env"] = {{{"name", "MASTER_ADDR"}, {"value", "job-node-0-0.job"}}};
  Create(worker);
  ASSERT_TRUE(WaitFor([&] {
    std::optional<api::Object> p = GetPod("job-node-0-1-new");
    return p && (*p)["status"].contains("containerStatuses");
  }));
  EXPECT_EQ((*GetPod("job-node-0-1-new"))["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ContainerCreating");
  clock_.Advance(std::chrono::seconds(3));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Phase("job-node-0-1-new"), "Pending") << "the worker joined a master that is being deleted";
  Create(master("job-node-0-0-new"));
  ASSERT_TRUE(WaitFor([&] { return Phase("job-node-0-1-new") == "Succeeded"; }));
  EXPECT_EQ(Log("job-node-0-1-new"), "10.0.0.9\n");
}

TEST_F(NodeAgentTest, MasterHostNameResolvesToTheNodeOfThatPodOnceItIsPlaced) {
  CreateNodeB();
  // The master pod exists but is not placed yet.
  api::Object master = ShellPod("job-node-0-0-abcde", "exit 0");
  master["spec"].erase("nodeName");
  master["spec"]["hostname"] = "job-node-0-0";
  master["spec"]["subdomain"] = "job";
  Create(master);
  api::Object worker = ShellPod("job-node-0-1-fghij", "echo $MASTER_ADDR:$MASTER_PORT");
  worker["spec"]["containers"][0]["env"] = {{{"name", "MASTER_ADDR"}, {"value", "job-node-0-0.job"}},
                                            {{"name", "MASTER_PORT"}, {"value", "29500"}}};
  Create(worker);
  ASSERT_TRUE(WaitFor([&] {
    std::optional<api::Object> p = GetPod("job-node-0-1-fghij");
    return p && (*p)["status"].contains("containerStatuses");
  }));
  api::Object waiting = (*GetPod("job-node-0-1-fghij"))["status"]["containerStatuses"][0]["state"];
  EXPECT_EQ(waiting["waiting"]["reason"], "ContainerCreating");
  EXPECT_EQ(Phase("job-node-0-1-fghij"), "Pending");

  ASSERT_TRUE(client_
                  .Patch(kPods.Namespace("default"), "job-node-0-0-abcde", client::PatchType::kMerge,
                         R"({"spec":{"nodeName":"node-b"}})")
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return Phase("job-node-0-1-fghij") == "Succeeded"; }));
  std::string log = Log("job-node-0-1-fghij");
  ASSERT_EQ(log.rfind("10.0.0.9:", 0), 0u) << log;
  int port = std::stoi(log.substr(9));
  EXPECT_GE(port, 20000);
  EXPECT_LE(port, 32000);
}

TEST_F(NodeAgentTest, OnFailureRestartKeepsThePreviousRunsLog) {
  Create(
      ShellPod("retry", "if [ -f once ]; then echo second; exit 0; fi; touch once; echo first; exit 1", "OnFailure"));
  ASSERT_TRUE(WaitFor([&] { return Phase("retry") == "Succeeded"; })) << Phase("retry");
  api::Object cs = (*GetPod("retry"))["status"]["containerStatuses"][0];
  EXPECT_EQ(cs["restartCount"], 1);
  EXPECT_EQ(cs["lastState"]["terminated"]["exitCode"], 1);
  EXPECT_EQ(Log("retry"), "second\n");
  client::PodLogOptions o;
  o.previous = true;
  EXPECT_EQ(Log("retry", o), "first\n");
}

bool ProcessAlive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  size_t close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

class NodeAgentRestartTest : public NodeAgentTest {
 protected:
  // The container of `name` runs (restartCount `restarts`) per the API.
  bool Running(const std::string& name, int restarts) {
    std::optional<api::Object> p = GetPod(name);
    if (!p || !(*p)["status"].contains("containerStatuses")) return false;
    const api::Object& cs = (*p)["status"]["containerStatuses"][0];
    return cs["state"].contains("running") && cs["restartCount"] == restarts;
  }
  std::string PodDir(const std::string& name) { return dir_ + "/pods/default_" + name + "_" + api::Uid(*GetPod(name)); }
  // Stops the agent as a server restart does: its containers keep running.
  void StopLeavingPodsRunning() {
    agent_->Stop(StopMode::kLeaveRunning);
    agent_.reset();
  }
  void StartAgain() {
    agent_ = std::make_unique<NodeAgent>(client_, clock_, options_);
    ASSERT_TRUE(agent_->Start().ok());
  }
  std::string ResourceVersion(const std::string& name) {
    return api::NestedString(*GetPod(name), {"metadata", "resourceVersion"});
  }
  std::string Marker(const std::string& what) { return dir_ + "/" + what; }
  // The pid a container wrote to Marker(what), once it is there.
  pid_t PidIn(const std::string& what) {
    EXPECT_TRUE(WaitFor([&] { return testing_ReadFile(Marker(what)).find('\n') != std::string::npos; })) << what;
    return std::stoi("0" + testing_ReadFile(Marker(what)));  // "0": a bad file fails the test, not the binary
  }
};

// A restarted agent re-attaches to containers that kept running: the pods
// keep their state (no status write at all), restartCount and start time,
// and the lines logged while no agent ran are in the log.
TEST_F(NodeAgentRestartTest, RunningContainersAreAdoptedWithoutAnyChange) {
  Create(ShellPod("never", "echo $$$$ > " + Marker("never") + "; echo before; while [ ! -f " + Marker("go") +
                               " ]; do sleep 0.02; done; echo while-away; sleep 600"));
  Create(ShellPod("always", "echo $$$$ > " + Marker("always") + "; sleep 600", "Always"));
  ASSERT_TRUE(WaitFor([&] { return Running("never", 0) && Running("always", 0); }));
  ASSERT_TRUE(WaitFor([&] { return LogContains("never", "before"); }));
  const api::Object status_before = (*GetPod("never"))["status"];
  const std::string rv_never = ResourceVersion("never"), rv_always = ResourceVersion("always");
  const pid_t never_pid = PidIn("never");
  const pid_t always_pid = PidIn("always");

  StopLeavingPodsRunning();
  std::ofstream(Marker("go")) << "";
  ASSERT_TRUE(WaitFor([&] {
    std::ifstream in(PodDir("never") + "/logs/main/0.log");
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return all.find("while-away") != std::string::npos;
  })) << "the supervisor keeps logging while no agent runs";
  EXPECT_TRUE(ProcessAlive(never_pid));
  EXPECT_TRUE(ProcessAlive(always_pid));
  clock_.Advance(30s);

  StartAgain();
  ASSERT_TRUE(WaitFor([&] { return agent_->ActivePods().size() == 2; }));
  clock_.Advance(1s);
  std::this_thread::sleep_for(100ms);  // several passes of the loop
  EXPECT_EQ(ResourceVersion("never"), rv_never) << (*GetPod("never"))["status"].dump();
  EXPECT_EQ(ResourceVersion("always"), rv_always);
  EXPECT_EQ((*GetPod("never"))["status"], status_before);
  EXPECT_TRUE(ProcessAlive(never_pid));
  EXPECT_EQ(Log("never"), "before\nwhile-away\n");

  // The adopted run is still the agent's to stop: deletion sends it SIGTERM.
  ASSERT_TRUE(DeleteWithGrace("never", 0).ok());
  ASSERT_TRUE(WaitFor([&] { return !GetPod("never").has_value(); }));
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(never_pid); }));
}

// Exits that happen while no agent runs are reported with the exit code the
// supervisor recorded, and restartPolicy applies to them once an agent is back.
TEST_F(NodeAgentRestartTest, ExitsWhileNoAgentRunsAreReportedAndRestartPolicyApplies) {
  const std::string wait = "while [ ! -f " + Marker("go") + " ]; do sleep 0.02; done; ";
  Create(ShellPod("succeeds", wait + "echo ok; exit 0"));
  Create(ShellPod("fails", wait + "exit 3"));
  Create(ShellPod("retries", "if [ -f again ]; then echo second; sleep 600; fi; touch again; " + wait + "exit 1",
                  "OnFailure"));
  ASSERT_TRUE(WaitFor([&] { return Running("succeeds", 0) && Running("fails", 0) && Running("retries", 0); }));
  StopLeavingPodsRunning();
  std::ofstream(Marker("go")) << "";
  for (const char* pod : {"succeeds", "fails", "retries"}) {
    ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(PodDir(pod) + "/runs/main/0/exit.json"); })) << pod;
  }
  EXPECT_EQ(Phase("succeeds"), "Running");  // nobody reported anything meanwhile
  clock_.Advance(10s);
  StartAgain();
  ASSERT_TRUE(WaitFor([&] { return Phase("succeeds") == "Succeeded" && Phase("fails") == "Failed"; }));
  api::Object t = (*GetPod("fails"))["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["exitCode"], 3);
  EXPECT_EQ(t["reason"], "Error");
  EXPECT_EQ((*GetPod("succeeds"))["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0);
  EXPECT_EQ(Log("succeeds"), "ok\n");
  // OnFailure: restarted once, counted as the kubelet counts it.
  ASSERT_TRUE(WaitFor([&] { return Running("retries", 1); }));
  api::Object cs = (*GetPod("retries"))["status"]["containerStatuses"][0];
  EXPECT_EQ(cs["lastState"]["terminated"]["exitCode"], 1);
  ASSERT_TRUE(WaitFor([&] { return LogContains("retries", "second"); }));
}

// A supervisor killed while no agent ran leaves no exit status: the run is
// lost (kubelet's ContainerStatusUnknown) with the reason, never re-run as if
// nothing happened; restartPolicy decides.
TEST_F(NodeAgentRestartTest, ARunWhoseSupervisorWasKilledIsLost) {
  Create(ShellPod("never", "echo $$$$ > " + Marker("never") + "; sleep 600"));
  Create(ShellPod("again", "echo $$$$ > " + Marker("again") + "; echo run; sleep 600", "OnFailure"));
  ASSERT_TRUE(WaitFor([&] { return Running("never", 0) && Running("again", 0); }));
  StopLeavingPodsRunning();
  for (const char* pod : {"never", "again"}) {
    pid_t container = PidIn(pod);
    pid_t shim = FindProcess("shim " + PodDir(pod) + "/runs/main/0");
    ASSERT_GT(shim, 0) << pod;
    ASSERT_EQ(kill(shim, SIGKILL), 0);
    ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(container); })) << "the container dies with its supervisor";
  }
  StartAgain();
  ASSERT_TRUE(WaitFor([&] { return Phase("never") == "Failed"; })) << Phase("never");
  api::Object lost = (*GetPod("never"))["status"]["containerStatuses"][0];
  EXPECT_EQ(lost["state"]["terminated"]["reason"], "ContainerStatusUnknown");
  EXPECT_EQ(lost["state"]["terminated"]["exitCode"], 137);
  EXPECT_EQ(lost["state"]["terminated"]["message"],
            "The container could not be located when the pod was terminated: its supervisor is gone and recorded no "
            "exit status (it was killed, or the host restarted)");
  EXPECT_EQ(lost["restartCount"], 0);
  ASSERT_TRUE(WaitFor([&] { return Running("again", 1); }));
  EXPECT_EQ((*GetPod("again"))["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"],
            "ContainerStatusUnknown");
  client::PodLogOptions previous;
  previous.previous = true;
  EXPECT_EQ(Log("again", previous), "run\n");
}

// A run whose agent stopped after writing its launch record but before the supervisor let
// the program run (a server killed in the middle of a start) never ran: the restarted agent
// starts it afresh under its number rather than reporting it lost, and it runs once. Run 0,
// whose program ran and whose supervisor was killed, stays lost.
TEST_F(NodeAgentRestartTest, ARunThatNeverReachedItsProgramIsStartedNotLost) {
  const std::string runs = Marker("again-runs");
  Create(ShellPod("again", "echo $$$$ > " + Marker("again") + "; echo run >> " + runs + "; sleep 600", "OnFailure"));
  ASSERT_TRUE(WaitFor([&] { return Running("again", 0); }));
  const pid_t container = PidIn("again");
  const std::string pod_dir = PodDir("again");
  const std::string run0 = shim::RunDir(pod_dir, "main", 0);
  EXPECT_TRUE(std::filesystem::exists(run0 + "/" + shim::kReleasedFile));
  StopLeavingPodsRunning();
  const pid_t supervisor = FindProcess("shim " + run0);
  ASSERT_GT(supervisor, 0);
  ASSERT_EQ(kill(supervisor, SIGKILL), 0);
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(container); }));
  // Run 1 as an agent leaves it when it stops right after writing the launch record.
  StatusOr<shim::LaunchRecord> launch = shim::ReadLaunchRecord(run0);
  ASSERT_TRUE(launch.ok()) << launch.status();
  launch->run = 1;
  launch->log_path = shim::ContainerLogPath(pod_dir, "main", 1);
  ASSERT_TRUE(shim::WriteLaunchRecord(shim::RunDir(pod_dir, "main", 1), *launch).ok());

  StartAgain();
  ASSERT_TRUE(WaitFor([&] { return Running("again", 1); })) << (*GetPod("again"))["status"].dump();
  ASSERT_TRUE(WaitFor([&] { return testing_ReadFile(runs) == "run\nrun\n"; })) << testing_ReadFile(runs);
  EXPECT_EQ((*GetPod("again"))["status"]["containerStatuses"][0]["lastState"]["terminated"]["reason"],
            "ContainerStatusUnknown");
  EXPECT_TRUE(std::filesystem::exists(shim::RunDir(pod_dir, "main", 1) + "/" + shim::kReleasedFile));
  EXPECT_FALSE(std::filesystem::exists(shim::RunDir(pod_dir, "main", 2)));
}

// Whatever was done to a pod's run records while no agent ran (by hand, or by
// the pod's own container, which can reach ../runs), the restarted agent
// neither hangs, nor starts a second copy of a run that is still alive, nor
// takes a directory without a launch record for a run.
TEST_F(NodeAgentRestartTest, HostileRunRecordsNeverHangOrDuplicateARun) {
  Create(ShellPod("fifo", "exit 3"));
  Create(ShellPod("unreachable", "echo $$$$ > " + Marker("unreachable") + "; sleep 600", "Always"));
  Create(ShellPod("bogus", "echo $$$$ > " + Marker("bogus") + "; sleep 600", "Always"));
  ASSERT_TRUE(WaitFor([&] { return Phase("fifo") == "Failed"; }));
  ASSERT_TRUE(WaitFor([&] { return Running("unreachable", 0) && Running("bogus", 0); }));
  const pid_t unreachable = PidIn("unreachable"), bogus = PidIn("bogus");
  const std::string fifo_run = PodDir("fifo") + "/runs/main/0";
  StopLeavingPodsRunning();
  // A FIFO where the exit record was (an open for reading would block forever).
  std::filesystem::remove(fifo_run + "/exit.json");
  ASSERT_EQ(mkfifo((fifo_run + "/exit.json").c_str(), 0600), 0);
  // The live run's socket file replaced by a regular file.
  const std::string run = PodDir("unreachable") + "/runs/main/0";
  std::filesystem::remove(run + "/shim.sock");
  std::ofstream(run + "/shim.sock") << "not a socket";
  // Directories that are no runs: empty, huge-numbered, a link out of the pod.
  std::filesystem::create_directories(PodDir("bogus") + "/runs/main/999999999");
  std::filesystem::create_directory_symlink("/", PodDir("bogus") + "/runs/main/5");
  std::filesystem::create_directories(PodDir("bogus") + "/runs/main/99999999999");
  clock_.Advance(5s);
  // The fifo pod was terminal before; make it non-terminal in the API so the
  // agent has to replay its runs.
  api::Object pod = *GetPod("fifo");
  pod["status"]["phase"] = "Running";
  ASSERT_TRUE(client_.UpdateStatus(kPods.Namespace("default"), pod).ok());

  StartAgain();
  Create(ShellPod("after", "echo alive"));
  ASSERT_TRUE(WaitFor([&] { return LogContains("after", "alive"); })) << "the agent must not hang on a FIFO";
  ASSERT_TRUE(WaitFor([&] { return Phase("fifo") == "Failed"; }));
  EXPECT_EQ((*GetPod("fifo"))["status"]["containerStatuses"][0]["state"]["terminated"]["reason"],
            "ContainerStatusUnknown");
  clock_.Advance(20s);  // past any restart backoff
  std::this_thread::sleep_for(200ms);
  EXPECT_TRUE(Running("unreachable", 0)) << (*GetPod("unreachable"))["status"].dump();
  EXPECT_TRUE(Running("bogus", 0)) << (*GetPod("bogus"))["status"].dump();
  EXPECT_TRUE(ProcessAlive(unreachable));
  EXPECT_TRUE(ProcessAlive(bogus));
  EXPECT_FALSE(std::filesystem::exists(PodDir("unreachable") + "/runs/main/1")) << "a second copy was started";
  EXPECT_FALSE(std::filesystem::exists(PodDir("bogus") + "/runs/main/1000000000"));
  EXPECT_FALSE(std::filesystem::exists(PodDir("bogus") + "/runs/main/1")) << "a second copy was started";
  // The unreachable run is still the agent's to stop: deletion ends it.
  ASSERT_TRUE(DeleteWithGrace("unreachable", 0).ok());
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(unreachable); }));
}

// The rendezvous port a running job was given stays held by it across an
// agent restart, so no job started afterwards can be mapped onto it.
TEST_F(NodeAgentRestartTest, RendezvousPortsOfAdoptedRunsStayTheirs) {
  agent_.reset();
  options_.host_ports = std::make_shared<HostPorts>();
  StartAgain();
  api::Object pod = ShellPod("master", "echo port=$MASTER_PORT; sleep 600");
  pod["spec"]["hostname"] = "master";
  pod["spec"]["subdomain"] = "job";
  pod["spec"]["containers"][0]["env"] = {{{"name", "MASTER_ADDR"}, {"value", "master.job"}},
                                         {{"name", "MASTER_PORT"}, {"value", "29500"}}};
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return LogContains("master", "port="); }));
  const std::string log = Log("master");
  const int port = std::stoi(log.substr(log.find("port=") + 5));
  StopLeavingPodsRunning();
  options_.host_ports = std::make_shared<HostPorts>();  // a new process: nothing held
  StartAgain();
  ASSERT_TRUE(WaitFor([&] { return options_.host_ports->allocator.held("10.0.0.5") == 1; }));
  {
    std::lock_guard<std::mutex> lock(options_.host_ports->mu);
    EXPECT_EQ(options_.host_ports->allocator.Allocate("10.0.0.5", "default/master.job:29500", "test"), port);
    EXPECT_NE(options_.host_ports->allocator.Allocate("10.0.0.5", "default/other.job:29500", "test"), port);
    options_.host_ports->allocator.ReleaseHolder("test");
  }
  // The adopted pod holds its port until it is gone.
  EXPECT_EQ(options_.host_ports->allocator.held("10.0.0.5"), 1u);
  ASSERT_TRUE(DeleteWithGrace("master", 0).ok());
  EXPECT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(options_.host_ports->mu);
    return options_.host_ports->allocator.held("10.0.0.5") == 0;
  }));
}

// A job's rendezvous port is held while any of its pods on the host may still run, and given
// back once they have all finished: a host's range (here one port) serves one job after
// another for as long as the agent runs, not only as many jobs as it has ports.
TEST_F(NodeAgentRestartTest, ARendezvousPortIsGivenBackOnceItsJobsPodsFinish) {
  agent_.reset();
  options_.host_ports = std::make_shared<HostPorts>();
  options_.host_ports->allocator = RendezvousPortAllocator(30000, 30000);
  StartAgain();
  auto pod = [&](const std::string& name, const std::string& job, const std::string& script) {
    api::Object p = ShellPod(name, "echo port=$MASTER_PORT; " + script);
    p["spec"]["hostname"] = name;
    p["spec"]["subdomain"] = job;
    p["spec"]["containers"][0]["env"] = {{{"name", "MASTER_ADDR"}, {"value", "m-" + job + "." + job}},
                                         {{"name", "MASTER_PORT"}, {"value", "29500"}}};
    return p;
  };
  auto held = [&] {
    std::lock_guard<std::mutex> lock(options_.host_ports->mu);
    return options_.host_ports->allocator.held("10.0.0.5");
  };
  Create(pod("m-j1", "j1", "while [ ! -f " + Marker("go") + " ]; do sleep 0.02; done"));
  Create(pod("w-j1", "j1", "true"));
  ASSERT_TRUE(WaitFor([&] { return Phase("w-j1") == "Succeeded" && LogContains("m-j1", "port="); }));
  EXPECT_TRUE(LogContains("m-j1", "port=30000"));
  EXPECT_TRUE(LogContains("w-j1", "port=30000"));
  // The worker finished; its master still runs and holds the port: a second job's master
  // waits for a free one (ContainerCreating) rather than run on 29500 as written.
  Create(pod("m-j2", "j2", "true"));
  clock_.Advance(std::chrono::seconds(3));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(Phase("m-j2"), "Pending");
  EXPECT_EQ(held(), 1u);
  // Job 1 ends: the port is free again, and the waiting job gets it, then the next.
  std::ofstream(Marker("go")).put('\n');
  ASSERT_TRUE(WaitFor([&] { return Phase("m-j1") == "Succeeded" && Phase("m-j2") == "Succeeded"; }));
  EXPECT_TRUE(LogContains("m-j2", "port=30000")) << Log("m-j2");
  EXPECT_TRUE(WaitFor([&] { return held() == 0; }));
  Create(pod("m-j3", "j3", "true"));
  ASSERT_TRUE(WaitFor([&] { return Phase("m-j3") == "Succeeded"; }));
  EXPECT_TRUE(LogContains("m-j3", "port=30000")) << Log("m-j3");
  EXPECT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> lock(options_.host_ports->mu);
    return options_.host_ports->allocator.holders() == 0;
  }));
}

// Two agents may not serve one node name (each would run every pod of the node): an agent
// whose Lease names another agent process, alive on this host or renewing from another host
// within the lease duration, is refused; once that one is gone it starts.
TEST_F(NodeAgentRestartTest, ASecondAgentForTheSameNodeIsRefused) {
  StopLeavingPodsRunning();
  auto name_in_lease = [&](const std::string& instance, Time renewed) {
    api::Object lease = client_.Get(kLeases.Namespace("kube-node-lease"), "node-a").value();
    lease["metadata"]["annotations"][kAgentInstanceAnnotation] = instance;
    lease["spec"]["renewTime"] = FormatRfc3339Micro(renewed);
    ASSERT_TRUE(client_.Update(kLeases.Namespace("kube-node-lease"), lease).ok());
  };
  auto start = [&] {
    auto agent = std::make_unique<NodeAgent>(client_, clock_, options_);
    Status s = agent->Start();
    if (s.ok()) agent_ = std::move(agent);
    return s;
  };
  const std::string boot = testing_ReadFile("/proc/sys/kernel/random/boot_id").substr(0, 36);
  // Another agent process on this host.
  pid_t other = 0;
  char sleep_arg[] = "60";
  char sleep_cmd[] = "/bin/sleep";
  char* argv[] = {sleep_cmd, sleep_arg, nullptr};
  ASSERT_EQ(posix_spawn(&other, "/bin/sleep", nullptr, nullptr, argv, environ), 0);
  name_in_lease(boot + "/" + std::to_string(other) + "/" + shim::ProcessStartTime(other), clock_.Now());
  Status s = start();
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_EQ(s.message(), "node node-a is served by another berth agent (pid " + std::to_string(other) +
                             " on this host); two agents serving one node would each run its pods: stop that agent "
                             "first (or wait 40 s after it stopped), or give this one its own --name");
  kill(other, SIGKILL);
  // Exited but not yet reaped (a zombie, as right after a kill -9 of the server): not live.
  ASSERT_TRUE(WaitFor([&] {
    const std::string stat = testing_ReadFile("/proc/" + std::to_string(other) + "/stat");
    const size_t close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
  }));
  ASSERT_TRUE(start().ok()) << "the other agent's process exited";
  waitpid(other, nullptr, 0);
  StopLeavingPodsRunning();
  // Another host: refused while its renewal is younger than the lease duration.
  name_in_lease("another-boot-id/4242/1234", clock_.Now() - std::chrono::seconds(10));
  s = start();
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_NE(s.message().find("(on another host, which renewed the node's Lease 10s ago)"), std::string::npos)
      << s.message();
  name_in_lease("another-boot-id/4242/1234", clock_.Now() - std::chrono::seconds(41));
  ASSERT_TRUE(start().ok());
  // The renewals name this agent now.
  ASSERT_TRUE(WaitFor([&] {
    auto lease = client_.Get(kLeases.Namespace("kube-node-lease"), "node-a");
    return lease.ok() && api::StringAt(api::ObjectAt((*lease)["metadata"], "annotations"), kAgentInstanceAnnotation)
                             .starts_with(boot + "/" + std::to_string(getpid()) + "/");
  }));
}

TEST_F(NodeAgentRestartTest, ASecondAgentOnTheSameDataDirectoryIsRefused) {
  NodeAgent second(client_, clock_, options_);
  Status s = second.Start();
  EXPECT_EQ(s.code(), Code::kConflict);
  EXPECT_EQ(s.message(), "data directory " + dir_ + " is in use by another berth agent (pid " +
                             std::to_string(getpid()) + "); stop it first, or give each agent its own --data-dir");
  // Once the first is stopped, the directory is free.
  agent_->Stop();
  NodeAgent third(client_, clock_, options_);
  EXPECT_TRUE(third.Start().ok());
}

// Containers whose pods were force-deleted, or failed by the control plane
// (NodeLost), while no agent ran must not keep running.
TEST_F(NodeAgentRestartTest, ContainersOfPodsGoneOrFinishedMeanwhileAreKilled) {
  Create(ShellPod("deleted", "echo $$$$ > " + Marker("deleted") + "; sleep 600"));
  Create(ShellPod("failed", "echo $$$$ > " + Marker("failed") + "; sleep 600"));
  ASSERT_TRUE(WaitFor([&] { return Running("deleted", 0) && Running("failed", 0); }));
  const pid_t deleted = PidIn("deleted");
  const pid_t failed = PidIn("failed");
  StopLeavingPodsRunning();
  ASSERT_TRUE(DeleteWithGrace("deleted", 0).ok());  // force deletion: gone from the API at once
  api::Object pod = *GetPod("failed");
  pod["status"]["phase"] = "Failed";
  pod["status"]["reason"] = "NodeLost";
  ASSERT_TRUE(client_.UpdateStatus(kPods.Namespace("default"), pod).ok());
  StartAgain();
  ASSERT_TRUE(WaitFor([&] { return !ProcessAlive(deleted) && !ProcessAlive(failed); }));
  EXPECT_EQ(Phase("failed"), "Failed");
  EXPECT_TRUE(agent_->ActivePods().empty());
}

// A pod the control plane failed (NodeLost) while its container still runs here:
// the container is stopped, and the terminal status is never overwritten.
TEST_F(NodeAgentTest, APodFailedByTheControlPlaneIsStoppedAndStaysFailed) {
  api::Object pod = ShellPod("lost", "trap 'echo term; exit 0' TERM; echo ready; while :; do sleep 0.02; done");
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return LogContains("lost", "ready"); }));
  ASSERT_TRUE(WaitFor([&] { return Phase("lost") == "Running"; }));
  api::Object failed = *GetPod("lost");
  failed["status"]["phase"] = "Failed";
  failed["status"]["reason"] = "NodeLost";
  ASSERT_TRUE(client_.UpdateStatus(kPods.Namespace("default"), failed).ok());
  ASSERT_TRUE(WaitFor([&] { return LogContains("lost", "term"); })) << "SIGTERM, as for a deletion";
  ASSERT_TRUE(WaitFor([&] { return agent_->ActivePods().empty(); }));
  clock_.Advance(1s);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(Phase("lost"), "Failed");
  EXPECT_EQ((*GetPod("lost"))["status"]["reason"], "NodeLost");
}

// Graceful node shutdown: SIGTERM with the pod's grace period, then the
// kubelet's node-shutdown status; the pod stays in the API.
TEST_F(NodeAgentTest, ShutdownTerminatesPodsGracefullyAndReportsThemTerminated) {
  api::Object pod = ShellPod("trained", "trap 'echo checkpoint > " + dir_ +
                                            "/checkpoint; exit 0' TERM; echo ready; "
                                            "while :; do sleep 0.02; done");
  pod["spec"]["terminationGracePeriodSeconds"] = 30;
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return LogContains("trained", "ready"); }));
  agent_->Shutdown(60s);
  EXPECT_EQ(testing_ReadFile(dir_ + "/checkpoint"), "checkpoint\n");
  std::optional<api::Object> after = GetPod("trained");
  ASSERT_TRUE(after.has_value()) << "a node shutdown does not delete pods";
  const api::Object& status = (*after)["status"];
  EXPECT_EQ(status["phase"], "Failed");
  EXPECT_EQ(status["reason"], "Terminated");
  EXPECT_EQ(status["message"], "Pod was terminated in response to imminent node shutdown.");
  bool disruption = false;
  for (const auto& c : status["conditions"]) {
    if (c["type"] == "DisruptionTarget") {
      disruption = c["status"] == "True" && c["reason"] == "TerminationByKubelet";
    }
  }
  EXPECT_TRUE(disruption) << status.dump();
  EXPECT_EQ(status["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0);
}

// kubelet active_deadline.go: past status.startTime + activeDeadlineSeconds on the Clock the
// pod is stopped (SIGTERM) and Failed DeadlineExceeded; not before.
TEST_F(NodeAgentTest, PodPastItsActiveDeadlineIsStoppedAndFailed) {
  api::Object pod = ShellPod("deadline", "trap 'echo term; exit 0' TERM; echo ready; while :; do sleep 0.02; done");
  pod["spec"]["activeDeadlineSeconds"] = 5;
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return LogContains("deadline", "ready"); })) << Log("deadline");
  ASSERT_TRUE(WaitFor([&] { return Phase("deadline") == "Running"; }));
  clock_.Advance(4s);
  // Passes after the advance (a new pod handled) leave it running.
  Create(ShellPod("marker", "exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("marker") == "Succeeded"; }));
  EXPECT_EQ(Phase("deadline"), "Running");
  EXPECT_FALSE(LogContains("deadline", "term"));

  clock_.Advance(1s);
  ASSERT_TRUE(WaitFor([&] { return Phase("deadline") == "Failed"; })) << GetPod("deadline")->dump();
  const api::Object status = (*GetPod("deadline"))["status"];
  EXPECT_EQ(status["reason"], "DeadlineExceeded");
  EXPECT_EQ(status["message"], "Pod was active on the node longer than the specified deadline");
  EXPECT_EQ(status["containerStatuses"][0]["state"]["terminated"]["exitCode"], 0);
  EXPECT_TRUE(LogContains("deadline", "term"));
  EXPECT_TRUE(GetPod("deadline").has_value()) << "the pod is not deleted";
}

// A container waiting to restart when the deadline stops its pod shows no coming restart: the
// Failed pod's container is terminated ContainerStatusUnknown 137, its last run kept (the kubelet's
// TerminatePod).
TEST_F(NodeAgentTest, ACrashLoopingContainerOfAPodPastItsDeadlineEndsTerminated) {
  api::Object pod = ShellPod("crashing", "echo ran; exit 1", "Always");
  pod["spec"]["activeDeadlineSeconds"] = 5;
  Create(pod);
  auto waiting_reason = [&] {
    std::optional<api::Object> p = GetPod("crashing");
    if (!p) return std::string();
    const api::Object& statuses = api::NestedField(*p, {"status", "containerStatuses"});
    return statuses.is_array() && !statuses.empty() ? api::NestedString(statuses[0], {"state", "waiting", "reason"})
                                                    : std::string();
  };
  ASSERT_TRUE(WaitFor([&] { return waiting_reason() == "CrashLoopBackOff"; })) << GetPod("crashing")->dump();
  clock_.Advance(5s);
  ASSERT_TRUE(WaitFor([&] { return Phase("crashing") == "Failed"; })) << GetPod("crashing")->dump();
  const api::Object status = (*GetPod("crashing"))["status"];
  EXPECT_EQ(status["reason"], "DeadlineExceeded");
  const api::Object& c = status["containerStatuses"][0];
  EXPECT_EQ(c["state"], (api::Object{{"terminated",
                                      {{"reason", "ContainerStatusUnknown"},
                                       {"message", "The container could not be located when the pod was terminated"},
                                       {"exitCode", 137}}}}))
      << c.dump();
  EXPECT_EQ(c["lastState"]["terminated"]["exitCode"], 1) << c.dump();
  EXPECT_EQ(c["restartCount"], 1) << c.dump();
}

// A deleted pod's final status, once nothing of it runs (a finalizer keeps the object to read):
// terminal, no container waiting or about to restart (the kubelet's SyncTerminatedPod calls
// TerminatePod), and `kubectl logs` of the container that never ran says it is terminated.
TEST_F(NodeAgentTest, ADeletedPodEndsTerminalWithEveryContainerTerminated) {
  api::Object pod = ShellPod("gone", "sleep 0.05; exit 1", "OnFailure");
  pod["metadata"]["finalizers"] = {"example.com/keep"};
  pod["spec"]["terminationGracePeriodSeconds"] = 30;
  pod["spec"]["containers"].push_back(
      {{"name", "run"},
       {"image", "busybox"},
       {"command", {"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 0.02; done"}}});
  pod["spec"]["containers"].push_back(
      {{"name", "cfg"},
       {"image", "busybox"},
       {"command", {"/bin/sh", "-c", "exit 0"}},
       {"env", {{{"name", "X"}, {"valueFrom", {{"secretKeyRef", {{"name", "missing"}, {"key", "k"}}}}}}}}});
  Create(pod);
  auto state = [&](size_t i) {
    std::optional<api::Object> p = GetPod("gone");
    if (!p) return api::Object::object();
    const api::Object& statuses = api::NestedField(*p, {"status", "containerStatuses"});
    return statuses.is_array() && statuses.size() > i ? statuses[i]["state"] : api::Object::object();
  };
  ASSERT_TRUE(WaitFor([&] {
    return api::NestedString(state(0), {"waiting", "reason"}) == "CrashLoopBackOff" && state(1).contains("running") &&
           api::NestedString(state(2), {"waiting", "reason"}) == "CreateContainerConfigError";
  })) << GetPod("gone")->dump();
  ASSERT_TRUE(DeleteWithGrace("gone", 30).ok());
  ASSERT_TRUE(WaitFor([&] { return Phase("gone") == "Failed" && state(1).contains("terminated"); }))
      << GetPod("gone")->dump();
  const api::Object unknown = {{"terminated",
                                {{"reason", "ContainerStatusUnknown"},
                                 {"message", "The container could not be located when the pod was terminated"},
                                 {"exitCode", 137}}}};
  EXPECT_EQ(state(0), unknown);
  EXPECT_EQ(state(1)["terminated"]["exitCode"], 0);
  EXPECT_EQ(state(2), unknown);
  ASSERT_TRUE(WaitFor([&] {
    return agent_->ReadPodLog("default", "gone", {.container = "cfg"}).status() ==
           BadRequestError("container \"cfg\" in pod \"gone\" is terminated");
  })) << agent_->ReadPodLog("default", "gone", {.container = "cfg"}).status();
}

// Local ephemeral storage (agent/local_storage.h): a running pod with limits is measured every
// 10 s of Clock time; over a limit it is evicted as the kubelet's eviction manager does.
TEST_F(NodeAgentTest, APodOverItsEphemeralStorageLimitsIsEvictedAtTheNextMeasurement) {
  // 3 MB of log (the container's usage) against a 1Mi container limit; the pod's limit (1Mi +
  // 10Mi of an idle sidecar) is not reached, so the container's message is the answer.
  api::Object logger = ShellPod("logger", "head -c 3000000 /dev/zero | tr '\\0' x; echo; echo done >&2; sleep 600");
  logger["spec"]["containers"][0]["resources"] = {{"limits", {{"ephemeral-storage", "1Mi"}}}};
  logger["spec"]["containers"].push_back({{"name", "idle"},
                                          {"image", "busybox"},
                                          {"command", {"/bin/sh", "-c", "sleep 600"}},
                                          {"resources", {{"limits", {{"ephemeral-storage", "10Mi"}}}}}});
  // 3 MB in the pod's working directory (the pod's total) against 2Mi.
  api::Object writer = ShellPod("writer", "head -c 3000000 /dev/zero > big; echo written; sleep 600");
  writer["spec"]["containers"][0]["resources"] = {{"limits", {{"ephemeral-storage", "2Mi"}}}};
  // Within its limit: untouched.
  api::Object modest = ShellPod("modest", "head -c 100000 /dev/zero > small; echo written; sleep 600");
  modest["spec"]["containers"][0]["resources"] = {{"limits", {{"ephemeral-storage", "1Mi"}}}};
  for (const api::Object& p : {logger, writer, modest}) Create(p);
  ASSERT_TRUE(WaitFor([&] {
    client::PodLogOptions main;
    main.container = "main";
    return Log("logger", main).find("done") != std::string::npos && LogContains("writer", "written") &&
           LogContains("modest", "written") && Phase("logger") == "Running" && Phase("writer") == "Running" &&
           Phase("modest") == "Running";
  }));
  // Measured at the first period after their start, not before.
  clock_.Advance(5s);
  Create(ShellPod("marker", "exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("marker") == "Succeeded"; }));
  EXPECT_EQ(Phase("logger"), "Running");
  EXPECT_EQ(Phase("writer"), "Running");

  clock_.Advance(kEvictionMonitoringPeriod);
  ASSERT_TRUE(WaitFor([&] { return Phase("logger") == "Failed" && Phase("writer") == "Failed"; }))
      << GetPod("logger")->dump() << GetPod("writer")->dump();
  const api::Object logger_status = (*GetPod("logger"))["status"];
  EXPECT_EQ(logger_status["reason"], "Evicted");
  EXPECT_EQ(logger_status["message"], "Container main exceeded its local ephemeral storage limit \"1Mi\". ");
  ASSERT_EQ(logger_status["containerStatuses"].size(), 2u) << logger_status.dump();
  for (const api::Object& cs : logger_status["containerStatuses"]) {
    EXPECT_TRUE(cs["state"].contains("terminated")) << "every container is stopped: " << cs.dump();
  }
  for (const api::Object& c : logger_status["conditions"]) {
    EXPECT_NE(c["type"], "DisruptionTarget") << "limit evictions add no DisruptionTarget (1.32)";
  }
  const api::Object writer_status = (*GetPod("writer"))["status"];
  EXPECT_EQ(writer_status["reason"], "Evicted");
  EXPECT_EQ(writer_status["message"], "Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. ");
  EXPECT_EQ(Phase("modest"), "Running");

  const client::GroupVersionResource events{"", "v1", "events"};
  std::vector<std::string> evicted;
  berth::client::EventRecorder::FlushAll();
  const std::vector<api::Object> items = client_.List(events.Namespace("default"))->items;
  for (const api::Object& e : items) {
    if (e["reason"] == "Evicted")
      evicted.push_back(e["involvedObject"]["name"].get<std::string>() + " " + e["type"].get<std::string>() + " " +
                        e["message"].get<std::string>());
  }
  std::sort(evicted.begin(), evicted.end());
  EXPECT_EQ(evicted,
            (std::vector<std::string>{
                "logger Warning Container main exceeded its local ephemeral storage limit \"1Mi\". ",
                "writer Warning Pod ephemeral local storage usage exceeds the total limit of containers 2Mi. "}));
  // An evicted pod is not restarted, whatever its restartPolicy.
  clock_.Advance(kEvictionMonitoringPeriod);
  Create(ShellPod("marker2", "exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("marker2") == "Succeeded"; }));
  EXPECT_EQ(Phase("modest"), "Running");
  EXPECT_EQ(Phase("logger"), "Failed");
}

// Under disk pressure (a threshold above what the filesystem has free): the Node says
// DiskPressure, one pod per period is evicted (the one furthest over its request first) with
// DisruptionTarget, and a new pod is rejected unless it tolerates the taint.
TEST_F(NodeAgentTest, UnderDiskPressureOnePodPerPeriodIsEvictedAndNewPodsAreRejected) {
  agent_.reset();
  NodeAgentOptions o = options_;
  o.eviction_hard = *ParseEvictionHard("nodefs.available<1Pi");
  agent_ = std::make_unique<NodeAgent>(client_, clock_, o);
  ASSERT_TRUE(agent_->Start().ok());
  auto condition = [&](const std::string& type) {
    const api::Object node = *client_.Get(kNodes, "node-a");
    for (const api::Object& c : node["status"]["conditions"]) {
      if (c["type"] == type) return c;
    }
    return api::Object();
  };
  ASSERT_TRUE(WaitFor([&] { return condition("DiskPressure")["status"] == "True"; })) << condition("DiskPressure");
  EXPECT_EQ(condition("DiskPressure")["reason"], "KubeletHasDiskPressure");
  EXPECT_EQ(condition("DiskPressure")["message"], "kubelet has disk pressure");

  Create(ShellPod("plain", "sleep 600"));
  ASSERT_TRUE(WaitFor([&] { return Phase("plain") == "Failed"; }));
  EXPECT_EQ((*GetPod("plain"))["status"]["reason"], "Evicted");
  EXPECT_EQ((*GetPod("plain"))["status"]["message"], "Pod was rejected: The node had condition: [DiskPressure]. ");

  api::Object big = ShellPod("big", "head -c 2000000 /dev/zero > big; echo written; sleep 600");
  api::Object small = ShellPod("small", "echo started; sleep 600");
  for (api::Object* p : {&big, &small}) {
    (*p)["spec"]["tolerations"] = {
        {{"key", "node.kubernetes.io/disk-pressure"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
    Create(*p);
  }
  ASSERT_TRUE(WaitFor([&] {
    return LogContains("big", "written") && LogContains("small", "started") && Phase("big") == "Running" &&
           Phase("small") == "Running";
  }));
  clock_.Advance(kEvictionMonitoringPeriod);
  ASSERT_TRUE(WaitFor([&] { return Phase("big") == "Failed"; })) << GetPod("big")->dump();
  EXPECT_EQ(Phase("small"), "Running") << "one pod per period";
  const api::Object status = (*GetPod("big"))["status"];
  EXPECT_EQ(status["reason"], "Evicted");
  const std::string message = status["message"];
  EXPECT_TRUE(
      message.starts_with("The node was low on resource: ephemeral-storage. Threshold quantity: 1Pi, available: "))
      << message;
  EXPECT_NE(message.find(". Container main was using "), std::string::npos) << message;
  EXPECT_TRUE(message.ends_with(", request is 0, has larger consumption of ephemeral-storage. ")) << message;
  api::Object disruption;
  for (const api::Object& c : status["conditions"]) {
    if (c["type"] == "DisruptionTarget") disruption = c;
  }
  EXPECT_EQ(disruption["status"], "True") << status.dump();
  EXPECT_EQ(disruption["reason"], "TerminationByKubelet");
  EXPECT_EQ(disruption["message"], message);
  // What it wrote is gone once it stopped (pod_workers.go ShouldPodContentBeRemoved); its log stays.
  const std::string big_dir = dir_ + "/pods/default_big_" + api::Uid(*GetPod("big"));
  EXPECT_TRUE(WaitFor([&] { return !std::filesystem::exists(big_dir + "/work/big"); }));
  EXPECT_TRUE(LogContains("big", "written"));

  clock_.Advance(kEvictionMonitoringPeriod);
  ASSERT_TRUE(WaitFor([&] { return Phase("small") == "Failed"; }));

  // The pressure clears: the condition stays until the transition period has passed.
  agent_.reset();
  o.eviction_hard = *ParseEvictionHard("none");
  agent_ = std::make_unique<NodeAgent>(client_, clock_, o);
  ASSERT_TRUE(agent_->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return condition("DiskPressure")["status"] == "False"; }));
  EXPECT_EQ(condition("DiskPressure")["reason"], "KubeletHasNoDiskPressure");
}

// Probes (agent/prober.h) on the Clock: readiness follows its exec probe with the thresholds,
// readiness waits for the startup probe, a failing liveness probe restarts the container.
TEST_F(NodeAgentTest, ReadinessFollowsItsProbeAfterTheStartupProbeAndLivenessRestartsTheContainer) {
  api::Object pod = ShellPod("probed", "echo up; while :; do sleep 0.05; done", "Always");
  pod["spec"]["containers"][0]["startupProbe"] = {
      {"exec", {{"command", {"test", "-f", "started"}}}}, {"periodSeconds", 1}, {"failureThreshold", 100}};
  pod["spec"]["containers"][0]["readinessProbe"] = {
      {"exec", {{"command", {"test", "-f", "ready"}}}}, {"periodSeconds", 1}, {"failureThreshold", 2}};
  pod["spec"]["containers"][0]["livenessProbe"] = {
      {"exec", {{"command", {"test", "!", "-f", "dead"}}}}, {"periodSeconds", 1}, {"failureThreshold", 2}};
  const api::Object created = Create(pod);
  ASSERT_TRUE(WaitFor([&] { return Phase("probed") == "Running" && LogContains("probed", "up"); }));
  const std::string work = dir_ + "/pods/default_probed_" + api::Uid(created) + "/work/";
  auto status = [&] { return (*GetPod("probed"))["status"]; };
  auto ready = [&] { return status()["containerStatuses"][0]["ready"] == true; };
  auto started = [&] { return status()["containerStatuses"][0]["started"] == true; };
  auto condition = [&](const std::string& type) {
    const api::Object st = status();
    for (const api::Object& c : st["conditions"]) {
      if (c["type"] == type) return c["status"].get<std::string>();
    }
    return std::string();
  };
  // Advances the Clock a second at a time until `pred` holds (each advance lets due probes run).
  auto advance_until = [&](const std::function<bool()>& pred) {
    for (int i = 0; i < 20; ++i) {
      if (WaitFor([&] { return pred(); }, 100)) return true;
      clock_.Advance(1s);
    }
    return pred();
  };
  std::ofstream(work + "ready").put('x');
  clock_.Advance(3s);
  Create(ShellPod("marker", "exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("marker") == "Succeeded"; }));
  EXPECT_FALSE(started()) << "the startup probe has not passed";
  EXPECT_FALSE(ready()) << "readiness is not probed before the startup probe passes";
  EXPECT_EQ(condition("Ready"), "False");

  std::ofstream(work + "started").put('x');
  ASSERT_TRUE(advance_until([&] { return started() && ready(); })) << status().dump();
  EXPECT_EQ(condition("Ready"), "True");
  EXPECT_EQ(condition("ContainersReady"), "True");

  std::filesystem::remove(work + "ready");
  ASSERT_TRUE(advance_until([&] { return !ready(); })) << status().dump();
  EXPECT_EQ(condition("Ready"), "False");
  EXPECT_TRUE(started());
  EXPECT_EQ(status()["containerStatuses"][0]["restartCount"], 0);

  std::ofstream(work + "dead").put('x');
  ASSERT_TRUE(advance_until([&] { return status()["containerStatuses"][0]["restartCount"] == 1; })) << status().dump();
  std::filesystem::remove(work + "dead");
  const client::GroupVersionResource events{"", "v1", "events"};
  std::set<std::string> seen;
  berth::client::EventRecorder::FlushAll();
  const std::vector<api::Object> items = client_.List(events.Namespace("default"))->items;
  for (const api::Object& e : items) {
    if (e["involvedObject"]["name"] != "probed") continue;
    const std::string m = e["message"];
    seen.insert(e["type"].get<std::string>() + " " + e["reason"].get<std::string>() + " " +
                m.substr(0, m.find(':') == std::string::npos ? m.size() : m.find(':') + 1));
  }
  EXPECT_TRUE(seen.contains("Warning Unhealthy Startup probe failed:")) << ::testing::PrintToString(seen);
  EXPECT_TRUE(seen.contains("Warning Unhealthy Readiness probe failed:")) << ::testing::PrintToString(seen);
  EXPECT_TRUE(seen.contains("Warning Unhealthy Liveness probe failed:")) << ::testing::PrintToString(seen);
  EXPECT_TRUE(seen.contains("Normal Killing Container main failed liveness probe, will be restarted"))
      << ::testing::PrintToString(seen);
  // The new run starts over: started once its startup probe passes again (the file is still
  // there), ready once its readiness probe does.
  EXPECT_FALSE(ready());
  std::ofstream(work + "ready").put('x');
  ASSERT_TRUE(advance_until([&] { return started() && ready(); })) << status().dump();
}

// A readiness probe that cannot run (a named port the container does not have) errors at
// every period and the container never becomes Ready (it was taken for no probe: Ready at
// once); a liveness probe that cannot run never restarts it.
TEST_F(NodeAgentTest, AProbeThatCannotRunKeepsTheContainerNotReadyAndAlive) {
  api::Object pod = ShellPod("badprobe", "echo up; while :; do sleep 0.05; done", "Always");
  pod["spec"]["containers"][0]["readinessProbe"] =
      api::Object::parse(R"({"tcpSocket": {"port": "metrics"}, "periodSeconds": 1})");
  pod["spec"]["containers"][0]["livenessProbe"] =
      api::Object::parse(R"({"httpGet": {"port": "metrics"}, "periodSeconds": 1, "failureThreshold": 1})");
  Create(pod);
  ASSERT_TRUE(WaitFor([&] { return Phase("badprobe") == "Running" && LogContains("badprobe", "up"); }));
  for (int i = 0; i < 5; ++i) {
    clock_.Advance(1s);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const api::Object st = (*GetPod("badprobe"))["status"];
  EXPECT_EQ(st["containerStatuses"][0]["ready"], false) << st.dump();
  EXPECT_EQ(st["containerStatuses"][0]["restartCount"], 0) << st.dump();
  const client::GroupVersionResource events{"", "v1", "events"};
  berth::client::EventRecorder::FlushAll();
  bool errored = false;
  const std::vector<api::Object> items = client_.List(events.Namespace("default"))->items;
  for (const api::Object& e : items) {
    errored = errored || (e["involvedObject"]["name"] == "badprobe" && e["reason"] == "Unhealthy" &&
                          e["message"] ==
                              "Readiness probe errored: readinessProbe.tcpSocket.port: no container port "
                              "named \"metrics\"");
  }
  EXPECT_TRUE(errored);
}

// Object fields become path elements: a pod name of 253 characters (the API's limit) in a
// namespace of 63 must still give a directory entry within NAME_MAX, and the pod must run.
TEST_F(NodeAgentTest, APodWithTheLongestNameRunsInADirectoryThatFits) {
  const std::string ns(63, 'n');
  api::Object pod = ShellPod(std::string(253, 'p'), "echo long");
  pod["metadata"]["namespace"] = ns;
  StatusOr<api::Object> created = client_.Create(kPods.Namespace(ns), pod);
  ASSERT_TRUE(created.ok()) << created.status();
  auto phase = [&] {
    StatusOr<api::Object> p = client_.Get(kPods.Namespace(ns), std::string(253, 'p'));
    return p.ok() ? api::NestedString(*p, {"status", "phase"}) : std::string();
  };
  ASSERT_TRUE(WaitFor([&] { return phase() == "Succeeded"; })) << phase();
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/pods")) {
    const std::string name = e.path().filename().string();
    if (!name.ends_with(api::Uid(*created))) continue;
    ++entries;
    EXPECT_LE(name.size(), 255u);
    EXPECT_TRUE(name.starts_with(ns + "_ppp")) << name;
  }
  EXPECT_EQ(entries, 1);
  StatusOr<std::string> log = agent_->ReadPodLog(ns, std::string(253, 'p'), {});
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(*log, "long\n");
}

TEST_F(NodeAgentTest, WritesStatusOnlyWhenItChanges) {
  // Each container runs until its file exists, so that Running is a status of its own.
  auto held = [&](const std::string& name) {
    return ShellPod(name, "while [ ! -e '" + dir_ + "/go-" + name + "' ]; do sleep 0.01; done");
  };
  Create(held("once"));
  ASSERT_TRUE(WaitFor([&] { return Phase("once") == "Running"; }));
  std::ofstream(dir_ + "/go-once") << "";
  ASSERT_TRUE(WaitFor([&] { return Phase("once") == "Succeeded"; }));
  clock_.Advance(1s);
  Create(held("marker"));
  ASSERT_TRUE(WaitFor([&] { return Phase("marker") == "Running"; }));
  std::ofstream(dir_ + "/go-marker") << "";
  ASSERT_TRUE(WaitFor([&] { return Phase("marker") == "Succeeded"; }));
  // Node status once; each pod Running (written once its supervisor answered; no
  // ContainerCreating before, the start took less than kStartingStatusDelay) and Succeeded.
  EXPECT_EQ(client_.CallCount("updatestatus"), 1 + 2 + 2);
}

// A pod bound by spec.nodeName that does not fit beside what runs: the kubelet's
// admission fails it (agent/pod_admission.h); the running pod is untouched.
TEST_F(NodeAgentTest, APodThatDoesNotFitTheNodeIsRejectedOutOfcpu) {
  api::Object big = ShellPod("big", "sleep 600");
  big["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "6"}}}};
  Create(big);
  ASSERT_TRUE(WaitFor([&] { return Phase("big") == "Running"; }));
  api::Object more = ShellPod("more", "echo ran");
  more["spec"]["containers"][0]["resources"] = {{"limits", {{"cpu", "4"}}}};  // request = limit
  Create(more);
  ASSERT_TRUE(WaitFor([&] { return Phase("more") == "Failed"; }));
  api::Object status = (*GetPod("more"))["status"];
  EXPECT_EQ(status["reason"], "OutOfcpu");
  EXPECT_EQ(status["message"],
            "Pod was rejected: Node didn't have enough resource: cpu, requested: 4000, used: 6000, capacity: 8000");
  EXPECT_TRUE(status.contains("startTime"));
  EXPECT_EQ(Phase("big"), "Running");
  EXPECT_EQ(agent_->ActivePods(), std::vector<std::string>{"default/big"});
}

// Admission does not go by the phase the API shows: a pod that never ran here, set Running by
// another client while no agent ran (or one whose runs this node lost), is admitted like any
// new pod; one that does not fit is rejected, not run.
TEST_F(NodeAgentTest, APodShownRunningThatNeverRanHereIsAdmittedFirst) {
  agent_.reset();
  api::Object big = ShellPod("big", "echo ran; sleep 600");
  big["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "16"}}}};  // the node has 8
  api::Object pod = Create(big);
  pod["status"] = {{"phase", "Running"}};
  ASSERT_TRUE(client_.UpdateStatus(kPods.Namespace("default"), pod).ok());
  agent_ = std::make_unique<NodeAgent>(client_, clock_, options_);
  ASSERT_TRUE(agent_->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return Phase("big") == "Failed"; })) << Phase("big");
  EXPECT_EQ((*GetPod("big"))["status"]["reason"], "OutOfcpu");
  EXPECT_FALSE(LogContains("big", "ran\n")) << Log("big");  // it never started
  EXPECT_TRUE(agent_->ActivePods().empty());
}

// A pod bound the moment the previous one's Succeeded status lands (a Kueue-managed Job's next
// pod, once the finished Job freed the quota) fits in the room the finished pod held: the
// agent counts what it knows finished as free, as the kubelet's admission does with its status
// manager's phase, even in the pass that first sees both the write and the new pod. It was
// rejected OutOfcpu (53 of 300 Jobs failed in bench/job_throughput.py).
TEST_F(NodeAgentTest, APodBoundAsTheFullNodesLastPodSucceedsIsAdmitted) {
  api::Object first = ShellPod("first", "exit 0");
  first["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "8"}}}};
  api::Object second = ShellPod("second", "exit 0");
  second["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "8"}}}};
  std::atomic<bool> created{false};
  client_.AfterUpdateStatus([&](const api::Object& stored) {
    if (api::Name(stored) != "first" || stored["status"].value("phase", "") != "Succeeded" || created.exchange(true)) {
      return;
    }
    EXPECT_TRUE(client_.Create(kPods.Namespace("default"), second).ok());
    // The agent's informer takes both events before its next pass starts.
    std::this_thread::sleep_for(200ms);
  });
  Create(first);
  ASSERT_TRUE(WaitFor([&] { return Phase("second") == "Succeeded" || Phase("second") == "Failed"; }));
  EXPECT_EQ(Phase("first"), "Succeeded");
  EXPECT_EQ(Phase("second"), "Succeeded") << (*GetPod("second"))["status"].dump();
  client_.AfterUpdateStatus(nullptr);
}

// `kubectl set image` on a running pod: the node's image declaration is checked again
// when the container restarts, and an image the node does not run is not started.
TEST_F(NodeAgentTest, AnImageChangedToOneTheNodeDoesNotRunIsRefusedAtTheRestart) {
  agent_.reset();
  NodeAgentOptions o = options_;
  o.host_images = std::vector<std::string>{"busybox"};
  agent_ = std::make_unique<NodeAgent>(client_, clock_, o);
  ASSERT_TRUE(agent_->Start().ok());
  Create(ShellPod("img", "echo ran; exit 1", "OnFailure"));
  auto cs = [&] {
    std::optional<api::Object> p = GetPod("img");
    return p && (*p)["status"].contains("containerStatuses") ? (*p)["status"]["containerStatuses"][0] : api::Object();
  };
  ASSERT_TRUE(WaitFor([&] {
    return cs().is_object() && cs()["state"].contains("waiting") && cs()["restartCount"] == 1 &&
           cs()["state"]["waiting"].value("reason", "") == "CrashLoopBackOff";
  })) << cs();
  api::Object pod = *GetPod("img");
  pod["spec"]["containers"][0]["image"] = "nginx";
  ASSERT_TRUE(client_.Update(kPods.Namespace("default"), pod).ok());
  std::this_thread::sleep_for(50ms);  // the agent sees the update before the back-off ends
  clock_.Advance(10s);
  ASSERT_TRUE(WaitFor([&] { return cs()["state"]["waiting"].value("reason", "") == "UnsupportedImage"; })) << cs();
  EXPECT_EQ(cs()["state"]["waiting"]["message"],
            "image \"nginx\" is not one the node node-a runs on its host (berth.dev/host-images: busybox)");
  EXPECT_EQ(cs()["restartCount"], 1);
  EXPECT_EQ(Log("img"), "ran\n");
  clock_.Advance(5min);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(cs()["state"]["waiting"]["reason"], "UnsupportedImage");
  EXPECT_EQ(Log("img"), "ran\n");
}

// The housekeeping pass knows an unchanged finished pod by its cached revision's address
// (agent/finished_pods.h). Whatever happens to a finished pod afterwards (full passes that find
// it unchanged, new revisions: a label, a deletionTimestamp held by a finalizer) it never runs
// again; marked for deletion, it is deleted again on every pass until it is gone; and a new pod
// under its name (a new uid) runs.
TEST_F(NodeAgentTest, AFinishedPodNeverRunsAgainIsDeletedUntilGoneAndItsSuccessorRuns) {
  const std::string runs = dir_ + "/runs-of-p";
  api::Object p = ShellPod("p", "echo run >> " + runs);
  p["metadata"]["finalizers"] = {"example.com/hold"};
  Create(p);
  ASSERT_TRUE(WaitFor([&] { return Phase("p") == "Succeeded"; }));
  EXPECT_EQ(testing_ReadFile(runs), "run\n");
  // A full pass is due every 2 s of Clock time; a pod handled after the advance proves one ran.
  int barriers = 0;
  auto full_pass = [&] {
    clock_.Advance(2s);
    const std::string name = "barrier-" + std::to_string(++barriers);
    Create(ShellPod(name, "exit 0"));
    ASSERT_TRUE(WaitFor([&] { return Phase(name) == "Succeeded"; }));
  };
  for (int i = 0; i < 3; ++i) full_pass();
  EXPECT_EQ(testing_ReadFile(runs), "run\n");

  api::Object labelled = *GetPod("p");
  labelled["metadata"]["labels"]["changed"] = "yes";
  ASSERT_TRUE(client_.Update(kPods.Namespace("default"), labelled).ok());
  for (int i = 0; i < 2; ++i) full_pass();
  EXPECT_EQ(testing_ReadFile(runs), "run\n");
  EXPECT_EQ(Phase("p"), "Succeeded");

  // Marked for deletion, held by its finalizer: deleted again on each pass.
  const int deletes_before = client_.CallCount("delete");
  ASSERT_TRUE(DeleteWithGrace("p", 30).ok());
  for (int i = 0; i < 3; ++i) full_pass();
  EXPECT_GE(client_.CallCount("delete") - deletes_before, 1 + 3);
  ASSERT_TRUE(GetPod("p").has_value());
  EXPECT_EQ(testing_ReadFile(runs), "run\n");

  api::Object released = *GetPod("p");
  released["metadata"]["finalizers"] = api::Object::array();
  ASSERT_TRUE(client_.Update(kPods.Namespace("default"), released).ok());
  ASSERT_TRUE(WaitFor([&] { return !GetPod("p").has_value(); }));
  full_pass();

  Create(ShellPod("p", "echo run >> " + runs));
  ASSERT_TRUE(WaitFor([&] { return Phase("p") == "Succeeded"; }));
  EXPECT_EQ(testing_ReadFile(runs), "run\nrun\n");
  for (int i = 0; i < 2; ++i) full_pass();
  EXPECT_EQ(testing_ReadFile(runs), "run\nrun\n");
}

TEST_F(NodeAgentTest, DeletedTerminalPodIsRemovedAtOnce) {
  Create(ShellPod("done", "exit 0"));
  ASSERT_TRUE(WaitFor([&] { return Phase("done") == "Succeeded"; }));
  ASSERT_TRUE(DeleteWithGrace("done", 30).ok());
  // No process is left, so no grace period is waited out (the clock never moves).
  ASSERT_TRUE(WaitFor([&] { return !GetPod("done").has_value(); }));
  EXPECT_TRUE(agent_->ActivePods().empty());
}

TEST(ParseResourceListTest, ParsesDeclaredCapacityAndAddsPods) {
  StatusOr<ResourceList> r = ParseResourceList("cpu=8,memory=32Gi,nvidia.com/gpu=8");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->size(), 4u);
  EXPECT_EQ(r->at("cpu").String(), "8");
  EXPECT_EQ(r->at("memory").String(), "32Gi");
  EXPECT_EQ(r->at("nvidia.com/gpu").String(), "8");
  EXPECT_EQ(r->at("pods").String(), "110");
  EXPECT_EQ(ParseResourceList("pods=20")->at("pods").String(), "20");
}

TEST(ParseResourceListTest, RejectsMalformedItems) {
  EXPECT_EQ(ParseResourceList("cpu").status().code(), Code::kInvalid);
  EXPECT_EQ(ParseResourceList("cpu=8,=3").status().code(), Code::kInvalid);
  StatusOr<ResourceList> bad = ParseResourceList("cpu=eight");
  EXPECT_EQ(bad.status().code(), Code::kInvalid);
  EXPECT_EQ(bad.status().message().rfind("invalid node capacity \"cpu=eight\": cpu: ", 0), 0u)
      << bad.status().message();
}

TEST(DetectMachineCapacityTest, FindsCpusMemoryAndPods) {
  ResourceList r = DetectMachineCapacity();
  EXPECT_GE(r.at("cpu").Value(), 1);
  EXPECT_GT(r.at("memory").Value(), 0);
  EXPECT_EQ(r.at("pods").Value(), 110);
}

}  // namespace
}  // namespace berth::agent

namespace berth::agent {
namespace {

// Log files of container "main" of the pod directory `pod_dir` (rotated and current, no index).
int LogFileCount(const std::string& pod_dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(pod_dir + "/logs/main", ec)) {
    if (!e.path().filename().string().ends_with(".ts")) ++n;
  }
  return n;
}

std::string Numbered(int from, int to) {
  std::string out;
  for (int i = from; i < to; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

class NodeAgentLogTest : public NodeAgentTest {
 protected:
  void SetUp() override {
    NodeAgentTest::SetUp();
    // Rotation at a small size: the agent's option reaches every run's supervisor.
    agent_.reset();
    options_.container_log = {2000, 3};
    agent_ = std::make_unique<NodeAgent>(client_, clock_, options_);
    ASSERT_TRUE(agent_->Start().ok());
  }
  std::string PodDir(const std::string& name) { return dir_ + "/pods/default_" + name + "_" + api::Uid(*GetPod(name)); }
};

TEST_F(NodeAgentLogTest, LogsAreRotatedAndTailAndFollowReadAcrossRotations) {
  // 600 lines, then waits for a marker, then 600 more.
  const std::string marker = dir_ + "/go";
  Create(ShellPod("chatty",
                  "i=0; while [ $i -lt 600 ]; do echo \"line $i\"; i=$((i+1)); done; "
                  "while [ ! -e " +
                      marker +
                      " ]; do sleep 0.01; done; "
                      "while [ $i -lt 660 ]; do echo \"line $i\"; i=$((i+1)); done"));
  ASSERT_TRUE(WaitFor([&] { return LogContains("chatty", "line 599\n"); })) << Log("chatty");
  const std::string pod_dir = PodDir("chatty");
  EXPECT_EQ(LogFileCount(pod_dir), 3);
  client::PodLogOptions tail;
  tail.tail_lines = 80;  // more lines than the current file holds (~45 a file)
  EXPECT_EQ(Log("chatty", tail), Numbered(520, 600));

  StatusOr<client::PodLogChunk> first = agent_->ReadPodLogChunk("default", "chatty", {}, nullptr, SIZE_MAX);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(first->text.ends_with(Numbered(590, 600)));
  EXPECT_FALSE(first->run_ended);
  EXPECT_EQ(first->next.container, "main");
  EXPECT_EQ(first->next.run, 0);
  std::ofstream(marker) << "go";
  ASSERT_TRUE(WaitFor([&] { return Phase("chatty") == "Succeeded"; }));
  // The follower reads what came after its cursor (several rotations meanwhile), and learns the run ended.
  std::string followed;
  client::PodLogCursor cursor = first->next;
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    StatusOr<client::PodLogChunk> next = agent_->ReadPodLogChunk("default", "chatty", {}, &cursor, 1000);
    ASSERT_TRUE(next.ok()) << next.status();
    followed += next->text;
    cursor = next->next;
    ended = next->run_ended;
  }
  EXPECT_TRUE(ended);
  EXPECT_EQ(followed, Numbered(600, 660));  // fewer rotations meanwhile than max_files
  EXPECT_EQ(LogFileCount(pod_dir), 3);
}

TEST_F(NodeAgentLogTest, OnlyThePreviousRunsLogIsKept) {
  Create(ShellPod("restarts", "echo run; exit 1", "OnFailure"));
  ASSERT_TRUE(WaitFor([&] {
    clock_.Advance(std::chrono::minutes(1));  // past each back-off
    return std::filesystem::exists(PodDir("restarts") + "/logs/main/3.log");
  }));
  EXPECT_FALSE(std::filesystem::exists(PodDir("restarts") + "/logs/main/0.log"));
  EXPECT_FALSE(std::filesystem::exists(PodDir("restarts") + "/logs/main/1.log"));
  EXPECT_TRUE(std::filesystem::exists(PodDir("restarts") + "/logs/main/2.log"));
}

// kubelet cleanupOrphanedPodDirs: the directory goes once the pod left the API
// and no supervisor of it lives; never through a symbolic link.
TEST_F(NodeAgentLogTest, PodDirectoriesAreRemovedAfterDeletionButNotWhileASupervisorLives) {
  Create(ShellPod("done", "echo bye"));
  ASSERT_TRUE(WaitFor([&] { return Phase("done") == "Succeeded"; }));
  const std::string done_dir = PodDir("done");
  // A link inside the pod directory to something outside it.
  const std::string outside = dir_ + "/outside";
  std::filesystem::create_directories(outside);
  std::ofstream(outside + "/keep") << "keep";
  std::filesystem::create_directory_symlink(outside, done_dir + "/work/escape");
  // A link in place of a pod directory.
  std::filesystem::create_directory_symlink(outside, dir_ + "/pods/default_link_0123");

  // A pod directory whose pod is gone but whose supervisor still runs (as a run left by a
  // crashed agent whose sweep has not reached it).
  const std::string ghost = dir_ + "/pods/default_ghost_4567";
  shim::LaunchRecord l;
  l.container = "main";
  l.argv = {"/bin/sleep", "600"};
  l.env = {"PATH=/bin:/usr/bin"};
  l.working_dir = "/";
  l.log_path = shim::ContainerLogPath(ghost, "main", 0);
  l.started_at = RealClock::Get().Now();
  const std::string ghost_run = shim::RunDir(ghost, "main", 0);
  ASSERT_TRUE(shim::WriteLaunchRecord(ghost_run, l).ok());
  ASSERT_TRUE(shim::SpawnShim({"/proc/self/exe", "shim"}, ghost_run, 10000ms).ok());
  ASSERT_NE(shim::SupervisorAlive(ghost_run), 0);

  // A pod still in the API keeps its directory, terminal or not.
  clock_.Advance(kPodDirRemovalDelay * 2);
  Create(ShellPod("other", "echo x"));  // a pass or two
  ASSERT_TRUE(WaitFor([&] { return Phase("other") == "Succeeded"; }));
  EXPECT_TRUE(std::filesystem::exists(done_dir));

  ASSERT_TRUE(DeleteWithGrace("done", 0).ok());
  // Kept a while for a follower's last read, then removed.
  ASSERT_TRUE(WaitFor([&] { return agent_->ReadPodLog("default", "done", {}).status().code() == Code::kNotFound; }));
  std::this_thread::sleep_for(50ms);
  EXPECT_TRUE(std::filesystem::exists(done_dir));
  clock_.Advance(kPodDirRemovalDelay);
  ASSERT_TRUE(WaitFor([&] { return !std::filesystem::exists(done_dir); }));
  EXPECT_EQ(testing_ReadFile(outside + "/keep"), "keep");  // the link was removed, not followed
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ + "/pods/default_link_0123"));
  // The ghost's supervisor lives: its directory stays.
  EXPECT_TRUE(std::filesystem::exists(ghost_run + "/launch.json"));
  ASSERT_TRUE(shim::KillSupervisor(ghost_run));
  ASSERT_TRUE(WaitFor([&] { return shim::SupervisorAlive(ghost_run) == 0; }));
  clock_.Advance(kPodDirRemovalDelay);
  ASSERT_TRUE(WaitFor([&] { return !std::filesystem::exists(ghost); }));
  EXPECT_TRUE(std::filesystem::exists(PodDir("other")));
}

// Rotation is the supervisor's: it goes on while no agent runs, and after the
// agent adopted the run.
TEST_F(NodeAgentLogTest, RotationGoesOnWhileNoAgentRunsAndAfterAdoption) {
  const std::string marker = dir_ + "/go";
  const std::string marker2 = dir_ + "/go2";
  Create(ShellPod("long", "echo start; while [ ! -e " + marker +
                              " ]; do sleep 0.01; done; "
                              "i=0; while [ $i -lt 600 ]; do echo \"line $i\"; i=$((i+1)); done; "
                              "while [ ! -e " +
                              marker2 +
                              " ]; do sleep 0.01; done; "
                              "while [ $i -lt 1200 ]; do echo \"line $i\"; i=$((i+1)); done; sleep 600"));
  ASSERT_TRUE(WaitFor([&] { return LogContains("long", "start\n"); }));
  const std::string pod_dir = PodDir("long");
  agent_->Stop(StopMode::kLeaveRunning);
  agent_.reset();
  std::ofstream(marker) << "go";
  ASSERT_TRUE(
      WaitFor([&] { return testing_ReadFile(pod_dir + "/logs/main/0.log").find("line 599\n") != std::string::npos; }));
  EXPECT_EQ(LogFileCount(pod_dir), 3);
  agent_ = std::make_unique<NodeAgent>(client_, clock_, options_);
  ASSERT_TRUE(agent_->Start().ok());
  ASSERT_TRUE(WaitFor([&] { return agent_->ActivePods().size() == 1; }));
  std::ofstream(marker2) << "go";
  ASSERT_TRUE(WaitFor([&] { return LogContains("long", "line 1199\n"); }));
  EXPECT_EQ(LogFileCount(pod_dir), 3);
  client::PodLogOptions tail;
  tail.tail_lines = 40;
  EXPECT_EQ(Log("long", tail), Numbered(1160, 1200));
}

}  // namespace
}  // namespace berth::agent
