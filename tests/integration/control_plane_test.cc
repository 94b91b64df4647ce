// The control plane end to end, as `berth server` assembles it
// (control_plane_fixture.h): ApiServer over a MemoryStore, the
// ControllerManager (Kueue admission, job controllers, placement) and a
// NodeAgent running pods as real processes, all talking over HTTP through
// client::HttpClient. Jobs here are shell commands; the waits are bounded
// polls on object state (no assertion depends on timing). The preemption round
// trip of every other job kind is in job_lifecycle_test.cc.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/integration/control_plane_fixture.h"
#include "client/event_recorder.h"

namespace berth::integration {
namespace {

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
  const std::vector<api::Object> pods = List(kPods, "team-a", "job-name=hello");
  ASSERT_EQ(pods.size(), 2u);
  std::set<std::string> logs;
  for (const api::Object& p : pods) {
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
    const std::vector<api::Object> pods = List(kPods, "team-a", "job-name=low");
    if (pods.size() != 2) return false;
    for (const api::Object& p : pods) {
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
  berth::client::EventRecorder::FlushAll();
  for (const api::Object& e : List(kEvents, "team-a")) {
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
    int running = 0;
    for (const api::Object& p : List(kPods, "team-a", "job-name=low")) {
      if (p["status"].value("phase", "") == "Running" && !p["metadata"].contains("deletionTimestamp")) ++running;
    }
    return running == 2;
  }));
}

}  // namespace
}  // namespace berth::integration
