// PodPortForwardServer: the answers before the upgrade, and sessions driven over a real
// WebSocket (Boost.Beast's client) with SPDY frames, as kubectl's tunneling dialer sends them.
#include "apiserver/pod_portforward.h"

#include <gtest/gtest.h>

// GCC 12 + Boost 1.74: awaitable.hpp uses std::exchange without including <utility>.
// clang-format off
#include <utility>
// clang-format on

#include <arpa/inet.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "apiserver/spdy.h"
#include "core/clock.h"
#include "store/memory_store.h"

namespace berth::apiserver {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using spdy::Frame;
using spdy::FrameType;

// Dials 127.0.0.1:port for pod default/p, as the node agent does.
class LoopbackExecutor : public client::ContainerExecutor {
 public:
  StatusOr<std::unique_ptr<client::ExecProcess>> StartExec(const std::string&, const std::string&,
                                                           const client::ExecOptions&) override {
    return InternalError("not used");
  }
  StatusOr<int> ConnectPort(const std::string& ns, const std::string& name, uint16_t port) override {
    if (ns != "default" || name != "p") return NotFoundError("pods \"" + name + "\" not found");
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd);
      return UnavailableError("dial tcp4 127.0.0.1:" + std::to_string(port) + ": connect: connection refused");
    }
    return fd;
  }
};

// A pod's server: answers each connection's request with "you said: <request>", then closes.
struct PodServer {
  PodServer() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    listen(fd, 8);
    thread = std::thread([this] {
      while (true) {
        const int c = accept(fd, nullptr, nullptr);
        if (c < 0) return;
        std::string got;
        char buf[1024];
        ssize_t n;
        while ((n = read(c, buf, sizeof buf)) > 0) got.append(buf, n);  // until the client's FIN
        const std::string reply = "you said: " + got;
        (void)!write(c, reply.data(), reply.size());
        close(c);
      }
    });
  }
  ~PodServer() {
    shutdown(fd, SHUT_RDWR);
    close(fd);
    thread.join();
  }
  int fd = -1;
  uint16_t port = 0;
  std::thread thread;
};

// A port nothing listens on (bound, never listening).
uint16_t ClosedPort(int* holder) {
  *holder = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(*holder, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(*holder, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

class PodPortForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(store_
                    .Create({"", "pods"}, nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod",
                      "metadata":{"name":"p","namespace":"default","uid":"u1"},"spec":{"nodeName":"n1"}})"))
                    .ok());
    ASSERT_TRUE(store_
                    .Create({"", "pods"}, nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod",
                      "metadata":{"name":"pending","namespace":"default","uid":"u2"},"spec":{}})"))
                    .ok());
    ASSERT_TRUE(store_
                    .Create({"", "pods"}, nlohmann::json::parse(R"({"apiVersion":"v1","kind":"Pod",
                      "metadata":{"name":"remote","namespace":"default","uid":"u3"},"spec":{"nodeName":"n2"}})"))
                    .ok());
    http_ = std::make_unique<HttpServer>(HttpServerOptions{}, [this](const HttpRequest& req) -> HandlerResult {
      const std::size_t q = req.target.find('?');
      return server_.Serve(req, "default", "p",
                           QueryParams::Parse(q == std::string::npos ? "" : req.target.substr(q + 1)));
    });
    ASSERT_TRUE(http_->Start().ok());
  }
  void TearDown() override {
    http_->Stop();
    server_.Stop();
  }

  HttpResponse Answer(const std::string& pod, HttpHeaders headers, const std::string& query = "") {
    HttpRequest req;
    req.method = "GET";
    req.target = "/api/v1/namespaces/default/pods/" + pod + "/portforward";
    req.headers = std::move(headers);
    HandlerResult r = server_.Serve(req, "default", pod, QueryParams::Parse(query));
    EXPECT_TRUE(std::holds_alternative<HttpResponse>(r));
    return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
  }

  FakeClock clock_;
  store::MemoryStore store_{clock_};
  LoopbackExecutor executor_;
  PodPortForwardServer server_{StorePodLookup(store_), [this](const std::string& node) -> client::ContainerExecutor* {
                                 return node == "n1" ? &executor_ : nullptr;
                               }};
  std::unique_ptr<HttpServer> http_;
};

const HttpHeaders kUpgrade = {{"Upgrade", "websocket"}, {"Connection", "Upgrade"},
                              {"Sec-WebSocket-Protocol", "SPDY/3.1+portforward.k8s.io"}};

TEST_F(PodPortForwardTest, AnswersBeforeTheUpgrade) {
  HttpResponse r = Answer("missing", kUpgrade);
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("pods \\\"missing\\\" not found"), std::string::npos) << r.body;
  r = Answer("pending", kUpgrade);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("pod pending does not have a host assigned"), std::string::npos) << r.body;
  r = Answer("remote", kUpgrade);
  EXPECT_EQ(r.status, 503);
  r = Answer("p", {{"X-Stream-Protocol-Version", "portforward.k8s.io"}, {"Upgrade", "SPDY/3.1"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("not SPDY"), std::string::npos) << r.body;
  r = Answer("p", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"}, {"Sec-WebSocket-Protocol", "v5.channel.k8s.io"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("no tunneling spdy protocols provided"), std::string::npos) << r.body;
  r = Answer("p", kUpgrade, "ports=8080&ports=70000");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("ports[1]: Invalid value: \\\"70000\\\""), std::string::npos) << r.body;
}

// kubectl's side: the WebSocket with the tunneling subprotocol, and a SPDY client in it.
struct Kubectl {
  explicit Kubectl(uint16_t port) : ws(io) {
    tcp::resolver resolver(io);
    net::connect(ws.next_layer(), resolver.resolve("127.0.0.1", std::to_string(port)));
    ws.set_option(websocket::stream_base::decorator([](websocket::request_type& req) {
      req.set(beast::http::field::sec_websocket_protocol, "SPDY/3.1+portforward.k8s.io");
    }));
    ws.handshake(response, "127.0.0.1", "/api/v1/namespaces/default/pods/p/portforward");
    ws.binary(true);
  }
  void Send(const std::string& bytes) { ws.write(net::buffer(bytes)); }
  void Open(uint32_t id, const std::string& type, const std::string& port, const std::string& request) {
    Send(enc.Encode({.type = FrameType::kSynStream, .stream_id = id,
                     .headers = {{"streamtype", type}, {"port", port}, {"requestid", request}}}));
  }
  // Frames until `done` says so; false when the connection ended first.
  bool ReadUntil(const std::function<bool(const Frame&)>& done) {
    while (true) {
      while (true) {
        auto f = dec.Next();
        if (!f.ok()) return false;
        if (!f->has_value()) break;
        frames.push_back(**f);
        if (done(frames.back())) return true;
      }
      beast::flat_buffer buffer;
      beast::error_code ec;
      ws.read(buffer, ec);
      if (ec) return false;
      dec.Append(beast::buffers_to_string(buffer.data()));
    }
  }
  std::string DataOf(uint32_t id) const {
    std::string s;
    for (const Frame& f : frames) {
      if (f.type == FrameType::kData && f.stream_id == id) s += f.data;
    }
    return s;
  }
  static bool FinOf(const Frame& f, uint32_t id) {
    return f.type == FrameType::kData && f.stream_id == id && (f.flags & spdy::kFlagFin);
  }
  net::io_context io;
  websocket::stream<tcp::socket> ws;
  websocket::response_type response;
  spdy::FrameEncoder enc;
  spdy::FrameDecoder dec;
  std::vector<Frame> frames;
};

TEST_F(PodPortForwardTest, ForwardsAConnectionBothWays) {
  PodServer pod;
  Kubectl k(http_->port());
  EXPECT_EQ(k.response.result_int(), 101);
  EXPECT_EQ(k.response[beast::http::field::sec_websocket_protocol], "SPDY/3.1+portforward.k8s.io");
  const std::string port = std::to_string(pod.port);
  k.Open(1, "error", port, "0");
  k.Send(k.enc.Encode({.type = FrameType::kData, .flags = spdy::kFlagFin, .stream_id = 1}));  // kubectl closes it
  k.Open(3, "data", port, "0");
  // The bytes of one DATA frame cut across two WebSocket messages.
  const std::string data = k.enc.Encode({.type = FrameType::kData, .flags = spdy::kFlagFin, .stream_id = 3,
                                         .data = "GET / HTTP/1.0\r\n\r\n"});
  k.Send(data.substr(0, 5));
  k.Send(data.substr(5));
  // The kubelet closes the error stream, then the data stream.
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return Kubectl::FinOf(f, 1); }));
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return Kubectl::FinOf(f, 3); }));
  EXPECT_EQ(k.frames[0].type, FrameType::kSynReply);
  EXPECT_EQ(k.frames[0].stream_id, 1u);
  EXPECT_EQ(k.frames[1].type, FrameType::kSynReply);
  EXPECT_EQ(k.frames[1].stream_id, 3u);
  EXPECT_EQ(k.DataOf(3), "you said: GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(k.DataOf(1), "");  // no error
  // A second connection on the same session.
  k.Open(5, "error", port, "1");
  k.Open(7, "data", port, "1");
  k.Send(k.enc.Encode({.type = FrameType::kData, .flags = spdy::kFlagFin, .stream_id = 7, .data = "again"}));
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return Kubectl::FinOf(f, 5); }));
  EXPECT_EQ(k.DataOf(7), "you said: again");
  // Pings are echoed.
  k.Send(k.enc.Encode({.type = FrameType::kPing, .value = 1}));
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return f.type == FrameType::kPing; }));
}

TEST_F(PodPortForwardTest, ErrorsGoToTheErrorStream) {
  int holder = -1;
  const uint16_t closed = ClosedPort(&holder);
  Kubectl k(http_->port());
  k.Open(1, "error", std::to_string(closed), "0");
  k.Open(3, "data", std::to_string(closed), "0");
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return Kubectl::FinOf(f, 1); }));
  EXPECT_EQ(k.DataOf(1), "error forwarding port " + std::to_string(closed) +
                             " to pod default/p, uid u1: dial tcp4 127.0.0.1:" + std::to_string(closed) +
                             ": connect: connection refused");
  k.Open(5, "error", "0", "1");
  k.Open(7, "data", "0", "1");
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return Kubectl::FinOf(f, 5); }));
  EXPECT_EQ(k.DataOf(5), "\"port\" header \"0\" is invalid: must be an integer in 1-65535");
  // A stream without a requestid is reset.
  k.Send(k.enc.Encode({.type = FrameType::kSynStream, .stream_id = 9, .headers = {{"streamtype", "data"}}}));
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return f.type == FrameType::kRstStream; }));
  EXPECT_EQ(k.frames.back().stream_id, 9u);
  EXPECT_EQ(k.frames.back().status, spdy::kProtocolError);
  close(holder);
}

TEST_F(PodPortForwardTest, MalformedSpdyEndsTheSessionWithGoAway) {
  Kubectl k(http_->port());
  k.Send(std::string("\x80\x02\x00\x06\x00\x00\x00\x04\x00\x00\x00\x01", 12));
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return f.type == FrameType::kGoAway; }));
  EXPECT_EQ(k.frames.back().status, spdy::kGoAwayProtocolError);
  EXPECT_FALSE(k.ReadUntil([](const Frame&) { return false; }));  // then the connection closes
}

TEST_F(PodPortForwardTest, DeletingThePodEndsTheSession) {
  Kubectl k(http_->port());
  k.Send(k.enc.Encode({.type = FrameType::kPing, .value = 1}));
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return f.type == FrameType::kPing; }));
  EXPECT_EQ(server_.open_sessions(), 1u);
  ASSERT_TRUE(store_.Delete({{"", "pods"}, "default", "p"}).ok());
  ASSERT_TRUE(k.ReadUntil([](const Frame& f) { return f.type == FrameType::kGoAway; }));
  EXPECT_EQ(k.frames.back().status, spdy::kGoAwayOk);
  EXPECT_FALSE(k.ReadUntil([](const Frame&) { return false; }));
}

}  // namespace
}  // namespace berth::apiserver
