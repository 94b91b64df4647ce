#include "controllers/scheduler/scheduler_controller.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "client/clock_wait.h"
#include "api/conditions.h"
#include "controllers/scheduler/pod_decoder.h"
#include "core/logging.h"
#include "placement/messages.h"

namespace berth::controllers::scheduler {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

constexpr char kPodScheduled[] = "PodScheduled";
constexpr char kDisruptionTarget[] = "DisruptionTarget";

std::string NodeName(const api::Object& pod) {
  auto s = pod.find("spec");
  return s != pod.end() && s->is_object() ? s->value("nodeName", "") : "";
}

std::string NominatedNodeName(const api::Object& pod) {
  auto s = pod.find("status");
  return s != pod.end() && s->is_object() ? s->value("nominatedNodeName", "") : "";
}

// What an unschedulable pod's verdict depends on in the pod itself: its
// spec and labels (our own status writes do not count).
size_t PodHash(const api::Object& pod) {
  auto spec = pod.find("spec");
  std::string s = spec != pod.end() ? spec->dump() : "";
  auto m = pod.find("metadata");
  if (m != pod.end() && m->is_object() && m->contains("labels")) s += (*m)["labels"].dump();
  return std::hash<std::string>{}(s);
}

Time CreationTime(const api::Object& pod) {
  Time t{};
  ParseRfc3339(api::MetaString(pod, "creationTimestamp"), &t);
  return t;
}

// Sets a PodCondition (core/v1 PodCondition has no observedGeneration in v1.32).
bool SetPodCondition(api::Object* pod, const Condition& c, Time now) {
  return SetCondition(pod, c, now, api::ConditionKind::kNoObservedGeneration);
}

// Sets (non-empty) or removes status.nominatedNodeName; true when changed.
bool SetNominatedNodeName(api::Object* pod, const std::string& node) {
  if (NominatedNodeName(*pod) == node) return false;
  if (node.empty()) {
    (*pod)["status"].erase("nominatedNodeName");
  } else {
    (*pod)["status"]["nominatedNodeName"] = node;
  }
  return true;
}

}  // namespace

SchedulerController::SchedulerController(client::Client& client, client::SharedInformerFactory& factory, Clock& clock,
                                         SchedulerControllerOptions options)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      pods_(factory.ForResource(kPods)),
      nodes_(factory.ForResource(kNodes)),
      recorder_(client, clock, options_.scheduler_name) {
  // Pods that have not ended, so a cycle costs what runs and waits, not every
  // finished pod the cache holds (kube-scheduler's cache drops terminated pods
  // the same way).
  (void)pods_.AddIndexer(kLivePodsIndex, [](const api::Object& pod) -> std::vector<std::string> {
    if (IsPodTerminal(pod)) return {};
    return {"true"};
  });
  RegisterHandlers();
}

std::vector<client::ObjectPtr> SchedulerController::LivePods() const {
  auto live = pods_.GetIndexer().ByIndex(kLivePodsIndex, "true");
  return live.ok() ? std::move(live).value() : std::vector<client::ObjectPtr>{};
}

SchedulerController::~SchedulerController() { Stop(); }

std::vector<client::Informer*> SchedulerController::informers() { return {&pods_, &nodes_}; }

bool SchedulerController::Schedulable(const api::Object& pod) const {
  return NodeName(pod).empty() && !api::BeingDeleted(pod) && !IsPodTerminal(pod) &&
         SchedulerName(pod) == options_.scheduler_name;
}

Duration SchedulerController::Backoff(int attempts) const {
  Duration d = options_.initial_backoff;
  for (int i = 1; i < attempts && d < options_.max_backoff; ++i) d *= 2;
  return std::min(d, options_.max_backoff);
}

void SchedulerController::Wake() {
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    wake_ = true;
  }
  wake_cv_.notify_all();
}

void SchedulerController::RegisterHandlers() {
  pods_.AddEventHandler({[this](const client::ObjectPtr& o, bool) { OnPod(o, false); },
                         [this](const client::ObjectPtr&, const client::ObjectPtr& o) { OnPod(o, false); },
                         [this](const client::ObjectPtr& o, bool) { OnPod(o, true); }});
  // Retries are decided level-triggered in ScheduleOnce; events only wake it.
  nodes_.AddEventHandler({[this](const client::ObjectPtr&, bool) { Wake(); },
                          [this](const client::ObjectPtr&, const client::ObjectPtr&) { Wake(); },
                          [this](const client::ObjectPtr&, bool) { Wake(); }});
}

void SchedulerController::OnPod(const client::ObjectPtr& obj, bool deleted) {
  const std::string key = client::MetaNamespaceKey(*obj);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (deleted) {
      queue_.erase(key);
      assumed_bound_.erase(key);
      assumed_nomination_.erase(key);
      deleted_victims_.erase(api::Uid(*obj));
    } else if (Schedulable(*obj)) {
      queue_.try_emplace(key);
      if (auto a = assumed_nomination_.find(key); a != assumed_nomination_.end() && a->second == NominatedNodeName(*obj)) {
        assumed_nomination_.erase(a);
      }
    } else {
      queue_.erase(key);
      assumed_nomination_.erase(key);
      if (!NodeName(*obj).empty()) assumed_bound_.erase(key);
    }
  }
  Wake();
}

void SchedulerController::ActivateAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& p : LivePods()) {
    if (Schedulable(*p)) queue_[client::MetaNamespaceKey(*p)] = QueuedPod{};
  }
}

CycleSummary SchedulerController::ScheduleOnce() {
  std::lock_guard<std::mutex> lock(mu_);
  CycleSummary summary;
  const Time now = clock_.Now();
  auto log = Logger("scheduler");

  // 1. Snapshot.
  placement::Snapshot snapshot;
  // What the verdict of an unschedulable pod depends on besides the pod
  // itself (step 4): compared level-triggered, so a change is noticed even
  // when its informer event is delivered after this cycle read the caches.
  std::string cluster_state;
  for (const auto& n : nodes_.GetIndexer().List()) {
    snapshot.UpsertNode(DecodeNode(*n));
    cluster_state += api::Name(*n) + "@" + api::ResourceVersion(*n) + ";";
  }
  struct Pending {
    client::ObjectPtr obj;
    placement::Pod pod;
    Time created;
  };
  std::vector<Pending> active;
  std::vector<Pending> pending;  // unbound pods of this scheduler
  std::map<std::string, client::ObjectPtr> by_key;
  for (const auto& obj : LivePods()) {
    const std::string key = client::MetaNamespaceKey(*obj);
    by_key[key] = obj;
    placement::Pod pod = DecodePod(*obj);
    if (deleted_victims_.count(pod.uid) > 0) pod.terminating = pod.terminating_by_preemption = true;
    if (pod.node_name.empty()) {
      if (auto a = assumed_bound_.find(key); a != assumed_bound_.end()) pod.node_name = a->second;
    }
    if (!pod.node_name.empty()) {
      cluster_state += key + "/" + pod.uid + "@" + pod.node_name + (pod.terminating ? "-" : "+") + ";";
      static_cast<void>(snapshot.AddPod(std::move(pod)));  // a pod on an unknown node holds nothing we place on
      continue;
    }
    if (!Schedulable(*obj)) continue;
    if (auto a = assumed_nomination_.find(key); a != assumed_nomination_.end()) pod.nominated_node_name = a->second;
    if (!pod.nominated_node_name.empty()) static_cast<void>(snapshot.AddNominatedPod(pod));
    pending.push_back({obj, std::move(pod), CreationTime(*obj)});
  }
  const size_t cluster_hash = std::hash<std::string>{}(cluster_state);
  for (Pending& p : pending) {
    const std::string key = p.pod.Key();
    const size_t pod_hash = PodHash(*p.obj);
    auto [q, added] = queue_.try_emplace(key);
    QueuedPod& qp = q->second;
    if (qp.queued_at == Time{}) qp.queued_at = now;
    if (qp.unschedulable && (qp.cluster_hash != cluster_hash || qp.pod_hash != pod_hash ||
                             now - qp.unschedulable_since >= options_.max_unschedulable_duration)) {
      qp.unschedulable = false;
    }
    qp.cluster_hash = cluster_hash;
    qp.pod_hash = pod_hash;
    if (qp.unschedulable || qp.backoff_until > now) continue;
    active.push_back(std::move(p));
  }

  // 2. PrioritySort.
  std::sort(active.begin(), active.end(), [](const Pending& a, const Pending& b) {
    return std::make_tuple(-static_cast<int64_t>(a.pod.priority), a.created, a.pod.Key()) <
           std::make_tuple(-static_cast<int64_t>(b.pod.priority), b.created, b.pod.Key());
  });

  // Writes a pod's status from the newest copy this cycle has (the cache's,
  // or what an earlier write of this cycle returned, so a pod written twice
  // in one cycle — a nomination cleared, then its own attempt — does not
  // conflict with itself).
  auto write_status = [&](const std::string& key, const std::function<bool(api::Object*)>& mutate) -> Status {
    auto it = by_key.find(key);
    if (it == by_key.end()) return Status(Code::kNotFound, key);
    api::Object updated = *it->second;
    if (!mutate(&updated)) return Status::Ok();
    auto res = client_.UpdateStatus(kPods.Namespace(api::Namespace(updated)), updated);
    if (!res.ok()) return res.status();
    it->second = std::make_shared<const api::Object>(res.value());
    return Status::Ok();
  };
  auto clear_nomination = [&](const std::string& key) {
    Status s = write_status(key, [](api::Object* p) { return SetNominatedNodeName(p, ""); });
    if (!s.ok()) {
      log->info("clearing nominatedNodeName of {}: {}", key, s.ToString());
      return;
    }
    assumed_nomination_[key] = "";
    static_cast<void>(snapshot.RemoveNominatedPod(key));
    ++summary.nominations_cleared;
  };
  auto requeue = [&](const std::string& key) {
    QueuedPod& q = queue_[key];
    ++q.attempts;
    q.backoff_until = now + Backoff(q.attempts);
    q.unschedulable = true;
    q.unschedulable_since = now;
  };

  // 3. One attempt per active pod.
  SchedulerMetrics* metrics = options_.metrics.get();
  for (Pending& p : active) {
    ++summary.attempted;
    const std::string key = p.pod.Key();
    const api::Object obj = *by_key.at(key);
    const Time attempt_start = clock_.Now();
    Duration algorithm{0};
    const placement::Decision d = placement::Schedule(snapshot, p.pod, options_.placement);
    algorithm = clock_.Now() - attempt_start;
    auto record = [&](SchedulerMetrics::Result result) {
      if (metrics) metrics->SchedulingAttempt(result, clock_.Now() - attempt_start, algorithm);
    };

    if (d.bound()) {
      // pods/binding: spec.nodeName and PodScheduled=True in one write, as kube-scheduler binds.
      Status bound = client_.Bind(kPods.Namespace(p.pod.namespace_), p.pod.name, d.node_name);
      if (!bound.ok()) {
        log->info("binding {} to {}: {}", key, d.node_name, bound.ToString());
        record(SchedulerMetrics::Result::kError);
        requeue(key);
        queue_[key].unschedulable = false;  // a write failure is retried after the backoff only
        continue;
      }
      if (!p.pod.nominated_node_name.empty()) {
        // A nomination (from preemption) is cleared once the pod is bound.
        auto current = client_.Get(kPods.Namespace(p.pod.namespace_), p.pod.name);
        if (current.ok() && SetNominatedNodeName(&current.value(), "")) {
          Status s = client_.UpdateStatus(kPods.Namespace(p.pod.namespace_), *current).status();
          if (!s.ok()) log->info("clearing nominatedNodeName of {}: {}", key, s.ToString());
        }
      }
      api::Object bound_pod = obj;
      bound_pod["spec"]["nodeName"] = d.node_name;
      recorder_.Event(bound_pod, kEventTypeNormal, "Scheduled",
                      placement::ScheduledMessage(p.pod.namespace_, p.pod.name, d.node_name));
      ++summary.bound;
      record(SchedulerMetrics::Result::kScheduled);
      if (metrics) {
        const QueuedPod& q = queue_[key];
        metrics->PodScheduled(q.attempts + 1, clock_.Now() - q.queued_at);
      }
      queue_.erase(key);
      assumed_bound_[key] = d.node_name;
      assumed_nomination_.erase(key);
      static_cast<void>(snapshot.RemoveNominatedPod(key));
      placement::Pod placed = p.pod;
      placed.node_name = d.node_name;
      placed.nominated_node_name.clear();
      static_cast<void>(snapshot.AddPod(std::move(placed)));
      for (const std::string& stale : placement::StaleNominations(snapshot)) clear_nomination(stale);
      continue;
    }

    if (metrics) metrics->PreemptionAttempt();  // PostFilter ran
    if (d.preemption) {
      const placement::PreemptionPlan& plan = *d.preemption;
      if (metrics) metrics->PreemptionVictims(static_cast<int>(plan.victims.size()));
      for (const placement::Victim& v : plan.victims) {
        auto it = by_key.find(v.key);
        if (v.terminating || it == by_key.end()) continue;
        const client::ObjectPtr victim = it->second;
        Status s = write_status(v.key, [&](api::Object* vp) {
          return SetPodCondition(vp,
                                 {kDisruptionTarget, "True", "PreemptionByScheduler",
                                  placement::DisruptionTargetMessage(options_.scheduler_name)},
                                 now);
        });
        if (s.ok()) {
          client::DeleteOptions del;
          del.preconditions.uid = v.uid;
          s = client_.Delete(kPods.Namespace(api::Namespace(*victim)), api::Name(*victim), del);
        }
        if (!s.ok() && s.code() != Code::kNotFound) {
          log->info("preempting {} for {}: {}", v.key, key, s.ToString());
          continue;
        }
        recorder_.Event(*victim, kEventTypeNormal, "Preempted", placement::PreemptedMessage(p.pod.uid, plan.node_name));
        ++summary.preempted;
        deleted_victims_.insert(v.uid);
        if (const placement::NodeInfo* node = snapshot.FindNode(plan.node_name)) {
          for (const auto& bp : node->pods()) {
            if (bp.pod.Key() != v.key) continue;
            placement::Pod marked = bp.pod;
            marked.terminating = marked.terminating_by_preemption = true;
            static_cast<void>(snapshot.RemovePod(v.key));
            static_cast<void>(snapshot.AddPod(std::move(marked)));
            break;
          }
        }
      }
      for (const std::string& k : plan.nominations_to_clear) clear_nomination(k);
    }

    const api::Object* cond = FindCondition(obj, kPodScheduled);
    const bool message_changed = cond == nullptr || cond->value("message", "") != d.message ||
                                 cond->value("status", "") != "False";
    Status s = write_status(key, [&](api::Object* pod) {
      bool changed = SetPodCondition(pod, {kPodScheduled, "False", "Unschedulable", d.message}, now);
      if (d.nominated_node_name) changed = SetNominatedNodeName(pod, *d.nominated_node_name) || changed;
      return changed;
    });
    if (!s.ok()) log->info("PodScheduled of {}: {}", key, s.ToString());
    if (message_changed) recorder_.Event(obj, kEventTypeWarning, "FailedScheduling", d.message);
    if (s.ok() && d.nominated_node_name) {
      assumed_nomination_[key] = *d.nominated_node_name;
      static_cast<void>(snapshot.RemoveNominatedPod(key));
      if (!d.nominated_node_name->empty()) {
        placement::Pod nominated = p.pod;
        nominated.nominated_node_name = *d.nominated_node_name;
        static_cast<void>(snapshot.AddNominatedPod(std::move(nominated)));
      }
    }
    ++summary.unschedulable;
    record(SchedulerMetrics::Result::kUnschedulable);
    requeue(key);
  }
  if (metrics) {
    int queued[3] = {0, 0, 0};  // active, backoff, unschedulable
    for (const auto& [key, q] : queue_) ++queued[q.unschedulable ? 2 : q.backoff_until > now ? 1 : 0];
    metrics->ReportPendingPods(queued[0], queued[1], queued[2]);
  }
  return summary;
}

void SchedulerController::Start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] {
    while (!stopping_) {
      std::optional<Time> deadline;
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto& [key, q] : queue_) {
          Time t = q.unschedulable ? q.unschedulable_since + options_.max_unschedulable_duration : q.backoff_until;
          if (!deadline || t < *deadline) deadline = t;
        }
      }
      {
        std::unique_lock<std::mutex> lock(wake_mu_);
        if (!wake_ && !stopping_ && !(deadline && *deadline <= clock_.Now())) {
          client::internal::WaitForClock(wake_cv_, lock, clock_, deadline, std::chrono::milliseconds(100));
        }
        wake_ = false;
      }
      if (stopping_) break;
      try {
        ScheduleOnce();
      } catch (const std::exception& e) {
        // Kept alive (see ReconcileLoop::ProcessOne); the pod is tried again on its backoff.
        Logger("scheduler")->error("scheduling pass threw: {}", e.what());
      }
    }
  });
}

void SchedulerController::Stop() {
  stopping_ = true;
  Wake();
  if (thread_.joinable()) thread_.join();
}

}  // namespace berth::controllers::scheduler
