// HttpServer: the HTTP/1.1 transport under the API server.
//
// One listening TCP socket (IPv4 loopback or any address), persistent
// (keep-alive) connections, a request body size limit (413 with a Kubernetes
// Status body, as kube-apiserver answers an oversized body), and two response
// shapes:
//   - a whole response (HttpResponse), written with Content-Length;
//   - a streaming response (StreamingResponse) written with
//     Transfer-Encoding: chunked, one chunk per ResponseStream::Write, flushed
//     at once. This is how watches (newline-delimited JSON events) and
//     followed logs are served, as kube-apiserver serves them.
//   - a WebSocket (WebSocketUpgrade, RFC 6455 through Beast): "101 Switching
//     Protocols" with the subprotocol the handler chose, then binary messages
//     both ways until either side closes; how `kubectl exec` is served.
//
// Transport: plain TCP, or TLS when HttpServerOptions::tls is set (OpenSSL
// through Boost.Asio's ssl; one code path, the connection is a template over
// its stream). TLS 1.2 at least (kMinTlsVersion); the handshake is part of
// the first request's read_header_timeout. With HttpTlsOptions::client_ca_pem
// the server asks for a client certificate but never fails the handshake on
// a missing or bad one (Go's tls.RequestClientCert, what kube-apiserver
// configures, staging/src/k8s.io/apiserver/pkg/server/secure_serving.go):
// HttpRequest::client_certificate carries the verdict and the Handler (the
// authenticator) decides. A plain HTTP request on a TLS port is answered as
// Go's net/http answers it: "HTTP/1.0 400 Bad Request" with the body "Client
// sent an HTTP request to an HTTPS server.\n", then the connection closes.
// Over TLS a connection ends with a TCP close, without close_notify (every
// response is delimited by its Content-Length or final chunk), and one
// beyond max_connections is closed without the 503.
//
// Implementation: Boost.Beast/Asio with C++20 coroutines, kept out of this
// header (pimpl) so that only http_server.cc pays Beast's compile time. Each
// connection is one coroutine on its own strand; a pool of `threads` I/O
// threads runs them. The Handler is called synchronously on an I/O thread for
// each request, so it must not block for long (a store write is fine; waiting
// for watch events is not: start a stream instead; waiting for another server
// is not either: answer with a DeferredResponse).
//
// Bounds (each a named constant below, with the upstream value it follows;
// docs/security.md lists them):
//   - at max_connections, a new connection makes room by closing the longest-open
//     connection that waits for its next keep-alive request (as nginx reuses idle
//     keep-alive connections when it runs out, ngx_drain_connections), else the
//     longest-open one that has not sent a whole request yet (its TLS handshake, header
//     and body included: a request is read whole before it is authenticated); when
//     every connection has a request being answered or a stream, the new one is
//     answered 503 and closed at once, never queued. So a client that holds
//     connections open between requests, or opens them and sends nothing, or half a
//     request, cannot lock others out: a new connection lives at least as long as the flood takes to open
//     max_connections more. One that holds streams is bounded per user by the API
//     server (per_user_limits.h);
//   - a request's header must arrive within read_header_timeout of its first
//     byte (of the connection's start, for the first request), and its body
//     within read_body_timeout after the header; a keep-alive connection that
//     sends no new request for idle_timeout is closed. A client that sends
//     slowly (slowloris) is cut off without an answer, as Go's net/http does;
//   - writing one response, or one chunk of a stream, may block for at most
//     write_timeout; then the connection is closed (a stream's end is logged
//     as below);
//   - a stream holds at most max_stream_buffer_bytes queued for a client that
//     does not read them, beyond its initial state (WriteInitial); a chunk
//     that finds the stream's queue empty is always taken, whatever its size. A Write beyond that ends the stream: the
//     connection is closed without the final chunk and the producer's OnDone
//     callbacks run, so a watch is stopped and its client relists, as
//     kube-apiserver's cacher closes a watcher that cannot keep up ("Forcing
//     watcher close due to unresponsiveness", logged at V(1), cacheWatcher.add
//     in staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go).
//     Every stream together holds at most max_total_stream_buffer_bytes: a stream
//     that has bytes queued and whose next chunk would pass that total is ended the
//     same way. Both ends of a stream for a client that does not read are logged at
//     info with the client's address (HttpServerStats).
// There are no in-flight request limits (kube-apiserver's
// --max-requests-inflight 400 / --max-mutating-requests-inflight 200): the
// Handler runs synchronously on the `threads` I/O threads, so no more than
// `threads` requests are ever being handled at once.
//
// Shutdown (Stop): stops accepting, lets the request being handled on every
// connection finish and be written, ends every open stream with its final
// chunk, closes idle keep-alive connections, then joins the I/O threads.
//
// Thread-safety: Start/Stop from one controlling thread. The Handler is called
// concurrently from several I/O threads. ResponseStream methods are safe from
// any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "api/limits.h"
#include "api/object.h"
#include "core/status.h"

namespace berth::apiserver {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// A client certificate presented in the TLS handshake (kube-apiserver asks
// for one and lets its x509 authenticator judge it:
// staging/src/k8s.io/apiserver/pkg/authentication/request/x509/x509.go).
struct ClientCertificate {
  // True when the leaf chains to HttpTlsOptions::client_ca_pem, is within its
  // validity now (the system clock, as the TLS library's) and may be used for
  // client authentication; otherwise `error` says why, in Go's crypto/x509
  // words: "x509: certificate signed by unknown authority", "x509:
  // certificate has expired or is not yet valid", "x509: certificate
  // specifies an incompatible key usage".
  bool verified = false;
  std::string error;
  std::string common_name;                 // subject CN: the user name
  std::vector<std::string> organizations;  // subject O, in order: the groups
};

// ASCII case-insensitive equality: header names, media types, auth schemes.
inline bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const unsigned char x = static_cast<unsigned char>(a[i]), y = static_cast<unsigned char>(b[i]);
    if ((x >= 'A' && x <= 'Z' ? x + 32 : x) != (y >= 'A' && y <= 'Z' ? y + 32 : y)) return false;
  }
  return true;
}

struct HttpRequest {
  std::string method;   // "GET", "POST", ... (upper case, as sent)
  std::string target;   // request-target as sent: "/api/v1/pods?limit=500"
  HttpHeaders headers;  // names as sent; look up with Header()
  std::string body;
  std::string remote;  // "127.0.0.1:54321"
  // Absent on plain HTTP, without HttpTlsOptions::client_ca_pem, or when the
  // client sent no certificate.
  std::optional<ClientCertificate> client_certificate;
  // Made by the in-process client of the controllers and agents that run in
  // the server's own process (in_process_client.h); the HTTP transport never
  // sets it. Such a request is the loopback user system:apiserver
  // (authentication.h), as kube-apiserver's own loopback client is.
  bool in_process = false;
  // In-process only: the caller takes a List's items as HttpResponse::objects
  // (the stored objects themselves) instead of their JSON in the body.
  bool take_objects = false;
  // In-process only: the body as a decoded document (client::RawRequest::object;
  // `body` is then empty). The server reads it as the document its JSON text
  // would give (api::ReadBackAsJsonText), in a copy.
  std::shared_ptr<const api::Object> object;

  // Value of the first header with this name (case-insensitive), "" if absent.
  std::string_view Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  HttpHeaders headers;  // extra headers, e.g. {"Warning", "299 - \"...\""}
  std::string body;
  // Objects handed over as they are stored (HttpRequest::take_objects, when
  // every one is in the request's API version and not a Table): a List's
  // items (the body's `items` is then empty), or the one object a get,
  // create, update or patch answers (the body is then empty). Never set for
  // a request from the network.
  std::vector<std::shared_ptr<const api::Object>> objects;
  // Released once the response has been written (or dropped): what the handler
  // accounts against it until then (per_user_limits.h).
  std::shared_ptr<const void> hold;
};

// The writing end of a chunked response. Obtained by the StreamingResponse's
// start callback; shared between the connection and whoever produces events.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Queues one chunk (written and flushed as one HTTP chunk, in order).
  // Returns false, dropping the chunk, once the stream has ended.
  virtual bool Write(std::string chunk) = 0;
  // Queues a chunk of the stream's initial state (a watch's synthetic ADDED
  // events, as long as the list they replace): not counted against the
  // transport's byte bound, which covers the chunks written after it; the
  // write deadline still applies. Default: Write.
  virtual bool WriteInitial(std::string chunk) { return Write(std::move(chunk)); }
  // Whether the reader takes a watch's events as the objects themselves
  // (WriteWatchEvent) instead of their JSON lines: the in-process client's
  // streams do, so its informers share the store's decoded objects instead of
  // each parsing a copy. Default: no (HTTP).
  virtual bool TakesWatchEvents() const { return false; }
  // One watch event: its type's wire name ("ADDED", "MODIFIED", "DELETED")
  // and the object as it would be encoded (never null), in order with the
  // chunks written. Returns false once the stream has ended. Only called when
  // TakesWatchEvents().
  virtual bool WriteWatchEvent(std::string_view /*type*/, std::shared_ptr<const api::Object> /*object*/) {
    return false;
  }
  // Ends the response with the final chunk. Idempotent.
  virtual void Close() = 0;
  // Ends the response after what is queued, without the final chunk, so the
  // client sees its body cut short (Go: "unexpected EOF"): how a relay shows
  // that its source failed. Default: Close.
  virtual void Fail() { Close(); }
  // True once the stream ended: Close(), the client went away, the deadline
  // passed or the server is stopping.
  virtual bool Done() const = 0;
  // Bytes written and not yet sent to the client (a producer that relays
  // another stream waits while this is above its bound, instead of ending the
  // stream by overfilling it). Default: 0 (nothing is queued).
  virtual std::size_t queued_bytes() const { return 0; }
  // Registers `fn` to run exactly once when the stream ends, on some thread
  // (at once, on this thread, if it has already ended). Producers use it to
  // cancel their subscription.
  virtual void OnDone(std::function<void()> fn) = 0;
};

// The end-of-stream bookkeeping every ResponseStream shares: Done, OnDone and
// ending exactly once. Implementations add Write and Close and may guard their
// own state with the same mutex (mu()), so that "ended" and their queue change
// together.
class ResponseStreamBase : public ResponseStream {
 public:
  bool Done() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  void OnDone(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!done_) {
        on_done_.push_back(std::move(fn));
        return;
      }
    }
    fn();
  }

 protected:
  // Ends the stream if it has not ended: marks it done, calls `after_mark`
  // (without the lock), then the OnDone callbacks. Returns false, doing
  // nothing, when it had already ended.
  template <typename AfterMark>
  bool End(AfterMark&& after_mark) {
    std::vector<std::function<void()>> fns;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done_) return false;
      done_ = true;
      fns.swap(on_done_);
    }
    after_mark();
    for (auto& fn : fns) fn();
    return true;
  }
  bool End() {
    return End([] {});
  }
  std::mutex& mu() const { return mu_; }
  // Whether the stream ended; the caller holds mu().
  bool done_locked() const { return done_; }

 private:
  mutable std::mutex mu_;
  bool done_ = false;
  std::vector<std::function<void()>> on_done_;
};

struct StreamingResponse {
  int status = 200;
  std::string content_type = "application/json";
  HttpHeaders headers;
  // Ends the stream after this long (watch timeoutSeconds); zero = no deadline.
  std::chrono::milliseconds timeout{0};
  // Called once, after the response header has been written, with the stream
  // to write to. It must not block: it subscribes and returns.
  std::function<void(std::shared_ptr<ResponseStream>)> start;
};

// The server's end of a WebSocket connection (RFC 6455) after an upgrade:
// binary messages both ways. Write(message) queues one binary message (false
// once the session has ended); Close() sends what is queued, then a normal
// close frame, and ends the session; Done/OnDone as for a stream (the client
// closed or broke the connection, the server is stopping, a write timed out).
// Messages are received by the WebSocketReceiver the upgrade's start returned.
class WebSocketSession : public ResponseStreamBase {
 public:
  // Resumes reading after the receiver returned false.
  virtual void ResumeReading() = 0;
};

// Called on an I/O thread with each message the client sends (binary or
// text), in order; it must not block. Returning false pauses reading
// (backpressure: the connection reads nothing more, control frames
// included) until WebSocketSession::ResumeReading.
using WebSocketReceiver = std::function<bool(std::string message)>;

// Bytes one received WebSocket message may hold; a larger one ends the
// connection (close code 1009, message too big). Upstream: kube-apiserver's
// and the kubelet's WebSocket servers (golang.org/x/net/websocket in
// wsstream/conn.go) set no limit; client-go writes stdin in messages of its
// 32 KiB copy buffer and resize events of a few bytes. berth's bound, 1 MiB,
// is 32 times that.
inline constexpr std::size_t kMaxWebSocketMessageBytes = 1 << 20;

// Answer the request by upgrading the connection to a WebSocket:
// "101 Switching Protocols" with Sec-WebSocket-Protocol: `protocol` (when
// not empty), then `start`. The handler must have checked that the request
// is a WebSocket upgrade (IsWebSocketUpgrade) and decided everything else:
// errors are ordinary HttpResponses. After the upgrade the connection serves
// nothing else.
struct WebSocketUpgrade {
  int status = 101;
  std::string protocol;
  HttpHeaders headers;  // extra headers of the 101 response
  std::size_t max_message_bytes = kMaxWebSocketMessageBytes;
  // Called once after the handshake; must not block. Returns the receiver.
  std::function<WebSocketReceiver(std::shared_ptr<WebSocketSession>)> start;
};

// Whether `req` asks for a WebSocket upgrade: "Upgrade: websocket" and a
// Connection header naming "upgrade" (case-insensitive, RFC 6455 4.2.1).
bool IsWebSocketUpgrade(const HttpRequest& req);

// An answer that is known now.
using ImmediateResult = std::variant<HttpResponse, StreamingResponse, WebSocketUpgrade>;

// An answer that takes a while to know (the API server's relay to a node
// first connects to it, node_proxy.h): `start` is called once, on the I/O
// thread (it must not block), with `reply`, which the handler calls exactly
// once, from any thread, with the answer. Meanwhile the connection waits
// without holding an I/O thread. A handler must reply within a bound of its
// own (Stop waits for the reply).
struct DeferredResponse {
  std::function<void(std::function<void(ImmediateResult)> reply)> start;
};

using HandlerResult = std::variant<HttpResponse, StreamingResponse, WebSocketUpgrade, DeferredResponse>;
using HttpHandler = std::function<HandlerResult(const HttpRequest&)>;

// `result` as an HandlerResult.
HandlerResult FromImmediate(ImmediateResult result);
// The answer of `result`, waiting for a deferred one on the calling thread
// (for callers without a connection: the in-process transport, tests).
ImmediateResult AwaitResult(HandlerResult result);

// A new connection beyond this many open ones is answered 503 ServiceUnavailable
// ("too many open connections") and closed. Upstream: Go's net/http and
// kube-apiserver have no connection cap (the limit there is the process's file
// descriptors; berth raises its soft RLIMIT_NOFILE to the hard limit at start,
// core/rlimit.h); berth caps connections below the usual hard limit (524288 on
// systemd, 4096 in some containers: the cap cannot exceed what the kernel allows).
inline constexpr std::size_t kMaxConnections = 4096;
// Connections asked to make room at the cap that may still be open: a request that
// arrived just as its connection was chosen keeps it open, so the open connections may
// pass max_connections by at most this many.
inline constexpr std::size_t kMaxConnectionsClosing = 64;
// TCP keep-alive on every accepted connection: the first probe after this long without
// traffic, then one every this long, up to kTcpKeepAliveProbes unanswered, so a client that
// vanished without a FIN or RST (a laptop asleep, a NAT entry dropped) gives back its
// connection and its exec or port-forward session within about 2.5 minutes, not the 4 h
// session idle timeout. Upstream: Go's listener turns keep-alive on with 15 s idle and
// interval and 9 probes (net.KeepAliveConfig defaults, net/tcpsock.go).
inline constexpr std::chrono::seconds kTcpKeepAliveInterval{15};
inline constexpr int kTcpKeepAliveProbes = 9;
// A keep-alive connection that starts no new request for this long is closed.
// Upstream: kube-apiserver's http.Server IdleTimeout, 90 s ("matches
// http.DefaultTransport keep-alive timeout",
// staging/src/k8s.io/apiserver/pkg/server/secure_serving.go Serve).
inline constexpr std::chrono::milliseconds kIdleTimeout{90'000};
// A request's header must be complete this long after its first byte (for the
// first request of a connection: after the connection was accepted).
// Upstream: kube-apiserver's ReadHeaderTimeout, 32 s ("just shy of
// requestTimeoutUpperBound", secure_serving.go).
inline constexpr std::chrono::milliseconds kReadHeaderTimeout{32'000};
// A request's body must be complete this long after its header. Upstream:
// kube-apiserver sets no ReadTimeout; its --request-timeout (default 1 minute,
// staging/src/k8s.io/apiserver/pkg/server/options/server_run_options.go) ends
// a handler, body reading included, after 60 s. berth reads the body before
// the handler runs and bounds it by the same minute.
inline constexpr std::chrono::milliseconds kReadBodyTimeout{60'000};
// Writing one whole response, or one chunk of a stream, may block this long.
// Upstream: kube-apiserver sets no WriteTimeout; --request-timeout (1 minute)
// bounds a non-streaming request; the cacher bounds a watcher that does not
// drain its events by a dispatch budget of at most 100 ms
// (staging/src/k8s.io/apiserver/pkg/storage/cacher/time_budget.go) once its
// channel is full. berth closes a connection whose client accepts no byte for
// a minute.
inline constexpr std::chrono::milliseconds kWriteTimeout{60'000};
// Bytes one stream (watch, followed log) may hold queued for a client that does
// not read them. Upstream bounds a watcher in events: the cacheWatcher's input
// channel, about one second of history clamped to 10 .. 100 events (1000 for an
// indexed watch; minWatchChanSize, maxWatchChanSize* and
// suggestedWatchChannelSize in staging/src/k8s.io/apiserver/pkg/storage/cacher/
// watch_cache.go), each at most 1.5 MiB (etcd's request limit), plus the
// kernel's socket buffers. berth's bound, 4 MiB, holds
// more than 2 objects of the largest size and, with the kernel's buffers
// (several MiB on loopback), thousands of ordinary events.
inline constexpr std::size_t kMaxStreamBufferBytes = 4 * 1024 * 1024;
// Bytes every stream together may hold queued for clients that do not read them: a
// stream with bytes queued whose next chunk would pass this total is ended as one past
// its own bound is. Without it, streams each within kMaxStreamBufferBytes could hold
// kMaxConnections x 4 MiB = 16 GiB. Upstream has no total: each watcher's channel holds
// at most 1000 events and a full one is closed within its 100 ms budget. berth's total,
// 256 MiB, holds 64 streams at their own bound; a reader that keeps up is never closed.
inline constexpr std::size_t kMaxTotalStreamBufferBytes = 256 * 1024 * 1024;
// The request line and headers together. Upstream: Go's http.Server
// MaxHeaderBytes, 1 MiB in kube-apiserver (secure_serving.go), answered 431
// Request Header Fields Too Large. berth's bound is one byte under 64 KiB: Boost.Beast
// stores each header field in at most 65,535 bytes and throws beyond that.
// Kubernetes' clients send a few KiB (a bearer token, impersonation headers).
inline constexpr std::size_t kMaxHeaderBytes = 65'535;

// The oldest TLS version served: 1.2. Upstream: kube-apiserver's default
// --tls-min-version is VersionTLS12 (Go's crypto/tls server default,
// staging/src/k8s.io/component-base/cli/flag/ciphersuites_flag.go).
inline constexpr int kMinTlsVersion = 0x0303;  // TLS1_2_VERSION

struct HttpTlsOptions {
  // The serving certificate, then any intermediates, PEM.
  std::string certificate_chain_pem;
  std::string private_key_pem;  // PEM (PKCS#8, SEC1 or PKCS#1)
  // CA certificates (PEM, one or more) that client certificates are judged
  // against; "" = do not ask for client certificates.
  std::string client_ca_pem;
};

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0 = an ephemeral port, see HttpServer::port()
  int threads = 4;
  // Bodies larger than this are refused with 413 RequestEntityTooLarge,
  // "Request entity too large: limit is 3145728" (api/limits.h).
  std::size_t max_body_bytes = api::kMaxRequestBodyBytes;
  // How long Stop() waits for in-flight requests before closing sockets.
  std::chrono::milliseconds shutdown_grace{2000};
  // The bounds described at the top (tests set small values).
  std::size_t max_connections = kMaxConnections;
  std::chrono::milliseconds idle_timeout = kIdleTimeout;
  std::chrono::milliseconds read_header_timeout = kReadHeaderTimeout;
  std::chrono::milliseconds read_body_timeout = kReadBodyTimeout;
  std::chrono::milliseconds write_timeout = kWriteTimeout;
  std::size_t max_stream_buffer_bytes = kMaxStreamBufferBytes;
  std::size_t max_total_stream_buffer_bytes = kMaxTotalStreamBufferBytes;
  // Absent: plain HTTP.
  std::optional<HttpTlsOptions> tls;
};

// Counters of the transport, for tests and diagnostics. All since Start.
struct HttpServerStats {
  std::size_t open_connections = 0;
  // Bytes queued now in every open stream, not yet written to its client.
  std::size_t stream_queued_bytes = 0;
  // The most bytes any one stream has held queued beyond its initial state.
  std::size_t stream_queued_bytes_peak = 0;
  // Streams ended because their client did not read: more than
  // max_stream_buffer_bytes queued (streams_closed_unresponsive), or one chunk
  // not accepted within write_timeout (streams_timed_out, also counted in
  // connections_timed_out). Each is logged at info, with the client's address:
  // "closing a stream whose client does not read: 127.0.0.1:54321: ...".
  uint64_t streams_closed_unresponsive = 0;
  uint64_t streams_timed_out = 0;
  // Connections answered 503 because max_connections were open, none of them idle.
  uint64_t connections_refused = 0;
  // Connections without a request in progress (idle keep-alive, or no whole header
  // yet) closed to make room at max_connections.
  uint64_t idle_connections_closed = 0;
  // Connections closed by idle_timeout, read_header_timeout, read_body_timeout
  // or write_timeout.
  uint64_t connections_timed_out = 0;
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();  // Stop()s if running.
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the I/O threads. Errors: kUnavailable if the address
  // cannot be bound (port in use, bad address); kInvalid for TLS options
  // that do not load (a certificate or key that is not PEM, a key that does
  // not match, a client_ca_pem without certificates).
  Status Start();
  // The bound port (useful with options.port == 0). Valid after Start().
  uint16_t port() const;
  // Graceful shutdown as described above; idempotent.
  void Stop();
  // A snapshot of the counters; safe from any thread.
  HttpServerStats Stats() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace berth::apiserver
