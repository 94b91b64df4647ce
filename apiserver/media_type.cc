#include "apiserver/media_type.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "api/yaml_codec.h"
#include "apiserver/status_response.h"

namespace berth::apiserver {
namespace {

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kYaml = "application/yaml";
constexpr std::string_view kProtobuf = "application/vnd.kubernetes.protobuf";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct Clause {
  std::string type;     // "application"
  std::string subtype;  // "json", "*"
  double q = 1;
  std::string as, group, version;  // the transform's parameters as, g and v
};

// The clause's transform, or nothing when berth does not serve it (upstream's
// RequestScope.AllowsMediaTypeTransform: Table, PartialObjectMetadata and
// PartialObjectMetadataList of meta.k8s.io v1 or v1beta1, nothing else).
std::optional<ResponseFormat> ServedTransform(const Clause& c) {
  if (c.as.empty() && c.group.empty() && c.version.empty()) return ResponseFormat{};
  if (c.group != "meta.k8s.io" || (c.version != "v1" && c.version != "v1beta1")) return std::nullopt;
  ResponseFormat f;
  f.meta_version = c.version;
  if (c.as == "Table") {
    f.transform = Transform::kTable;
  } else if (c.as == "PartialObjectMetadata") {
    f.transform = Transform::kPartialObjectMetadata;
  } else if (c.as == "PartialObjectMetadataList") {
    f.transform = Transform::kPartialObjectMetadataList;
  } else {
    return std::nullopt;
  }
  return f;
}

// goautoneg.ParseAccept: "type/subtype;param=v;q=0.5, ..." sorted by q, stable.
std::vector<Clause> ParseAccept(std::string_view header) {
  std::vector<Clause> out;
  size_t start = 0;
  while (start <= header.size()) {
    size_t end = header.find(',', start);
    if (end == std::string_view::npos) end = header.size();
    std::string_view part = header.substr(start, end - start);
    start = end + 1;
    const size_t semi = part.find(';');
    const std::string media = Lower(Trim(part.substr(0, semi)));
    const size_t slash = media.find('/');
    if (media.empty()) continue;
    Clause c;
    c.type = media.substr(0, slash);
    c.subtype = slash == std::string::npos ? "*" : media.substr(slash + 1);
    std::string_view params = semi == std::string_view::npos ? std::string_view() : part.substr(semi + 1);
    while (!params.empty()) {
      const size_t next = params.find(';');
      std::string_view param = Trim(params.substr(0, next));
      params = next == std::string_view::npos ? std::string_view() : params.substr(next + 1);
      const size_t eq = param.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string key = Lower(Trim(param.substr(0, eq)));
      const std::string_view value = Trim(param.substr(eq + 1));
      if (key == "q") c.q = std::strtod(std::string(value).c_str(), nullptr);
      if (key == "as") c.as = value;
      if (key == "g") c.group = value;
      if (key == "v") c.version = value;
    }
    if (c.q > 0) out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const Clause& a, const Clause& b) { return a.q > b.q; });
  return out;
}

bool Matches(const Clause& c, std::string_view served) {
  const size_t slash = served.find('/');
  const std::string_view type = served.substr(0, slash);
  const std::string_view subtype = served.substr(slash + 1);
  return (c.type == type && (c.subtype == subtype || c.subtype == "*")) || (c.type == "*" && c.subtype == "*");
}

}  // namespace

ResponseFormat NegotiateResponseFormat(std::string_view accept, bool protobuf_served) {
  if (Trim(accept).empty()) return {};
  std::optional<ResponseFormat> protobuf;  // the first protobuf clause, answered in JSON
  for (const Clause& c : ParseAccept(accept)) {
    std::optional<ResponseFormat> f = ServedTransform(c);
    if (!f) continue;
    if (Matches(c, kJson)) return *f;
    if (Matches(c, kYaml)) {
      f->media = ResponseMediaType::kYaml;
      return *f;
    }
    if (protobuf_served && !protobuf && Matches(c, kProtobuf)) protobuf = f;
  }
  return protobuf.value_or(ResponseFormat{ResponseMediaType::kNotAcceptable});
}

namespace {

HttpResponse NotAcceptable(const std::string& message) {
  const nlohmann::json status = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                                 {"status", "Failure"}, {"message", message}, {"reason", "NotAcceptable"},
                                 {"code", 406}};
  HttpResponse r;
  r.status = 406;
  r.content_type = std::string(kJson);
  r.body = DumpJson(status);
  return r;
}

}  // namespace

HttpResponse NotAcceptableResponse(bool protobuf_served) {
  std::string accepted = std::string(kJson) + ", " + std::string(kYaml);
  if (protobuf_served) accepted += ", " + std::string(kProtobuf);
  return NotAcceptable("only the following media types are accepted: " + accepted);
}

HttpResponse TransformNotAcceptableResponse(bool list) {
  return NotAcceptable(list ? "you requested PartialObjectMetadata, but the requested object is a list"
                            : "you requested PartialObjectMetadataList, but the requested object is not a list");
}

void EncodeResponseAsYaml(HttpResponse* response) {
  if (response->content_type != kJson) return;
  auto parsed = api::ParseJson(response->body);
  if (!parsed.ok()) return;  // not a JSON document: left as it is
  response->body = api::EmitYaml(*parsed);
  response->content_type = std::string(kYaml);
}

}  // namespace berth::apiserver
