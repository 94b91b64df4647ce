// Strategies of built-in core/v1 kinds whose create-time state upstream sets in
// code (pkg/registry/core/<kind>/strategy.go PrepareForCreate / PrepareForUpdate):
//
// Namespace
//   create: status.phase Active; spec.finalizers ["kubernetes"].
//   update: spec.finalizers kept from the stored object (changed only through
//     finalization, upstream's /finalize subresource).
//   name: DNS-1123 label.
// Pod
//   create: status reset to {phase: Pending} (a client cannot create a running pod).
//   admission: the ServiceAccount plugin (api/service_account_admission.h:
//     spec.serviceAccountName defaulted and checked), then the Priority plugin
//     (api/priority_admission.h): spec.priority and spec.preemptionPolicy from the
//     PriorityClass named, or the globalDefault one.
//
//   validation (create and update): the pod spec as ValidatePodSpec checks it
//     (api/pod_validation.h: container, init container, volume and env names, resources).
//   status update (ValidatePodStatusUpdate's ValidateContainerStateTransition and
//     ValidateInitContainerStateTransition, pkg/apis/core/validation/validation.go): unless
//     the pod's restartPolicy is Always, a container the stored status shows terminated may
//     not be shown waiting or running ("status.containerStatuses[i].state: Forbidden: may
//     not be transitioned to non-terminated state"); with OnFailure a non-zero exit may
//     restart, and so may an init container with restartPolicy Always (a sidecar). The
//     phase itself is not checked, as upstream (kubernetes/kubernetes#125410).
// ConfigMap
//   validation: ValidateConfigMap's keys (IsConfigMapKey), a data key also in binaryData
//     ("duplicate of key present in binaryData"), and values of at most 1 MiB together
//     (binaryData counted decoded; api/limits.h kMaxConfigMapDataBytes):
//     `ConfigMap "x" is invalid: : Too long: may not be more than 1048576 bytes`;
//   update (ValidateConfigMapUpdate): once `immutable: true`, immutable, data and
//     binaryData are Forbidden "field is immutable when `immutable` is set".
// Secret (pkg/registry/core/secret/strategy.go, ValidateSecret and ValidateSecretUpdate in
//   pkg/apis/core/validation/validation.go)
//   defaulting (create and update): `type` Opaque when empty (SetDefaults_Secret);
//     `stringData` merged into `data` (base64-encoded; a stringData key wins over the same data
//     key, as the v1 conversion does) and removed, so it is never stored.
//   validation: data keys as ConfigMap keys; each data value base64 text (upstream decodes
//     []byte and answers 400 `illegal base64 data at input byte N`; berth answers the field
//     error `data[k]: Invalid value: "<secret contents redacted>": illegal base64 data at input
//     byte N`, never the value); decoded values at most 1 MiB together (kMaxSecretDataBytes,
//     `data: Too long: ...`); the required keys of the typed Secrets
//     (kubernetes.io/basic-auth, ssh-auth, tls, dockercfg, dockerconfigjson,
//     service-account-token's annotation) as Required errors.
//   update: `type` immutable (`type: Invalid value: "x": field is immutable`); once
//     `immutable: true`, immutable and data are Forbidden "field is immutable when `immutable`
//     is set". No error message carries a data value.
//
// Other rules of these kinds (Pod spec immutability, QoS class) are not here yet.
//
// Thread-safety: stateless.
#pragma once

#include "api/strategy.h"

namespace berth::api {

void RegisterCoreStrategies(StrategyRegistry* registry);

}  // namespace berth::api
