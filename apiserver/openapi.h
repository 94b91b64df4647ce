// OpenAPI v3 documents generated from the Registry, as kube-apiserver publishes
// them under /openapi/v3 (kubectl-api.md §3.1):
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
// Thread-safety: immutable after construction.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>

#include "api/registry.h"
#include "apiserver/discovery.h"

namespace berth::apiserver {

class OpenApi {
 public:
  OpenApi(const api::Registry& registry, const Discovery& discovery);

  // The /openapi/v3 index.
  const std::string& Index() const { return index_; }
  // The document for "api/v1" or "apis/{group}/{version}" (the index key);
  // nullptr when unknown.
  const std::string* Document(std::string_view key) const;

  // "io.x-k8s.kueue.v1beta2.ClusterQueue" for a definition's kind at a version.
  static std::string SchemaName(const api::ResourceDefinition& def, std::string_view version);

 private:
  std::string index_;
  std::map<std::string, std::string, std::less<>> documents_;
};

}  // namespace berth::apiserver
