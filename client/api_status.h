// Decoding the API server's errors into berth::Status, as client-go's
// k8s.io/apimachinery/pkg/api/errors (FromObject, NewGenericServerResponse)
// does, and the Status document a failure is sent as.
//
// A failed request carries a metav1.Status body:
//   {"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound",
//    "message":"pods \"x\" not found","details":{"name":"x","kind":"pods",
//    "causes":[{"reason":"FieldValueInvalid","field":"spec.x","message":"..."}]},
//    "code":404}
// The reason picks the Code (the inverse of core/status.h's table; "Expired"
// and "Gone" both give kGone, "AlreadyExists" kAlreadyExists, "Conflict"
// kConflict, "TooManyRequests" and "ServiceUnavailable" kUnavailable,
// "ServerTimeout" and "Timeout" kTimeout, "NotAcceptable" kUnsupportedMedia).
// An unknown or empty reason falls back to the HTTP code (`code`, else the
// response's). The message is kept verbatim; details.causes become
// StatusCauses {type: reason, field, message}.
//
// A body that is not a Status (plain text from a proxy, HTML, nothing) gives
// client-go's generic texts with the verb and resource appended, e.g.
//   404 -> kNotFound "the server could not find the requested resource (get pods x)"
//   500 -> kInternal `an error on the server ("plain text failure") has
//          prevented the request from succeeding (post pods)`
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "api/object.h"
#include "core/status.h"

namespace berth::client {

// The Code for a metav1.StatusReason and HTTP code (0 = unknown code).
Code CodeFromReason(std::string_view reason, int http_code);

// The metav1.Status document of a failure, as kube-apiserver writes it, without
// details: {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
// "message":..., "reason": CodeReason, "code": CodeHttpStatus}, without "reason"
// for kUnknown (upstream's omitted StatusReasonUnknown). `status` is not OK.
api::Object FailureStatusObject(const Status& status);

// Decodes a metav1.Status document. Returns OK for status "Success".
Status StatusFromObject(const api::Object& status_object, int http_code = 0);

// Decodes a failed response (http_code >= 300). `verb` is the lower-case
// HTTP method ("get", "post", "put", "patch", "delete"), `resource` the qualified resource ("pods",
// "clusterqueues.kueue.x-k8s.io") and `name` the object name or "": they only
// appear in the generic texts used when the body is not a Status.
Status StatusFromResponse(int http_code, std::string_view body, std::string_view verb = "",
                          std::string_view resource = "", std::string_view name = "");

}  // namespace berth::client
