// Pod spec validation as kube-apiserver's ValidatePodSpec does it
// (pkg/apis/core/validation/validation.go, Kubernetes 1.32), for the rules that
// keep a pod runnable and its node agent inside its pod directory, with
// upstream's paths and messages (field errors, api/field_errors.h):
//
//   volumes[i].name           Required; IsDNS1123Label                   (ValidateVolumes)
//   containers                Required when empty (absent: the schema's) (validateContainers)
//   containers[i].name,       Required; IsDNS1123Label                   (validateContainerCommon)
//   initContainers[i].name    an init container's name Duplicate when a regular container
//                             has it (validateInitContainers); two volumes, containers or
//                             init containers of one name are the schema's Duplicate
//                             errors (those lists are list-type map keyed by name:
//                             "spec.containers[1]: Duplicate value: {\"name\":\"c\"}",
//                             where upstream says "spec.containers[1].name: Duplicate
//                             value: \"c\"")
//   ...env[j].name            Required; printable ASCII other than '=': "a valid
//                             environment variable name must consist only of printable
//                             ASCII characters other than '='" (ValidateEnv with
//                             RelaxedEnvironmentVariableValidation, beta and on in 1.32)
//   ...volumeMounts           validateVolumeMounts' validateLocalDescendingPath of subPath
//                             and subPathExpr: "must be a relative path" (absolute), "must
//                             not contain '..'" (a ".." element between '/'), reported at
//                             ...volumeMounts.subPath / .subPathExpr without the mount's
//                             index, as upstream; both set: "...volumeMounts[i].subPathExpr:
//                             Invalid value: ...: subPathExpr and subPath are mutually
//                             exclusive"
//   ...resources              ValidateResourceRequirements: each quantity non-negative
//                             ("must be greater than or equal to 0"); an extended resource
//                             (a domain-prefixed name outside kubernetes.io, e.g.
//                             nvidia.com/gpu) a whole number ("must be an integer"), its
//                             request equal to its limit ("must be equal to <name> limit
//                             of <limit>", at ...resources.requests) and present in limits
//                             when requested ("limits: Required value: Limit must be set
//                             for non overcommitable resources"); any other request at
//                             most its limit ("must be less than or equal to <name> limit
//                             of <limit>")
//
// so that, for example, a container named "../x" is refused with
//   spec.containers[0].name: Invalid value: "../x": a lowercase RFC 1123 label must
//   consist of lower case alphanumeric characters or '-', and must start and end with an
//   alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is
//   '[a-z0-9]([-a-z0-9]*[a-z0-9])?')
//
// One validator serves a Pod (spec) and every pod template berth stores: batch Jobs
// (spec.template.spec, as upstream's ValidateJob), and the templates of JobSets,
// PyTorchJobs and (Cluster)TrainingRuntimes, which upstream checks only when the Jobs
// and Pods made from them are created; berth refuses them at admission, where the user
// sees the error.
//
// Not checked here: the rest of ValidatePodSpec (volume sources, the other mount rules, probes, security
// contexts, ports, resource names, ...); the schema checks types and enums. A
// "must be an integer" error shows the quantity as a string ("500m"); upstream prints Go's
// %#v of resource.Quantity there.
//
// Thread-safety: pure functions.
#pragma once

#include "api/field_errors.h"
#include "api/object.h"

namespace berth::api {

// The errors of a PodSpec at `path` ("spec", "spec.template.spec", ...). A value that is
// not an object, or fields of the wrong type, are left to schema validation.
FieldErrorList ValidatePodSpec(const Object& spec, const FieldPath& path);

// ValidatePodUpdate's spec rule (kubernetes/kubernetes pkg/apis/core/validation/
// validation.go): a pod's spec may change only in
//   spec.containers[*].image, spec.initContainers[*].image,
//   spec.activeDeadlineSeconds (set when unset, or lowered; never removed),
//   spec.tolerations (additions only), spec.terminationGracePeriodSeconds (to 1 when it
//   was negative), spec.schedulingGates (removals only), and spec.nodeSelector and
//   spec.affinity while the old pod is still gated (upstream allows only additions to
//   them; berth allows any change to a pod that cannot have been placed yet);
// and, as berth binds pods by writing spec.nodeName (it serves no pods/binding),
// spec.nodeName when it was empty. Anything else is
//   spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,
//   ... (upstream's list)
// followed by the paths that differ (at most kMaxReportedSpecChanges; upstream appends a Go
// cmp.Diff of the two specs). Absent and empty values are equal, as Go's semantic
// equality has nil and empty slices and maps.
FieldErrorList ValidatePodSpecUpdate(const Object& spec, const Object& old_spec);
inline constexpr size_t kMaxReportedSpecChanges = 8;

}  // namespace berth::api
