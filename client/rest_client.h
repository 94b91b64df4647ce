// RestClient: the Client (client/client.h) as REST requests over a Transport,
// as client-go's rest.RESTClient sits on an http.RoundTripper. One request and
// response code path for every way of reaching an API server:
//   - HttpClient (client/http_client.h): a RestClient over HTTP/1.1 (Beast);
//   - the in-process client (apiserver/in_process_client.h): a RestClient
//     whose transport calls apiserver::ApiServer::Handle directly.
//
// What RestClient does (the wire format of client-go's REST client):
//   - paths as in client.h: /api/v1/... for the core group, /apis/{g}/{v}/...
//     otherwise; names and namespaces path-escaped (ResourcePath);
//   - query parameters form-encoded and sorted by name, as Go's url.Values
//     (labelSelector=app%3Ddemo&limit=500; EncodeQuery);
//   - `Accept: application/json`; JSON bodies with `Content-Type:
//     application/json` (a patch: its PatchContentType); DELETE carries a
//     meta.k8s.io/v1 DeleteOptions body (RequestHeaders gives the headers);
//   - List responses: items without apiVersion/kind (built-in kinds on the
//     wire) get them from the list's apiVersion and kind minus "List", as
//     client-go's dynamic client does;
//   - errors: non-2xx responses are decoded by client/api_status.h with the
//     request's verb, resource and name; transport failures are the
//     transport's Status (kUnavailable, kTimeout);
//   - Watch: GET ...?watch=true, streamed through Transport::Stream; the body
//     is newline-delimited {"type":...,"object":...} events (blank lines
//     skipped), split, decoded and queued here for WatchStream::Next. A non-2xx
//     answer is returned by Watch() as a Status; an undecodable line ends the
//     stream with kInternal "unable to decode watch event: <line>".
//
// Thread-safety: every RestClient method may be called from many threads at
// once, provided the transport allows it (both transports above do).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "client/client.h"
#include "core/status.h"

namespace berth::client {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// A request outside the typed verbs (discovery, /version, tables, logs).
struct RawRequest {
  std::string method = "GET";  // "GET", "POST", ...
  std::string target;          // path + query, e.g. "/version"
  HeaderList headers;          // extra headers (Accept/Content-Type override the defaults)
  std::string body;
  // The caller takes a List's items, or the one object answered, as
  // RawResponse::objects from a transport that holds them decoded (the
  // in-process one); others ignore it.
  bool take_objects = false;
  // The body as a decoded JSON document instead of `body` text (the writes of
  // whole objects: create, update, update status). HttpClient sends its JSON,
  // with invalid UTF-8 in strings and keys written as U+FFFD (each maximal
  // invalid subsequence, Unicode's recommended practice; Go's encoding/json
  // replaces byte by byte), so bytes from outside, a probe's output in an
  // Event, never make encoding fail; NaN and infinities as null. The
  // in-process transport hands it over decoded, and the server reads it as that
  // text (api::ReadBackAsJsonText). At most one of body and object is set.
  std::shared_ptr<const api::Object> object;
};
struct RawResponse {
  int status = 0;
  std::string content_type;
  std::string body;
  // With RawRequest::take_objects, a List's items (the body's `items` is
  // then empty) or the one object answered (the body is then empty), handed
  // over as they are stored (shared, immutable). Otherwise empty.
  std::vector<ObjectPtr> objects;
};

// The path of a resource (and object, and subresource), e.g.
// "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/w1/status".
std::string ResourcePath(const ResourceRef& ref, std::string_view name = "",
                         std::string_view subresource = "");
// Go's url.Values.Encode: "a=1&b=x%3Dy" with keys sorted, spaces as '+'.
std::string EncodeQuery(std::vector<std::pair<std::string, std::string>> params);
// The content headers a request is sent with: `Accept: application/json` and,
// when it has a body, `Content-Type: application/json`, each replaced by a
// header of the same name (case-insensitive) in request.headers, followed by
// the request's other headers in order. Transports add their own (Host,
// User-Agent, Authorization) to these.
HeaderList RequestHeaders(const RawRequest& request);

// The receiving end of a streamed response body (Transport::Stream). The
// transport calls OnBytes with the body in order, in pieces of any size (no
// framing), then OnEnd exactly once. Calls come from the transport's threads
// (a reader thread per stream for HTTP, the API server's watch pump in
// process), never two at once for one sink.
//
// A watch's sink may also take events as objects: a transport that holds the
// watched objects decoded already (the in-process one: the API server's
// stored objects) then calls OnWatchEvent for the events whose object it can
// hand over unchanged, instead of OnBytes with their JSON lines, so nothing
// is encoded, parsed or copied on the way. Both kinds of call arrive in the
// stream's order.
class BodySink {
 public:
  virtual ~BodySink() = default;
  // Returns false to stop: the transport then ends the stream (closing the
  // connection / ending the server-side response) and calls OnEnd.
  virtual bool OnBytes(std::string_view bytes) = 0;
  // Whether OnWatchEvent may be called. Default: no.
  virtual bool TakesWatchEvents() const { return false; }
  // One watch event: `type` and the object itself (never null). Returns false
  // to stop, as OnBytes. Called only when TakesWatchEvents().
  virtual bool OnWatchEvent(WatchEventType /*type*/, ObjectPtr /*object*/) { return false; }
  // OK: the body ended normally (the server ended it, it was cancelled, or
  // OnBytes asked to stop). Otherwise the transport failure, e.g. kUnavailable
  // `Get "http://127.0.0.1:6443/api/v1/pods?watch=true": Connection reset by peer`,
  // or kUnavailable "unexpected EOF" when the connection ended mid-body
  // (a chunked body without its final chunk).
  virtual void OnEnd(Status status) = 0;
};

// A streamed response in progress.
class BodyStream {
 public:
  // Cancels the stream; may wait for the transport's reader to finish.
  virtual ~BodyStream() = default;
  // Ends the stream from the client side (the server side learns it: the
  // connection closes / the in-process response ends). The sink's OnEnd
  // follows (at once or shortly, on some thread). Idempotent; any thread.
  virtual void Cancel() = 0;
};

struct StreamStart {
  // Status code and content type. For a status outside 2xx also the whole
  // (error) body; the sink is then never called and `stream` is null.
  RawResponse response;
  std::unique_ptr<BodyStream> stream;  // 2xx: the body being delivered to the sink
};

// How a RestClient reaches a server.
//
// Errors of both methods are transport failures only (kUnavailable,
// kTimeout, with the transport's message); any HTTP status is a response.
// Thread-safety: implementations allow concurrent calls from many threads.
class Transport {
 public:
  virtual ~Transport() = default;
  // Sends a request and returns the whole response.
  virtual StatusOr<RawResponse> Do(const RawRequest& request) = 0;
  // Sends a request whose 2xx body is delivered to `sink` as it arrives
  // (watches, followed logs). Returns once the response status is known. The
  // transport keeps `sink` alive until after OnEnd.
  virtual StatusOr<StreamStart> Stream(const RawRequest& request, std::shared_ptr<BodySink> sink) = 0;
};

class RestClient : public Client {
 public:
  explicit RestClient(std::unique_ptr<Transport> transport);
  ~RestClient() override;
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  StatusOr<api::Object> Get(const ResourceRef& ref, const std::string& name,
                            const GetOptions& options = {}) override;
  StatusOr<ObjectList> List(const ResourceRef& ref, const ListOptions& options = {}) override;
  StatusOr<SharedObjectList> ListShared(const ResourceRef& ref, const ListOptions& options = {}) override;
  StatusOr<api::Object> Create(const ResourceRef& ref, const api::Object& obj,
                               const CreateOptions& options = {}) override;
  StatusOr<api::Object> Update(const ResourceRef& ref, const api::Object& obj,
                               const UpdateOptions& options = {}) override;
  StatusOr<api::Object> UpdateStatus(const ResourceRef& ref, const api::Object& obj,
                                     const UpdateOptions& options = {}) override;
  StatusOr<api::Object> Patch(const ResourceRef& ref, const std::string& name, PatchType type,
                              std::string_view patch, const PatchOptions& options = {}) override;
  Status Bind(const ResourceRef& pods, const std::string& pod, const std::string& node,
              const CreateOptions& options = {}) override;
  Status Delete(const ResourceRef& ref, const std::string& name,
                const DeleteOptions& options = {}) override;
  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef& ref,
                                               const WatchOptions& options = {}) override;

  // Sends any request; returns the response whatever its status code (only
  // transport failures are errors).
  StatusOr<RawResponse> Do(const RawRequest& request);

  // Sends a request whose response body is a stream (GET pods/log?follow=true,
  // a watch read as raw lines). For a 2xx answer each piece of the body is
  // passed to on_body as it arrives (no framing: split lines yourself; called
  // on the transport's thread, one call at a time) and the returned body is
  // empty; on_body returning false ends the request early (the server side of
  // the stream ends too). Other answers are read whole into the returned body
  // and on_body is not called. Blocks the calling thread until the body ends;
  // a transport failure mid-body is that failure (kUnavailable).
  StatusOr<RawResponse> DoStream(const RawRequest& request,
                                 const std::function<bool(std::string_view)>& on_body);

  Transport& transport() { return *transport_; }

 private:
  // A request whose success answer is one JSON object; `objects` receives
  // RawResponse::objects when given.
  StatusOr<api::Object> JsonCall(const RawRequest& request, const ResourceRef& ref, std::string_view name,
                                 std::vector<ObjectPtr>* objects = nullptr);
  // One LIST request: its metadata into *out, and each item the body carries
  // (with the list's apiVersion and kind filled in, as built-in lists leave
  // them out) passed to `add`. `take_objects`: RawRequest::take_objects, the
  // items handed over then land in *handed.
  Status ListCall(const ResourceRef& ref, const ListOptions& options, bool take_objects,
                  SharedObjectList* metadata_out, std::vector<ObjectPtr>* handed,
                  const std::function<void(api::Object&&)>& add);

  std::unique_ptr<Transport> transport_;
};

}  // namespace berth::client
