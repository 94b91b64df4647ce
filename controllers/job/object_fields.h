// Small helpers the job-family translation layers (controllers/job, jobset, trainer,
// pytorchjob) share to read and write the JSON objects of api/object.h: null-safe reads
// (an absent or mistyped field reads as empty, the schema reports types), "named list"
// edits with the strategic-merge semantics Kubernetes uses for env, containers, ports and
// volumes (merge key `name`), owner references, and reading status conditions.
// Decisions about conditions are returned as controllers::Condition values
// (controllers/common/conditions.h); the reconcilers write them with SetCondition there.
//
// Shapes: everything is nlohmann::json (api::Object).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/object.h"

namespace berth::controllers::jobs {

using api::Object;

// The field `key` of an object, or a null value when absent or `obj` is not an object.
const Object& Field(const Object& obj, std::string_view key);
// The field as an object / array, or an empty one when absent or of another type.
const Object& ObjectAt(const Object& obj, std::string_view key);
const Object& ArrayAt(const Object& obj, std::string_view key);
// The field as a string / integer / bool, or the fallback when absent or of another type.
std::string StringAt(const Object& obj, std::string_view key, std::string_view fallback = "");
int64_t IntAt(const Object& obj, std::string_view key, int64_t fallback);
bool BoolAt(const Object& obj, std::string_view key, bool fallback);
bool HasField(const Object& obj, std::string_view key);

// The field as a mutable object / array, replacing an absent or mistyped value by {} / [].
Object& MutableObject(Object* obj, std::string_view key);
Object& MutableArray(Object* obj, std::string_view key);

// The element of a list whose `name` is `name`, or nullptr.
const Object* FindNamed(const Object& list, std::string_view name);
Object* FindNamed(Object* list, std::string_view name);
// Replaces the element with the same `name` in place, or appends `item` (how Kubernetes
// merges env, containers and volumes by name; also trainer's env "upsert").
void UpsertNamed(Object* list, const Object& item);

// Copies every key of `from` (a string map: labels, annotations) into `*into`; `from`
// wins on conflicts. A null or non-object `from` is a no-op.
void MergeStringMap(Object* into, const Object& from);

// {"name": name, "value": value}.
Object EnvVar(std::string_view name, std::string_view value);
// {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}} (downward API).
Object EnvVarFromField(std::string_view name, std::string_view field_path);

// The ownerReference a controller writes on the objects it creates:
// {apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true}.
Object ControllerReference(const Object& owner);

// Whether status.conditions has `type` with status "True"; the condition's field
// `key` ("reason", "message"), or "" when absent.
bool HasTrueCondition(const Object& obj, std::string_view type);
std::string ConditionField(const Object& obj, std::string_view type, std::string_view key);

}  // namespace berth::controllers::jobs
