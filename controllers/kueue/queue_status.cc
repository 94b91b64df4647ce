#include "controllers/kueue/queue_status.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <map>

#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/kueue/decoder.h"
#include "core/quantity.h"

namespace berth::controllers::kueue {

using admission::Amount;
using api::Condition;
using api::SetCondition;

api::Object FlavorsStatus(const api::Object& cluster_queue, const std::vector<QueuedWorkload>& workloads,
                          bool admitted_only, bool with_borrowed, admission::ResourceNames& names) {
  std::map<std::pair<std::string, admission::ResourceId>, Amount> totals;
  for (const QueuedWorkload& w : workloads) {
    if (!w.holds_quota || (admitted_only && !w.admitted)) continue;
    for (const auto& u : w.usage) totals[{u.flavor, u.resource}] = admission::AddAmount(totals[{u.flavor, u.resource}], u.amount);
  }
  admission::ClusterQueue spec = DecodeClusterQueue(cluster_queue, names);
  api::Object out = api::Object::array();
  for (const admission::ResourceGroup& g : spec.resource_groups) {
    for (const admission::FlavorQuotas& f : g.flavors) {
      api::Object resources = api::Object::array();
      for (size_t i = 0; i < g.covered_resources.size(); ++i) {
        admission::ResourceId r = g.covered_resources[i];
        Amount total = totals.count({f.flavor, r}) ? totals[{f.flavor, r}] : 0;
        api::Object entry = {{"name", names.Name(r)}, {"total", admission::FormatAmount(names.Name(r), total)}};
        if (with_borrowed) {
          Amount nominal = i < f.resources.size() ? f.resources[i].nominal : 0;
          entry["borrowed"] =
              admission::FormatAmount(names.Name(r), total > nominal ? admission::SubAmount(total, nominal) : 0);
        }
        resources.push_back(std::move(entry));
      }
      out.push_back({{"name", f.flavor}, {"resources", std::move(resources)}});
    }
  }
  return out;
}

namespace {

void SetCounts(api::Object* status, int pending, const std::vector<QueuedWorkload>& workloads) {
  int reserving = 0, admitted = 0;
  for (const QueuedWorkload& w : workloads) {
    if (!w.holds_quota) continue;
    ++reserving;
    if (w.admitted) ++admitted;
  }
  (*status)["pendingWorkloads"] = pending;
  (*status)["reservingWorkloads"] = reserving;
  (*status)["admittedWorkloads"] = admitted;
}

}  // namespace

api::Object ClusterQueueStatus(const api::Object& cluster_queue, const admission::Snapshot& snapshot, int cq,
                               int pending, const std::vector<QueuedWorkload>& workloads,
                               admission::ResourceNames& names, Time now) {
  api::Object obj = {{"status", cluster_queue.value("status", api::Object::object())}};
  if (!obj["status"].is_object()) obj["status"] = api::Object::object();
  if (auto m = cluster_queue.find("metadata"); m != cluster_queue.end() && m->contains("generation")) {
    obj["metadata"]["generation"] = (*m)["generation"];
  }
  const bool active = cq >= 0 && snapshot.Active(cq);
  SetCondition(&obj,
               {"Active", active ? "True" : "False", cq >= 0 ? snapshot.ActiveReason(cq) : "Unknown",
                cq >= 0 ? snapshot.ActiveMessage(cq) : "Can't admit new workloads"},
               now);
  api::Object& status = obj["status"];
  SetCounts(&status, pending, workloads);
  status["flavorsReservation"] = FlavorsStatus(cluster_queue, workloads, false, true, names);
  status["flavorsUsage"] = FlavorsStatus(cluster_queue, workloads, true, true, names);
  return status;
}

api::Object LocalQueueStatus(const api::Object& local_queue, const api::Object* cluster_queue, bool cq_active,
                             int pending, const std::vector<QueuedWorkload>& workloads,
                             admission::ResourceNames& names, Time now) {
  api::Object obj = {{"status", local_queue.value("status", api::Object::object())}};
  if (!obj["status"].is_object()) obj["status"] = api::Object::object();
  if (auto m = local_queue.find("metadata"); m != local_queue.end() && m->contains("generation")) {
    obj["metadata"]["generation"] = (*m)["generation"];
  }
  const bool stopped = local_queue.contains("spec") &&
                       DecodeStopPolicy(local_queue["spec"]) != admission::StopPolicy::kNone;
  Condition c{"Active", "True", "Ready", "Can submit new workloads to localQueue"};
  if (stopped) {
    c = {"Active", "False", "Stopped", "LocalQueue is stopped"};
  } else if (cluster_queue == nullptr || !cq_active) {
    c = {"Active", "False", "ClusterQueueIsInactive", "Can't submit new workloads to clusterQueue"};
  }
  SetCondition(&obj, c, now);
  api::Object& status = obj["status"];
  SetCounts(&status, pending, workloads);
  if (cluster_queue != nullptr) {
    status["flavorsReservation"] = FlavorsStatus(*cluster_queue, workloads, false, false, names);
    status["flavorsUsage"] = FlavorsStatus(*cluster_queue, workloads, true, false, names);
  }
  return status;
}

void SetAdmissionFairSharingStatus(api::Object* status, const admission::UsageAmounts& consumed, Time last_update) {
  api::Object resources = api::Object::object();
  for (const auto& [name, milli] : consumed) resources[name] = FormatConsumedAmount(name, milli);
  api::Object& fs = (*status)["fairSharing"];
  if (!fs.is_object()) fs = api::Object::object();
  if (!fs.contains("weightedShare")) fs["weightedShare"] = 0;
  fs["admissionFairSharingStatus"] = {{"consumedResources", std::move(resources)},
                                      {"lastUpdate", FormatRfc3339(last_update)}};
}

std::string FormatConsumedAmount(const std::string& resource, double milli) {
  if (!std::isfinite(milli) || milli < 0) milli = 0;
  const double nano = std::round(milli * 1e6);
  // Below 10^6 units the nanos fit an int64 with room to spare; above, a milli-unit is
  // far below what changes an order.
  if (milli < 1e9 && std::fmod(nano, 1e6) != 0) return std::to_string(static_cast<int64_t>(nano)) + "n";
  return admission::FormatAmount(resource, static_cast<Amount>(std::floor(milli)));
}

std::optional<double> ParseConsumedAmount(const std::string& text) {
  // The nano and micro forms exactly (Quantity keeps milli-units); the rest as a Quantity.
  for (const auto& [suffix, milli_per] : {std::pair<char, double>{'n', 1e-6}, {'u', 1e-3}}) {
    if (text.size() < 2 || text.back() != suffix) continue;
    int64_t v = 0;
    const char* end = text.data() + text.size() - 1;
    auto [p, ec] = std::from_chars(text.data(), end, v);
    if (ec == std::errc() && p == end && v >= 0) return static_cast<double>(v) * milli_per;
  }
  auto q = Quantity::Parse(text);
  if (!q.ok() || q.value().milli() < 0) return std::nullopt;
  return static_cast<double>(q.value().milli());
}

admission::UsageAmounts PersistedConsumedResources(const api::Object& local_queue) {
  admission::UsageAmounts out;
  const api::Object& consumed =
      api::NestedField(local_queue, {"status", "fairSharing", "admissionFairSharingStatus", "consumedResources"});
  if (!consumed.is_object()) return out;
  for (auto it = consumed.begin(); it != consumed.end(); ++it) {
    const api::Object& v = it.value();
    if (auto milli = ParseConsumedAmount(v.is_string() ? v.get<std::string>() : v.dump())) out[it.key()] = *milli;
  }
  return out;
}

admission::UsageAmounts AdmittedUsage(const std::vector<QueuedWorkload>& workloads,
                                      const admission::ResourceNames& names) {
  admission::UsageAmounts out;
  for (const QueuedWorkload& w : workloads) {
    if (!w.holds_quota || !w.admitted) continue;
    for (const auto& u : w.usage) out[names.Name(u.resource)] += static_cast<double>(u.amount);
  }
  return out;
}

}  // namespace berth::controllers::kueue
