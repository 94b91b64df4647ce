#include "client/http_client.h"

// Boost 1.74's Asio needs <utility> before its headers with GCC 12.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cctype>
#include <limits>
#include <mutex>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <optional>
#include <thread>
#include <utility>

#include "client/tls_client.h"

namespace berth::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using SteadyTime = std::chrono::steady_clock::time_point;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

namespace {

// "GET" -> "Get", as Go's net/http error messages print the method.
std::string GoMethod(std::string_view method) {
  std::string out;
  for (size_t i = 0; i < method.size(); ++i) {
    out += static_cast<char>(i == 0 ? std::toupper(method[i]) : std::tolower(method[i]));
  }
  return out;
}

// One keep-alive connection, plain TCP or TLS over it. Every operation runs
// on the connection's own io_context on the calling thread, bounded by the
// tcp_stream's deadline.
struct Connection {
  asio::io_context ioc;
  std::optional<beast::tcp_stream> plain;
  std::optional<TlsStream> tls;
  beast::flat_buffer buffer;
  bool reused = false;

  // The TCP stream under the transport (it carries the deadline).
  beast::tcp_stream& tcp() { return tls ? beast::get_lowest_layer(*tls) : *plain; }

  // Runs `initiate(stream, handler)` on the transport's stream (plain or TLS)
  // until it completes or `deadline` passes.
  template <class Initiate>
  beast::error_code Run(SteadyTime deadline, Initiate initiate) {
    beast::error_code result = asio::error::would_block;
    if (deadline == SteadyTime::max()) {
      tcp().expires_never();
    } else {
      tcp().expires_at(deadline);
    }
    auto handler = [&result](beast::error_code ec, auto&&...) { result = ec; };
    if (tls) {
      initiate(*tls, handler);
    } else {
      initiate(*plain, handler);
    }
    ioc.restart();
    ioc.run();
    return result;
  }

  // False when the server closed the idle connection (EOF readable) or sent
  // something unexpected.
  bool Alive() {
    auto& s = tcp().socket();
    if (!s.is_open()) return false;
    beast::error_code ec, ignored;
    s.non_blocking(true, ec);
    if (ec) return false;
    char byte;
    s.read_some(asio::buffer(&byte, 1), ec);
    s.non_blocking(false, ignored);
    return ec == asio::error::would_block || ec == asio::error::try_again;
  }
};

// The server closed the connection (TLS: possibly without close_notify, which
// OpenSSL reports as a truncated stream).
bool IsEof(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof || ec == ssl::error::stream_truncated ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
}

// Where a request goes, for transport error messages.
struct Endpoint {
  std::string scheme;     // "http", "https"
  std::string host_port;  // "127.0.0.1:6443", "[::1]:6443"

  std::string Url(const std::string& target) const { return scheme + "://" + host_port + target; }

  Status Error(const std::string& method, const std::string& target, const beast::error_code& ec,
               bool connecting) const {
    std::string msg = GoMethod(method) + " \"" + Url(target) + "\": ";
    if (connecting) msg += "dial tcp " + host_port + ": connect: ";
    if (ec == beast::error::timeout) {
      return TimeoutError(msg + "context deadline exceeded (Client.Timeout exceeded)");
    }
    return UnavailableError(msg + ec.message());
  }
};

// A 2xx chunked (or close-delimited) body read by a thread of its own into a
// BodySink.
class HttpBodyStream final : public BodyStream {
 public:
  HttpBodyStream(std::unique_ptr<Connection> conn, std::unique_ptr<http::response_parser<http::buffer_body>> parser,
                 std::shared_ptr<BodySink> sink)
      : conn_(std::move(conn)), parser_(std::move(parser)), sink_(std::move(sink)) {}
  ~HttpBodyStream() override {
    Cancel();
    if (reader_.joinable()) reader_.join();
  }

  void Start(std::function<Status(const beast::error_code&)> to_status) {
    reader_ = std::thread([this, to_status = std::move(to_status)] { sink_->OnEnd(ReadLoop(to_status)); });
  }

  void Cancel() override {
    std::lock_guard<std::mutex> l(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    // Runs inside the reader's io_context: closing the socket there aborts a
    // pending read safely (sockets are not thread-safe).
    asio::post(conn_->ioc, [conn = conn_.get()] {
      beast::error_code ec;
      conn->tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
      conn->tcp().socket().close(ec);
    });
  }

 private:
  Status ReadLoop(const std::function<Status(const beast::error_code&)>& to_status) {
    auto& parser = *parser_;
    char chunk[16384];
    for (;;) {
      if (parser.is_done()) return Status::Ok();
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof chunk;
      beast::error_code ec = conn_->Run(SteadyTime::max(), [&](auto& stream, auto handler) {
        http::async_read_some(stream, conn_->buffer, parser, std::move(handler));
      });
      if (ec == http::error::need_buffer) ec = {};
      std::string_view got(chunk, sizeof chunk - parser.get().body().size);
      if (!got.empty() && !sink_->OnBytes(got)) {
        beast::error_code ignored;
        conn_->tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
        conn_->tcp().socket().close(ignored);
        return Status::Ok();
      }
      if (ec) {
        bool cancelled;
        {
          std::lock_guard<std::mutex> l(mu_);
          cancelled = cancelled_;
        }
        if (cancelled || ec == asio::error::operation_aborted) return Status::Ok();
        // The body is not done (a done one returned above): the server went
        // away mid-body, without the final chunk. Go's net/http reports
        // io.ErrUnexpectedEOF.
        if (IsEof(ec) || ec == http::error::partial_message) return UnavailableError("unexpected EOF");
        return to_status(ec);
      }
    }
  }

  std::unique_ptr<Connection> conn_;
  std::unique_ptr<http::response_parser<http::buffer_body>> parser_;
  std::shared_ptr<BodySink> sink_;
  std::thread reader_;
  std::mutex mu_;
  bool cancelled_ = false;
};

class HttpTransport final : public Transport {
 public:
  HttpTransport(RestConfig config, HttpClientOptions options) : cfg_(std::move(config)), opt_(std::move(options)) {
    std::string host = cfg_.url.host.find(':') != std::string::npos ? "[" + cfg_.url.host + "]" : cfg_.url.host;
    endpoint_.scheme = cfg_.url.scheme.empty() ? "http" : cfg_.url.scheme;
    endpoint_.host_port = host + ":" + std::to_string(cfg_.url.port);
    if (endpoint_.scheme == "https") tls_status_ = SetUpTls();
  }

  StatusOr<RawResponse> Do(const RawRequest& r) override {
    const std::string target = cfg_.url.path_prefix + r.target;
    const SteadyTime deadline = Deadline();
    const bool idempotent = r.method == "GET" || r.method == "PUT" || r.method == "DELETE" || r.method == "HEAD";
    http::request<http::string_body> req = Build(r, target);
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Connection> c = attempt == 0 ? TakeIdle() : nullptr;
      if (!c) {
        BERTH_ASSIGN_OR_RETURN(c, Connect(r, target, deadline));
      }
      const bool retriable = c->reused && attempt == 0;
      beast::error_code ec =
          c->Run(deadline, [&](auto& stream, auto handler) { http::async_write(stream, req, std::move(handler)); });
      if (ec) {
        if (retriable && ec != beast::error::timeout) continue;
        return endpoint_.Error(r.method, target, ec, false);
      }
      http::response_parser<http::string_body> parser;
      parser.body_limit(opt_.max_response_bytes);
      ec = c->Run(deadline,
                  [&](auto& stream, auto handler) { http::async_read(stream, c->buffer, parser, std::move(handler)); });
      if (ec) {
        if (retriable && idempotent && !parser.got_some() && IsEof(ec)) continue;
        return endpoint_.Error(r.method, target, ec, false);
      }
      http::response<http::string_body> res = parser.release();
      RawResponse out;
      out.status = static_cast<int>(res.result_int());
      out.content_type = std::string(res[http::field::content_type]);
      out.body = std::move(res.body());
      if (res.keep_alive()) ReturnIdle(std::move(c));
      return out;
    }
  }

  StatusOr<StreamStart> Stream(const RawRequest& r, std::shared_ptr<BodySink> sink) override {
    const std::string target = cfg_.url.path_prefix + r.target;
    const SteadyTime deadline = Deadline();
    BERTH_ASSIGN_OR_RETURN(std::unique_ptr<Connection> c, Connect(r, target, deadline));
    auto req = Build(r, target);
    req.keep_alive(false);
    beast::error_code ec =
        c->Run(deadline, [&](auto& stream, auto handler) { http::async_write(stream, req, std::move(handler)); });
    if (ec) return endpoint_.Error(r.method, target, ec, false);
    auto parser = std::make_unique<http::response_parser<http::buffer_body>>();
    parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    ec = c->Run(deadline, [&](auto& stream, auto handler) {
      http::async_read_header(stream, c->buffer, *parser, std::move(handler));
    });
    if (ec) return endpoint_.Error(r.method, target, ec, false);
    StreamStart out;
    out.response.status = static_cast<int>(parser->get().result_int());
    out.response.content_type = std::string(parser->get()[http::field::content_type]);
    if (out.response.status >= 200 && out.response.status < 300) {
      auto stream = std::make_unique<HttpBodyStream>(std::move(c), std::move(parser), std::move(sink));
      stream->Start([endpoint = endpoint_, method = r.method, target](const beast::error_code& e) {
        return endpoint.Error(method, target, e, false);
      });
      out.stream = std::move(stream);
      return out;
    }
    // An error answer: read its (small) body whole.
    char chunk[16384];
    while (!parser->is_done() && out.response.body.size() < opt_.max_response_bytes) {
      parser->get().body().data = chunk;
      parser->get().body().size = sizeof chunk;
      ec = c->Run(deadline, [&](auto& stream, auto handler) {
        http::async_read_some(stream, c->buffer, *parser, std::move(handler));
      });
      if (ec == http::error::need_buffer) ec = {};
      out.response.body.append(chunk, sizeof chunk - parser->get().body().size);
      if (ec) {
        if (IsEof(ec)) break;
        return endpoint_.Error(r.method, target, ec, false);
      }
    }
    return out;
  }

 private:
  SteadyTime Deadline() const {
    return std::chrono::steady_clock::now() +
           std::chrono::duration_cast<std::chrono::steady_clock::duration>(opt_.request_timeout);
  }

  std::unique_ptr<Connection> TakeIdle() {
    std::lock_guard<std::mutex> l(mu_);
    while (!idle_.empty()) {
      std::unique_ptr<Connection> c = std::move(idle_.back());
      idle_.pop_back();
      if (c->Alive()) return c;
    }
    return nullptr;
  }

  void ReturnIdle(std::unique_ptr<Connection> c) {
    if (opt_.max_idle_connections == 0) return;  // no pool: the connection closes
    c->reused = true;
    std::lock_guard<std::mutex> l(mu_);
    if (idle_.size() >= opt_.max_idle_connections) idle_.erase(idle_.begin());
    idle_.push_back(std::move(c));
  }

  // The TLS client context (client/tls_client.h).
  Status SetUpTls() {
    tls_.emplace(ssl::context::tls_client);
    return SetUpTlsClientContext(*tls_, cfg_);
  }

  // The handshake on a connected `c`: SNI (unless the name is an IP address,
  // as Go's crypto/tls omits it) and the name or IP checked against the
  // certificate's SANs.
  Status Handshake(Connection* c, const RawRequest& r, const std::string& target, SteadyTime deadline) {
    const std::string name = cfg_.tls_server_name.empty() ? cfg_.url.host : cfg_.tls_server_name;
    SSL* ssl = c->tls->native_handle();
    beast::error_code ec;
    SetTlsServerName(ssl, name, !cfg_.insecure_skip_tls_verify);
    ec = c->Run(deadline, [&](auto& stream, auto handler) {
      if constexpr (std::is_same_v<std::decay_t<decltype(stream)>, TlsStream>) {
        stream.async_handshake(ssl::stream_base::client, std::move(handler));
      }
    });
    if (!ec) return Status::Ok();
    const long verify = SSL_get_verify_result(ssl);
    ERR_clear_error();
    if (ec != beast::error::timeout && verify != X509_V_OK) {
      return UnavailableError(GoMethod(r.method) + " \"" + endpoint_.Url(target) +
                              "\": tls: failed to verify certificate: " + TlsVerifyErrorText(verify, name));
    }
    return endpoint_.Error(r.method, target, ec, false);
  }

  StatusOr<std::unique_ptr<Connection>> Connect(const RawRequest& r, const std::string& target, SteadyTime deadline) {
    BERTH_RETURN_IF_ERROR(tls_status_);
    auto c = std::make_unique<Connection>();
    if (tls_) {
      c->tls.emplace(c->ioc, *tls_);
    } else {
      c->plain.emplace(c->ioc);
    }
    tcp::resolver resolver(c->ioc);
    beast::error_code ec;
    auto endpoints = resolver.resolve(cfg_.url.host, std::to_string(cfg_.url.port), ec);
    if (ec) return endpoint_.Error(r.method, target, ec, true);
    ec = c->Run(deadline, [&](auto&, auto handler) {
      c->tcp().async_connect(endpoints,
                             [h = std::move(handler)](beast::error_code e, const tcp::endpoint&) mutable { h(e); });
    });
    if (ec) return endpoint_.Error(r.method, target, ec, true);
    c->tcp().socket().set_option(tcp::no_delay(true), ec);
    if (tls_) BERTH_RETURN_IF_ERROR(Handshake(c.get(), r, target, deadline));
    return c;
  }

  http::request<http::string_body> Build(const RawRequest& r, const std::string& target) const {
    http::request<http::string_body> req;
    req.method_string(r.method);
    req.target(target);
    req.version(11);
    req.set(http::field::host, endpoint_.host_port);
    req.set(http::field::user_agent, opt_.user_agent);
    if (!cfg_.bearer_token.empty()) req.set(http::field::authorization, "Bearer " + cfg_.bearer_token);
    for (const auto& [k, v] : RequestHeaders(r)) req.set(k, v);
    req.keep_alive(true);
    req.body() = r.object ? r.object->dump(-1, ' ', false, api::Object::error_handler_t::replace) : r.body;
    req.prepare_payload();
    return req;
  }

  const RestConfig cfg_;
  const HttpClientOptions opt_;
  Endpoint endpoint_;
  std::optional<ssl::context> tls_;  // https:// only
  Status tls_status_;                // why tls_ could not be set up
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;  // most recently used last
};

}  // namespace

std::unique_ptr<Transport> NewHttpTransport(RestConfig config, HttpClientOptions options) {
  return std::make_unique<HttpTransport>(std::move(config), std::move(options));
}

HttpClient::HttpClient(RestConfig config, HttpClientOptions options)
    : RestClient(NewHttpTransport(config, std::move(options))), config_(std::move(config)) {}

HttpClient::~HttpClient() = default;

}  // namespace berth::client
