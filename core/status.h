// Status and StatusOr: how berth reports environment and input errors.
//
// A Status is OK or carries a Code, a human-readable message and, for
// validation failures, a list of field-level Causes. The codes map one to one
// onto the Kubernetes API's Status reasons (metav1.StatusReason) so that the
// API server can turn any Status into the JSON a cluster would return and the
// real kubectl prints it unchanged:
//
//   Code               HTTP  Kubernetes reason
//   kInvalid           422   Invalid            (causes carry one entry per field)
//   kBadRequest        400   BadRequest
//   kNotFound          404   NotFound
//   kAlreadyExists     409   AlreadyExists
//   kConflict          409   Conflict           (stale resourceVersion, precondition)
//   kGone              410   Expired            (watch from a compacted revision)
//   kMethodNotAllowed  405   MethodNotAllowed
//   kForbidden         403   Forbidden
//   kUnauthorized      401   Unauthorized
//   kTooLarge          413   RequestEntityTooLarge
//   kUnsupportedMedia  415   UnsupportedMediaType
//   kTimeout           504   Timeout
//   kUnavailable       503   ServiceUnavailable
//   kInternal          500   InternalError
//   kUnknown           500   ""                 (StatusReasonUnknown: what kube-apiserver
//                                               answers for an error no layer classified,
//                                               e.g. etcd's "request is too large")
//
// "Does not fit" and "unschedulable" are never errors: they are decisions,
// returned as data by admission/ and placement/. Broken invariants are
// BERTH_CHECK failures, not Statuses.
//
// Thread-safety: Status and StatusOr are values; distinct objects may be used
// from different threads freely, one object needs external synchronisation
// like any std type.
#pragma once

#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace berth {

enum class Code {
  kOk = 0,
  kInvalid,
  kBadRequest,
  kNotFound,
  kAlreadyExists,
  kConflict,
  kGone,
  kMethodNotAllowed,
  kForbidden,
  kUnauthorized,
  kTooLarge,
  kUnsupportedMedia,
  kTimeout,
  kUnavailable,
  kInternal,
  kUnknown,
};

// The Kubernetes reason string for a code ("Invalid", "NotFound", ...; "" for kOk).
std::string_view CodeReason(Code code);
// The HTTP status code Kubernetes uses for a code (200 for kOk).
int CodeHttpStatus(Code code);

// One field-level cause of a validation failure, as metav1.StatusCause.
//   type:    "FieldValueInvalid", "FieldValueRequired", "FieldValueNotSupported",
//            "FieldValueDuplicate", "FieldValueForbidden", "FieldValueTooLong",
//            "FieldValueTypeInvalid", "FieldValueTooMany", "UnknownField"...
//   field:   the JSON path as Kubernetes writes it, e.g.
//            "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota".
//   message: the full text kubectl prints after the field, e.g.
//            "Invalid value: \"-1\": must be greater than or equal to 0".
struct StatusCause {
  std::string type;
  std::string field;
  std::string message;

  bool operator==(const StatusCause&) const = default;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message, std::vector<StatusCause> causes = {})
      : code_(code), message_(std::move(message)), causes_(std::move(causes)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  const std::vector<StatusCause>& causes() const { return causes_; }

  // Returns a copy with "context: " prepended to the message (causes kept).
  Status WithContext(std::string_view context) const;

  // "NotFound: pods \"x\" not found" style one-line rendering, for logs and tests.
  std::string ToString() const;

  bool operator==(const Status&) const = default;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::vector<StatusCause> causes_;
};

std::ostream& operator<<(std::ostream& os, const Status& s);

// Named constructors, one per code.
Status InvalidError(std::string message, std::vector<StatusCause> causes = {});
Status BadRequestError(std::string message);
Status NotFoundError(std::string message);
Status AlreadyExistsError(std::string message);
Status ConflictError(std::string message);
Status GoneError(std::string message);
Status MethodNotAllowedError(std::string message);
Status ForbiddenError(std::string message);
Status TooLargeError(std::string message);
Status UnsupportedMediaError(std::string message);
Status TimeoutError(std::string message);
Status UnavailableError(std::string message);
Status InternalError(std::string message);
Status UnknownError(std::string message);

// StatusOr<T>: either a T or a non-OK Status. Accessing value() of an error
// is a broken invariant and aborts.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const T& value) : v_(value) {}                 // NOLINT: implicit by design
  StatusOr(T&& value) : v_(std::move(value)) {}           // NOLINT
  StatusOr(Status status) : v_(std::move(status)) {       // NOLINT
    if (std::get<Status>(v_).ok()) {
      v_ = Status(Code::kInternal, "StatusOr constructed from an OK Status");
    }
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(v_);
  }

  T& value() & { CheckOk(); return std::get<T>(v_); }
  const T& value() const& { CheckOk(); return std::get<T>(v_); }
  T&& value() && { CheckOk(); return std::get<T>(std::move(v_)); }
  T value_or(T fallback) const& { return ok() ? std::get<T>(v_) : std::move(fallback); }

  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const;
  std::variant<Status, T> v_;
};

[[noreturn]] void CheckFailed(const char* file, int line, const char* expr, const std::string& msg);

template <typename T>
void StatusOr<T>::CheckOk() const {
  if (!ok()) CheckFailed(__FILE__, __LINE__, "StatusOr::ok()", std::get<Status>(v_).ToString());
}

}  // namespace berth

// BERTH_CHECK(cond) << nothing: aborts with file:line and the expression when
// cond is false, in every build type. For broken invariants only.
#define BERTH_CHECK(cond)                                                   \
  do {                                                                      \
    if (!(cond)) ::berth::CheckFailed(__FILE__, __LINE__, #cond, "");       \
  } while (0)
#define BERTH_CHECK_MSG(cond, msg)                                          \
  do {                                                                      \
    if (!(cond)) ::berth::CheckFailed(__FILE__, __LINE__, #cond, (msg));    \
  } while (0)
#define BERTH_CHECK_OK(expr)                                                \
  do {                                                                      \
    const ::berth::Status _berth_s = (expr);                                \
    if (!_berth_s.ok())                                                     \
      ::berth::CheckFailed(__FILE__, __LINE__, #expr, _berth_s.ToString()); \
  } while (0)

#define BERTH_RETURN_IF_ERROR(expr)               \
  do {                                            \
    ::berth::Status _berth_s = (expr);            \
    if (!_berth_s.ok()) return _berth_s;          \
  } while (0)

#define BERTH_CONCAT_INNER_(a, b) a##b
#define BERTH_CONCAT_(a, b) BERTH_CONCAT_INNER_(a, b)
#define BERTH_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
// BERTH_ASSIGN_OR_RETURN(auto x, FunctionReturningStatusOr());
#define BERTH_ASSIGN_OR_RETURN(lhs, expr) \
  BERTH_ASSIGN_OR_RETURN_IMPL_(BERTH_CONCAT_(_berth_so_, __LINE__), lhs, expr)
