// metav1.Condition helpers for every layer that reads or writes object status
// conditions (k8s.io/apimachinery/pkg/api/meta/conditions.go: SetStatusCondition,
// FindStatusCondition, IsStatusConditionTrue, RemoveStatusCondition).
//
// Shape of one condition in status.conditions (JSON):
//   {"type": "QuotaReserved", "status": "True"|"False"|"Unknown",
//    "reason": "QuotaReserved", "message": "...",
//    "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 3}
//
// SetCondition follows meta.SetStatusCondition: a new type is appended; for an
// existing type, lastTransitionTime changes only when the status changes, and
// reason, message and observedGeneration are overwritten. The return value says
// whether anything changed, so callers write status only when it did.
//
// observedGeneration exists only in metav1.Condition (Workload, ClusterQueue,
// JobSet, TrainJob ...). The older per-API condition types (batch/v1
// JobCondition, core/v1 PodCondition, Kubeflow's JobCondition) have no such
// field: the API server prunes it, so a controller that set it would see its
// status differ from the stored one on every pass and write it again.
// ConditionKind::kNoObservedGeneration leaves it out for those.
//
// Thread-safety: pure functions over the JSON they are given.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "api/object.h"
#include "core/clock.h"

namespace berth::api {

enum class ConditionKind {
  kMetaV1,                // metav1.Condition: observedGeneration from metadata.generation
  kNoObservedGeneration,  // batch/v1 JobCondition, core/v1 PodCondition, Kubeflow JobCondition
};

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
};

// status.conditions[type == `type`], or nullptr.
const Object* FindCondition(const Object& obj, std::string_view type);
// Whether the condition exists with status "True".
bool IsConditionTrue(const Object& obj, std::string_view type);
// The condition's field `key` ("reason", "message", ...), or "" when the condition or
// the field is absent.
std::string ConditionField(const Object& obj, std::string_view type, std::string_view key);
// The condition's lastTransitionTime; nullopt when absent or unparsable.
std::optional<Time> ConditionTransitionTime(const Object& obj, std::string_view type);

// Sets the condition in obj.status.conditions (see the file comment). `now`
// stamps lastTransitionTime on a status change; for kMetaV1, observedGeneration
// is taken from metadata.generation when present. Returns true when obj changed.
bool SetCondition(Object* obj, const Condition& c, Time now, ConditionKind kind = ConditionKind::kMetaV1);
// Whether SetCondition(obj, c, ...) would change nothing: the condition is
// there with c's status, reason and message (and observedGeneration equal to
// metadata.generation when that is set). Reads only, so a caller can skip
// copying an object it would not write.
bool ConditionHolds(const Object& obj, const Condition& c, ConditionKind kind = ConditionKind::kMetaV1);
// Removes the condition; true when it was present.
bool RemoveCondition(Object* obj, std::string_view type);

}  // namespace berth::api
