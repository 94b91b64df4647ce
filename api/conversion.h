// Version conversion of objects between the versions of their kind, as the API server's
// conversion step does for a CRD (Kueue registers conversion webhooks; every other berth
// kind converts with strategy None).
//
// Shapes: objects are JSON documents (api/object.h) carrying apiVersion and kind; the
// target is an apiVersion string ("kueue.x-k8s.io/v1beta2", "v1"). The result is a new
// object whose apiVersion is the target; the input is never modified.
//
// Rules:
//   - Same apiVersion: identity (the object is returned unchanged).
//   - A kind with a registered converter (below) between the two versions: the converter.
//   - Anything else in the same group: CRD strategy None — only apiVersion is rewritten.
//   - A different group: kBadRequest, except for a kind served in two groups from one
//     storage (berth.io/stored-as, api/resource_definition.h):
//     core/v1 Event <-> events.k8s.io/v1 Event (kubernetes pkg/apis/events/v1/conversion.go
//     over the one internal core.Event): involvedObject <-> regarding, message <-> note,
//     source <-> deprecatedSource, firstTimestamp <-> deprecatedFirstTimestamp,
//     lastTimestamp <-> deprecatedLastTimestamp, count <-> deprecatedCount,
//     reportingComponent <-> reportingController; action, reason, type, related,
//     reportingInstance, eventTime, series and metadata keep their names. Lossless both
//     ways.
//
// kueue.x-k8s.io v1beta1 <-> v1beta2 (kueue apis/kueue/v1beta1/*_conversion.go and the
// generated conversions; upstream converts typed structs, so fields that exist in only one
// version are dropped, without an annotation, and so are they here):
//   ClusterQueue  spec.cohort <-> spec.cohortName; v1beta1 spec.admissionChecks (names) ->
//                 spec.admissionChecksStrategy.admissionChecks[{name}] (replacing any
//                 strategy given, as upstream) and dropped; flavorFungibility Borrow
//                 (whenCanBorrow) and Preempt (whenCanPreempt) -> MayStopSearch
//                 (MayStopSearch and TryNextFlavor exist in both versions); v1beta1-only
//                 status.pendingWorkloadsStatus and status.fairSharing.
//                 admissionFairSharingStatus dropped; v1beta2-only
//                 spec.concurrentAdmissionPolicy dropped.
//   Cohort        v1beta1-only status.fairSharing.admissionFairSharingStatus dropped.
//   LocalQueue    status.flavorUsage (v1beta1) <-> status.flavorsUsage (v1beta2);
//                 v1beta1-only status.flavors dropped.
//   Workload      spec.priorityClassName + spec.priorityClassSource (v1beta1) <->
//                 spec.priorityClassRef {group, kind, name} (v1beta2):
//                   "kueue.x-k8s.io/workloadpriorityclass" <-> kueue.x-k8s.io/WorkloadPriorityClass
//                   "scheduling.k8s.io/priorityclass"      <-> scheduling.k8s.io/PriorityClass
//                 any other source (e.g. "") drops the name; a ref with any other
//                 group/kind pair is dropped; status.accumulatedPastExexcutionTimeSeconds
//                 (v1beta1's spelling) <-> status.accumulatedPastExecutionTimeSeconds;
//                 status.admission.podSetAssignments[].topologyAssignment {levels,
//                 domains[{values, count}]} <-> {levels, slices[]} (v1beta2's compact
//                 encoding: one slice holding every domain, each level "universal" when
//                 all values are equal, else "individual" roots with the longest common
//                 prefix/suffix factored out; podCounts universal when all counts are
//                 equal); v1beta2-only spec.preemptionGates, status.preemptionGates and
//                 podSets[].topologyRequest.podsetSliceRequiredTopologyConstraints dropped.
//   AdmissionCheck v1beta1-only spec.retryDelayMinutes dropped.
//   WorkloadPriorityClass, ResourceFlavor: fields are identical; apiVersion only.
// Round trips: v1beta2 -> v1beta1 -> v1beta2 is lossless for every field both versions
// have; v1beta1 -> v1beta2 -> v1beta1 is lossless unless the object uses a deprecated
// v1beta1-only form (Borrow/Preempt, spec.admissionChecks, status.flavors, a
// priorityClassName without a known priorityClassSource, ...), which comes back in its
// v1beta2 meaning.
//
// Converters move values without checking their types: a malformed field is carried to
// its new place (or dropped as above) and reported by schema validation afterwards.
//
// Errors: kBadRequest when the object is not a JSON object or has no apiVersion/kind, or
// the target is in another group; Convert (with a Registry) also returns kNotFound
// `no matches for kind "Foo" in version "g/v"` (Registry::ForKind) when the kind does not
// serve the target version.
//
// Thread-safety: pure functions over immutable tables.
#pragma once

#include <string_view>

#include "api/object.h"
#include "core/status.h"

namespace berth::api {

class Registry;

// Converts `obj` to `target_api_version`, checking with `registry` that the kind exists
// in that version. The write pipeline calls it to reach the storage version; reads call it
// to answer in the requested version.
StatusOr<Object> Convert(const Registry& registry, const Object& obj,
                         std::string_view target_api_version);

// The conversion alone (no registry check): the rules above.
StatusOr<Object> ConvertObject(const Object& obj, std::string_view target_api_version);

}  // namespace berth::api
