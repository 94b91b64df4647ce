// The transport's bounds (http_server.h): stalled streams, idle and slow
// clients, the connection cap, the write deadline. Driven over loopback with
// raw sockets, which can stop reading or send half a request as no HTTP
// client library would.
#include "apiserver/http_server.h"

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <fstream>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include "apiserver/testing/raw_socket.h"
#include "apiserver/testing/test_api_server.h"
#include "core/logging.h"

namespace berth::apiserver {
namespace {

using std::chrono::milliseconds;
using testing::Connect;
using testing::Receive;
using testing::SendAll;

// Polls `cond` for up to 10 s.
template <typename Cond>
bool Eventually(Cond cond) {
  for (int i = 0; i < 1000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return cond();
}

const char kGet[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

// "127.0.0.1:<port>" of the client end of `fd`: the server's name for it.
std::string LocalAddress(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

// Captures what the "apiserver" logger prints while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)) {
    Logger("apiserver")->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = Logger("apiserver")->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  // The lines containing `text`.
  std::vector<std::string> Lines(const std::string& text) const {
    std::vector<std::string> out;
    for (auto& line : sink_->last_formatted()) {
      if (line.find(text) != std::string::npos) out.push_back(line);
    }
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

// Counts the watch events of `type` ("ADDED") in what `fd` receives until it
// closes or `stop` is set.
void CountEvents(int fd, const std::string& type, std::atomic<int>* received, std::atomic<bool>* closed) {
  const std::string needle = "\"type\":\"" + type + "\"";
  std::string tail;
  char buf[65536];
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    tail.append(buf, static_cast<size_t>(n));
    size_t pos;
    while ((pos = tail.find(needle)) != std::string::npos) {
      (*received)++;
      tail.erase(0, pos + 1);
    }
    if (tail.size() > 64) tail.erase(0, tail.size() - 64);
  }
  *closed = true;
}

// An HttpServer answering every request 200 "ok" with `options`.
struct OkServer {
  explicit OkServer(HttpServerOptions options)
      : server(std::move(options), [](const HttpRequest&) -> HandlerResult {
          HttpResponse r;
          r.body = "ok";
          return r;
        }) {
    EXPECT_TRUE(server.Start().ok());
  }
  HttpServer server;
};

// `stalled` watchers of ConfigMaps that read their response header and then nothing, and one
// healthy watcher that reads every event, while 400 ConfigMaps of 32 KiB are created (12.8 MB
// per watcher, more than loopback buffers hold). Checks that the healthy watcher got every
// event and was not closed, that every stalled one was closed without its final chunk and
// logged once with its address and `reason`; returns the transport's counters.
HttpServerStats StalledWatchersAreClosed(const HttpServerOptions& http, int stalled_count, const std::string& reason) {
  constexpr int kEvents = 400;
  ApiServerOptions options = testing::WithoutGarbageCollector();
  options.http = http;
  LogCapture log;
  testing::TestApiServer t(options);
  EXPECT_TRUE(t.server.Start().ok());
  const std::string watch = "GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n";

  bool closed = false;
  std::vector<int> stalled;
  for (int i = 0; i < stalled_count; ++i) {
    stalled.push_back(Connect(t.server.port(), 4096));
    SendAll(stalled.back(), watch);
    // The stalled client reads the response header, then never reads again.
    EXPECT_NE(Receive(stalled.back(), milliseconds(10000), &closed, "\r\n\r\n").find("200 OK"), std::string::npos);
  }
  int healthy = Connect(t.server.port());
  SendAll(healthy, watch);
  EXPECT_NE(Receive(healthy, milliseconds(10000), &closed, "\r\n\r\n").find("200 OK"), std::string::npos);
  std::atomic<int> received{0};
  std::atomic<bool> healthy_closed{false};
  std::thread reader([&] { CountEvents(healthy, "ADDED", &received, &healthy_closed); });

  const std::string data(32 * 1024, 'x');
  for (int i = 0; i < kEvents; ++i) {
    std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-)" + std::to_string(i) +
                       R"("},"data":{"d":")" + data + R"("}})";
    HttpResponse r = testing::Respond(t.server, "POST", "/api/v1/namespaces/default/configmaps", body);
    EXPECT_EQ(r.status, 201) << r.body;
    // The healthy watcher keeps up: each event reaches it before the next write.
    if (!Eventually([&] { return received.load() >= i + 1; })) {
      ADD_FAILURE() << "event " << i;
      break;
    }
  }
  EXPECT_EQ(received.load(), kEvents);
  EXPECT_FALSE(healthy_closed.load());

  const HttpServerStats stats = t.server.TransportStats();
  EXPECT_EQ(stats.streams_closed_unresponsive, static_cast<uint64_t>(stalled_count));
  for (int fd : stalled) {
    // Logged with the stalled client's address.
    EXPECT_EQ(log.Lines("closing a stream whose client does not read: " + LocalAddress(fd) + ": ").size(), 1u);
    // The stalled connection was closed: reading it now finds what the kernel held, then
    // the end, without the final chunk of a finished response.
    std::string rest = Receive(fd, milliseconds(10000), &closed);
    EXPECT_TRUE(closed);
    EXPECT_FALSE(rest.ends_with("0\r\n\r\n"));
    close(fd);
  }
  EXPECT_EQ(log.Lines(reason).size(), static_cast<size_t>(stalled_count)) << reason;

  shutdown(healthy, SHUT_RDWR);
  reader.join();
  close(healthy);
  t.server.Stop();
  return stats;
}

TEST(HttpServerLimitsTest, AStalledWatcherIsClosedWhileAHealthyWatcherGetsEveryEvent) {
  constexpr size_t kBound = 256 * 1024;
  HttpServerOptions http;
  http.max_stream_buffer_bytes = kBound;
  const HttpServerStats stats = StalledWatchersAreClosed(http, 1, "limit 262144");
  EXPECT_LE(stats.stream_queued_bytes_peak, kBound);
  EXPECT_LE(stats.stream_queued_bytes, kBound);
}

// Streams each within their own bound are closed when together they hold more than the
// server's total, whichever stalled stream writes next; a reader that keeps up is not.
TEST(HttpServerLimitsTest, StalledWatchersAreClosedWhenTogetherTheyPassTheServersTotal) {
  constexpr size_t kTotal = 512 * 1024;
  HttpServerOptions http;
  http.max_stream_buffer_bytes = 64 << 20;  // never reached
  http.max_total_stream_buffer_bytes = kTotal;
  const HttpServerStats stats = StalledWatchersAreClosed(http, 3, "the server's streams hold");
  EXPECT_LE(stats.stream_queued_bytes, kTotal);
}

TEST(HttpServerLimitsTest, AnIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  HttpServerOptions options;
  options.idle_timeout = milliseconds(200);
  OkServer s(options);
  int fd = Connect(s.server.port());
  SendAll(fd, kGet);
  bool closed = false;
  std::string first = Receive(fd, milliseconds(5000), &closed, "ok");
  ASSERT_NE(first.find("200 OK"), std::string::npos);
  ASSERT_FALSE(closed);
  // Kept alive: a second request on the same connection is served.
  SendAll(fd, kGet);
  ASSERT_NE(Receive(fd, milliseconds(5000), &closed, "ok").find("200 OK"), std::string::npos);
  // Then nothing: the server closes the connection (the default waits 90 s).
  std::string rest = Receive(fd, milliseconds(5000), &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(rest, "");
  EXPECT_EQ(s.server.Stats().connections_timed_out, 1u);
  close(fd);
}

// A header name or value longer than Beast's fields hold (65,535 bytes), in any
// header, before any authentication: 431, the connection ends, the server keeps
// serving.
TEST(HttpServerLimitsTest, AHeaderFieldTooLargeIs431AndTheServerServesOn) {
  OkServer s(HttpServerOptions{});
  const std::string big(70'000, 'a');
  for (const std::string& request :
       {"GET /x HTTP/1.1\r\nHost: x\r\nX-A: " + big + "\r\n\r\n",
        "GET /x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + big + "\r\n\r\n",
        "GET /x HTTP/1.1\r\nHost: x\r\n" + big + ": v\r\n\r\n"}) {
    int fd = Connect(s.server.port());
    SendAll(fd, request);
    bool closed = false;
    std::string got = Receive(fd, milliseconds(5000), &closed);
    EXPECT_NE(got.find("HTTP/1.1 431 Request Header Fields Too Large"), std::string::npos) << got.substr(0, 200);
    EXPECT_TRUE(closed);
    close(fd);
  }
  int fd = Connect(s.server.port());
  SendAll(fd, kGet);
  bool closed = false;
  EXPECT_NE(Receive(fd, milliseconds(5000), &closed, "ok").find("200 OK"), std::string::npos);
  close(fd);
}

// Sends `partial` (a request that never completes) to a server with `options`: the
// server closes the connection without an answer, counted as a timeout.
void ExpectCutOffWithoutAnAnswer(const HttpServerOptions& options, const std::string& partial) {
  OkServer s(options);
  int fd = Connect(s.server.port());
  SendAll(fd, partial);
  bool closed = false;
  std::string got = Receive(fd, milliseconds(5000), &closed);
  EXPECT_TRUE(closed);
  EXPECT_EQ(got, "");
  EXPECT_EQ(s.server.Stats().connections_timed_out, 1u);
  close(fd);
}

TEST(HttpServerLimitsTest, AClientSendingHalfAHeaderIsCutOffAfterTheHeaderTimeout) {
  HttpServerOptions options;
  options.read_header_timeout = milliseconds(200);
  // No blank line: the header never ends.
  ExpectCutOffWithoutAnAnswer(options, "GET / HTTP/1.1\r\nHost: x\r\n");
}

TEST(HttpServerLimitsTest, AClientSendingHalfABodyIsCutOffAfterTheBodyTimeout) {
  HttpServerOptions options;
  options.read_body_timeout = milliseconds(200);
  ExpectCutOffWithoutAnAnswer(options, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789");
}

// At the cap, connections whose request is being answered (here: streams, as watches) are
// kept and a new one is refused at once; once one closes, a new connection is served.
TEST(HttpServerLimitsTest, ConnectionsBeyondTheCapAreRefusedAtOnceWhenNoneIsIdle) {
  HttpServerOptions options;
  options.max_connections = 2;
  LogCapture log;
  std::mutex mu;
  std::vector<std::shared_ptr<ResponseStream>> streams;  // guarded by mu
  HttpServer server(options, [&](const HttpRequest& req) -> HandlerResult {
    if (req.target != "/stream") {
      HttpResponse r;
      r.body = "ok";
      return r;
    }
    StreamingResponse sr;
    sr.content_type = "text/plain";
    sr.start = [&](std::shared_ptr<ResponseStream> stream) {
      stream->Write("first\n");
      std::lock_guard<std::mutex> lock(mu);
      streams.push_back(std::move(stream));
    };
    return sr;
  });
  ASSERT_TRUE(server.Start().ok());
  bool closed = false;
  int a = Connect(server.port());
  int b = Connect(server.port());
  for (int fd : {a, b}) {
    SendAll(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_NE(Receive(fd, milliseconds(5000), &closed, "first").find("first"), std::string::npos);
  }
  int c = Connect(server.port());
  std::string refused = Receive(c, milliseconds(5000), &closed);
  EXPECT_TRUE(closed);
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << refused;
  EXPECT_NE(refused.find("too many open connections: limit is 2"), std::string::npos) << refused;
  EXPECT_EQ(server.Stats().idle_connections_closed, 0u);
  // The operator learns of it (a TLS client sees only the close): once per 10 s at most.
  int c2 = Connect(server.port());
  EXPECT_TRUE(Receive(c2, milliseconds(5000), &closed).starts_with("HTTP/1.1 503"));
  EXPECT_EQ(log.Lines("refused 1 new connection(s): 2 open, the cap").size(), 1u);
  EXPECT_EQ(log.Lines("new connection(s)").size(), 1u);
  EXPECT_EQ(server.Stats().connections_refused, 2u);
  close(c);
  close(c2);
  // Once one closes, a new connection is served.
  close(a);
  ASSERT_TRUE(Eventually([&] { return server.Stats().open_connections == 1; }));
  int d = Connect(server.port());
  SendAll(d, kGet);
  closed = false;
  EXPECT_NE(Receive(d, milliseconds(5000), &closed, "ok").find("200 OK"), std::string::npos);
  close(b);
  close(d);
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& stream : streams) stream->Close();
  }
  server.Stop();
}

// The server's side of an accepted connection as /proc/net/tcp{,6} shows it: its timer kind
// ("tr": 2 is keep-alive, or another timer) and the seconds until it fires; nullopt when the
// row is not found.
std::optional<std::pair<int, double>> ServerSideTimer(int server_port, int client_port) {
  for (const char* file : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer;
      fields >> slot >> local >> remote >> state >> queues >> timer;
      auto port = [](const std::string& address) {
        return std::stoi(address.substr(address.rfind(':') + 1), nullptr, 16);
      };
      if (port(local) != server_port || port(remote) != client_port) continue;
      const std::size_t colon = timer.find(':');
      return std::make_pair(
          std::stoi(timer.substr(0, colon), nullptr, 16),
          static_cast<double>(std::stoll(timer.substr(colon + 1), nullptr, 16)) / sysconf(_SC_CLK_TCK));
    }
  }
  return std::nullopt;
}

// Accepted connections carry TCP keep-alive, so a client that vanished without a FIN or RST
// is found out (kTcpKeepAliveInterval, as Go's listener): the idle connection's server side
// has a keep-alive timer due within the interval.
TEST(HttpServerLimitsTest, AcceptedConnectionsProbeAVanishedClientWithTcpKeepAlive) {
  OkServer s(HttpServerOptions{});
  int fd = Connect(s.server.port());
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len), 0);
  ASSERT_TRUE(Eventually([&] { return s.server.Stats().open_connections == 1; }));
  std::optional<std::pair<int, double>> timer;
  ASSERT_TRUE(Eventually([&] {
    timer = ServerSideTimer(s.server.port(), ntohs(local.sin_port));
    return timer && timer->first == 2;
  })) << (timer ? std::to_string(timer->first) : "no row");
  EXPECT_GT(timer->second, 1.0);  // not a delayed ACK's 40 ms
  EXPECT_LE(timer->second, std::chrono::duration<double>(kTcpKeepAliveInterval).count());
  close(fd);
}

// A client that opens connections and sends nothing, half a header, or a header and half a
// body, cannot lock others out (the server reads a request whole before it authenticates
// it): at the cap, the longest-open such connection is closed for each new one.
TEST(HttpServerLimitsTest, AtTheCapTheLongestConnectionWithoutAWholeRequestMakesRoom) {
  HttpServerOptions options;
  options.max_connections = 3;
  OkServer s(options);
  std::vector<int> silent;
  for (int i = 0; i < 3; ++i) silent.push_back(Connect(s.server.port()));
  // A whole header and half of a 100 kB body: no whole request yet either.
  SendAll(silent[1], "POST /api/v1/namespaces/a/configmaps HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{");
  SendAll(silent[2], "GET / HTTP/1.1\r\n");  // half a header
  ASSERT_TRUE(Eventually([&] { return s.server.Stats().open_connections == 3; }));
  bool closed = false;
  for (int round = 0; round < 3; ++round) {
    int fresh = Connect(s.server.port());
    SendAll(fresh, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_NE(Receive(fresh, milliseconds(5000), &closed, "ok").find("200 OK"), std::string::npos) << round;
    close(fresh);
    // The longest-open silent connection was closed, without an answer.
    EXPECT_EQ(Receive(silent[round], milliseconds(5000), &closed), "") << round;
    EXPECT_TRUE(closed) << round;
    // Back at the cap with a new silent connection, the newest.
    ASSERT_TRUE(Eventually([&] { return s.server.Stats().open_connections == 2; })) << round;
    silent.push_back(Connect(s.server.port()));
    ASSERT_TRUE(Eventually([&] { return s.server.Stats().open_connections == 3; })) << round;
  }
  EXPECT_EQ(s.server.Stats().idle_connections_closed, 3u);
  EXPECT_EQ(s.server.Stats().connections_refused, 0u);
  for (int fd : silent) close(fd);
}

// A client holding connections open between requests cannot lock others out: at the cap,
// the longest-open connection waiting for its next keep-alive request is closed for the new
// one, as many times as new connections come; the others keep serving.
TEST(HttpServerLimitsTest, AtTheCapTheLongestIdleKeepAliveConnectionMakesRoom) {
  HttpServerOptions options;
  options.max_connections = 3;
  OkServer s(options);
  bool closed = false;
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(Connect(s.server.port()));
    SendAll(idle.back(), kGet);
    ASSERT_NE(Receive(idle.back(), milliseconds(5000), &closed, "ok").find("200 OK"), std::string::npos);
  }
  for (int round = 0; round < 2; ++round) {
    int fresh = Connect(s.server.port());
    SendAll(fresh, kGet);
    closed = false;
    EXPECT_NE(Receive(fresh, milliseconds(5000), &closed, "ok").find("200 OK"), std::string::npos) << round;
    // The longest-open idle connection was closed, without an answer.
    closed = false;
    EXPECT_EQ(Receive(idle[round], milliseconds(5000), &closed), "") << round;
    EXPECT_TRUE(closed) << round;
    close(idle[round]);
    idle[round] = fresh;
  }
  EXPECT_EQ(s.server.Stats().idle_connections_closed, 2u);
  EXPECT_EQ(s.server.Stats().connections_refused, 0u);
  // The connections left all serve.
  for (int fd : idle) {
    SendAll(fd, kGet);
    closed = false;
    EXPECT_NE(Receive(fd, milliseconds(5000), &closed, "ok").find("200 OK"), std::string::npos);
    close(fd);
  }
}

TEST(HttpServerLimitsTest, AResponseTheClientDoesNotReadIsAbandonedAfterTheWriteTimeout) {
  HttpServerOptions options;
  options.write_timeout = milliseconds(300);
  HttpServer server(options, [](const HttpRequest&) -> HandlerResult {
    HttpResponse r;
    r.body = std::string(32 << 20, 'x');  // more than the socket buffers hold
    return r;
  });
  ASSERT_TRUE(server.Start().ok());
  int fd = Connect(server.port(), 4096);
  SendAll(fd, kGet);
  EXPECT_TRUE(Eventually([&] { return server.Stats().connections_timed_out == 1; }));
  EXPECT_TRUE(Eventually([&] { return server.Stats().open_connections == 0; }));
  close(fd);
}

TEST(HttpServerLimitsTest, AStreamWhoseClientStopsReadingIsEndedByTheWriteDeadlineAndLogged) {
  HttpServerOptions options;
  options.write_timeout = milliseconds(300);
  options.max_stream_buffer_bytes = 64 << 20;  // the byte bound is not reached: the deadline ends it
  std::atomic<bool> ended{false};
  std::atomic<int> accepted{0};
  HttpServer server(options, [&](const HttpRequest&) -> HandlerResult {
    StreamingResponse r;
    r.start = [&](std::shared_ptr<ResponseStream> stream) {
      stream->OnDone([&] { ended = true; });
      // 32 MiB: more than the socket buffers hold.
      for (int i = 0; i < 32; ++i) accepted += stream->Write(std::string(1 << 20, 'x'));
    };
    return r;
  });
  LogCapture log;
  ASSERT_TRUE(server.Start().ok());
  int fd = Connect(server.port(), 4096);
  SendAll(fd, kGet);  // then never reads
  ASSERT_TRUE(Eventually([&] { return server.Stats().streams_timed_out == 1; }));
  EXPECT_TRUE(Eventually([&] { return ended.load(); }));  // the producer learns the stream is over
  EXPECT_EQ(accepted.load(), 32);
  const HttpServerStats stats = server.Stats();
  EXPECT_EQ(stats.streams_closed_unresponsive, 0u);
  EXPECT_EQ(stats.connections_timed_out, 1u);
  EXPECT_TRUE(Eventually([&] { return server.Stats().open_connections == 0; }));
  EXPECT_EQ(log.Lines("closing a stream whose client does not read: " + LocalAddress(fd) +
                      ": no byte accepted for 300 ms (write timeout)")
                .size(),
            1u);
  close(fd);
  server.Stop();
}

TEST(HttpServerLimitsTest, AWatchWhoseInitialStateExceedsTheStreamBoundIsReadCompletely) {
  constexpr int kObjects = 300;  // 300 ConfigMaps of 20 KiB: 6 MB of ADDED events, over the 4 MiB bound
  static_assert(kObjects * 20 * 1024 > kMaxStreamBufferBytes);
  testing::TestApiServer t;  // the default bound, kMaxStreamBufferBytes
  ASSERT_TRUE(t.server.Start().ok());
  const std::string data(20 * 1024, 'x');
  for (int i = 0; i < kObjects; ++i) {
    std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-)" + std::to_string(i) +
                       R"("},"data":{"d":")" + data + R"("}})";
    HttpResponse r = testing::Respond(t.server, "POST", "/api/v1/namespaces/default/configmaps", body);
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // A watch without resourceVersion starts with every object as ADDED.
  int fd = Connect(t.server.port());
  SendAll(fd, "GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n");
  std::atomic<int> received{0};
  std::atomic<bool> closed{false};
  std::thread reader([&] { CountEvents(fd, "ADDED", &received, &closed); });
  EXPECT_TRUE(Eventually([&] { return received.load() >= kObjects; }));
  EXPECT_EQ(received.load(), kObjects);
  EXPECT_FALSE(closed.load());
  const HttpServerStats stats = t.server.TransportStats();
  EXPECT_EQ(stats.streams_closed_unresponsive, 0u);
  EXPECT_EQ(stats.streams_timed_out, 0u);
  // And the watch goes on: a later event arrives.
  HttpResponse r = testing::Respond(t.server, "POST", "/api/v1/namespaces/default/configmaps",
                                    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"late"}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_TRUE(Eventually([&] { return received.load() == kObjects + 1; }));
  EXPECT_FALSE(closed.load());
  shutdown(fd, SHUT_RDWR);
  reader.join();
  close(fd);
  t.server.Stop();
}

}  // namespace
}  // namespace berth::apiserver
