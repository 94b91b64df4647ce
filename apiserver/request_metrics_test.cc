// kube-apiserver's request metrics: the labels of requests as kubectl and the
// controllers send them, and the counts and /metrics text of an ApiServer
// given a registry (Handle without the network, MemoryStore, FakeClock).
#include "apiserver/request_metrics.h"

#include <gtest/gtest.h>
#include <variant>

#include "apiserver/api_server.h"
#include "apiserver/testing/test_api_server.h"
#include "tests/testing/prometheus_values.h"

namespace berth::apiserver {
namespace {

using berth::testing::HistogramCount;
using berth::testing::MetricValue;

RequestLabels Labels(const std::string& method, const std::string& target, int code = 200,
                     const std::string& content_type = "") {
  HttpRequest req;
  req.method = method;
  req.target = target;
  if (!content_type.empty()) req.headers.emplace_back("Content-Type", content_type);
  auto info = ParseRequestInfo(method, target);
  // The route a served request matches: its resource, or its path when it succeeded.
  RouteMatch route{.resource = true, .subresource = true, .path_template = ""};
  if (info.ok() && !info->is_resource_request && code < 400) route.path_template = info->path;
  return LabelsForRequest(req, info.ok() ? &info.value() : nullptr, route);
}

std::string Describe(const RequestLabels& l) {
  return l.verb + " g=" + l.group + " v=" + l.version + " r=" + l.resource + " sub=" + l.subresource +
         " scope=" + l.scope + " component=" + l.component + " dry_run=" + l.dry_run;
}

TEST(RequestLabelsTest, VerbScopeAndResourceAsKubeApiserver) {
  EXPECT_EQ(Describe(Labels("GET", "/api/v1/namespaces/default/pods/p1")),
            "GET g= v=v1 r=pods sub= scope=resource component=apiserver dry_run=");
  EXPECT_EQ(Describe(Labels("GET", "/api/v1/namespaces/default/pods?limit=500")),
            "LIST g= v=v1 r=pods sub= scope=namespace component=apiserver dry_run=");
  EXPECT_EQ(Describe(Labels("GET", "/api/v1/pods")),
            "LIST g= v=v1 r=pods sub= scope=cluster component=apiserver dry_run=");
  EXPECT_EQ(Describe(Labels("GET", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues?watch=true&resourceVersion=5")),
            "WATCH g=kueue.x-k8s.io v=v1beta2 r=clusterqueues sub= scope=cluster component=apiserver dry_run=");
  EXPECT_EQ(Describe(Labels("GET", "/api/v1/watch/namespaces/default/pods")),
            "WATCH g= v=v1 r=pods sub= scope=namespace component=apiserver dry_run=");
  EXPECT_EQ(Describe(Labels("POST", "/apis/batch/v1/namespaces/team-a/jobs?dryRun=All", 201)),
            "POST g=batch v=v1 r=jobs sub= scope=resource component=apiserver dry_run=All")
      << "create is scope resource";
  EXPECT_EQ(Describe(Labels("PUT", "/apis/kueue.x-k8s.io/v1beta2/namespaces/a/workloads/w/status")),
            "PUT g=kueue.x-k8s.io v=v1beta2 r=workloads sub=status scope=resource component=apiserver dry_run=");
  EXPECT_EQ(Describe(Labels("PATCH", "/api/v1/namespaces/a/configmaps/c", 200, "application/apply-patch+yaml")),
            "APPLY g= v=v1 r=configmaps sub= scope=resource component=apiserver dry_run=");
  EXPECT_EQ(Describe(Labels("PATCH", "/api/v1/namespaces/a/configmaps/c", 200, "application/merge-patch+json")),
            "PATCH g= v=v1 r=configmaps sub= scope=resource component=apiserver dry_run=");
  EXPECT_EQ(Describe(Labels("DELETE", "/api/v1/namespaces/a/pods")),
            "DELETE g= v=v1 r=pods sub= scope=namespace component=apiserver dry_run=");
  EXPECT_EQ(Labels("POST", "/api/v1/namespaces/a/pods?dryRun=Bogus", 400).dry_run, "invalid");
}

TEST(RequestLabelsTest, ValuesComeFromTheRouteAndFixedSetsNeverFromTheRequestText) {
  HttpRequest req;
  req.method = "JUNK1";
  req.target = "/api/v1/namespaces/default/junk1/x/junk2";
  auto info = ParseRequestInfo(req.method, req.target);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(Describe(LabelsForRequest(req, &info.value(), RouteMatch{})),
            "other g= v= r= sub= scope=resource component=apiserver dry_run=");
  req.method = "GET";
  req.target = "/api/v1/namespaces/default/pods/p/junk2";
  info = ParseRequestInfo(req.method, req.target);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(Describe(LabelsForRequest(req, &info.value(),
                                      RouteMatch{.resource = true, .subresource = false, .path_template = ""})),
            "GET g= v=v1 r=pods sub= scope=resource component=apiserver dry_run=");
}

TEST(RequestLabelsTest, NonResourcePathsAreTheSubresourceExceptWhenNotFound) {
  EXPECT_EQ(Describe(Labels("GET", "/version")), "GET g= v= r= sub=/version scope= component= dry_run=");
  EXPECT_EQ(Describe(Labels("GET", "/metrics")), "GET g= v= r= sub=/metrics scope= component= dry_run=");
  EXPECT_EQ(Describe(Labels("GET", "/apis/kueue.x-k8s.io/v1beta2")),
            "GET g= v= r= sub=/apis/kueue.x-k8s.io/v1beta2 scope= component= dry_run=");
  EXPECT_EQ(Describe(Labels("GET", "/no/such/path", 404)), "GET g= v= r= sub= scope= component= dry_run=");
}

class RequestMetricsServerTest : public ::testing::Test {
 protected:
  RequestMetricsServerTest() {
    api_.server.RegisterNonResourceHandler(
        "/metrics", [this](const HttpRequest& req) { return HandlerResult(MetricsResponse(*registry_, req)); });
  }
  static ApiServerOptions Options(std::shared_ptr<prometheus::Registry> registry) {
    ApiServerOptions o = testing::WithoutGarbageCollector();
    o.metrics_registry = std::move(registry);
    return o;
  }
  void SetUp() override { ASSERT_TRUE(api_.server.EnsureSystemNamespaces().ok()); }

  HttpResponse Do(const std::string& method, const std::string& target, const std::string& body = "") {
    HandlerResult r = api_.server.Handle(testing::Request(method, target, body));
    return std::holds_alternative<HttpResponse>(r)
               ? std::get<HttpResponse>(r)
               : HttpResponse{.status = -1, .content_type = "", .headers = {}, .body = ""};
  }

  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  testing::TestApiServer api_{Options(registry_)};
};

TEST_F(RequestMetricsServerTest, EveryHandledRequestIsCountedWithItsCode) {
  const std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},
    "spec":{"containers":[{"name":"c","image":"busybox"}]}})";
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", pod).status, 201);
  ASSERT_EQ(Do("POST", "/api/v1/namespaces/default/pods", pod).status, 409);
  ASSERT_EQ(Do("GET", "/api/v1/namespaces/default/pods/p1").status, 200);
  ASSERT_EQ(Do("GET", "/api/v1/namespaces/default/pods/p2").status, 404);
  ASSERT_EQ(Do("GET", "/api/v1/namespaces/default/pods").status, 200);
  ASSERT_EQ(Do("GET", "/api/v1/namespaces/default/pods").status, 200);
  ASSERT_EQ(Do("GET", "/version").status, 200);

  const std::map<std::string, std::string> pods = {
      {"resource", "pods"}, {"version", "v1"}, {"group", ""}, {"component", "apiserver"}};
  auto with = [&pods](std::map<std::string, std::string> extra) {
    extra.insert(pods.begin(), pods.end());
    return extra;
  };
  EXPECT_EQ(MetricValue(*registry_, "apiserver_request_total", with({{"verb", "POST"}, {"code", "201"}})), 1);
  EXPECT_EQ(MetricValue(*registry_, "apiserver_request_total", with({{"verb", "POST"}, {"code", "409"}})), 1);
  EXPECT_EQ(MetricValue(*registry_, "apiserver_request_total",
                        with({{"verb", "GET"}, {"code", "200"}, {"scope", "resource"}})),
            1);
  EXPECT_EQ(MetricValue(*registry_, "apiserver_request_total", with({{"verb", "GET"}, {"code", "404"}})), 1);
  EXPECT_EQ(MetricValue(*registry_, "apiserver_request_total",
                        with({{"verb", "LIST"}, {"code", "200"}, {"scope", "namespace"}})),
            2);
  EXPECT_EQ(HistogramCount(*registry_, "apiserver_request_duration_seconds", with({{"verb", "LIST"}})), 2u);
  EXPECT_EQ(MetricValue(*registry_, "apiserver_request_total", {{"subresource", "/version"}, {"code", "200"}}), 1);

  // /metrics itself: the text format, and the scrape is counted like upstream's.
  HttpResponse scrape = Do("GET", "/metrics");
  ASSERT_EQ(scrape.status, 200);
  EXPECT_EQ(scrape.content_type, "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_NE(scrape.body.find("# TYPE apiserver_request_total counter\n"), std::string::npos) << scrape.body;
  EXPECT_NE(scrape.body.find("apiserver_request_total{code=\"201\",component=\"apiserver\",dry_run=\"\",group=\"\","
                             "resource=\"pods\",scope=\"resource\",subresource=\"\",verb=\"POST\",version=\"v1\"} 1\n"),
            std::string::npos)
      << scrape.body;
  EXPECT_NE(scrape.body.find("# TYPE apiserver_request_duration_seconds histogram\n"), std::string::npos);
  EXPECT_EQ(MetricValue(*registry_, "apiserver_request_total", {{"subresource", "/metrics"}, {"code", "200"}}), 1);
  EXPECT_EQ(Do("POST", "/metrics").status, 405);

  // Series are sorted by labels: the same state prints the same text.
  HttpRequest get;
  get.method = "GET";
  EXPECT_EQ(MetricsResponse(*registry_, get).body, MetricsResponse(*registry_, get).body);
}

// The number of series of every family in `registry`.
size_t SeriesCount(const prometheus::Registry& registry) {
  size_t n = 0;
  for (const auto& family : registry.Collect()) n += family.metric.size();
  return n;
}

TEST_F(RequestMetricsServerTest, ThousandsOfJunkRequestsAddABoundedNumberOfSeries) {
  // One of each kind of request first: the series they create are the bound.
  auto each_kind = [this](const std::string& junk) {
    Do("GET", "/" + junk);                                               // unknown path: 404
    Do("POST", "/" + junk);                                              // 405 before the path is looked at
    Do("GET", "/api/v1/" + junk);                                        // unknown resource: 404
    Do("GET", "/apis/" + junk + "/v1/things");                           // unknown group
    Do("GET", "/api/" + junk);                                           // unknown discovery version
    Do("GET", "/openapi/v3/" + junk);                                    // unknown OpenAPI document
    Do("GET", "/api/v1/namespaces/default/pods/p/" + junk);              // unknown subresource
    Do("GET", "/api/v1/namespaces/default/configmaps/" + junk);          // unknown object: 404 of a served resource
    Do("GET", "/metrics/" + junk);                                       // under an extra handler
    Do(junk, "/api/v1/namespaces/default/configmaps");                   // unknown method
    Do("GET", "/api/v1/namespaces/default/pods?dryRun=" + junk);         // bad dryRun value
    Do("GET", "/api/v1/namespaces/%zz" + junk);                          // unparseable path
    Do("PATCH", "/api/v1/namespaces/default/configmaps/" + junk, "{}");  // content type from the request
  };
  each_kind("junk");
  const size_t after_one = SeriesCount(*registry_);
  for (int i = 0; i < 1000; ++i) each_kind("JUNK" + std::to_string(i));
  EXPECT_EQ(SeriesCount(*registry_), after_one) << "1,000 distinct junk requests of each kind added series";
  EXPECT_LT(after_one, 100u);
}

TEST(RequestMetricsOffTest, NoRegistryNoMetricsPath) {
  testing::TestApiServer test_server;
  HandlerResult r = test_server.server.Handle(testing::Request("GET", "/metrics"));
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(r));
  EXPECT_EQ(std::get<HttpResponse>(r).status, 404) << "the binary registers /metrics, the API server does not";
}

}  // namespace
}  // namespace berth::apiserver
