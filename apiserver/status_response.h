// Kubernetes Status objects: how every API error reaches the client.
//
// kube-apiserver answers every failed request with a metav1.Status body and
// the matching HTTP code; kubectl prints it from `reason`, `message` and, for
// 422 Invalid, from `details.kind`, `details.name` and `details.causes[]`:
//
//   {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
//    "message":"clusterqueues.kueue.x-k8s.io \"nope\" not found",
//    "reason":"NotFound",
//    "details":{"name":"nope","group":"kueue.x-k8s.io","kind":"clusterqueues"},
//    "code":404}
//
// The reason and HTTP code come from berth::Status's Code (core/status.h).
// Per upstream convention `details.kind` is the plural resource for
// NotFound/AlreadyExists/Conflict and the Kind for Invalid; the helpers below
// build both the message text and the details the way upstream's
// k8s.io/apimachinery/pkg/api/errors constructors do.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "apiserver/http_server.h"
#include "core/status.h"

namespace berth::apiserver {

// metav1.StatusDetails (without retryAfterSeconds).
struct StatusDetails {
  std::string name;
  std::string group;
  std::string kind;  // plural resource, or Kind for Invalid
  std::string uid;   // only on Success bodies of DELETE

  bool empty() const { return name.empty() && group.empty() && kind.empty() && uid.empty(); }
};

// Serialises a response body. Error messages may quote request bytes that
// are not UTF-8 (a body that failed to parse): they are replaced by U+FFFD,
// as Go's encoding/json does, instead of failing.
std::string DumpJson(const nlohmann::json& j);
// The same text appended to *out (no intermediate string: list bodies are
// written item by item).
void AppendJson(const nlohmann::json& j, std::string* out);

// Whether upstream's constructor for this code's reason always attaches a
// metav1.StatusDetails (k8s.io/apimachinery/pkg/api/errors/errors.go: NewNotFound,
// NewAlreadyExists, NewConflict, NewForbidden, NewInvalid, NewMethodNotSupported,
// NewServerTimeout, NewInternalError, and NewGenericServerResponse, whose 404 answers an
// unserved path): its Status then has "details", `{}` when every field is empty. kubectl
// dereferences it: `kubectl debug POD` reads details.name of the 404 for an unserved
// pods/ephemeralcontainers (and crashes on a Status without details). BadRequest,
// Unauthorized, Gone, TooLarge, UnsupportedMedia and Unavailable have none.
bool UpstreamAttachesDetails(Code code);

// The Status object for `status` (which must not be OK). Causes become
// details.causes[] as {reason: type, message, field}; "details" is present when any of
// its fields is set or UpstreamAttachesDetails(status.code()).
nlohmann::json StatusToJson(const Status& status, const StatusDetails& details = {});
// A whole HTTP response: code from CodeHttpStatus, body from StatusToJson.
HttpResponse StatusResponse(const Status& status, const StatusDetails& details = {});
// 429 TooManyRequests with `message` and Retry-After: 1, as kube-apiserver's
// max-in-flight filter answers (staging/src/k8s.io/apiserver/pkg/endpoints/
// handlers/responsewriters/errors.go TooManyRequests: reason TooManyRequests,
// details.retryAfterSeconds 1).
HttpResponse TooManyRequestsResponse(const std::string& message);
// {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":...}
nlohmann::json SuccessStatusJson(const StatusDetails& details);

// NotFound/AlreadyExists/Conflict texts come from store/store.h.
// (Invalid errors come from api::InvalidStatus in api/field_errors.h.)
// The details upstream attaches to an error about one object. For Invalid
// errors kind is the Kind; otherwise the plural resource.
StatusDetails DetailsFor(const Status& status, const api::GroupResource& gr,
                         std::string_view kind, std::string_view name);

}  // namespace berth::apiserver
