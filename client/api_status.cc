#include "client/api_status.h"

#include <nlohmann/json.hpp>

namespace berth::client {

namespace {

Code CodeFromHttp(int http_code) {
  switch (http_code) {
    case 400: return Code::kBadRequest;
    case 401: return Code::kUnauthorized;
    case 403: return Code::kForbidden;
    case 404: return Code::kNotFound;
    case 405: return Code::kMethodNotAllowed;
    case 406: return Code::kUnsupportedMedia;
    case 409: return Code::kConflict;
    case 410: return Code::kGone;
    case 413: return Code::kTooLarge;
    case 415: return Code::kUnsupportedMedia;
    case 422: return Code::kInvalid;
    case 429: return Code::kUnavailable;
    case 503: return Code::kUnavailable;
    case 504: return Code::kTimeout;
    default: break;
  }
  if (http_code >= 500) return Code::kInternal;
  if (http_code >= 400) return Code::kBadRequest;
  return Code::kInternal;
}

// client-go's NewGenericServerResponse message for a code.
std::string GenericMessage(int http_code, std::string_view verb, std::string_view body) {
  switch (http_code) {
    case 400: return "the server rejected our request for an unknown reason";
    case 401: return "the server has asked for the client to provide credentials";
    case 403: return "the server does not allow access to the requested resource";
    case 404: return "the server could not find the requested resource";
    case 405: return "the server does not allow this method on the requested resource";
    case 406:
    case 415: return "the server was unable to respond with a content type that the client supports";
    case 409: return "the server reported a conflict";
    case 422: return "the server rejected our request due to an error in our request";
    case 429: return "the server has received too many requests and has asked us to try again later";
    case 503: return "the server is currently unable to handle the request";
    case 504:
      return "the server was unable to return a response in the time allotted, but may still be "
             "processing the request";
    default: break;
  }
  if (http_code >= 500) {
    std::string text(body);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    // Go's %q of the body: quotes and backslashes escaped.
    std::string quoted = "\"";
    for (char c : text) {
      if (c == '"' || c == '\\') quoted += '\\';
      if (c == '\n') {
        quoted += "\\n";
        continue;
      }
      quoted += c;
    }
    quoted += '"';
    return "an error on the server (" + quoted + ") has prevented the request from succeeding";
  }
  return "the server responded with the status code " + std::to_string(http_code) +
         " but did not return more information";
}

}  // namespace

Code CodeFromReason(std::string_view reason, int http_code) {
  if (reason == "Invalid") return Code::kInvalid;
  if (reason == "BadRequest") return Code::kBadRequest;
  if (reason == "NotFound") return Code::kNotFound;
  if (reason == "AlreadyExists") return Code::kAlreadyExists;
  if (reason == "Conflict") return Code::kConflict;
  if (reason == "Expired" || reason == "Gone") return Code::kGone;
  if (reason == "MethodNotAllowed") return Code::kMethodNotAllowed;
  if (reason == "Forbidden") return Code::kForbidden;
  if (reason == "Unauthorized") return Code::kUnauthorized;
  if (reason == "RequestEntityTooLarge") return Code::kTooLarge;
  if (reason == "UnsupportedMediaType" || reason == "NotAcceptable") return Code::kUnsupportedMedia;
  if (reason == "Timeout" || reason == "ServerTimeout") return Code::kTimeout;
  if (reason == "ServiceUnavailable" || reason == "TooManyRequests") return Code::kUnavailable;
  if (reason == "InternalError") return Code::kInternal;
  return CodeFromHttp(http_code);
}

api::Object FailureStatusObject(const Status& status) {
  api::Object obj = {{"kind", "Status"},
                     {"apiVersion", "v1"},
                     {"metadata", api::Object::object()},
                     {"status", "Failure"},
                     {"message", status.message()},
                     {"reason", std::string(CodeReason(status.code()))},
                     {"code", CodeHttpStatus(status.code())}};
  // metav1.Status omits an empty reason (StatusReasonUnknown).
  if (status.code() == Code::kUnknown) obj.erase("reason");
  return obj;
}

Status StatusFromObject(const api::Object& obj, int http_code) {
  if (!obj.is_object()) return Status(CodeFromHttp(http_code), "invalid Status object");
  if (obj.value("status", "") == "Success") return Status::Ok();
  int code = http_code;
  if (auto c = obj.find("code"); c != obj.end() && c->is_number_integer()) code = c->get<int>();
  std::string reason = obj.value("reason", "");
  std::string message = obj.value("message", "");
  std::vector<StatusCause> causes;
  if (auto d = obj.find("details"); d != obj.end() && d->is_object()) {
    if (auto cs = d->find("causes"); cs != d->end() && cs->is_array()) {
      for (const auto& c : *cs) {
        if (!c.is_object()) continue;
        causes.push_back({c.value("reason", ""), c.value("field", ""), c.value("message", "")});
      }
    }
  }
  Code result = CodeFromReason(reason, code);
  if (result == Code::kOk) result = Code::kInternal;
  return Status(result, std::move(message), std::move(causes));
}

Status StatusFromResponse(int http_code, std::string_view body, std::string_view verb,
                          std::string_view resource, std::string_view name) {
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.value("kind", "") == "Status") {
    Status s = StatusFromObject(parsed, http_code);
    // A "Success" Status with an error code is still an error.
    if (!s.ok()) return s;
  }
  Code code = CodeFromHttp(http_code);
  // client-go: a 409 on POST is AlreadyExists.
  if (http_code == 409 && verb == "post") code = Code::kAlreadyExists;
  std::string message = GenericMessage(http_code, verb, body);
  if (!verb.empty() && !resource.empty()) {
    message += " (" + std::string(verb) + " " + std::string(resource);
    if (!name.empty()) message += " " + std::string(name);
    message += ")";
  }
  return Status(code, std::move(message));
}

}  // namespace berth::client
