#include "apiserver/http_server.h"

#include <cerrno>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

// GCC 12 + Boost 1.74: awaitable.hpp uses std::exchange without including <utility>.
// clang-format off
#include <utility>
// clang-format on

#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <optional>
#include <thread>
#include <type_traits>

#include "apiserver/status_response.h"
#include "core/logging.h"
#include "pki/certificates.h"

namespace berth::apiserver {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Strand = net::strand<net::io_context::executor_type>;
using ErrorCode = boost::system::error_code;
using TlsStream = beast::ssl_stream<tcp::socket>;

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoringCase(k, name)) return v;
  }
  return {};
}

HandlerResult FromImmediate(ImmediateResult result) {
  return std::visit([](auto&& r) -> HandlerResult { return std::move(r); }, std::move(result));
}

ImmediateResult AwaitResult(HandlerResult result) {
  if (auto* deferred = std::get_if<DeferredResponse>(&result)) {
    auto promise = std::make_shared<std::promise<ImmediateResult>>();
    std::future<ImmediateResult> answer = promise->get_future();
    deferred->start([promise](ImmediateResult r) { promise->set_value(std::move(r)); });
    return answer.get();
  }
  return std::visit(
      [](auto&& r) -> ImmediateResult {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, DeferredResponse>) {
          return HttpResponse{};  // handled above
        } else {
          return std::move(r);
        }
      },
      std::move(result));
}

bool IsWebSocketUpgrade(const HttpRequest& req) {
  if (!EqualsIgnoringCase(req.Header("Upgrade"), "websocket")) return false;
  std::string_view connection = req.Header("Connection");
  while (!connection.empty()) {
    const size_t comma = connection.find(',');
    std::string_view token = connection.substr(0, comma);
    connection = comma == std::string_view::npos ? std::string_view() : connection.substr(comma + 1);
    while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
    if (EqualsIgnoringCase(token, "upgrade")) return true;
  }
  return false;
}

namespace {

// kTcpKeepAliveInterval / kTcpKeepAliveProbes on an accepted socket (best effort: a
// socket that refuses keeps serving without).
void SetTcpKeepAlive(tcp::socket& socket) {
  ErrorCode ec;
  socket.set_option(net::socket_base::keep_alive(true), ec);
  const int fd = socket.native_handle();
  const int seconds = static_cast<int>(kTcpKeepAliveInterval.count());
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &seconds, sizeof(seconds));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &seconds, sizeof(seconds));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kTcpKeepAliveProbes, sizeof(kTcpKeepAliveProbes));
}

namespace websocket = beast::websocket;

auto Redirect(ErrorCode& ec) { return net::redirect_error(net::use_awaitable, ec); }

// The transport's counters (HttpServerStats), shared with the streams, which
// may outlive the server.
struct Counters {
  std::atomic<size_t> stream_queued_bytes{0};
  std::atomic<size_t> stream_queued_bytes_peak{0};
  std::atomic<uint64_t> streams_closed_unresponsive{0};
  std::atomic<uint64_t> streams_timed_out{0};
  std::atomic<uint64_t> connections_refused{0};
  std::atomic<uint64_t> idle_connections_closed{0};
  std::atomic<uint64_t> connections_timed_out{0};
};

// The shared state of one chunked response: a queue of chunks filled from any
// thread and drained by the connection coroutine on its strand. The bytes
// queued and not yet written are bounded (HttpServerOptions::
// max_stream_buffer_bytes); a Write beyond the bound aborts the stream.
class StreamState final : public ResponseStreamBase, public std::enable_shared_from_this<StreamState> {
 public:
  // `on_abort` runs once, on some thread, when the stream is aborted.
  // `remote` ("127.0.0.1:54321") names the client in the log.
  StreamState(Strand strand, std::string remote, size_t max_queued_bytes, size_t max_total_queued_bytes,
              std::shared_ptr<Counters> counters, std::function<void()> on_abort)
      : strand_(strand),
        remote_(std::move(remote)),
        signal_(strand),
        deadline_(strand),
        max_queued_bytes_(max_queued_bytes),
        max_total_queued_bytes_(max_total_queued_bytes),
        counters_(std::move(counters)),
        on_abort_(std::move(on_abort)) {
    signal_.expires_at(net::steady_timer::time_point::max());
  }
  ~StreamState() override { counters_->stream_queued_bytes -= queued_bytes_; }

  std::size_t queued_bytes() const override {
    std::lock_guard<std::mutex> lock(mu());
    return queued_bytes_;
  }

  bool WriteInitial(std::string chunk) override {
    {
      std::lock_guard<std::mutex> lock(mu());
      if (done_locked() || aborted_) return false;
      initial_bytes_ += chunk.size();
      queued_bytes_ += chunk.size();
      counters_->stream_queued_bytes += chunk.size();
      queue_.push_back(std::move(chunk));
    }
    Wake();
    return true;
  }

  bool Write(std::string chunk) override {
    size_t queued = 0;
    size_t total = 0;  // set when the server's total is what the chunk would pass
    {
      std::lock_guard<std::mutex> lock(mu());
      if (done_locked() || aborted_) return false;
      // A chunk that finds nothing queued is always taken (an object at the
      // size limit must pass); any other may not push the queue past the
      // bound, nor every stream's together past the server's. The initial
      // state, written first, is not counted in the stream's own bound.
      const size_t live = queued_bytes_ - initial_bytes_;
      if (live > 0 && live + chunk.size() > max_queued_bytes_) {
        queued = live;
      } else if (live > 0 && counters_->stream_queued_bytes.load() + chunk.size() > max_total_queued_bytes_) {
        queued = live;
        total = counters_->stream_queued_bytes.load();
      } else {
        queued_bytes_ += chunk.size();
        counters_->stream_queued_bytes += chunk.size();
        const size_t now_live = live + chunk.size();
        size_t peak = counters_->stream_queued_bytes_peak.load();
        while (now_live > peak && !counters_->stream_queued_bytes_peak.compare_exchange_weak(peak, now_live)) {
        }
        queue_.push_back(std::move(chunk));
      }
    }
    if (queued > 0) {
      if (total > 0) {
        Logger("apiserver")
            ->info(
                "closing a stream whose client does not read: {}: {} bytes queued; the server's streams hold {}, "
                "limit {}",
                remote_, queued, total, max_total_queued_bytes_);
      } else {
        Logger("apiserver")
            ->info("closing a stream whose client does not read: {}: {} bytes queued, limit {}", remote_, queued,
                   max_queued_bytes_);
      }
      counters_->streams_closed_unresponsive++;
      Abort();
      return false;
    }
    Wake();
    return true;
  }

  void Close() override { Finish(); }
  void Fail() override {
    {
      std::lock_guard<std::mutex> lock(mu());
      if (done_locked()) return;
      failed_ = true;
    }
    Finish();
  }
  bool failed() const {
    std::lock_guard<std::mutex> lock(mu());
    return failed_;
  }

  // Ends the stream without its final chunk: drops what is queued and closes
  // the connection (on_abort).
  void Abort() {
    {
      std::lock_guard<std::mutex> lock(mu());
      if (aborted_) return;
      aborted_ = true;
      counters_->stream_queued_bytes -= queued_bytes_;
      queued_bytes_ = 0;
      initial_bytes_ = 0;
      queue_.clear();
    }
    Finish();
    if (on_abort_) on_abort_();
  }

  bool aborted() const {
    std::lock_guard<std::mutex> lock(mu());
    return aborted_;
  }

  // The writer wrote `n` bytes taken by Drain.
  void Written(size_t n) {
    std::lock_guard<std::mutex> lock(mu());
    if (aborted_) return;  // Abort already released them
    queued_bytes_ -= n;
    initial_bytes_ -= std::min(initial_bytes_, n);  // the initial chunks are written first
    counters_->stream_queued_bytes -= n;
  }

  // Marks the stream ended, wakes the writer and runs the OnDone callbacks.
  void Finish() {
    End([this] {
      Wake();
      net::post(strand_, [self = shared_from_this()] { self->deadline_.cancel(); });
    });
  }

  // Takes every queued chunk; *done tells whether the stream has ended.
  std::deque<std::string> Drain(bool* done) {
    std::lock_guard<std::mutex> lock(mu());
    *done = done_locked();
    return std::exchange(queue_, {});
  }

  net::steady_timer& signal() { return signal_; }

  void StartDeadline(std::chrono::milliseconds timeout) {
    deadline_.expires_after(timeout);
    deadline_.async_wait([self = shared_from_this()](ErrorCode ec) {
      if (!ec) self->Finish();
    });
  }

 private:
  void Wake() {
    net::post(strand_, [self = shared_from_this()] { self->signal_.cancel(); });
  }

  Strand strand_;
  const std::string remote_;
  net::steady_timer signal_;
  net::steady_timer deadline_;
  const size_t max_queued_bytes_;
  const size_t max_total_queued_bytes_;
  const std::shared_ptr<Counters> counters_;
  const std::function<void()> on_abort_;
  std::deque<std::string> queue_;  // guarded by mu()
  size_t queued_bytes_ = 0;        // queued or drained, not yet written; guarded by mu()
  size_t initial_bytes_ = 0;       // of which WriteInitial chunks; guarded by mu()
  bool aborted_ = false;           // guarded by mu()
  bool failed_ = false;            // Fail(): no final chunk; guarded by mu()
};

// The shared state of one WebSocket session: messages queued from any thread
// and written by the connection's writer coroutine on its strand, and the
// reader's pause.
class WebSocketState final : public WebSocketSession, public std::enable_shared_from_this<WebSocketState> {
 public:
  explicit WebSocketState(Strand strand) : strand_(strand), signal_(strand), resume_(strand) {
    signal_.expires_at(net::steady_timer::time_point::max());
    resume_.expires_at(net::steady_timer::time_point::max());
  }

  bool Write(std::string message) override {
    {
      std::lock_guard<std::mutex> lock(mu());
      if (done_locked()) return false;
      queued_bytes_ += message.size();
      queue_.push_back(std::move(message));
    }
    Wake();
    return true;
  }
  void Close() override { Finish(); }
  std::size_t queued_bytes() const override {
    std::lock_guard<std::mutex> lock(mu());
    return queued_bytes_;
  }
  void ResumeReading() override {
    net::post(strand_, [self = shared_from_this()] {
      self->paused_ = false;
      self->resume_.cancel();
    });
  }

  // Ends the session: the writer sends what is queued and the close frame.
  void Finish() {
    End([this] {
      Wake();
      net::post(strand_, [self = shared_from_this()] { self->resume_.cancel(); });
    });
  }
  std::deque<std::string> Drain(bool* done) {
    std::lock_guard<std::mutex> lock(mu());
    *done = done_locked();
    return std::exchange(queue_, {});
  }
  void Written(size_t n) {
    std::lock_guard<std::mutex> lock(mu());
    queued_bytes_ -= std::min(queued_bytes_, n);
  }
  net::steady_timer& signal() { return signal_; }
  // On the strand: the reader waits here while paused.
  net::steady_timer& resume() { return resume_; }
  bool paused_ = false;  // on the strand

 private:
  void Wake() {
    net::post(strand_, [self = shared_from_this()] { self->signal_.cancel(); });
  }

  Strand strand_;
  net::steady_timer signal_;
  net::steady_timer resume_;
  std::deque<std::string> queue_;  // guarded by mu()
  size_t queued_bytes_ = 0;        // guarded by mu()
};

// The head of a 503 for a connection over the cap: written without waiting,
// before the socket is closed.
std::string RefusalResponse(size_t max_connections) {
  HttpResponse r =
      StatusResponse(UnavailableError("too many open connections: limit is " + std::to_string(max_connections)));
  return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: " + r.content_type +
         "\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " + std::to_string(r.body.size()) + "\r\n\r\n" +
         r.body;
}

// The status line and headers of `response` (an HttpResponse or a
// StreamingResponse) on `res`: its code and Content-Type, no caching, then
// its own headers.
template <typename Body, typename Response>
void SetHead(http::response<Body>& res, unsigned version, const Response& response) {
  res.version(version);
  res.result(static_cast<unsigned>(response.status));
  res.set(http::field::content_type, response.content_type);
  res.set(http::field::cache_control, "no-cache, private");
  for (const auto& [k, v] : response.headers) res.insert(k, v);
}

struct X509StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
using X509Store = std::unique_ptr<X509_STORE, X509StoreFree>;

// Whether the first five bytes on a TLS port are an HTTP request's, as Go's
// net/http tests them (tlsRecordHeaderLooksLikeHTTP in net/http/server.go).
bool LooksLikeHttp(std::string_view head) {
  return head == "GET /" || head == "HEAD " || head == "POST " || head == "PUT /" || head == "OPTIO";
}
// Go's answer to it (net/http/server.go, conn.serve).
constexpr std::string_view kHttpOnHttpsPort =
    "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

// Loads every certificate of `pem` into a new store. Errors: kInvalid when it holds none.
StatusOr<X509Store> LoadCaStore(const std::string& pem, SSL_CTX* announce_to) {
  X509Store store(X509_STORE_new());
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store.get(), cert);
    // The CertificateRequest names the acceptable CAs, as Go's tls.Config.ClientCAs does.
    if (announce_to) SSL_CTX_add_client_CA(announce_to, cert);
    X509_free(cert);
    ++count;
  }
  BIO_free(bio);
  ERR_clear_error();
  if (count == 0) return InvalidError("TLS: client_ca_pem holds no PEM certificate");
  return store;
}

}  // namespace

class HttpServer::Impl : public std::enable_shared_from_this<HttpServer::Impl> {
 public:
  // What Stop needs of a connection, whatever its transport.
  class ConnectionBase {
   public:
    virtual ~ConnectionBase() = default;
    // On the strand: ends the connection as soon as it is idle.
    virtual void BeginStop() = 0;
    // On the strand: closes the socket at once.
    virtual void ForceClose() = 0;
    virtual const Strand& strand() const = 0;
    // On the strand: closes the connection if it still has no whole request (it waits
    // for its first request or its next keep-alive one, or is still reading one's header
    // or body).
    virtual void CloseIfIdle() = 0;
    // Read by the acceptor, which closes one connection to make room at the cap:
    // the longest-open waiting for its next keep-alive request, else the longest-open
    // that has not sent a whole request yet (TLS handshake, header and body included:
    // the server reads a request whole before it authenticates it).
    std::atomic<bool> idle_keep_alive{false};
    std::atomic<bool> awaiting_request{true};
    std::atomic<bool> chosen{false};  // asked to close; not chosen again
  };
  // One connection over plain TCP (Stream = tcp::socket) or TLS (TlsStream).
  template <typename Stream>
  class Connection;

  Impl(HttpServerOptions options, HttpHandler handler)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        acceptor_strand_(net::make_strand(io_)),
        acceptor_(acceptor_strand_) {}

  Status Start();
  void Stop();
  uint16_t port() const { return port_; }
  HttpServerStats Stats() const;

 private:
  net::awaitable<void> AcceptLoop();
  // Registers and starts a connection; the caller holds mu_.
  template <typename Stream>
  void SpawnLocked(tcp::socket socket, Strand strand);
  void Unregister(uint64_t id);
  // At the connection cap: asks one connection without a request in progress to close
  // (the longest-open idle keep-alive one, else the longest-open one without a whole
  // request) and returns true, so that the new connection may be served; false
  // when every connection is in a request or a stream. The caller holds mu_.
  bool CloseAnIdleConnectionLocked();
  // Logs a refusal at the cap, at most every 10 s with the count since the last one.
  void LogRefusalLocked();
  uint64_t refused_unlogged_ = 0;                           // guarded by mu_
  std::chrono::steady_clock::time_point last_refusal_log_;  // guarded by mu_
  Status SetUpTls();
  // The client certificate of a finished handshake, judged against client_cas_.
  std::optional<ClientCertificate> ClientCertificateOf(SSL* ssl) const;

  HttpServerOptions options_;
  HttpHandler handler_;
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
  // Set by Start when options_.tls is; then every connection speaks TLS.
  std::optional<net::ssl::context> tls_;
  X509Store client_cas_;  // null: client certificates are not asked for
  net::io_context io_;
  Strand acceptor_strand_;
  tcp::acceptor acceptor_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  bool started_ = false;
  bool stopped_ = false;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                                          // guarded by mu_
  uint64_t next_id_ = 0;                                           // guarded by mu_
  std::map<uint64_t, std::weak_ptr<ConnectionBase>> connections_;  // guarded by mu_
};

template <typename Stream>
class HttpServer::Impl::Connection final : public ConnectionBase,
                                           public std::enable_shared_from_this<Connection<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

 public:
  Connection(Impl* server, tcp::socket socket, Strand strand, uint64_t id)
      : server_(server), transport_(MakeStream(server, std::move(socket))), strand_(strand), id_(id), timer_(strand) {}

  net::awaitable<void> Run();

  void BeginStop() override {
    stopping_ = true;
    if (websocket_) {
      websocket_->Finish();
    } else if (stream_) {
      stream_->Finish();
    } else if (!busy_) {
      ErrorCode ec;
      sock().cancel(ec);
    }
  }
  void CloseIfIdle() override {
    if (busy_ || stream_ || websocket_ || !awaiting_request) {
      chosen = false;  // a request came first: it is served
      return;
    }
    ErrorCode ec;
    sock().cancel(ec);  // the wait or read in progress ends with an error: the connection closes
  }
  void ForceClose() override {
    ErrorCode ec;
    sock().close(ec);
    if (stream_) stream_->Finish();
    if (websocket_) websocket_->Finish();
  }
  // Runs on the strand: closes the socket, failing whatever waits on it.
  void CloseSocket() {
    ErrorCode ec;
    sock().close(ec);
  }
  // Ends `state` when the client closes the connection while a response streams (or
  // sends anything: it must not). A readiness wake-up with nothing to read is the
  // reactor's stale readiness from the request (as in Run's keep-alive wait; with TLS
  // the request's records were all read into the TLS buffer): it waits again. Taking
  // it for the client's close ended fresh watches at once, with no event (kubectl
  // get -w exited silently, about one watch in 50 on a loaded machine).
  template <typename State>
  void EndOnPeerClose(std::shared_ptr<State> state) {
    std::weak_ptr<Connection> weak = this->shared_from_this();
    sock().async_wait(tcp::socket::wait_read, [weak, state](ErrorCode ec) {
      auto self = weak.lock();
      if (self && !ec && self->NothingToRead()) {
        self->EndOnPeerClose(state);
        return;
      }
      state->Finish();
    });
  }
  // After a readiness wake-up: true when there is nothing to read after all (the
  // reactor's stale readiness), as opposed to bytes, an end of file or an error.
  bool NothingToRead() {
    char byte;
    const ssize_t n = ::recv(sock().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
  const Strand& strand() const override { return strand_; }

 private:
  static Stream MakeStream(Impl* server, tcp::socket socket) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *server->tls_);
    } else {
      return socket;
    }
  }
  // The TCP socket under the transport.
  tcp::socket& sock() { return beast::get_lowest_layer(transport_); }
  // True when TLS holds bytes already read from the socket (the socket's
  // readability says nothing of them).
  bool TlsBuffered() {
    if constexpr (kTls) {
      SSL* ssl = transport_.native_handle();
      return SSL_pending(ssl) > 0 || BIO_ctrl_pending(SSL_get_rbio(ssl)) > 0;
    } else {
      return false;
    }
  }
  // TLS: answers a plain HTTP request as Go does, else runs the handshake
  // (bounded by the deadline Run armed) and reads the client certificate.
  // False when the connection is to end.
  net::awaitable<bool> Handshake(std::optional<ClientCertificate>* client_certificate);
  net::awaitable<bool> WriteResponse(HttpResponse response, unsigned version, bool keep_alive);
  net::awaitable<void> WriteStream(StreamingResponse response, unsigned version);
  net::awaitable<void> ServeWebSocket(const http::request<http::string_body>& request, WebSocketUpgrade upgrade);
  net::awaitable<void> WriteWebSocket(websocket::stream<Stream&>& ws, std::shared_ptr<WebSocketState> state);
  net::awaitable<void> Linger();
  // Closes the socket (counted as a timeout) unless Disarm() is called
  // within `timeout`. One deadline at a time; on the strand.
  void Arm(std::chrono::milliseconds timeout) {
    const uint64_t generation = ++timer_generation_;
    timer_.expires_after(timeout);
    timer_.async_wait([self = this->shared_from_this(), generation, timeout](ErrorCode ec) {
      if (ec || generation != self->timer_generation_) return;
      self->server_->counters_->connections_timed_out++;
      if (self->stream_) {
        // A chunk of a stream waited the whole write_timeout for the client.
        self->server_->counters_->streams_timed_out++;
        Logger("apiserver")
            ->info("closing a stream whose client does not read: {}: no byte accepted for {} ms (write timeout)",
                   self->remote_, timeout.count());
      }
      self->CloseSocket();
    });
  }
  void Disarm() {
    ++timer_generation_;
    timer_.cancel();
  }
  // Ends the TCP connection (TLS: without close_notify; every response is
  // delimited by Content-Length or its final chunk).
  void Shutdown() {
    ErrorCode ec;
    sock().shutdown(tcp::socket::shutdown_send, ec);
    sock().close(ec);
  }

  Impl* server_;
  Stream transport_;
  Strand strand_;
  uint64_t id_;
  std::string remote_;  // "127.0.0.1:54321"; set when Run starts
  // Touched only on the strand.
  net::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  bool stopping_ = false;
  bool busy_ = false;
  std::shared_ptr<StreamState> stream_;
  std::shared_ptr<WebSocketState> websocket_;
};

template <typename Stream>
net::awaitable<bool> HttpServer::Impl::Connection<Stream>::Handshake(
    std::optional<ClientCertificate>* client_certificate) {
  if constexpr (kTls) {
    ErrorCode ec;
    co_await sock().async_wait(tcp::socket::wait_read, Redirect(ec));
    if (ec || stopping_) co_return false;
    char head[5];
    const size_t n = sock().receive(net::buffer(head), tcp::socket::message_peek, ec);
    if (!ec && LooksLikeHttp(std::string_view(head, n))) {
      Arm(server_->options_.write_timeout);
      co_await net::async_write(sock(), net::buffer(kHttpOnHttpsPort.data(), kHttpOnHttpsPort.size()), Redirect(ec));
      Disarm();
      if (!ec) co_await Linger();
      co_return false;
    }
    co_await transport_.async_handshake(net::ssl::stream_base::server, Redirect(ec));
    if (ec) {
      Logger("apiserver")->debug("TLS handshake with {} failed: {}", remote_, ec.message());
      co_return false;
    }
    *client_certificate = server_->ClientCertificateOf(transport_.native_handle());
  }
  co_return true;
}

template <typename Stream>
net::awaitable<void> HttpServer::Impl::Connection<Stream>::Run() {
  auto self = this->shared_from_this();
  beast::flat_buffer buffer;
  {
    ErrorCode ec;
    auto ep = sock().remote_endpoint(ec);
    if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  const HttpServerOptions& options = server_->options_;
  // The first request's header (TLS: the handshake, then the header) is due
  // read_header_timeout after the accept.
  Arm(options.read_header_timeout);
  std::optional<ClientCertificate> client_certificate;
  const bool open = co_await Handshake(&client_certificate);
  bool first = true;
  while (open && !stopping_) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(options.max_body_bytes);
    // kMaxHeaderBytes, below the 65,535 bytes Beast's fields hold per name or
    // value: a longer field would be thrown out of the parser on an I/O
    // thread, not returned as an error.
    parser.header_limit(kMaxHeaderBytes);
    ErrorCode ec;
    if (!first) {
      // Keep-alive: the next request must start within idle_timeout; its
      // header is then due read_header_timeout after its first byte.
      if (buffer.size() == 0 && !TlsBuffered()) {
        Arm(options.idle_timeout);
        awaiting_request = true;
        idle_keep_alive = true;
        // A readiness wait may complete with nothing to read (the reactor's
        // edge-triggered readiness from the previous request): wait again,
        // within the same deadline, until a byte or the peer's close is there.
        while (true) {
          co_await sock().async_wait(tcp::socket::wait_read, Redirect(ec));
          if (ec || stopping_ || !NothingToRead()) break;
        }
        idle_keep_alive = false;
        if (ec || stopping_) break;
      }
      Arm(options.read_header_timeout);
    }
    first = false;
    co_await http::async_read_header(transport_, buffer, parser, Redirect(ec));
    if (!ec && !parser.is_done()) {
      Arm(options.read_body_timeout);
      co_await http::async_read(transport_, buffer, parser, Redirect(ec));
    }
    if (!ec) awaiting_request = false;
    Disarm();
    if (ec == http::error::header_limit) {
      HttpResponse too_large;
      too_large.status = 431;
      too_large.content_type = "text/plain; charset=utf-8";
      too_large.body = "431 Request Header Fields Too Large";
      co_await WriteResponse(std::move(too_large), 11, false);
      co_await Linger();
      break;
    }
    // GCC 12 destroys temporaries of a co_await expression twice when the
    // coroutine leaves the loop right after it (free(): invalid pointer on
    // every oversized body): build error responses as named locals first.
    if (ec == http::error::body_limit) {
      Status s = TooLargeError("Request entity too large: limit is " + std::to_string(options.max_body_bytes));
      HttpResponse too_large = StatusResponse(s);
      const unsigned request_version = parser.get().version();
      co_await WriteResponse(std::move(too_large), request_version, false);
      co_await Linger();
      break;
    }
    if (ec) {
      // A malformed request line or header: answer 400 like any HTTP server.
      // Anything else (EOF, reset, cancellation at shutdown) just ends.
      if (ec != http::error::end_of_stream && ec != http::error::partial_message &&
          ec.category() == http::make_error_code(http::error::bad_method).category()) {
        Status s = BadRequestError("malformed HTTP request: " + ec.message());
        HttpResponse bad_request = StatusResponse(s);
        co_await WriteResponse(std::move(bad_request), 11, false);
      }
      break;
    }
    busy_ = true;
    auto& msg = parser.get();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    for (const auto& field : msg) {
      req.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    req.body = std::move(msg.body());
    req.remote = remote_;
    req.client_certificate = client_certificate;
    const bool keep_alive = msg.keep_alive();
    const unsigned version = msg.version();

    HandlerResult result;
    try {
      result = server_->handler_(req);
    } catch (const std::exception& e) {
      // A handler must not throw; if one does, the client gets a 500 and the
      // server keeps serving.
      Logger("apiserver")->error("handler threw on {} {}: {}", req.method, req.target, e.what());
      result = StatusResponse(InternalError(std::string("internal error: ") + e.what()));
    }
    if (auto* deferred = std::get_if<DeferredResponse>(&result)) {
      // Wait on this connection's strand for the reply, holding no thread.
      struct Reply {
        explicit Reply(Strand strand) : timer(strand) { timer.expires_at(net::steady_timer::time_point::max()); }
        net::steady_timer timer;
        std::mutex mu;
        std::optional<ImmediateResult> result;  // guarded by mu
      };
      auto reply = std::make_shared<Reply>(strand_);
      Strand strand = strand_;
      deferred->start([reply, strand](ImmediateResult r) {
        {
          std::lock_guard<std::mutex> lock(reply->mu);
          reply->result = std::move(r);
        }
        net::post(strand, [reply] { reply->timer.cancel(); });
      });
      for (;;) {
        {
          std::lock_guard<std::mutex> lock(reply->mu);
          if (reply->result) {
            result = FromImmediate(std::move(*reply->result));
            break;
          }
        }
        ErrorCode ignored;
        co_await reply->timer.async_wait(Redirect(ignored));
      }
    }
    if (auto* response = std::get_if<HttpResponse>(&result)) {
      bool ok = co_await WriteResponse(std::move(*response), version, keep_alive && !stopping_);
      busy_ = false;
      if (!ok || !keep_alive) break;
    } else if (auto* upgrade = std::get_if<WebSocketUpgrade>(&result)) {
      co_await ServeWebSocket(msg, std::move(*upgrade));
      busy_ = false;
      break;  // the connection was the WebSocket's
    } else {
      co_await WriteStream(std::move(std::get<StreamingResponse>(result)), version);
      busy_ = false;
      break;  // a streamed response ends the connection
    }
  }
  Disarm();
  Shutdown();
  server_->Unregister(id_);
}

template <typename Stream>
net::awaitable<bool> HttpServer::Impl::Connection<Stream>::WriteResponse(HttpResponse response, unsigned version,
                                                                         bool keep_alive) {
  http::response<http::string_body> res;
  SetHead(res, version, response);
  res.body() = std::move(response.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  ErrorCode ec;
  Arm(server_->options_.write_timeout);
  co_await http::async_write(transport_, res, Redirect(ec));
  Disarm();
  co_return !ec;
}

// After answering a request whose body was not read (413), closing at once
// makes the kernel reset the connection while the client is still sending,
// and the client reports "broken pipe" instead of the response. Half-close,
// then read and discard what the client still sends (at most 64 MiB) until
// it closes, as Go's net/http lingers before closing.
template <typename Stream>
net::awaitable<void> HttpServer::Impl::Connection<Stream>::Linger() {
  ErrorCode ec;
  sock().shutdown(tcp::socket::shutdown_send, ec);
  std::vector<char> sink(64 * 1024);
  size_t total = 0;
  Arm(server_->options_.read_body_timeout);
  while (!ec && !stopping_ && total < (size_t{64} << 20)) {
    total += co_await sock().async_read_some(net::buffer(sink), Redirect(ec));
  }
  Disarm();
}

template <typename Stream>
net::awaitable<void> HttpServer::Impl::Connection<Stream>::WriteStream(StreamingResponse response, unsigned version) {
  http::response<http::empty_body> res;
  SetHead(res, version, response);
  res.chunked(true);
  http::response_serializer<http::empty_body> serializer(res);
  ErrorCode ec;
  const auto write_timeout = server_->options_.write_timeout;
  Arm(write_timeout);
  co_await http::async_write_header(transport_, serializer, Redirect(ec));
  Disarm();
  if (ec) co_return;

  std::weak_ptr<Connection> weak = this->shared_from_this();
  auto state =
      std::make_shared<StreamState>(strand_, remote_, server_->options_.max_stream_buffer_bytes,
                                    server_->options_.max_total_stream_buffer_bytes, server_->counters_, [weak] {
                                      if (auto self = weak.lock())
                                        net::post(self->strand_, [self] { self->CloseSocket(); });
                                    });
  stream_ = state;
  if (stopping_) state->Finish();
  if (response.timeout.count() > 0) state->StartDeadline(response.timeout);
  // The client sends nothing while a response streams: bytes or an end of file mean
  // it closed the connection (or broke the protocol); either way the stream ends.
  EndOnPeerClose(state);
  if (response.start) response.start(state);

  // What queued since the last write goes out as one HTTP chunk (one write for
  // the events of a burst; the client's decoder reads a stream, not chunks), at
  // most kMaxChunkBytes at a time.
  constexpr size_t kMaxChunkBytes = 1 << 20;
  std::string batch;
  for (;;) {
    bool done = false;
    auto chunks = state->Drain(&done);
    for (size_t i = 0; i < chunks.size();) {
      batch.clear();
      for (; i < chunks.size() && (batch.empty() || batch.size() + chunks[i].size() <= kMaxChunkBytes); ++i) {
        if (batch.empty()) {
          batch = std::move(chunks[i]);
        } else {
          batch += chunks[i];
        }
      }
      if (batch.empty()) continue;  // an empty chunk would end the response
      Arm(write_timeout);
      co_await net::async_write(transport_, http::make_chunk(net::buffer(batch)), Redirect(ec));
      Disarm();
      state->Written(batch.size());
      if (ec || state->aborted()) {
        state->Finish();
        stream_.reset();
        co_return;
      }
    }
    if (chunks.empty()) {
      if (done) break;
      co_await state->signal().async_wait(Redirect(ec));
    }
  }
  if (!state->aborted() && !state->failed()) {
    Arm(write_timeout);
    co_await net::async_write(transport_, http::make_chunk_last(), Redirect(ec));
    Disarm();
  }
  stream_.reset();
}

template <typename Stream>
net::awaitable<void> HttpServer::Impl::Connection<Stream>::ServeWebSocket(
    const http::request<http::string_body>& request, WebSocketUpgrade upgrade) {
  websocket::stream<Stream&> ws(transport_);
  ws.set_option(websocket::stream_base::decorator([&upgrade](websocket::response_type& res) {
    res.set(http::field::cache_control, "no-cache, private");
    if (!upgrade.protocol.empty()) res.set(http::field::sec_websocket_protocol, upgrade.protocol);
    for (const auto& [k, v] : upgrade.headers) res.insert(k, v);
  }));
  // The opening and closing handshakes are bounded by write_timeout; an idle
  // session is the handler's to end (the client's pings keep it alive).
  websocket::stream_base::timeout timeouts{};
  timeouts.handshake_timeout = server_->options_.write_timeout;
  timeouts.idle_timeout = websocket::stream_base::none();
  timeouts.keep_alive_pings = false;
  ws.set_option(timeouts);
  ws.read_message_max(upgrade.max_message_bytes);
  ws.binary(true);
  ErrorCode ec;
  co_await ws.async_accept(request, Redirect(ec));
  if (ec) co_return;

  auto state = std::make_shared<WebSocketState>(strand_);
  websocket_ = state;
  if (stopping_) state->Finish();
  WebSocketReceiver receiver = upgrade.start ? upgrade.start(state) : WebSocketReceiver();
  // The writer runs beside the reader; `writer_done` wakes this coroutine
  // when it has ended, so `ws` outlives it.
  bool writer_running = true;
  net::steady_timer writer_done(strand_);
  writer_done.expires_at(net::steady_timer::time_point::max());
  net::co_spawn(strand_, WriteWebSocket(ws, state), [&writer_running, &writer_done](std::exception_ptr) {
    writer_running = false;
    writer_done.cancel();
  });
  beast::flat_buffer buffer;
  for (;;) {
    co_await ws.async_read(buffer, Redirect(ec));
    if (ec) break;
    std::string message = beast::buffers_to_string(buffer.data());
    buffer.consume(buffer.size());
    if (receiver && !receiver(std::move(message))) {
      state->paused_ = true;
      while (state->paused_ && !state->Done()) {
        state->resume().expires_at(net::steady_timer::time_point::max());
        co_await state->resume().async_wait(Redirect(ec));
      }
      ec = {};
    }
  }
  state->Finish();
  while (writer_running) {
    ErrorCode ignored;
    co_await writer_done.async_wait(Redirect(ignored));
  }
  websocket_.reset();
}

template <typename Stream>
net::awaitable<void> HttpServer::Impl::Connection<Stream>::WriteWebSocket(websocket::stream<Stream&>& ws,
                                                                          std::shared_ptr<WebSocketState> state) {
  ErrorCode ec;
  for (;;) {
    bool done = false;
    auto messages = state->Drain(&done);
    for (std::string& m : messages) {
      Arm(server_->options_.write_timeout);
      co_await ws.async_write(net::buffer(m), Redirect(ec));
      Disarm();
      state->Written(m.size());
      if (ec) {
        state->Finish();
        co_return;
      }
    }
    if (messages.empty()) {
      if (done) break;
      state->signal().expires_at(net::steady_timer::time_point::max());
      co_await state->signal().async_wait(Redirect(ec));
    }
  }
  if (ws.is_open()) co_await ws.async_close(websocket::close_code::normal, Redirect(ec));
}

Status HttpServer::Impl::SetUpTls() {
  const HttpTlsOptions& tls = *options_.tls;
  tls_.emplace(net::ssl::context::tls_server);
  SSL_CTX* ctx = tls_->native_handle();
  SSL_CTX_set_min_proto_version(ctx, kMinTlsVersion);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  ErrorCode ec;
  tls_->use_certificate_chain(net::buffer(tls.certificate_chain_pem), ec);
  if (ec) return InvalidError("TLS: certificate_chain_pem: " + ec.message());
  tls_->use_private_key(net::buffer(tls.private_key_pem), net::ssl::context::pem, ec);
  if (ec) return InvalidError("TLS: private_key_pem: " + ec.message());
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return InvalidError("TLS: private_key_pem does not match the certificate");
  }
  if (!tls.client_ca_pem.empty()) {
    BERTH_ASSIGN_OR_RETURN(client_cas_, LoadCaStore(tls.client_ca_pem, ctx));
    // Ask for a certificate, accept the handshake whatever comes (Go's
    // tls.RequestClientCert); ClientCertificateOf judges it afterwards.
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, [](int, X509_STORE_CTX*) { return 1; });
    // Resuming a session needs a context id once peers are verified.
    static constexpr unsigned char kSessionContext[] = "berth-apiserver";
    SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1);
  }
  return Status::Ok();
}

std::optional<ClientCertificate> HttpServer::Impl::ClientCertificateOf(SSL* ssl) const {
  X509* leaf = SSL_get0_peer_certificate(ssl);
  if (!client_cas_ || !leaf) return std::nullopt;
  ClientCertificate out;
  unsigned char* der = nullptr;
  const int der_len = i2d_X509(leaf, &der);
  if (der_len > 0) {
    auto info = pki::ParseCertificateDer(std::string_view(reinterpret_cast<const char*>(der), der_len));
    if (info.ok()) {
      out.common_name = std::move(info->common_name);
      out.organizations = std::move(info->organizations);
    }
  }
  OPENSSL_free(der);
  // The chain the client sent (on a server: without the leaf), verified for
  // client authentication against client_ca_pem now.
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, client_cas_.get(), leaf, SSL_get_peer_cert_chain(ssl));
  X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
  out.verified = X509_verify_cert(ctx) == 1;
  if (!out.verified) out.error = pki::VerifyErrorText(X509_STORE_CTX_get_error(ctx));
  X509_STORE_CTX_free(ctx);
  ERR_clear_error();
  return out;
}

Status HttpServer::Impl::Start() {
  if (options_.tls) BERTH_RETURN_IF_ERROR(SetUpTls());
  ErrorCode ec;
  auto address = net::ip::make_address(options_.address, ec);
  if (ec) return UnavailableError("invalid listen address \"" + options_.address + "\": " + ec.message());
  tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return UnavailableError("cannot listen on " + options_.address + ":" + std::to_string(options_.port) + ": " +
                            ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  work_.emplace(io_.get_executor());
  net::co_spawn(acceptor_strand_, AcceptLoop(), net::detached);
  const int n = std::max(1, options_.threads);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { io_.run(); });
  started_ = true;
  return Status::Ok();
}

net::awaitable<void> HttpServer::Impl::AcceptLoop() {
  const std::string refusal = RefusalResponse(options_.max_connections);
  // After a failed accept (EMFILE, ENFILE, ENOBUFS), wait before the next one,
  // 5 ms doubling to 1 s, as Go's http.Server.Serve does: the listening socket
  // stays readable, so retrying at once would spin.
  std::chrono::milliseconds backoff{0};
  net::steady_timer pause(acceptor_strand_);
  for (;;) {
    Strand strand = net::make_strand(io_);
    tcp::socket socket(strand);
    ErrorCode ec;
    co_await acceptor_.async_accept(socket, Redirect(ec));
    if (ec) {
      if (!acceptor_.is_open()) co_return;
      backoff = std::min<std::chrono::milliseconds>(backoff.count() == 0 ? std::chrono::milliseconds(5) : backoff * 2,
                                                    std::chrono::seconds(1));
      Logger("apiserver")->warn("accept failed: {}; retrying in {} ms", ec.message(), backoff.count());
      pause.expires_after(backoff);
      co_await pause.async_wait(Redirect(ec));
      continue;  // keep serving the connections we have
    }
    backoff = std::chrono::milliseconds(0);
    socket.set_option(tcp::no_delay(true), ec);
    SetTcpKeepAlive(socket);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) co_return;
      if (connections_.size() >= options_.max_connections && !CloseAnIdleConnectionLocked()) {
        // Answer without waiting (the response fits an empty socket buffer)
        // and close: the client learns at once instead of queueing. On a TLS
        // port a plain-text answer would only garble the handshake: close.
        socket.non_blocking(true, ec);
        if (!tls_) socket.write_some(net::buffer(refusal), ec);
        socket.shutdown(tcp::socket::shutdown_send, ec);
        socket.close(ec);
        counters_->connections_refused++;
        LogRefusalLocked();
        continue;
      }
      if (tls_) {
        SpawnLocked<TlsStream>(std::move(socket), strand);
      } else {
        SpawnLocked<tcp::socket>(std::move(socket), strand);
      }
    }
  }
}

template <typename Stream>
void HttpServer::Impl::SpawnLocked(tcp::socket socket, Strand strand) {
  const uint64_t id = next_id_++;
  auto conn = std::make_shared<Connection<Stream>>(this, std::move(socket), strand, id);
  connections_.emplace(id, conn);
  net::co_spawn(
      strand, [conn]() -> net::awaitable<void> { co_await conn->Run(); }, net::detached);
}

HttpServerStats HttpServer::Impl::Stats() const {
  HttpServerStats s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.open_connections = connections_.size();
  }
  s.stream_queued_bytes = counters_->stream_queued_bytes;
  s.stream_queued_bytes_peak = counters_->stream_queued_bytes_peak;
  s.streams_closed_unresponsive = counters_->streams_closed_unresponsive;
  s.streams_timed_out = counters_->streams_timed_out;
  s.connections_refused = counters_->connections_refused;
  s.idle_connections_closed = counters_->idle_connections_closed;
  s.connections_timed_out = counters_->connections_timed_out;
  return s;
}

void HttpServer::Impl::LogRefusalLocked() {
  // A TLS client refused at the cap sees only the connection close (no answer can be
  // written before a handshake): the operator learns of it here, at most every 10 s.
  ++refused_unlogged_;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log_ < std::chrono::seconds(10)) return;
  Logger("apiserver")
      ->warn(
          "refused {} new connection(s): {} open, the cap (max_connections), and every one has a request "
          "being answered or a stream (per-user bounds: per_user_limits.h)",
          refused_unlogged_, connections_.size());
  refused_unlogged_ = 0;
  last_refusal_log_ = now;
}

bool HttpServer::Impl::CloseAnIdleConnectionLocked() {
  // Connections asked to close but not yet gone still count; past this many beyond the
  // cap (requests that arrived as their connection was chosen), the cap holds.
  if (connections_.size() >= options_.max_connections + kMaxConnectionsClosing) return false;
  // In id order: the longest-open first. Idle keep-alive connections go before ones
  // without a whole request yet, so that a client that is mid-handshake is closed only
  // when nothing else could be.
  for (const bool keep_alive : {true, false}) {
    for (auto& [id, weak] : connections_) {
      auto c = weak.lock();
      if (c == nullptr || !(keep_alive ? c->idle_keep_alive.load() : c->awaiting_request.load())) continue;
      if (c->chosen.exchange(true)) continue;
      counters_->idle_connections_closed++;
      net::post(c->strand(), [c] { c->CloseIfIdle(); });
      return true;
    }
  }
  return false;
}

void HttpServer::Impl::Unregister(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  connections_.erase(id);
  cv_.notify_all();
}

void HttpServer::Impl::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  std::vector<std::shared_ptr<ConnectionBase>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (auto& [id, weak] : connections_) {
      if (auto c = weak.lock()) live.push_back(std::move(c));
    }
  }
  net::post(acceptor_strand_, [this] {
    ErrorCode ec;
    acceptor_.close(ec);
  });
  for (auto& c : live) net::post(c->strand(), [c] { c->BeginStop(); });
  live.clear();
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, options_.shutdown_grace, [this] { return connections_.empty(); });
    for (auto& [id, weak] : connections_) {
      if (auto c = weak.lock()) live.push_back(std::move(c));
    }
  }
  for (auto& c : live) net::post(c->strand(), [c] { c->ForceClose(); });
  live.clear();
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return connections_.empty(); });
  }
  work_.reset();
  io_.stop();
  for (auto& t : threads_) t.join();
  threads_.clear();
}

HttpServer::HttpServer(HttpServerOptions options, HttpHandler handler)
    : impl_(std::make_shared<Impl>(std::move(options), std::move(handler))) {}
HttpServer::~HttpServer() { Stop(); }
Status HttpServer::Start() { return impl_->Start(); }
uint16_t HttpServer::port() const { return impl_->port(); }
void HttpServer::Stop() { impl_->Stop(); }
HttpServerStats HttpServer::Stats() const { return impl_->Stats(); }

}  // namespace berth::apiserver
