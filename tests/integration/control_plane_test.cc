// The control plane end to end, as `berth server` assembles it
// (control_plane_fixture.h): ApiServer over a MemoryStore, the
// ControllerManager (Kueue admission, job controllers, placement) and a
// NodeAgent running pods as real processes, all talking over HTTP through
// client::HttpClient. Jobs here are shell commands; the waits are bounded
// polls on object state (no assertion depends on timing).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/integration/control_plane_fixture.h"

namespace berth {
namespace {

using namespace std::chrono_literals;

using integration::ControlPlaneTest;
using integration::HasCondition;
using integration::kQueues;
const client::GroupVersionResource kJobs = integration::kJobsGvr;
const client::GroupVersionResource kPods = integration::kPodsGvr;
const client::GroupVersionResource kEvents = integration::kEventsGvr;

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
