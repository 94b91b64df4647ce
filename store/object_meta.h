// The metadata rules the store applies on every write, shared by every
// backend (Kubernetes' generic registry: rest.BeforeCreate / BeforeUpdate,
// BeforeDelete and ShouldDeleteDuringUpdate). See store.h, "Metadata the store
// owns" and "Deletion", for the contract; these functions implement it on one
// JSON document and do no I/O.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include "api/object.h"
#include "core/clock.h"

#include <cstdint>
#include <optional>

namespace berth::store {

// Sets metadata.uid (a new one unless obj carries a non-empty one: the API
// server's admission pipeline assigns it before the kind's strategy reads it,
// as upstream's FillObjectMetaSystemFields), creationTimestamp (RFC 3339 of now), generation = 1;
// drops resourceVersion, deletionTimestamp and deletionGracePeriodSeconds.
// Creates `metadata` when missing. obj must be a JSON object.
void StampCreate(api::Object& obj, Time now);

// Makes obj, a client's replacement of `stored`, storable: copies uid,
// creationTimestamp, deletionTimestamp and deletionGracePeriodSeconds from
// stored (removing them when stored has none), sets generation to stored's,
// +1 when SpecChanged, and resourceVersion to stored's (so an unchanged object
// compares equal to stored; the writer then sets the new revision).
// Returns whether the spec changed (SpecChanged(stored, obj)).
bool StampUpdate(const api::Object& stored, api::Object& obj);

// True when any top-level field other than apiVersion, kind, metadata and
// status differs between a and b (missing and present count as different).
bool SpecChanged(const api::Object& a, const api::Object& b);
// The complement: apiVersion, kind, metadata and status are all equal.
// a == b exactly when !SpecChanged(a, b) && SameOutsideSpec(a, b).
bool SameOutsideSpec(const api::Object& a, const api::Object& b);

// Writes metadata.resourceVersion as the decimal revision.
void SetResourceVersion(api::Object& obj, int64_t revision);

// metadata.finalizers is a non-empty array.
bool HasFinalizers(const api::Object& obj);

// What a Delete does to the stored object.
struct DeletePlan {
  enum class Action {
    kRemove,    // remove now (DELETED event)
    kMark,      // write `marked` (deletionTimestamp / grace set or shortened)
    kNothing,   // already marked with an equal or shorter grace: no write
  };
  Action action = Action::kNothing;
  api::Object marked;  // for kMark
};

// Applies store.h's deletion rules to `stored` for a Delete with the given
// grace period (nullopt or negative = 0) at time now.
DeletePlan PlanDelete(const api::Object& stored, std::optional<int64_t> grace_period_seconds,
                      Time now);

// ShouldDeleteDuringUpdate: `updated` has no finalizers and `stored` is marked
// for deletion with deletionGracePeriodSeconds absent or 0.
bool ShouldRemoveOnUpdate(const api::Object& stored, const api::Object& updated);

}  // namespace berth::store
