// The admission engine's data model: compact, typed copies of the Kueue
// objects the engine decides over (ResourceFlavor, ClusterQueue, Cohort,
// Workload). Controllers decode the API objects (kueue.x-k8s.io v1beta2) into
// these structs at their edge; the engine never sees JSON. The core/v1
// scheduling constraints they carry (taints, tolerations, node selector
// terms) are scheduling/'s types, shared with placement/.
//
// Units: every amount is an `Amount`, a signed int64 count of milli-units, the
// representation of berth::Quantity (core/quantity.h): "1" cpu is 1000, "500m"
// is 500, "8Gi" is 8 * 2^30 * 1000, the `pods` resource counts 1000 per pod.
// Arithmetic on amounts saturates (SaturatingAdd/SaturatingSub from
// core/quantity.h), as Kueue's resources.Amount does; `kUnlimited` (INT64_MAX)
// stands for "no limit" (a nil borrowingLimit, or a sum that saturated).
//
// Resource names are interned into dense `ResourceId`s by a `ResourceNames`
// table the caller owns and passes around (never a process-wide singleton);
// flavors are referred to by name in the model and interned by the Snapshot.
//
// Time values (queue-order timestamps, quota reservation times) are
// berth::Time values supplied by the caller; the engine never reads a clock.
//
// Thread-safety: plain values. ResourceNames is not synchronised: intern
// names while holding the same lock that protects the structs using them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "scheduling/node_selector.h"
#include "scheduling/taint.h"
#include "scheduling/toleration.h"

namespace berth::admission {

// ---------------------------------------------------------------------------
// Amounts and resource names

using Amount = int64_t;  // milli-units, see above
inline constexpr Amount kUnlimited = INT64_MAX;

Amount AddAmount(Amount a, Amount b);  // saturating
Amount SubAmount(Amount a, Amount b);  // saturating
// Canonical Kubernetes text of an amount of `resource`, as Kueue's
// ResourceFormatter prints quantities in statuses and messages
// (pkg/resources/resource_formatter.go): memory, ephemeral-storage and
// hugepages-* in binary SI re-parsed to their canonical form ("600Mi",
// "12Gi", and "1500M" for a byte count with no factor of 1024), every other
// resource in decimal SI ("1", "500m", "5").
std::string FormatAmount(std::string_view resource, Amount a);

// Dense id of an interned resource name ("cpu", "memory", "nvidia.com/gpu").
using ResourceId = int32_t;

// Interning table for resource names. Ids are dense, start at 0 and are
// stable for the table's lifetime.
class ResourceNames {
 public:
  ResourceId Intern(std::string_view name);
  // -1 when the name was never interned.
  ResourceId Find(std::string_view name) const;
  const std::string& Name(ResourceId id) const { return names_.at(static_cast<size_t>(id)); }
  size_t size() const { return names_.size(); }

  // The resource Kueue counts pods with when a ClusterQueue covers it.
  static constexpr std::string_view kPods = "pods";

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, ResourceId> ids_;
};

// A small sorted (by ResourceId) map from resource to amount: a container's
// requests, a pod's effective requests, a podSet's total. It is the `List` of
// scheduling/pod_requests.h (scheduling::PodRequests<ResourceList>).
class ResourceList {
 public:
  ResourceList() = default;
  ResourceList(std::initializer_list<std::pair<ResourceId, Amount>> items);

  Amount Get(ResourceId r) const;  // 0 when absent
  bool Has(ResourceId r) const;
  void Set(ResourceId r, Amount a);
  void Add(ResourceId r, Amount a);  // saturating
  // Per resource max(this, o) / this + o.
  void MaxWith(const ResourceList& o);
  void AddAll(const ResourceList& o);
  // Every amount multiplied by n (saturating).
  ResourceList Scaled(int64_t n) const;

  const std::vector<std::pair<ResourceId, Amount>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  bool operator==(const ResourceList&) const = default;

 private:
  std::vector<std::pair<ResourceId, Amount>> items_;  // sorted by id, unique
};

// ---------------------------------------------------------------------------
// Kueue objects

// kueue.x-k8s.io ResourceFlavor (spec).
struct ResourceFlavor {
  std::string name;
  scheduling::Labels node_labels;
  std::vector<scheduling::Taint> node_taints;
  std::vector<scheduling::Toleration> tolerations;
};

// Quota of one resource in one flavor of a ClusterQueue or Cohort.
struct ResourceQuota {
  Amount nominal = 0;
  std::optional<Amount> borrowing_limit;  // nullopt: unlimited borrowing
  std::optional<Amount> lending_limit;    // nullopt: everything may be lent
};

struct FlavorQuotas {
  std::string flavor;
  // One entry per covered resource, in coveredResources order (the API
  // requires the same order).
  std::vector<ResourceQuota> resources;
};

struct ResourceGroup {
  std::vector<ResourceId> covered_resources;
  std::vector<FlavorQuotas> flavors;  // in the order listed: the order tried
};

enum class QueueingStrategy { kStrictFIFO, kBestEffortFIFO };
enum class FungibilityPolicy { kMayStopSearch, kTryNextFlavor };
enum class FungibilityPreference { kUnset, kBorrowingOverPreemption, kPreemptionOverBorrowing };

// spec.flavorFungibility with the scheduler cache's defaults filled in
// (whenCanBorrow MayStopSearch, whenCanPreempt TryNextFlavor).
struct FlavorFungibility {
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  FungibilityPreference preference = FungibilityPreference::kUnset;
};

// withinClusterQueue uses Never/LowerPriority/LowerOrNewerEqualPriority;
// reclaimWithinCohort uses Never/LowerPriority/Any.
enum class PreemptionPolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority, kAny };

struct BorrowWithinCohort {
  enum class Policy { kNever, kLowerPriority };
  Policy policy = Policy::kNever;
  std::optional<int32_t> max_priority_threshold;
};

struct ClusterQueuePreemption {
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::kNever;
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::kNever;
  BorrowWithinCohort borrow_within_cohort;
};

enum class StopPolicy { kNone, kHold, kHoldAndDrain };

// kueue.x-k8s.io ClusterQueue (spec, plus activity facts the engine cannot
// derive itself).
struct ClusterQueue {
  std::string name;
  std::string cohort;  // spec.cohortName; empty: no cohort
  std::vector<ResourceGroup> resource_groups;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFIFO;
  FlavorFungibility flavor_fungibility;
  ClusterQueuePreemption preemption;
  StopPolicy stop_policy = StopPolicy::kNone;
  // spec.fairSharing.weight (a Quantity read as a real number; nil: 1). 0
  // means the queue borrows last: while it borrows its share is infinite
  // (admission/fair_sharing.h).
  double fair_weight = 1.0;
  // Reasons the caller knows the queue is inactive that the engine cannot
  // see (e.g. "Terminating", missing AdmissionChecks). Empty: none. The
  // Snapshot adds Stopped, FlavorNotFound and cohort cycles itself.
  std::string inactive_reason;
  std::string inactive_message;
};

// kueue.x-k8s.io Cohort (spec). Cohorts named only by a ClusterQueue's
// cohortName or a Cohort's parentName exist implicitly with no quota.
struct Cohort {
  std::string name;
  std::string parent;  // spec.parentName; empty: a root
  std::vector<ResourceGroup> resource_groups;
  // spec.fairSharing.weight, as ClusterQueue::fair_weight. Implicit cohorts
  // weigh 1.
  double fair_weight = 1.0;
};

// ---------------------------------------------------------------------------
// Workload

struct PodSet {
  std::string name = "main";
  int32_t count = 1;
  // spec.podSets[i].minCount: the fewest pods the podSet may be admitted
  // with (partial admission, admission/podset_reducer.h). nullopt: exactly
  // `count`.
  std::optional<int32_t> min_count;
  // Effective requests of ONE pod (scheduling/pod_requests.h: how they are
  // derived from containers; requests, never limits).
  ResourceList requests;
  scheduling::Labels node_selector;
  std::vector<scheduling::NodeSelectorTerm> required_affinity_terms;  // ORed; empty: none
  std::vector<scheduling::Toleration> tolerations;
  // status.reclaimablePods for this podSet: pods that finished and whose
  // quota is given back (ReclaimablePods, GA).
  int32_t reclaimable = 0;
};

// Flavor chosen for one resource of a podSet.
struct ResourceFlavorAssignment {
  ResourceId resource = 0;
  std::string flavor;
  bool operator==(const ResourceFlavorAssignment&) const = default;
};

// status.admission.podSetAssignments[i].
struct PodSetAssignment {
  std::string name;
  std::vector<ResourceFlavorAssignment> flavors;  // sorted by resource id
  ResourceList resource_usage;                    // total for `count` pods
  int32_t count = 0;
  bool operator==(const PodSetAssignment&) const = default;
};

// status.admission.
struct Admission {
  std::string cluster_queue;
  std::vector<PodSetAssignment> pod_sets;
  bool operator==(const Admission&) const = default;
};

// Where a workload stands with respect to quota.
enum class AdmissionState {
  kPending,   // holds no quota
  kAdmitted,  // holds quota (QuotaReserved=True)
  // Evicted (Evicted=True) but some of its pods are still terminating: its
  // usage still counts and it is never a preemption candidate again. berth's
  // deliberate departure from Kueue (docs/architecture.md, departure 4): quota is released
  // only when the caller reports every pod terminated (Snapshot::RemoveWorkload).
  kEvicting,
};

struct Workload {
  std::string uid;  // unique; the final tie-break of every ordering
  std::string namespace_name;
  std::string name;
  std::string cluster_queue;  // resolved from spec.queueName by the caller
  std::string queue_name;     // spec.queueName: the LocalQueue in namespace_name
  std::vector<PodSet> pod_sets;
  int32_t priority = 0;  // effective priority
  // workload.Ordering.GetQueueOrderTimestamp: creationTimestamp, or the
  // eviction time when the requeuing rules say so (Kueue's pkg/workload/workload.go).
  Time queue_order_timestamp{};
  bool active = true;     // spec.active
  bool finished = false;  // Finished=True
  // The caller evaluated the ClusterQueue's namespaceSelector against the
  // workload's namespace (nil selector: false, {}: true).
  bool namespace_matches = true;
  // status.requeueState.requeueAt (backoff); nullopt: none.
  std::optional<Time> requeue_at;

  // Quota state. For kAdmitted/kEvicting, `admission` is set and
  // `quota_reserved_time` is the QuotaReserved=True transition time.
  AdmissionState state = AdmissionState::kPending;
  std::optional<Admission> admission;
  Time quota_reserved_time{};
  // For kEvicting workloads preempted by the engine: the preemptor's uid.
  // The capacity they free is reserved for that preemptor.
  std::string evicted_for;
  // The object's QuotaReserved=False reason and message as read ("" when it
  // has none). The engine ignores them; a caller compares its verdict with
  // them to skip rewriting a condition the workload already shows.
  std::string pending_reason, pending_message;
  // metadata.generation of the object it was decoded from (0: unknown): it moves
  // with every spec change, so a caller holding a copy can tell it is stale.
  int64_t generation = 0;

  std::string Key() const { return namespace_name + "/" + name; }
  // Some podSet may run with fewer pods than its count (Kueue's
  // workload.CanBePartiallyAdmitted): min_count < count.
  bool CanBePartiallyAdmitted() const;
};

// One (flavor, resource) amount of a workload's usage.
struct FlavorResourceAmount {
  std::string flavor;
  ResourceId resource = 0;
  Amount amount = 0;
  bool operator==(const FlavorResourceAmount&) const = default;
};
// Total usage of an admission summed per (flavor, resource), sorted by
// (flavor, resource). Zero amounts are dropped.
std::vector<FlavorResourceAmount> AdmissionUsage(const Admission& admission);

// Total request of a podSet for `count` pods with its reclaimable pods
// removed (Kueue's pkg/workload/workload.go): per-pod × (count − reclaimable), ≥ 0.
ResourceList PodSetTotal(const PodSet& ps, int32_t count);

}  // namespace berth::admission
