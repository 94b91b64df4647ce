// HttpClient: the Client (client/client.h) over HTTP/1.1, for controllers,
// the CLI and node agents talking to a remote API server (a berth server or a
// kube-apiserver). Built on Boost.Beast, which stays out of this header.
//
// Wire format (what client-go's REST client sends):
//   - paths as in client.h: /api/v1/... for the core group, /apis/{g}/{v}/...
//     otherwise; names and namespaces path-escaped;
//   - query parameters form-encoded and sorted by name, as Go's url.Values
//     (labelSelector=app%3Ddemo&limit=500);
//   - `Accept: application/json`, `User-Agent`, `Authorization: Bearer <token>`
//     when the config has a token; JSON bodies with
//     `Content-Type: application/json` (a patch: its PatchContentType);
//     DELETE carries a meta.k8s.io/v1 DeleteOptions body.
//   - List responses: items without apiVersion/kind (built-in kinds on the
//     wire) get them from the list's apiVersion and kind minus "List", as
//     client-go's dynamic client does.
//   - Watch: GET ...?watch=true, read as a chunked stream of newline-
//     delimited {"type":...,"object":...} events by a reader thread per watch;
//     a non-200 answer is returned by Watch() as a Status.
//   - Errors: non-2xx responses are decoded by client/api_status.h. Transport
//     failures are kUnavailable (connect refused, reset, EOF) or kTimeout
//     (options.request_timeout elapsed), with Go's message shape:
//     `Get "http://127.0.0.1:1/api/v1/pods": dial tcp 127.0.0.1:1: connect: Connection refused`.
//
// Connections: a keep-alive pool (up to options.max_idle_connections idle
// connections, most recently used first). An idle connection the server has
// closed is detected before reuse; a request that still fails on a reused
// connection before any response byte arrived is retried once on a new
// connection when its method is idempotent (GET, PUT, DELETE). Each watch
// uses its own connection, closed when the watch ends.
//
// Timeouts: options.request_timeout bounds connect + write + read of one
// request (real time: a socket deadline), and for a watch the connect and
// the response header. A watch then lasts until the server ends it
// (timeoutSeconds) or Stop().
//
// Only http:// this session (ServerUrl from client/kubeconfig.h); TLS (https
// with OpenSSL) is not implemented yet.
//
// Thread-safety: every method may be called from many threads at once; each
// request uses its own pooled connection.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client/client.h"
#include "client/kubeconfig.h"

namespace berth::client {

struct HttpClientOptions {
  Duration request_timeout = std::chrono::seconds(30);
  size_t max_idle_connections = 16;
  std::string user_agent = "berth/v0.1.0";
  // Largest response body read into memory (a LIST of 10,000 objects is a few
  // tens of MB).
  uint64_t max_response_bytes = uint64_t{1} << 30;
};

// A request outside the typed verbs (discovery, /version, tables, logs).
struct RawRequest {
  std::string method = "GET";                              // "GET", "POST", ...
  std::string target;                                      // path + query, e.g. "/version"
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers (Accept overrides the default)
  std::string body;
};
struct RawResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

// The path of a resource (and object, and subresource), e.g.
// "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/w1/status".
std::string ResourcePath(const ResourceRef& ref, std::string_view name = "",
                         std::string_view subresource = "");
// Go's url.Values.Encode: "a=1&b=x%3Dy" with keys sorted, spaces as '+'.
std::string EncodeQuery(std::vector<std::pair<std::string, std::string>> params);

class HttpClient final : public Client {
 public:
  HttpClient(RestConfig config, HttpClientOptions options = {});
  ~HttpClient() override;

  StatusOr<api::Object> Get(const ResourceRef& ref, const std::string& name,
                            const GetOptions& options = {}) override;
  StatusOr<ObjectList> List(const ResourceRef& ref, const ListOptions& options = {}) override;
  StatusOr<api::Object> Create(const ResourceRef& ref, const api::Object& obj,
                               const CreateOptions& options = {}) override;
  StatusOr<api::Object> Update(const ResourceRef& ref, const api::Object& obj,
                               const UpdateOptions& options = {}) override;
  StatusOr<api::Object> UpdateStatus(const ResourceRef& ref, const api::Object& obj,
                                     const UpdateOptions& options = {}) override;
  StatusOr<api::Object> Patch(const ResourceRef& ref, const std::string& name, PatchType type,
                              std::string_view patch, const PatchOptions& options = {}) override;
  Status Delete(const ResourceRef& ref, const std::string& name,
                const DeleteOptions& options = {}) override;
  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef& ref,
                                               const WatchOptions& options = {}) override;

  // Sends any request; returns the response whatever its status code (only
  // transport failures are errors).
  StatusOr<RawResponse> Do(const RawRequest& request);

  const RestConfig& config() const { return config_; }

 private:
  struct Impl;
  const RestConfig config_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::client
