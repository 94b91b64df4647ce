// ControllerManager: every controller of berth's control plane in one
// component, as kube-controller-manager + kueue-controller-manager +
// the Trainer/JobSet/Training-Operator managers + kube-scheduler are in a
// cluster. It owns one SharedInformerFactory (one LIST+WATCH per resource,
// shared by all controllers) and runs:
//   - KueueController (controllers/kueue): Workload, ClusterQueue, LocalQueue,
//     ResourceFlavor reconcilers and the admission scheduler, with the job
//     integrations batch/v1 Job, TrainJob, JobSet and PyTorchJob that
//     options.kueue_config.frameworks lists (all four by default; Kueue's
//     manageJobsWithoutQueueName=false unless configured: only jobs with the
//     queue-name label);
//   - the job-kind reconcilers, each a ReconcileLoop (reconcile_loop.h) with
//     options.workers workers:
//       Job         ← jobs, pods (controller owner Job)
//       JobSet      ← jobsets, jobs (controller owner JobSet)
//       TrainJob    ← trainjobs, jobsets (controller owner TrainJob),
//                     cluster/namespaced training runtimes (every TrainJob
//                     referencing the changed runtime by name)
//       PyTorchJob  ← pytorchjobs, pods (controller owner PyTorchJob)
//       TTL after finished ← jobs (finished Jobs deleted after their
//                     spec.ttlSecondsAfterFinished)
//     and a resync every options.resync_period;
//   - SchedulerController (controllers/scheduler): pod placement;
//   - NodeLifecycleController (controllers/nodelifecycle): nodes whose agent
//     stopped renewing its Lease become unreachable and their pods fail;
//     pods bound to a node that no longer exists are collected;
//   - TerminatedPodGC (controllers/podgc): every 20 s, the oldest terminal
//     pods beyond options.terminated_pod_gc_threshold are deleted;
//   - ClusterRoleAggregationController (controllers/rbac): aggregated
//     ClusterRoles (admin, edit, view, ...) get the rules of the roles their
//     selectors match;
//   - ServiceAccountsController (controllers/serviceaccount): a `default`
//     ServiceAccount in every namespace, re-created when deleted;
//   - NamespaceSecurityController (controllers/namespacesecurity): a block of
//     uids/gids per namespace (options.namespace_security).
// Everything goes through client::Client, so the manager runs unchanged
// against the in-process API server or a remote one over HTTP.
//
// Time: the injected Clock. Thread-safety: Start/Stop from one controlling
// thread.
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/informer.h"
#include "controllers/common/event_recorder.h"
#include "controllers/common/reconcile_loop.h"
#include "controllers/kueue/configuration.h"
#include "controllers/nodelifecycle/node_lifecycle_controller.h"
#include "controllers/podgc/terminated_pod_gc.h"
#include "controllers/rbac/cluster_role_aggregation.h"
#include "controllers/namespacesecurity/namespace_security_controller.h"
#include "controllers/serviceaccount/serviceaccounts_controller.h"
#include "core/clock.h"

namespace prometheus {
class Registry;
}

namespace berth::controllers {

namespace kueue {
class KueueController;
}
namespace scheduler {
class SchedulerController;
}
namespace jobs::batchjob {
class JobController;
class TtlAfterFinishedController;
}  // namespace jobs::batchjob
namespace jobs::jobset {
class JobSetController;
}
namespace jobs::trainjob {
class TrainJobController;
}
namespace jobs::pytorchjob {
class PyTorchJobController;
}

struct ControllerManagerOptions {
  int workers = 2;  // per job-kind reconciler
  // Every job-kind reconciler's resync (ReconcileLoop): every Job, JobSet,
  // TrainJob and PyTorchJob the informers hold, finished ones included, is
  // reconciled again each period. 10 h as controller-runtime's SyncPeriod
  // (the JobSet, Trainer and Kueue managers; kube-controller-manager's
  // --min-resync-period is 12 h): the watches deliver every change, and a
  // short period costs CPU in proportion to every job ever kept.
  Duration resync_period = std::chrono::hours(10);
  bool run_kueue = true;
  bool run_job_controllers = true;
  bool run_scheduler = true;
  bool run_node_lifecycle = true;
  // kube-controller-manager --terminated-pod-gc-threshold (podgc.h); <= 0: off.
  int64_t terminated_pod_gc_threshold = podgc::kDefaultTerminatedPodThreshold;
  bool run_rbac_aggregation = true;
  bool run_service_accounts = true;
  bool run_namespace_security = true;
  // The range and block size of the namespaces' ids, and the former
  // pod-users.json table to seed (`berth server --pod-uid-range`).
  namespacesecurity::NamespaceSecurityOptions namespace_security;
  nodelifecycle::NodeLifecycleOptions node_lifecycle;
  client::InformerOptions informer;
  // Kueue's Configuration (`berth server --config`): waitForPodsReady,
  // manageJobsWithoutQueueName, and integrations.frameworks — only the listed
  // job kinds get a Kueue job reconciler (the default: all four).
  kueue::KueueConfiguration kueue_config;
  // KueueControllerOptions::estimate_period (estimated start times; zero: off).
  Duration estimate_period{};
  // When set, Kueue's metrics (kueue/metrics.h) and kube-scheduler's
  // (scheduler/scheduler_metrics.h) are registered and recorded there.
  std::shared_ptr<prometheus::Registry> metrics_registry;
};

class ControllerManager {
 public:
  ControllerManager(client::Client& client, Clock& clock, ControllerManagerOptions options = {});
  ~ControllerManager();  // Stop()
  ControllerManager(const ControllerManager&) = delete;
  ControllerManager& operator=(const ControllerManager&) = delete;

  // Starts the informers and returns. Every controller starts once every informer has
  // synced (its first LIST is in the cache and delivered), as controller-runtime's
  // manager waits for its caches before it starts a controller: a controller that
  // acted on a partial cache would take a running job whose Workload is not listed yet
  // for one without a Workload and suspend it, or a pod whose Node is not listed yet
  // for an orphan and collect it. Events that arrive meanwhile are queued, not lost.
  // An informer whose LIST keeps failing holds every controller back; the wait is
  // logged every 10 s with the resources still unsynced.
  void Start();
  // Waits (real time) until every informer has synced.
  bool WaitForCacheSync(Duration timeout);
  // Stops the controllers (or the wait for the caches), then the informers. Idempotent.
  void Stop();

  // Tests: what the periodic resync does, now — every controller's work
  // queue gets the key of every object its informers hold — and then waits
  // (real time, up to `timeout`) until no key is queued or being reconciled.
  // False on timeout. The scheduler's cycle is not part of it.
  bool ResyncAndWaitIdle(std::chrono::milliseconds timeout);

  // The Kueue controller (what Kueue's visibility API reads); nullptr when
  // options.run_kueue is false. Lives as long as the ControllerManager.
  kueue::KueueController* kueue() { return kueue_.get(); }

 private:
  client::Client& client_;
  Clock& clock_;
  const ControllerManagerOptions options_;
  client::SharedInformerFactory factory_;
  EventRecorder recorder_;
  std::unique_ptr<kueue::KueueController> kueue_;
  std::unique_ptr<scheduler::SchedulerController> scheduler_;
  std::unique_ptr<jobs::batchjob::JobController> jobs_;
  std::unique_ptr<jobs::batchjob::TtlAfterFinishedController> job_ttl_;
  std::unique_ptr<jobs::jobset::JobSetController> jobsets_;
  std::unique_ptr<jobs::trainjob::TrainJobController> trainjobs_;
  std::unique_ptr<jobs::pytorchjob::PyTorchJobController> pytorchjobs_;
  std::unique_ptr<nodelifecycle::NodeLifecycleController> node_lifecycle_;
  std::unique_ptr<podgc::TerminatedPodGC> terminated_pod_gc_;
  std::unique_ptr<rbac::ClusterRoleAggregationController> role_aggregation_;
  std::unique_ptr<serviceaccount::ServiceAccountsController> service_accounts_;
  std::unique_ptr<namespacesecurity::NamespaceSecurityController> namespace_security_;
  ReconcileLoop* node_loop_ = nullptr;
  ReconcileLoop* ttl_loop_ = nullptr;
  ReconcileLoop* pod_gc_loop_ = nullptr;
  std::vector<std::unique_ptr<ReconcileLoop>> loops_;
  bool started_ = false;
  bool stopped_ = false;
  // Waits for the caches, then starts the controllers (Start); ends early on Stop.
  std::thread starter_;
  std::atomic<bool> stopping_{false};
};

}  // namespace berth::controllers
