#include "api/unstructured.h"

namespace berth::api {
namespace {

const Object& Null() {
  static const Object kNull;
  return kNull;
}

}  // namespace

const Object& Field(const Object& obj, std::string_view key) {
  if (!obj.is_object()) return Null();
  auto it = obj.find(key);
  return it == obj.end() ? Null() : *it;
}

const Object& ObjectAt(const Object& obj, std::string_view key) {
  static const Object kEmpty = Object::object();
  const Object& v = Field(obj, key);
  return v.is_object() ? v : kEmpty;
}

const Object& ArrayAt(const Object& obj, std::string_view key) {
  static const Object kEmpty = Object::array();
  const Object& v = Field(obj, key);
  return v.is_array() ? v : kEmpty;
}

std::string StringAt(const Object& obj, std::string_view key, std::string_view fallback) {
  return AsString(Field(obj, key), fallback);
}

int64_t IntAt(const Object& obj, std::string_view key, int64_t fallback) {
  const Object& v = Field(obj, key);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

bool BoolAt(const Object& obj, std::string_view key, bool fallback) {
  const Object& v = Field(obj, key);
  return v.is_boolean() ? v.get<bool>() : fallback;
}

bool HasField(const Object& obj, std::string_view key) { return !Field(obj, key).is_null(); }

const Object& NestedField(const Object& obj, std::initializer_list<std::string_view> path) {
  const Object* at = &obj;
  for (std::string_view key : path) {
    at = &Field(*at, key);
    if (at->is_null()) break;
  }
  return *at;
}

std::string NestedString(const Object& obj, std::initializer_list<std::string_view> path, std::string_view fallback) {
  return AsString(NestedField(obj, path), fallback);
}

std::string AsString(const Object& value, std::string_view fallback) {
  return value.is_string() ? value.get<std::string>() : std::string(fallback);
}

Object& MutableObject(Object* obj, std::string_view key) {
  if (!obj->is_object()) *obj = Object::object();
  Object& v = (*obj)[std::string(key)];
  if (!v.is_object()) v = Object::object();
  return v;
}

Object& MutableArray(Object* obj, std::string_view key) {
  if (!obj->is_object()) *obj = Object::object();
  Object& v = (*obj)[std::string(key)];
  if (!v.is_array()) v = Object::array();
  return v;
}

const Object* FindNamed(const Object& list, std::string_view name) {
  if (!list.is_array()) return nullptr;
  for (const Object& item : list) {
    if (StringAt(item, "name") == name) return &item;
  }
  return nullptr;
}

Object* FindNamed(Object* list, std::string_view name) {
  if (!list->is_array()) return nullptr;
  for (Object& item : *list) {
    if (StringAt(item, "name") == name) return &item;
  }
  return nullptr;
}

void UpsertNamed(Object* list, const Object& item) {
  if (!list->is_array()) *list = Object::array();
  if (Object* existing = FindNamed(list, StringAt(item, "name"))) {
    *existing = item;
  } else {
    list->push_back(item);
  }
}

void MergeStringMap(Object* into, const Object& from) {
  if (!from.is_object()) return;
  if (!into->is_object()) *into = Object::object();
  for (auto it = from.begin(); it != from.end(); ++it) (*into)[it.key()] = it.value();
}

}  // namespace berth::api
