// Decoding of Kubernetes protobuf request bodies (Content-Type
// application/vnd.kubernetes.protobuf), what kubectl's typed commands send:
// `kubectl create namespace|configmap|secret|serviceaccount|priorityclass|job|
// service`, `kubectl run` (a Pod), the DeleteOptions of `kubectl drain`, and
// the reviews of `kubectl auth can-i` and `kubectl auth whoami`, the
// TokenRequest of `kubectl create token`, and the
// RBAC kinds of `kubectl create role|clusterrole|rolebinding|clusterrolebinding`.
// The result is the JSON object the JSON serializer would have sent for the
// same Go object, so the body then goes through the normal pipeline.
//
// Wire shape (k8s.io/apimachinery runtime/serializer/protobuf):
//   "k8s\x00" + runtime.Unknown{1: typeMeta{1: apiVersion, 2: kind},
//                                2: raw (the object's message bytes),
//                                3: contentEncoding (must be empty),
//                                4: contentType}
// raw is the generated message of the kind (k8s.io/api .../generated.proto).
// berth decodes it with one field table per message (field number -> JSON
// name, wire type and, for a nested message, its table); the tables were
// written from the field numbers of kubernetes/api and apimachinery's
// generated.proto (Kubernetes 1.32 era) and cover the kinds and fields listed
// in protobuf_codec.cc. Encoding rules followed:
//   * scalars: varint (bool, int32, int64; negative int32 as 10-byte varint),
//     length-delimited (string, bytes -> base64 in JSON, nested message)
//   * maps as repeated entry messages {1: key, 2: value}
//   * resource.Quantity {1: string} -> its string; metav1.Time {1: seconds,
//     2: nanos} -> RFC 3339 seconds (the JSON form; nanos are dropped as
//     upstream drops them); intstr.IntOrString {1: type, 2: intVal,
//     3: strVal} -> number or string
//   * Go's generated marshalers write every non-pointer field, zero values
//     included; a field whose Go JSON tag has omitempty is therefore omitted
//     from the JSON when zero (empty string, 0, false, empty list, map or
//     message), exactly as encoding/json would; pointer fields and fields
//     without omitempty are kept whatever their value.
//   * inlined Go structs (LocalObjectReference inside ConfigMapKeySelector,
//     ...) have their fields merged into the parent JSON object.
//   * a field number the table does not know is skipped when it carries a
//     zero value (a non-pointer Go field berth does not model); with content
//     the body is refused (415 naming the message and field) rather than
//     silently dropping part of the object: send it as JSON or YAML instead.
//
// Errors: kBadRequest (400) for a body that is not a well-formed envelope or
// message (bad magic, truncated varint or length, wrong wire type, a content
// encoding); kUnsupportedMedia (415) for a kind without a table (custom
// resources: upstream refuses protobuf for them with the same message) or a
// field berth does not decode.
//
// Thread-safety: pure functions over immutable tables.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "core/status.h"

namespace berth::apiserver {

inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";

// True when a Content-Type header names the Kubernetes protobuf media type
// (parameters ignored).
bool IsProtobufContentType(std::string_view content_type);

// Decodes a whole request body (envelope + message) into the JSON object,
// apiVersion and kind included from the envelope's typeMeta.
StatusOr<nlohmann::json> DecodeProtobufObject(std::string_view body);

// Decodes the message bytes of `kind` in `api_version` ("v1", "batch/v1",
// "scheduling.k8s.io/v1", "meta.k8s.io/v1" for DeleteOptions, "policy/v1"),
// without apiVersion/kind in the result.
StatusOr<nlohmann::json> DecodeProtobufMessage(std::string_view api_version, std::string_view kind,
                                               std::string_view raw);

}  // namespace berth::apiserver
