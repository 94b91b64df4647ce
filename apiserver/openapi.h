// OpenAPI v3 documents generated from the Registry, as kube-apiserver publishes
// them under /openapi/v3 (what kubectl's k8s.io/cli-runtime/pkg/resource/
// query_param_verifier_v3.go reads to send fieldValidation):
//
//   GET /openapi/v3
//     {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=<H>"},
//               "apis/kueue.x-k8s.io/v1beta2":{...}, ...}}
//   GET /openapi/v3/apis/{group}/{version}[?hash=<H>]
//     {"openapi":"3.0.0","info":{"title":"Kubernetes","version":"v1.32.0"},
//      "paths":{<collection path>:{get,post,delete}, <object path>:{get,put,patch,delete},
//               <status path>:{get,put,patch}},
//      "components":{"schemas":{<name>:<the version's openAPIV3Schema>, <shared $ref targets>}}}
//
// Every operation carries x-kubernetes-action and x-kubernetes-group-version-kind,
// and every write (post, put, patch) the `fieldValidation` query parameter: this
// is what makes kubectl (default --validate=strict) trust the server's field
// validation and send fieldValidation=Strict instead of downloading
// /openapi/v2 for client-side validation. Schemas are named like upstream's:
// "io.k8s.api.core.v1.Pod", "io.k8s.api.scheduling.v1.PriorityClass",
// "io.x-k8s.kueue.v1beta2.ClusterQueue" (the reversed group), and carry
// x-kubernetes-group-version-kind so `kubectl explain` can find them.
//
// <H> is a hash of the document's bytes (FNV-1a 64, hex): kubectl caches each
// document under it, so a changed document gets a new URL.
//
// /openapi/v2 is served as an empty Swagger 2.0 document (no paths, no
// definitions): kubectl 1.32 downloads it (protobuf only) for client-side
// validation of a kind the v3 documents do not describe, e.g. a misspelled
// `kind:`. With no definition for that kind it skips validation and goes on to
// resolve the kind, failing as it does against a cluster:
//   error: resource mapping not found for name: "x" namespace: "" from "f.yaml":
//   no matches for kind "Clusterqueue" in version "kueue.x-k8s.io/v1beta2"
//   ensure CRDs are installed first
// (a 404 made it print "failed to download openapi" instead). Every served
// kind is in the v3 documents with fieldValidation, so kubectl never needs
// real v2 schemas; the empty document also leaves kubectl's strategic merge
// patch metadata to its compiled-in types, as the v2 404 did.
//
// Thread-safety: immutable after construction.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>

#include "api/registry.h"
#include "apiserver/discovery.h"

namespace berth::apiserver {

// What kubectl asks /openapi/v2 for, and the Content-Type kube-apiserver
// answers it with.
inline constexpr std::string_view kOpenApiV2ProtobufMediaType = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
inline constexpr std::string_view kOpenApiV2ProtobufContentType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

class OpenApi {
 public:
  OpenApi(const api::Registry& registry, const Discovery& discovery);

  // The /openapi/v3 index.
  const std::string& Index() const { return index_; }
  // The document for "api/v1" or "apis/{group}/{version}" (the index key);
  // nullptr when unknown.
  const std::string* Document(std::string_view key) const;

  // The /openapi/v2 document. Protobuf (gnostic openapi.v2.Document{1: swagger
  // "2.0", 2: info{1: title, 2: version}}) when `accept` names
  // kOpenApiV2ProtobufMediaType, else the same document in JSON. Sets
  // *content_type to the media type of the result.
  static std::string V2Document(std::string_view accept, std::string* content_type);

  // "io.x-k8s.kueue.v1beta2.ClusterQueue" for a definition's kind at a version.
  static std::string SchemaName(const api::ResourceDefinition& def, std::string_view version);

 private:
  std::string index_;
  std::map<std::string, std::string, std::less<>> documents_;
};

}  // namespace berth::apiserver
