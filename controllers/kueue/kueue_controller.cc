#include "controllers/kueue/kueue_controller.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

#include "admission/fair_sharing.h"
#include "admission/scheduler.h"
#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/kueue/decoder.h"
#include "controllers/kueue/queue_status.h"
#include "controllers/kueue/workload_lifecycle.h"
#include "controllers/kueue/workload_status.h"
#include "core/logging.h"
#include "core/this_thread.h"

namespace berth::controllers::kueue {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

std::string Spec(const api::Object& obj, const char* field) {
  auto s = obj.find("spec");
  return s != obj.end() && s->is_object() ? s->value(field, "") : "";
}

std::string AdmittedClusterQueue(const api::Object& wl) {
  auto st = wl.find("status");
  if (st == wl.end() || !st->is_object()) return "";
  auto adm = st->find("admission");
  return adm != st->end() && adm->is_object() ? adm->value("clusterQueue", "") : "";
}

// A ClusterQueue object's Active condition is not False (a new one without
// status counts as active until its reconciler says otherwise).
bool ClusterQueueActive(const api::Object& cq) {
  const api::Object* c = FindCondition(cq, "Active");
  return c == nullptr || c->value("status", "") != "False";
}

std::string QuotaReservedTransition(const api::Object& wl) {
  const api::Object* c = FindCondition(wl, "QuotaReserved");
  return c == nullptr ? "" : c->value("lastTransitionTime", "");
}

}  // namespace

KueueController::KueueController(client::Client& client, client::SharedInformerFactory& factory, Clock& clock,
                                 KueueControllerOptions options)
    : client_(client),
      factory_(factory),
      clock_(clock),
      options_(std::move(options)),
      cache_(factory),
      recorder_(client, clock, options_.component) {
  // The loops that only report (status, Pending messages, estimates) yield
  // the CPU to those on the path to admission when it is saturated.
  const ReconcileLoopOptions kReporting{.lower_priority_by = kReportingNice};
  wl_queue_ = &AddQueue("workload", [this](const std::string& k) { return ReconcileWorkload(k); });
  // A queue's own changes (and resyncs) are reconciled at the process's
  // priority: that reconcile also puts the queue in the QueueManager and
  // requeues after a quota change, on the path to admission. The status
  // batches that Workload events queue run the same reconcile on a reporting
  // loop (both are idempotent; a write from a stale read fails its
  // resourceVersion precondition and is retried).
  cq_queue_ = &AddQueue("clusterqueue", [this](const std::string& k) { return ReconcileClusterQueue(k); });
  lq_queue_ = &AddQueue("localqueue", [this](const std::string& k) { return ReconcileLocalQueue(k); });
  cq_status_queue_ = &AddQueue(
      "cq-status", [this](const std::string& k) { return ReconcileClusterQueue(k); }, kReporting);
  lq_status_queue_ = &AddQueue(
      "lq-status", [this](const std::string& k) { return ReconcileLocalQueue(k); }, kReporting);
  rf_queue_ = &AddQueue("resourceflavor", [this](const std::string& k) { return ReconcileResourceFlavor(k); });
  verdict_queue_ = &AddQueue(
      "pendingverdict", [this](const std::string& k) { return WritePendingVerdict(k); }, kReporting);
  cohort_queue_ = &AddQueue(
      "cohort", [this](const std::string& k) { return ReconcileCohort(k); }, kReporting);
  estimate_queue_ = &AddQueue(
      "estimates", [this](const std::string& key) { return RunEstimatePass(key); }, kReporting);
  pending_queue_ = &AddQueue("pendingworkloads", [this](const std::string&) { return ScanPendingWorkloads(); });
  RegisterHandlers();
}

KueueController::~KueueController() { Stop(); }

ReconcileLoop& KueueController::AddQueue(const std::string& name, ReconcileFunc reconcile,
                                         ReconcileLoopOptions options) {
  work_.push_back(std::make_unique<ReconcileLoop>(name, clock_, std::move(reconcile), options));
  return *work_.back();
}

void KueueController::AddJobIntegration(std::unique_ptr<JobIntegration> integration) {
  auto rec = std::make_unique<JobReconciler>(
      client_, factory_, cache_, recorder_, clock_, std::move(integration),
      JobReconcilerOptions{options_.config.wait_for_pods_ready.enabled, options_.config.manage_jobs_without_queue_name});
  JobReconciler* r = rec.get();
  ReconcileLoop& loop = AddQueue(r->integration().Name(), [r](const std::string& k) { return r->Reconcile(k); });
  loop.Watch(r->jobs(), ObjectKey());
  if (const std::string label = r->integration().PodJobNameLabel(); !label.empty()) {
    loop.Watch(factory_.ForResource(client::GroupVersionResource{"", "v1", "pods"}),
               [label](const api::Object& pod) {
                 const api::Object labels = pod["metadata"].value("labels", api::Object::object());
                 const std::string job = labels.value(label, "");
                 if (job.empty()) return std::vector<std::string>{};
                 return std::vector<std::string>{client::MetaNamespaceKey(api::Namespace(pod), job)};
               });
  }
  jobs_.push_back(std::move(rec));
}

std::vector<client::Informer*> KueueController::informers() {
  std::vector<client::Informer*> out = cache_.informers();
  for (auto& j : jobs_) out.push_back(&j->jobs());
  return out;
}

void KueueController::RequestSchedule() {
  {
    std::lock_guard<std::mutex> lock(sched_mu_);
    schedule_requested_ = true;
  }
  sched_cv_.notify_all();
}

void KueueController::EnqueuePendingWorkloads() { pending_queue_->Add("all"); }

Status KueueController::ScanPendingWorkloads() {
  for (const auto& wl : cache_.workloads().GetIndexer().List()) {
    if (!IsConditionTrue(*wl, "QuotaReserved")) wl_queue_->Add(client::MetaNamespaceKey(*wl));
  }
  return Status::Ok();
}

void KueueController::RegisterHandlers() {
  // Workloads: the workload itself, its queues, its owner job, and capacity
  // release (quota given back → inadmissible workloads may fit).
  auto on_workload = [this](const client::ObjectPtr& old_obj, const client::ObjectPtr& obj, bool deleted) {
    wl_queue_->Add(client::MetaNamespaceKey(*obj));
    // The estimates of its trees are stale only when something the replay
    // reads changed (not a pending message or the estimate written itself).
    const bool estimate_input = deleted || !old_obj || EstimateInputsChanged(*old_obj, *obj);
    // Queue status is batched (kUpdatesBatchPeriod), on the reporting loops.
    for (const std::string& cq : {AdmittedClusterQueue(*obj), old_obj ? AdmittedClusterQueue(*old_obj) : ""}) {
      if (!cq.empty()) cq_status_queue_->queue().AddAfter(cq, kUpdatesBatchPeriod);
      if (!cq.empty() && estimate_input) RequestEstimates(cq);
    }
    const std::string queue = Spec(*obj, "queueName");
    if (!queue.empty()) {
      lq_status_queue_->queue().AddAfter(api::Namespace(*obj) + "/" + queue, kUpdatesBatchPeriod);
      if (client::ObjectPtr lq = cache_.local_queues().GetIndexer().Get(api::Namespace(*obj), queue)) {
        cq_status_queue_->queue().AddAfter(Spec(*lq, "clusterQueue"), kUpdatesBatchPeriod);
        if (estimate_input) RequestEstimates(Spec(*lq, "clusterQueue"));
      }
    }
    if (const api::Object* owner = ControllerOwnerReference(*obj)) {
      for (size_t i = 0; i < jobs_.size(); ++i) {
        const api::GroupVersionKind k = jobs_[i]->integration().Kind();
        if (owner->value("kind", "") == k.kind && owner->value("apiVersion", "") == k.ApiVersion()) {
          for (auto& q : work_) {
            if (q->name() == jobs_[i]->integration().Name()) {
              q->Add(api::Namespace(*obj) + "/" + owner->value("name", ""));
            }
          }
        }
      }
    }
    if (!deleted && IsConditionTrue(*obj, "Finished") && !(old_obj && IsConditionTrue(*old_obj, "Finished"))) {
      // Finished once (or first seen finished, at start): the time since
      // admission feeds kueue_finished_workloads_total and, for a success,
      // the run-time history of its LocalQueue and shape.
      const api::Object* admitted = FindCondition(*obj, "Admitted");
      const api::Object* finished = FindCondition(*obj, "Finished");
      Time from{}, to{};
      if (!AdmittedClusterQueue(*obj).empty() && admitted != nullptr &&
          ParseRfc3339(admitted->value("lastTransitionTime", ""), &from) &&
          ParseRfc3339(finished->value("lastTransitionTime", ""), &to)) {
        if (options_.metrics) {
          options_.metrics->WorkloadFinished(AdmittedClusterQueue(*obj), LocalQueueOf(*obj), PriorityClassName(*obj),
                                             to - from);
        }
        // Conditions carry whole seconds: a sub-second run measures 0 s or 1 s
        // by where it falls between two ticks, so its 0 s samples are kept
        // (the mean of both is the true run time; the 1 s ones alone are not).
        if (finished->value("reason", "") == "Succeeded" && to >= from) {
          const LocalQueueKey lq = LocalQueueOf(*obj);
          history_.Record(lq.ns + "/" + lq.name, RunShape(*obj), to - from);
        }
      }
    }
    if (options_.metrics && !deleted && IsConditionTrue(*obj, "PodsReady") &&
        !(old_obj && IsConditionTrue(*old_obj, "PodsReady")) && IsConditionTrue(*obj, "Admitted")) {
      // Ready (waitForPodsReady): since queued and since admitted, at the condition's time.
      Time ready{}, admitted{};
      if (ParseRfc3339(FindCondition(*obj, "PodsReady")->value("lastTransitionTime", ""), &ready) &&
          ParseRfc3339(FindCondition(*obj, "Admitted")->value("lastTransitionTime", ""), &admitted)) {
        options_.metrics->WorkloadReady(AdmittedClusterQueue(*obj), LocalQueueOf(*obj), PriorityClassName(*obj),
                                        QueuedWaitTime(*obj, ready), ready - admitted);
      }
    }
    const bool held_before = old_obj && IsConditionTrue(*old_obj, "QuotaReserved") &&
                             !IsConditionTrue(*old_obj, "Finished");
    const bool holds_now = !deleted && IsConditionTrue(*obj, "QuotaReserved") && !IsConditionTrue(*obj, "Finished");
    if (held_before && !holds_now) {
      // Quota given back: the inadmissible workloads of its ClusterQueue and of every
      // ClusterQueue in the same cohort tree may fit now (Kueue's
      // Manager.QueueAssociatedInadmissibleWorkloadsAfter, pkg/cache/queue/manager.go).
      // Other trees are unaffected, so a finish costs nothing per unrelated queue.
      const std::string released = AdmittedClusterQueue(*old_obj);
      std::lock_guard<std::mutex> lock(mu_);
      // A ClusterQueue not (or no longer) known here has no cohort to go by: all.
      if (released.empty() || !queues_.HasClusterQueue(released)) {
        queues_.QueueAllInadmissibleWorkloads(clock_.Now());
      } else {
        queues_.QueueInadmissibleWorkloads({released}, clock_.Now());
      }
    }
    RequestSchedule();
  };
  cache_.workloads().AddEventHandler(
      {[on_workload](const client::ObjectPtr& o, bool) { on_workload(nullptr, o, false); },
       [on_workload](const client::ObjectPtr& old_obj, const client::ObjectPtr& o) { on_workload(old_obj, o, false); },
       [on_workload](const client::ObjectPtr& o, bool) { on_workload(o, o, true); }});

  auto on_cq = [this](const client::ObjectPtr& o) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cq_spec_changed_.insert(api::Name(*o));
    }
    cq_queue_->Add(api::Name(*o));
    for (const auto& lq : cache_.local_queues().GetIndexer().List()) lq_queue_->Add(client::MetaNamespaceKey(*lq));
    EnqueuePendingWorkloads();
    RequestSchedule();
    RequestEstimates("");
  };
  auto all_cqs = [this](const client::ObjectPtr& o) {
    if (o && o->contains("spec") && api::Name(*o) != "" && o->value("kind", "") == "ResourceFlavor") {
      rf_queue_->Add(api::Name(*o));
    }
    for (const auto& cq : cache_.cluster_queues().GetIndexer().List()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        cq_spec_changed_.insert(api::Name(*cq));
      }
      cq_queue_->Add(api::Name(*cq));
    }
    RequestSchedule();
    RequestEstimates("");
  };
  auto on_lq = [this](const client::ObjectPtr& o) {
    lq_queue_->Add(client::MetaNamespaceKey(*o));
    EnqueuePendingWorkloads();
    RequestSchedule();
    RequestEstimates("");
  };
  auto on_ns = [this](const client::ObjectPtr&) {
    EnqueuePendingWorkloads();
    RequestSchedule();
  };
  auto on_rf = [this, all_cqs](const client::ObjectPtr& o) {
    rf_queue_->Add(api::Name(*o));
    all_cqs(nullptr);
  };
  auto wire = [](client::Informer& inf, std::function<void(const client::ObjectPtr&)> fn) {
    inf.AddEventHandler({[fn](const client::ObjectPtr& o, bool) { fn(o); },
                         [fn](const client::ObjectPtr&, const client::ObjectPtr& o) { fn(o); },
                         [fn](const client::ObjectPtr& o, bool) { fn(o); }});
  };
  // A ClusterQueue or LocalQueue status write (counts, usage) changes nothing
  // a pending workload depends on: only a spec change, deletion or a flip of
  // the Active condition re-evaluates them (Kueue's workloadQueueHandler
  // reacts to stopPolicy, deletion and admission checks only); otherwise every
  // status write would reconcile every pending workload.
  auto wire_spec_changes = [](client::Informer& inf, std::function<void(const client::ObjectPtr&)> fn) {
    auto changed = [](const client::ObjectPtr& a, const client::ObjectPtr& b) {
      return a->value("spec", api::Object()) != b->value("spec", api::Object()) ||
             api::BeingDeleted(*a) != api::BeingDeleted(*b) || ClusterQueueActive(*a) != ClusterQueueActive(*b);
    };
    inf.AddEventHandler({[fn](const client::ObjectPtr& o, bool) { fn(o); },
                         [fn, changed](const client::ObjectPtr& old_obj, const client::ObjectPtr& o) {
                           if (changed(old_obj, o)) fn(o);
                         },
                         [fn](const client::ObjectPtr& o, bool) { fn(o); }});
  };
  wire_spec_changes(cache_.cluster_queues(), on_cq);
  wire(cache_.cohorts(), [this, all_cqs](const client::ObjectPtr& o) {
    cohort_queue_->Add(api::Name(*o));
    all_cqs(o);
  });
  wire(cache_.flavors(), on_rf);
  wire_spec_changes(cache_.local_queues(), on_lq);
  wire(cache_.namespaces(), on_ns);
}

void KueueController::EnqueueAll() {
  for (const auto& o : cache_.workloads().GetIndexer().List()) wl_queue_->Add(client::MetaNamespaceKey(*o));
  for (const auto& o : cache_.cluster_queues().GetIndexer().List()) cq_queue_->Add(api::Name(*o));
  for (const auto& o : cache_.local_queues().GetIndexer().List()) lq_queue_->Add(client::MetaNamespaceKey(*o));
  for (const auto& o : cache_.flavors().GetIndexer().List()) rf_queue_->Add(api::Name(*o));
  for (const auto& o : cache_.cohorts().GetIndexer().List()) cohort_queue_->Add(api::Name(*o));
  // The job loops watch their job informers: EnqueueAll re-adds every job.
  for (auto& q : work_) q->EnqueueAll();
}

bool KueueController::Idle() const {
  return std::all_of(work_.begin(), work_.end(), [](const auto& q) { return q->Idle(); });
}

KueueController::PerObjectState KueueController::HeldPerObject() {
  PerObjectState held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.queued_workloads = uid_by_key_.size();
  }
  {
    std::lock_guard<std::mutex> lock(verdict_mu_);
    held.pending_verdicts = verdicts_.size();
  }
  held.written_estimates = written_estimates_.size();
  held.assumed_workloads = cache_.AssumedCount();
  for (const auto& job : jobs_) held.job_warnings += job->WarnedJobs();
  return held;
}

int KueueController::ProcessQueued() {
  int processed = 0;
  bool any = true;
  while (any) {
    any = false;
    for (auto& q : work_) {
      if (int n = q->ProcessQueued(); n > 0) {
        processed += n;
        any = true;
      }
    }
  }
  return processed;
}

Status KueueController::WriteWorkloadStatus(const api::Object& wl) {
  auto res = client_.UpdateStatus(kWorkloads.Namespace(api::Namespace(wl)), wl);
  if (res.ok()) cache_.Assume(res.value());
  return res.status();
}

Status KueueController::RemoveFinalizer(const client::ResourceRef& ref, const api::Object& obj) {
  api::Object updated = obj;
  api::Object kept = api::Object::array();
  for (const api::Object& f : updated["metadata"]["finalizers"]) {
    if (f != kResourceInUseFinalizer) kept.push_back(f);
  }
  updated["metadata"]["finalizers"] = kept;
  return client_.Update(ref, updated).status();
}

// ---------------------------------------------------------------------------
// Workload

Status KueueController::ReconcileWorkload(const std::string& key) {
  client::ObjectPtr obj = cache_.GetWorkload(key);
  const Time now = clock_.Now();
  if (!obj) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = uid_by_key_.find(key); it != uid_by_key_.end()) {
      queues_.DeleteWorkload(it->second);
      uid_by_key_.erase(it);
    }
    RequestSchedule();
    return Status::Ok();
  }
  api::Object wl = *obj;
  // objectRetentionPolicies.workloads.afterFinished (Kueue's workload_controller.go): a
  // Workload Finished that long is deleted (its job stays; a finished job gets no new
  // Workload), so finished Workloads do not pile up for months.
  if (const std::optional<Duration> keep = options_.config.workload_retention_after_finished) {
    if (const api::Object* fin = FindCondition(wl, "Finished"); fin != nullptr && fin->value("status", "") == "True") {
      Time since{};
      if (ParseRfc3339(fin->value("lastTransitionTime", ""), &since) && now < since + *keep) {
        wl_queue_->queue().AddAfter(key, since + *keep - now);
      } else {
        client::DeleteOptions options;
        options.preconditions.uid = api::Uid(wl);
        Status deleted = client_.Delete(kWorkloads.Namespace(api::Namespace(wl)), api::Name(wl), options);
        if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
        return Status::Ok();
      }
    }
  }
  // Kueue's time-driven steps first: deactivation, requeue backoff, PodsReady
  // timeout, maximum execution time (workload_lifecycle.h); one write per reconcile.
  if (LifecycleStep step = NextLifecycleStep(wl, options_.config.wait_for_pods_ready, now);
      step.kind != LifecycleStep::Kind::kNone) {
    BERTH_RETURN_IF_ERROR(ApplyLifecycleStep(step));
    if (options_.metrics) {
      for (const EvictionIncrease& e : NewEvictions(wl, step.workload)) {
        for (int i = 0; i < e.count; ++i) {
          options_.metrics->WorkloadEvicted(AdmittedClusterQueue(step.workload), LocalQueueOf(step.workload), e.reason,
                                            e.underlying_cause, PriorityClassName(step.workload));
        }
      }
    }
    return Status::Ok();
  } else if (step.recheck_after > Duration::zero()) {
    wl_queue_->queue().AddAfter(key, step.recheck_after);
  }
  std::string pending_reason, pending_message;
  std::string evict_reason, evict_message;
  bool release = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    admission::Workload w = cache_.Decode(wl);
    w.queue_order_timestamp = QueueOrderTimestamp(wl, options_.config.wait_for_pods_ready);
    if (auto it = uid_by_key_.find(key); it != uid_by_key_.end() && it->second != w.uid) {
      queues_.DeleteWorkload(it->second);  // recreated under the same name
    }
    uid_by_key_[key] = w.uid;
    const std::string queue = Spec(wl, "queueName");
    client::ObjectPtr lq = cache_.local_queues().GetIndexer().Get(w.namespace_name, queue);
    const std::string cq_name = lq ? Spec(*lq, "clusterQueue") : "";
    client::ObjectPtr cq = cq_name.empty() ? nullptr : cache_.cluster_queues().GetIndexer().Get(cq_name);
    const bool lq_drain = lq && lq->contains("spec") && DecodeStopPolicy((*lq)["spec"]) == admission::StopPolicy::kHoldAndDrain;
    const bool lq_stopped = lq && lq->contains("spec") && DecodeStopPolicy((*lq)["spec"]) != admission::StopPolicy::kNone;

    if (w.finished || !w.active || w.state != admission::AdmissionState::kPending) {
      queues_.DeleteWorkload(w.uid);
      if (w.state == admission::AdmissionState::kAdmitted && !w.finished) {
        client::ObjectPtr holder = cache_.cluster_queues().GetIndexer().Get(w.cluster_queue);
        const bool cq_drain = holder && holder->contains("spec") &&
                              DecodeStopPolicy((*holder)["spec"]) == admission::StopPolicy::kHoldAndDrain;
        // An inactive workload is evicted by its lifecycle step (workload_lifecycle.h).
        if (w.active && cq_drain) {
          evict_reason = "ClusterQueueStopped";
          evict_message = "The ClusterQueue is stopped";
        } else if (w.active && lq_drain) {
          evict_reason = "LocalQueueStopped";
          evict_message = "The LocalQueue is stopped";
        }
      }
      if (w.state == admission::AdmissionState::kEvicting && !w.finished) {
        // Pods exist only through a job integration; without one, none can be left.
        const api::Object* owner = ControllerOwnerReference(wl);
        bool managed = false;
        for (const auto& j : jobs_) {
          const api::GroupVersionKind k = j->integration().Kind();
          if (owner && owner->value("kind", "") == k.kind && owner->value("apiVersion", "") == k.ApiVersion()) {
            managed = true;
          }
        }
        release = !managed;
      }
    } else if (!lq) {
      queues_.DeleteWorkload(w.uid);
      pending_reason = "Misconfigured";
      pending_message = fmt::format("LocalQueue {} doesn't exist", queue);
    } else if (!cq) {
      queues_.DeleteWorkload(w.uid);
      pending_reason = "Misconfigured";
      pending_message = fmt::format("ClusterQueue {} doesn't exist", cq_name);
    } else if (lq_stopped) {
      queues_.DeleteWorkload(w.uid);
      pending_reason = "Suspended";
      pending_message = fmt::format("LocalQueue {} is inactive", queue);
    } else {
      // false while the ClusterQueue's queue is not made yet: its reconcile re-adds this one.
      queues_.AddOrUpdateWorkload(w, now);
      if (!ClusterQueueActive(*cq)) {
        pending_reason = "Suspended";
        pending_message = fmt::format("ClusterQueue {} is inactive", cq_name);
      }
    }
  }
  RequestSchedule();
  if (!evict_reason.empty()) {
    if (SetEvicted(&wl, evict_reason, evict_message, "", now)) {
      BERTH_RETURN_IF_ERROR(WriteWorkloadStatus(wl));
      if (options_.metrics) {
        options_.metrics->WorkloadEvicted(AdmittedClusterQueue(wl), LocalQueueOf(wl), evict_reason, "",
                                          PriorityClassName(wl));
      }
      recorder_.Event(wl, kEventTypeNormal, "Evicted", evict_message);
    }
    return Status::Ok();
  }
  if (release) {
    if (ReleaseQuota(&wl, now)) return WriteWorkloadStatus(wl);
    return Status::Ok();
  }
  if (!pending_reason.empty() && SetPending(&wl, pending_reason, pending_message, now)) {
    return WriteWorkloadStatus(wl);
  }
  return Status::Ok();
}

Status KueueController::ApplyLifecycleStep(const LifecycleStep& step) {
  const api::Object& wl = step.workload;
  if (step.kind == LifecycleStep::Kind::kUpdateSpec) {
    BERTH_RETURN_IF_ERROR(client_.Update(kWorkloads.Namespace(api::Namespace(wl)), wl).status());
  } else {
    BERTH_RETURN_IF_ERROR(WriteWorkloadStatus(wl));
  }
  if (step.requeue_inadmissible) {
    std::lock_guard<std::mutex> lock(mu_);
    queues_.QueueAllInadmissibleWorkloads(clock_.Now());
  }
  if (!step.event_reason.empty()) recorder_.Event(wl, step.event_type, step.event_reason, step.event_message);
  RequestSchedule();
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// ClusterQueue, LocalQueue, ResourceFlavor

namespace {

// The quota holders among `wls` (a quotaHolder index's workloads, overlaid),
// as status counts them.
std::vector<QueuedWorkload> ToQueued(const std::vector<client::ObjectPtr>& wls, KueueCache& cache) {
  std::vector<QueuedWorkload> out;
  for (const auto& wl : wls) {
    // The overlay may already show it released or finished.
    if (!IsConditionTrue(*wl, "QuotaReserved") || IsConditionTrue(*wl, "Finished")) continue;
    std::shared_ptr<const admission::Workload> w = cache.DecodeCached(wl);
    QueuedWorkload q;
    q.holds_quota = !w->finished && w->state != admission::AdmissionState::kPending;
    q.admitted = q.holds_quota && IsConditionTrue(*wl, "Admitted");
    if (w->admission) q.usage = admission::AdmissionUsage(*w->admission);
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace

bool KueueController::UsesAdmissionFairSharing(const api::Object& cluster_queue) const {
  return options_.config.admission_fair_sharing.enabled &&
         api::NestedField(cluster_queue, {"spec", "admissionScope", "admissionMode"}) ==
             "UsageBasedAdmissionFairSharing";
}

Status KueueController::ReconcileClusterQueue(const std::string& name) {
  client::ObjectPtr obj;
  const Time now = clock_.Now();
  api::Object status;
  int reserving = 0;
  bool drain = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Read under the lock: two reconciles of one ClusterQueue (its own queue's and the status
    // queue's) run on two threads, and the informer updates its cache before it notifies, so
    // the later of them reads the later state. Read before the lock, a reconcile holding the
    // object from before a delete could put the deleted queue back in the QueueManager (and
    // its metrics) after the delete's reconcile removed it.
    obj = cache_.cluster_queues().GetIndexer().Get(name);
    // The Cohorts above the ClusterQueue before and now: their subtree
    // totals move with it (Kueue's clusterqueue_controller records the old
    // and the new cohort's metrics).
    std::vector<std::string> old_ancestors = std::move(cq_ancestors_[name]);
    cq_ancestors_.erase(name);
    for (const std::string& c : old_ancestors) cohort_queue_->queue().AddAfter(c, kUpdatesBatchPeriod);
    if (!obj) {
      queues_.DeleteClusterQueue(name);
      if (options_.metrics) options_.metrics->ForgetClusterQueue(name);
      return Status::Ok();
    }
    // Status needs the queue tree (activity, cohort root), not the usage.
    const std::shared_ptr<const admission::Snapshot> tree = cache_.QueueSnapshot();
    const admission::Snapshot& snap = *tree;
    const int idx = snap.ClusterQueueIndex(name);
    if (idx >= 0) {
      std::vector<std::string>& ancestors = cq_ancestors_[name];
      for (int n = snap.Parent(idx); n >= 0; n = snap.Parent(n)) {
        ancestors.push_back(snap.NodeName(n));
        cohort_queue_->queue().AddAfter(ancestors.back(), kUpdatesBatchPeriod);
      }
    }
    const bool active = idx >= 0 && snap.Active(idx);
    const std::string root = idx >= 0 && snap.HasParent(idx) ? snap.NodeName(snap.Root(idx)) : "";
    const admission::ClusterQueue spec = DecodeClusterQueue(*obj, cache_.names());
    // A queue new to the QueueManager takes the pending workloads that came before it (Kueue's
    // Manager.AddClusterQueue adds them from the cache): a workload reconciled while its
    // ClusterQueue had no queue yet was not queued.
    const bool new_queue = !queues_.HasClusterQueue(name);
    queues_.AddOrUpdateClusterQueue(name, spec.queueing_strategy, root, active);
    queues_.SetAdmissionFairSharing(name, UsesAdmissionFairSharing(*obj));
    if (new_queue) EnqueuePendingWorkloads();
    if (active && cq_spec_changed_.erase(name) > 0) queues_.QueueInadmissibleWorkloads({name}, now);
    const int pending = static_cast<int>(queues_.ActiveCount(name) + queues_.InadmissibleCount(name));
    std::vector<QueuedWorkload> wls = ToQueued(cache_.WorkloadsByIndex(kQuotaHolderIndex, name), cache_);
    for (const auto& w : wls) reserving += w.holds_quota ? 1 : 0;
    status = ClusterQueueStatus(*obj, snap, idx, pending, wls, cache_.names(), now);
    // Fair Sharing: status.fairSharing.weightedShare from the usage snapshot;
    // the ancestor Cohorts' shares move with it.
    std::optional<double> share;
    if (options_.config.fair_sharing.enable && idx >= 0) {
      const std::vector<std::string> own = {name};
      const admission::Snapshot usage = cache_.BuildSnapshot(&own, tree);  // the same tree as idx
      const admission::DominantResourceShare drs = admission::ComputeDRS(usage, idx);
      share = drs.PreciseWeightedShare();
      status["fairSharing"] = {{"weightedShare", drs.RoundedWeightedShare()}};
    } else {
      status.erase("fairSharing");
    }
    if (options_.metrics) {
      const int finished = static_cast<int>(cache_.CountByIndex(kFinishedIndex, name));
      ClusterQueueMetrics m =
          ClusterQueueMetricsFromStatus(name, spec, status, api::BeingDeleted(*obj), finished, cache_.names());
      m.root_cohort = root;
      m.weighted_share = share;
      options_.metrics->ReportClusterQueue(m);
      ReportPendingWorkloads(name);
    }
    drain = spec.stop_policy == admission::StopPolicy::kHoldAndDrain;
  }
  RequestSchedule();
  if (drain) {
    for (const auto& wl : cache_.WorkloadsByIndex(kClusterQueueIndex, name)) {
      wl_queue_->Add(client::MetaNamespaceKey(*wl));
    }
  }
  if (api::BeingDeleted(*obj) && reserving == 0 && HasFinalizer(*obj, kResourceInUseFinalizer)) {
    return RemoveFinalizer(kClusterQueues, *obj);
  }
  if (obj->value("status", api::Object()) != status) {
    api::Object updated = *obj;
    updated["status"] = status;
    return client_.UpdateStatus(kClusterQueues, updated).status();
  }
  return Status::Ok();
}

Status KueueController::ReconcileCohort(const std::string& name) {
  client::ObjectPtr obj = cache_.cohorts().GetIndexer().Get(name);
  // The Cohort's node in the tree: a Cohort object, or one only named by
  // ClusterQueues or as a parent (Kueue's implicit cohorts, which have
  // metrics but no object to write).
  std::optional<admission::DominantResourceShare> drs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Only the subtree's quota holders: its usage, share and metrics read no other.
    std::vector<std::string> subtree;
    const std::shared_ptr<const admission::Snapshot> tree = cache_.QueueSnapshot();
    if (const int n = tree->CohortIndex(name); n >= 0) {
      std::vector<int> cqs;
      tree->SubtreeClusterQueues(n, &cqs);
      for (int cq : cqs) subtree.push_back(tree->NodeName(cq));
    }
    const admission::Snapshot snap = cache_.BuildSnapshot(&subtree, tree);  // the subtree's tree
    const int node = snap.CohortIndex(name);
    if (node >= 0 && options_.config.fair_sharing.enable) drs = admission::ComputeDRS(snap, node);
    if (options_.metrics && node >= 0) {
      std::vector<int> cqs;
      snap.SubtreeClusterQueues(node, &cqs);
      int admitted = 0;
      for (int cq : cqs) {
        for (const QueuedWorkload& w : ToQueued(cache_.WorkloadsByIndex(kQuotaHolderIndex, snap.NodeName(cq)), cache_)) {
          admitted += w.admitted ? 1 : 0;
        }
      }
      options_.metrics->ReportCohort(CohortMetricsFromSnapshot(snap, node, admitted));
    } else if (options_.metrics) {
      options_.metrics->ForgetCohort(name);
    }
  }
  if (!obj) {
    if (options_.metrics) options_.metrics->ReportCohortWeightedShare(name, std::nullopt);
    return Status::Ok();
  }
  api::Object status = obj->value("status", api::Object::object());
  if (options_.config.fair_sharing.enable) {
    const admission::DominantResourceShare share = drs.value_or(admission::DominantResourceShare());
    status["fairSharing"] = {{"weightedShare", share.RoundedWeightedShare()}};
    if (options_.metrics) options_.metrics->ReportCohortWeightedShare(name, share.PreciseWeightedShare());
  } else {
    status.erase("fairSharing");
  }
  if (obj->value("status", api::Object::object()) != status) {
    api::Object updated = *obj;
    updated["status"] = status;
    return client_.UpdateStatus(kCohorts, updated).status();
  }
  return Status::Ok();
}

Status KueueController::ReconcileLocalQueue(const std::string& key) {
  auto [ns, name] = client::SplitMetaNamespaceKey(key);
  const Time now = clock_.Now();
  client::ObjectPtr obj;
  api::Object status;
  std::optional<Duration> afs_next_sample;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Read, and the metrics reported, under the lock, as in ReconcileClusterQueue: a deleted
    // LocalQueue's ledger and metrics are never brought back by a reconcile that read it before.
    obj = cache_.local_queues().GetIndexer().Get(ns, name);
    if (!obj) {
      if (options_.metrics) options_.metrics->ForgetLocalQueue({ns, name});
      afs_ledger_.Forget(key);
      queues_.ForgetLocalQueueUsage(key);
      return Status::Ok();
    }
    const std::string cq_name = Spec(*obj, "clusterQueue");
    client::ObjectPtr cq = cache_.cluster_queues().GetIndexer().Get(cq_name);
    std::optional<double> afs_usage;
    std::vector<QueuedWorkload> queued = ToQueued(cache_.WorkloadsByIndex(kQueueQuotaHolderIndex, key), cache_);
    const int pending = static_cast<int>(cache_.CountByIndex(kQueuePendingIndex, key));
    // Only workloads holding quota in this LocalQueue's ClusterQueue count as reserving.
    status = LocalQueueStatus(*obj, cq.get(), cq && ClusterQueueActive(*cq), pending, queued, cache_.names(), now);
    // Admission Fair Sharing (Kueue's LocalQueue reconciler): for an active
    // LocalQueue of an active ClusterQueue, a sample every
    // usageSamplingInterval, written to status.
    const admission::AdmissionFairSharingConfig& afs = options_.config.admission_fair_sharing;
    const bool stopped = DecodeStopPolicy(api::NestedField(*obj, {"spec"})) != admission::StopPolicy::kNone;
    if (afs.enabled && !stopped && cq && ClusterQueueActive(*cq)) {
      const bool existed = afs_ledger_.Seed(key, PersistedConsumedResources(*obj), now);
      const admission::AfsUsageLedger::Entry* entry = afs_ledger_.Get(key);
      const Duration since = now - entry->last_update;
      if (existed && since < afs.usage_sampling_interval) {
        afs_next_sample = afs.usage_sampling_interval - since;
      } else {
        entry = &afs_ledger_.Sample(key, AdmittedUsage(queued, cache_.names()), now, afs);
        SetAdmissionFairSharingStatus(&status, entry->consumed, now);
        afs_next_sample = afs.usage_sampling_interval;
      }
      afs_usage = PublishLocalQueueUsage(key, obj.get(), entry->consumed);
    }
    if (options_.metrics) {
      const admission::QueueManager::PendingCounts counts = queues_.LocalQueuePending(key);
      LocalQueueMetrics m = LocalQueueMetricsFromStatus({ns, name}, status, static_cast<int>(counts.active),
                                                        static_cast<int>(counts.inadmissible));
      m.admission_fair_sharing_usage = afs_usage;
      m.cluster_queue = cq_name;
      options_.metrics->ReportLocalQueue(m);
    }
  }
  if (afs_next_sample) lq_queue_->queue().AddAfter(key, *afs_next_sample);
  if (obj->value("status", api::Object()) != status) {
    api::Object updated = *obj;
    updated["status"] = status;
    return client_.UpdateStatus(kLocalQueues.Namespace(ns), updated).status();
  }
  return Status::Ok();
}

Status KueueController::ReconcileResourceFlavor(const std::string& name) {
  client::ObjectPtr obj = cache_.flavors().GetIndexer().Get(name);
  if (!obj || !api::BeingDeleted(*obj) || !HasFinalizer(*obj, kResourceInUseFinalizer)) return Status::Ok();
  for (const auto& cq : cache_.cluster_queues().GetIndexer().List()) {
    for (const api::Object& g : (*cq)["spec"].value("resourceGroups", api::Object::array())) {
      for (const api::Object& f : g.value("flavors", api::Object::array())) {
        if (f.value("name", "") == name) return Status::Ok();  // still in use
      }
    }
  }
  return RemoveFinalizer(kResourceFlavors, *obj);
}

// ---------------------------------------------------------------------------
// Scheduler

CycleSummary KueueController::ScheduleOnce() {
  CycleSummary summary;
  struct Admit {
    client::ObjectPtr obj;
    admission::Workload head;
    admission::Admission admission;
  };
  struct Pending {
    client::ObjectPtr obj;
    std::string reason, message;
  };
  struct Evict {
    client::ObjectPtr obj;
    admission::PreemptedWorkload victim;
    std::string preempting_cluster_queue;
  };
  std::vector<Admit> admits;
  std::vector<Pending> pendings;
  std::vector<Evict> evicts;
  const Time now = clock_.Now();
  std::vector<admission::Workload> heads;
  std::optional<admission::Snapshot> snap;
  {
    std::lock_guard<std::mutex> lock(mu_);
    heads = queues_.Heads();
    summary.heads = static_cast<int>(heads.size());
    if (heads.empty()) return summary;
    snap.emplace(SchedulingSnapshot());
    snap->OwnNames();  // read without the lock below, while reconciles may intern names
  }
  // Computed without the lock (see the header): holding it for the whole cycle
  // starved the informers' handlers and the reconcilers that feed the queues
  // and release quota.
  admission::CycleOptions cycle_options;
  cycle_options.fair_sharing = options_.config.fair_sharing;
  admission::CycleResult result;
  try {
    result = admission::Schedule(*snap, heads, now, cycle_options);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    queues_.ReturnInFlightHeads(now);  // not lost with the cycle: tried again by the next
    throw;
  }
  if (options_.between_cycle_phases) options_.between_cycle_phases();
  const admission::ResourceNames& names = snap->names();  // the snapshot's own copy
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::map<std::string, const admission::Workload*> by_uid;
    for (const auto& h : heads) by_uid[h.uid] = &h;
    for (const admission::EntryResult& e : result.entries) {
      const admission::Workload* head = by_uid.count(e.uid) ? by_uid[e.uid] : nullptr;
      // The head as the queues have it now; null when it left the flight while the
      // cycle ran (deleted, replaced by a namesake, no longer queueable, moved).
      const admission::Workload* now_queued = head ? queues_.InFlight(e.uid) : nullptr;
      if (head && !now_queued) continue;
      client::ObjectPtr obj = cache_.GetWorkload(e.key);
      if (obj && api::Uid(*obj) != e.uid) obj = nullptr;
      if (head && obj && api::Generation(*obj) != head->generation) {
        // Its spec changed after the queues' copy was taken (perhaps in an update the
        // Workload loop has not read yet): the verdict, the admission and the victims are
        // for a workload that no longer exists. Tried again as it is now.
        queues_.RequeueWorkload(*head, admission::RequeueReason::kFailedAfterNomination, now);
        wl_queue_->Add(e.key);
        continue;
      }
      switch (e.outcome) {
        case admission::EntryOutcome::kAdmitted:
          if (obj && head) admits.push_back({obj, *head, *e.admission});
          break;
        case admission::EntryOutcome::kPreempting:
        case admission::EntryOutcome::kPending: {
          // Workloads of the same shape set aside with this head (scheduling
          // equivalence) are not heads this time: they get its verdict.
          // Most already show it (they were set aside the same way after the
          // previous requeue): only the others are listed, looked up and written.
          std::vector<const admission::Workload*> set_aside;
          const admission::QueueManager::Verdict verdict{e.reason, e.message};
          if (head) queues_.RequeueWorkload(*head, e.requeue_reason, now, &set_aside, &verdict);
          if (obj && !(head && head->pending_reason == e.reason && head->pending_message == e.message)) {
            pendings.push_back({obj, e.reason, e.message});
          }
          for (const admission::Workload* other : set_aside) {
            if (client::ObjectPtr oo = cache_.GetWorkload(other->Key())) pendings.push_back({oo, e.reason, e.message});
          }
          for (const auto& v : e.preempted) {
            client::ObjectPtr vo = cache_.GetWorkload(v.key);
            if (!vo || api::Uid(*vo) != v.uid) continue;  // gone, or a namesake, since the snapshot
            // Finished, evicted or released since the snapshot: nothing left to preempt.
            if (!IsConditionTrue(*vo, "QuotaReserved") || IsConditionTrue(*vo, "Evicted") ||
                IsConditionTrue(*vo, "Finished")) {
              continue;
            }
            admission::PreemptedWorkload victim = v;
            // The engine does not know job uids: fill Kueue's JobUID from the preemptor's label.
            const std::string job_uid = obj ? Label(*obj, kJobUidLabel) : "";
            const std::string unknown = "JobUID: UNKNOWN)";
            if (auto pos = victim.message.find(unknown); !job_uid.empty() && pos != std::string::npos) {
              victim.message.replace(pos, unknown.size(), "JobUID: " + job_uid + ")");
            }
            evicts.push_back({vo, victim, e.cluster_queue});
          }
          break;
        }
        case admission::EntryOutcome::kDropped:
          break;
      }
    }
    // waitForPodsReady.blockAdmission (Kueue's scheduler waits for
    // PodsReadyForAllAdmittedWorkloads before each admission): nothing is
    // admitted while an admitted workload is not PodsReady, and at most one
    // workload per cycle (the next one waits for it). Held heads go back to
    // the heap, under the same lock as the rest of the cycle, so no count
    // (ClusterQueue status, kueue_pending_workloads) ever misses them.
    if (const WaitForPodsReadyConfig& wfpr = options_.config.wait_for_pods_ready;
        wfpr.enabled && wfpr.block_admission && !admits.empty()) {
      bool all_ready = true;
      for (const auto& wl : cache_.ListWorkloads()) all_ready = all_ready && !BlocksAdmission(*wl);
      const size_t allowed = all_ready ? 1 : 0;
      for (size_t i = allowed; i < admits.size(); ++i) {
        queues_.RequeueWorkload(admits[i].head, admission::RequeueReason::kFailedAfterNomination, now);
        pendings.push_back({admits[i].obj, kWaitingForPodsReadyReason, kWaitingForPodsReadyMessage});
      }
      if (admits.size() > allowed) admits.erase(admits.begin() + static_cast<std::ptrdiff_t>(allowed), admits.end());
    }
  }
  // The admissions are written at once (writes_, concurrent_writes.h): a durable store
  // commits them together.
  std::vector<api::Object> reserved(admits.size());
  std::vector<Status> written(admits.size());
  // A write that throws fails alone: the others' results are still processed below.
  auto guarded = [](const std::function<Status()>& write) -> Status {
    try {
      return write();
    } catch (const std::exception& e) {
      return InternalError(std::string("writing the Workload's status threw: ") + e.what());
    }
  };
  writes_.ForEach(admits.size(), [&](size_t i) {
    written[i] = guarded([&] {
      reserved[i] = *admits[i].obj;
      SetQuotaReservation(&reserved[i], admits[i].admission, names, now);
      return WriteWorkloadStatus(reserved[i]);
    });
  });
  std::vector<const Admit*> admitted;
  for (size_t i = 0; i < admits.size(); ++i) {
    Admit& a = admits[i];
    const api::Object& wl = reserved[i];
    const Status& s = written[i];
    if (!s.ok()) {
      Logger("kueue")->info("admitting {}: {}", client::MetaNamespaceKey(wl), s.ToString());
      std::lock_guard<std::mutex> lock(mu_);
      queues_.RequeueWorkload(a.head, admission::RequeueReason::kFailedAfterNomination, now);
      continue;
    }
    ++summary.admitted;
    admitted.push_back(&a);
    SettleEntryPenalty(*a.obj, a.admission, now);
    // Kueue's QueuedWaitTime (since creation or the last Requeued
    // transition), read before this reservation touched the conditions; the
    // Event and the metrics report the same wait.
    const Duration waited = QueuedWaitTime(*a.obj, now);
    if (options_.metrics) {
      std::vector<std::string> cohorts;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = cq_ancestors_.find(a.admission.cluster_queue);
        if (it != cq_ancestors_.end()) cohorts = it->second;
      }
      options_.metrics->WorkloadAdmitted(a.admission.cluster_queue, cohorts, LocalQueueOf(*a.obj),
                                         PriorityClassName(*a.obj), waited);
    }
    recorder_.Event(wl, kEventTypeNormal, "QuotaReserved",
                    fmt::format("Quota reserved in ClusterQueue {}, wait time since queued was {:.0f}s",
                                a.admission.cluster_queue, std::chrono::duration<double>(waited).count()));
    recorder_.Event(wl, kEventTypeNormal, "Admitted",
                    fmt::format("Admitted by ClusterQueue {}, wait time since reservation was 0s",
                                a.admission.cluster_queue));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    // An admitted head's flight ends now rather than at the next Heads(), so the pending
    // counts drop with the write; a Workload whose update the flight absorbed is read again.
    for (const Admit* a : admitted) {
      if (queues_.EndFlight(a->head.uid)) wl_queue_->Add(a->head.Key());
    }
    if (options_.metrics) {
      std::set<std::string> touched;
      for (const admission::EntryResult& e : result.entries) {
        if (!e.cluster_queue.empty()) touched.insert(e.cluster_queue);
      }
      for (const std::string& cq : touched) ReportPendingWorkloads(cq);
    }
  }
  std::vector<api::Object> evicted(evicts.size());
  std::vector<std::optional<Status>> evict_written(evicts.size());  // none: nothing to write
  writes_.ForEach(evicts.size(), [&](size_t i) {
    evicted[i] = *evicts[i].obj;
    if (!SetEvicted(&evicted[i], "Preempted", evicts[i].victim.message, evicts[i].victim.reason, now)) return;
    evict_written[i] = guarded([&] { return WriteWorkloadStatus(evicted[i]); });
  });
  for (size_t i = 0; i < evicts.size(); ++i) {
    Evict& e = evicts[i];
    const api::Object& wl = evicted[i];
    if (!evict_written[i]) continue;
    const Status& s = *evict_written[i];
    if (!s.ok()) {
      Logger("kueue")->info("evicting {}: {}", e.victim.key, s.ToString());
      continue;
    }
    ++summary.preempted;
    if (options_.metrics) {
      options_.metrics->WorkloadEvicted(AdmittedClusterQueue(wl), LocalQueueOf(wl), "Preempted", "",
                                        PriorityClassName(wl));
      options_.metrics->WorkloadPreempted(e.preempting_cluster_queue, e.victim.reason);
    }
    recorder_.Event(wl, kEventTypeNormal, "Preempted", e.victim.message);
  }
  for (Pending& p : pendings) {
    PublishPendingVerdict(*p.obj, p.reason, p.message);
    ++summary.pending;
  }
  if (options_.metrics) options_.metrics->AdmissionAttempt(summary.admitted > 0, clock_.Now() - now);
  return summary;
}

admission::Snapshot KueueController::SchedulingSnapshot() {
  admission::Snapshot snap = cache_.BuildSnapshot();
  snap.SetLocalQueueUsage([this](const std::string& cluster_queue, const admission::Workload& w) {
    return queues_.LocalQueueUsage(cluster_queue, w);
  });
  return snap;
}

void KueueController::SettleEntryPenalty(const api::Object& wl, const admission::Admission& admission, Time now) {
  const admission::AdmissionFairSharingConfig& afs = options_.config.admission_fair_sharing;
  client::ObjectPtr cq = cache_.cluster_queues().GetIndexer().Get(admission.cluster_queue);
  if (!cq || !UsesAdmissionFairSharing(*cq)) return;
  const std::string ns = api::Namespace(wl);
  const std::string key = ns + "/" + Spec(wl, "queueName");
  std::lock_guard<std::mutex> lock(mu_);
  admission::UsageAmounts requests;
  for (const auto& u : admission::AdmissionUsage(admission)) {
    requests[cache_.names().Name(u.resource)] += static_cast<double>(u.amount);
  }
  client::ObjectPtr lq = cache_.local_queues().GetIndexer().Get(ns, Spec(wl, "queueName"));
  if (lq) afs_ledger_.Seed(key, PersistedConsumedResources(*lq), now);
  // The cache holds this admission already (assumed with the write).
  const admission::UsageAmounts admitted =
      AdmittedUsage(ToQueued(cache_.WorkloadsByIndex(kQueueQuotaHolderIndex, key), cache_), cache_.names());
  const admission::AfsUsageLedger::Entry& entry =
      afs_ledger_.Settle(key, admitted, admission::EntryPenalty(requests, afs), now, afs);
  PublishLocalQueueUsage(key, lq.get(), entry.consumed);
}

double KueueController::PublishLocalQueueUsage(const std::string& key, const api::Object* local_queue,
                                               const admission::UsageAmounts& consumed) {
  const double weight = local_queue ? DecodeFairWeight(api::NestedField(*local_queue, {"spec"})) : 1.0;
  const double usage =
      admission::LocalQueueUsage(consumed, weight, options_.config.admission_fair_sharing.resource_weights);
  queues_.SetLocalQueueUsage(key, usage);
  return usage;
}

// ---------------------------------------------------------------------------
// Estimated start times

void KueueController::RequestEstimates(const std::string& cluster_queue) {
  {
    std::lock_guard<std::mutex> lock(estimates_mu_);
    if (cluster_queue.empty()) {
      estimate_dirty_all_ = true;
    } else {
      estimate_dirty_.insert(cluster_queue);
    }
  }
  ScheduleEstimatePass();
}

void KueueController::ScheduleEstimatePass() {
  if (options_.estimate_period <= Duration::zero()) return;
  Duration delay;
  {
    std::lock_guard<std::mutex> lock(estimates_mu_);
    delay = EstimateDelay(options_.estimate_period, estimate_pass_duration_);
  }
  estimate_queue_->queue().AddAfter("all", delay);
}

Status KueueController::RunEstimatePass(const std::string& key) {
  // A request made while a pass ran was scheduled from the previous pass's
  // duration: the duty factor is applied again here, from this pass's end.
  Time last_end, not_before;
  {
    std::lock_guard<std::mutex> lock(estimates_mu_);
    last_end = estimate_pass_end_;
    not_before = last_end + estimate_pass_duration_ * kEstimateDutyFactor;
  }
  // A clock stepped back before the last pass's end holds nothing.
  if (const Time now = clock_.Now(); now < not_before && now >= last_end) {
    estimate_queue_->queue().AddAfter(key, not_before - now);
    return Status::Ok();
  }
  // Failed writes are retried by the next pass, which the pass schedules at
  // its pace (ScheduleEstimatePass), never by the loop's rate limiter, which
  // would start a full pass again within milliseconds.
  if (Status s = RecomputeEstimates(); !s.ok()) Logger("kueue")->debug("estimate pass: {}", s.ToString());
  return Status::Ok();
}

std::shared_ptr<const KueueController::Estimates> KueueController::LatestEstimates() const {
  std::lock_guard<std::mutex> lock(estimates_mu_);
  return estimates_;
}

std::optional<Duration> KueueController::JobDeadline(const api::Object& workload) {
  const api::Object* owner = ControllerOwnerReference(workload);
  if (owner == nullptr) return std::nullopt;
  for (auto& j : jobs_) {
    const api::GroupVersionKind k = j->integration().Kind();
    if (owner->value("kind", "") != k.kind || owner->value("apiVersion", "") != k.ApiVersion()) continue;
    client::ObjectPtr job = j->jobs().GetIndexer().Get(api::Namespace(workload), owner->value("name", ""));
    if (!job) return std::nullopt;
    return j->integration().ActiveDeadline(*job);
  }
  return std::nullopt;
}

Status KueueController::RecomputeEstimates() {
  const Time now = clock_.Now();
  // What changed since the last pass: the cohort trees of these ClusterQueues
  // (trees share no quota, so the others' estimates still hold), or all.
  std::set<std::string> dirty;
  bool all = false;
  std::shared_ptr<const Estimates> previous;
  {
    std::lock_guard<std::mutex> lock(estimates_mu_);
    dirty.swap(estimate_dirty_);
    all = estimate_dirty_all_ || !estimates_;
    estimate_dirty_all_ = false;
    previous = estimates_;
  }
  std::optional<admission::Snapshot> snap;
  admission::QueueManager queues;
  std::set<std::string> kept_queues;  // ClusterQueues of unchanged trees: previous estimates carried
  std::set<std::string> replayed;     // ... and the others
  std::unordered_map<std::string, admission::RunTime> run_times;  // by uid
  std::unordered_map<std::string, std::string> pending_keys;     // uid -> key
  std::unordered_map<std::string, std::string> pending_cqs;      // uid -> ClusterQueue
  {
    // Copies under the engine lock; the replay runs without it.
    std::lock_guard<std::mutex> lock(mu_);
    snap.emplace(SchedulingSnapshot());
    snap->OwnNames();  // the replay runs without the lock, while reconciles may intern names
    queues = queues_;
    if (!all) {
      std::set<int> dirty_roots;
      for (const std::string& cq : dirty) {
        if (const int idx = snap->ClusterQueueIndex(cq); idx >= 0) dirty_roots.insert(snap->Root(idx));
      }
      for (int i = 0; i < snap->cluster_queue_count(); ++i) {
        const int node = snap->ClusterQueueNode(i);
        if (!dirty_roots.count(snap->Root(node))) kept_queues.insert(snap->NodeName(node));
      }
    }
    auto add = [&](const admission::Workload& w) {
      if (client::ObjectPtr obj = cache_.GetWorkload(w.Key())) {
        run_times[w.uid] = RunTimeOf(*obj, JobDeadline(*obj), history_);
      }
    };
    for (int i = 0; i < snap->cluster_queue_count(); ++i) {
      const int node = snap->ClusterQueueNode(i);
      const std::string& name = snap->NodeName(node);
      if (!kept_queues.count(name)) replayed.insert(name);
      for (const admission::Workload* w : queues_.Pending(name)) {
        pending_keys[w->uid] = w->Key();
        pending_cqs[w->uid] = w->cluster_queue;
        if (!kept_queues.count(name)) add(*w);
      }
      if (kept_queues.count(name)) continue;
      for (const auto& [uid, info] : snap->Workloads(node)) add(info->workload);
    }
    // The unchanged trees are left out of the replay.
    for (const std::string& name : kept_queues) {
      queues.DeleteClusterQueue(name);
      std::vector<std::string> holders;
      for (const auto& [uid, info] : snap->Workloads(snap->ClusterQueueIndex(name))) holders.push_back(uid);
      for (const std::string& uid : holders) snap->RemoveWorkload(uid);
    }
  }
  admission::EstimateOptions opts;
  opts.cycle.fair_sharing = options_.config.fair_sharing;
  auto published = std::make_shared<Estimates>();
  published->at = now;
  published->replayed = std::move(replayed);
  published->result = admission::EstimateStartTimes(
      std::move(*snap), std::move(queues),
      [&run_times](const admission::Workload& w) {
        auto it = run_times.find(w.uid);
        return it == run_times.end() ? admission::RunTime{} : it->second;
      },
      now, opts);
  // Pending workloads of unchanged trees keep their previous estimates.
  if (previous) {
    for (const auto& [uid, cq] : pending_cqs) {
      if (!kept_queues.count(cq)) continue;
      if (auto it = previous->result.by_uid.find(uid); it != previous->result.by_uid.end()) {
        published->result.by_uid.emplace(uid, it->second);
      } else if (auto u = previous->result.unknown.find(uid); u != previous->result.unknown.end()) {
        published->result.unknown.emplace(uid, u->second);
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(estimates_mu_);
    estimates_ = published;
  }
  const admission::EstimateResult& r = published->result;
  if (options_.metrics) {
    std::map<std::string, std::vector<double>> waits;  // cluster queue -> expected waits
    for (const auto& [uid, e] : r.by_uid) {
      if (auto cq = pending_cqs.find(uid); cq != pending_cqs.end()) {
        waits[cq->second].push_back(KueueMetrics::Seconds(e.start - now));
      }
    }
    options_.metrics->ReportExpectedWaits(waits);
  }

  // The conditions: changed ones first in no particular order, at most
  // estimate_writes_per_pass; what is left is written by the next pass.
  Status first_error = Status::Ok();
  size_t writes = 0;
  bool more = false;
  for (const auto& [uid, key] : pending_keys) {
    const admission::StartEstimate* e = nullptr;
    if (auto it = r.by_uid.find(uid); it != r.by_uid.end()) e = &it->second;
    static const admission::UnknownBlockers kNone;
    auto u = r.unknown.find(uid);
    const api::Condition c = EstimatedStartCondition(e, u == r.unknown.end() ? kNone : *u->second, r.hit_limit, now);
    std::optional<Time> start;
    if (e != nullptr) start = e->start;
    auto w = written_estimates_.find(uid);
    if (!EstimateWorthWriting(w == written_estimates_.end() ? nullptr : &w->second, c, start, now)) continue;
    if (writes >= options_.estimate_writes_per_pass) {
      more = true;
      break;
    }
    client::ObjectPtr obj = cache_.GetWorkload(key);
    if (!obj || api::Uid(*obj) != uid || IsConditionTrue(*obj, "QuotaReserved")) continue;
    api::Object wl = *obj;
    if (api::SetCondition(&wl, c, now)) {
      ++writes;
      Status s = WriteWorkloadStatus(wl);
      if (!s.ok()) {
        if (first_error.ok()) first_error = s;
        continue;
      }
    }
    written_estimates_[uid] = {key, c, start};
  }
  // Workloads no longer pending (admitted, finished, deleted) lose theirs.
  for (auto it = written_estimates_.begin(); it != written_estimates_.end();) {
    if (pending_keys.count(it->first)) {
      ++it;
      continue;
    }
    client::ObjectPtr obj = cache_.GetWorkload(it->second.key);
    if (obj && api::Uid(*obj) == it->first && FindCondition(*obj, kEstimatedStartCondition) != nullptr) {
      api::Object wl = *obj;
      api::RemoveCondition(&wl, kEstimatedStartCondition);
      Status s = WriteWorkloadStatus(wl);
      if (!s.ok()) {
        if (first_error.ok()) first_error = s;
        ++it;
        continue;
      }
    }
    it = written_estimates_.erase(it);
  }
  {
    std::lock_guard<std::mutex> lock(estimates_mu_);
    estimate_pass_end_ = clock_.Now();
    estimate_pass_duration_ = estimate_pass_end_ - now;
  }
  // The writes left over (beyond the budget, or failed: a conflict with the
  // scheduler's write is common) go with the next pass, at the pass's own
  // pace. Nothing in the trees changed for them: that pass replays none.
  if (more || !first_error.ok()) ScheduleEstimatePass();
  return first_error;
}

void KueueController::PublishPendingVerdict(const api::Object& workload, const std::string& reason,
                                            const std::string& message) {
  const std::string key = client::MetaNamespaceKey(workload);
  {
    std::lock_guard<std::mutex> lock(verdict_mu_);
    verdicts_[key] = {api::Uid(workload), reason, message, QuotaReservedTransition(workload)};
  }
  verdict_queue_->queue().Add(key);
}

Status KueueController::WritePendingVerdict(const std::string& key) {
  PendingVerdict v;
  {
    std::lock_guard<std::mutex> lock(verdict_mu_);
    auto it = verdicts_.find(key);
    if (it == verdicts_.end()) return Status::Ok();
    v = it->second;
  }
  auto written = [&] {
    std::lock_guard<std::mutex> lock(verdict_mu_);
    auto it = verdicts_.find(key);
    if (it != verdicts_.end() && it->second == v) verdicts_.erase(it);  // not replaced meanwhile
    return Status::Ok();
  };
  client::ObjectPtr obj = cache_.GetWorkload(key);
  // Stale: gone, recreated, admitted or finished since the cycle.
  if (!obj || api::Uid(*obj) != v.uid || IsConditionTrue(*obj, "QuotaReserved") || IsConditionTrue(*obj, "Finished") ||
      QuotaReservedTransition(*obj) != v.quota_reserved_transition) {
    return written();
  }
  if (ConditionHolds(*obj, {"QuotaReserved", "False", v.reason, v.message})) return written();
  api::Object wl = *obj;
  if (!SetPending(&wl, v.reason, v.message, clock_.Now())) return written();
  // A conflict (the workload changed) is retried with the informer's newer copy.
  BERTH_RETURN_IF_ERROR(WriteWorkloadStatus(wl));
  recorder_.Event(wl, kEventTypeNormal, "Pending", v.message);
  return written();
}

void KueueController::ReportPendingWorkloads(const std::string& cluster_queue) {
  options_.metrics->ReportPendingWorkloads(cluster_queue, static_cast<int>(queues_.ActiveCount(cluster_queue)),
                                           static_cast<int>(queues_.InadmissibleCount(cluster_queue)));
}

// ---------------------------------------------------------------------------
// Threads

void KueueController::Start() {
  if (!threads_.empty()) return;
  factory_.Start();
  for (auto& q : work_) q->Start(1);
  threads_.emplace_back([this] {
    SetCurrentThreadName("kueue-scheduler");
    while (!stopping_) {
      {
        std::unique_lock<std::mutex> lock(sched_mu_);
        sched_cv_.wait(lock, [this] { return schedule_requested_ || stopping_; });
        schedule_requested_ = false;
      }
      if (stopping_) break;
      try {
        CycleSummary s = ScheduleOnce();
        if (s.admitted > 0 || s.preempted > 0) RequestSchedule();
      } catch (const std::exception& e) {
        // Kept alive (see ReconcileLoop::ProcessOne); the next event schedules again.
        Logger("kueue")->error("scheduling cycle threw: {}", e.what());
      }
    }
  });
}

std::optional<std::vector<PendingWorkloadEntry>> KueueController::PendingWorkloads(
    const std::string& cluster_queue) {
  std::vector<std::pair<std::string, int32_t>> keys;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!queues_.HasClusterQueue(cluster_queue)) return std::nullopt;
    for (const admission::Workload* w : queues_.Pending(cluster_queue)) keys.emplace_back(w->Key(), w->priority);
  }
  std::vector<PendingWorkloadEntry> out;
  out.reserve(keys.size());
  for (auto& [key, priority] : keys) {
    if (client::ObjectPtr obj = cache_.GetWorkload(key)) out.push_back({std::move(obj), priority});
  }
  return out;
}

void KueueController::Stop() {
  stopping_ = true;
  for (auto& q : work_) q->Stop();
  sched_cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace berth::controllers::kueue
