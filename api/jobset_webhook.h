// The JobSet webhook's defaulting and validation, as kubernetes-sigs/jobset runs them in its
// mutating and validating admission webhooks (pkg/webhooks/jobset_webhook.go, tag v0.12.0;
// its tests pkg/webhooks/jobset_webhook_test.go). Berth runs them in the JobSet strategy
// (api/kueue_job_webhook.cc), so the defaults are written on the stored object, as upstream,
// and the JobSet controller reads them from there.
//
// DefaultJobSet (jobSetWebhook.Default), each only where the field is absent:
//   spec.successPolicy.operator                       All
//   spec.startupPolicy.startupPolicyOrder             AnyOrder
//   spec.replicatedJobs[i].template.spec.completionMode                    Indexed
//   spec.replicatedJobs[i].template.spec.template.spec.restartPolicy       OnFailure
//   spec.network.enableDNSHostnames, .publishNotReadyAddresses             true
//   spec.failurePolicy.rules[i].name                  "failurePolicyRule<i>" (defaultRuleNameFmt)
// (upstream sets successPolicy and startupPolicy as whole objects when absent; berth also
// fills an operator / order missing from a present one, which the CRD requires anyway).
// A replicatedJob without a template is left without one (upstream's typed webhook writes
// an empty one, and validation then names its containers; berth keeps the schema's
// "spec.replicatedJobs[0].template: Required value"). The CRD schema's own defaults
// (replicas 1, groupName "default", restartStrategy Recreate) are applied by schema
// defaulting before this.
//
// ValidateJobSet: the checks of upstream's ValidateCreate (v0.12.0, with its default
// feature gates: InPlaceRestart, RestartJob and ElasticJobSet off), after defaulting. Where
// upstream builds a field error berth reports the same field, value and message; where
// upstream returns a plain error (its 422 then lists it as "<nil>: Internal error: ...")
// berth reports upstream's message as Invalid (Forbidden where no value is at fault) at the
// field it concerns. Each error, as
// kubectl prints it after `The JobSet "<name>" is invalid: `:
//   spec.failurePolicy.restartStrategy: Invalid value: "InPlaceRestart": InPlaceRestart
//       restart strategy cannot be set when InPlaceRestart feature gate is disabled
//   spec.replicatedJobs[0].dependsOn: Forbidden: DependsOn can't be set for the first
//       ReplicatedJob
//   spec.network.subdomain: Invalid value: "<s>": <IsDNS1123Subdomain's messages>, then
//       <IsDNS1035Label's> (the subdomain names the headless Service), its length message
//       replaced by ".spec.network.subdomain is too long, must be less than 63 characters"
//   spec.replicatedJobs[i].replicas: Invalid value: <n>: the product of replicas and
//       parallelism must not exceed 2147483647 for replicatedJob '<rjob>'
//   spec.replicatedJobs[i].groupName: Invalid value: "<g>": <IsDNS1035Label's messages>
//       (length: ".spec.replicatedJob[].groupName is too long, must be less than 63 characters")
//   spec.replicatedJobs[i].name: Invalid value: "<js>-<rjob>-<replicas-1>": the longest
//       Job name's IsDNS1035Label messages (length: "JobSet name is too long, job names
//       generated for this JobSet will exceed 63 characters"); for an Indexed job with
//       completions, the same for the longest pod name "<js>-<rjob>-<replicas-1>-
//       <completions-1>-abcde" (length: "JobSet name is too long, pod names generated for
//       this JobSet will exceed 63 characters"), the value still the longest Job name
//   spec.replicatedJobs[i].dependsOn[j].name: Invalid value: "x": replicatedJob: <rjob>
//       cannot depend on replicatedJob: x   (x is not a previous replicatedJob; upstream
//       also accepts the replicatedJob itself, which would wait for itself for ever)
//   spec.successPolicy.targetReplicatedJobs[j]: Invalid value: "x": invalid replicatedJob
//       name 'x' does not appear in .spec.ReplicatedJobs
//   spec.failurePolicy.rules[i].action: Invalid value: "RestartJob": RestartJob and
//       RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed when RestartJob
//       feature gate is disabled   (the first such rule; the policy's other checks are
//       then skipped, as upstream returns early)
//   spec.failurePolicy.rules[i].name: the rule-name checks (validateFailurePolicy):
//     Invalid value: "<name>": invalid failure policy rule name of length 129, the rule name
//       must be at least 1 characters long and at most 128 characters long
//     Invalid value: "a-b": invalid failure policy rule name 'a-b', a failure policy rule
//       name must start with an alphabetic character, optionally followed by a string of
//       alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'
//       (the pattern ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, ruleNameFmt; the name is
//       written into condition reasons when the rule fires)
//     Invalid value: "r": rule names are not unique, rules with indices [0 2] all have the
//       same name 'r'   (at the first rule of that name)
//   spec.failurePolicy.rules[i].targetReplicatedJobs[j]: Invalid value: "x": invalid
//       replicatedJob name 'x' in failure policy does not appear in .spec.ReplicatedJobs
//   spec.failurePolicy.rules[i].onJobFailureReasons[j]: Invalid value: "x": invalid job
//       failure reason 'x' in failure policy is not a recognized job failure reason
//       (BackoffLimitExceeded, DeadlineExceeded, FailedIndexes, MaxFailedIndexesExceeded,
//       PodFailurePolicy)
//   spec.coordinator (validateCoordinator: the first of these only):
//     .replicatedJob: Invalid value: "x": coordinator replicatedJob x does not exist
//     .jobIndex: Invalid value: 2: coordinator job index 2 is invalid for replicatedJob a
//       (within [0, replicas))
//     .replicatedJob: Invalid value: "a": job for coordinator pod must be indexed completion
//       mode, and completions number must be set
//     .podIndex: Invalid value: 2: coordinator pod index 2 is invalid for replicatedJob a
//       job index 0   (within [0, completions))
//   spec.coordinator: Invalid value: "<endpoint>": spec will lead to invalid label value
//       "<endpoint>" for coordinator label "jobset.sigs.k8s.io/coordinator" (long JobSet /
//       ReplicatedJob / SubDomain name?): <IsValidLabelValue's messages joined by ", ">
//       (validateCoordinatorLabelValue; the endpoint is JobSetCoordinatorEndpoint)
//   spec.managedBy: IsDomainPrefixedPath's errors (api/metadata_validation.h), and
//       "Too long: may not be more than 63 bytes" past kMaxJobSetManagedByLength
// Upstream's volumeClaimPolicies checks are not made (berth's
// JobSet controller does not create their claims).
//
// ValidateJobSetUpdate: upstream's ValidateUpdate (with ElasticJobSet off), then
// ValidateJobSet's errors of the new object that the old object does not have as well
// (ratcheting: a JobSet stored before a check existed can still have its metadata,
// suspend and status updated; upstream's ValidateUpdate runs none of them):
//   spec.replicatedJobs: Invalid value: field is immutable   (any change, except, while
//       the old or the new JobSet is suspended, to the pod templates' labels, annotations,
//       nodeSelector, tolerations and schedulingGates, which Kueue sets; the value, the
//       whole list, is not printed)
//   spec.managedBy: Invalid value: "x": field is immutable
// The old object is compared with DefaultJobSet's defaults applied, as the new one has them.
//
// JobSetCelErrors: the CEL rules of upstream's CRD (config/components/crd/bases/
// jobset.x-k8s.io_jobsets.yaml, from api/jobset/v1alpha2/jobset_types.go), which the API
// server checks before calling the webhook (the caller then skips the webhook's checks):
//   spec: Invalid value: "object": StartupPolicy and DependsOn APIs are mutually exclusive
//       (startupPolicyOrder InOrder with a replicatedJob's dependsOn; on update only when
//       the old object does not break it too)
//   on update, where old and new both have the field (a transition rule):
//   spec.network | spec.successPolicy | spec.failurePolicy | spec.startupPolicy:
//       Invalid value: "object": Value is immutable
//   spec.volumeClaimPolicies, spec.replicatedJobs[i].dependsOn (matched by name):
//       Invalid value: "array": Value is immutable
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/field_errors.h"
#include "api/object.h"

namespace berth::api {

// Bounds of a failure policy rule name (upstream minRuleNameLength / maxRuleNameLength in
// pkg/webhooks/jobset_webhook.go: 1 and 128 characters).
inline constexpr std::size_t kMinJobSetRuleNameLength = 1;
inline constexpr std::size_t kMaxJobSetRuleNameLength = 128;

// Applies the webhook defaults above to a JobSet object. A spec that is not an object is
// left to schema validation.
void DefaultJobSet(Object* jobset);

// Upstream's messages (pkg/webhooks/jobset_webhook.go).
inline constexpr std::string_view kJobSetSubdomainTooLongMessage =
    ".spec.network.subdomain is too long, must be less than 63 characters";
inline constexpr std::string_view kJobSetGroupNameTooLongMessage =
    ".spec.replicatedJob[].groupName is too long, must be less than 63 characters";
inline constexpr std::string_view kJobSetJobNameTooLongMessage =
    "JobSet name is too long, job names generated for this JobSet will exceed 63 characters";
inline constexpr std::string_view kJobSetPodNameTooLongMessage =
    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters";
inline constexpr char kRestartJobGateMessage[] =
    "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed when RestartJob feature "
    "gate is disabled";
inline constexpr char kInPlaceRestartGateMessage[] =
    "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled";
inline constexpr int64_t kMaxInt32 = 2147483647;
// Upstream maxManagedByLength.
inline constexpr size_t kMaxJobSetManagedByLength = 63;

// The label (and annotation) the JobSet controller puts on every Job and pod of a JobSet
// with a coordinator: its endpoint.
inline constexpr std::string_view kJobSetCoordinatorKey = "jobset.sigs.k8s.io/coordinator";

// The coordinator's stable endpoint, "<jobset>-<replicatedJob>-<jobIndex>-<podIndex>.
// <subdomain>", the subdomain defaulting to the JobSet's name (upstream
// CoordinatorEndpoint and GetSubdomain, pkg/controllers/jobset_controller.go).
std::string JobSetCoordinatorEndpoint(const Object& jobset);

// The CEL errors above; `old` is nullptr on create.
FieldErrorList JobSetCelErrors(const Object& jobset, const Object* old);
// The checks above, on a created JobSet.
FieldErrorList ValidateJobSet(const Object& jobset);
// The update checks above.
FieldErrorList ValidateJobSetUpdate(const Object& jobset, const Object& old);

}  // namespace berth::api
