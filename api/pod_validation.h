// Pod spec validation as kube-apiserver's ValidatePodSpec does it
// (pkg/apis/core/validation/validation.go, Kubernetes 1.32), for the rules that
// keep a pod runnable and its node agent inside its pod directory, with
// upstream's paths and messages (field errors, api/field_errors.h):
//
//   volumes                   at most kMaxPodVolumes (api/limits.h; upstream has no limit):
//                             "spec.volumes: Too many: 300: must have at most 256 items"
//   volumes[i].name           Required; IsDNS1123Label                   (ValidateVolumes)
//   volumes[i]                validateVolumeSource: no source "Required value: must specify a
//                             volume type"; each source after the first (kVolumeSourceFields
//                             order) "volumes[i].<source>: Forbidden: may not specify more than
//                             1 volume type"; of the first one:
//     hostPath                path Required, no ".." element (validatePathNoBacksteps; not
//                             required absolute, as upstream), type NotSupported unless one of
//                             "", BlockDevice, CharDevice, Directory, DirectoryOrCreate, File,
//                             FileOrCreate, Socket
//     secret, configMap       secretName / name Required; defaultMode and items[j].mode 0..0777
//                             ("must be a number between 0 and 0777 (octal), both inclusive");
//                             items (validateKeyToPath): key Required, path Required, relative,
//                             no ".." element, not starting with ".." (the kubelet's atomic
//                             writer keeps "..data" and its timestamped directories there)
//     downwardAPI             defaultMode; items (validateDownwardAPIVolumeFile, reported at
//                             the source's path without the item's index, as upstream): path as
//                             above, exactly one of fieldRef and resourceFieldRef, mode
//     projected               defaultMode; each source at most one kind ("sources[k]:
//                             Forbidden: may not specify more than 1 volume type"); secret and
//                             configMap name Required and items as above, downwardAPI items as
//                             above, an items path used twice "projected: Invalid value:
//                             <name>: conflicting duplicate paths"; serviceAccountToken
//                             expirationSeconds 600..2^32 (absent = the default 3600) and path
//                             Required (at "projected.path", upstream's path) and as above
//   ...volumeMounts[j]        ValidateVolumeMounts: name Required; NotFound unless it names a
//                             volume that validated; mountPath Required; "mountPath: Invalid
//                             value: \"/d\": must be unique" within the container
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
//   ...lifecycle.postStart,   validateLifecycle / validateHandler, for containers and sidecars
//   ...lifecycle.preStop      (init containers with restartPolicy Always): exactly one of exec,
//                             httpGet, tcpSocket, sleep ("...preStop: Required value: must
//                             specify a handler type"; each one after the first, in that order,
//                             "...preStop.httpGet: Forbidden: may not specify more than 1
//                             handler type"); exec.command Required; httpGet.port and
//                             tcpSocket.port a number in 1..65535 ("must be between 1 and 65535,
//                             inclusive") or an IANA_SVC_NAME (IsValidPortName's messages);
//                             httpGet.scheme HTTP or HTTPS when set, httpGet.httpHeaders names
//                             IsHTTPHeaderName (at ...httpGet.httpHeaders, no index); sleep
//                             (validateSleepAction, PodLifecycleSleepActionAllowZero off as in
//                             1.32) 0 < seconds <= terminationGracePeriodSeconds (absent: 30),
//                             at the action's path: "...preStop.sleep: Invalid value: 100: must
//                             be greater than 0 and less than terminationGracePeriodSeconds
//                             (30). Enable AllowPodLifecycleSleepActionZeroValue feature gate
//                             for zero sleep." (upstream's text, gate name included)
//   ...livenessProbe,         validateProbe: the handler as above among exec, httpGet,
//   ...readinessProbe,        tcpSocket and grpc (grpc.port a number in 1..65535);
//   ...startupProbe           initialDelaySeconds, timeoutSeconds, periodSeconds,
//                             successThreshold, failureThreshold "must be greater than or equal
//                             to 0"; terminationGracePeriodSeconds "must be greater than 0";
//                             liveness and startup successThreshold "must be 1" (absent or 0 is
//                             upstream's default, 1); readiness terminationGracePeriodSeconds
//                             "must not be set for readinessProbes"
//   initContainers[i]         without restartPolicy Always: lifecycle and each probe "Forbidden:
//                             may not be set for init containers without restartPolicy=Always"
//                             (validateInitContainers)
//   initContainers[i].restartPolicy  Always or absent (validateInitContainerRestartPolicy):
//                             "...restartPolicy: Unsupported value: \"OnFailure\": supported
//                             values: \"Always\""
//   containers[i].restartPolicy  absent (validateContainers): "Forbidden: may not be set for
//                             non-init containers"
//   ephemeralContainers       none in a template (ValidatePodTemplateSpec): "...spec.
//                             ephemeralContainers: Forbidden: ephemeral containers not allowed
//                             in pod template"; a Pod's create refuses them too
//                             (api/core_strategies.cc, ValidatePodCreate's "cannot be set on
//                             create"), and berth serves no pods/ephemeralcontainers, so no pod
//                             ever has one
//   activeDeadlineSeconds     in [1, 2147483647] (ValidatePodSpec): "spec.activeDeadlineSeconds:
//                             Invalid value: 0: must be between 1 and 2147483647, inclusive"
//                             (a Job's own spec.activeDeadlineSeconds is api/job_strategy.h's)
//   securityContext.runAsUser, runAsGroup, fsGroup, supplementalGroups[k] (pod) and
//   ...containers[i].securityContext.runAsUser, runAsGroup: IsValidUserID / IsValidGroupID
//                             (ValidatePodSecurityContext, ValidateSecurityContext): in
//                             [0, kMaxPodId], "spec.securityContext.runAsUser: Invalid
//                             value: -1: must be between 0 and 2147483647, inclusive"
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
// The probe and lifecycle rules are those of kubernetes/kubernetes
// pkg/apis/core/validation/validation.go at 1.32 (validateContainers, validateInitContainers,
// validateLifecycle, validateHandler, validateProbe, validateSleepAction, ...) and
// k8s.io/apimachinery/pkg/util/validation (IsValidPortName, IsHTTPHeaderName). The Probe and
// lifecycle schemas (resources/definitions/core-v1-container.yaml) type every field, so
// a field of the wrong type there is the schema's error, as upstream's decoder's.
//
// Not checked here: the rest of ValidatePodSpec (the sources the node agent does not
// implement, mount propagation and recursiveReadOnly, the rest of the
// security contexts, ports, resource names, ...); the schema checks types and enums. A
// "must be an integer" error shows the quantity as a string ("500m"); upstream prints Go's
// %#v of resource.Quantity there.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "api/field_errors.h"
#include "api/object.h"

namespace berth::api {

// The largest uid or gid a pod may name (k8s.io/apimachinery validation maxUserID and
// maxGroupID, math.MaxInt32), and upstream's message for one outside [0, kMaxPodId].
inline constexpr int64_t kMaxPodId = 2147483647;
inline constexpr char kIdRangeErrorMsg[] = "must be between 0 and 2147483647, inclusive";

// The errors of a PodSpec at `path` ("spec", "spec.template.spec", ...). A value that is
// not an object, or fields of the wrong type, are left to schema validation.
FieldErrorList ValidatePodSpec(const Object& spec, const FieldPath& path);

// ValidatePodTemplateSpec's rules for a pod template ({metadata, spec}) at `path`
// ("spec.template", ...): its labels and annotations (metadata_validation.h, reported at
// path.labels and path.annotations as upstream's embedded ObjectMeta is), then its pod
// spec at path.spec: ValidatePodSpec, no ephemeral containers, and
// RefuseWhatBerthCannotRun. Every workload kind's template goes through it (Job, JobSet,
// PyTorchJob, training runtimes), so a template whose pods could never be created (a
// label value of 64 characters, such as a Job's generated job-name label for a
// 64-character name) is refused when it is written, not retried forever by its
// controller.
FieldErrorList ValidatePodTemplateSpec(const Object& pod_template, const FieldPath& path);

// What kube-apiserver accepts but berth's node agent cannot run, refused when the pod or
// template is written rather than left to hang at its start (README, not implemented):
// sidecar containers, an init container with restartPolicy Always (the agent would wait
// for it to exit before starting the containers):
//   spec.initContainers[0].restartPolicy: Forbidden: <kSidecarRefusal>
FieldErrorList RefuseWhatBerthCannotRun(const Object& spec, const FieldPath& path);
inline constexpr char kSidecarRefusal[] =
    "sidecar containers (init containers with restartPolicy Always) are not supported by berth's node agent";

// The volume source fields of core/v1 VolumeSource, in the order validateVolumeSource
// checks them (the first one set is the volume's source; each further one is Forbidden).
inline constexpr const char* kVolumeSourceFields[] = {"emptyDir",
                                                      "hostPath",
                                                      "gitRepo",
                                                      "gcePersistentDisk",
                                                      "awsElasticBlockStore",
                                                      "secret",
                                                      "nfs",
                                                      "iscsi",
                                                      "glusterfs",
                                                      "flocker",
                                                      "persistentVolumeClaim",
                                                      "rbd",
                                                      "cinder",
                                                      "cephfs",
                                                      "quobyte",
                                                      "downwardAPI",
                                                      "fc",
                                                      "flexVolume",
                                                      "configMap",
                                                      "azureFile",
                                                      "vsphereVolume",
                                                      "photonPersistentDisk",
                                                      "portworxVolume",
                                                      "azureDisk",
                                                      "storageos",
                                                      "projected",
                                                      "scaleIO",
                                                      "csi",
                                                      "ephemeral",
                                                      "image"};

// ValidatePodUpdate's spec rule (kubernetes/kubernetes pkg/apis/core/validation/
// validation.go): a pod's spec may change only in
//   spec.containers[*].image, spec.initContainers[*].image,
//   spec.activeDeadlineSeconds (set when unset, or lowered; never removed),
//   spec.tolerations (additions only), spec.terminationGracePeriodSeconds (to 1 when it
//   was negative), spec.schedulingGates (removals only), and spec.nodeSelector and
//   spec.affinity while the old pod is still gated (upstream allows only additions to
//   them; berth allows any change to a pod that cannot have been placed yet);
// and spec.nodeName when it was empty: pods/binding (apiserver, as upstream's BindingREST)
// is admitted as such an update, and a plain update may bind too (upstream refuses that,
// binding only through pods/binding). Anything else is
//   spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,
//   ... (upstream's list)
// followed by the paths that differ (at most kMaxReportedSpecChanges; upstream appends a Go
// cmp.Diff of the two specs). Absent and empty values are equal, as Go's semantic
// equality has nil and empty slices and maps.
FieldErrorList ValidatePodSpecUpdate(const Object& spec, const Object& old_spec);
inline constexpr size_t kMaxReportedSpecChanges = 8;

}  // namespace berth::api
