// The in-process client: a client::RestClient (client/rest_client.h) whose
// transport calls ApiServer::Handle directly, for the controllers, schedulers
// and node agents embedded in `berth server`. Requests, responses and errors
// are byte for byte what the same RestClient gets over HTTP (one code path:
// RestClient builds the request and decodes the answer either way); only the
// socket, the HTTP framing and the server's connection threads are skipped.
//
// One exception, for what informers keep: the objects of watch events and of
// ListShared pages are handed over as the server stores them (the store's
// immutable, shared ObjectPtr: BodySink::OnWatchEvent, RawResponse::objects)
// instead of being encoded and parsed again, whenever the request's API
// version is the stored one (otherwise they are converted and encoded as over
// HTTP). The same object then serves the store, its watch history and every
// informer's cache: one decoded copy per revision, and no parse per watcher.
// What the caller sees is the same document either way (tested over both
// transports in in_process_client_test).
//
// Likewise the other way: the object of a create, update or status update
// (RawRequest::object) reaches the server decoded (HttpRequest::object), not as
// JSON text to parse again. The server reads it as the document that text would
// give (api::ReadBackAsJsonText: a copy, unless a string holds invalid UTF-8,
// which becomes U+FFFD as over HTTP), so both transports store the same thing.
//
//   auto client = apiserver::NewInProcessClient(server);
//   client->Create(kPods.Namespace("default"), pod);
//
// Requests: HttpRequest{method, target, client::RequestHeaders + User-Agent,
// body, remote = options.remote ("in-process"), in_process = true: the
// loopback user system:apiserver, authentication.h}, handled on the calling
// thread. A whole answer (HttpResponse) becomes the RawResponse; its extra
// headers (Warning) are dropped, as HttpClient drops them.
//
// Streaming answers (watches, followed logs): the StreamingResponse's start
// callback gets an in-process ResponseStream whose Write() hands each chunk
// to the RestClient's BodySink at once, on the writer's thread (the API
// server's watch pump; the synthetic ADDED events of a watch from "" or "0"
// on the caller's thread, before Watch returns). It behaves as the HTTP one
// (http_server.h):
//   - Write returns false once the stream ended, or when the sink refuses the
//     bytes (then the stream ends);
//   - it ends on Close() (the server ended it: the client sees "watch
//     closed"), on the client's Cancel / WatchStream::Stop or destruction, and
//     after StreamingResponse::timeout (watch timeoutSeconds; real time, on
//     one process-wide timer thread started with the first such stream);
//   - ending runs the OnDone callbacks exactly once (the watch pump drops the
//     session and stops the store watcher), then the sink's OnEnd (OK).
// Do() of a request answered by a stream collects the body until the stream
// ends, as an HTTP read of a chunked body does.
//
// Server lifecycle: Handle needs no listening socket, so the client works
// before ApiServer::Start() and with a server that never binds a port, with
// two caveats: call ApiServer::EnsureSystemNamespaces() first (Start does it;
// "default" must exist to create in it), and the garbage collector only runs
// after Start() (before it, foreground/orphan/namespace deletions stay
// Terminating; see api_server.h). After ApiServer::Stop() open watches have
// ended and new ones end at once ("watch closed"). The server must outlive
// the client and every WatchStream it returned.
//
// Errors: a request never fails in transport (no kUnavailable/kTimeout);
// every error is the server's Status, decoded as over HTTP.
//
// Thread-safety: every method may be called from many threads at once.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "apiserver/api_server.h"
#include "client/rest_client.h"

namespace berth::apiserver {

struct InProcessClientOptions {
  // HttpRequest::remote of every request (the HTTP server puts the peer
  // address "127.0.0.1:54321" there).
  std::string remote = "in-process";
  std::string user_agent = "berth/v0.1.0";
};

// The transport alone (for a RestClient built by hand, or tests).
class InProcessTransport final : public client::Transport {
 public:
  explicit InProcessTransport(ApiServer& server, InProcessClientOptions options = {});
  ~InProcessTransport() override;

  StatusOr<client::RawResponse> Do(const client::RawRequest& request) override;
  StatusOr<client::StreamStart> Stream(const client::RawRequest& request,
                                       std::shared_ptr<client::BodySink> sink) override;

  // Streams started by this transport that have not ended yet (for tests and
  // metrics: a stopped watch is no longer counted once its OnDone callbacks,
  // which end the server side, have run).
  size_t open_streams() const;

 private:
  HttpRequest ToHttp(const client::RawRequest& request) const;

  ApiServer& server_;
  const InProcessClientOptions options_;
  std::shared_ptr<std::atomic<size_t>> open_;  // shared with the streams
};

// A RestClient over an InProcessTransport on `server`.
std::unique_ptr<client::RestClient> NewInProcessClient(ApiServer& server, InProcessClientOptions options = {});

}  // namespace berth::apiserver
