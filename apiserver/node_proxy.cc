#include "apiserver/node_proxy.h"

// Boost 1.74's Asio needs <utility> before its headers with GCC 12.
#include <utility>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <optional>
#include <set>
#include <thread>

#include "api/object.h"
#include "api/unstructured.h"
#include "apiserver/remote_command.h"
#include "apiserver/status_response.h"
#include "client/http_client.h"
#include "client/tls_client.h"

namespace berth::apiserver {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using NodeWebSocket = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;

StatusOr<NodeStreamingEndpoint> NodeStreamingEndpointOf(const api::Object& node) {
  NodeStreamingEndpoint e;
  e.server_name = api::Name(node);
  const std::string quoted = "node \"" + e.server_name + "\"";
  const api::Object& port = api::NestedField(node, {"status", "daemonEndpoints", "kubeletEndpoint", "Port"});
  const int64_t p = port.is_null() ? 0 : port.is_number_integer() ? port.get<int64_t>() : -1;
  if (p == 0) {
    return UnavailableError(quoted +
                            " has no streaming endpoint (status.daemonEndpoints.kubeletEndpoint.Port is 0): its "
                            "agent runs without the cluster's CA in its kubeconfig, so it serves no logs, exec, "
                            "attach or port-forward");
  }
  if (p < 0 || p > 65535) {
    return UnavailableError(quoted + " has no streaming endpoint: status.daemonEndpoints.kubeletEndpoint.Port " +
                            port.dump() +
                            " is not a port (1-65535)");
  }
  e.port = static_cast<uint16_t>(p);
  std::string hostname;
  if (const api::Object& addresses = api::NestedField(node, {"status", "addresses"}); addresses.is_array()) {
    for (const api::Object& a : addresses) {
      if (!a.is_object()) continue;
      const std::string type = api::NestedString(a, {"type"}), address = api::NestedString(a, {"address"});
      if (type == "InternalIP" && e.host.empty()) e.host = address;
      if (type == "Hostname" && hostname.empty()) hostname = address;
    }
  }
  if (e.host.empty()) e.host = hostname;
  if (e.host.empty()) return UnavailableError(quoted + " has no address in status.addresses");
  e.ca_pem = api::NestedString(node, {"metadata", "annotations", kKubeletServingCaAnnotation});
  if (e.ca_pem.empty()) {
    return UnavailableError(quoted + " has no " + std::string(kKubeletServingCaAnnotation) +
                            " annotation: its streaming server cannot be verified");
  }
  return e;
}

namespace {

std::string HostPort(const NodeStreamingEndpoint& e) {
  const bool v6 = e.host.find(':') != std::string::npos;
  return (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
}

client::RestConfig ConfigFor(const NodeStreamingEndpoint& e, const NodeProxyOptions& options) {
  client::RestConfig c;
  c.server = "https://" + HostPort(e);
  if (auto url = client::ParseServerUrl(c.server); url.ok()) c.url = *url;
  c.certificate_authority_pem = e.ca_pem;
  c.client_certificate_pem = options.client_certificate_pem;
  c.client_key_pem = options.client_key_pem;
  c.tls_server_name = e.server_name;
  c.user = "kube-apiserver-kubelet-client";
  return c;
}

// A dial's outcome: the node's connection after its answer to the upgrade.
struct DialResult {
  std::string node;                   // its name
  std::shared_ptr<ssl::context> tls;  // outlives ws
  std::unique_ptr<NodeWebSocket> ws;
  websocket::response_type response;
  std::string error;  // a failure before the node answered the upgrade
};

HttpResponse DialError(const std::string& why) {
  return StatusResponse(InternalError("error dialing backend: " + why));
}

}  // namespace

// The proxy's I/O thread and what it relays.
struct NodeProxy::Impl : std::enable_shared_from_this<Impl> {
  explicit Impl(NodeProxyOptions o) : options(std::move(o)), work(asio::make_work_guard(ioc)) {
    thread = std::thread([this] { ioc.run(); });
  }

  class WebSocketRelay;
  class LogRelay;

  const NodeProxyOptions options;
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;

  mutable std::mutex mu;
  bool stopped = false;                                // guarded by mu
  std::size_t sessions = 0;                            // guarded by mu
  std::set<std::shared_ptr<WebSocketRelay>> sockets;   // guarded by mu

  // Takes a session slot, or says why not.
  std::optional<HttpResponse> Admit() {
    std::lock_guard<std::mutex> lock(mu);
    if (stopped) return StatusResponse(UnavailableError("the API server is shutting down"));
    if (sessions >= kMaxNodeProxySessions) {
      return TooManyRequestsResponse("too many sessions to node agents are open (" +
                                     std::to_string(kMaxNodeProxySessions) + ")");
    }
    ++sessions;
    return std::nullopt;
  }
  void SessionEnded() {
    std::lock_guard<std::mutex> lock(mu);
    --sessions;
  }

  HandlerResult ForwardWebSocket(const HttpRequest& req, const NodeStreamingEndpoint& e);
  // The client's answer once the node answered the upgrade (or could not be reached).
  ImmediateResult Upgraded(DialResult dialed);
  HandlerResult ForwardHttp(const HttpRequest& req, const NodeStreamingEndpoint& e);
};

// One relayed WebSocket: the client's session (through HttpServer) and the
// node's connection (on the proxy's I/O thread, where every operation on it
// runs).
class NodeProxy::Impl::WebSocketRelay : public std::enable_shared_from_this<WebSocketRelay> {
 public:
  // `protocol`: the subprotocol the node chose; `node`: its name, for messages.
  WebSocketRelay(std::weak_ptr<Impl> impl, std::shared_ptr<ssl::context> tls, std::unique_ptr<NodeWebSocket> ws,
                 std::string protocol, std::string node)
      : impl_(std::move(impl)),
        tls_(std::move(tls)),
        ws_(std::move(ws)),
        protocol_(std::move(protocol)),
        node_(std::move(node)) {}

  // HttpServer's start: begins both directions; returns the client's receiver.
  WebSocketReceiver Start(std::shared_ptr<WebSocketSession> session) {
    session_ = session;
    auto self = shared_from_this();
    Post([self] { asio::co_spawn(self->ws_->get_executor(), self->ReadFromNode(), asio::detached); });
    session->OnDone([self] { self->Post([self] { self->CloseNode(); }); });
    return [self](std::string message) { return self->FromClient(std::move(message)); };
  }

  // Ends both sides (the proxy is stopping).
  void Abort() {
    auto self = shared_from_this();
    Post([self] {
      self->CloseNode();
      if (self->session_) self->session_->Close();
    });
  }

  // The relay never started (the client went away before the upgrade): close the node's side.
  void Discard() {
    auto self = shared_from_this();
    Post([self] { self->CloseNode(); });
  }

 private:
  void Post(std::function<void()> fn) { asio::post(ws_->get_executor(), std::move(fn)); }

  // On the client's I/O thread; must not block. Pauses the client while too
  // much waits for the node.
  bool FromClient(std::string message) {
    const std::size_t n = message.size();
    queued_ += n;
    auto self = shared_from_this();
    Post([self, m = std::move(message)]() mutable {
      self->outbound_.push_back(std::move(m));
      if (!self->writing_) {
        self->writing_ = true;
        asio::co_spawn(self->ws_->get_executor(), self->WriteToNode(), asio::detached);
      }
    });
    if (queued_ <= kNodeProxyQueueBytes) return true;
    paused_ = true;
    // The writer may have drained everything before `paused_` was set.
    return queued_ <= kNodeProxyQueueBytes && paused_.exchange(false);
  }

  // Started with writing_ set; clears it when nothing is left to write.
  asio::awaitable<void> WriteToNode() {
    auto self = shared_from_this();
    while (!outbound_.empty() && !closed_) {
      std::string m = std::move(outbound_.front());
      outbound_.pop_front();
      beast::error_code ec;
      ws_->binary(true);
      co_await ws_->async_write(asio::buffer(m), asio::redirect_error(asio::use_awaitable, ec));
      queued_ -= m.size();
      if (queued_ <= kNodeProxyQueueBytes && paused_.exchange(false) && session_) session_->ResumeReading();
      if (ec) {
        CloseNode();
        if (session_) session_->Close();
        break;
      }
    }
    writing_ = false;
  }

  asio::awaitable<void> ReadFromNode() {
    auto self = shared_from_this();
    asio::steady_timer wait(ws_->get_executor());
    beast::error_code ec;
    while (!closed_) {
      beast::flat_buffer buffer;
      co_await ws_->async_read(buffer, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
      while (session_->queued_bytes() > kNodeProxyQueueBytes && !session_->Done()) {
        wait.expires_after(std::chrono::milliseconds(10));
        co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      if (!session_->Write(beast::buffers_to_string(buffer.data()))) break;
    }
    // The node ended the session (its close frame: the command exited) or
    // the connection: the client's session ends after what is queued. A
    // connection lost without the node's close frame (the agent died, the
    // network broke) is an error the client must see: for the remote-command
    // protocols a Failure on the error stream, so `kubectl exec` exits non-zero
    // instead of taking the lost command for a success.
    if (ec && ec != websocket::error::closed && !closed_ &&
        (protocol_ == kStreamProtocolV5 || protocol_ == kStreamProtocolV4)) {
      session_->Write(EncodeFrame(
          kErrorStream, ErrorStatusJson(UnavailableError("error proxying to node \"" + node_ +
                                                         "\": the connection to its agent was lost: " + ec.message()))));
    }
    session_->Close();
    CloseNode();
    if (auto impl = impl_.lock()) {
      {
        std::lock_guard<std::mutex> lock(impl->mu);
        impl->sockets.erase(self);
      }
      impl->SessionEnded();
    }
  }

  void CloseNode() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    beast::get_lowest_layer(*ws_).socket().shutdown(tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(*ws_).socket().close(ec);
  }

  const std::weak_ptr<Impl> impl_;
  const std::shared_ptr<ssl::context> tls_;  // outlives ws_
  std::unique_ptr<NodeWebSocket> ws_;
  const std::string protocol_;
  const std::string node_;
  std::shared_ptr<WebSocketSession> session_;  // set by Start, before any use on the I/O thread
  std::atomic<std::size_t> queued_{0};         // client bytes not yet written to the node
  std::atomic<bool> paused_{false};            // the client's reading is paused
  std::deque<std::string> outbound_;           // on the I/O thread
  bool writing_ = false;                       // on the I/O thread
  bool closed_ = false;                        // on the I/O thread
};

namespace {

// Connects, verifies the node's certificate and offers the upgrade.
// `tls` is held for as long as the dial runs: its caller may stop waiting.
asio::awaitable<DialResult> DialWebSocket(std::shared_ptr<ssl::context> tls, NodeStreamingEndpoint e,
                                          std::string target, std::string protocols,
                                          std::chrono::milliseconds timeout) {
  DialResult d;
  d.node = e.server_name;
  d.tls = tls;
  auto executor = co_await asio::this_coro::executor;
  beast::error_code ec;
  const std::string host_port = HostPort(e);
  tcp::resolver resolver(executor);
  auto endpoints =
      co_await resolver.async_resolve(e.host, std::to_string(e.port), asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    d.error = "dial tcp " + host_port + ": lookup " + e.host + ": " + ec.message();
    co_return d;
  }
  d.ws = std::make_unique<NodeWebSocket>(executor, *tls);
  auto& tcp_stream = beast::get_lowest_layer(*d.ws);
  tcp_stream.expires_after(timeout);
  co_await tcp_stream.async_connect(endpoints, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    d.error = "dial tcp " + host_port + ": " + (ec == beast::error::timeout ? "i/o timeout" : "connect: " + ec.message());
    co_return d;
  }
  SSL* native = d.ws->next_layer().native_handle();
  client::SetTlsServerName(native, e.server_name, true);
  co_await d.ws->next_layer().async_handshake(ssl::stream_base::client, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    const long verify = SSL_get_verify_result(native);
    ERR_clear_error();
    d.error = ec != beast::error::timeout && verify != X509_V_OK
                  ? "tls: failed to verify certificate: " + client::TlsVerifyErrorText(verify, e.server_name)
                  : "tls handshake with " + host_port + ": " +
                        (ec == beast::error::timeout ? "i/o timeout" : ec.message());
    co_return d;
  }
  tcp_stream.expires_never();
  websocket::stream_base::timeout t{};
  t.handshake_timeout = timeout;
  t.idle_timeout = websocket::stream_base::none();
  t.keep_alive_pings = false;
  d.ws->set_option(t);
  d.ws->set_option(websocket::stream_base::decorator([protocols](websocket::request_type& r) {
    if (!protocols.empty()) r.set(beast::http::field::sec_websocket_protocol, protocols);
    r.set(beast::http::field::user_agent, "berth-apiserver");
  }));
  d.ws->read_message_max(kMaxWebSocketMessageBytes);
  co_await d.ws->async_handshake(d.response, host_port, target, asio::redirect_error(asio::use_awaitable, ec));
  if (ec && d.response.result_int() == 0) {
    d.error = "websocket handshake with " + host_port + ": " + ec.message();
  }
  co_return d;
}

}  // namespace

HandlerResult NodeProxy::Impl::ForwardWebSocket(const HttpRequest& req, const NodeStreamingEndpoint& e) {
  auto tls = std::make_shared<ssl::context>(ssl::context::tls_client);
  if (Status s = client::SetUpTlsClientContext(*tls, ConfigFor(e, options)); !s.ok()) {
    SessionEnded();
    return DialError(s.message());
  }
  DeferredResponse deferred;
  deferred.start = [self = shared_from_this(), tls, e, target = req.target,
                    protocols = std::string(req.Header("Sec-WebSocket-Protocol"))](
                       std::function<void(ImmediateResult)> reply) {
    asio::co_spawn(self->ioc, DialWebSocket(tls, e, target, protocols, self->options.dial_timeout),
                   [self, reply = std::move(reply)](std::exception_ptr error, DialResult dialed) {
                     if (error) {
                       try {
                         std::rethrow_exception(error);
                       } catch (const std::exception& ex) {
                         dialed.error = ex.what();
                       }
                     }
                     reply(self->Upgraded(std::move(dialed)));
                   });
  };
  return deferred;
}

ImmediateResult NodeProxy::Impl::Upgraded(DialResult dialed) {
  if (!dialed.error.empty()) {
    SessionEnded();
    return DialError(dialed.error);
  }
  if (dialed.response.result_int() != 101) {
    // The node's answer (a Status: 400, 404, 429, 500...), passed through.
    SessionEnded();
    HttpResponse r;
    r.status = dialed.response.result_int();
    r.content_type = std::string(dialed.response[beast::http::field::content_type]);
    r.body = std::move(dialed.response.body());
    return r;
  }
  const std::string protocol(dialed.response[beast::http::field::sec_websocket_protocol]);
  auto relay =
      std::make_shared<WebSocketRelay>(weak_from_this(), dialed.tls, std::move(dialed.ws), protocol, dialed.node);
  {
    std::lock_guard<std::mutex> lock(mu);
    sockets.insert(relay);
  }
  // Until the upgrade starts the relay, the guard owns the node's side: an
  // upgrade that never starts (the client went away) closes it.
  struct Guard {
    std::shared_ptr<WebSocketRelay> relay;
    std::weak_ptr<Impl> impl;
    bool started = false;
    ~Guard() {
      if (started) return;
      relay->Discard();
      if (auto i = impl.lock()) {
        {
          std::lock_guard<std::mutex> lock(i->mu);
          i->sockets.erase(relay);
        }
        i->SessionEnded();
      }
    }
  };
  auto guard = std::make_shared<Guard>();  // built in place: a moved-from copy would discard the relay
  guard->relay = relay;
  guard->impl = weak_from_this();
  WebSocketUpgrade up;
  up.protocol = protocol;
  up.start = [guard](std::shared_ptr<WebSocketSession> session) {
    guard->started = true;
    return guard->relay->Start(std::move(session));
  };
  return up;
}

// One relayed HTTP answer (pods/log): the node's body, read by the
// transport's reader thread, written to the client's stream.
class NodeProxy::Impl::LogRelay : public client::BodySink {
 public:
  // Called once the client's stream exists (HttpServer's start).
  void Attach(std::shared_ptr<ResponseStream> stream) {
    std::unique_lock<std::mutex> lock(mu_);
    if (ended_) {
      const bool failed = failed_;
      lock.unlock();
      failed ? stream->Fail() : stream->Close();
      return;
    }
    stream_ = std::move(stream);
    cv_.notify_all();
  }
  // The client's stream will never exist.
  void Abandon() {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
    cv_.notify_all();
  }

  bool OnBytes(std::string_view bytes) override {
    std::shared_ptr<ResponseStream> stream;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stream_ != nullptr || abandoned_; });
      if (abandoned_) return false;
      stream = stream_;
    }
    while (stream->queued_bytes() > kNodeProxyQueueBytes && !stream->Done()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return stream->Write(std::string(bytes));
  }
  // A node that went away mid-body fails the client's stream too (no final
  // chunk), so `kubectl logs -f` reports the error instead of a normal end.
  void OnEnd(Status status) override {
    std::shared_ptr<ResponseStream> stream;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
      failed_ = !status.ok();
      stream = stream_;
    }
    if (stream) status.ok() ? stream->Close() : stream->Fail();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<ResponseStream> stream_;  // guarded by mu_
  bool ended_ = false;                      // guarded by mu_
  bool failed_ = false;                     // the node's body was cut short; guarded by mu_
  bool abandoned_ = false;                  // guarded by mu_
};

HandlerResult NodeProxy::Impl::ForwardHttp(const HttpRequest& req, const NodeStreamingEndpoint& e) {
  client::HttpClientOptions o;
  o.request_timeout = std::chrono::duration_cast<Duration>(options.dial_timeout);
  o.max_idle_connections = 0;
  o.max_response_bytes = 1 << 20;  // an error answer's body
  o.user_agent = "berth-apiserver";
  // Owned by the relay's holder: the transport, the body being read, and the sink.
  struct Held {
    std::unique_ptr<client::Transport> transport;
    std::unique_ptr<client::BodyStream> body;
    std::shared_ptr<LogRelay> sink;
    std::weak_ptr<Impl> impl;
    ~Held() {
      sink->Abandon();
      if (body) body->Cancel();
      body.reset();  // joins the reader
      if (auto i = impl.lock()) i->SessionEnded();
    }
  };
  auto held = std::make_shared<Held>();
  held->transport = client::NewHttpTransport(ConfigFor(e, options), o);
  held->sink = std::make_shared<LogRelay>();
  held->impl = weak_from_this();
  client::RawRequest r;
  r.method = req.method;
  r.target = req.target;
  r.body = req.body;
  r.headers = {{"Accept", "*/*"}};
  DeferredResponse deferred;
  // The transport blocks until the node's answer head: a thread of its own,
  // bounded by the dial timeout, waits for it.
  deferred.start = [held, r = std::move(r), weak = weak_from_this()](std::function<void(ImmediateResult)> reply) {
    std::thread([held, r, weak, reply = std::move(reply)]() mutable {
      auto started = held->transport->Stream(r, held->sink);
      if (!started.ok()) return reply(DialError(started.status().message()));  // ~Held ends the session
      if (started->response.status < 200 || started->response.status > 299) {
        HttpResponse resp;
        resp.status = started->response.status;
        resp.content_type = started->response.content_type;
        resp.body = std::move(started->response.body);
        return reply(std::move(resp));
      }
      held->body = std::move(started->stream);
      StreamingResponse s;
      s.content_type = started->response.content_type.empty() ? "text/plain" : started->response.content_type;
      s.start = [held, weak](std::shared_ptr<ResponseStream> stream) mutable {
        held->sink->Attach(stream);
        // The holder's end joins the reader thread, which may be the thread
        // that ends the stream: it is released on another thread.
        stream->OnDone([held = std::move(held), weak]() mutable {
          if (held->body) held->body->Cancel();
          auto impl = weak.lock();
          if (impl) {
            asio::post(impl->ioc, [h = std::move(held)] {});
          } else {
            std::thread([h = std::move(held)] {}).detach();
          }
        });
      };
      held.reset();  // the stream's start holds it now
      reply(std::move(s));
    }).detach();
  };
  return deferred;
}

NodeProxy::NodeProxy(NodeProxyOptions options) : impl_(std::make_shared<Impl>(std::move(options))) {}

NodeProxy::~NodeProxy() { Stop(); }

HandlerResult NodeProxy::Forward(const HttpRequest& req, const api::Object& node) {
  auto endpoint = NodeStreamingEndpointOf(node);
  if (!endpoint.ok()) return StatusResponse(endpoint.status());
  if (auto refused = impl_->Admit()) return *refused;
  if (IsWebSocketUpgrade(req)) return impl_->ForwardWebSocket(req, *endpoint);
  return impl_->ForwardHttp(req, *endpoint);
}

void NodeProxy::Stop() {
  std::set<std::shared_ptr<Impl::WebSocketRelay>> sockets;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
    sockets = impl_->sockets;
  }
  for (const auto& s : sockets) s->Abort();
  impl_->work.reset();
  // The relays end as their sockets close; the thread returns when nothing is left.
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::size_t NodeProxy::open_sessions() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->sessions;
}

}  // namespace berth::apiserver
