// kube-apiserver's ServiceAccount admission plugin
// (plugin/pkg/admission/serviceaccount/admission.go), on pod create:
//   - spec.serviceAccountName defaults to spec.serviceAccount (the deprecated alias, as
//     the v1 conversion reads it) and then to `default`; spec.serviceAccount is set equal;
//   - the named ServiceAccount must exist in the pod's namespace, else 403
//     `pods "p" is forbidden: error looking up service account team-a/robot:
//     serviceaccount "robot" not found`;
//   - spec.imagePullSecrets, when empty, are the ServiceAccount's;
//   - mirror pods (annotation kubernetes.io/config.mirror) are left alone.
// berth departs in one point: a pod whose ServiceAccount is `default` is admitted while
// that ServiceAccount does not exist yet. Upstream refuses it until the serviceaccount
// controller created it (clients retry); berth's controllers create pods in a namespace
// moments after it was created, and the controller (controllers/serviceaccount) creates
// `default` within the same moments, so refusing would turn a harmless race into failed
// pods. Such a pod gets its token as soon as `default` exists (the token request of the
// node agent retries). A ServiceAccount the pod names explicitly is checked as upstream.
// Upstream also adds the projected `kube-api-access-*` volume and its mounts; berth's
// pods have no mount namespace, and the node agent writes the token into the pod's
// directory instead (agent/service_account_token.h).
// On update nothing is done (the plugin ignores updates; the fields are immutable).
//
// Thread-safety: pure given the lookup.
#pragma once

#include "api/admission_attributes.h"
#include "api/object.h"
#include "core/status.h"

namespace berth::api {

inline constexpr char kDefaultServiceAccountName[] = "default";

Status AdmitPodServiceAccount(const AdmissionAttributes& attrs, Object* pod);

}  // namespace berth::api
