// The review APIs `kubectl auth whoami` and `kubectl auth can-i` call: create-
// only kinds that are answered at once and never stored, as kube-apiserver's
// registries for them (pkg/registry/authentication/selfsubjectreview,
// pkg/registry/authorization/{selfsubjectaccessreview,subjectaccessreview,
// localsubjectaccessreview,selfsubjectrulesreview}):
//
//   POST /apis/authentication.k8s.io/v1/selfsubjectreviews
//        -> status.userInfo {username, uid, groups, extra} of the requester
//   POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews
//        spec.resourceAttributes {namespace, verb, group, version, resource,
//        subresource, name} or spec.nonResourceAttributes {path, verb}
//        -> status {allowed, denied, reason} for the requester
//   POST /apis/authorization.k8s.io/v1/subjectaccessreviews
//        the same for spec.user / spec.groups / spec.uid / spec.extra
//   POST /apis/authorization.k8s.io/v1/namespaces/{ns}/localsubjectaccessreviews
//        the same, the namespace fixed by the URL ("spec.resourceAttributes.
//        namespace: Invalid value: ...: must match metadata.namespace" otherwise)
//   POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews
//        spec.namespace -> status {resourceRules, nonResourceRules, incomplete}
// Each answers 201 with the request object and its status. Whether the
// requester may create the review itself was checked like any request
// (system:basic-user grants the self reviews to every authenticated user).
//
// Thread-safety: pure given the authorizer.
#pragma once
#include <optional>

#include "apiserver/http_server.h"
#include "apiserver/request_info.h"
#include "authn/user_info.h"
#include "rbac/authorizer.h"

namespace berth::apiserver {

// True when `info` names one of the review resources above.
bool IsAccessReview(const RequestInfo& info);

// Answers a review request (IsAccessReview). `body` is the decoded JSON
// object. Errors are Status responses: 400 for a field of the wrong JSON type,
// as the typed decoder words it (`SelfSubjectAccessReview in version "v1" cannot
// be handled as a SelfSubjectAccessReview: json: cannot unmarshal number into Go
// struct field ResourceAttributes.spec.resourceAttributes.verb of type string`)
// or a body namespace other than the URL's; 422 with every error of
// pkg/apis/authorization/validation (both or neither of resourceAttributes and
// nonResourceAttributes; no user nor group; for a LocalSubjectAccessReview a
// resourceAttributes.namespace other than the URL's, or nonResourceAttributes);
// 405 for a verb other than create.
HttpResponse ServeAccessReview(const RequestInfo& info, api::Object body, const authn::UserInfo& requester,
                               const rbac::Authorizer* authorizer);

}  // namespace berth::apiserver
