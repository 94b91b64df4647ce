// Admission checks of the job kinds whose pod templates and patterns upstream checks
// only later, when the Jobs and Pods made from them are created (or, for JobSet's
// message patterns, never): berth refuses the object itself, where the user sees the
// error, instead of a controller failing on every reconcile.
//
//   JobSet
//     ValidateJobSet / ValidateJobSetUpdate                api/jobset_webhook.h (upstream's
//                                                          webhook checks these at admission too)
//     spec.replicatedJobs[i].template.spec.template.spec   api/pod_validation.h
//     spec.failurePolicy.rules[i].onJobFailureMessagePatterns[j]: Invalid value: "(":
//         error parsing regexp: missing closing ): `(`
//       (each pattern compiles with Go's regexp syntax, api/regexp.h; upstream JobSet's
//       failure policy matches them with regexp.MatchString and skips one that does not
//       compile, so such a rule would silently never match)
//   PyTorchJob
//     spec.pytorchReplicaSpecs[<type>].template.spec.containers: Required value: must be
//         specified   (no containers, or no template: the training operator's webhook,
//         kubeflow/training-operator pkg/webhooks/pytorch/pytorchjob_webhook.go
//         validatePyTorchReplicaSpecs)
//     spec.pytorchReplicaSpecs[<type>].template.spec      api/pod_validation.h
//
// Thread-safety: pure functions.
#pragma once

#include "api/field_errors.h"
#include "api/object.h"

namespace berth::api {

// `old` is the stored object on update, nullptr on create.
FieldErrorList ValidateJobSetTemplatesAndPatterns(const Object& jobset, const Object* old);
FieldErrorList ValidatePyTorchJobTemplates(const Object& pytorchjob, const Object* old);

}  // namespace berth::api
