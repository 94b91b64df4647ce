#include "controllers/kueue/visibility.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>

#include "api/unstructured.h"

namespace berth::controllers::kueue {

namespace {

using api::Object;

// Go's strconv.ParseInt(s, 10, 64) and its error text, which Kueue's options
// conversion returns as the BadRequest message.
StatusOr<int64_t> ParseInt64(const std::string& s) {
  const bool digits = !s.empty() && std::all_of(s.begin() + ((s[0] == '-' || s[0] == '+') ? 1 : 0), s.end(),
                                                [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || s == "-" || s == "+") {
    return BadRequestError("strconv.ParseInt: parsing \"" + s + "\": invalid syntax");
  }
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return BadRequestError("strconv.ParseInt: parsing \"" + s + "\": value out of range");
  return static_cast<int64_t>(v);
}

// SetDefaults_PendingWorkloadOptions, then boundedLimitOffset (utils.go).
StatusOr<std::pair<int64_t, int64_t>> LimitOffset(const VisibilityRequest& r) {
  int64_t limit = 0, offset = 0;
  if (r.limit) {
    BERTH_ASSIGN_OR_RETURN(limit, ParseInt64(*r.limit));
  }
  if (r.offset) {
    BERTH_ASSIGN_OR_RETURN(offset, ParseInt64(*r.offset));
  }
  if (limit == 0) limit = kDefaultPendingWorkloadsLimit;
  limit = std::clamp<int64_t>(limit, 0, kMaxPendingWorkloadsLimit);
  return std::make_pair(limit, std::max<int64_t>(offset, 0));
}

// newPendingWorkload (utils.go): the workload's name, namespace, creation
// time and owner references (apiVersion, kind, name, uid only).
// berth adds `estimatedStart` (start_time_estimates.h EstimateJson) from the
// controller's last estimate pass, when it has one for the workload.
Object PendingWorkload(const PendingWorkloadEntry& e, int64_t position_in_lq, int64_t position_in_cq,
                       const KueueController::Estimates* estimates) {
  const Object& wl = *e.workload;
  Object meta = {{"name", api::NestedString(wl, {"metadata", "name"})},
                 {"namespace", api::NestedString(wl, {"metadata", "namespace"})},
                 {"creationTimestamp", api::NestedString(wl, {"metadata", "creationTimestamp"})}};
  const Object& owners = api::NestedField(wl, {"metadata", "ownerReferences"});
  if (owners.is_array() && !owners.empty()) {
    Object refs = Object::array();
    for (const Object& o : owners) {
      Object ref = Object::object();
      for (const char* k : {"apiVersion", "kind", "name", "uid"}) ref[k] = api::StringAt(o, k);
      refs.push_back(std::move(ref));
    }
    meta["ownerReferences"] = std::move(refs);
  }
  Object out = {{"metadata", std::move(meta)},
                {"priority", e.priority},
                {"localQueueName", api::NestedString(wl, {"spec", "queueName"})},
                {"positionInClusterQueue", position_in_cq},
                {"positionInLocalQueue", position_in_lq}};
  if (estimates != nullptr) {
    const std::string uid = api::NestedString(wl, {"metadata", "uid"});
    if (auto it = estimates->result.by_uid.find(uid); it != estimates->result.by_uid.end()) {
      out["estimatedStart"] = EstimateJson(&it->second, admission::UnknownBlockers{}, estimates->at);
    } else if (auto u = estimates->result.unknown.find(uid); u != estimates->result.unknown.end()) {
      out["estimatedStart"] = EstimateJson(nullptr, *u->second, estimates->at);
    }
  }
  return out;
}

Object Summary(const std::string& version, Object items) {
  return {{"kind", "PendingWorkloadsSummary"},
          {"apiVersion", std::string(kVisibilityGroup) + "/" + version},
          {"metadata", Object::object()},
          {"items", std::move(items)}};
}

Status QueueNotFound(const std::string& singular, const std::string& name) {
  return NotFoundError(singular + "." + kVisibilityGroup + " \"" + name + "\" not found");
}

}  // namespace

api::ApiServiceDescription VisibilityApiService() {
  api::ApiServiceDescription d;
  d.group = kVisibilityGroup;
  d.versions = {"v1beta2", "v1beta1"};
  d.resources = {
      {"clusterqueues", "clusterqueue", "ClusterQueue", false, {}},
      {"clusterqueues/pendingworkloads", "", "PendingWorkloadsSummary", false, {"get"}},
      {"localqueues", "localqueue", "LocalQueue", true, {}},
      {"localqueues/pendingworkloads", "", "PendingWorkloadsSummary", true, {"get"}},
  };
  return d;
}

StatusOr<Object> ServeVisibility(KueueController& controller, const VisibilityRequest& r) {
  const bool cluster_queue = r.resource == "clusterqueues" && r.namespace_.empty();
  const bool local_queue = r.resource == "localqueues" && !r.namespace_.empty();
  if ((!cluster_queue && !local_queue) || r.name.empty() || r.subresource != "pendingworkloads") {
    return NotFoundError("the server could not find the requested resource");
  }
  if (r.verb != "get") {
    return MethodNotAllowedError("the server does not allow this method on the requested resource");
  }
  BERTH_ASSIGN_OR_RETURN(auto limit_offset, LimitOffset(r));
  const auto [limit, offset] = limit_offset;
  Object items = Object::array();
  const std::shared_ptr<const KueueController::Estimates> estimates = controller.LatestEstimates();

  if (cluster_queue) {
    auto pending = controller.PendingWorkloads(r.name);
    if (!pending) return QueueNotFound("clusterqueue", r.name);
    // Positions in each LocalQueue count every earlier workload of the queue.
    std::map<std::pair<std::string, std::string>, int64_t> lq_positions;
    for (int64_t i = 0; i < offset + limit && i < static_cast<int64_t>(pending->size()); ++i) {
      const PendingWorkloadEntry& e = (*pending)[i];
      int64_t& lq = lq_positions[{api::NestedString(*e.workload, {"metadata", "namespace"}),
                                  api::NestedString(*e.workload, {"spec", "queueName"})}];
      if (i >= offset) items.push_back(PendingWorkload(e, lq, i, estimates.get()));
      ++lq;
    }
    return Summary(r.version, std::move(items));
  }

  client::ObjectPtr lq = controller.cache().local_queues().GetIndexer().Get(r.namespace_, r.name);
  if (!lq) return QueueNotFound("localqueue", r.name);
  auto pending = controller.PendingWorkloads(api::NestedString(*lq, {"spec", "clusterQueue"}));
  if (!pending) return Summary(r.version, std::move(items));
  int64_t skipped = 0;
  for (size_t i = 0; i < pending->size() && static_cast<int64_t>(items.size()) < limit; ++i) {
    const PendingWorkloadEntry& e = (*pending)[i];
    if (api::NestedString(*e.workload, {"metadata", "namespace"}) != r.namespace_ ||
        api::NestedString(*e.workload, {"spec", "queueName"}) != r.name) {
      continue;
    }
    if (skipped < offset) {
      ++skipped;
    } else {
      items.push_back(PendingWorkload(e, static_cast<int64_t>(items.size()) + offset, static_cast<int64_t>(i),
                                      estimates.get()));
    }
  }
  return Summary(r.version, std::move(items));
}

}  // namespace berth::controllers::kueue
