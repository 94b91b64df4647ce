#include "controllers/nodelifecycle/node_lifecycle_controller.h"

#include <algorithm>
#include <optional>

#include "client/indexer.h"
#include "core/logging.h"

namespace berth::controllers::nodelifecycle {
namespace {

const client::GroupVersionResource kNodes{"", "v1", "nodes"};
const client::GroupVersionResource kPods{"", "v1", "pods"};
constexpr char kLeaseNamespace[] = "kube-node-lease";
constexpr char kUnknownReason[] = "NodeStatusUnknown";
constexpr char kUnknownMessage[] = "Kubelet stopped posting node status.";

const api::Object* NodeCondition(const api::Object& node, std::string_view type) {
  auto st = node.find("status");
  if (st == node.end() || !st->contains("conditions")) return nullptr;
  for (const api::Object& c : (*st)["conditions"]) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

bool NodeReady(const api::Object& node) {
  const api::Object* ready = NodeCondition(node, "Ready");
  return ready != nullptr && ready->value("status", "") == "True";
}

// The heartbeat an agent last wrote, as text: its Lease's spec.renewTime, else the Ready
// condition's lastHeartbeatTime; "" when it wrote neither.
std::string HeartbeatWritten(const api::Object& node, const api::Object* lease) {
  if (lease != nullptr) {
    const api::Object& spec = lease->value("spec", api::Object::object());
    if (auto it = spec.find("renewTime"); it != spec.end() && it->is_string()) return it->get<std::string>();
  }
  if (const api::Object* ready = NodeCondition(node, "Ready")) return ready->value("lastHeartbeatTime", "");
  return "";
}

// How long the pod tolerates the unreachable NoExecute taint: nullopt = not
// at all, Duration::max() = forever.
std::optional<Duration> Toleration(const api::Object& pod) {
  std::optional<Duration> best;
  for (const api::Object& t : pod["spec"].value("tolerations", api::Object::array())) {
    const std::string op = t.value("operator", "Equal");
    const std::string key = t.value("key", "");
    const std::string effect = t.value("effect", "");
    const bool key_matches = (op == "Exists" && key.empty()) || key == kUnreachableTaint;
    if (!key_matches || (!effect.empty() && effect != "NoExecute")) continue;
    Duration d = Duration::max();
    if (auto s = t.find("tolerationSeconds"); s != t.end() && s->is_number_integer()) {
      d = std::chrono::seconds(std::max<int64_t>(0, s->get<int64_t>()));
    }
    if (!best || d > *best) best = d;
  }
  return best;
}

}  // namespace

bool HasTaint(const api::Object& node, std::string_view key) {
  for (const api::Object& t : node.value("spec", api::Object::object()).value("taints", api::Object::array())) {
    if (t.value("key", "") == key) return true;
  }
  return false;
}

NodeLifecycleController::NodeLifecycleController(client::Client& client, client::Informer& nodes,
                                                 client::Informer& leases, client::Informer& pods, Clock& clock,
                                                 EventRecorder& recorder, NodeLifecycleOptions options)
    : client_(client),
      nodes_(nodes),
      leases_(leases),
      pods_(pods),
      clock_(clock),
      recorder_(recorder),
      options_(options) {
  // Shared with other controllers through the informer factory: an index
  // already added under this name is this one.
  (void)pods_.AddIndexer(kPodNodeNameIndex, [](const api::Object& pod) -> std::vector<std::string> {
    std::string node = pod.value("spec", api::Object::object()).value("nodeName", "");
    if (node.empty()) return {};
    return {std::move(node)};
  });
}

bool NodeLifecycleController::SetReadyFalse(api::Object* pod) {
  api::Object& conditions = (*pod)["status"]["conditions"];
  if (!conditions.is_array()) return false;
  for (api::Object& c : conditions) {
    if (c.value("type", "") != "Ready") continue;
    if (c.value("status", "") == "False") return false;
    c["status"] = "False";
    c["lastTransitionTime"] = FormatRfc3339(clock_.Now());
    return true;
  }
  return false;
}

bool NodeLifecycleController::SetDisruptionTarget(api::Object* pod, const std::string& reason,
                                                  const std::string& message) {
  api::Object& conditions = (*pod)["status"]["conditions"];
  if (!conditions.is_array()) conditions = api::Object::array();
  api::Object kept = api::Object::array();
  for (api::Object& c : conditions) {
    if (c.value("type", "") != "DisruptionTarget") {
      kept.push_back(std::move(c));
    } else if (c.value("status", "") == "True" && c.value("reason", "") == reason &&
               c.value("message", "") == message) {
      return false;
    }
  }
  // Replaced, as upstream's UpdatePodCondition.
  kept.push_back({{"type", "DisruptionTarget"},
                  {"status", "True"},
                  {"reason", reason},
                  {"message", message},
                  {"lastTransitionTime", FormatRfc3339(clock_.Now())}});
  conditions = std::move(kept);
  return true;
}

Status NodeLifecycleController::ForceDelete(const api::Object& pod, const std::string& condition_reason,
                                            const std::string& condition_message) {
  const client::ResourceRef ref = kPods.Namespace(api::Namespace(pod));
  const std::string phase = pod.value("status", api::Object::object()).value("phase", "");
  if (phase != "Succeeded" && phase != "Failed") {
    // Upstream markFailedAndDeletePodWithCondition (pkg/controller/podgc/gc_controller.go).
    api::Object failed = pod;
    failed["status"]["phase"] = "Failed";
    if (!condition_reason.empty()) SetDisruptionTarget(&failed, condition_reason, condition_message);
    auto res = client_.UpdateStatus(ref, failed);
    if (!res.ok() && res.status().code() != Code::kNotFound) return res.status();
  }
  client::DeleteOptions force;
  force.grace_period_seconds = 0;
  Status deleted = client_.Delete(ref, api::Name(pod), force);
  if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
  return Status::Ok();
}

std::vector<client::ObjectPtr> NodeLifecycleController::PodsBoundTo(const std::string& node_name) const {
  auto pods = pods_.GetIndexer().ByIndex(kPodNodeNameIndex, node_name);
  return pods.ok() ? std::move(pods).value() : std::vector<client::ObjectPtr>{};
}

StatusOr<NodeVerdict> NodeLifecycleController::CollectOrphans(const std::string& node_name) {
  std::vector<client::ObjectPtr> pods = PodsBoundTo(node_name);
  const Time now = clock_.Now();
  Time missing_since;
  {
    std::lock_guard<std::mutex> lock(mu_);
    probes_.erase(node_name);
    if (pods.empty()) {
      missing_since_.erase(node_name);
      return NodeVerdict{};
    }
    missing_since = missing_since_.emplace(node_name, now).first->second;
  }
  const Time deadline = missing_since + options_.orphan_quarantine;
  if (now < deadline) {
    return NodeVerdict{true, std::chrono::duration_cast<Duration>(deadline - now) + std::chrono::seconds(1)};
  }
  for (const client::ObjectPtr& p : pods) {
    BERTH_RETURN_IF_ERROR(ForceDelete(*p, "DeletionByPodGC", "PodGC: node no longer exists"));
    Logger("node-lifecycle")
        ->warn("pod {}/{} was bound to node {}, which no longer exists: failed and deleted", api::Namespace(*p),
               api::Name(*p), node_name);
  }
  return NodeVerdict{false, Duration::zero()};
}

StatusOr<NodeVerdict> NodeLifecycleController::Reconcile(const std::string& node_name) {
  client::ObjectPtr node = nodes_.GetIndexer().Get("", node_name);
  if (!node) return CollectOrphans(node_name);
  if (api::BeingDeleted(*node)) return NodeVerdict{};
  const Time now = clock_.Now();
  client::ObjectPtr lease = leases_.GetIndexer().Get(kLeaseNamespace, node_name);
  const std::string written = HeartbeatWritten(*node, lease.get());
  Time heartbeat;
  {
    // Upstream's probe timestamps (tryUpdateNodeHealth): the heartbeat is when this
    // controller saw the agent's heartbeat change, by its own clock, never the time the
    // agent wrote. A restarted control plane thus gives every agent a full grace period, and
    // a node that writes a renewTime far in the future is still lost once it stops renewing.
    std::lock_guard<std::mutex> lock(mu_);
    missing_since_.erase(node_name);
    auto [it, first] = probes_.try_emplace(node_name, Probe{written, now});
    if (!first && it->second.written != written) it->second = Probe{written, now};
    heartbeat = it->second.seen_at;
  }

  const Time deadline = heartbeat + options_.grace_period;
  if (now < deadline) {
    if (HasTaint(*node, kUnreachableTaint)) BERTH_RETURN_IF_ERROR(MarkReachable(*node));
    if (!NodeReady(*node) && HasTaint(*node, kOutOfServiceTaint)) BERTH_RETURN_IF_ERROR(CollectTerminating(*node));
    return NodeVerdict{true, std::chrono::duration_cast<Duration>(deadline - now) + std::chrono::seconds(1)};
  }
  if (!HasTaint(*node, kUnreachableTaint)) BERTH_RETURN_IF_ERROR(MarkUnreachable(*node));
  BERTH_ASSIGN_OR_RETURN(Duration recheck, EvictPods(*node, deadline));
  if (HasTaint(*node, kOutOfServiceTaint)) BERTH_RETURN_IF_ERROR(CollectTerminating(*node));
  return NodeVerdict{false, recheck};
}

Status NodeLifecycleController::MarkUnreachable(const api::Object& node) {
  const std::string now = FormatRfc3339(clock_.Now());
  api::Object updated = node;
  api::Object& conditions = updated["status"]["conditions"];
  if (!conditions.is_array()) conditions = api::Object::array();
  for (api::Object& c : conditions) {
    if (c.value("status", "") != "Unknown") c["lastTransitionTime"] = now;
    c["status"] = "Unknown";
    c["reason"] = kUnknownReason;
    c["message"] = kUnknownMessage;
  }
  BERTH_ASSIGN_OR_RETURN(api::Object written, client_.UpdateStatus(kNodes, updated));
  api::Object& taints = written["spec"]["taints"];
  if (!taints.is_array()) taints = api::Object::array();
  for (const char* effect : {"NoSchedule", "NoExecute"}) {
    taints.push_back({{"key", kUnreachableTaint}, {"effect", effect}, {"timeAdded", now}});
  }
  BERTH_RETURN_IF_ERROR(client_.Update(kNodes, written).status());
  recorder_.Event(node, "Normal", "NodeNotReady", "Node " + api::Name(node) + " status is now: NodeNotReady");
  Logger("node-lifecycle")->warn("node {} stopped heartbeating: marked unreachable", api::Name(node));
  return Status::Ok();
}

Status NodeLifecycleController::MarkReachable(const api::Object& node) {
  api::Object updated = node;
  api::Object kept = api::Object::array();
  for (const api::Object& t : updated["spec"].value("taints", api::Object::array())) {
    if (t.value("key", "") != kUnreachableTaint) kept.push_back(t);
  }
  updated["spec"]["taints"] = kept;
  BERTH_ASSIGN_OR_RETURN(api::Object written, client_.Update(kNodes, updated));
  const std::string now = FormatRfc3339(clock_.Now());
  for (api::Object& c : written["status"]["conditions"]) {
    const bool ready = c.value("type", "") == "Ready";
    if (c.value("reason", "") != kUnknownReason) continue;
    c["status"] = ready ? "True" : "False";
    c["lastTransitionTime"] = now;
    c["lastHeartbeatTime"] = now;
    c["reason"] = ready ? "KubeletReady" : "NodeStatusKnown";
    c["message"] = ready ? "kubelet is posting ready status" : "node status known again";
  }
  BERTH_RETURN_IF_ERROR(client_.UpdateStatus(kNodes, written).status());
  recorder_.Event(node, "Normal", "NodeReady", "Node " + api::Name(node) + " status is now: NodeReady");
  return Status::Ok();
}

StatusOr<Duration> NodeLifecycleController::EvictPods(const api::Object& node, Time unreachable_since) {
  const Time now = clock_.Now();
  Duration recheck = Duration::zero();
  for (const client::ObjectPtr& p : PodsBoundTo(api::Name(node))) {
    const std::string phase = (*p).value("status", api::Object::object()).value("phase", "");
    if (phase == "Succeeded" || phase == "Failed") continue;
    // Upstream MarkPodsNotReady (pkg/controller/util/node/controller_utils.go): nobody can
    // say the pod is ready any more, whether or not it tolerates the taint.
    api::Object marked = *p;
    const bool not_ready = SetReadyFalse(&marked);
    bool evict = !api::BeingDeleted(*p);
    if (std::optional<Duration> tolerated = Toleration(*p); evict && tolerated) {
      const Time until = *tolerated == Duration::max() ? Time::max() : unreachable_since + *tolerated;
      if (now < until) {
        evict = false;
        if (until != Time::max()) {
          const Duration left = std::chrono::duration_cast<Duration>(until - now) + std::chrono::seconds(1);
          if (recheck == Duration::zero() || left < recheck) recheck = left;
        }
      }
    }
    // Upstream's addConditionAndDeletePod (pkg/controller/tainteviction/taint_eviction.go):
    // the condition, then a graceful delete. Nothing here says the pod's processes stopped:
    // it stays terminating, holding its slot and its quota, until its agent confirms, the
    // Node is deleted (CollectOrphans) or marked out of service (CollectTerminating).
    const bool disrupted = evict && SetDisruptionTarget(&marked, "DeletionByTaintManager",
                                                        "Taint manager: deleting due to NoExecute taint");
    if (not_ready || disrupted) {
      auto res = client_.UpdateStatus(kPods.Namespace(api::Namespace(*p)), marked);
      if (!res.ok()) {
        if (res.status().code() == Code::kNotFound) continue;
        return res.status();
      }
      if (not_ready) recorder_.Event(*p, "Warning", "NodeNotReady", "Node is not ready");
    }
    if (!evict) continue;
    client::DeleteOptions graceful;
    graceful.preconditions.uid = api::Uid(*p);
    Status deleted = client_.Delete(kPods.Namespace(api::Namespace(*p)), api::Name(*p), graceful);
    if (!deleted.ok() && deleted.code() != Code::kNotFound && deleted.code() != Code::kConflict) return deleted;
    recorder_.Event(*p, "Normal", "TaintManagerEviction",
                    "Marking for deletion Pod " + api::Namespace(*p) + "/" + api::Name(*p));
    Logger("node-lifecycle")
        ->warn(
            "node {} is unreachable: pod {}/{} marked for deletion; it is gone once its agent confirms, or "
            "once the Node is deleted or tainted {}",
            api::Name(node), api::Namespace(*p), api::Name(*p), kOutOfServiceTaint);
  }
  return recheck;
}

Status NodeLifecycleController::CollectTerminating(const api::Object& node) {
  for (const client::ObjectPtr& p : PodsBoundTo(api::Name(node))) {
    if (!api::BeingDeleted(*p)) continue;
    BERTH_RETURN_IF_ERROR(ForceDelete(*p, "", ""));
    Logger("node-lifecycle")
        ->warn("pod {}/{} was terminating on node {}, which is out of service: failed and deleted", api::Namespace(*p),
               api::Name(*p), api::Name(node));
  }
  return Status::Ok();
}

}  // namespace berth::controllers::nodelifecycle
