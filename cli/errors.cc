#include "cli/errors.h"

#include <set>
#include <vector>

namespace berth::cli {

namespace {

constexpr std::string_view kClientErrorCause = "berth.io/ClientError";

// `Get "http://127.0.0.1:1/api": dial tcp ...` (or https://): Go's url.Error
// form that client/http_client.h uses for transport failures.
bool IsTransportError(const Status& s, std::string* url, std::string* detail) {
  const std::string& m = s.message();
  size_t sp = m.find(' ');
  if (sp == std::string::npos || sp == 0 ||
      (m.compare(sp, 9, " \"http://") != 0 && m.compare(sp, 10, " \"https://") != 0)) {
    return false;
  }
  for (size_t i = 0; i < sp; ++i) {
    if (!std::isalpha(static_cast<unsigned char>(m[i]))) return false;
  }
  size_t end = m.find("\": ", sp + 2);
  if (end == std::string::npos) return false;
  *url = m.substr(sp + 2, end - sp - 2);
  *detail = m.substr(end + 3);
  return true;
}

std::string HostOf(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find('/', start);
  return url.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

bool ContainsNoCase(std::string_view hay, std::string_view needle) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  return lower(hay).find(lower(needle)) != std::string::npos;
}

// `The ClusterQueue "x" is invalid` from `ClusterQueue.kueue.x-k8s.io "x" is invalid: ...`.
std::string InvalidHeadline(const std::string& message) {
  size_t sp = message.find(" \"");
  size_t is_invalid = message.find("\" is invalid");
  if (sp == std::string::npos || is_invalid == std::string::npos || is_invalid < sp) {
    return "The request is invalid";
  }
  std::string kind = message.substr(0, sp);
  if (auto dot = kind.find('.'); dot != std::string::npos) kind.resize(dot);
  return "The " + kind + " " + message.substr(sp + 1, is_invalid + 1 - sp - 1) + " is invalid";
}

}  // namespace

Status ClientError(std::string message) {
  return Status(Code::kBadRequest, std::move(message), {{std::string(kClientErrorCause), "", ""}});
}

bool IsClientError(const Status& status) {
  return status.causes().size() == 1 && status.causes()[0].type == kClientErrorCause;
}

Status AddSource(const Status& status, std::string_view verb, std::string_view source) {
  // Invalid prints from the details, never the message: nothing to add.
  if (status.ok() || source.empty() || IsClientError(status) || status.code() == Code::kInvalid) return status;
  std::string url, detail;
  if (IsTransportError(status, &url, &detail)) return status;
  return Status(status.code(),
                "error when " + std::string(verb) + " \"" + std::string(source) + "\": " + status.message(),
                status.causes());
}

std::string ErrorText(const Status& s) {
  if (s.ok()) return "";
  if (IsClientError(s)) return "error: " + s.message() + "\n";
  std::string url, detail;
  if (IsTransportError(s, &url, &detail)) {
    if (ContainsNoCase(detail, "connection refused")) {
      return "The connection to the server " + HostOf(url) + " was refused - did you specify the right host or port?\n";
    }
    return "Unable to connect to the server: " + detail + "\n";
  }
  if (s.code() == Code::kInvalid) {
    std::string headline = InvalidHeadline(s.message());
    // statusCausesToAggrError: "field: message", duplicates dropped.
    std::vector<std::string> errs;
    std::set<std::string> seen;
    for (const auto& c : s.causes()) {
      std::string m = c.field + ": " + c.message;
      if (seen.insert(m).second) errs.push_back(std::move(m));
    }
    if (errs.empty()) return headline + "\n";
    if (errs.size() == 1) return headline + ": " + errs[0] + "\n";
    std::string out = headline + ": \n";
    for (const auto& e : errs) out += "* " + e + "\n";
    return out;
  }
  if (s.code() == Code::kUnauthorized) {
    return "error: You must be logged in to the server (" + s.message() + ")\n";
  }
  std::string_view reason = CodeReason(s.code());
  if (reason.empty()) return "Error from server: " + s.message() + "\n";
  return "Error from server (" + std::string(reason) + "): " + s.message() + "\n";
}

}  // namespace berth::cli
