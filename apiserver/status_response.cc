#include "apiserver/status_response.h"

#include "client/api_status.h"

namespace berth::apiserver {

bool UpstreamAttachesDetails(Code code) {
  switch (code) {
    case Code::kNotFound:
    case Code::kAlreadyExists:
    case Code::kConflict:
    case Code::kForbidden:
    case Code::kInvalid:
    case Code::kMethodNotAllowed:
    case Code::kTimeout:
    case Code::kInternal:
      return true;
    default:
      return false;
  }
}

nlohmann::json StatusToJson(const Status& status, const StatusDetails& details) {
  nlohmann::json j = client::FailureStatusObject(status);
  nlohmann::json d = nlohmann::json::object();
  if (!details.name.empty()) d["name"] = details.name;
  if (!details.group.empty()) d["group"] = details.group;
  if (!details.kind.empty()) d["kind"] = details.kind;
  if (!details.uid.empty()) d["uid"] = details.uid;
  if (!status.causes().empty()) {
    nlohmann::json causes = nlohmann::json::array();
    for (const auto& c : status.causes()) {
      nlohmann::json cj = nlohmann::json::object();
      if (!c.type.empty()) cj["reason"] = c.type;
      if (!c.message.empty()) cj["message"] = c.message;
      if (!c.field.empty()) cj["field"] = c.field;
      causes.push_back(std::move(cj));
    }
    d["causes"] = std::move(causes);
  }
  if (!d.empty() || UpstreamAttachesDetails(status.code())) j["details"] = std::move(d);
  return j;
}

std::string DumpJson(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void AppendJson(const nlohmann::json& j, std::string* out) {
  // What json::dump does, with *out as the output (no indent, no ASCII
  // escaping, invalid UTF-8 replaced).
  nlohmann::detail::serializer<nlohmann::json> s(nlohmann::detail::output_adapter<char, std::string>(*out), ' ',
                                                 nlohmann::json::error_handler_t::replace);
  s.dump(j, false, false, 0);
}

HttpResponse TooManyRequestsResponse(const std::string& message) {
  nlohmann::json body = StatusToJson(UnavailableError(message));
  body["reason"] = "TooManyRequests";
  body["code"] = 429;
  body["details"] = {{"retryAfterSeconds", 1}};
  HttpResponse r;
  r.status = 429;
  r.content_type = "application/json";
  r.body = DumpJson(body);
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpResponse StatusResponse(const Status& status, const StatusDetails& details) {
  HttpResponse r;
  r.status = CodeHttpStatus(status.code());
  r.content_type = "application/json";
  r.body = DumpJson(StatusToJson(status, details));
  return r;
}

nlohmann::json SuccessStatusJson(const StatusDetails& details) {
  nlohmann::json j = {{"kind", "Status"},
                      {"apiVersion", "v1"},
                      {"metadata", nlohmann::json::object()},
                      {"status", "Success"}};
  nlohmann::json d = nlohmann::json::object();
  if (!details.name.empty()) d["name"] = details.name;
  if (!details.group.empty()) d["group"] = details.group;
  if (!details.kind.empty()) d["kind"] = details.kind;
  if (!details.uid.empty()) d["uid"] = details.uid;
  j["details"] = std::move(d);
  return j;
}

StatusDetails DetailsFor(const Status& status, const api::GroupResource& gr,
                         std::string_view kind, std::string_view name) {
  StatusDetails d;
  d.name = std::string(name);
  d.group = gr.group;
  d.kind = status.code() == Code::kInvalid ? std::string(kind) : gr.resource;
  return d;
}

}  // namespace berth::apiserver
