// Strategic merge patch (Content-Type application/strategic-merge-patch+json),
// the patch kubectl sends for built-in kinds (`kubectl apply` of a Pod, `kubectl
// patch --type=strategic`, the default type of `kubectl patch`). Semantics follow
// k8s.io/apimachinery/pkg/util/strategicpatch (StrategicMergeMapPatch with
// MergeParallelList and IgnoreUnmatchedNulls, as the API server applies it) and the
// design notes in community/contributors/devel/sig-api-machinery/strategic-merge-patch.md.
//
// It is a JSON merge patch (RFC 7386: maps merge recursively, `null` deletes a key)
// except for lists, which Go struct tags describe upstream and a small table
// describes here (StrategicMergeSchema): a list field is either
//   - atomic (the default): the patch's list replaces the live one;
//   - merged by key (`patchStrategy:"merge" patchMergeKey:"name"`): elements with the
//     same key value merge recursively, new ones are appended (containers, env,
//     volumes, ports by containerPort, conditions by type, ownerReferences by uid...);
//   - merged as a set of primitives (`patchStrategy:"merge"`, no key):
//     metadata.finalizers, spec.podCIDRs — the union, keeping order.
// Field paths in the table are dotted from the object root; a list element adds no
// segment: "spec.containers.env" is the env list of every container.
//
// Directives in the patch:
//   {"$patch": "replace", ...}   in a map: the map becomes the patch's content
//   {"$patch": "delete"}         in a map: the map becomes {} (upstream's result)
//   {"$patch": "merge"}          in a map: the default, accepted and dropped
//                                (upstream's current code rejects it in maps; its
//                                design document lists it)
//   [{"name": "x", "$patch": "delete"}]  in a merged list: deletes element x
//   [{"$patch": "replace"}, ...]  in a merged list: the list becomes the other elements
//   "$deleteFromPrimitiveList/<field>": [v...]  removes values from a primitive list
//   "$setElementOrder/<field>": [...]           final order of a merged list (elements
//                                given by merge key, or primitives); live elements
//                                not listed keep their relative place
//   "$retainKeys": [k...]        clears every key of the live map not in the list
//                                (used for union types such as a volume's source)
// A value the live object does not have is added with its own directives applied
// (so a `$patch: delete` element of a list that did not exist adds nothing; upstream
// copies the patch value verbatim there).
// List order for merged lists follows upstream: patch elements in patch order,
// live-only elements interleaved at their live positions.
//
// Errors (kBadRequest, upstream's mergepatch texts):
//   `unknown patch type: foo in map: {...}`, `map: {...} does not contain declared
//   merge key: name`, `invalid patch format of retainKeys`, `invalid patch format of
//   primitive list`, `invalid patch format of setElementOrder list`, `merging lists
//   cannot yet be specified in the patch`, `The order in patch list: ... doesn't match
//   $setElementOrder list: ...`, and a patch that is not a JSON object.
//
// Custom resources have no strategic merge patch: upstream answers 415 (the API
// server decides that from the resource definition, not this file).
//
// Thread-safety: pure functions; the schemas are immutable and built on first use.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/object.h"
#include "core/status.h"

namespace berth::api {

// How the lists of one kind merge. Fields not in the table are atomic.
class StrategicMergeSchema {
 public:
  struct ListField {
    // Key field of the elements ("name", "containerPort"); empty for a set of
    // primitives.
    std::string merge_key;
  };

  // The schema of a built-in kind: Pod, Node, Namespace, Service, Event,
  // ConfigMap (core), Job (batch), PriorityClass (scheduling.k8s.io), Lease
  // (coordination.k8s.io). Any other group/kind gets the metadata-only schema
  // (finalizers as a set, ownerReferences by uid), which is what every upstream
  // type's ObjectMeta contributes.
  static const StrategicMergeSchema& ForKind(std::string_view group, std::string_view kind);

  // The merged list at `path` ("spec.containers.env"), or nullptr when atomic.
  const ListField* Lookup(std::string_view path) const;

  // For tests and for building the tables.
  explicit StrategicMergeSchema(std::map<std::string, ListField, std::less<>> lists)
      : lists_(std::move(lists)) {}

 private:
  std::map<std::string, ListField, std::less<>> lists_;
};

// Applies `patch` to `original` and returns the result (neither is modified).
// `patch` must be a JSON object (kBadRequest otherwise); `original` should be one
// (anything else is treated as {}).
StatusOr<Object> ApplyStrategicMergePatch(const Object& original, const Object& patch,
                                          const StrategicMergeSchema& schema);

}  // namespace berth::api
