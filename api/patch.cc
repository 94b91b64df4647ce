#include "api/patch.h"

#include <optional>
#include <string>
#include <utility>

#include "api/limits.h"

namespace berth::api {

namespace {

// json::contains(json_pointer) throws (out_of_range.404 "unresolved reference token")
// for an empty or non-numeric token on an array in nlohmann 3.11; such a pointer
// addresses nothing.
bool ContainsPointer(const Object& doc, const nlohmann::json::json_pointer& pointer) {
  try {
    return doc.contains(pointer);
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

// nlohmann's exception text without its "[json.exception.x.NNN] " prefix.
std::string ExceptionDetail(const nlohmann::json::exception& e) {
  std::string what = e.what();
  if (!what.empty() && what[0] == '[') {
    auto close = what.find("] ");
    if (close != std::string::npos) what.erase(0, close + 2);
  }
  return what;
}

std::string OpName(std::size_t index) { return "json patch operation " + std::to_string(index + 1); }

}  // namespace

StatusOr<Object> ApplyMergePatch(const Object& target, const Object& patch) {
  Object result = target;
  result.merge_patch(patch);
  return result;
}

StatusOr<Object> ApplyJsonPatch(const Object& target, const Object& patch) {
  if (!patch.is_array()) {
    return BadRequestError("json patch must be an array of operations, got " + std::string(patch.type_name()));
  }
  Object doc = target;
  std::size_t copied = 0;  // bytes the copy operations added so far
  for (std::size_t i = 0; i < patch.size(); ++i) {
    const Object& op = patch[i];
    if (!op.is_object()) return BadRequestError(OpName(i) + ": operation must be an object");
    auto op_it = op.find("op");
    if (op_it == op.end() || !op_it->is_string()) {
      return BadRequestError(OpName(i) + ": missing \"op\"");
    }
    const std::string& name = op_it->get_ref<const std::string&>();
    if (name != "add" && name != "remove" && name != "replace" && name != "move" && name != "copy" && name != "test") {
      return BadRequestError(OpName(i) + ": unknown op \"" + name + "\"");
    }
    auto path_it = op.find("path");
    if (path_it == op.end() || !path_it->is_string()) {
      return BadRequestError(OpName(i) + " (" + name + "): missing \"path\"");
    }
    const std::string& path = path_it->get_ref<const std::string&>();
    std::string label = OpName(i) + " (" + name + " " + path + ")";
    if ((name == "add" || name == "replace" || name == "test") && !op.contains("value")) {
      return BadRequestError(label + ": missing \"value\"");
    }
    std::string from;
    if (name == "move" || name == "copy") {
      auto from_it = op.find("from");
      if (from_it == op.end() || !from_it->is_string()) {
        return BadRequestError(label + ": missing \"from\"");
      }
      from = from_it->get<std::string>();
    }
    // Validate pointer syntax up front so that malformed paths are BadRequest.
    try {
      (void)nlohmann::json::json_pointer(path);
      if (!from.empty()) (void)nlohmann::json::json_pointer(from);
    } catch (const nlohmann::json::exception& e) {
      return BadRequestError(label + ": " + ExceptionDetail(e));
    }
    if (name == "move" && path.size() > from.size() && path.compare(0, from.size(), from) == 0 &&
        path[from.size()] == '/') {
      return InvalidError(label + ": cannot move \"" + from + "\" into its own child");
    }
    if (name == "test") {
      // Compare here to say what the value was (nlohmann only says "unsuccessful").
      nlohmann::json::json_pointer ptr(path);
      if (!ContainsPointer(doc, ptr)) return InvalidError(label + ": test failed: path does not exist");
      const Object& have = doc.at(ptr);
      if (have != op["value"]) {
        return InvalidError(label + ": test failed: value is " + have.dump() + ", not " + op["value"].dump());
      }
      continue;
    }
    // RFC 6902 §4: the target's parent must be an object or array. nlohmann's patch
    // assumes it (for a string or number parent it asserts on add and does nothing on
    // remove), so a member of a primitive is refused here.
    auto target_parent_error = [&]() -> std::optional<Status> {
      const nlohmann::json::json_pointer target(path);
      if (target.empty()) return std::nullopt;
      const nlohmann::json::json_pointer parent = target.parent_pointer();
      if (!ContainsPointer(doc, parent)) return std::nullopt;
      const Object& container = doc.at(parent);
      if (container.is_object() || container.is_array()) return std::nullopt;
      return InvalidError(label + ": the parent of the target is " + std::string(container.type_name()) +
                          ", not an object or array");
    };
    if (std::optional<Status> error = target_parent_error()) return *error;
    if (name == "copy") {
      const nlohmann::json::json_pointer source(from);
      if (ContainsPointer(doc, source)) {
        copied += doc.at(source).dump().size();
        if (copied > kMaxJsonPatchCopyBytes) {
          return InvalidError(label + ": the accumulated size increase of copy is " + std::to_string(copied) +
                              ", exceeding the limit " + std::to_string(kMaxJsonPatchCopyBytes));
        }
      }
    }
    try {
      // In place: `doc` is this function's own copy, dropped when an operation fails.
      if (name == "move") {
        // RFC 6902 §4.4: a remove, then an add; the target's parent is checked again after
        // the removal, which may have shifted an array's indices under the target.
        Object value = doc.at(nlohmann::json::json_pointer(from));
        doc.patch_inplace(Object::array({Object{{"op", "remove"}, {"path", from}}}));
        if (std::optional<Status> error = target_parent_error()) return *error;
        doc.patch_inplace(Object::array({Object{{"op", "add"}, {"path", path}, {"value", std::move(value)}}}));
      } else {
        doc.patch_inplace(Object::array({op}));
      }
    } catch (const nlohmann::json::exception& e) {
      return InvalidError(label + ": " + ExceptionDetail(e));
    }
  }
  return doc;
}

Object CreateMergePatch(const Object& from, const Object& to) {
  if (!from.is_object() || !to.is_object()) return to;
  Object patch = Object::object();
  for (const auto& [key, value] : from.items()) {
    if (!to.contains(key)) patch[key] = nullptr;
  }
  for (const auto& [key, value] : to.items()) {
    auto it = from.find(key);
    if (it == from.end()) {
      patch[key] = value;
    } else if (*it != value) {
      patch[key] = (it->is_object() && value.is_object()) ? CreateMergePatch(*it, value) : value;
    }
  }
  return patch;
}

}  // namespace berth::api
