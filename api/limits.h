// The input limits of the API server: how large, how deep and how expanded a request
// may be, and how large an object may be stored. Each follows the upstream value it
// names (docs/security.md lists them all, with the name and label limits of
// api/metadata_validation.h); where berth departs from upstream it says why.
//
// Thread-safety: constants.
#pragma once

#include <cstddef>

namespace berth::api {

// A request body larger than this is refused with 413 RequestEntityTooLarge,
// "Request entity too large: limit is 3145728" (apiserver/http_server.cc).
// Upstream: kube-apiserver's MaxRequestBodyBytes, 3 MiB
// (staging/src/k8s.io/apiserver/pkg/server/config.go, NewConfig; the message is
// limitedReadBody's in staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go).
inline constexpr std::size_t kMaxRequestBodyBytes = 3 * 1024 * 1024;

// JSON text nested deeper than this ('[' and '{' open a level) is refused before it is
// decoded: 400 "json: line L, column C: exceeded max depth" (api/yaml_codec.h ParseJson).
// Upstream: Go's encoding/json (and sigs.k8s.io/json, kube-apiserver's decoder)
// maxNestingDepth = 10000, "exceeded max depth" (src/encoding/json/scanner.go).
// Every walker over a decoded object (copy, dump, comparison, validation, pruning, the
// patches, the table printer) is then at most this deep; api/limits_test and the
// apiserver's deep-document tests run the whole pipeline at this depth.
inline constexpr int kMaxJsonNestingDepth = 10000;

// A YAML node nested deeper than this is refused: 400 "... yaml: line L, column C:
// exceeded max depth of 499" (api/yaml_codec.h). The bound is yaml-cpp's own: its
// parser recurses once per node and refuses the 500th nested node (DepthGuard<500> in
// yaml-cpp 0.7's singledocparser.cpp; the document's root node is depth 1), so berth
// counts the same way and names the reason. Upstream go-yaml allows 10000 (max_flow_level
// and max_indents, "exceeded max depth of 10000", scannerc.go): berth is stricter; no
// Kubernetes manifest comes near 499 levels.
inline constexpr int kMaxYamlNestingDepth = 499;

// Alias expansion in one YAML document may add at most this many bytes (the size of
// the expanded values as compact JSON): more is 400 "... yaml: line L, column C: document
// contains excessive aliasing". Upstream go-yaml bounds aliasing only by the ratio of
// alias-driven decode steps to all decode steps (decode.go allowedAliasRatio, also
// applied here), which lets a few aliases of one large anchor through: 200,000 aliases
// of a 64 KiB string are 3 MB of YAML and 13 GB of JSON. berth also bounds the bytes, at
// the request body limit: an expanded document larger than that could not be stored
// (kMaxStoredObjectBytes) nor sent as JSON (kMaxRequestBodyBytes) anyway.
inline constexpr std::size_t kMaxYamlAliasExpansionBytes = kMaxRequestBodyBytes;

// An object whose stored form (compact JSON) is larger than this is not written:
// 500 "etcdserver: request is too large" (store/store.h). Upstream: etcd's default
// --max-request-bytes, 1.5 MiB (server/embed/config.go DefaultMaxRequestBytes; the
// message is rpctypes.ErrGRPCRequestTooLarge, which kube-apiserver returns as a 500
// with reason "" through responsewriters.ErrorToAPIStatus). etcd measures the whole
// request (key, protobuf-encoded object, overhead); berth measures the JSON it stores.
inline constexpr std::size_t kMaxStoredObjectBytes = 1536 * 1024;

// A ConfigMap's data and binaryData values together may hold at most this many bytes:
// 422 `<nil>: Too long: must have at most 1048576 bytes`. Upstream: core.MaxSecretSize,
// 1 MiB (pkg/apis/core/types.go), checked by ValidateConfigMap
// (pkg/apis/core/validation/validation.go).
inline constexpr std::size_t kMaxConfigMapDataBytes = 1024 * 1024;

// A Secret's data values (decoded, stringData merged in) may hold at most this many bytes:
// 422 `Secret "x" is invalid: data: Too long: may not be more than 1048576 bytes`. Upstream:
// core.MaxSecretSize, 1 MiB (pkg/apis/core/types.go), checked by ValidateSecret.
inline constexpr std::size_t kMaxSecretDataBytes = 1024 * 1024;

// A JSON patch (RFC 6902) with more operations than this is refused with 413 "The
// allowed maximum operations in a JSON patch is 10000, got N". Upstream:
// maxJSONPatchOperations (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go).
inline constexpr std::size_t kMaxJsonPatchOperations = 10000;

// The "copy" operations of one JSON patch may add at most this many bytes to the object
// (each copy counts its value's JSON size); past it the patch is refused with 422 "json
// patch operation N (copy /path): the accumulated size increase of copy is S, exceeding
// the limit 3145728", and nothing is applied. Without it 30 copies of a copy double the
// object 30 times from a 1 KB body (CVE-2019-1002100). Upstream: JSONPatchMaxCopyBytes,
// 3 MiB (staging/src/k8s.io/apiserver/pkg/server/config.go), enforced by json-patch's
// AccumulatedCopySizeLimit.
inline constexpr std::size_t kMaxJsonPatchCopyBytes = 3 * 1024 * 1024;

// A pod (or pod template) may have at most this many volumes: 422 `spec.volumes: Too many:
// N: must have at most 256 items` (api/pod_validation.h). Upstream has no limit (the
// request size bounds it); berth bounds it because the node agent materializes every
// volume on disk and lists each in every container's mount table (agent/volumes.h), and
// Kueue, Trainer and JobSet pods use a handful.
inline constexpr std::size_t kMaxPodVolumes = 256;

}  // namespace berth::api
