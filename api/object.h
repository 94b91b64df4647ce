// Objects are JSON documents end to end (nlohmann::json), exactly as a
// Kubernetes API server sees them: apiVersion, kind, metadata, spec, status.
// Fields the user wrote that berth does not interpret survive a round trip.
// Code that makes decisions decodes the few fields it needs into small typed
// structs at its edge; nothing below the API layer mutates JSON it does not own.
//
// nlohmann::json keeps object keys sorted, so serialised objects have a stable
// byte form (as Go's unstructured objects do); this makes store comparisons and
// tests deterministic.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace berth::api {

using Object = nlohmann::json;

// Group/version/kind of an object ("" group for the core API).
struct GroupVersionKind {
  std::string group;
  std::string version;
  std::string kind;

  // "apps/v1", or "v1" for the core group.
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  bool operator==(const GroupVersionKind&) const = default;
  auto operator<=>(const GroupVersionKind&) const = default;
};

// Group/resource (plural), e.g. {"kueue.x-k8s.io", "clusterqueues"}. The store
// keys objects by group/resource, never by version: one storage version per kind.
struct GroupResource {
  std::string group;
  std::string resource;

  // "clusterqueues.kueue.x-k8s.io", or "pods" for the core group.
  std::string String() const { return group.empty() ? resource : resource + "." + group; }
  bool operator==(const GroupResource&) const = default;
  auto operator<=>(const GroupResource&) const = default;
};

// Splits "group/version" (or "v1") into group and version.
inline void SplitApiVersion(std::string_view api_version, std::string* group, std::string* version) {
  auto slash = api_version.find('/');
  if (slash == std::string_view::npos) {
    group->clear();
    *version = std::string(api_version);
  } else {
    *group = std::string(api_version.substr(0, slash));
    *version = std::string(api_version.substr(slash + 1));
  }
}

// Read-only accessors for the metadata every object has. Missing fields read as "".
inline const std::string& EmptyString() {
  static const std::string kEmpty;
  return kEmpty;
}
inline const std::string& MetaString(const Object& obj, const char* field) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return EmptyString();
  auto f = m->find(field);
  if (f == m->end() || !f->is_string()) return EmptyString();
  return f->get_ref<const std::string&>();
}
inline const std::string& Name(const Object& obj) { return MetaString(obj, "name"); }
inline const std::string& Namespace(const Object& obj) { return MetaString(obj, "namespace"); }
inline const std::string& ResourceVersion(const Object& obj) { return MetaString(obj, "resourceVersion"); }
inline const std::string& Uid(const Object& obj) { return MetaString(obj, "uid"); }
// metadata.deletionTimestamp is set: the object is being deleted (it stays while finalizers
// remain, or for a pod's graceful termination).
inline bool BeingDeleted(const Object& obj) { return !MetaString(obj, "deletionTimestamp").empty(); }
// metadata.generation; 0 when missing (the API server sets 1 on create and adds 1 with every
// change outside metadata and the status subresource).
inline int64_t Generation(const Object& obj) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return 0;
  auto g = m->find("generation");
  return g != m->end() && g->is_number_integer() ? g->get<int64_t>() : 0;
}

}  // namespace berth::api
