// NodeProxy: the API server's relay to a remote node's streaming server, with
// a TLS HttpServer standing in for the node and a plain one for the API
// server, driven by Boost.Beast's WebSocket and HTTP clients.
#include "apiserver/node_proxy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

// GCC 12 + Boost 1.74: awaitable.hpp uses std::exchange without including <utility>.
// clang-format off
#include <utility>
// clang-format on

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <atomic>
#include <boost/asio/write.hpp>
#include <condition_variable>
#include <mutex>
#include <sys/socket.h>
#include <thread>

#include "apiserver/status_response.h"
#include "apiserver/testing/websocket_client.h"
#include "pki/certificates.h"

namespace berth::apiserver {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using ::testing::HasSubstr;

pki::TimePoint Now() { return std::chrono::system_clock::now(); }

pki::CertificateAndKey Issue(const pki::CertificateAndKey& ca, pki::CertificateRequest req) {
  auto issued = pki::IssueCertificate(ca, req, Now());
  EXPECT_TRUE(issued.ok()) << issued.status();
  return *issued;
}

// A node's streaming server: TLS with a serving certificate for node-1 from the
// node's own CA, asking for client certificates of the cluster CA. Its
// WebSocket answers each message with "echo:" in front and ends with "last
// words" on "bye"; /log streams two lines; anything else is a 404 Status.
class FakeNode {
 public:
  FakeNode(const pki::CertificateAndKey& cluster_ca, const pki::CertificateAndKey& node_ca) {
    pki::CertificateRequest serving;
    serving.common_name = "system:node:node-1";
    serving.dns_names = {"node-1"};
    serving.ip_addresses = {"127.0.0.1"};
    serving.server_auth = true;
    const pki::CertificateAndKey cert = Issue(node_ca, serving);
    HttpServerOptions options;
    options.threads = 2;
    options.tls = HttpTlsOptions{cert.certificate_pem, cert.private_key_pem, cluster_ca.certificate_pem};
    server_ = std::make_unique<HttpServer>(options, [this](const HttpRequest& req) { return Handle(req); });
    EXPECT_TRUE(server_->Start().ok());
  }
  ~FakeNode() { server_->Stop(); }
  uint16_t port() const { return server_->port(); }

  std::string last_client() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_client_;
  }
  std::string last_target() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_target_;
  }
  bool WaitSessionEnded() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(20), [this] { return ended_ > 0; });  // a bound on hangs only
  }

 private:
  HandlerResult Handle(const HttpRequest& req) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_client_ = req.client_certificate && req.client_certificate->verified ? req.client_certificate->common_name
                                                                                 : "(none)";
      last_target_ = req.target;
    }
    if (req.target.rfind("/api/v1/namespaces/ns/pods/endless/log", 0) == 0) {
      StreamingResponse s;
      s.content_type = "text/plain";
      s.start = [](std::shared_ptr<ResponseStream> stream) { stream->Write("line 1\n"); };
      return s;
    }
    if (req.target.rfind("/api/v1/namespaces/ns/pods/p/log", 0) == 0) {
      StreamingResponse s;
      s.content_type = "text/plain";
      s.start = [](std::shared_ptr<ResponseStream> stream) {
        stream->Write("line 1\n");
        stream->Write("line 2\n");
        stream->Close();
      };
      return s;
    }
    if (!IsWebSocketUpgrade(req) || req.target.find("/pods/gone/") != std::string::npos) {
      return StatusResponse(NotFoundError("pods \"gone\" not found"));
    }
    WebSocketUpgrade up;
    up.protocol = "v5.channel.k8s.io";
    up.start = [this](std::shared_ptr<WebSocketSession> ws) {
      ws->OnDone([this] {
        std::lock_guard<std::mutex> lock(mu_);
        ++ended_;
        cv_.notify_all();
      });
      return [ws](std::string m) {
        if (m == "bye") {
          ws->Write("last words");
          ws->Close();
          return true;
        }
        ws->Write("echo:" + m);
        return true;
      };
    };
    return up;
  }

  std::unique_ptr<HttpServer> server_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string last_client_;
  std::string last_target_;
  int ended_ = 0;
};

// A TCP listener on 127.0.0.1 that forwards each connection to `to` (0: never
// answers: it accepts and holds the connection) until Cut() drops every
// connection without a word, as a dying host does.
class TcpForwarder {
 public:
  explicit TcpForwarder(uint16_t to) : to_(to), acceptor_(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)) {
    thread_ = std::thread([this] {
      for (;;) {
        auto client = std::make_shared<tcp::socket>(io_);
        beast::error_code ec;
        acceptor_.accept(*client, ec);
        if (ec) return;
        std::lock_guard<std::mutex> lock(mu_);
        sockets_.push_back(client);
        if (to_ == 0) continue;
        auto node = std::make_shared<tcp::socket>(io_);
        node->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), to_), ec);
        if (ec) continue;
        sockets_.push_back(node);
        pumps_.emplace_back([client, node] { Pump(*client, *node); });
        pumps_.emplace_back([client, node] { Pump(*node, *client); });
      }
    });
  }
  ~TcpForwarder() {
    Cut();
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);  // wakes the blocked accept (close does not)
    thread_.join();
    for (auto& t : pumps_) t.join();
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  void Cut() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& s : sockets_) {
      beast::error_code ec;
      s->shutdown(tcp::socket::shutdown_both, ec);
    }
  }

 private:
  static void Pump(tcp::socket& from, tcp::socket& to) {
    char buf[16384];
    beast::error_code ec;
    for (;;) {
      const std::size_t n = from.read_some(net::buffer(buf), ec);
      if (ec) break;
      net::write(to, net::buffer(buf, n), ec);
      if (ec) break;
    }
    to.shutdown(tcp::socket::shutdown_both, ec);
  }
  const uint16_t to_;
  net::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::shared_ptr<tcp::socket>> sockets_;
  std::vector<std::thread> pumps_;  // guarded by mu_
};

api::Object NodeObject(const std::string& name, uint16_t port, const std::string& ca_pem) {
  api::Object node = api::Object::parse(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"","annotations":{}},
      "status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"},{"type":"Hostname","address":"x"}],
                "daemonEndpoints":{"kubeletEndpoint":{"Port":0}}}})");
  node["metadata"]["name"] = name;
  node["metadata"]["annotations"][kKubeletServingCaAnnotation] = ca_pem;
  node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] = port;
  return node;
}

class NodeProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ca_ = *pki::CreateCertificateAuthority("berth-ca", Now());
    node_ca_ = *pki::CreateCertificateAuthority("node-1-ca", Now());
    pki::CertificateRequest client;
    client.common_name = "kube-apiserver-kubelet-client";
    client.client_auth = true;
    const pki::CertificateAndKey cert = Issue(cluster_ca_, client);
    proxy_ = std::make_unique<NodeProxy>(NodeProxyOptions{cert.certificate_pem, cert.private_key_pem});
    node_ = std::make_unique<FakeNode>(cluster_ca_, node_ca_);
    node_object_ = NodeObject("node-1", node_->port(), node_ca_.certificate_pem);
    // One I/O thread: nothing the proxy does may hold it.
    HttpServerOptions options;
    options.threads = 1;
    front_ = std::make_unique<HttpServer>(options, [this](const HttpRequest& req) -> HandlerResult {
      if (req.target == "/healthz") return HttpResponse{200, "text/plain", {}, "ok"};
      std::lock_guard<std::mutex> lock(mu_);
      return proxy_->Forward(req, node_object_);
    });
    ASSERT_TRUE(front_->Start().ok());
  }
  void TearDown() override {
    front_->Stop();
    proxy_->Stop();
  }

  // A GET, or with `upgrade` a WebSocket upgrade request whose answer is read
  // as HTTP (Beast's synchronous WebSocket client keeps no refused answer).
  http::response<http::string_body> Get(const std::string& target, bool upgrade = false) {
    net::io_context io;
    tcp::socket socket(io);
    tcp::resolver resolver(io);
    net::connect(socket, resolver.resolve("127.0.0.1", std::to_string(front_->port())));
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (upgrade) {
      req.set(http::field::connection, "Upgrade");
      req.set(http::field::upgrade, "websocket");
      req.set(http::field::sec_websocket_version, "13");
      req.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
      req.set(http::field::sec_websocket_protocol, "v5.channel.k8s.io");
    }
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    return res;
  }

  std::mutex mu_;
  pki::CertificateAndKey cluster_ca_, node_ca_;
  std::unique_ptr<NodeProxy> proxy_;
  std::unique_ptr<FakeNode> node_;
  api::Object node_object_;
  std::unique_ptr<HttpServer> front_;
};

using WsClient = testing::WebSocketClient;

const char kExec[] = "/api/v1/namespaces/ns/pods/p/exec?command=sh&stdin=true&stdout=true";

TEST_F(NodeProxyTest, RelaysAWebSocketWithTheNodesSubprotocolAsTheKubeletClient) {
  WsClient c(front_->port(), kExec, "v5.channel.k8s.io, v4.channel.k8s.io");
  ASSERT_FALSE(c.ec) << c.ec.message();
  EXPECT_EQ(c.response.result_int(), 101);
  EXPECT_EQ(c.response[http::field::sec_websocket_protocol], "v5.channel.k8s.io");
  EXPECT_EQ(node_->last_client(), "kube-apiserver-kubelet-client");
  EXPECT_EQ(node_->last_target(), kExec);
  c.ws.write(net::buffer(std::string("\x00hi", 3)));
  EXPECT_EQ(c.Read(), std::string("echo:\x00hi", 8));
  EXPECT_TRUE(c.ws.got_binary());
  EXPECT_EQ(proxy_->open_sessions(), 1u);

  // The node ends the session: what it sent arrives, then a normal close.
  c.ws.write(net::buffer(std::string("bye")));
  EXPECT_EQ(c.Read(), "last words");
  beast::flat_buffer buffer;
  beast::error_code ec;
  c.ws.read(buffer, ec);
  EXPECT_EQ(ec, websocket::error::closed);
  for (int i = 0; i < 500 && proxy_->open_sessions() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(proxy_->open_sessions(), 0u);
}

TEST_F(NodeProxyTest, AClientThatGoesAwayEndsTheNodesSession) {
  {
    WsClient c(front_->port(), kExec, "v5.channel.k8s.io");
    ASSERT_FALSE(c.ec) << c.ec.message();
    c.ws.write(net::buffer(std::string("x")));
    EXPECT_EQ(c.Read(), "echo:x");
    beast::get_lowest_layer(c.ws).close();
  }
  EXPECT_TRUE(node_->WaitSessionEnded());
}

TEST_F(NodeProxyTest, ManyMessagesArriveInOrder) {
  WsClient c(front_->port(), kExec, "v5.channel.k8s.io");
  ASSERT_FALSE(c.ec) << c.ec.message();
  const std::string big(200 * 1024, 'z');
  std::thread writer([&] {
    for (int i = 0; i < 30; ++i) c.ws.write(net::buffer(std::to_string(i) + big));
  });
  for (int i = 0; i < 30; ++i) ASSERT_EQ(c.Read(), "echo:" + std::to_string(i) + big);
  writer.join();
}

TEST_F(NodeProxyTest, StreamsALog) {
  auto res = Get("/api/v1/namespaces/ns/pods/p/log?follow=true");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "line 1\nline 2\n");
  EXPECT_EQ(res[http::field::content_type], "text/plain");
  EXPECT_EQ(node_->last_target(), "/api/v1/namespaces/ns/pods/p/log?follow=true");
  for (int i = 0; i < 500 && proxy_->open_sessions() != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(proxy_->open_sessions(), 0u);
}

TEST_F(NodeProxyTest, PassesTheNodesErrorsThrough) {
  auto res = Get("/api/v1/namespaces/ns/pods/gone/log");
  EXPECT_EQ(res.result_int(), 404);
  EXPECT_THAT(res.body(), HasSubstr(R"("message":"pods \"gone\" not found")"));
  // A refused upgrade is the node's answer too.
  res = Get("/api/v1/namespaces/ns/pods/gone/exec?command=sh", true);
  EXPECT_EQ(res.result_int(), 404);
  EXPECT_THAT(res.body(), HasSubstr(R"("message":"pods \"gone\" not found")"));
  EXPECT_EQ(proxy_->open_sessions(), 0u);
}

TEST_F(NodeProxyTest, TrustsOnlyTheCaTheNodePublishesForItsOwnName) {
  const pki::CertificateAndKey other = *pki::CreateCertificateAuthority("other", Now());
  {
    std::lock_guard<std::mutex> lock(mu_);
    node_object_ = NodeObject("node-1", node_->port(), other.certificate_pem);
  }
  auto res = Get("/api/v1/namespaces/ns/pods/p/log");
  EXPECT_EQ(res.result_int(), 500);
  EXPECT_THAT(res.body(), HasSubstr("error dialing backend: "));
  EXPECT_THAT(res.body(), HasSubstr("x509: certificate signed by unknown authority"));
  res = Get(kExec, true);
  EXPECT_EQ(res.result_int(), 500);
  EXPECT_THAT(res.body(),
              HasSubstr("error dialing backend: tls: failed to verify certificate: x509: certificate signed by unknown "
                        "authority"));

  // Another node's name on the same address: the certificate is node-1's.
  {
    std::lock_guard<std::mutex> lock(mu_);
    node_object_ = NodeObject("node-2", node_->port(), node_ca_.certificate_pem);
  }
  res = Get(kExec, true);
  EXPECT_EQ(res.result_int(), 500);
  EXPECT_THAT(res.body(), HasSubstr("x509: certificate is not valid for node-2"));
  EXPECT_EQ(proxy_->open_sessions(), 0u);
}

TEST_F(NodeProxyTest, ManySessionsAtOnceAllUpgrade) {
  std::vector<std::thread> clients;
  std::atomic<int> echoed{0};
  for (int i = 0; i < 12; ++i) {
    clients.emplace_back([this, i, &echoed] {
      WsClient c(front_->port(), kExec, "v5.channel.k8s.io");
      if (c.ec) return;
      c.ws.write(net::buffer(std::to_string(i)));
      if (c.Read() == "echo:" + std::to_string(i)) ++echoed;
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(echoed.load(), 12);
}

TEST_F(NodeProxyTest, ANodeThatNeverAnswersHoldsNoThreadOfTheApiServer) {
  // The proxy of this test gives up on a node after 4 s: far beyond what
  // /healthz takes on a loaded machine, so the order below is the server's.
  proxy_->Stop();
  pki::CertificateRequest client;
  client.common_name = "kube-apiserver-kubelet-client";
  client.client_auth = true;
  const pki::CertificateAndKey cert = Issue(cluster_ca_, client);
  TcpForwarder silent(0);
  {
    std::lock_guard<std::mutex> lock(mu_);
    proxy_ = std::make_unique<NodeProxy>(
        NodeProxyOptions{cert.certificate_pem, cert.private_key_pem, std::chrono::milliseconds(4000)});
    node_object_ = NodeObject("node-1", silent.port(), node_ca_.certificate_pem);
  }
  std::atomic<int> answered{0};
  std::vector<std::string> bodies(3);
  std::vector<std::thread> waiting;
  for (int i = 0; i < 3; ++i) {
    waiting.emplace_back([this, i, &answered, &bodies] {
      bodies[i] = Get(i == 0 ? "/api/v1/namespaces/ns/pods/p/log" : kExec, i != 0).body();
      ++answered;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the three are dialing
  // The server's only I/O thread answers others meanwhile.
  EXPECT_EQ(Get("/healthz").body(), "ok");
  EXPECT_EQ(answered.load(), 0);
  for (auto& t : waiting) t.join();
  for (const std::string& body : bodies) {
    EXPECT_THAT(body, HasSubstr("error dialing backend"));
    EXPECT_THAT(body, ::testing::AnyOf(HasSubstr("i/o timeout"), HasSubstr("Client.Timeout exceeded")));
  }
  EXPECT_EQ(proxy_->open_sessions(), 0u);
}

TEST_F(NodeProxyTest, ALostNodeIsAFailureOnTheErrorStream) {
  TcpForwarder link(node_->port());
  {
    std::lock_guard<std::mutex> lock(mu_);
    node_object_ = NodeObject("node-1", link.port(), node_ca_.certificate_pem);
  }
  WsClient c(front_->port(), kExec, "v5.channel.k8s.io");
  ASSERT_FALSE(c.ec) << c.ec.message();
  c.ws.write(net::buffer(std::string("x")));
  EXPECT_EQ(c.Read(), "echo:x");
  link.Cut();  // the node's host goes away: no close frame
  const std::string frame = c.Read();
  ASSERT_FALSE(frame.empty());
  EXPECT_EQ(frame[0], '\x03');
  EXPECT_THAT(frame, HasSubstr(R"("status":"Failure")"));
  EXPECT_THAT(frame, HasSubstr(R"(error proxying to node \"node-1\": the connection to its agent was lost)"));
  beast::flat_buffer buffer;
  beast::error_code ec;
  c.ws.read(buffer, ec);
  EXPECT_EQ(ec, websocket::error::closed);
}

TEST_F(NodeProxyTest, ALostNodeCutsAFollowedLogShort) {
  TcpForwarder link(node_->port());
  {
    std::lock_guard<std::mutex> lock(mu_);
    node_object_ = NodeObject("node-1", link.port(), node_ca_.certificate_pem);
  }
  net::io_context io;
  tcp::socket socket(io);
  tcp::resolver resolver(io);
  net::connect(socket, resolver.resolve("127.0.0.1", std::to_string(front_->port())));
  http::request<http::empty_body> req{http::verb::get, "/api/v1/namespaces/ns/pods/endless/log?follow=true", 11};
  req.set(http::field::host, "127.0.0.1");
  http::write(socket, req);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  http::read_header(socket, buffer, parser);
  EXPECT_EQ(parser.get().result_int(), 200);
  while (parser.get().body().find("line 1\n") == std::string::npos) http::read_some(socket, buffer, parser);
  link.Cut();  // the node's host goes away mid-body
  beast::error_code ec;
  http::read(socket, buffer, parser, ec);
  // No final chunk: the client's body ends short, as Go reports "unexpected EOF".
  EXPECT_EQ(ec, http::error::partial_message) << ec.message();
  EXPECT_FALSE(parser.is_done());
  EXPECT_EQ(parser.get().body(), "line 1\n");
}

TEST_F(NodeProxyTest, ANodeWithoutAnEndpointIsUnavailable) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    node_object_ = NodeObject("node-1", 0, node_ca_.certificate_pem);
  }
  auto res = Get("/api/v1/namespaces/ns/pods/p/log");
  EXPECT_EQ(res.result_int(), 503);
  EXPECT_THAT(res.body(), HasSubstr("node \\\"node-1\\\" has no streaming endpoint"));
  {
    std::lock_guard<std::mutex> lock(mu_);
    node_object_ = NodeObject("node-1", node_->port(), "");
  }
  res = Get("/api/v1/namespaces/ns/pods/p/log");
  EXPECT_EQ(res.result_int(), 503);
  EXPECT_THAT(res.body(), HasSubstr("has no berth.dev/kubelet-serving-ca annotation"));
  for (const char* bad : {"65536", "-1", "\"10250\"", "99999999999999999999"}) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      node_object_ = NodeObject("node-1", 1, node_ca_.certificate_pem);
      node_object_["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] = api::Object::parse(bad);
    }
    res = Get("/api/v1/namespaces/ns/pods/p/log");
    EXPECT_EQ(res.result_int(), 503) << bad;
    EXPECT_THAT(res.body(), HasSubstr("is not a port (1-65535)")) << bad;
  }
}

TEST_F(NodeProxyTest, ANodeThatRefusesConnectionsIsADialError) {
  const uint16_t port = node_->port();
  node_.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    node_object_ = NodeObject("node-1", port, node_ca_.certificate_pem);
  }
  auto res = Get(kExec, true);
  EXPECT_EQ(res.result_int(), 500);
  EXPECT_THAT(res.body(), HasSubstr("error dialing backend: dial tcp 127.0.0.1:" + std::to_string(port) +
                                           ": connect: Connection refused"));
  EXPECT_EQ(proxy_->open_sessions(), 0u);
}

}  // namespace
}  // namespace berth::apiserver
