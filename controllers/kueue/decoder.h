// The edge between Kueue's API objects (kueue.x-k8s.io/v1beta2 JSON, as
// stored) and the admission engine's compact structs (admission/model.h).
// Every controller in controllers/kueue decodes through this one module, and
// encodes the engine's decisions (status.admission) back through it.
//
// Quantities are parsed with berth::Quantity (core/quantity.h) and become
// milli-unit Amounts; both JSON strings ("4", "500m", "8Gi") and JSON numbers
// are accepted, as int-or-string fields allow. A malformed quantity decodes
// as 0 (the API server's schema validation rejects them before they are
// stored; the controllers never crash on a bad object).
//
// Workload decoding (DecodeWorkload) follows Kueue's workload.Info:
//   - podSets: per-pod requests from the template through
//     scheduling::PodRequests (requests, limits as defaults, init containers,
//     sidecars, overhead: scheduling/pod_requests.h); nodeSelector, required node
//     affinity and tolerations for the flavor assigner; reclaimable pods from
//     status.reclaimablePods;
//   - priority = spec.priority (0 when unset); active = spec.active (default
//     true); finished = Finished=True;
//   - quota state: QuotaReserved=True → kAdmitted with status.admission and
//     the condition's lastTransitionTime; Evicted=True on top → kEvicting
//     (berth's departure: evicted workloads keep quota until their pods are
//     gone), with the preemptor uid read back from the Preempted condition's
//     "(UID: <uid>, ..." message;
//   - queue-order timestamp = metadata.creationTimestamp.
// The ClusterQueue and the namespaceSelector verdict are resolved by the
// caller (they need other objects).
//
// Thread-safety: pure functions; `names` is the caller's interning table
// (see admission::ResourceNames).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "admission/model.h"
#include "api/object.h"
#include "client/client.h"

namespace berth::controllers::kueue {

// Resources (storage versions) the Kueue controllers use.
extern const client::GroupVersionResource kResourceFlavors;
extern const client::GroupVersionResource kClusterQueues;
extern const client::GroupVersionResource kCohorts;
extern const client::GroupVersionResource kLocalQueues;
extern const client::GroupVersionResource kWorkloadPriorityClasses;
extern const client::GroupVersionResource kWorkloads;
extern const client::GroupVersionResource kNamespaces;
extern const client::GroupVersionResource kPriorityClasses;
inline constexpr char kKueueApiVersion[] = "kueue.x-k8s.io/v1beta2";

// Labels, annotations and finalizers (Kueue's pkg/controller/constants/constants.go,
// apis/kueue/v1beta2/constants.go).
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kPriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
inline constexpr char kJobUidLabel[] = "kueue.x-k8s.io/job-uid";
inline constexpr char kResourceInUseFinalizer[] = "kueue.x-k8s.io/resource-in-use";

// A quantity field (string or number) as milli-units; 0 when absent or malformed.
admission::Amount DecodeAmount(const api::Object& value);
// {"cpu": "4", ...} ⇄ ResourceList.
admission::ResourceList DecodeResourceList(const api::Object& list, admission::ResourceNames& names);
api::Object EncodeResourceList(const admission::ResourceList& list, const admission::ResourceNames& names);

admission::ResourceFlavor DecodeResourceFlavor(const api::Object& rf);
admission::ClusterQueue DecodeClusterQueue(const api::Object& cq, admission::ResourceNames& names);
admission::Cohort DecodeCohort(const api::Object& cohort, admission::ResourceNames& names);
admission::StopPolicy DecodeStopPolicy(const api::Object& spec);
// spec.fairSharing.weight of a ClusterQueue or Cohort spec as a real number
// (Kueue's AsFloat64Slow: a plain number at full precision, a suffixed
// Quantity such as "500m" via its milli-units; 1 when absent).
double DecodeFairWeight(const api::Object& spec);

// One podSet from a pod template (metadata + spec) and a count.
admission::PodSet DecodePodSet(const std::string& name, int32_t count, const api::Object& pod_template,
                               admission::ResourceNames& names);
// status.admission; nullopt when absent.
std::optional<admission::Admission> DecodeAdmission(const api::Object& workload, admission::ResourceNames& names);
// status.admission as written by Kueue:
//   {"clusterQueue": cq, "podSetAssignments": [{"name", "flavors": {res: flavor},
//    "resourceUsage": {res: qty}, "count"}]}
api::Object EncodeAdmission(const admission::Admission& admission, const admission::ResourceNames& names);

// The whole workload (see the file comment). cluster_queue is left empty.
admission::Workload DecodeWorkload(const api::Object& workload, admission::ResourceNames& names);

// metadata.creationTimestamp; epoch when absent.
Time CreationTime(const api::Object& obj);
// metadata.labels[key]; "" when absent.
std::string Label(const api::Object& obj, const std::string& key);
// metadata.annotations[key]; nullopt when absent.
std::optional<std::string> Annotation(const api::Object& obj, const std::string& key);
bool HasFinalizer(const api::Object& obj, const std::string& finalizer);

}  // namespace berth::controllers::kueue
