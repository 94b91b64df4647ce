// RequestMetrics: kube-apiserver's request metrics (k8s.io/apiserver
// pkg/endpoints/metrics, v1.32), with its names, label names and buckets:
//
//   apiserver_request_total{verb, dry_run, group, version, resource,
//                           subresource, scope, component, code}        counter
//   apiserver_request_duration_seconds{verb, dry_run, group, version,
//                           resource, subresource, scope, component}    histogram,
//       buckets 0.005 ... 60 s as upstream
//
// Labels as upstream's MonitorRequest computes them (RequestLabels). No value
// is taken from request text the server does not recognise, so a client
// cannot grow the number of series: the path's values come from the route
// the request matched (RouteMatch), as upstream instruments only its
// registered routes, and every other value is from a fixed set.
//   verb     the HTTP method upper-cased; GET/HEAD of a collection is LIST,
//            a watch (watch=true or the /watch/ prefix) WATCH, a PATCH with
//            Content-Type application/apply-patch+yaml APPLY
//            (CanonicalVerb + CleanVerb); a method outside APPLY, CONNECT,
//            CREATE, DELETE, DELETECOLLECTION, GET, HEAD, LIST, PATCH, POST,
//            PROXY, PUT, UPDATE, WATCH, WATCHLIST is "other" (upstream's
//            validRequestMethods and OtherRequestMethod, metrics.go; berth
//            adds HEAD);
//   dry_run  the dryRun query values, de-duplicated, sorted and joined with
//            ","; "invalid" when one is not "All";
//   scope    "resource" with a name or on create, "namespace" in a
//            namespace, "cluster" for other resource requests, "" otherwise
//            (CleanScope);
//   group/version/resource/subresource from the path for resource
//            requests of a served resource (empty for an unknown group,
//            version or resource); subresource only when the resource serves
//            it (status, pods' log), else empty. For every other path
//            (discovery, /version, /healthz, /openapi, /metrics) they are
//            empty except subresource, which is the path of the route that
//            answered: the prefix of an extra handler (/metrics for
//            /metrics/anything), the path of a built-in route that succeeded
//            (each is fixed or one per served group, version or OpenAPI
//            document), and "" for a path no route answered (404, 405, 400);
//   component "apiserver" for resource requests, "" for the other paths;
//   code     the HTTP status code.
// Duration: from the request reaching the API server's Handle until the
// response is ready (for a watch: until the stream is set up), on the
// server's Clock.
//
// Thread-safety: Observe may be called from any number of threads.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <string>

#include "apiserver/http_server.h"
#include "apiserver/request_info.h"
#include "core/clock.h"

namespace berth::apiserver {

struct RequestLabels {
  std::string verb;
  std::string dry_run;
  std::string group;
  std::string version;
  std::string resource;
  std::string subresource;
  std::string scope;
  std::string component;
};

// What the API server's router recognised in a request: the only source of
// the labels' path values.
struct RouteMatch {
  // Resource requests: the group, version and resource name a served
  // resource; the subresource is empty or one it serves.
  bool resource = false;
  bool subresource = false;
  // Other requests: the route's path as registered ("/version", "/metrics",
  // "/apis/batch/v1"); "" when no route answered.
  std::string path_template;
};

// The labels of a request; `info` is null when its path could not be parsed.
RequestLabels LabelsForRequest(const HttpRequest& request, const RequestInfo* info, const RouteMatch& route);

// GET /metrics: every family of `registry` in the Prometheus text exposition
// format 0.0.4 (Content-Type "text/plain; version=0.0.4; charset=utf-8"),
// families in registration order and the series of each sorted by their
// labels, so two scrapes of the same state are byte-identical. Methods other
// than GET and HEAD get 405 MethodNotAllowed.
HttpResponse MetricsResponse(const prometheus::Registry& registry, const HttpRequest& request);

class RequestMetrics {
 public:
  explicit RequestMetrics(prometheus::Registry& registry);
  RequestMetrics(const RequestMetrics&) = delete;
  RequestMetrics& operator=(const RequestMetrics&) = delete;

  void Observe(const RequestLabels& labels, int code, Duration elapsed);

 private:
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& durations_;
};

}  // namespace berth::apiserver
