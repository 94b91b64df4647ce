// Strategies of the kueue.x-k8s.io kinds: the rules Kueue writes as CEL
// (x-kubernetes-validations in config/components/crd/bases/*.yaml) and as webhooks
// (pkg/webhooks/{clusterqueue,cohort,resourceflavor,workload}_webhook.go), with their
// messages and paths. Objects are in the storage version (v1beta2), schema-defaulted.
//
// Layering, as the API server applies it: CEL rules are part of the CRD's schema
// validation and run first; the validating webhook runs only when schema and CEL
// validation passed. So each Validate* below returns the CEL errors when there are any,
// and otherwise the webhook's. CEL errors read `<path>: Invalid value: "<type>": <message>`
// with <type> the OpenAPI type of the node the rule sits on ("object", "array",
// "string"), e.g.
//   spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty
//   spec.clusterQueue: Invalid value: "string": field is immutable
// Webhook errors carry the offending value:
//   spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "5": must be less than or equal to the nominalQuota
//
// ClusterQueue
//   create: finalizer kueue.x-k8s.io/resource-in-use added (mutating webhook, create only).
//   CEL: no borrowingLimit without spec.cohortName; every flavor of a resource group lists
//     as many resources as coveredResources; flavorFungibility.preference only with both
//     policies TryNextFlavor; reclaimWithinCohort Never with borrowWithinCohort.policy
//     other than Never.
//   webhook: covered resource names are qualified names and appear in one resource group
//     only (Duplicate); a flavor appears in one resource group only (Duplicate); resource i
//     of a flavor is named coveredResources[i] ("must match the name in coveredResources");
//     nominalQuota, borrowingLimit, lendingLimit ≥ 0 ("must be greater than or equal to
//     0"); borrowingLimit and lendingLimit need a cohort ("must be nil when cohort is
//     empty"); lendingLimit ≤ nominalQuota ("must be less than or equal to the
//     nominalQuota"); namespaceSelector is a valid label selector; fairSharing.weight ≥ 0;
//     at most 256 flavors and 256 covered resources in total and 512 flavor×resource
//     combinations per group; admissionChecksStrategy onFlavors name flavors of the
//     ClusterQueue (Unsupported value, listing them in ClusterQueue order; on update a
//     check whose onFlavors and the ClusterQueue's flavors did not change is not re-checked,
//     as with RejectUpdatesToCQWithInvalidOnFlavors off); spec.concurrentAdmissionPolicy
//     immutable.
// Cohort
//   CEL: flavors list as many resources as coveredResources.
//   webhook: the ClusterQueue resource-group rules, with "must be nil when parent is
//     empty" (borrowingLimit/lendingLimit need spec.parentName) and lendingLimit allowed
//     above nominalQuota; fairSharing.weight ≥ 0.
// LocalQueue
//   CEL: spec.clusterQueue immutable once set.
// ResourceFlavor
//   create: finalizer kueue.x-k8s.io/resource-in-use added.
//   CEL: tolerations — empty key needs operator Exists, tolerationSeconds needs effect
//     NoExecute, operator Exists needs no value (operator/effect enums are schema enums);
//     topologyName needs at least one nodeLabel; topologyName immutable once set.
//   webhook: nodeLabels valid labels; taint keys qualified names, values label values,
//     taints unique per (key, effect) ("taints must be unique by key and effect pair");
//     toleration keys qualified names.
// Workload (create, update and status update)
//   CEL: podSets[i].minCount ≤ count; priorityClassRef group/kind pairing; priority set
//     when priorityClassRef is; with QuotaReserved=True, as many podSetAssignments as
//     podSets; status.clusterName immutable once set and exclusive with
//     nominatedClusterNames; on update while the old object has QuotaReserved=True:
//     priorityClassRef presence, group, kind (and name for a pod PriorityClass) fixed,
//     queueName fixed (while both are reserved); maximumExecutionTimeSeconds fixed while
//     both are Admitted.
//   webhook: container, init container and pod-level resource requests/limits may not
//     name `pods` ("the key is reserved for internal kueue use") and must be ≥ 0; pod
//     template labels/annotations valid; at most one podSet sets minCount; with
//     QuotaReserved=True status.admission is required, its podSetAssignments name podSets
//     and resourceUsage is a multiple of count; reclaimablePods name podSets and do not
//     exceed their count; admission check podSetUpdates name podSets and carry valid
//     labels, annotations, nodeSelector and toleration keys. On update: podSets immutable
//     while the old object has QuotaReserved=True; reclaimable counts may not decrease or
//     disappear while reserved; status.admission immutable once set (topology assignments
//     aside); podSetUpdates of a check that stays Ready immutable; a newly set clusterName
//     must be one of the old nominatedClusterNames.
//   Not done: elastic-job (workload slices) exceptions, the priority-boost and
//     admission-gated-by annotation checks (alpha gates), TAS slice-size checks.
// WorkloadPriorityClass: no rule beyond its schema upstream, so no strategy.
//
// Thread-safety: the strategies are stateless.
#pragma once

#include <string_view>

#include "api/strategy.h"

namespace berth::api {

inline constexpr std::string_view kKueueGroupName = "kueue.x-k8s.io";
// Finalizer Kueue's defaulting webhooks add to ClusterQueues and ResourceFlavors; the
// controllers remove it once nothing uses the object.
inline constexpr std::string_view kResourceInUseFinalizer = "kueue.x-k8s.io/resource-in-use";

// Registers the ClusterQueue, Cohort, LocalQueue, ResourceFlavor and Workload strategies.
void RegisterKueueStrategies(StrategyRegistry* registry);

}  // namespace berth::api
