// Job lifecycles through the running control plane (control_plane_fixture.h:
// API server over HTTP, every controller, a node agent running real
// processes), for every job kind — batch/v1 Job Indexed and NonIndexed,
// JobSet, TrainJob, PyTorchJob — as tests of the upstream failures about
// replacement pods and gangs:
//   - replacement pods never start while their predecessors still exist
//     (docs/architecture.md departures 3 and 4; kubernetes/kubernetes#115844,
//     kubernetes-sigs/jobset#684): after a Kueue preemption and re-admission, a
//     JobSet failurePolicy restart and a Job backoff retry, checked on the
//     complete stream of pod events (a watch of every pod from before the first
//     job exists);
//   - a gang is never partially created or admitted (volcano-sh/volcano#3373):
//     two gangs that each fit the quota alone but not together run one after
//     the other, each whole.
// Also: deleting a TrainJob or PyTorchJob after a server restart (SQLite
// store) removes every object it owns; an MPI TrainJob (launcher + node jobs,
// hostfile) starts after admission.
//
// The invariants are checked on the recorded events, so they hold for every
// interleaving the run produced; waits are bounded polls on object state.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/control_plane_fixture.h"

namespace berth::integration {
namespace {

const client::GroupVersionResource kJobSets{"jobset.x-k8s.io", "v1alpha2", "jobsets"};
const client::GroupVersionResource kTrainJobs{"trainer.kubeflow.org", "v1alpha1", "trainjobs"};
const client::GroupVersionResource kPyTorchJobs{"kubeflow.org", "v1", "pytorchjobs"};
const client::GroupVersionResource kServices{"", "v1", "services"};
const client::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};

constexpr char kNamespace[] = "team-a";
// Runs until SIGTERM (then exits 143, as a process killed by it).
constexpr char kLoopUntilTerm[] = "trap \"exit 143\" TERM; while true; do sleep 0.1; done";

// ---------------------------------------------------------------------------
// The pod event stream.

// Every pod event of one namespace, in the order the API server produced
// them (a watch from before the test creates anything; re-opened from the
// last resourceVersion if the server ends it).
class PodEventLog {
 public:
  struct Entry {
    client::WatchEventType type;
    api::Object pod;
  };

  PodEventLog(client::Client& client, std::string ns) : client_(client), ns_(std::move(ns)) {
    auto stream = client_.Watch(kPods.Namespace(ns_));
    EXPECT_TRUE(stream.ok()) << stream.status().ToString();
    if (stream.ok()) stream_ = std::move(stream).value();
    thread_ = std::thread([this] { Run(); });
  }
  ~PodEventLog() { Stop(); }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Stops once the log holds every pod of the namespace as a List shows it
  // now (each pod's uid at its current resourceVersion): the watch trails the
  // store by a moment, so a test that saw a state through List must not stop
  // the log before the log has it too. Stops anyway after 20 s.
  void StopWhenCaughtUp() {
    auto pods = client_.List(kPods.Namespace(ns_));
    EXPECT_TRUE(pods.ok()) << pods.status().ToString();
    std::set<std::pair<std::string, std::string>> missing;
    if (pods.ok()) {
      for (const api::Object& p : pods->items) missing.emplace(api::Uid(p), api::ResourceVersion(p));
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!missing.empty() && std::chrono::steady_clock::now() < deadline) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const Entry& e : entries_) missing.erase({api::Uid(e.pod), api::ResourceVersion(e.pod)});
      }
      if (!missing.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(missing.empty()) << missing.size() << " pod state(s) never reached the watch";
    Stop();
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }
  std::vector<Entry> entries() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_;
  }

 private:
  void Run() {
    std::string last_rv;
    while (!stop_) {
      if (stream_ == nullptr) {
        client::WatchOptions options;
        options.resource_version = last_rv;
        auto stream = client_.Watch(kPods.Namespace(ns_), options);
        if (!stream.ok()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          continue;
        }
        stream_ = std::move(stream).value();
      }
      auto next = stream_->Next(std::chrono::milliseconds(100));
      if (!next.ok()) {
        stream_.reset();
        continue;
      }
      if (!next.value()) continue;
      const client::WatchEvent& e = *next.value();
      if (e.type == client::WatchEventType::kBookmark || e.type == client::WatchEventType::kError) continue;
      last_rv = e.object->value("metadata", api::Object::object()).value("resourceVersion", last_rv);
      std::lock_guard<std::mutex> lock(mu_);
      entries_.push_back({e.type, *e.object});
    }
    if (stream_) stream_->Stop();
  }

  client::Client& client_;
  const std::string ns_;
  std::unique_ptr<client::WatchStream> stream_;
  std::thread thread_;
  std::atomic<bool> stop_ = false;
  std::mutex mu_;
  std::vector<Entry> entries_;
};

std::string Phase(const api::Object& pod) {
  return pod.value("status", api::Object::object()).value("phase", "");
}
// The value of label `key` ("" when absent).
std::string Label(const api::Object& obj, const std::string& key) {
  return obj.value("metadata", api::Object::object()).value("labels", api::Object::object()).value(key, "");
}
bool Terminal(const api::Object& pod) {
  const std::string phase = Phase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

// The DNS identity a pod's processes answer to: "<hostname>.<subdomain>" for
// pods with a hostname (Indexed Job and JobSet pods: the name a replacement
// would collide on), else the pod name (PyTorchJob's fixed names).
std::string Identity(const api::Object& pod) {
  const api::Object spec = pod.value("spec", api::Object::object());
  const std::string hostname = spec.value("hostname", "");
  if (hostname.empty()) return api::Name(pod);
  return hostname + "." + spec.value("subdomain", "");
}

// What the stream says about one pod (by uid): positions of its events.
struct PodHistory {
  std::string name;
  std::string job;            // value of the kind's job-name label
  api::Object first;          // the object as created
  size_t added = 0;           // position of ADDED
  std::optional<size_t> terminal;  // first event showing Succeeded/Failed
  std::optional<size_t> deleted;   // DELETED
  // Processes ended: terminal or removed.
  std::optional<size_t> ended() const {
    if (terminal && deleted) return std::min(*terminal, *deleted);
    return terminal ? terminal : deleted;
  }
};

std::map<std::string, PodHistory> Histories(const std::vector<PodEventLog::Entry>& log, const std::string& job_label) {
  std::map<std::string, PodHistory> out;
  for (size_t i = 0; i < log.size(); ++i) {
    const api::Object& pod = log[i].pod;
    auto [it, inserted] = out.try_emplace(api::Uid(pod));
    PodHistory& h = it->second;
    if (inserted) {
      h.name = api::Name(pod);
      h.job = Label(pod, job_label);
      h.first = pod;
      h.added = i;
    }
    if (!h.terminal && Terminal(pod)) h.terminal = i;
    if (log[i].type == client::WatchEventType::kDeleted) h.deleted = i;
  }
  return out;
}

// The replacement invariants (departure 3) over the whole stream:
//   - no pod is created while a pod of the same name exists;
//   - no two pods of one identity (hostname.subdomain, or name) are ever both
//     not terminal: a replacement starts only once its predecessor ended;
//   - no job ever has more live (not terminal) pods than its gang.
void ExpectNoReplacementOverlap(const std::vector<PodEventLog::Entry>& log, const std::string& job_label,
                                int gang_size) {
  std::set<std::string> existing_names;
  std::map<std::string, std::pair<std::string, std::string>> live;  // uid → (identity, job)
  for (size_t i = 0; i < log.size(); ++i) {
    const api::Object& pod = log[i].pod;
    const std::string name = api::Name(pod), uid = api::Uid(pod);
    if (log[i].type == client::WatchEventType::kAdded) {
      EXPECT_EQ(existing_names.count(name), 0u) << "pod " << name << " created while a pod of that name exists";
      existing_names.insert(name);
    }
    if (log[i].type == client::WatchEventType::kDeleted) existing_names.erase(name);
    if (log[i].type == client::WatchEventType::kDeleted || Terminal(pod)) {
      live.erase(uid);
      continue;
    }
    const std::string job = Label(pod, job_label);
    live[uid] = {Identity(pod), job};
    std::map<std::string, std::vector<std::string>> by_identity;
    std::map<std::string, int> by_job;
    for (const auto& [u, ij] : live) {
      by_identity[ij.first].push_back(u);
      ++by_job[ij.second];
    }
    EXPECT_EQ(by_identity[Identity(pod)].size(), 1u)
        << "two live pods answer to " << Identity(pod) << " (event " << i << ", pod " << name << ")";
    EXPECT_LE(by_job[job], gang_size) << "job " << job << " has more live pods than its gang (event " << i << ")";
  }
}

// ---------------------------------------------------------------------------
// The job kinds.

struct JobKind {
  std::string name;
  client::GroupVersionResource resource;
  std::string pod_job_label;   // pod label whose value is the job's name
  std::string done_condition;  // condition type True once the job succeeded
  std::string setup;           // objects the kind needs first (a runtime)
  // A queued job `name` at `priority` whose gang is `pods` pods of `cpu`
  // each, every container running `script` (no single quotes in it).
  std::function<std::string(const std::string& name, const std::string& priority, int pods, const std::string& cpu,
                            const std::string& script)>
      manifest;
  friend void PrintTo(const JobKind& k, std::ostream* os) { *os << k.name; }
};

std::string QueuedMeta(const std::string& name, const std::string& priority) {
  return "metadata:\n  name: " + name + "\n  namespace: team-a\n  labels:\n" +
         "    kueue.x-k8s.io/queue-name: user-queue\n    kueue.x-k8s.io/priority-class: " + priority + "\n";
}

// A pod spec at `indent` spaces: one container `container` running `script`
// with a cpu request, restartPolicy Never, a 5 s grace period.
std::string PodSpec(int indent, const std::string& container, const std::string& cpu, const std::string& script,
                    const std::string& extra_env = "") {
  const std::string in(indent, ' ');
  return in + "restartPolicy: Never\n" + in + "terminationGracePeriodSeconds: 5\n" + in + "containers:\n" + in +
         "- name: " + container + "\n" + in + "  image: busybox\n" + in + "  command: [/bin/sh, -c, '" + script +
         "']\n" + in + "  resources: {requests: {cpu: \"" + cpu + "\"}}\n" + extra_env;
}

std::string BatchJob(bool indexed, const std::string& name, const std::string& priority, int pods,
                     const std::string& cpu, const std::string& script) {
  return "apiVersion: batch/v1\nkind: Job\n" + QueuedMeta(name, priority) + "spec:\n" +
         (indexed ? "  completionMode: Indexed\n" : "") + "  completions: " + std::to_string(pods) +
         "\n  parallelism: " + std::to_string(pods) + "\n  backoffLimit: 3\n  template:\n    spec:\n" +
         PodSpec(6, "main", cpu, script);
}

// The env of a JobSet / trainer container: the restart attempt and the job
// index (JobSet's annotations), read through the downward API.
std::string JobSetEnv(int indent) {
  const std::string in(indent, ' ');
  return in + "  env:\n" + in +
         "  - {name: ATTEMPT, valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['jobset.sigs.k8s.io/restart-attempt']\"}}}\n" +
         in +
         "  - {name: JOB_INDEX, valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['jobset.sigs.k8s.io/job-index']\"}}}\n";
}

// A JobSet of `pods` replicas of a one-pod Job, with `failure_policy` (YAML
// under spec.failurePolicy, "" for none); with a failure policy the Jobs have
// backoffLimit 0, so one failed pod fails its Job. (Without one the default
// backoffLimit stays: a Kueue eviction's deleted pods count as failed pods,
// as upstream's Job controller counts them.)
std::string JobSet(const std::string& name, const std::string& priority, int pods, const std::string& cpu,
                   const std::string& script, const std::string& failure_policy = "") {
  return "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n" + QueuedMeta(name, priority) + "spec:\n" +
         (failure_policy.empty() ? "" : "  failurePolicy: " + failure_policy + "\n") +
         "  replicatedJobs:\n  - name: workers\n    replicas: " + std::to_string(pods) +
         "\n    template:\n      spec:\n        parallelism: 1\n        completions: 1\n" +
         (failure_policy.empty() ? "" : "        backoffLimit: 0\n") + "        template:\n          spec:\n" +
         PodSpec(12, "worker", cpu, script, JobSetEnv(12));
}

// A ClusterTrainingRuntime `name`: one trainer job `node` whose container
// `node` the TrainJob fills in; `failure_policy` (and backoffLimit 0) as for
// JobSet.
std::string ShellRuntime(const std::string& name, const std::string& failure_policy = "") {
  return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: " + name +
         "}\nspec:\n  mlPolicy: {numNodes: 1, torch: {}}\n  template:\n    spec:\n" +
         (failure_policy.empty() ? "" : "      failurePolicy: " + failure_policy + "\n") +
         "      replicatedJobs:\n      - name: node\n        template:\n          metadata:\n"
         "            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
         "          spec:\n" + (failure_policy.empty() ? "" : "            backoffLimit: 0\n") +
         "            template:\n              spec:\n" +
         PodSpec(16, "node", "100m", kLoopUntilTerm, JobSetEnv(16));
}

std::string TrainJob(const std::string& runtime, const std::string& name, const std::string& priority, int pods,
                     const std::string& cpu, const std::string& script) {
  return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n" + QueuedMeta(name, priority) +
         "spec:\n  runtimeRef: {name: " + runtime + "}\n  trainer:\n    numNodes: " + std::to_string(pods) +
         "\n    command: [/bin/sh, -c, '" + script + "']\n    resourcesPerNode: {requests: {cpu: \"" + cpu +
         "\"}}\n";
}

// Master 1 + Worker pods − 1.
std::string PyTorchJob(const std::string& name, const std::string& priority, int pods, const std::string& cpu,
                       const std::string& script) {
  auto replica = [&](const std::string& type, int replicas) {
    return "    " + type + ":\n      replicas: " + std::to_string(replicas) +
           "\n      restartPolicy: Never\n      template:\n        spec:\n" + PodSpec(10, "pytorch", cpu, script);
  };
  return "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n" + QueuedMeta(name, priority) +
         "spec:\n  pytorchReplicaSpecs:\n" + replica("Master", 1) + replica("Worker", pods - 1);
}

std::vector<JobKind> AllKinds() {
  using namespace std::placeholders;
  return {
      {"IndexedJob", kJobs, "batch.kubernetes.io/job-name", "Complete", "",
       std::bind(BatchJob, true, _1, _2, _3, _4, _5)},
      {"NonIndexedJob", kJobs, "batch.kubernetes.io/job-name", "Complete", "",
       std::bind(BatchJob, false, _1, _2, _3, _4, _5)},
      {"JobSet", kJobSets, "jobset.sigs.k8s.io/jobset-name", "Completed", "",
       [](const std::string& n, const std::string& p, int pods, const std::string& cpu, const std::string& s) {
         return JobSet(n, p, pods, cpu, s);
       }},
      {"TrainJob", kTrainJobs, "jobset.sigs.k8s.io/jobset-name", "Complete", ShellRuntime("shell-runtime"),
       std::bind(TrainJob, "shell-runtime", _1, _2, _3, _4, _5)},
      {"PyTorchJob", kPyTorchJobs, "training.kubeflow.org/job-name", "Succeeded", "", PyTorchJob},
  };
}

// ---------------------------------------------------------------------------

class JobLifecycleTest : public ControlPlaneTest {
 protected:
  void SetUp() override {
    ControlPlaneTest::SetUp();
    ASSERT_NE(client_, nullptr);
    log_ = std::make_unique<PodEventLog>(*client_, kNamespace);
  }
  void TearDown() override {
    log_.reset();
    ControlPlaneTest::TearDown();
  }

  // Pods of `job` (by the kind's label) that run and are not being deleted.
  std::vector<api::Object> RunningPods(const std::string& label, const std::string& job) {
    std::vector<api::Object> out;
    for (const api::Object& p : List(kPods, kNamespace, label + "=" + job)) {
      if (Phase(p) == "Running" && !p["metadata"].contains("deletionTimestamp")) out.push_back(p);
    }
    return out;
  }

  std::unique_ptr<PodEventLog> log_;
};

class JobKindLifecycleTest : public JobLifecycleTest, public ::testing::WithParamInterface<JobKind> {};

// Departure 4 through Kueue: a low-priority gang (2 pods × 1 cpu, the whole quota)
// runs until a high-priority gang preempts it as a whole; the high one runs
// to completion; the low one is re-admitted and runs again. Each of the low
// job's first pods has ended before any high pod exists (quota is never
// double-booked) and is gone (removed from the API) before any pod of its
// second attempt exists; the second attempt is exactly one new gang.
TEST_P(JobKindLifecycleTest, PreemptedGangIsReplacedOnlyAfterItsPodsAreGone) {
  const JobKind& k = GetParam();
  Apply(kQueues);
  if (!k.setup.empty()) Apply(k.setup);
  Apply(k.manifest("low", "low", 2, "1", kLoopUntilTerm));
  ASSERT_TRUE(WaitFor([&] { return RunningPods(k.pod_job_label, "low").size() == 2; }));
  const size_t mark = log_->size();
  std::set<std::string> first_attempt;
  for (const api::Object& p : RunningPods(k.pod_job_label, "low")) first_attempt.insert(api::Uid(p));

  Apply(k.manifest("high", "high", 2, "1", "sleep 0.5"));
  ASSERT_TRUE(WaitFor([&] { return HasCondition(Get(k.resource, kNamespace, "high"), k.done_condition); }))
      << Get(k.resource, kNamespace, "high").dump(2);
  ASSERT_TRUE(WaitFor([&] {
    auto wls = WorkloadsOf(kNamespace, "low");
    if (wls.size() != 1 || !HasCondition(wls[0], "Admitted")) return false;
    auto running = RunningPods(k.pod_job_label, "low");
    if (running.size() != 2) return false;
    for (const api::Object& p : running) {
      if (first_attempt.count(api::Uid(p)) > 0) return false;
    }
    return true;
  }));
  log_->StopWhenCaughtUp();

  const auto log = log_->entries();
  ExpectNoReplacementOverlap(log, k.pod_job_label, 2);
  const auto pods = Histories(log, k.pod_job_label);
  size_t first_gone = 0, first_ended = 0;
  for (const std::string& uid : first_attempt) {
    const PodHistory& h = pods.at(uid);
    ASSERT_TRUE(h.deleted) << h.name << " of the first attempt still exists";
    first_gone = std::max(first_gone, *h.deleted);
    first_ended = std::max(first_ended, *h.ended());
  }
  int second_attempt = 0, high = 0;
  for (const auto& [uid, h] : pods) {
    if (h.job == "high") {
      ++high;
      EXPECT_GT(h.added, first_ended) << "high pod " << h.name << " created while a low pod still ran";
    }
    if (h.job == "low" && h.added > mark) {
      ++second_attempt;
      EXPECT_GT(h.added, first_gone) << "low pod " << h.name << " created before the first attempt was gone";
    }
  }
  EXPECT_EQ(second_attempt, 2);
  EXPECT_EQ(high, 2);
}

// volcano-sh/volcano#3373: two gangs (2 pods × 750m each) that fit the quota (2 cpu) one at a
// time, submitted together. One runs as a whole, then the other; no pod of
// the second exists while the first has live pods, every pod of a gang exists
// before any of them finishes, and each gang is exactly its pods (nothing was
// created, evicted and created again).
TEST_P(JobKindLifecycleTest, TwoGangsThatFitOnlyOneAtATimeRunWholeOneAfterTheOther) {
  const JobKind& k = GetParam();
  Apply(kQueues);
  if (!k.setup.empty()) Apply(k.setup);
  Apply(k.manifest("gang-a", "low", 2, "750m", "sleep 1") + "---\n" +
        k.manifest("gang-b", "low", 2, "750m", "sleep 1"));
  for (const std::string job : {"gang-a", "gang-b"}) {
    ASSERT_TRUE(WaitFor([&] { return HasCondition(Get(k.resource, kNamespace, job), k.done_condition); }))
        << Get(k.resource, kNamespace, job).dump(2);
  }
  // A PyTorchJob is done once its Master succeeded: its Worker may still exit.
  ASSERT_TRUE(WaitFor([&] {
    const std::vector<api::Object> pods = List(kPods, kNamespace);
    return std::all_of(pods.begin(), pods.end(), Terminal);
  }));
  log_->StopWhenCaughtUp();

  const auto log = log_->entries();
  ExpectNoReplacementOverlap(log, k.pod_job_label, 2);
  std::map<std::string, std::vector<PodHistory>> by_job;
  for (const auto& [uid, h] : Histories(log, k.pod_job_label)) by_job[h.job].push_back(h);
  ASSERT_EQ(by_job.size(), 2u);
  for (const auto& [job, pods] : by_job) {
    EXPECT_EQ(pods.size(), 2u) << job;
    size_t last_added = 0, first_ended = SIZE_MAX;
    for (const PodHistory& h : pods) {
      last_added = std::max(last_added, h.added);
      ASSERT_TRUE(h.ended()) << h.name;
      first_ended = std::min(first_ended, *h.ended());
    }
    EXPECT_LT(last_added, first_ended) << "gang " << job << " was not whole before it started finishing";
  }
  // One gang after the other: the later one's first pod was created only
  // after the earlier one had finished (its first pod ended; a PyTorchJob is
  // finished once its Master succeeded, while a Worker may still be exiting).
  auto span = [](const std::vector<PodHistory>& pods) {
    size_t first_added = SIZE_MAX, first_ended = SIZE_MAX;
    for (const PodHistory& h : pods) {
      first_added = std::min(first_added, h.added);
      first_ended = std::min(first_ended, *h.ended());
    }
    return std::make_pair(first_added, first_ended);
  };
  auto a = span(by_job["gang-a"]), b = span(by_job["gang-b"]);
  EXPECT_TRUE(a.second < b.first || b.second < a.first)
      << "gang-a pods from event " << a.first << " (first ended " << a.second << "), gang-b pods from event "
      << b.first << " (first ended " << b.second << ")";
}

// Issue 18: a controller at rest writes nothing. Once a finished job of each kind and
// everything it caused are written, every controller reconciles every object again (what
// the periodic resync does, for every object ever finished): no write may follow. A status
// a controller computes differently from what the API server stores (say a field its
// type does not have, pruned from every write) would be written again at each resync, for
// each of the thousands of finished jobs a long-running server holds.
TEST_P(JobKindLifecycleTest, AResyncOfAFinishedJobWritesNothing) {
  using namespace std::chrono_literals;
  const JobKind& k = GetParam();
  Apply(kQueues);
  if (!k.setup.empty()) Apply(k.setup);
  Apply(k.manifest("done", "low", 2, "500m", "true"));
  ASSERT_TRUE(WaitFor([&] { return HasCondition(Get(k.resource, kNamespace, "done"), k.done_condition); }))
      << Get(k.resource, kNamespace, "done").dump(2);
  ASSERT_TRUE(WaitFor([&] {
    auto wls = WorkloadsOf(kNamespace, "done");
    return wls.size() == 1 && HasCondition(wls[0], "Finished");
  }));
  // The node agent renews its Lease every 10 s whatever happens; every other write counts.
  auto writes = [&] {
    std::map<std::string, double> w = AcceptedWrites();
    w.erase("PUT leases");
    return w;
  };
  // Settled: what the finish caused (Events are sent asynchronously) has been written.
  std::map<std::string, double> before = writes();
  ASSERT_TRUE(WaitFor([&] {
    std::this_thread::sleep_for(1s);
    std::map<std::string, double> now = writes();
    std::swap(now, before);
    return now == before;
  }));

  ASSERT_TRUE(manager_->ResyncAndWaitIdle(60s));
  std::this_thread::sleep_for(500ms);  // an Event a reconcile recorded is sent meanwhile
  std::map<std::string, double> after = writes();
  std::map<std::string, double> added;
  for (const auto& [what, n] : after) {
    if (n != before[what]) added[what] = n - before[what];
  }
  EXPECT_TRUE(added.empty()) << "writes by the resync of a finished " << k.name << ": "
                             << ::testing::PrintToString(added) << "\n"
                             << Get(k.resource, kNamespace, "done").dump(2);
}

INSTANTIATE_TEST_SUITE_P(Kinds, JobKindLifecycleTest, ::testing::ValuesIn(AllKinds()),
                         [](const ::testing::TestParamInfo<JobKind>& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Restarts and retries inside one admission.

constexpr char kFailFirstAttemptOfIndexZero[] =
    "if [ \"$ATTEMPT\" = 0 ] && [ \"$JOB_INDEX\" = 0 ] && [ \"$JOB_COMPLETION_INDEX\" = 0 ]; then sleep 1; exit 1; "
    "fi; trap \"exit 143\" TERM; while true; do sleep 0.1; done";

// Departure 3 for a JobSet failurePolicy restart (maxRestarts 1, Recreate): the first
// pod of the first attempt fails, the JobSet restarts as a whole, and every
// pod of attempt 1 is created only after every pod of attempt 0 is gone.
struct RestartCase {
  std::string name;
  client::GroupVersionResource resource;
  std::string setup;
  std::string manifest;
  friend void PrintTo(const RestartCase& c, std::ostream* os) { *os << c.name; }
};

class RestartTest : public JobLifecycleTest, public ::testing::WithParamInterface<RestartCase> {};

TEST_P(RestartTest, FailurePolicyRestartCreatesTheNewAttemptOnlyAfterTheOldOneIsGone) {
  const RestartCase& c = GetParam();
  const std::string label = "jobset.sigs.k8s.io/jobset-name";
  Apply(kQueues);
  if (!c.setup.empty()) Apply(c.setup);
  Apply(c.manifest);
  ASSERT_TRUE(WaitFor([&] {
    auto running = RunningPods(label, "restarts");
    return running.size() == 2 && Label(running[0], "jobset.sigs.k8s.io/restart-attempt") == "1" &&
           Label(running[1], "jobset.sigs.k8s.io/restart-attempt") == "1";
  })) << Get(kJobSets, kNamespace, "restarts").dump(2);
  log_->StopWhenCaughtUp();
  api::Object js = Get(kJobSets, kNamespace, "restarts");
  EXPECT_EQ(js["status"]["restarts"], 1);
  EXPECT_FALSE(HasCondition(js, "Failed"));

  const auto log = log_->entries();
  ExpectNoReplacementOverlap(log, label, 2);
  size_t attempt0_gone = 0, attempt1_first = SIZE_MAX;
  int attempt0 = 0, attempt1 = 0;
  for (const auto& [uid, h] : Histories(log, label)) {
    const std::string attempt = Label(h.first, "jobset.sigs.k8s.io/restart-attempt");
    if (attempt == "0") {
      ++attempt0;
      ASSERT_TRUE(h.deleted) << h.name;
      attempt0_gone = std::max(attempt0_gone, *h.deleted);
    } else {
      ASSERT_EQ(attempt, "1") << h.name;
      ++attempt1;
      attempt1_first = std::min(attempt1_first, h.added);
    }
  }
  EXPECT_EQ(attempt0, 2);
  EXPECT_EQ(attempt1, 2);
  EXPECT_LT(attempt0_gone, attempt1_first) << "a pod of attempt 1 was created before attempt 0 was gone";
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, RestartTest,
    ::testing::Values(
        // Two one-pod Jobs; the pod of job 0 fails.
        RestartCase{"JobSet", kJobSets, "",
                    JobSet("restarts", "low", 2, "500m", kFailFirstAttemptOfIndexZero,
                           "{maxRestarts: 1, restartStrategy: Recreate}")},
        // One two-pod Job (numNodes 2); its index 0 fails.
        RestartCase{"TrainJob", kTrainJobs, ShellRuntime("restart-runtime", "{maxRestarts: 1}"),
                    TrainJob("restart-runtime", "restarts", "low", 2, "500m", kFailFirstAttemptOfIndexZero)}),
    [](const ::testing::TestParamInfo<RestartCase>& info) { return info.param.name; });

// Departure 3 for a Job's backoff retry (kubernetes/kubernetes#115844): one of two pods
// fails once; its replacement is created only after it has failed (for Indexed Jobs the
// replacement reuses the index's hostname), the Job never has more than 2
// live pods, the failed pod is kept and counted, and the Job completes.
class BackoffTest : public JobLifecycleTest, public ::testing::WithParamInterface<bool> {};

TEST_P(BackoffTest, FailedPodIsReplacedOnlyAfterItFailed) {
  const bool indexed = GetParam();
  const std::string label = "batch.kubernetes.io/job-name";
  Apply(kQueues);
  // The first pod to create the directory fails; every other pod succeeds.
  const std::string once = dir_ + "/failed-once";
  Apply(BatchJob(indexed, "retry", "low", 2, "500m",
                 "if mkdir " + once + " 2>/dev/null; then exit 1; fi; sleep 1"));
  ASSERT_TRUE(WaitFor([&] { return HasCondition(Get(kJobs, kNamespace, "retry"), "Complete"); }))
      << Get(kJobs, kNamespace, "retry").dump(2);
  log_->StopWhenCaughtUp();
  api::Object job = Get(kJobs, kNamespace, "retry");
  EXPECT_EQ(job["status"]["failed"], 1);
  EXPECT_EQ(job["status"]["succeeded"], 2);

  const auto log = log_->entries();
  ExpectNoReplacementOverlap(log, label, 2);
  const auto pods = Histories(log, label);
  EXPECT_EQ(pods.size(), 3u);
  int failed = 0;
  for (const api::Object& p : List(kPods, kNamespace, label + "=retry")) {
    if (Phase(p) == "Failed") ++failed;
  }
  EXPECT_EQ(failed, 1) << "the failed pod is kept, as upstream";
}

INSTANTIATE_TEST_SUITE_P(CompletionModes, BackoffTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "Indexed" : "NonIndexed");
                         });

// ---------------------------------------------------------------------------
// Garbage collection across a server restart (SQLite store).

class GarbageCollectionTest : public ControlPlaneTest, public ::testing::WithParamInterface<JobKind> {
 protected:
  GarbageCollectionTest() { UseSqliteStore(); }
  // The objects of team-a a job can own, as "<resource>/<name>" (the
  // namespace holds nothing else of these kinds).
  std::set<std::string> Owned() {
    std::set<std::string> out;
    for (const auto& gvr : {kJobSets, kJobs, kPods, kWorkloads, kServices, kConfigMaps}) {
      for (const api::Object& o : List(gvr, kNamespace)) out.insert(gvr.resource + "/" + api::Name(o));
    }
    return out;
  }
};

// A running job is deleted after the whole control plane restarted on the
// same SQLite file: its Workload, pods (old and replacements), Services,
// ConfigMaps and (TrainJob) JobSet and Jobs all go, nothing is left behind.
TEST_P(GarbageCollectionTest, DeletingAJobAfterARestartRemovesEverythingItOwns) {
  const JobKind& k = GetParam();
  const std::string label = k.pod_job_label + "=owner";
  Apply(kQueues);
  if (!k.setup.empty()) Apply(k.setup);
  Apply(k.manifest("owner", "low", 2, "500m", kLoopUntilTerm));
  auto running = [&] {
    int n = 0;
    for (const api::Object& p : List(kPods, kNamespace, label)) n += Phase(p) == "Running";
    return n;
  };
  ASSERT_TRUE(WaitFor([&] { return running() == 2; }));
  const std::set<std::string> owned = Owned();
  EXPECT_EQ(std::count_if(owned.begin(), owned.end(), [](const std::string& s) { return s.rfind("workloads/", 0) == 0; }),
            1);
  EXPECT_EQ(std::count_if(owned.begin(), owned.end(), [](const std::string& s) { return s.rfind("pods/", 0) == 0; }),
            2);

  RestartControlPlane();
  // The restarted control plane has the job and its Workload. (The pods'
  // processes died with the old agent: the new one reports them Failed,
  // ContainerStatusUnknown, as a kubelet does after a node restart, and a
  // TrainJob's Job replaces them.)
  EXPECT_TRUE(client_->Get(k.resource.Namespace(kNamespace), "owner").ok());
  EXPECT_EQ(WorkloadsOf(kNamespace, "owner").size(), 1u);

  ASSERT_TRUE(client_->Delete(k.resource.Namespace(kNamespace), "owner").ok());
  ASSERT_TRUE(WaitFor([&] { return Owned().empty(); })) << "left behind: " << ::testing::PrintToString(Owned());
  EXPECT_FALSE(client_->Get(k.resource.Namespace(kNamespace), "owner").ok());
}

INSTANTIATE_TEST_SUITE_P(Kinds, GarbageCollectionTest,
                         ::testing::Values(AllKinds()[3] /* TrainJob */, AllKinds()[4] /* PyTorchJob */),
                         [](const ::testing::TestParamInfo<JobKind>& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// MPI (kubeflow/trainer pkg/runtime/framework/plugins/mpi/mpi.go): a launcher + node TrainJob.

constexpr char kMpiRuntime[] = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: mpi-shell}
spec:
  mlPolicy:
    numNodes: 1
    mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /home/mpiuser/.ssh}
  template:
    spec:
      successPolicy: {operator: All, targetReplicatedJobs: [launcher]}
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                terminationGracePeriodSeconds: 5
                containers:
                - name: node
                  image: mpi-node
                  command: [/bin/sh, -c, 'trap "exit 143" TERM; while true; do sleep 0.1; done']
                  resources: {requests: {cpu: 500m}}
      - name: launcher
        dependsOn: [{name: node, status: Ready}]
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                terminationGracePeriodSeconds: 5
                containers:
                - name: node
                  image: mpi-launcher
                  command: [/bin/sh, -c, 'echo "hosts from $OMPI_MCA_orte_default_hostfile:"; cat "$OMPI_MCA_orte_default_hostfile"; trap "exit 143" TERM; while true; do sleep 0.1; done']
                  resources: {requests: {cpu: 500m}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: mpi
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: user-queue, kueue.x-k8s.io/priority-class: low}
spec:
  runtimeRef: {name: mpi-shell}
  trainer: {numNodes: 2}
)";

std::map<std::string, api::Object> ByName(const api::Object& list) {
  std::map<std::string, api::Object> out;
  for (const api::Object& o : list) out[o.value("name", "")] = o;
  return out;
}

// Queued behind a job holding the whole quota, the MPI TrainJob has a
// Workload (podSets node 2, launcher 1) and no pod; its JobSet has the
// launcher and node jobs with the hostfile ConfigMap mounted at /etc/mpi and
// the OpenMPI variables, as Trainer's MPI plugin builds them. Once the quota
// is free it is admitted: the two node pods, then (dependsOn node Ready) the
// launcher pod run, and reads the hostfile where the volume put it.
TEST_F(JobLifecycleTest, MpiTrainJobHasLauncherNodesAndHostfileAndStartsAfterAdmission) {
  // The launcher mounts its hostfile ConfigMap at /etc/mpi: only a sandboxed node mounts volumes.
  if (std::string why = SandboxNode(); !why.empty()) GTEST_SKIP() << "pods cannot be sandboxed here: " << why;
  Apply(kQueues);
  Apply(BatchJob(true, "blocker", "high", 1, "2", kLoopUntilTerm));
  ASSERT_TRUE(WaitFor([&] { return RunningPods("batch.kubernetes.io/job-name", "blocker").size() == 1; }));
  Apply(kMpiRuntime);
  const std::string label = "jobset.sigs.k8s.io/jobset-name";
  ASSERT_TRUE(WaitFor([&] { return WorkloadsOf(kNamespace, "mpi").size() == 1 && Get(kJobSets, kNamespace, "mpi").is_object(); }));

  api::Object wl = WorkloadsOf(kNamespace, "mpi")[0];
  ASSERT_EQ(wl["spec"]["podSets"].size(), 2u) << wl.dump(2);
  EXPECT_EQ(wl["spec"]["podSets"][0]["name"], "node");
  EXPECT_EQ(wl["spec"]["podSets"][0]["count"], 2);
  EXPECT_EQ(wl["spec"]["podSets"][1]["name"], "launcher");
  EXPECT_EQ(wl["spec"]["podSets"][1]["count"], 1);
  EXPECT_FALSE(HasCondition(wl, "Admitted"));
  EXPECT_TRUE(List(kPods, kNamespace, label + "=mpi").empty());

  api::Object tj = Get(kTrainJobs, kNamespace, "mpi");
  api::Object js = Get(kJobSets, kNamespace, "mpi");
  EXPECT_EQ(js["spec"]["suspend"], true);
  EXPECT_EQ(js["metadata"]["ownerReferences"][0]["uid"], api::Uid(tj));
  auto rjobs = ByName(js["spec"]["replicatedJobs"]);
  ASSERT_EQ(rjobs.size(), 2u);
  EXPECT_EQ(rjobs["node"]["template"]["spec"]["parallelism"], 2);
  EXPECT_EQ(rjobs["node"]["template"]["spec"]["completions"], 2);
  EXPECT_EQ(rjobs["launcher"]["template"]["spec"]["parallelism"], 1);
  const api::Object& launcher_pod = rjobs["launcher"]["template"]["spec"]["template"]["spec"];
  EXPECT_EQ(ByName(launcher_pod["volumes"])["mpi-hostfile"],
            api::Object::parse(R"({"name": "mpi-hostfile", "configMap": {"name": "mpi-mpi-hostfile",
                "items": [{"key": "hostfile", "path": "hostfile", "mode": 292}]}})"));
  const api::Object launcher = ByName(launcher_pod["containers"])["node"];
  EXPECT_EQ(ByName(launcher["volumeMounts"])["mpi-hostfile"]["mountPath"], "/etc/mpi");
  std::map<std::string, std::string> env;
  for (const api::Object& e : launcher["env"]) env[e["name"]] = e.value("value", "");
  EXPECT_EQ(env, (std::map<std::string, std::string>{{"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"},
                                                     {"OMPI_MCA_orte_keep_fqdn_hostnames", "true"},
                                                     {"OMPI_MCA_orte_set_default_slots", "1"},
                                                     {"OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"}}));
  api::Object cm = Get(kConfigMaps, kNamespace, "mpi-mpi-hostfile");
  EXPECT_EQ(cm["data"]["hostfile"], "mpi-node-0-0.mpi slots=1\nmpi-node-0-1.mpi slots=1\n");
  EXPECT_EQ(cm["metadata"]["ownerReferences"][0]["uid"], api::Uid(tj));

  // As kubectl deletes (propagationPolicy Background; the API's default for a
  // batch/v1 Job is to orphan its pods).
  client::DeleteOptions background;
  background.propagation_policy = client::PropagationPolicy::kBackground;
  ASSERT_TRUE(client_->Delete(kJobs.Namespace(kNamespace), "blocker", background).ok());
  ASSERT_TRUE(WaitFor([&] { return RunningPods(label, "mpi").size() == 3; }))
      << WorkloadsOf(kNamespace, "mpi")[0].dump(2);
  EXPECT_TRUE(HasCondition(WorkloadsOf(kNamespace, "mpi")[0], "Admitted"));
  log_->StopWhenCaughtUp();
  std::map<std::string, size_t> added;  // replicatedjob-name → last ADDED of its pods
  for (const auto& [uid, h] : Histories(log_->entries(), label)) {
    const std::string rjob = Label(h.first, "jobset.sigs.k8s.io/replicatedjob-name");
    added[rjob] = std::max(added[rjob], h.added);
  }
  EXPECT_LT(added["node"], added["launcher"]) << "the launcher waits for the node pods (dependsOn Ready)";
  for (const api::Object& p : RunningPods(label, "mpi")) {
    if (Label(p, "jobset.sigs.k8s.io/replicatedjob-name") != "launcher") continue;
    EXPECT_EQ(p["spec"]["hostname"], "mpi-launcher-0-0");
    EXPECT_TRUE(WaitFor([&] {
      return PodLog(kNamespace, api::Name(p)) ==
             "hosts from /etc/mpi/hostfile:\nmpi-node-0-0.mpi slots=1\nmpi-node-0-1.mpi slots=1\n";
    })) << PodLog(kNamespace, api::Name(p));
  }
}

}  // namespace
}  // namespace berth::integration
