// Null-safe reads and writes of the JSON objects of api/object.h, as apimachinery's
// unstructured helpers (k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/helpers.go:
// NestedFieldNoCopy, NestedString, NestedInt64, NestedBool, SetNestedField). Every layer
// that reads a field of an object it did not decode uses these, never its own copy.
//
// Reads never throw: an absent field, or one of another type than asked (the schema
// reports types on write), reads as the fallback, an empty object/array or null.
// Writes (MutableObject/MutableArray) replace an absent or mistyped value by {} / [].
//
// Named lists: Kubernetes merges env, containers, ports and volumes by their `name`
// (strategic merge patch with merge key `name`); FindNamed/UpsertNamed do the same.
//
// Shapes: everything is nlohmann::json (api::Object). Keys are UTF-8 field names.
// Thread-safety: pure functions; the returned references live as long as the object
// they point into (or forever, for the shared empty values).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "api/object.h"

namespace berth::api {

// The field `key` of an object, or a null value when absent or `obj` is not an object.
const Object& Field(const Object& obj, std::string_view key);
// The value at `path` (each element a field name), or null when any step is absent or
// not an object: NestedField(pod, {"spec", "nodeName"}).
const Object& NestedField(const Object& obj, std::initializer_list<std::string_view> path);
// The string at `path`, or the fallback when absent or not a string:
// NestedString(wl, {"status", "admission", "clusterQueue"}).
std::string NestedString(const Object& obj, std::initializer_list<std::string_view> path,
                         std::string_view fallback = "");
// The field as an object / array, or an empty one when absent or of another type.
const Object& ObjectAt(const Object& obj, std::string_view key);
const Object& ArrayAt(const Object& obj, std::string_view key);
// The field as a string / integer / bool, or the fallback when absent or of another type.
std::string StringAt(const Object& obj, std::string_view key, std::string_view fallback = "");
int64_t IntAt(const Object& obj, std::string_view key, int64_t fallback);
bool BoolAt(const Object& obj, std::string_view key, bool fallback);
// A string value as a string, or the fallback when it is not a string.
std::string AsString(const Object& value, std::string_view fallback = "");
bool HasField(const Object& obj, std::string_view key);

// The field as a mutable object / array, replacing an absent or mistyped value by {} / [].
Object& MutableObject(Object* obj, std::string_view key);
Object& MutableArray(Object* obj, std::string_view key);

// The element of a list whose `name` is `name`, or nullptr.
const Object* FindNamed(const Object& list, std::string_view name);
Object* FindNamed(Object* list, std::string_view name);
// Replaces the element with the same `name` in place, or appends `item`.
void UpsertNamed(Object* list, const Object& item);

// Copies every key of `from` (a string map: labels, annotations) into `*into`; `from`
// wins on conflicts. A null or non-object `from` is a no-op.
void MergeStringMap(Object* into, const Object& from);

}  // namespace berth::api
