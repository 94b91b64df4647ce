// Field-level validation errors, rendered exactly as Kubernetes' apimachinery
// package k8s.io/apimachinery/pkg/util/validation/field renders them, so that
// the real kubectl prints berth's validation failures the way it prints a
// cluster's:
//
//   The ClusterQueue "cq" is invalid: spec.cohort: Invalid value: "Bad_Name": a lowercase ...
//
// Shapes:
//   FieldPath   "metadata.name", "spec.resourceGroups[0].flavors[1]", "metadata.labels[app]"
//               (field.Path: children joined by '.', list indices "[i]", map keys "[key]"
//               without quotes).
//   FieldError  one error: type, field, bad value, detail. Body() is field.Error.ErrorBody()
//               ("Invalid value: -1: must be greater than or equal to 0"), Error() prefixes
//               the field ("spec.x: Invalid value: ..."), ToCause() is the metav1.StatusCause
//               the API server puts in Status.details.causes.
//
// Value rendering follows ErrorBody(): numbers and booleans print bare (Go's %v: 5, 1.5,
// 1e+06, true), strings Go-quoted (%q: "Bad_Name", "a\nb"), everything else as compact
// JSON with Go's HTML-safe escaping ({"a":"b"}, ["x"], null). Required, Forbidden, TooLong
// and Internal never print the value. Go's %q treats some non-ASCII runes as unprintable
// and escapes them (\u00a0); berth escapes the C0/C1 controls, DEL, invalid UTF-8 and the
// Unicode space/format characters, and prints every other rune as is (the same for all
// text a manifest normally contains).
//
// Messages follow apimachinery as of Kubernetes 1.32+: TooLong says
// "may not be more than 63 bytes" (older releases said "must have at most 63 bytes").
//
// Thread-safety: plain values; free functions are pure.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace berth::api {

// A field path as Kubernetes writes it. Immutable value; Child/Index/Key return new paths.
class FieldPath {
 public:
  FieldPath() = default;
  // A root path, e.g. FieldPath("metadata") or FieldPath("spec").
  explicit FieldPath(std::string_view root) : path_(root) {}

  FieldPath Child(std::string_view name) const;  // "spec" -> "spec.replicas"
  FieldPath Index(std::size_t index) const;      // "items" -> "items[3]"
  FieldPath Key(std::string_view key) const;     // "labels" -> "labels[app]"

  const std::string& String() const { return path_; }
  bool empty() const { return path_.empty(); }
  bool operator==(const FieldPath&) const = default;

 private:
  std::string path_;
};

// field.ErrorType. The cause type strings ("FieldValueInvalid", ...) are the
// metav1.CauseType values.
enum class FieldErrorType {
  kNotFound,      // "FieldValueNotFound"      "Not found"
  kRequired,      // "FieldValueRequired"      "Required value"
  kDuplicate,     // "FieldValueDuplicate"     "Duplicate value"
  kInvalid,       // "FieldValueInvalid"       "Invalid value"
  kNotSupported,  // "FieldValueNotSupported"  "Unsupported value"
  kForbidden,     // "FieldValueForbidden"     "Forbidden"
  kTooLong,       // "FieldValueTooLong"       "Too long"
  kTooMany,       // "FieldValueTooMany"       "Too many"
  kInternal,      // "InternalError"           "Internal error"
  kTypeInvalid,   // "FieldValueTypeInvalid"   "Invalid value"
};

// "FieldValueInvalid", ... (metav1.CauseType).
std::string_view FieldErrorCauseType(FieldErrorType type);
// "Invalid value", "Required value", ... (field.ErrorType.String()).
std::string_view FieldErrorTypeString(FieldErrorType type);

struct FieldError {
  FieldErrorType type = FieldErrorType::kInvalid;
  std::string field;
  nlohmann::json bad_value;      // rendered only for value-carrying types
  bool value_omitted = false;    // field's omitValue: print the type only
  std::string detail;

  // "Invalid value: \"x\": detail" (no field).
  std::string Body() const;
  // "spec.x: Invalid value: \"x\": detail".
  std::string Error() const;
  // {type: "FieldValueInvalid", field: "spec.x", message: Body()}.
  StatusCause ToCause() const;

  bool operator==(const FieldError&) const = default;
};

using FieldErrorList = std::vector<FieldError>;

// Constructors, one per field.* function. `value` is the offending JSON value.
FieldError Invalid(const FieldPath& path, const nlohmann::json& value, std::string detail);
FieldError TypeInvalid(const FieldPath& path, const nlohmann::json& value, std::string detail);
FieldError Required(const FieldPath& path, std::string detail = "");
FieldError Forbidden(const FieldPath& path, std::string detail);
FieldError Duplicate(const FieldPath& path, const nlohmann::json& value);
FieldError NotFound(const FieldPath& path, const nlohmann::json& value);
// detail "supported values: \"a\", \"b\"" in the order given (empty list: no detail).
FieldError NotSupported(const FieldPath& path, const nlohmann::json& value,
                        const std::vector<std::string>& supported);
// "Too long: may not be more than <max> bytes" ("byte" for 1; max < 0: "value is too long").
FieldError TooLong(const FieldPath& path, long long max_length);
// "Too many: <actual>: must have at most <max> items" ("item" for 1; actual < 0 omits it;
// max < 0: "has too many items").
FieldError TooMany(const FieldPath& path, long long actual, long long max_items);
FieldError InternalFieldError(const FieldPath& path, std::string detail);

// Renders a value the way ErrorBody() does ("5", "\"x\"", "{\"a\":1}", "null").
std::string RenderFieldValue(const nlohmann::json& value);
// Go's strconv.Quote (see the header comment for the printable-rune approximation).
std::string GoQuote(std::string_view s);

// The causes of a list, in order.
std::vector<StatusCause> ToCauses(const FieldErrorList& errors);

// The 422 Invalid Status the API server returns for a failed validation, with the message
// apimachinery's NewInvalid builds: `<Kind> "<name>" is invalid: <err>` for one error and
// `<Kind> "<name>" is invalid: [<err1>, <err2>]` for several. `kind` is the Kind ("Pod",
// "ClusterQueue"), optionally qualified by group ("ClusterQueue.kueue.x-k8s.io").
// Precondition: !errors.empty().
Status InvalidStatus(std::string_view kind, std::string_view name, const FieldErrorList& errors);

}  // namespace berth::api
