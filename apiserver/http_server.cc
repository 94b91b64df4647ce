#include "apiserver/http_server.h"

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
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "apiserver/status_response.h"
#include "core/logging.h"

namespace berth::apiserver {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Strand = net::strand<net::io_context::executor_type>;
using ErrorCode = boost::system::error_code;

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k.size() == name.size() && std::equal(k.begin(), k.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      return v;
    }
  }
  return {};
}

namespace {

auto Redirect(ErrorCode& ec) { return net::redirect_error(net::use_awaitable, ec); }

// The transport's counters (HttpServerStats), shared with the streams, which
// may outlive the server.
struct Counters {
  std::atomic<size_t> stream_queued_bytes{0};
  std::atomic<size_t> stream_queued_bytes_peak{0};
  std::atomic<uint64_t> streams_closed_unresponsive{0};
  std::atomic<uint64_t> streams_timed_out{0};
  std::atomic<uint64_t> connections_refused{0};
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
  StreamState(Strand strand, std::string remote, size_t max_queued_bytes, std::shared_ptr<Counters> counters,
              std::function<void()> on_abort)
      : strand_(strand),
        remote_(std::move(remote)),
        signal_(strand),
        deadline_(strand),
        max_queued_bytes_(max_queued_bytes),
        counters_(std::move(counters)),
        on_abort_(std::move(on_abort)) {
    signal_.expires_at(net::steady_timer::time_point::max());
  }
  ~StreamState() override { counters_->stream_queued_bytes -= queued_bytes_; }

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
    {
      std::lock_guard<std::mutex> lock(mu());
      if (done_locked() || aborted_) return false;
      // A chunk that finds nothing queued is always taken (an object at the
      // size limit must pass); any other may not push the queue past the
      // bound. The initial state, written first, is not counted.
      const size_t live = queued_bytes_ - initial_bytes_;
      if (live > 0 && live + chunk.size() > max_queued_bytes_) {
        queued = live;
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
      Logger("apiserver")
          ->info("closing a stream whose client does not read: {}: {} bytes queued, limit {}", remote_, queued,
                 max_queued_bytes_);
      counters_->streams_closed_unresponsive++;
      Abort();
      return false;
    }
    Wake();
    return true;
  }

  void Close() override { Finish(); }

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
  const std::shared_ptr<Counters> counters_;
  const std::function<void()> on_abort_;
  std::deque<std::string> queue_;  // guarded by mu()
  size_t queued_bytes_ = 0;        // queued or drained, not yet written; guarded by mu()
  size_t initial_bytes_ = 0;       // of which WriteInitial chunks; guarded by mu()
  bool aborted_ = false;           // guarded by mu()
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

}  // namespace

class HttpServer::Impl : public std::enable_shared_from_this<HttpServer::Impl> {
 public:
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
  friend class Connection;
  net::awaitable<void> AcceptLoop();
  void Register(uint64_t id, std::weak_ptr<Connection> c);
  void Unregister(uint64_t id);

  HttpServerOptions options_;
  HttpHandler handler_;
  std::shared_ptr<Counters> counters_ = std::make_shared<Counters>();
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
  bool stopping_ = false;                                      // guarded by mu_
  uint64_t next_id_ = 0;                                       // guarded by mu_
  std::map<uint64_t, std::weak_ptr<Connection>> connections_;  // guarded by mu_
};

class HttpServer::Impl::Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(Impl* server, tcp::socket socket, Strand strand, uint64_t id)
      : server_(server), socket_(std::move(socket)), strand_(strand), id_(id), timer_(strand) {}

  net::awaitable<void> Run();

  // Runs on the strand: ends the connection as soon as it is idle.
  void BeginStop() {
    stopping_ = true;
    if (stream_) {
      stream_->Finish();
    } else if (!busy_) {
      ErrorCode ec;
      socket_.cancel(ec);
    }
  }
  void ForceClose() {
    ErrorCode ec;
    socket_.close(ec);
    if (stream_) stream_->Finish();
  }
  // Runs on the strand: closes the socket, failing whatever waits on it.
  void CloseSocket() {
    ErrorCode ec;
    socket_.close(ec);
  }
  const Strand& strand() const { return strand_; }

 private:
  net::awaitable<bool> WriteResponse(HttpResponse response, unsigned version, bool keep_alive);
  net::awaitable<void> WriteStream(StreamingResponse response, unsigned version);
  net::awaitable<void> Linger();
  // Closes the socket (counted as a timeout) unless Disarm() is called
  // within `timeout`. One deadline at a time; on the strand.
  void Arm(std::chrono::milliseconds timeout) {
    const uint64_t generation = ++timer_generation_;
    timer_.expires_after(timeout);
    timer_.async_wait([self = shared_from_this(), generation, timeout](ErrorCode ec) {
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
  void Shutdown() {
    ErrorCode ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    socket_.close(ec);
  }

  Impl* server_;
  tcp::socket socket_;
  Strand strand_;
  uint64_t id_;
  std::string remote_;  // "127.0.0.1:54321"; set when Run starts
  // Touched only on the strand.
  net::steady_timer timer_;
  uint64_t timer_generation_ = 0;
  bool stopping_ = false;
  bool busy_ = false;
  std::shared_ptr<StreamState> stream_;
};

net::awaitable<void> HttpServer::Impl::Connection::Run() {
  auto self = shared_from_this();
  beast::flat_buffer buffer;
  {
    ErrorCode ec;
    auto ep = socket_.remote_endpoint(ec);
    if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  const HttpServerOptions& options = server_->options_;
  // The first request's header is due read_header_timeout after the accept.
  Arm(options.read_header_timeout);
  bool first = true;
  while (!stopping_) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(options.max_body_bytes);
    parser.header_limit(256 * 1024);
    ErrorCode ec;
    if (!first) {
      // Keep-alive: the next request must start within idle_timeout; its
      // header is then due read_header_timeout after its first byte.
      if (buffer.size() == 0) {
        Arm(options.idle_timeout);
        co_await socket_.async_wait(tcp::socket::wait_read, Redirect(ec));
        if (ec || stopping_) break;
      }
      Arm(options.read_header_timeout);
    }
    first = false;
    co_await http::async_read_header(socket_, buffer, parser, Redirect(ec));
    if (!ec && !parser.is_done()) {
      Arm(options.read_body_timeout);
      co_await http::async_read(socket_, buffer, parser, Redirect(ec));
    }
    Disarm();
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
    if (auto* response = std::get_if<HttpResponse>(&result)) {
      bool ok = co_await WriteResponse(std::move(*response), version, keep_alive && !stopping_);
      busy_ = false;
      if (!ok || !keep_alive) break;
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

net::awaitable<bool> HttpServer::Impl::Connection::WriteResponse(HttpResponse response, unsigned version,
                                                                 bool keep_alive) {
  http::response<http::string_body> res;
  SetHead(res, version, response);
  res.body() = std::move(response.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  ErrorCode ec;
  Arm(server_->options_.write_timeout);
  co_await http::async_write(socket_, res, Redirect(ec));
  Disarm();
  co_return !ec;
}

// After answering a request whose body was not read (413), closing at once
// makes the kernel reset the connection while the client is still sending,
// and the client reports "broken pipe" instead of the response. Half-close,
// then read and discard what the client still sends (at most 64 MiB) until
// it closes, as Go's net/http lingers before closing.
net::awaitable<void> HttpServer::Impl::Connection::Linger() {
  ErrorCode ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  std::vector<char> sink(64 * 1024);
  size_t total = 0;
  Arm(server_->options_.read_body_timeout);
  while (!ec && !stopping_ && total < (size_t{64} << 20)) {
    total += co_await socket_.async_read_some(net::buffer(sink), Redirect(ec));
  }
  Disarm();
}

net::awaitable<void> HttpServer::Impl::Connection::WriteStream(StreamingResponse response, unsigned version) {
  http::response<http::empty_body> res;
  SetHead(res, version, response);
  res.chunked(true);
  http::response_serializer<http::empty_body> serializer(res);
  ErrorCode ec;
  const auto write_timeout = server_->options_.write_timeout;
  Arm(write_timeout);
  co_await http::async_write_header(socket_, serializer, Redirect(ec));
  Disarm();
  if (ec) co_return;

  std::weak_ptr<Connection> weak = shared_from_this();
  auto state = std::make_shared<StreamState>(strand_, remote_, server_->options_.max_stream_buffer_bytes,
                                             server_->counters_, [weak] {
                                               if (auto self = weak.lock())
                                                 net::post(self->strand_, [self] { self->CloseSocket(); });
                                             });
  stream_ = state;
  if (stopping_) state->Finish();
  if (response.timeout.count() > 0) state->StartDeadline(response.timeout);
  // The client sends nothing while a response streams: readability means it
  // closed the connection (or broke the protocol); either way the stream ends.
  socket_.async_wait(tcp::socket::wait_read, [state](ErrorCode) { state->Finish(); });
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
      co_await net::async_write(socket_, http::make_chunk(net::buffer(batch)), Redirect(ec));
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
  if (!state->aborted()) {
    Arm(write_timeout);
    co_await net::async_write(socket_, http::make_chunk_last(), Redirect(ec));
    Disarm();
  }
  stream_.reset();
}

Status HttpServer::Impl::Start() {
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
    std::shared_ptr<Connection> conn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) co_return;
      if (connections_.size() >= options_.max_connections) {
        // Answer without waiting (the response fits an empty socket buffer)
        // and close: the client learns at once instead of queueing.
        socket.non_blocking(true, ec);
        socket.write_some(net::buffer(refusal), ec);
        socket.shutdown(tcp::socket::shutdown_send, ec);
        socket.close(ec);
        counters_->connections_refused++;
        continue;
      }
      uint64_t id = next_id_++;
      conn = std::make_shared<Connection>(this, std::move(socket), strand, id);
      connections_.emplace(id, conn);
    }
    net::co_spawn(
        strand, [conn]() -> net::awaitable<void> { co_await conn->Run(); }, net::detached);
  }
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
  s.connections_timed_out = counters_->connections_timed_out;
  return s;
}

void HttpServer::Impl::Unregister(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  connections_.erase(id);
  cv_.notify_all();
}

void HttpServer::Impl::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  std::vector<std::shared_ptr<Connection>> live;
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
