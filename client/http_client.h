// HttpClient: the Client (client/client.h) over HTTP/1.1, for controllers,
// the CLI and node agents talking to a remote API server (a berth server or a
// kube-apiserver). It is a RestClient (client/rest_client.h: paths, queries,
// bodies, response and Status decoding, watch event decoding) over a
// Boost.Beast transport, which stays out of this header.
//
// What the transport adds on the wire:
//   - `Host`, `User-Agent` (options.user_agent), `Authorization: Bearer
//     <token>` when the config has a token, the config's path prefix before
//     every target; then RequestHeaders (client/rest_client.h);
//   - Transport failures are kUnavailable (connect refused, reset, EOF) or
//     kTimeout (options.request_timeout elapsed), with Go's message shape:
//     `Get "http://127.0.0.1:1/api/v1/pods": dial tcp 127.0.0.1:1: connect: Connection refused`.
//   - Streamed bodies (Watch, DoStream): chunked responses read by a reader
//     thread per stream, on a connection of their own, closed when the stream
//     ends; Cancel/WatchStream::Stop closes it (the server sees the client go).
//
// Connections: a keep-alive pool (up to options.max_idle_connections idle
// connections, most recently used first). An idle connection the server has
// closed is detected before reuse; a request that still fails on a reused
// connection before any response byte arrived is retried once on a new
// connection when its method is idempotent (GET, PUT, DELETE).
//
// Timeouts: options.request_timeout bounds connect + write + read of one
// request (real time: a socket deadline), and for a streamed body the
// connect, the write and the response header (and a non-2xx body). A watch
// then lasts until the server ends it (timeoutSeconds) or Stop().
//
// TLS (https:// URLs, OpenSSL through Boost.Asio's ssl), as client-go's
// transport does it: TLS 1.2 at least; the server's certificate verified
// against RestConfig::certificate_authority_pem (the system's default roots
// when empty) and its SANs checked against tls_server_name, else the URL's
// host (DNS name or IP address); SNI sent unless that name is an IP address;
// the client certificate presented when the config has one;
// insecure_skip_tls_verify turns verification off. A failed verification is
// kUnavailable with Go's wording: `Get "https://127.0.0.1:6443/api/v1/pods":
// tls: failed to verify certificate: x509: certificate signed by unknown
// authority` (or "x509: certificate is not valid for <host>", "x509:
// certificate has expired or is not yet valid"). A CA or client certificate
// that does not load is kBadRequest from every request.
//
// Thread-safety: every method may be called from many threads at once; each
// request uses its own pooled connection.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "client/client.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"

namespace berth::client {

struct HttpClientOptions {
  Duration request_timeout = std::chrono::seconds(30);
  size_t max_idle_connections = 16;
  std::string user_agent = "berth/v0.1.0";
  // Largest response body read into memory (a LIST of 10,000 objects is a few
  // tens of MB).
  uint64_t max_response_bytes = uint64_t{1} << 30;
};

// The Beast HTTP/1.1 transport (what HttpClient runs on), for a RestClient
// built by hand.
std::unique_ptr<Transport> NewHttpTransport(RestConfig config, HttpClientOptions options = {});

// Typed verbs, Do and DoStream come from RestClient.
class HttpClient final : public RestClient {
 public:
  HttpClient(RestConfig config, HttpClientOptions options = {});
  ~HttpClient() override;

  const RestConfig& config() const { return config_; }

 private:
  const RestConfig config_;
};

}  // namespace berth::client
