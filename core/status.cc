#include "core/status.h"

#include <cstdio>

namespace berth {

std::string_view CodeReason(Code code) {
  switch (code) {
    case Code::kOk: return "";
    case Code::kInvalid: return "Invalid";
    case Code::kBadRequest: return "BadRequest";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kConflict: return "Conflict";
    case Code::kGone: return "Expired";
    case Code::kMethodNotAllowed: return "MethodNotAllowed";
    case Code::kForbidden: return "Forbidden";
    case Code::kUnauthorized: return "Unauthorized";
    case Code::kTooLarge: return "RequestEntityTooLarge";
    case Code::kUnsupportedMedia: return "UnsupportedMediaType";
    case Code::kTimeout: return "Timeout";
    case Code::kUnavailable: return "ServiceUnavailable";
    case Code::kInternal: return "InternalError";
    case Code::kUnknown: return "";
  }
  return "Unknown";
}

int CodeHttpStatus(Code code) {
  switch (code) {
    case Code::kOk: return 200;
    case Code::kInvalid: return 422;
    case Code::kBadRequest: return 400;
    case Code::kNotFound: return 404;
    case Code::kAlreadyExists: return 409;
    case Code::kConflict: return 409;
    case Code::kGone: return 410;
    case Code::kMethodNotAllowed: return 405;
    case Code::kForbidden: return 403;
    case Code::kUnauthorized: return 401;
    case Code::kTooLarge: return 413;
    case Code::kUnsupportedMedia: return 415;
    case Code::kTimeout: return 504;
    case Code::kUnavailable: return 503;
    case Code::kInternal: return 500;
    case Code::kUnknown: return 500;
  }
  return 500;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_, causes_);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(CodeReason(code_));
  out += ": ";
  out += message_;
  for (const auto& c : causes_) {
    out += "\n  ";
    if (!c.field.empty()) {
      out += c.field;
      out += ": ";
    }
    out += c.message;
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, const Status& s) { return os << s.ToString(); }

Status InvalidError(std::string m, std::vector<StatusCause> causes) {
  return Status(Code::kInvalid, std::move(m), std::move(causes));
}
Status BadRequestError(std::string m) { return Status(Code::kBadRequest, std::move(m)); }
Status NotFoundError(std::string m) { return Status(Code::kNotFound, std::move(m)); }
Status AlreadyExistsError(std::string m) { return Status(Code::kAlreadyExists, std::move(m)); }
Status ConflictError(std::string m) { return Status(Code::kConflict, std::move(m)); }
Status GoneError(std::string m) { return Status(Code::kGone, std::move(m)); }
Status MethodNotAllowedError(std::string m) { return Status(Code::kMethodNotAllowed, std::move(m)); }
Status ForbiddenError(std::string m) { return Status(Code::kForbidden, std::move(m)); }
Status TooLargeError(std::string m) { return Status(Code::kTooLarge, std::move(m)); }
Status UnsupportedMediaError(std::string m) { return Status(Code::kUnsupportedMedia, std::move(m)); }
Status TimeoutError(std::string m) { return Status(Code::kTimeout, std::move(m)); }
Status UnavailableError(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
Status InternalError(std::string m) { return Status(Code::kInternal, std::move(m)); }
Status UnknownError(std::string m) { return Status(Code::kUnknown, std::move(m)); }

void CheckFailed(const char* file, int line, const char* expr, const std::string& msg) {
  std::fprintf(stderr, "%s:%d: BERTH_CHECK failed: %s%s%s\n", file, line, expr,
               msg.empty() ? "" : ": ", msg.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace berth
