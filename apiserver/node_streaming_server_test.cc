// NodeStreamingServer over TLS: who is served (401, 403 with the kubelet's text,
// the API server's kubelet client certificate), what is served (log text, an
// exec WebSocket, 404 for another node's pod and for any other path), with a
// fake executor and log source.
#include "apiserver/node_streaming_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

// GCC 12 + Boost 1.74: awaitable.hpp uses std::exchange without including <utility>.
// clang-format off
#include <utility>
// clang-format on

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <unistd.h>

#include "apiserver/node_proxy.h"
#include "apiserver/testing/fake_executor.h"
#include "client/http_client.h"
#include "pki/certificates.h"

namespace berth::apiserver {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using ::testing::HasSubstr;

pki::TimePoint Now() { return std::chrono::system_clock::now(); }

pki::CertificateAndKey ClientCert(const pki::CertificateAndKey& ca, const std::string& cn) {
  pki::CertificateRequest req;
  req.common_name = cn;
  req.client_auth = true;
  auto issued = pki::IssueCertificate(ca, req, Now());
  EXPECT_TRUE(issued.ok()) << issued.status();
  return *issued;
}

using testing::FakeExecutor;

class FakeLogs : public client::PodLogSource {
 public:
  StatusOr<client::PodLogChunk> ReadPodLogChunk(const std::string& ns, const std::string& name,
                                                const client::PodLogOptions& options, const client::PodLogCursor* from,
                                                size_t) override {
    client::PodLogChunk chunk;
    chunk.at_end = chunk.run_ended = true;
    if (from == nullptr) chunk.text = "log of " + ns + "/" + name + "/" + options.container + "\n";
    return chunk;
  }
};

api::Object Pod(const std::string& name, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"uid", "uid-" + name}}},
          {"spec", {{"nodeName", node}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}},
          {"status", {{"phase", "Running"}}}};
}

class NodeStreamingServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ca_ = *pki::CreateCertificateAuthority("cluster-ca", Now());
    other_ca_ = *pki::CreateCertificateAuthority("other-ca", Now());
    auto node_pki = pki::LoadOrCreateKubeletServingPki(Dir(), "node-a", {"127.0.0.1"}, Now());
    ASSERT_TRUE(node_pki.ok()) << node_pki.status();
    node_ca_ = node_pki->ca;
    pods_["p"] = std::make_shared<const api::Object>(Pod("p", "node-a"));
    pods_["elsewhere"] = std::make_shared<const api::Object>(Pod("elsewhere", "node-b"));

    NodeStreamingServerOptions options;
    options.node_name = "node-a";
    options.port = 0;
    options.tls = {node_pki->serving.certificate_pem, node_pki->serving.private_key_pem, cluster_ca_.certificate_pem};
    server_ = std::make_unique<NodeStreamingServer>(options, clock_);
    ASSERT_TRUE(server_->Start().ok());
    server_->Attach(
        [this](const std::string& ns, const std::string& name) -> StatusOr<std::shared_ptr<const api::Object>> {
          auto it = pods_.find(name);
          if (ns != "default" || it == pods_.end()) return NotFoundError("pods \"" + name + "\" not found");
          return it->second;
        },
        &executor_, &logs_);
  }
  void TearDown() override {
    server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  std::string Dir() {
    char tmpl[] = "/tmp/node-streaming-XXXXXX";
    EXPECT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    return dir_;
  }

  // GET `target` as the holder of `cert` (none: nullptr), trusting the node's CA.
  client::RawResponse Get(const std::string& target, const pki::CertificateAndKey* cert,
                          const std::string& method = "GET") {
    client::RestConfig cfg;
    cfg.server = "https://127.0.0.1:" + std::to_string(server_->port());
    cfg.url = *client::ParseServerUrl(cfg.server);
    cfg.certificate_authority_pem = node_ca_.certificate_pem;
    if (cert) {
      cfg.client_certificate_pem = cert->certificate_pem;
      cfg.client_key_pem = cert->private_key_pem;
    }
    client::HttpClient c(cfg);
    client::RawRequest r;
    r.method = method;
    r.target = target;
    auto resp = c.Do(r);
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp.ok() ? *resp : client::RawResponse{};
  }
  static nlohmann::json Json(const client::RawResponse& r) { return nlohmann::json::parse(r.body, nullptr, false); }

  FakeClock clock_;
  pki::CertificateAndKey cluster_ca_, other_ca_, node_ca_;
  std::map<std::string, std::shared_ptr<const api::Object>> pods_;
  FakeExecutor executor_;
  FakeLogs logs_;
  std::string dir_;
  std::unique_ptr<NodeStreamingServer> server_;
};

const char kLog[] = "/api/v1/namespaces/default/pods/p/log?container=c";

TEST_F(NodeStreamingServerTest, WithoutAVerifiedClientCertificateIsUnauthorized) {
  client::RawResponse none = Get(kLog, nullptr);
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(Json(none)["reason"], "Unauthorized");
  EXPECT_EQ(Json(none)["message"], "Unauthorized");
  // The right name, signed by a CA the node does not trust.
  const pki::CertificateAndKey foreign = ClientCert(other_ca_, pki::kKubeletClientCommonName);
  client::RawResponse unverified = Get(kLog, &foreign);
  EXPECT_EQ(unverified.status, 401);
  EXPECT_EQ(Json(unverified)["message"], "Unauthorized");
}

TEST_F(NodeStreamingServerTest, AnotherUserIsForbiddenWithTheKubeletsText) {
  const pki::CertificateAndKey alice = ClientCert(cluster_ca_, "alice");
  client::RawResponse get = Get(kLog, &alice);
  EXPECT_EQ(get.status, 403);
  EXPECT_EQ(Json(get)["reason"], "Forbidden");
  EXPECT_EQ(Json(get)["message"], "Forbidden (user=alice, verb=get, resource=nodes, subresource=proxy)");
  client::RawResponse post = Get("/api/v1/namespaces/default/pods/p/exec?command=ls&stdout=true", &alice, "POST");
  EXPECT_EQ(post.status, 403);
  EXPECT_EQ(Json(post)["message"], "Forbidden (user=alice, verb=create, resource=nodes, subresource=proxy)");
}

TEST_F(NodeStreamingServerTest, ServesTheApiServerTheLogOfItsPod) {
  const pki::CertificateAndKey apiserver = ClientCert(cluster_ca_, pki::kKubeletClientCommonName);
  client::RawResponse log = Get(kLog, &apiserver);
  EXPECT_EQ(log.status, 200);
  EXPECT_EQ(log.content_type, "text/plain");
  EXPECT_EQ(log.body, "log of default/p/c\n");
  // The API server's own answers: a log is read with GET only.
  client::RawResponse put = Get(kLog, &apiserver, "PUT");
  EXPECT_EQ(put.status, 405);
  EXPECT_EQ(Json(put)["message"], "the server does not allow this method on the requested resource");
}

TEST_F(NodeStreamingServerTest, AnotherNodesPodAndOtherPathsAreNotFound) {
  const pki::CertificateAndKey apiserver = ClientCert(cluster_ca_, pki::kKubeletClientCommonName);
  for (const std::string pod : {"elsewhere", "missing"}) {
    client::RawResponse r = Get("/api/v1/namespaces/default/pods/" + pod + "/log", &apiserver);
    EXPECT_EQ(r.status, 404) << pod;
    EXPECT_EQ(Json(r)["message"], "pods \"" + pod + "\" not found");
    EXPECT_EQ(Json(r)["details"]["name"], pod);
    EXPECT_EQ(Json(r)["details"]["kind"], "pods");
  }
  for (const std::string path : {"/api/v1/namespaces/default/pods/p", "/api/v1/namespaces/default/pods",
                                 "/api/v1/namespaces/default/pods/p/status", "/api/v1/nodes/node-a/proxy",
                                 "/apis/apps/v1/namespaces/default/deployments/d/log", "/healthz",
                                 "/containerLogs/default/p/c"}) {
    client::RawResponse r = Get(path, &apiserver);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(Json(r)["message"], "the server could not find the requested resource") << path;
  }
}

TEST_F(NodeStreamingServerTest, BeforeAttachAndAfterStopNoPodIsServed) {
  NodeStreamingServerOptions options;
  options.node_name = "node-a";
  options.port = 0;
  NodeStreamingServer bare(options, clock_);
  EXPECT_EQ(bare.Start().code(), Code::kInvalid);  // no TLS material
  HttpRequest req;
  req.method = "GET";
  req.target = kLog;
  req.client_certificate = ClientCertificate{true, "", pki::kKubeletClientCommonName, {}};
  auto answer = [&req](NodeStreamingServer& server) {
    HandlerResult r = server.Handle(req);
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(r));
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
  };
  EXPECT_EQ(answer(bare).status, 404);
  EXPECT_THAT(answer(bare).body, HasSubstr(R"(pods \"p\" not found)"));
  EXPECT_EQ(answer(*server_).status, 200);
  server_->Stop();
  EXPECT_EQ(answer(*server_).status, 404);
  EXPECT_THAT(answer(*server_).body, HasSubstr(R"(pods \"p\" not found)"));
}

// kubectl exec through the API server: a WebSocket upgrade with the v5 subprotocol,
// over TLS with the API server's client certificate, verifying the node's name.
TEST_F(NodeStreamingServerTest, ExecUpgradesToAWebSocketForTheApiServer) {
  const pki::CertificateAndKey apiserver = ClientCert(cluster_ca_, pki::kKubeletClientCommonName);
  net::io_context io;
  net::ssl::context tls(net::ssl::context::tls_client);
  tls.add_certificate_authority(net::buffer(node_ca_.certificate_pem));
  tls.use_certificate_chain(net::buffer(apiserver.certificate_pem));
  tls.use_private_key(net::buffer(apiserver.private_key_pem), net::ssl::context::pem);
  tls.set_verify_mode(net::ssl::verify_peer);
  websocket::stream<net::ssl::stream<tcp::socket>> ws(io, tls);
  ws.next_layer().set_verify_callback(net::ssl::rfc2818_verification("node-a"));
  tcp::resolver resolver(io);
  net::connect(beast::get_lowest_layer(ws), resolver.resolve("127.0.0.1", std::to_string(server_->port())));
  ws.next_layer().handshake(net::ssl::stream_base::client);
  ws.set_option(websocket::stream_base::decorator([](websocket::request_type& req) {
    req.set(beast::http::field::sec_websocket_protocol, "v5.channel.k8s.io, v4.channel.k8s.io");
  }));
  websocket::response_type response;
  ws.handshake(response, "node-a", "/api/v1/namespaces/default/pods/p/exec?command=echo&command=hi&container=c&stdout=true");
  EXPECT_EQ(response.result_int(), 101);
  EXPECT_EQ(response[beast::http::field::sec_websocket_protocol], "v5.channel.k8s.io");
  std::vector<std::string> messages;
  beast::error_code ec;
  while (true) {
    beast::flat_buffer buffer;
    ws.read(buffer, ec);
    if (ec) break;
    messages.push_back(beast::buffers_to_string(buffer.data()));
  }
  EXPECT_EQ(ec, websocket::error::closed);
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[0], std::string("\x01") + "default/p/c ran: echo hi\n");
  EXPECT_EQ(messages[1], std::string("\x03") + R"({"metadata":{},"status":"Success"})");
}

// The contract with the API server's half (node_proxy.h): a NodeProxy with the kubelet
// client certificate, given the Node as the agent publishes it (address, port, CA), reaches
// this server, verifying its certificate for the node's name, and relays its answers.
TEST_F(NodeStreamingServerTest, TheApiServersNodeProxyReachesIt) {
  const pki::CertificateAndKey apiserver = ClientCert(cluster_ca_, pki::kKubeletClientCommonName);
  NodeProxyOptions proxy_options;
  proxy_options.client_certificate_pem = apiserver.certificate_pem;
  proxy_options.client_key_pem = apiserver.private_key_pem;
  NodeProxy proxy(proxy_options);
  const api::Object node = {
      {"metadata", {{"name", "node-a"}, {"annotations", {{kKubeletServingCaAnnotation, node_ca_.certificate_pem}}}}},
      {"status",
       {{"addresses", {{{"type", "InternalIP"}, {"address", "127.0.0.1"}}}},
        {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", server_->port()}}}}}}}};
  HttpServer front(HttpServerOptions{}, [&](const HttpRequest& req) { return proxy.Forward(req, node); });
  ASSERT_TRUE(front.Start().ok());
  client::RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(front.port());
  cfg.url = *client::ParseServerUrl(cfg.server);
  client::HttpClient c(cfg);
  auto get = [&c](const std::string& target) {
    client::RawRequest r;
    r.target = target;
    auto resp = c.Do(r);
    EXPECT_TRUE(resp.ok()) << resp.status();
    return resp.ok() ? *resp : client::RawResponse{};
  };
  client::RawResponse log = get(kLog);
  EXPECT_EQ(log.status, 200);
  EXPECT_EQ(log.body, "log of default/p/c\n");
  client::RawResponse elsewhere = get("/api/v1/namespaces/default/pods/elsewhere/log");
  EXPECT_EQ(elsewhere.status, 404);
  EXPECT_EQ(Json(elsewhere)["message"], "pods \"elsewhere\" not found");
  proxy.Stop();
  front.Stop();
}

}  // namespace
}  // namespace berth::apiserver
