// The control plane end to end, as `berth server` assembles it
// (control_plane_fixture.h): ApiServer over a MemoryStore, the
// ControllerManager (Kueue admission, job controllers, placement) and a
// NodeAgent running pods as real processes, all talking over HTTP through
// client::HttpClient. Jobs here are shell commands; the waits are bounded
// polls on object state (no assertion depends on timing). The preemption round
// trip of every other job kind is in job_lifecycle_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>
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

// Quota is never over-committed while jobs churn: at every revision the store
// shows, the Workloads holding quota (QuotaReserved=True, not Finished) in the
// 2-cpu ClusterQueue ask for at most 2 cpus. Sixteen 1-cpu Jobs are queued at
// once and finish at different times, so admissions, pending verdicts, job
// reconciler writes and finishes interleave on the same Workloads (CI once saw
// three 1-cpu Jobs admitted in a 2-cpu ClusterQueue).
TEST_F(ControlPlaneTest, NoMoreWorkloadsHoldQuotaThanTheClusterQueueHasWhileJobsChurn) {
  Apply(kQueues);
  std::atomic<bool> done{false};
  size_t most_held = 0;
  std::string when_most;
  size_t lists = 0;
  std::thread watcher([&] {
    while (!done) {
      std::vector<std::string> held;
      for (const api::Object& wl : List(kWorkloads, "team-a")) {
        if (HasCondition(wl, "QuotaReserved") && !HasCondition(wl, "Finished")) held.push_back(api::Name(wl));
      }
      ++lists;
      if (held.size() > most_held) {
        most_held = held.size();
        when_most.clear();
        for (const std::string& n : held) when_most += n + " ";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // leaves the control plane its CPU
    }
  });
  constexpr int kChurnJobs = 16;
  for (int i = 0; i < kChurnJobs; ++i) {
    Apply(QueuedJob("churn-" + std::to_string(i), "low", 1, "1", "sleep 0." + std::to_string(i % 4)));
  }
  const bool all_complete = WaitFor([&] {
    for (int i = 0; i < kChurnJobs; ++i) {
      if (!HasCondition(Get(kJobs, "team-a", "churn-" + std::to_string(i)), "Complete")) return false;
    }
    return true;
  });
  done = true;
  watcher.join();
  EXPECT_TRUE(all_complete);
  EXPECT_GT(lists, 10u);  // the watcher saw the churn, not only its end
  EXPECT_LE(most_held, 2u) << "held quota at once: " << when_most;
  EXPECT_EQ(most_held, 2u) << "the queue never ran two at once: " << when_most;
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

// Forwards to another client; the LIST of workloads waits until Release(), as a
// store holding 100,000 Workloads keeps it waiting while the other informers sync.
class WorkloadListGate final : public client::Client {
 public:
  explicit WorkloadListGate(client::Client& inner) : inner_(inner) {}
  void Release() {
    {
      std::lock_guard<std::mutex> l(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  StatusOr<api::Object> Get(const client::ResourceRef& r, const std::string& n,
                            const client::GetOptions& o = {}) override {
    return inner_.Get(r, n, o);
  }
  StatusOr<client::ObjectList> List(const client::ResourceRef& r, const client::ListOptions& o = {}) override {
    if (r.gvr.resource == "workloads") {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return open_; });
    }
    return inner_.List(r, o);
  }
  StatusOr<api::Object> Create(const client::ResourceRef& r, const api::Object& obj,
                               const client::CreateOptions& o = {}) override {
    return inner_.Create(r, obj, o);
  }
  StatusOr<api::Object> Update(const client::ResourceRef& r, const api::Object& obj,
                               const client::UpdateOptions& o = {}) override {
    return inner_.Update(r, obj, o);
  }
  StatusOr<api::Object> UpdateStatus(const client::ResourceRef& r, const api::Object& obj,
                                     const client::UpdateOptions& o = {}) override {
    return inner_.UpdateStatus(r, obj, o);
  }
  StatusOr<api::Object> Patch(const client::ResourceRef& r, const std::string& n, client::PatchType t,
                              std::string_view patch, const client::PatchOptions& o = {}) override {
    return inner_.Patch(r, n, t, patch, o);
  }
  Status Bind(const client::ResourceRef& r, const std::string& p, const std::string& n,
              const client::CreateOptions& o = {}) override {
    return inner_.Bind(r, p, n, o);
  }
  Status Delete(const client::ResourceRef& r, const std::string& n, const client::DeleteOptions& o = {}) override {
    return inner_.Delete(r, n, o);
  }
  StatusOr<std::unique_ptr<client::WatchStream>> Watch(const client::ResourceRef& r,
                                                       const client::WatchOptions& o = {}) override {
    return inner_.Watch(r, o);
  }

 private:
  client::Client& inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// A restarted control plane whose Workloads are listed last (a big store) must not take a
// running Kueue-managed Job for one without a Workload: no controller acts before every
// informer has synced, so the Job keeps running, its pod is never deleted, and it finishes
// under the Workload it was admitted with.
TEST_F(ControlPlaneTest, RestartedControllersWaitForEveryCacheSoARunningJobKeepsRunning) {
  Apply(kQueues);
  const std::string go = dir_ + "/go";
  Apply(QueuedJob("steady", "low", 1, "500m", "while [ ! -f " + go + " ]; do sleep 0.1; done; echo done"));
  auto running = [&] {
    const std::vector<api::Object> pods = List(kPods, "team-a", "job-name=steady");
    return pods.size() == 1 && pods[0]["status"].value("phase", "") == "Running";
  };
  ASSERT_TRUE(WaitFor(running));
  const std::string pod_uid = api::Uid(List(kPods, "team-a", "job-name=steady")[0]);
  const std::string wl_uid = api::Uid(WorkloadsOf("team-a", "steady")[0]);

  // The controllers restart (the server and the agent stay); their workload LIST waits.
  manager_.reset();
  WorkloadListGate gate(*controller_client_);
  manager_ = std::make_unique<controllers::ControllerManager>(gate, clock_);
  manager_->Start();
  // Long enough for the other informers to sync and a reconcile acting on them to land.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_FALSE(Get(kJobs, "team-a", "steady")["spec"].value("suspend", false)) << "suspended before the sync";
  EXPECT_TRUE(running()) << "the pod was stopped before the sync";
  gate.Release();
  ASSERT_TRUE(manager_->WaitForCacheSync(std::chrono::seconds(30)));
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the controllers' first passes

  std::ofstream(go).put('\n');
  ASSERT_TRUE(WaitFor([&] { return HasCondition(Get(kJobs, "team-a", "steady"), "Complete"); }))
      << Get(kJobs, "team-a", "steady").dump(2);
  const std::vector<api::Object> pods = List(kPods, "team-a", "job-name=steady");
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(api::Uid(pods[0]), pod_uid) << "the running pod was replaced";
  EXPECT_EQ(pods[0]["status"].value("phase", ""), "Succeeded");
  const std::vector<api::Object> wls = WorkloadsOf("team-a", "steady");
  ASSERT_EQ(wls.size(), 1u);
  EXPECT_EQ(api::Uid(wls[0]), wl_uid) << "the Workload was replaced";
  // The restart left no trace of a stop on the job.
  berth::client::EventRecorder::FlushAll();
  for (const api::Object& e : List(kEvents, "team-a")) {
    EXPECT_NE(e.value("reason", ""), "Stopped") << e.dump();
    EXPECT_NE(e.value("reason", ""), "SuccessfulDelete") << e.dump();
  }
  manager_.reset();  // before the gate it uses
}

}  // namespace
}  // namespace berth::integration
