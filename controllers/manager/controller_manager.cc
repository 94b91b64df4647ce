#include "controllers/manager/controller_manager.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include <fmt/ranges.h>

#include "client/indexer.h"
#include "core/logging.h"
#include "controllers/jobs/batchjob/batchjob_integration.h"
#include "controllers/jobs/batchjob/job_controller.h"
#include "controllers/jobs/batchjob/ttl_after_finished.h"
#include "controllers/jobs/jobset/jobset_controller.h"
#include "controllers/jobs/jobset/jobset_integration.h"
#include "controllers/jobs/pytorchjob/pytorchjob_controller.h"
#include "controllers/jobs/pytorchjob/pytorchjob_integration.h"
#include "controllers/jobs/trainjob/trainjob_controller.h"
#include "controllers/jobs/trainjob/trainjob_integration.h"
#include "controllers/kueue/kueue_controller.h"
#include "controllers/nodelifecycle/node_lifecycle_controller.h"
#include "controllers/scheduler/scheduler_controller.h"

namespace berth::controllers {
namespace {

const client::GroupVersionResource kClusterTrainingRuntimes{"trainer.kubeflow.org", "v1alpha1",
                                                            "clustertrainingruntimes"};
const client::GroupVersionResource kTrainingRuntimes{"trainer.kubeflow.org", "v1alpha1", "trainingruntimes"};

// Every TrainJob in the cache whose spec.runtimeRef names `runtime` (of that
// kind; a namespaced TrainingRuntime only from its own namespace).
KeyFunc TrainJobsReferencing(client::Informer& trainjobs, std::string kind) {
  return [&trainjobs, kind = std::move(kind)](const api::Object& runtime) {
    std::vector<std::string> keys;
    const bool namespaced = kind == "TrainingRuntime";
    for (const client::ObjectPtr& tj : trainjobs.GetIndexer().List()) {
      const api::Object ref = tj->value("spec", api::Object::object()).value("runtimeRef", api::Object::object());
      const std::string ref_kind = ref.value("kind", "ClusterTrainingRuntime");
      if (ref_kind != kind || ref.value("name", "") != api::Name(runtime)) continue;
      if (namespaced && api::Namespace(*tj) != api::Namespace(runtime)) continue;
      keys.push_back(client::MetaNamespaceKey(*tj));
    }
    return keys;
  };
}

}  // namespace

ControllerManager::ControllerManager(client::Client& client, Clock& clock, ControllerManagerOptions options)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      factory_(client, clock, options_.informer),
      recorder_(client, clock, "berth-controller-manager") {
  if (options_.run_kueue) {
    kueue::KueueControllerOptions kueue_options;
    if (options_.metrics_registry)
      kueue_options.metrics = std::make_shared<kueue::KueueMetrics>(*options_.metrics_registry);
    kueue_options.config = options_.kueue_config;
    kueue_options.estimate_period = options_.estimate_period;
    kueue_ = std::make_unique<kueue::KueueController>(client_, factory_, clock_, std::move(kueue_options));
    // integrations.frameworks: a kind not listed is left alone by the queue.
    std::vector<std::unique_ptr<kueue::JobIntegration>> integrations;
    integrations.push_back(std::make_unique<jobs::batchjob::BatchJobIntegration>());
    integrations.push_back(std::make_unique<jobs::trainjob::TrainJobIntegration>(client_));
    integrations.push_back(std::make_unique<jobs::pytorchjob::PyTorchJobIntegration>(client_));
    integrations.push_back(std::make_unique<jobs::jobset::JobSetIntegration>(client_));
    for (auto& integration : integrations) {
      if (options_.kueue_config.Manages(integration->Name())) kueue_->AddJobIntegration(std::move(integration));
    }
  }
  if (options_.run_scheduler) {
    scheduler::SchedulerControllerOptions scheduler_options;
    if (options_.metrics_registry) {
      scheduler_options.metrics =
          std::make_shared<scheduler::SchedulerMetrics>(*options_.metrics_registry, scheduler_options.scheduler_name);
    }
    scheduler_ =
        std::make_unique<scheduler::SchedulerController>(client_, factory_, clock_, std::move(scheduler_options));
  }
  if (options_.run_node_lifecycle) {
    client::Informer& nodes = factory_.ForResource(client::GroupVersionResource{"", "v1", "nodes"});
    client::Informer& leases = factory_.ForResource(
        client::GroupVersionResource{"coordination.k8s.io", "v1", "leases"}.Namespace("kube-node-lease"));
    client::Informer& pods = factory_.ForResource(client::GroupVersionResource{"", "v1", "pods"});
    node_lifecycle_ = std::make_unique<nodelifecycle::NodeLifecycleController>(client_, nodes, leases, pods, clock_,
                                                                               recorder_, options_.node_lifecycle);
    loops_.push_back(std::make_unique<ReconcileLoop>("node-lifecycle", clock_, [this](const std::string& node) {
      auto verdict = node_lifecycle_->Reconcile(node);
      if (!verdict.ok()) return verdict.status();
      // Look again when the heartbeat (or a pod's toleration) runs out.
      if (verdict.value().recheck_after > Duration::zero()) {
        node_loop_->queue().AddAfter(node, verdict.value().recheck_after);
      }
      return Status::Ok();
    }));
    node_loop_ = loops_.back().get();
    node_loop_->Watch(nodes, ObjectKey());
    node_loop_->Watch(leases, [](const api::Object& lease) { return std::vector<std::string>{api::Name(lease)}; });
    // A pod bound to a node name with no Node (the orphan collection), or being deleted on a
    // node out of service (pod GC's gcTerminating).
    node_loop_->Watch(pods, [nodes = &nodes](const api::Object& pod) -> std::vector<std::string> {
      std::string node = pod.value("spec", api::Object::object()).value("nodeName", "");
      if (node.empty()) return {};
      client::ObjectPtr n = nodes->GetIndexer().Get("", node);
      if (n && !(api::BeingDeleted(pod) && nodelifecycle::HasTaint(*n, nodelifecycle::kOutOfServiceTaint))) return {};
      return {std::move(node)};
    });
  }
  if (options_.run_rbac_aggregation) {
    client::Informer& cluster_roles = factory_.ForResource(rbac::kClusterRoles);
    role_aggregation_ = std::make_unique<rbac::ClusterRoleAggregationController>(client_, cluster_roles);
    loops_.push_back(std::make_unique<ReconcileLoop>(
        "clusterrole-aggregation", clock_,
        [this](const std::string& name) { return role_aggregation_->Reconcile(name); }));
    // Any ClusterRole change may change every aggregation (upstream's enqueueAll).
    loops_.back()->Watch(cluster_roles,
                         [this](const api::Object&) { return role_aggregation_->AggregatedRoleNames(); });
  }
  if (options_.run_service_accounts) {
    client::Informer& namespaces = factory_.ForResource(serviceaccount::kNamespaces);
    client::Informer& sas = factory_.ForResource(serviceaccount::kServiceAccounts);
    service_accounts_ = std::make_unique<serviceaccount::ServiceAccountsController>(client_, namespaces, sas);
    loops_.push_back(std::make_unique<ReconcileLoop>(
        "serviceaccount", clock_, [this](const std::string& ns) { return service_accounts_->Reconcile(ns); }));
    loops_.back()->Watch(namespaces, ObjectKey());
    loops_.back()->Watch(sas, [](const api::Object& sa) { return std::vector<std::string>{api::Namespace(sa)}; });
  }
  if (options_.run_namespace_security) {
    client::Informer& namespaces = factory_.ForResource(namespacesecurity::kNamespaces);
    namespace_security_ = std::make_unique<namespacesecurity::NamespaceSecurityController>(
        client_, namespaces, options_.namespace_security);
    loops_.push_back(std::make_unique<ReconcileLoop>(
        "namespace-security-allocation", clock_,
        [this](const std::string& ns) { return namespace_security_->Reconcile(ns); }));
    loops_.back()->Watch(namespaces, ObjectKey());
  }
  if (options_.terminated_pod_gc_threshold > 0) {
    client::Informer& pods = factory_.ForResource(client::GroupVersionResource{"", "v1", "pods"});
    terminated_pod_gc_ =
        std::make_unique<podgc::TerminatedPodGC>(client_, pods, options_.terminated_pod_gc_threshold);
    // One key, looked at every kCheckPeriod of Clock time (upstream's gcCheckPeriod).
    static constexpr char kKey[] = "terminated";
    loops_.push_back(std::make_unique<ReconcileLoop>("pod-garbage-collector", clock_, [this](const std::string& key) {
      StatusOr<int64_t> deleted = terminated_pod_gc_->Collect();
      pod_gc_loop_->queue().AddAfter(key, podgc::kCheckPeriod);
      return deleted.status();
    }));
    pod_gc_loop_ = loops_.back().get();
    pod_gc_loop_->Add(kKey);
  }
  if (options_.run_job_controllers) {
    const ReconcileLoopOptions loop_options{options_.resync_period};
    auto add_loop = [&](std::string name, ReconcileFunc reconcile) -> ReconcileLoop& {
      loops_.push_back(std::make_unique<ReconcileLoop>(std::move(name), clock_, std::move(reconcile), loop_options));
      return *loops_.back();
    };
    client::Informer& pods = factory_.ForResource(jobs::kPodsResource);
    client::Informer& batch_jobs = factory_.ForResource(jobs::kJobsResource);
    client::Informer& jobsets = factory_.ForResource(jobs::jobset::kJobSetsResource);
    client::Informer& trainjobs = factory_.ForResource(jobs::trainjob::kTrainJobsResource);
    client::Informer& pytorchjobs = factory_.ForResource(jobs::pytorchjob::kPyTorchJobsResource);

    jobs_ = std::make_unique<jobs::batchjob::JobController>(client_, clock_);
    ReconcileLoop& job_loop = add_loop("job-controller", [this](const std::string& k) { return jobs_->Reconcile(k); });
    jobs_->SetRequeueAfter([loop = &job_loop](const std::string& k, Duration after) {
      loop->queue().AddAfter(k, after);  // an active deadline
    });
    job_loop.Watch(batch_jobs, ObjectKey());
    job_loop.Watch(pods, ControllerOwnerKey("batch/v1", "Job"));

    job_ttl_ = std::make_unique<jobs::batchjob::TtlAfterFinishedController>(client_, batch_jobs, clock_);
    ttl_loop_ = &add_loop("ttl-after-finished", [this](const std::string& k) {
      StatusOr<Duration> again = job_ttl_->Reconcile(k);
      if (!again.ok()) return again.status();
      if (*again > Duration::zero()) ttl_loop_->queue().AddAfter(k, *again);  // when it expires
      return Status::Ok();
    });
    ttl_loop_->Watch(batch_jobs, jobs::batchjob::TtlAfterFinishedController::Keys());

    jobsets_ = std::make_unique<jobs::jobset::JobSetController>(client_, clock_, recorder_);
    ReconcileLoop& jobset_loop =
        add_loop("jobset-controller", [this](const std::string& k) { return jobsets_->Reconcile(k); });
    jobset_loop.Watch(jobsets, ObjectKey());
    jobset_loop.Watch(batch_jobs, ControllerOwnerKey("jobset.x-k8s.io/v1alpha2", "JobSet"));

    trainjobs_ = std::make_unique<jobs::trainjob::TrainJobController>(client_, clock_, recorder_);
    ReconcileLoop& trainjob_loop =
        add_loop("trainjob-controller", [this](const std::string& k) { return trainjobs_->Reconcile(k); });
    trainjob_loop.Watch(trainjobs, ObjectKey());
    trainjobs_->SetRequeueAfter([loop = &trainjob_loop](const std::string& k, Duration after) {
      loop->queue().AddAfter(k, after);  // an active deadline
    });
    trainjob_loop.Watch(jobsets, ControllerOwnerKey("trainer.kubeflow.org/v1alpha1", "TrainJob"));
    trainjob_loop.Watch(factory_.ForResource(kClusterTrainingRuntimes),
                        TrainJobsReferencing(trainjobs, "ClusterTrainingRuntime"));
    trainjob_loop.Watch(factory_.ForResource(kTrainingRuntimes), TrainJobsReferencing(trainjobs, "TrainingRuntime"));

    pytorchjobs_ = std::make_unique<jobs::pytorchjob::PyTorchJobController>(client_, clock_);
    ReconcileLoop& pytorch_loop =
        add_loop("pytorchjob-controller", [this](const std::string& k) { return pytorchjobs_->Reconcile(k); });
    pytorch_loop.Watch(pytorchjobs, ObjectKey());
    pytorch_loop.Watch(pods, ControllerOwnerKey("kubeflow.org/v1", "PyTorchJob"));
  }
}

ControllerManager::~ControllerManager() { Stop(); }

bool ControllerManager::ResyncAndWaitIdle(std::chrono::milliseconds timeout) {
  for (auto& loop : loops_) loop->EnqueueAll();
  if (kueue_) kueue_->EnqueueAll();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const bool idle = std::all_of(loops_.begin(), loops_.end(), [](const auto& l) { return l->Idle(); }) &&
                      (!kueue_ || kueue_->Idle());
    if (idle) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ControllerManager::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  factory_.Start();
  starter_ = std::thread([this] {
    const auto began = std::chrono::steady_clock::now();
    auto logged = began;
    while (!factory_.WaitForCacheSync(std::chrono::milliseconds(100))) {
      if (stopping_) return;
      factory_.Start();  // an informer a controller asked for after Start
      const auto now = std::chrono::steady_clock::now();
      if (now - logged >= std::chrono::seconds(10)) {
        logged = now;
        Logger("controllers")->warn("waiting {}s for the first LIST of: {}",
                  std::chrono::duration_cast<std::chrono::seconds>(now - began).count(),
                  fmt::join(factory_.Unsynced(), ", "));
      }
    }
    if (stopping_) return;
    if (kueue_) kueue_->Start();
    if (scheduler_) scheduler_->Start();
    for (auto& loop : loops_) loop->Start(options_.workers);
  });
}

bool ControllerManager::WaitForCacheSync(Duration timeout) { return factory_.WaitForCacheSync(timeout); }

void ControllerManager::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  if (starter_.joinable()) starter_.join();
  for (auto& loop : loops_) loop->Stop();
  if (scheduler_) scheduler_->Stop();
  if (kueue_) kueue_->Stop();
  factory_.Shutdown();
}

}  // namespace berth::controllers
