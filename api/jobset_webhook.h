// The JobSet webhook's defaulting and failure-policy rule checks, as kubernetes-sigs/jobset
// runs them in its mutating and validating admission webhooks (pkg/webhooks/jobset_webhook.go,
// v0.12; the webhooks run on create and update). Berth runs them in the JobSet strategy
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
// ValidateJobSetFailurePolicyRules (validateFailurePolicy's rule-name checks), after
// defaulting, with upstream's messages as field errors at spec.failurePolicy.rules[i].name
// (upstream's validating webhook denies with the joined messages, 403 "admission webhook
// \"vjobset.kb.io\" denied the request: ..."; berth answers 422 Invalid naming the field):
//   Invalid value: "<name>": invalid failure policy rule name of length 129, the rule name
//       must be at least 1 characters long and at most 128 characters long
//   Invalid value: "a-b": invalid failure policy rule name 'a-b', a failure policy rule name
//       must start with an alphabetic character, optionally followed by a string of
//       alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'
//       (the pattern ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$, ruleNameFmt)
//   Invalid value: "r": rule names are not unique, rules with indices [0 2] all have the
//       same name 'r'   (at the first rule of that name)
// The name is written into the JobSet's status and condition messages when its rule fires;
// the pattern keeps it a valid condition reason.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>

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

// The rule-name errors above.
FieldErrorList ValidateJobSetFailurePolicyRules(const Object& jobset);

}  // namespace berth::api
