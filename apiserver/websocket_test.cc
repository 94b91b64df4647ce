// HttpServer's WebSocket upgrade (WebSocketUpgrade), driven by Boost.Beast's
// WebSocket client.
#include <gtest/gtest.h>

// GCC 12 + Boost 1.74: awaitable.hpp uses std::exchange without including <utility>.
// clang-format off
#include <utility>
// clang-format on

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "apiserver/http_server.h"
#include "apiserver/testing/websocket_client.h"

namespace berth::apiserver {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

// A server whose WebSocket echoes each message with "echo:" in front, closes
// on "bye", pauses reading on "pause" (until "resume" is asked of it from
// outside) and records when its session ends.
struct EchoServer {
  EchoServer() {
    server = std::make_unique<HttpServer>(HttpServerOptions{}, [this](const HttpRequest& req) -> HandlerResult {
      if (!IsWebSocketUpgrade(req)) {
        HttpResponse r;
        r.status = 400;
        r.body = "not an upgrade";
        return r;
      }
      WebSocketUpgrade up;
      up.protocol = "v5.channel.k8s.io";
      up.start = [this](std::shared_ptr<WebSocketSession> ws) {
        {
          std::lock_guard<std::mutex> lock(mu);
          session = ws;
        }
        ws->OnDone([this] {
          std::lock_guard<std::mutex> lock(mu);
          ended = true;
          cv.notify_all();
        });
        return [ws](std::string m) {
          if (m == "bye") {
            ws->Write("last words");
            ws->Close();
            return true;
          }
          ws->Write("echo:" + m);
          return m != "pause";
        };
      };
      return up;
    });
    EXPECT_TRUE(server->Start().ok());
  }
  bool WaitEnded() {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(20), [this] { return ended; });  // a bound on hangs only
  }
  std::unique_ptr<HttpServer> server;
  std::mutex mu;
  std::condition_variable cv;
  std::shared_ptr<WebSocketSession> session;
  bool ended = false;
};

// The exec request kubectl sends, offering `protocols`.
struct Client : testing::WebSocketClient {
  explicit Client(uint16_t port, const std::string& protocols = "v5.channel.k8s.io, v4.channel.k8s.io")
      : WebSocketClient(port, "/api/v1/namespaces/default/pods/p/exec?command=true&stdout=true", protocols) {}
};

TEST(WebSocketTest, UpgradesWithTheChosenSubprotocolAndExchangesBinaryMessages) {
  EchoServer s;
  Client c(s.server->port());
  EXPECT_EQ(c.response.result_int(), 101);
  EXPECT_EQ(c.response[beast::http::field::sec_websocket_protocol], "v5.channel.k8s.io");
  c.ws.write(net::buffer(std::string("\x00hi", 3)));
  EXPECT_EQ(c.Read(), std::string("echo:\x00hi", 8));
  EXPECT_TRUE(c.ws.got_binary());
  c.ws.write(net::buffer(std::string("again")));
  EXPECT_EQ(c.Read(), "echo:again");
}

TEST(WebSocketTest, CloseSendsWhatIsQueuedThenANormalClose) {
  EchoServer s;
  Client c(s.server->port());
  c.ws.write(net::buffer(std::string("bye")));
  EXPECT_EQ(c.Read(), "last words");
  beast::flat_buffer buffer;
  beast::error_code ec;
  c.ws.read(buffer, ec);
  EXPECT_EQ(ec, websocket::error::closed);
  EXPECT_EQ(c.ws.reason().code, websocket::close_code::normal);
  EXPECT_TRUE(s.WaitEnded());
}

TEST(WebSocketTest, AClientThatGoesAwayEndsTheSession) {
  EchoServer s;
  {
    Client c(s.server->port());
    c.ws.write(net::buffer(std::string("x")));
    EXPECT_EQ(c.Read(), "echo:x");
    c.ws.next_layer().close();
  }
  EXPECT_TRUE(s.WaitEnded());
  EXPECT_TRUE(s.session->Done());
  EXPECT_FALSE(s.session->Write("too late"));
}

TEST(WebSocketTest, AReceiverThatPausesGetsNothingUntilItResumes) {
  EchoServer s;
  Client c(s.server->port());
  c.ws.write(net::buffer(std::string("pause")));
  EXPECT_EQ(c.Read(), "echo:pause");
  c.ws.write(net::buffer(std::string("held")));
  // Nothing is read while paused: the session's output stays what it was.
  s.session->Write("marker");
  EXPECT_EQ(c.Read(), "marker");
  s.session->ResumeReading();
  EXPECT_EQ(c.Read(), "echo:held");
}

TEST(WebSocketTest, StoppingTheServerClosesTheSession) {
  EchoServer s;
  Client c(s.server->port());
  c.ws.write(net::buffer(std::string("x")));
  EXPECT_EQ(c.Read(), "echo:x");
  std::thread stopper([&] { s.server->Stop(); });
  beast::flat_buffer buffer;
  beast::error_code ec;
  c.ws.read(buffer, ec);
  EXPECT_TRUE(ec);
  stopper.join();
  EXPECT_TRUE(s.WaitEnded());
}

TEST(WebSocketTest, IsWebSocketUpgradeReadsUpgradeAndConnectionTokens) {
  HttpRequest r;
  r.headers = {{"upgrade", "WebSocket"}, {"Connection", "keep-alive, Upgrade"}};
  EXPECT_TRUE(IsWebSocketUpgrade(r));
  r.headers = {{"Upgrade", "SPDY/3.1"}, {"Connection", "Upgrade"}};
  EXPECT_FALSE(IsWebSocketUpgrade(r));
  r.headers = {{"Upgrade", "websocket"}, {"Connection", "close"}};
  EXPECT_FALSE(IsWebSocketUpgrade(r));
}

}  // namespace
}  // namespace berth::apiserver
