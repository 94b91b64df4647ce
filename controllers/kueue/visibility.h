// Kueue's on-demand visibility API (VisibilityOnDemand, on by default since
// Kueue 0.9): the pending workloads of a ClusterQueue or a LocalQueue with
// their positions, answered from the Kueue controller's queues.
//
// Follows kubernetes-sigs/kueue pkg/visibility/storage/pending_workloads_cq.go,
// pending_workloads_lq.go and utils.go, with the types of
// apis/visibility/v1beta2/types.go (v1beta1 has the same shape):
//   GET /apis/visibility.kueue.x-k8s.io/{v1beta1|v1beta2}/clusterqueues/{cq}/pendingworkloads
//   GET /apis/visibility.kueue.x-k8s.io/{v}/namespaces/{ns}/localqueues/{lq}/pendingworkloads
//   query: offset (default 0), limit (default 1000, at most 100,000; negative
//   values count as 0).
// Answer: PendingWorkloadsSummary
//   {"kind":"PendingWorkloadsSummary","apiVersion":"visibility.kueue.x-k8s.io/<v>",
//    "metadata":{},"items":[{"metadata":{"name","namespace","creationTimestamp",
//    "ownerReferences":[{apiVersion,kind,name,uid}]},"priority":P,
//    "localQueueName":LQ,"positionInClusterQueue":I,"positionInLocalQueue":J,
//    "estimatedStart":{...}}]}
// estimatedStart is berth's (start_time_estimates.h EstimateJson, from the
// controller's last estimate pass; absent before one or when the workload
// fits now). Kueue's clients ignore the field.
// Positions count from 0 over the whole queue in queue order
// (KueueController::PendingWorkloads): a ClusterQueue's items are positions
// offset..offset+limit-1; a LocalQueue's are its own workloads from its
// offset-th, with their ClusterQueue positions.
//
// Errors: kNotFound `clusterqueue.visibility.kueue.x-k8s.io "x" not found`
// (resp. localqueue) when the queue is unknown, as upstream names the
// resource in the singular; kBadRequest for a limit or offset that is not an
// integer; kNotFound for any other resource of the group; kMethodNotAllowed
// for verbs other than get.
//
// Thread-safety: any thread (the controller's queues are read under its lock).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/api_service.h"
#include "api/object.h"
#include "controllers/kueue/kueue_controller.h"
#include "core/status.h"

namespace berth::controllers::kueue {

inline constexpr char kVisibilityGroup[] = "visibility.kueue.x-k8s.io";
// Kueue's constants.DefaultPendingWorkloadsLimit and MaxPendingWorkloadsLimit.
inline constexpr int64_t kDefaultPendingWorkloadsLimit = 1000;
inline constexpr int64_t kMaxPendingWorkloadsLimit = 100000;

// The group as discovery lists it (Kueue's APIServices v1beta2 and v1beta1):
// clusterqueues and localqueues serve no verb themselves, their
// pendingworkloads subresource serves get.
api::ApiServiceDescription VisibilityApiService();

// One request of the group, as the API server parsed it.
struct VisibilityRequest {
  std::string verb;  // "get", "list", ...
  std::string version;
  std::string namespace_;
  std::string resource;
  std::string name;
  std::string subresource;
  std::optional<std::string> limit, offset;  // query values as sent
};

StatusOr<api::Object> ServeVisibility(KueueController& controller, const VisibilityRequest& request);

}  // namespace berth::controllers::kueue
