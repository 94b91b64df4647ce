// Small per-request operations of the REST handler that are not HTTP:
// patch types and application, list predicates from selectors, the grace
// period of a delete, resourceVersion parsing.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/object.h"
#include "api/strategic_merge_patch.h"
#include "core/status.h"
#include "store/store.h"

namespace berth::apiserver {

// The PATCH Content-Types kube-apiserver accepts.
enum class PatchType {
  kJson,            // application/json-patch+json (RFC 6902)
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
  kApply,           // application/apply-patch+yaml (server-side apply; also +cbor)
};

// Errors: kUnsupportedMedia `the body of the request was in an unknown format -
// accepted media types include: application/json-patch+json, ...` (415).
StatusOr<PatchType> ParsePatchType(std::string_view content_type);

// Applies `patch` (the request body) to `live` (the object in the URL's
// version), as kube-apiserver's patcher does:
//   kMerge           api::ApplyMergePatch (RFC 7386)
//   kJson            api::ApplyJsonPatch (RFC 6902)
//   kStrategicMerge  api::ApplyStrategicMergePatch with `strategic_schema`;
//                    nullptr (a custom resource) is refused with 415 and the
//                    media types a CRD accepts, as upstream refuses it
//   kApply           the body parsed as YAML or JSON, merged as RFC 7386 (the
//                    simplified server-side apply of api_server.cc)
// Errors: kBadRequest for a body that does not parse (api/yaml_codec.h ParseJson:
// nested deeper than api/limits.h kMaxJsonNestingDepth included, "error decoding
// patch: json: line 1, column N: exceeded max depth") or a malformed JSON patch
// operation; kTooLarge (413) for a JSON patch of more than kMaxJsonPatchOperations
// operations ("The allowed maximum operations in a JSON patch is 10000, got N", as
// upstream's patch handler); kInvalid (422, upstream's `the server rejected our request due to
// an error in our request` with the detail as a cause) for a JSON patch
// operation that cannot be applied; strategic merge directive errors as
// api/strategic_merge_patch.h describes them.
StatusOr<nlohmann::json> ApplyPatch(PatchType type, const api::StrategicMergeSchema* strategic_schema,
                                    const nlohmann::json& live, std::string_view patch);

// The store predicate for a list/watch: label selector (labels.Parse syntax)
// and field selector (metadata.name, metadata.namespace and the kind's
// selectable fields). Empty selectors give an empty predicate (everything).
// Errors: kBadRequest for bad syntax or an unsupported field label
// (`field label not supported: spec.foo`).
StatusOr<store::Predicate> BuildPredicate(std::string_view group, std::string_view kind,
                                          std::string_view label_selector,
                                          std::string_view field_selector);

// The grace period to delete `obj` with, as the registry strategies decide it:
// Pods (core group) use DeleteOptions.gracePeriodSeconds, else
// spec.terminationGracePeriodSeconds (default 30); 0 when the pod is not
// scheduled (no spec.nodeName) or already Succeeded/Failed; a negative value
// becomes 1. Every other kind is deleted at once (0): custom resources have
// no graceful deletion.
int64_t GracePeriodFor(std::string_view group, std::string_view kind, const api::Object& obj,
                       std::optional<int64_t> requested);

// "123" -> 123. Errors: kBadRequest for anything but a non-negative integer.
StatusOr<int64_t> ParseResourceVersion(std::string_view rv);

}  // namespace berth::apiserver
