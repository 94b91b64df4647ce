// HttpClient against a tiny scripted HTTP/1.1 server written with Beast in
// this test: request building (paths, queries, headers, bodies), response and
// Status decoding, keep-alive reuse, and streaming watches.
#include "client/http_client.h"

#include <utility>  // before Asio (Boost 1.74 + GCC 12)

#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace berth::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct SeenRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;
  std::string body;
};

struct Reply {
  int status = 200;
  std::string body;
  bool close = false;                   // Connection: close
  std::vector<std::string> stream;      // chunked lines (a watch), then the end
  std::function<void()> before_end;     // runs after the stream lines, before the last chunk
  bool cut = false;                     // the stream ends without its last chunk (the server went away)
};

class TestServer {
 public:
  using Handler = std::function<Reply(const SeenRequest&)>;
  explicit TestServer(Handler handler)
      : handler_(std::move(handler)), acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~TestServer() {
    stopping_ = true;
    {  // unblock accept()
      asio::io_context ioc;
      tcp::socket s(ioc);
      beast::error_code ec;
      s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    }
    accept_thread_.join();
    {
      std::lock_guard<std::mutex> l(mu_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& t : conn_threads_) t.join();
  }

  int port() const { return port_; }
  int connections() const { return connections_.load(); }
  std::vector<SeenRequest> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }
  RestConfig Config() const {
    RestConfig c;
    c.server = "http://127.0.0.1:" + std::to_string(port_);
    c.url = *ParseServerUrl(c.server);
    return c;
  }

 private:
  void AcceptLoop() {
    for (;;) {
      tcp::socket s(ioc_);
      beast::error_code ec;
      acceptor_.accept(s, ec);
      if (ec || stopping_) return;
      connections_++;
      std::lock_guard<std::mutex> l(mu_);
      fds_.push_back(s.native_handle());
      conn_threads_.emplace_back([this, sock = std::move(s)]() mutable { Serve(std::move(sock)); });
    }
  }

  void Serve(tcp::socket s) {
    beast::flat_buffer buf;
    for (;;) {
      http::request<http::string_body> req;
      beast::error_code ec;
      http::read(s, buf, req, ec);
      if (ec) return;
      SeenRequest seen{std::string(req.method_string()), std::string(req.target()), {}, req.body()};
      for (const auto& f : req) seen.headers[std::string(f.name_string())] = std::string(f.value());
      {
        std::lock_guard<std::mutex> l(mu_);
        requests_.push_back(seen);
      }
      Reply reply = handler_(seen);
      if (!reply.stream.empty() || reply.before_end) {
        http::response<http::empty_body> res{static_cast<http::status>(reply.status), 11};
        res.set(http::field::content_type, "application/json");
        res.chunked(true);
        http::response_serializer<http::empty_body> sr{res};
        http::write_header(s, sr, ec);
        for (const auto& line : reply.stream) {
          std::string data = line + "\n";
          asio::write(s, http::make_chunk(asio::buffer(data)), ec);
        }
        if (reply.before_end) reply.before_end();
        if (!reply.cut) asio::write(s, http::make_chunk_last(), ec);
        return;  // a watch connection is not reused
      }
      http::response<http::string_body> res{static_cast<http::status>(reply.status), 11};
      res.set(http::field::content_type, "application/json");
      res.keep_alive(!reply.close);
      res.body() = reply.body;
      res.prepare_payload();
      http::write(s, res, ec);
      if (ec || reply.close) return;
    }
  }

  Handler handler_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<int> fds_;
  std::vector<SeenRequest> requests_;
  std::thread accept_thread_;
  std::vector<std::thread> conn_threads_;
};

const GroupVersionResource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads"};
const GroupVersionResource kPods{"", "v1", "pods"};

std::string NotFoundBody(const std::string& name) {
  api::Object status = {{"kind", "Status"},
                        {"apiVersion", "v1"},
                        {"metadata", api::Object::object()},
                        {"status", "Failure"},
                        {"message", "workloads.kueue.x-k8s.io \"" + name + "\" not found"},
                        {"reason", "NotFound"},
                        {"details", {{"name", name}, {"group", "kueue.x-k8s.io"}, {"kind", "workloads"}}},
                        {"code", 404}};
  return status.dump();
}

TEST(HttpClientPathTest, PathsAndQueries) {
  EXPECT_EQ(ResourcePath(kPods.Namespace("default"), "p1"), "/api/v1/namespaces/default/pods/p1");
  EXPECT_EQ(ResourcePath(kWorkloads.Namespace("team-a"), "w1", "status"),
            "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/w1/status");
  EXPECT_EQ(ResourcePath(GroupVersionResource{"kueue.x-k8s.io", "v1beta2", "clusterqueues"}),
            "/apis/kueue.x-k8s.io/v1beta2/clusterqueues");
  // kubectl sent `-l 'app in (a,b),!tier'` as labelSelector=app+in+%28a%2Cb%29%2C%21tier.
  EXPECT_EQ(EncodeQuery({{"limit", "500"}, {"labelSelector", "app in (a,b),!tier"}}),
            "labelSelector=app+in+%28a%2Cb%29%2C%21tier&limit=500");
  EXPECT_EQ(EncodeQuery({{"fieldSelector", "status.phase!=Failed"}}), "fieldSelector=status.phase%21%3DFailed");
}

TEST(HttpClientTest, GetSendsHeadersAndDecodesObjectAndNotFound) {
  TestServer server([](const SeenRequest& r) {
    if (r.target.find("/w1") != std::string::npos) {
      return Reply{200, R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"w1","resourceVersion":"7"}})"};
    }
    return Reply{404, NotFoundBody("nope")};
  });
  RestConfig cfg = server.Config();
  cfg.bearer_token = "tok";
  HttpClient client(cfg);
  StatusOr<api::Object> w1 = client.Get(kWorkloads.Namespace("team-a"), "w1", {"0"});
  ASSERT_TRUE(w1.ok()) << w1.status();
  EXPECT_EQ(api::ResourceVersion(*w1), "7");
  Status missing = client.Get(kWorkloads.Namespace("team-a"), "nope").status();
  EXPECT_EQ(missing.code(), Code::kNotFound);
  EXPECT_EQ(missing.message(), "workloads.kueue.x-k8s.io \"nope\" not found");

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[0].target, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/w1?resourceVersion=0");
  EXPECT_EQ(reqs[0].headers["Accept"], "application/json");
  EXPECT_EQ(reqs[0].headers["Authorization"], "Bearer tok");
  EXPECT_EQ(reqs[0].headers["Host"], "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(reqs[0].headers["User-Agent"], "berth/v0.1.0");
  // Both requests went over one keep-alive connection.
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpClientTest, ListQueryAndItemKindsFromTheList) {
  TestServer server([](const SeenRequest&) {
    return Reply{200, R"({"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"42","continue":"tok","remainingItemCount":3},
                          "items":[{"metadata":{"name":"a"}},{"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}}]})"};
  });
  HttpClient client(server.Config());
  ListOptions o;
  o.label_selector = "app=demo3";
  o.field_selector = "status.phase!=Failed";
  o.limit = 500;
  o.continue_token = "abc";
  StatusOr<ObjectList> list = client.List(kPods.Namespace("default"), o);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "42");
  EXPECT_EQ(list->continue_token, "tok");
  EXPECT_EQ(list->remaining_item_count, 3);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]["kind"], "Pod");
  EXPECT_EQ(list->items[0]["apiVersion"], "v1");
  EXPECT_EQ(server.requests()[0].target,
            "/api/v1/namespaces/default/pods?continue=abc&fieldSelector=status.phase%21%3DFailed&"
            "labelSelector=app%3Ddemo3&limit=500");
}

TEST(HttpClientTest, WritesCarryBodiesOptionsAndContentTypes) {
  TestServer server([](const SeenRequest& r) {
    if (r.method == "PUT") {
      return Reply{409, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,
                             "message":"Operation cannot be fulfilled on workloads.kueue.x-k8s.io \"w1\": the object has been modified; please apply your changes to the latest version and try again"})"};
    }
    if (r.method == "DELETE") return Reply{200, R"({"kind":"Status","apiVersion":"v1","status":"Success"})"};
    return Reply{r.method == "POST" ? 201 : 200, R"({"metadata":{"name":"w1","resourceVersion":"9"}})"};
  });
  HttpClient client(server.Config());
  const ResourceRef ref = kWorkloads.Namespace("team-a");
  api::Object w = {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "Workload"}, {"metadata", {{"name", "w1"}}}};
  CreateOptions co;
  co.dry_run = true;
  co.field_manager = "kueue";
  ASSERT_TRUE(client.Create(ref, w, co).ok());
  Status conflict = client.UpdateStatus(ref, w).status();
  EXPECT_EQ(conflict.code(), Code::kConflict);
  PatchOptions po;
  po.field_manager = "berth";
  po.force = true;
  ASSERT_TRUE(client.Patch(ref, "w1", PatchType::kApply, "metadata:\n  labels: {a: b}\n", po).ok());
  DeleteOptions d;
  d.grace_period_seconds = 0;
  d.propagation_policy = PropagationPolicy::kForeground;
  d.preconditions.uid = "u-1";
  ASSERT_TRUE(client.Delete(ref, "w1", d).ok());

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].target, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads?dryRun=All&fieldManager=kueue");
  EXPECT_EQ(reqs[0].headers["Content-Type"], "application/json");
  EXPECT_EQ(api::Object::parse(reqs[0].body), w);
  EXPECT_EQ(reqs[1].method, "PUT");
  EXPECT_EQ(reqs[1].target, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/w1/status");
  EXPECT_EQ(reqs[2].method, "PATCH");
  EXPECT_EQ(reqs[2].target, "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/w1?fieldManager=berth&force=true");
  EXPECT_EQ(reqs[2].headers["Content-Type"], "application/apply-patch+yaml");
  EXPECT_EQ(reqs[2].body, "metadata:\n  labels: {a: b}\n");
  EXPECT_EQ(reqs[3].method, "DELETE");
  EXPECT_EQ(api::Object::parse(reqs[3].body),
            api::Object::parse(R"({"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0,
                                   "preconditions":{"uid":"u-1"},"propagationPolicy":"Foreground"})"));
  EXPECT_EQ(server.connections(), 1);
}

TEST(HttpClientTest, InvalidCausesAndPlainTextServerErrors) {
  TestServer server([](const SeenRequest& r) {
    if (r.method == "POST") {
      return Reply{422, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,
        "message":"Pod \"p\" is invalid: spec.containers: Required value",
        "details":{"name":"p","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers"}]}})"};
    }
    return Reply{500, "plain text failure", /*close=*/true};
  });
  HttpClient client(server.Config());
  Status invalid = client.Create(kPods.Namespace("default"), {{"metadata", {{"name", "p"}}}}).status();
  EXPECT_EQ(invalid.code(), Code::kInvalid);
  ASSERT_EQ(invalid.causes().size(), 1u);
  EXPECT_EQ(invalid.causes()[0], (StatusCause{"FieldValueRequired", "spec.containers", "Required value"}));
  Status internal = client.Get(kPods.Namespace("default"), "p").status();
  EXPECT_EQ(internal.code(), Code::kInternal);
  EXPECT_EQ(internal.message(),
            "an error on the server (\"plain text failure\") has prevented the request from succeeding (get pods p)");
  // Connection: close answers are not reused.
  ASSERT_FALSE(client.Get(kPods.Namespace("default"), "p").ok());
  EXPECT_EQ(server.connections(), 2);
}

TEST(HttpClientTest, ReconnectsWhenTheServerClosedAnIdleConnection) {
  std::atomic<int> n{0};
  TestServer server([&](const SeenRequest&) {
    // The first answer does not say "close" but the server drops the
    // connection right after it (as an idle timeout would).
    Reply r{200, R"({"metadata":{"name":"x"}})"};
    r.close = n++ == 0;
    return r;
  });
  HttpClient client(server.Config());
  ASSERT_TRUE(client.Get(kPods.Namespace("d"), "x").ok());
  ASSERT_TRUE(client.Get(kPods.Namespace("d"), "x").ok());
  ASSERT_TRUE(client.Get(kPods.Namespace("d"), "x").ok());
  EXPECT_EQ(server.connections(), 2);
}

TEST(HttpClientTest, TransportErrors) {
  int closed_port;
  {
    asio::io_context ioc;
    tcp::acceptor a(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    closed_port = a.local_endpoint().port();
  }
  RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(closed_port);
  cfg.url = *ParseServerUrl(cfg.server);
  HttpClient client(cfg);
  Status refused = client.Get(kPods.Namespace("default"), "p").status();
  EXPECT_EQ(refused.code(), Code::kUnavailable);
  EXPECT_EQ(refused.message().rfind("Get \"http://127.0.0.1:" + std::to_string(closed_port) +
                                        "/api/v1/namespaces/default/pods/p\": dial tcp 127.0.0.1:" +
                                        std::to_string(closed_port) + ": connect: ",
                                    0),
            0u)
      << refused.message();

  // A server that never answers: the request deadline gives kTimeout.
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  TestServer slow([&](const SeenRequest&) {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return release; });
    return Reply{200, "{}"};
  });
  HttpClientOptions quick;
  quick.request_timeout = milliseconds(100);
  HttpClient impatient(slow.Config(), quick);
  EXPECT_EQ(impatient.Get(kPods.Namespace("default"), "p").status().code(), Code::kTimeout);
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
}

TEST(HttpClientTest, AStreamCutShortEndsWithUnexpectedEof) {
  TestServer server([](const SeenRequest&) {
    Reply r;
    r.stream = {R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"6"}}})"};
    r.cut = true;
    return r;
  });
  HttpClient client(server.Config());
  auto watch = client.Watch(kPods.Namespace("default"), WatchOptions{});
  ASSERT_TRUE(watch.ok()) << watch.status();
  auto first = (*watch)->Next(seconds(20));
  ASSERT_TRUE(first.ok()) << first.status();
  auto end = (*watch)->Next(seconds(20));
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.status().code(), Code::kUnavailable);
  EXPECT_EQ(end.status().message(), "unexpected EOF");
}

TEST(HttpClientTest, WatchStreamsEventsThenEnds) {
  TestServer server([](const SeenRequest&) {
    Reply r;
    r.stream = {R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"6"}}})",
                R"({"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"7"}}})",
                R"({"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}})"};
    return r;
  });
  HttpClient client(server.Config());
  WatchOptions o;
  o.resource_version = "5";
  o.timeout_seconds = 30;
  o.allow_watch_bookmarks = true;
  auto watch = client.Watch(kPods.Namespace("default"), o);
  ASSERT_TRUE(watch.ok()) << watch.status();
  std::vector<std::string> seen;
  for (;;) {
    auto next = (*watch)->Next(seconds(20));
    if (!next.ok()) {
      EXPECT_EQ(next.status().code(), Code::kUnavailable);
      EXPECT_EQ(next.status().message(), "watch closed");
      break;
    }
    ASSERT_TRUE(next->has_value());
    seen.push_back(std::string(WatchEventTypeName((*next)->type)) + " " + api::ResourceVersion(*(*next)->object));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED 6", "MODIFIED 7", "BOOKMARK 9"}));
  EXPECT_EQ(server.requests()[0].target,
            "/api/v1/namespaces/default/pods?allowWatchBookmarks=true&resourceVersion=5&timeoutSeconds=30&watch=true");
}

TEST(HttpClientTest, WatchErrorEventAndRejectedWatch) {
  TestServer server([](const SeenRequest& r) {
    if (r.target.find("labelSelector") != std::string::npos) {
      return Reply{400, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400,
                             "message":"unable to parse requirement: found '', expected: identifier"})"};
    }
    Reply reply;
    reply.stream = {R"js({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (120)","reason":"Expired","code":410}})js"};
    return reply;
  });
  HttpClient client(server.Config());
  WatchOptions o;
  o.resource_version = "5";
  auto watch = std::move(client.Watch(kPods, o)).value();
  auto e = watch->Next(seconds(20));
  ASSERT_TRUE(e.ok() && e->has_value());
  EXPECT_EQ((*e)->type, WatchEventType::kError);
  EXPECT_EQ((*e)->error, GoneError("too old resource version: 5 (120)"));

  o.label_selector = "app in (";
  Status rejected = client.Watch(kPods, o).status();
  EXPECT_EQ(rejected.code(), Code::kBadRequest);
  EXPECT_EQ(rejected.message(), "unable to parse requirement: found '', expected: identifier");
}

TEST(HttpClientTest, StopEndsABlockedWatchPromptly) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  TestServer server([&](const SeenRequest&) {
    Reply r;
    r.stream = {R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})"};
    r.before_end = [&] {  // the server holds the stream open
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return release; });
    };
    return r;
  });
  HttpClient client(server.Config());
  auto watch = std::move(client.Watch(kPods)).value();
  auto first = watch->Next(seconds(20));
  ASSERT_TRUE(first.ok() && first->has_value());
  std::thread stopper([&] { watch->Stop(); });
  // Without Stop this would wait for the (long) timeout.
  auto after = watch->Next(seconds(600));
  stopper.join();
  EXPECT_EQ(after.status().code(), Code::kUnavailable);
  watch.reset();
  {
    std::lock_guard<std::mutex> l(mu);
    release = true;
  }
  cv.notify_all();
}

TEST(HttpClientTest, RawRequestsReturnAnyStatus) {
  TestServer server([](const SeenRequest& r) {
    return Reply{r.target == "/version" ? 200 : 404, R"({"major":"1","minor":"32"})"};
  });
  HttpClient client(server.Config());
  StatusOr<RawResponse> v = client.Do({"GET", "/version", {{"Accept", "application/json, */*"}}, ""});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->status, 200);
  EXPECT_EQ(v->content_type, "application/json");
  EXPECT_EQ(api::Object::parse(v->body)["minor"], "32");
  EXPECT_EQ(server.requests()[0].headers["Accept"], "application/json, */*");
  EXPECT_EQ(client.Do({"GET", "/nope", {}, ""})->status, 404);
}

}  // namespace
}  // namespace berth::client
