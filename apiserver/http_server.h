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
//
// Implementation: Boost.Beast/Asio with C++20 coroutines, kept out of this
// header (pimpl) so that only http_server.cc pays Beast's compile time. Each
// connection is one coroutine on its own strand; a pool of `threads` I/O
// threads runs them. The Handler is called synchronously on an I/O thread for
// each request, so it must not block for long (a store write is fine; waiting
// for watch events is not: start a stream instead).
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
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "api/limits.h"
#include "core/status.h"

namespace berth::apiserver {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ... (upper case, as sent)
  std::string target;  // request-target as sent: "/api/v1/pods?limit=500"
  HttpHeaders headers;  // names as sent; look up with Header()
  std::string body;
  std::string remote;  // "127.0.0.1:54321"

  // Value of the first header with this name (case-insensitive), "" if absent.
  std::string_view Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  HttpHeaders headers;  // extra headers, e.g. {"Warning", "299 - \"...\""}
  std::string body;
};

// The writing end of a chunked response. Obtained by the StreamingResponse's
// start callback; shared between the connection and whoever produces events.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Queues one chunk (written and flushed as one HTTP chunk, in order).
  // Returns false, dropping the chunk, once the stream has ended.
  virtual bool Write(std::string chunk) = 0;
  // Ends the response with the final chunk. Idempotent.
  virtual void Close() = 0;
  // True once the stream ended: Close(), the client went away, the deadline
  // passed or the server is stopping.
  virtual bool Done() const = 0;
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

using HandlerResult = std::variant<HttpResponse, StreamingResponse>;
using HttpHandler = std::function<HandlerResult(const HttpRequest&)>;

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0 = an ephemeral port, see HttpServer::port()
  int threads = 4;
  // Bodies larger than this are refused with 413 RequestEntityTooLarge,
  // "Request entity too large: limit is 3145728" (api/limits.h).
  std::size_t max_body_bytes = api::kMaxRequestBodyBytes;
  // How long Stop() waits for in-flight requests before closing sockets.
  std::chrono::milliseconds shutdown_grace{2000};
};

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, HttpHandler handler);
  ~HttpServer();  // Stop()s if running.
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts the I/O threads. Errors: kUnavailable if the address
  // cannot be bound (port in use, bad address).
  Status Start();
  // The bound port (useful with options.port == 0). Valid after Start().
  uint16_t port() const;
  // Graceful shutdown as described above; idempotent.
  void Stop();

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace berth::apiserver
