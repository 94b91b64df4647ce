#include "apiserver/request_info.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <random>

#include "api/yaml_codec.h"

namespace berth::apiserver {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

const std::string& EmptyStr() {
  static const std::string kEmpty;
  return kEmpty;
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.push_back(UrlDecode(path.substr(i, j - i), false));
    i = j + 1;
  }
  return parts;
}

StatusOr<int64_t> ParseInt(std::string_view name, const std::string& value) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size()) {
    return BadRequestError("invalid value for " + std::string(name) + ": \"" + value +
                           "\": must be an integer");
  }
  return v;
}

}  // namespace

std::string UrlDecode(std::string_view s, bool plus_as_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '+' && plus_as_space) {
      out.push_back(' ');
    } else if (c == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

QueryParams QueryParams::Parse(std::string_view query) {
  QueryParams q;
  size_t i = 0;
  while (i < query.size()) {
    size_t j = query.find('&', i);
    if (j == std::string_view::npos) j = query.size();
    std::string_view pair = query.substr(i, j - i);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      std::string key = UrlDecode(pair.substr(0, eq), true);
      std::string value = eq == std::string_view::npos ? "" : UrlDecode(pair.substr(eq + 1), true);
      q.values_[key].push_back(std::move(value));
    }
    i = j + 1;
  }
  return q;
}

bool QueryParams::Has(std::string_view name) const { return values_.find(name) != values_.end(); }

const std::string& QueryParams::Get(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return EmptyStr();
  return it->second.front();
}

const std::vector<std::string>& QueryParams::GetAll(std::string_view name) const {
  static const std::vector<std::string> kNone;
  auto it = values_.find(name);
  return it == values_.end() ? kNone : it->second;
}

bool QueryParams::GetBool(std::string_view name) const {
  const std::string& v = Get(name);
  return v == "true" || v == "1" || v == "True" || v == "TRUE" || v == "t" || v == "T";
}

StatusOr<RequestInfo> NonResourceRequestInfo(std::string_view target) {
  RequestInfo info;
  size_t qpos = target.find('?');
  info.path = std::string(target.substr(0, qpos));
  if (qpos != std::string_view::npos) info.query = QueryParams::Parse(target.substr(qpos + 1));
  info.parts = SplitPath(info.path);
  return info;
}

StatusOr<RequestInfo> ParseRequestInfo(std::string_view method, std::string_view target) {
  BERTH_ASSIGN_OR_RETURN(RequestInfo info, NonResourceRequestInfo(target));

  std::vector<std::string> parts = info.parts;
  if (parts.empty() || (parts[0] != "api" && parts[0] != "apis")) return info;
  info.api_prefix = parts[0];
  size_t i = 1;
  if (info.api_prefix == "apis") {
    if (parts.size() <= i) return info;  // /apis
    info.api_group = parts[i++];
  }
  if (parts.size() <= i) return info;  // /apis/{group}
  info.api_version = parts[i++];
  if (parts.size() <= i) return info;  // /api/v1, /apis/{group}/{version}

  info.is_resource_request = true;
  std::vector<std::string> rest(parts.begin() + static_cast<long>(i), parts.end());
  bool watch_prefix = false;
  if (rest[0] == "watch") {
    watch_prefix = true;
    rest.erase(rest.begin());
    if (rest.empty()) return NotFoundError("the server could not find the requested resource");
  }
  if (rest[0] == "namespaces") {
    if (rest.size() > 1) {
      info.namespace_ = rest[1];
      // /namespaces/{ns}/{resource}...; but /namespaces/{name}/status and
      // /namespaces/{name}/finalize are subresources of the Namespace itself.
      if (rest.size() > 2 && rest[2] != "status" && rest[2] != "finalize") {
        rest.erase(rest.begin(), rest.begin() + 2);
      } else {
        info.namespace_.clear();  // the Namespace object is cluster-scoped
      }
    }
  }
  if (rest.size() > 3) return NotFoundError("the server could not find the requested resource");
  info.resource = rest[0];
  if (rest.size() >= 2) info.name = rest[1];
  if (rest.size() >= 3) info.subresource = rest[2];

  if (watch_prefix) {
    info.verb = "watch";
  } else if (method == "GET" || method == "HEAD") {
    info.verb = info.name.empty() ? "list" : "get";
    if (info.verb == "list" && info.query.GetBool("watch")) info.verb = "watch";
  } else if (method == "POST") {
    info.verb = "create";
  } else if (method == "PUT") {
    info.verb = "update";
  } else if (method == "PATCH") {
    info.verb = "patch";
  } else if (method == "DELETE") {
    info.verb = info.name.empty() ? "deletecollection" : "delete";
  } else {
    info.verb = "";
  }
  return info;
}

std::chrono::milliseconds WatchTimeout(const std::optional<int64_t>& timeout_seconds) {
  const int64_t t = timeout_seconds.value_or(0);
  if (t > (int64_t{1} << 31)) return std::chrono::milliseconds(0);
  if (t != 0) return std::chrono::seconds(t);
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const double factor = 1.0 + std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  return std::chrono::milliseconds(
      static_cast<int64_t>(static_cast<double>(std::chrono::milliseconds(kMinRequestTimeout).count()) * factor));
}

StatusOr<ListOptions> ParseListOptions(const QueryParams& q) {
  ListOptions o;
  o.label_selector = q.Get("labelSelector");
  o.field_selector = q.Get("fieldSelector");
  if (q.Has("limit") && !q.Get("limit").empty()) {
    BERTH_ASSIGN_OR_RETURN(o.limit, ParseInt("limit", q.Get("limit")));
    if (o.limit < 0) o.limit = 0;
  }
  o.continue_token = q.Get("continue");
  o.resource_version = q.Get("resourceVersion");
  o.resource_version_match = q.Get("resourceVersionMatch");
  if (!o.resource_version_match.empty() && o.resource_version_match != "NotOlderThan" &&
      o.resource_version_match != "Exact") {
    return BadRequestError("resourceVersionMatch: Unsupported value: \"" +
                           o.resource_version_match +
                           "\": supported values: \"Exact\", \"NotOlderThan\"");
  }
  o.watch = q.GetBool("watch");
  o.allow_watch_bookmarks = q.GetBool("allowWatchBookmarks");
  o.send_initial_events = q.GetBool("sendInitialEvents");
  if (q.Has("timeoutSeconds") && !q.Get("timeoutSeconds").empty()) {
    BERTH_ASSIGN_OR_RETURN(int64_t t, ParseInt("timeoutSeconds", q.Get("timeoutSeconds")));
    o.timeout_seconds = t;
  }
  return o;
}

StatusOr<WriteOptions> ParseWriteOptions(const QueryParams& q) {
  WriteOptions o;
  for (const auto& v : q.GetAll("dryRun")) {
    if (v != "All") return BadRequestError("Invalid dryRun value \"" + v + "\": supported values: \"All\"");
    o.dry_run = true;
  }
  BERTH_ASSIGN_OR_RETURN(o.field_validation, api::ParseFieldValidation(q.Get("fieldValidation")));
  o.field_manager = q.Get("fieldManager");
  if (q.Has("force")) o.force = q.GetBool("force");
  return o;
}

StatusOr<DeleteOptions> ParseDeleteOptions(const QueryParams& q, std::string_view body) {
  DeleteOptions o;
  if (!body.empty()) {
    // Bounded in depth as every body (api/yaml_codec.h ParseJson); any error reads as
    // upstream's for a body it cannot decode.
    auto parsed = api::ParseJson(body);
    const nlohmann::json j = parsed.ok() ? std::move(parsed).value() : nlohmann::json();
    if (!j.is_object()) {
      return BadRequestError("the body of the request was in an unknown format - accepted media "
                             "types include: application/json, application/yaml");
    }
    if (auto it = j.find("gracePeriodSeconds"); it != j.end() && !it->is_null()) {
      if (!it->is_number_integer()) return BadRequestError("gracePeriodSeconds: must be an integer");
      o.grace_period_seconds = it->get<int64_t>();
    }
    if (auto it = j.find("propagationPolicy"); it != j.end() && it->is_string()) {
      o.propagation_policy = it->get<std::string>();
    }
    if (auto it = j.find("orphanDependents"); it != j.end() && it->is_boolean() &&
                                               o.propagation_policy.empty()) {
      o.propagation_policy = it->get<bool>() ? "Orphan" : "Background";
    }
    if (auto it = j.find("dryRun"); it != j.end() && it->is_array()) {
      for (const auto& v : *it) {
        if (v != "All") return BadRequestError("Invalid dryRun value " + v.dump());
        o.dry_run = true;
      }
    }
    if (auto it = j.find("preconditions"); it != j.end() && it->is_object()) {
      if (auto u = it->find("uid"); u != it->end() && u->is_string()) o.precondition_uid = u->get<std::string>();
      if (auto r = it->find("resourceVersion"); r != it->end() && r->is_string()) {
        o.precondition_resource_version = r->get<std::string>();
      }
    }
  }
  if (q.Has("gracePeriodSeconds")) {
    BERTH_ASSIGN_OR_RETURN(int64_t g, ParseInt("gracePeriodSeconds", q.Get("gracePeriodSeconds")));
    o.grace_period_seconds = g;
  }
  if (q.Has("propagationPolicy")) o.propagation_policy = q.Get("propagationPolicy");
  if (q.Has("dryRun")) {
    for (const auto& v : q.GetAll("dryRun")) {
      if (v != "All") return BadRequestError("Invalid dryRun value \"" + v + "\": supported values: \"All\"");
      o.dry_run = true;
    }
  }
  const std::string& p = o.propagation_policy;
  if (!p.empty() && p != "Orphan" && p != "Background" && p != "Foreground") {
    return BadRequestError("propagationPolicy: Unsupported value: \"" + p +
                           "\": supported values: \"Background\", \"Foreground\", \"Orphan\"");
  }
  return o;
}

}  // namespace berth::apiserver
