#include "apiserver/request_metrics.h"

#include <algorithm>
#include <cctype>
#include <prometheus/text_serializer.h>
#include <set>
#include <tuple>

#include "apiserver/status_response.h"

namespace berth::apiserver {

namespace {

const prometheus::Histogram::BucketBoundaries kDurationBuckets = {
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60};

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

// Upstream's validRequestMethods (staging/src/k8s.io/apiserver/pkg/endpoints/
// metrics/metrics.go), and HEAD; any other method is OtherRequestMethod.
std::string CleanVerb(std::string verb) {
  static const std::set<std::string, std::less<>> kValid = {"APPLY", "CONNECT", "CREATE", "DELETE", "DELETECOLLECTION",
                                                            "GET",   "HEAD",    "LIST",   "PATCH",  "POST",
                                                            "PROXY", "PUT",     "UPDATE", "WATCH",  "WATCHLIST"};
  return kValid.contains(verb) ? verb : "other";
}

std::string DryRun(const QueryParams& q) {
  std::set<std::string> values;
  for (const std::string& v : q.GetAll("dryRun")) {
    if (v != "All") return "invalid";
    values.insert(v);
  }
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

}  // namespace

RequestLabels LabelsForRequest(const HttpRequest& request, const RequestInfo* info, const RouteMatch& route) {
  RequestLabels l;
  l.verb = CleanVerb(Upper(request.method));
  if (info == nullptr || !info->is_resource_request) {
    l.subresource = route.path_template;
    if (info != nullptr) l.dry_run = DryRun(info->query);
    return l;
  }
  l.dry_run = DryRun(info->query);
  if (route.resource) {
    l.group = info->api_group;
    l.version = info->api_version;
    l.resource = info->resource;
    if (route.subresource) l.subresource = info->subresource;
  }
  l.component = "apiserver";
  if (!info->name.empty() || info->verb == "create") {
    l.scope = "resource";
  } else if (!info->namespace_.empty()) {
    l.scope = "namespace";
  } else {
    l.scope = "cluster";
  }
  if ((l.verb == "GET" || l.verb == "HEAD") && l.scope != "resource") l.verb = "LIST";
  if (info->verb == "watch") l.verb = "WATCH";
  if (l.verb == "PATCH" && request.Header("Content-Type").starts_with("application/apply-patch+yaml")) l.verb = "APPLY";
  return l;
}

HttpResponse MetricsResponse(const prometheus::Registry& registry, const HttpRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") {
    return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
  }
  std::vector<prometheus::MetricFamily> families = registry.Collect();
  for (prometheus::MetricFamily& f : families) {
    std::sort(f.metric.begin(), f.metric.end(),
              [](const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) {
                return std::lexicographical_compare(
                    a.label.begin(), a.label.end(), b.label.begin(), b.label.end(),
                    [](const auto& x, const auto& y) { return std::tie(x.name, x.value) < std::tie(y.name, y.value); });
              });
  }
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = prometheus::TextSerializer().Serialize(families);
  return r;
}

RequestMetrics::RequestMetrics(prometheus::Registry& r)
    : requests_(prometheus::BuildCounter()
                    .Name("apiserver_request_total")
                    .Help("Counter of apiserver requests broken out for each verb, dry run value, group, version, "
                          "resource, scope, component, and HTTP response code.")
                    .Register(r)),
      durations_(prometheus::BuildHistogram()
                     .Name("apiserver_request_duration_seconds")
                     .Help("Response latency distribution in seconds for each verb, dry run value, group, version, "
                           "resource, subresource, scope and component.")
                     .Register(r)) {}

void RequestMetrics::Observe(const RequestLabels& l, int code, Duration elapsed) {
  std::map<std::string, std::string> labels = {
      {"verb", l.verb},         {"dry_run", l.dry_run},         {"group", l.group}, {"version", l.version},
      {"resource", l.resource}, {"subresource", l.subresource}, {"scope", l.scope}, {"component", l.component}};
  durations_.Add(labels, kDurationBuckets).Observe(std::chrono::duration<double>(elapsed).count());
  labels["code"] = std::to_string(code);
  requests_.Add(labels).Increment();
}

}  // namespace berth::apiserver
