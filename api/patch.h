// Patches applied to objects (api/object.h), as the API server applies the bodies
// of PATCH requests:
//   application/merge-patch+json   JSON merge patch, RFC 7386 (kubectl apply for CRDs,
//                                  kubectl label/annotate, kubectl patch --type=merge)
//   application/json-patch+json    JSON patch, RFC 6902 (kubectl patch --type=json):
//                                  add, remove, replace, move, copy, test
// Strategic merge patch (application/strategic-merge-patch+json, used by kubectl for
// built-in kinds) and server-side apply (application/apply-patch+yaml) need per-kind
// merge keys and field ownership: they are implemented by the API server, not here.
//
// Both functions work on a copy and return the patched object; the input is never
// modified, and a failing JSON patch leaves nothing half-applied (RFC 6902 §5).
//
// Errors (Kubernetes' status codes for PATCH):
//   kBadRequest  the patch document itself is malformed: a JSON patch that is not an array
//                of objects, an operation without "op"/"path", an unknown op, a missing
//                "value"/"from", a path that is not a JSON pointer. Message names the
//                operation: `json patch operation 2: missing "value"`.
//   kInvalid     a well-formed operation that cannot be applied to this object (a path that
//                does not exist, an index out of range, a failed test, a move into its own
//                child, a target whose parent is a string, number, bool or null). Message
//                names the op and path and why:
//                `json patch operation 1 (remove /spec/x): key 'x' not found`,
//                `json patch operation 3 (test /spec/replicas): test failed: value is 2, not 3`;
//                and copies that together add more than kMaxJsonPatchCopyBytes (api/limits.h)
//                of JSON to the object.
//
// Thread-safety: pure functions.
#pragma once

#include "api/object.h"
#include "core/status.h"

namespace berth::api {

// RFC 7386: members of an object patch replace or (null) delete the target's members,
// recursively; arrays and scalars replace wholesale; a non-object patch replaces the
// whole target. Never fails for a JSON patch value; the Status is kept for symmetry with
// callers that parse the body first.
StatusOr<Object> ApplyMergePatch(const Object& target, const Object& patch);

// RFC 6902, operations applied in order.
StatusOr<Object> ApplyJsonPatch(const Object& target, const Object& patch);

// The RFC 7386 patch that turns `from` into `to` (null for removed members, whole arrays
// for changed arrays); ApplyMergePatch(from, CreateMergePatch(from, to)) == to when both
// are objects. Used to show and record changes (kubectl apply's three-way diff).
Object CreateMergePatch(const Object& from, const Object& to);

}  // namespace berth::api
