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

std::optional<Time> TimeField(const api::Object& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  Time t;
  if (!ParseRfc3339(it->get<std::string>(), &t)) return std::nullopt;
  return t;
}

const api::Object* NodeCondition(const api::Object& node, std::string_view type) {
  auto st = node.find("status");
  if (st == node.end() || !st->contains("conditions")) return nullptr;
  for (const api::Object& c : (*st)["conditions"]) {
    if (c.value("type", "") == type) return &c;
  }
  return nullptr;
}

bool HasUnreachableTaint(const api::Object& node) {
  for (const api::Object& t : node.value("spec", api::Object::object()).value("taints", api::Object::array())) {
    if (t.value("key", "") == kUnreachableTaint) return true;
  }
  return false;
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

Status NodeLifecycleController::FailPod(const api::Object& pod, const std::string& reason, const std::string& message,
                                        const std::string& condition_reason, const std::string& condition_message) {
  api::Object failed = pod;
  api::Object& status = failed["status"];
  status["phase"] = "Failed";
  if (!reason.empty()) status["reason"] = reason;
  if (!message.empty()) status["message"] = message;
  api::Object& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = api::Object::array();
  conditions.push_back({{"type", "DisruptionTarget"},
                        {"status", "True"},
                        {"reason", condition_reason},
                        {"message", condition_message},
                        {"lastTransitionTime", FormatRfc3339(clock_.Now())}});
  auto res = client_.UpdateStatus(kPods.Namespace(api::Namespace(pod)), failed);
  if (!res.ok() && res.status().code() != Code::kNotFound) return res.status();
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
    first_seen_.erase(node_name);
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
    const client::ResourceRef ref = kPods.Namespace(api::Namespace(*p));
    const std::string phase = (*p).value("status", api::Object::object()).value("phase", "");
    if (phase != "Succeeded" && phase != "Failed") {
      BERTH_RETURN_IF_ERROR(FailPod(*p, "", "", "DeletionByPodGC", "PodGC: node no longer exists"));
    }
    client::DeleteOptions force;
    force.grace_period_seconds = 0;
    Status deleted = client_.Delete(ref, api::Name(*p), force);
    if (!deleted.ok() && deleted.code() != Code::kNotFound) return deleted;
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
  std::optional<Time> heartbeat;
  if (client::ObjectPtr lease = leases_.GetIndexer().Get(kLeaseNamespace, node_name)) {
    heartbeat = TimeField((*lease)["spec"], "renewTime");
  }
  if (!heartbeat) {
    if (const api::Object* ready = NodeCondition(*node, "Ready")) heartbeat = TimeField(*ready, "lastHeartbeatTime");
  }
  if (!heartbeat) heartbeat = TimeField((*node)["metadata"], "creationTimestamp");
  if (!heartbeat) heartbeat = now;
  {
    // As upstream's probe timestamps: the grace period starts no earlier than
    // when this controller first saw the node, so a restarted control plane
    // does not declare every node lost before its agents had a chance to renew.
    std::lock_guard<std::mutex> lock(mu_);
    missing_since_.erase(node_name);
    auto [it, inserted] = first_seen_.emplace(node_name, now);
    if (it->second > *heartbeat) heartbeat = it->second;
  }

  const Time deadline = *heartbeat + options_.grace_period;
  if (now < deadline) {
    if (HasUnreachableTaint(*node)) BERTH_RETURN_IF_ERROR(MarkReachable(*node));
    return NodeVerdict{true, std::chrono::duration_cast<Duration>(deadline - now) + std::chrono::seconds(1)};
  }
  if (!HasUnreachableTaint(*node)) BERTH_RETURN_IF_ERROR(MarkUnreachable(*node));
  BERTH_ASSIGN_OR_RETURN(Duration recheck, FailPods(*node, deadline));
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

StatusOr<Duration> NodeLifecycleController::FailPods(const api::Object& node, Time unreachable_since) {
  const Time now = clock_.Now();
  Duration recheck = Duration::zero();
  for (const client::ObjectPtr& p : PodsBoundTo(api::Name(node))) {
    const std::string phase = (*p).value("status", api::Object::object()).value("phase", "");
    if (phase == "Succeeded" || phase == "Failed") continue;
    if (std::optional<Duration> tolerated = Toleration(*p)) {
      if (*tolerated == Duration::max()) continue;
      const Time until = unreachable_since + *tolerated;
      if (now < until) {
        const Duration left = std::chrono::duration_cast<Duration>(until - now) + std::chrono::seconds(1);
        if (recheck == Duration::zero() || left < recheck) recheck = left;
        continue;
      }
    }
    const std::string message =
        "Node " + api::Name(node) + " which was running pod " + api::Name(*p) + " is unresponsive";
    BERTH_RETURN_IF_ERROR(
        FailPod(*p, "NodeLost", message, "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint"));
    recorder_.Event(*p, "Warning", "NodeLost", message);
  }
  return recheck;
}

}  // namespace berth::controllers::nodelifecycle
