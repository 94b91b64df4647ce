#include "api/namespace_security.h"

#include <charconv>

#include "api/pod_validation.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

constexpr int64_t kMaxId = kMaxPodId;

bool ParseDecimal(std::string_view s, int64_t& out) {
  if (s.empty() || s.size() > 12) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return std::from_chars(s.data(), s.data() + s.size(), out).ec == std::errc();
}

// The annotation's value, nullptr when absent.
const Object* Annotation(const Object& obj, const char* key) {
  const Object& annotations = NestedField(obj, {"metadata", "annotations"});
  if (!annotations.is_object()) return nullptr;
  auto it = annotations.find(key);
  return it == annotations.end() ? nullptr : &*it;
}

}  // namespace

StatusOr<IdBlock> ParseIdBlock(std::string_view text) {
  const size_t slash = text.find('/');
  IdBlock b;
  if (slash == std::string_view::npos || !ParseDecimal(text.substr(0, slash), b.base) ||
      !ParseDecimal(text.substr(slash + 1), b.size) || b.size < 1 || b.base + b.size - 1 > kMaxId) {
    return InvalidError("\"" + std::string(text) + "\" is not a block of ids \"<base>/<size>\" within [0, " +
                        std::to_string(kMaxId) + "]");
  }
  return b;
}

std::string FormatIdBlock(const IdBlock& block) {
  return std::to_string(block.base) + "/" + std::to_string(block.size);
}

StatusOr<IdBlock> NamespaceIdBlock(const Object& ns, const char* annotation) {
  const Object* value = Annotation(ns, annotation);
  if (value == nullptr) return NotFoundError("namespace \"" + Name(ns) + "\" has no " + annotation + " yet");
  if (!value->is_string()) return InvalidError("namespace \"" + Name(ns) + "\": " + annotation + " is not a string");
  StatusOr<IdBlock> block = ParseIdBlock(value->get<std::string>());
  if (!block.ok())
    return InvalidError("namespace \"" + Name(ns) + "\": " + annotation + ": " + block.status().message());
  return block;
}

Status CheckNamespaceSecurityWrite(bool control_plane, const GroupResource& resource, const Object& object,
                                   const Object* old) {
  if (control_plane || !resource.group.empty() || resource.resource != "namespaces") return Status::Ok();
  for (const char* key : {kUidRangeAnnotation, kSupplementalGroupsAnnotation, kMcsAnnotation}) {
    const Object* now = Annotation(object, key);
    const Object* before = old == nullptr ? nullptr : Annotation(*old, key);
    const bool same = (now == nullptr && before == nullptr) || (now != nullptr && before != nullptr && *now == *before);
    if (!same) {
      return AdmissionForbidden(
          resource, Name(object),
          std::string("the annotation ") + key + " is set by the control plane and cannot be changed");
    }
  }
  return Status::Ok();
}

}  // namespace berth::api
