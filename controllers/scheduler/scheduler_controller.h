// SchedulerController: kube-scheduler's scheduling loop over the placement
// engine (placement/scheduler.h), fed by shared informers on pods and nodes
// and writing only through client::Client (kube-scheduler's pkg/scheduler/schedule_one.go;
// issue 6; the placement layer of docs/architecture.md "admission/ and placement/").
//
// Which pods: unbound (spec.nodeName empty), not terminating, not terminal,
// spec.schedulerName == options.scheduler_name ("default-scheduler").
//
// One cycle (ScheduleOnce):
//   1. Snapshot from the informer caches: every node; every bound pod that is
//      not Succeeded/Failed, terminating pods included (they hold their
//      requests until their object is gone — docs/architecture.md departure 3); every
//      pending pod with status.nominatedNodeName as a nomination. Writes this
//      controller made that the caches do not show yet are overlaid
//      ("assumed", as the scheduler cache assumes a binding): pods it bound,
//      nominations it set or cleared, victims it deleted (counted as
//      terminating by preemption until their object is gone).
//   2. The active pods, ordered as kube-scheduler's PrioritySort: higher
//      spec.priority first, then earlier metadata.creationTimestamp, then
//      namespace/name (a unique tie-break).
//   3. For each: placement::Schedule on spec.priority and
//      spec.preemptionPolicy as the Priority admission plugin wrote them at
//      pod creation (api/priority_admission.h; the class is never resolved
//      again here), and the decision applied:
//      - bound: Update spec.nodeName through the main resource. Kubernetes
//        binds with the pods/binding subresource (client::Client has no
//        subresource verb; berth's API server accepts spec.nodeName on an
//        unbound pod). Then UpdateStatus: PodScheduled=True, nominatedNodeName
//        removed; Event Normal "Scheduled" "Successfully assigned <ns>/<pod>
//        to <node>". Then StaleNominations (kubernetes/kubernetes#106780) are cleared.
//      - not bound: UpdateStatus PodScheduled=False reason Unschedulable with
//        the FitError message, status.nominatedNodeName as the decision says
//        (set by a preemption plan, removed when preemption found no
//        candidate); Event Warning "FailedScheduling" with the message, only
//        when the message differs from the pod's current PodScheduled
//        message (berth's choice: upstream emits one per attempt and lets
//        the correlator aggregate them).
//      - preemption plan: for each victim not already terminating,
//        UpdateStatus DisruptionTarget=True reason PreemptionByScheduler
//        "<scheduler>: preempting to accommodate a higher priority pod",
//        Delete with the pod's own grace period, Event Normal "Preempted"
//        "Preempted by pod <uid> on node <node>" on the victim; the listed
//        lower-priority nominations to that node are removed.
//   4. Unbound pods go to the unschedulable set with a backoff (1 s doubling
//      to 10 s per failed attempt, kube-scheduler's podInitialBackoff /
//      podMaxBackoff). They are retried, once their backoff has expired,
//      when the cluster changed — any node resourceVersion,
//      the set of bound pods with their nodes and terminating flags (a pod
//      deleted, bound, terminal or starting to terminate) — or the pod's own
//      spec or labels changed, and after 5 minutes without a change anyway
//      (podMaxInUnschedulablePodsDuration). kube-scheduler moves pods on
//      informer events (QueueingHints); berth compares the state at each
//      cycle (a fingerprint of the inputs above), which is level-triggered
//      and cannot miss an event that arrives while a cycle runs. A failed
//      write logs and retries the pod after its backoff.
//
// Running: Start() runs one thread that performs a cycle when something
// changed or a backoff expired (time from the injected Clock). For tests and
// benchmarks, ScheduleOnce() runs a cycle on the calling thread.
//
// Thread-safety: public methods may be called from any thread; one mutex
// serialises cycles and the queue state.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "controllers/common/event_recorder.h"
#include "controllers/scheduler/scheduler_metrics.h"
#include "core/clock.h"
#include "placement/scheduler.h"

namespace berth::controllers::scheduler {

struct SchedulerControllerOptions {
  std::string scheduler_name = "default-scheduler";  // pods' spec.schedulerName; Event source
  placement::PlacementOptions placement;
  Duration initial_backoff = std::chrono::seconds(1);
  Duration max_backoff = std::chrono::seconds(10);
  Duration max_unschedulable_duration = std::chrono::minutes(5);
  // kube-scheduler's Prometheus metrics (scheduler_metrics.h); null: none.
  std::shared_ptr<SchedulerMetrics> metrics;
};

// What a cycle did.
struct CycleSummary {
  int attempted = 0;
  int bound = 0;
  int unschedulable = 0;
  int preempted = 0;  // victims deleted
  int nominations_cleared = 0;
};

class SchedulerController {
 public:
  SchedulerController(client::Client& client, client::SharedInformerFactory& factory, Clock& clock,
                      SchedulerControllerOptions options = {});
  ~SchedulerController();  // Stop()

  // pods, nodes (to start them / wait for sync).
  std::vector<client::Informer*> informers();

  void Start();
  void Stop();

  // Marks every unbound pod in the cache active (ignoring backoff), as a
  // resync; for tests and benchmarks.
  void ActivateAll();
  // One scheduling cycle on the calling thread.
  CycleSummary ScheduleOnce();

 private:
  struct QueuedPod {
    int attempts = 0;
    Time backoff_until{};
    Time unschedulable_since{};
    bool unschedulable = false;  // waiting for a change
    size_t cluster_hash = 0;     // cluster state when last examined
    size_t pod_hash = 0;         // the pod's spec and labels when last examined
    Time queued_at{};            // first seen by a cycle (scheduler_pod_scheduling_sli_duration_seconds)
  };

  void RegisterHandlers();
  void OnPod(const client::ObjectPtr& obj, bool deleted);
  void Wake();
  bool Schedulable(const api::Object& pod) const;
  Duration Backoff(int attempts) const;
  // The cached pods that have not ended (kLivePodsIndex), in key order.
  std::vector<client::ObjectPtr> LivePods() const;

  // The pod informer's index of pods not Succeeded or Failed (value "true").
  static constexpr char kLivePodsIndex[] = "scheduler:live";

  client::Client& client_;
  Clock& clock_;
  const SchedulerControllerOptions options_;
  client::Informer& pods_;
  client::Informer& nodes_;
  EventRecorder recorder_;

  std::mutex mu_;
  std::map<std::string, QueuedPod> queue_;  // pod key -> queue state
  // Assumed writes not yet seen in the caches (see file comment, step 1).
  std::map<std::string, std::string> assumed_bound_;  // pod key -> node
  std::map<std::string, std::string> assumed_nomination_;  // pod key -> node ("" = cleared)
  std::set<std::string> deleted_victims_;  // pod uids

  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool wake_ = true;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace berth::controllers::scheduler
