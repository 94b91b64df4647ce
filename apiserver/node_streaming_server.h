// NodeStreamingServer: a node agent's streaming server, what `berth agent`
// runs so the API server can reach the logs, exec, attach and port-forward
// of the agent's pods: the kubelet's HTTPS server on port 10250
// (pkg/kubelet/server/server.go), which kube-apiserver dials for these
// requests (pkg/registry/core/pod/strategy.go LogLocation/streamLocation).
//
// Transport: TLS only (HttpServer with HttpTlsOptions; the certificate and
// key are the node's serving pair, pki::LoadOrCreateKubeletServingPki, and
// client_ca_pem the cluster CA), on options.address:options.port (0: an
// ephemeral port, port()).
//
// Who is served (the kubelet's InstallAuthFilter, server.go, and its request
// attributes, pkg/kubelet/server/auth.go): a request without a client
// certificate verified against the cluster CA is 401 Unauthorized, with the
// Status message "Unauthorized" (the kubelet writes "Unauthorized"); a
// verified certificate whose CN is not pki::kKubeletClientCommonName is 403
// Forbidden "Forbidden (user=<CN>, verb=<get|create|update|patch|delete>,
// resource=nodes, subresource=proxy)", the kubelet's text for the attributes
// it gives these paths (verb from the HTTP method, nodes/proxy). berth
// departs from the kubelet here: the kubelet authenticates any client
// certificate or token and asks the API server (webhook authorization,
// SubjectAccessReview) whether the user may use nodes/proxy; berth's node
// serves the API server's own client certificate only, so nothing reaches a
// pod of the node without passing the API server's authorization first.
//
// What is served: the API's own paths and query parameters, parsed with
// RequestInfo (request_info.h), and answered through PodStreams
// (pod_streams.h) exactly as the API server answers them for its embedded
// nodes:
//   GET      /api/v1/namespaces/{ns}/pods/{name}/log?...
//   GET|POST /api/v1/namespaces/{ns}/pods/{name}/{exec|attach|portforward}?...
//            (WebSocket upgrades with the same subprotocols)
// The kubelet's own paths are /containerLogs/{ns}/{pod}/{container} and
// /exec|/attach|/portForward/{ns}/{pod}[/{uid}]/{container}; berth keeps the
// API's, so the API server forwards a request unchanged. Anything else is 404
// NotFound ("the server could not find the requested resource"); a pod that
// does not exist or is not bound to this node (spec.nodeName other than
// options.node_name, whatever the lookup returns) is 404 `pods "p" not
// found`: a node never serves another node's pod. Before Attach every pod is
// not found.
//
// Thread-safety: Start/Stop from one controlling thread; Attach and Handle
// from any thread. What Attach is given must outlive Stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "apiserver/http_server.h"
#include "apiserver/pod_lookup.h"
#include "apiserver/pod_streams.h"
#include "client/container_exec.h"
#include "client/log_source.h"
#include "core/clock.h"

namespace berth::apiserver {

// The kubelet's --port default (pkg/kubelet/apis/config/v1beta1/defaults.go,
// ports.KubeletPort).
inline constexpr uint16_t kKubeletPort = 10250;

struct NodeStreamingServerOptions {
  std::string node_name;
  std::string address = "127.0.0.1";
  uint16_t port = kKubeletPort;  // 0 = an ephemeral port
  // The node's serving certificate chain and key, and client_ca_pem = the
  // cluster CA (which signs the API server's kubelet client certificate).
  HttpTlsOptions tls;
  int threads = 2;
  // How often a followed log is read again (PodLogServer).
  std::chrono::milliseconds log_poll_interval{200};
};

class NodeStreamingServer {
 public:
  // `clock` is the log server's (sinceSeconds); it must outlive the server.
  NodeStreamingServer(NodeStreamingServerOptions options, Clock& clock);
  ~NodeStreamingServer();  // Stop()
  NodeStreamingServer(const NodeStreamingServer&) = delete;
  NodeStreamingServer& operator=(const NodeStreamingServer&) = delete;

  // Binds and serves. Errors: kInvalid when options.tls lacks the
  // certificate, the key or the client CA; HttpServer::Start's otherwise
  // (kUnavailable: the address cannot be bound).
  Status Start();
  // The bound port; valid after Start.
  uint16_t port() const;

  // Serves the node's pods from now on: `pods` finds them, `executor` runs
  // exec and port-forward, `logs` answers log and attach.
  void Attach(PodLookup pods, client::ContainerExecutor* executor, client::PodLogSource* logs);

  // Stops the transport, ends every follow and session, then detaches.
  // Idempotent.
  void Stop();

  // The answer to one request (the transport's handler).
  HandlerResult Handle(const HttpRequest& req);

 private:
  // The attached lookup, for this node's pods only.
  StatusOr<std::shared_ptr<const api::Object>> LookupPod(const std::string& ns, const std::string& name) const;

  const NodeStreamingServerOptions options_;
  mutable std::mutex mu_;
  PodLookup pods_;  // guarded by mu_; empty until Attach
  PodStreams streams_;
  std::unique_ptr<HttpServer> http_;
};

}  // namespace berth::apiserver
