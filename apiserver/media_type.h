// Response content negotiation, as kube-apiserver negotiates the media type of a
// response from the request's Accept header
// (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go
// NegotiateMediaTypeOptions, and errors.go errNotAcceptable; the serializers are
// responsewriters.WriteObjectNegotiated's):
//
//   - no Accept header: JSON;
//   - otherwise the clauses in order of q (highest first; equal q keep their order, and
//     q=0 clauses are dropped), the first that names a served media type, its type with
//     a "*" subtype, or "*/*" and whose transform is served wins
//     (negotiate.go acceptMediaTypeOptions). The transform is the `as`, `g` and `v`
//     parameters: none (the object itself), or with g=meta.k8s.io and v=v1 or v1beta1
//     as=Table (the server-side printing kubectl asks for), as=PartialObjectMetadata or
//     as=PartialObjectMetadataList (client-go's metadata client and informers); a clause
//     naming another transform, group or version is skipped, as upstream's
//     RequestScope.AllowsMediaTypeTransform skips it. Other parameters (pretty,
//     charset, ...) do not take part;
//   - served: application/json and application/yaml for every resource, and
//     application/vnd.kubernetes.protobuf for built-in kinds. Berth encodes no protobuf
//     responses: a clause naming protobuf is skipped, and a header naming only protobuf is
//     answered in JSON (upstream answers protobuf);
//   - nothing served: 406 NotAcceptable,
//       {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
//        "message":"only the following media types are accepted: application/json,
//        application/yaml, application/vnd.kubernetes.protobuf","reason":"NotAcceptable",
//        "code":406}
//     (custom resources list application/json, application/yaml). Pod logs negotiate the
//     same way (`Accept: text/plain` alone is refused, as upstream) and stay text.
//
// A YAML response is the JSON object as block YAML (api/yaml_codec.h EmitYaml; keys
// sorted, as sigs.k8s.io/yaml writes them) with Content-Type application/yaml; errors
// are YAML Status objects then, as upstream's ErrorNegotiated writes them.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "apiserver/http_server.h"

namespace berth::apiserver {

enum class ResponseMediaType { kJson, kYaml, kNotAcceptable };

// The answer a clause asks for in place of the object (handlers/response.go
// transformObject): a Table; the object's metadata alone as a PartialObjectMetadata,
// for a single object (a GET, a write's answer, each watch event); or as a
// PartialObjectMetadataList, for a LIST. A LIST asked for PartialObjectMetadata, or a
// single object for PartialObjectMetadataList, is 406, as upstream answers it.
enum class Transform { kNone, kTable, kPartialObjectMetadata, kPartialObjectMetadataList };

// A negotiated answer: its media type and transform, and the meta.k8s.io version the
// transform's kinds are written in ("v1" or "v1beta1"; empty without a transform).
struct ResponseFormat {
  ResponseMediaType media = ResponseMediaType::kJson;
  Transform transform = Transform::kNone;
  std::string meta_version;
  bool operator==(const ResponseFormat&) const = default;
};

// The format to answer a request with `accept` (the Accept header, "" when absent);
// `protobuf_served`: the resource is a built-in kind (see above).
ResponseFormat NegotiateResponseFormat(std::string_view accept, bool protobuf_served);

// The 406 response listing the media types served.
HttpResponse NotAcceptableResponse(bool protobuf_served);
// The 406 for a list (`list`) asked for PartialObjectMetadata, or a single object asked for
// PartialObjectMetadataList: "you requested PartialObjectMetadata, but the requested object
// is a list" (upstream's asPartialObjectMetadata(List) add the Go type in parentheses).
HttpResponse TransformNotAcceptableResponse(bool list);

// Re-encodes a JSON response body (Content-Type application/json) as YAML; other
// responses (pod log text) are left as they are.
void EncodeResponseAsYaml(HttpResponse* response);

}  // namespace berth::apiserver
