// Validation of a batch/v1 Job's podFailurePolicy, successPolicy and the per-index backoff
// fields, as kube-apiserver's validateJobSpec does it (Kubernetes 1.32,
// kubernetes/kubernetes pkg/apis/batch/validation/validation.go: validatePodFailurePolicy,
// validatePodFailurePolicyRule, validatePodFailurePolicyRuleOnExitCodes,
// validatePodFailurePolicyRuleOnPodConditions, validateSuccessPolicy,
// validateSuccessPolicyRule, validateIndexesFormat). Run on create and update; both
// policies are immutable (api/job_strategy.h), so an update only meets what create passed.
//
// The schema (resources/definitions/batch-v1.yaml) already answers an unknown action or
// operator (`Unsupported value: "X": supported values: ...`, the same text as upstream's
// NotSupported), a missing action or operator (Required value), values that are not a set
// (`Duplicate value: 1`) and a missing `rules`; these add the rest, each with upstream's path
// and message:
//   spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items
//   spec.podFailurePolicy.rules[i].action: Invalid value: "FailIndex": requires the
//       backoffLimitPerIndex to be set
//   spec.podFailurePolicy.rules[i]: Invalid value: specifying both OnExitCodes and
//       OnPodConditions is not supported    / ...: specifying one of OnExitCodes and
//       OnPodConditions is required
//   ....onExitCodes.containerName: Invalid value: "x": must be one of the container or
//       initContainer names in the pod template
//   ....onExitCodes.values: Invalid value: []int32{}: at least one value is required
//   ....onExitCodes.values: Too many: 256: must have at most 255 items
//   ....onExitCodes.values[j]: Invalid value: 0: must not be 0 for the In operator
//   ....onExitCodes.values: Invalid value: []int32{3, 1}: must be ordered
//   ....onPodConditions: Too many: 21: must have at most 20 items
//   ....onPodConditions[j].type: Invalid value: "a b": <IsQualifiedName message>
//   ....onPodConditions[j].status: Required value: valid values: ["False" "True" "Unknown"]
//       / Unsupported value: "X": supported values: "False", "True", "Unknown"
//   spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values:
//       "Failed"   (with a podFailurePolicy)
//   spec.successPolicy: Invalid value: requires indexed completion mode   (upstream prints
//       the struct as Go's %#v, pointers included; berth omits struct values, as
//       api/job_strategy.h does for the immutable ones)
//   spec.successPolicy.rules: Required value: at least one rules must be specified when the
//       successPolicy is specified   / Too many: 21: must have at most 20 items
//   spec.successPolicy.rules[i]: Required value: at least one of succeededCount or
//       succeededIndexes must be specified
//   ....succeededIndexes: Too long: may not be more than 65536 bytes
//   ....succeededIndexes: Invalid value: "1-0": error parsing succeededIndexes:
//       non-increasing order, previous: 1, current: 0   (also "too large index: \"9\"",
//       "cannot convert string to integer for index: \"x\"", "the fragment \"1-2-3\" violates
//       the requirement that an index interval can have at most two parts separated by '-'")
//   ....succeededCount: Invalid value: -1: must be greater than or equal to 0
//   ....succeededCount: Invalid value: 5: must be less than or equal to 4 (the number of
//       specified completions)   / ...: must be less than or equal to 2 (the number of indexes
//       in the specified succeededIndexes field)
//   spec.backoffLimitPerIndex / spec.maxFailedIndexes: Invalid value: 1: requires indexed
//       completion mode
//   spec.maxFailedIndexes: Invalid value: 5: must be less than or equal to completions
//       / must be less than or equal to 100000
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "api/field_errors.h"
#include "api/object.h"

namespace berth::api {

// Upstream's limits (validation.go constants of the same names).
inline constexpr int64_t kMaxPodFailurePolicyRules = 20;                    // maxPodFailurePolicyRules
inline constexpr int64_t kMaxPodFailurePolicyOnExitCodesValues = 255;       // maxPodFailurePolicyOnExitCodesValues
inline constexpr int64_t kMaxPodFailurePolicyOnPodConditionsPatterns = 20;  // ...OnPodConditionsPatterns
inline constexpr int64_t kMaxSuccessPolicyRules = 20;                       // maxSuccessPolicyRule
inline constexpr int64_t kMaxSuccessPolicySucceededIndexesLength =
    64 * 1024;                                                     // maxJobSuccessPolicySucceededIndexesLimit
inline constexpr int64_t kMaxFailedIndexesForIndexedJob = 100000;  // maxFailedIndexesForIndexedJob

// The checks above of a Job (its spec; a spec that is not an object is the schema's).
FieldErrorList ValidateJobPolicies(const Object& job);

}  // namespace berth::api
