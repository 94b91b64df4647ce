// NodeProxy: how the API server serves pods/log, pods/exec, pods/attach and
// pods/portforward for a pod of a remote node agent (`berth agent` on another
// host): it forwards the request, unchanged, to that node's streaming server
// (apiserver/node_streaming_server.h, which serves the same paths for the
// node's own pods) and relays the answer.
//
// Upstream: kube-apiserver resolves the pod's node and the kubelet's address
// and port (pkg/registry/core/pod/strategy.go LogLocation/ExecLocation,
// pkg/kubelet/client/kubelet_client.go NodeConnectionInfoGetter: the node's
// preferred address and status.daemonEndpoints.kubeletEndpoint.Port), dials
// it over TLS with its kubelet client certificate (--kubelet-client-certificate)
// and proxies the connection (staging/src/k8s.io/apimachinery/pkg/util/proxy/
// upgradeaware.go: an upgrade's bytes are copied both ways; a dial failure is
// "error dialing backend: ..."). berth does the same, with two differences:
//   - The node's serving certificate is always verified: against the CA the
//     node's agent publishes on its Node (annotation kKubeletServingCaAnnotation,
//     which only that node and cluster admins may write: apiserver/
//     node_authorization.h), with the node's name as the server name.
//     kube-apiserver skips this verification unless --kubelet-certificate-authority
//     is set.
//   - A WebSocket is relayed message by message (each binary message the
//     client sends goes to the node as one message, and back), not as raw
//     bytes: the transport under the API server ends the client's WebSocket
//     itself (apiserver/http_server.h). The subprotocols the client offers are
//     offered to the node, and the node's choice is the client's answer.
//
// Which node: the pod's spec.nodeName; where: NodeStreamingEndpointOf(node).
// Answers, besides the node's own answers (passed through with their status,
// content type and body):
//   503 ServiceUnavailable  the node publishes no streaming endpoint
//                           (NodeStreamingEndpointOf's errors)
//   500 InternalError       error dialing backend: <why> (connect refused or
//                           timed out after kNodeDialTimeout, TLS verification
//                           failed: "tls: failed to verify certificate: x509: ...")
//   429 TooManyRequests     kMaxNodeProxySessions relayed sessions (and dials)
//                           are open
// pods/log is relayed as a stream (Transfer-Encoding: chunked) whether or
// not it follows, so the server never holds a whole log; it reads from the
// node only while the client's queue holds less than kNodeProxyQueueBytes.
// A WebSocket relays likewise: the node's messages wait while the client has
// kNodeProxyQueueBytes queued; the client's messages pause the client's
// reading while kNodeProxyQueueBytes wait to be written to the node. Either
// side ending ends the other (a client that goes away closes the node's
// connection, whose session then kills its command, as the kubelet's does).
//
// Authorization is the caller's (api_server.cc), as for embedded nodes.
//
// The answer is deferred (http_server.h DeferredResponse): no I/O thread of
// the API server waits for a node, so a node that does not answer costs its
// own requests kNodeDialTimeout and nobody else anything.
//
// Thread-safety: Forward may be called from many threads at once; Stop from
// one. The WebSocket relays run on the proxy's own I/O thread; a log relay's
// dial and its reading run on threads of their own.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "api/object.h"
#include "apiserver/http_server.h"
#include "core/status.h"
#include "pki/certificates.h"

namespace berth::apiserver {

// The Node annotation that holds the PEM CA certificate the node's streaming
// server's certificate chains to (written by the node's agent; defined in
// pki/certificates.h, which the agent shares).
using pki::kKubeletServingCaAnnotation;
// Connecting to a node, and its TLS and WebSocket handshakes, must be done
// within this. Upstream: kube-apiserver's --kubelet-timeout, default 5 s
// (pkg/kubeapiserver/options/kubelet_client.go... KubeletConfig.HTTPTimeout).
inline constexpr std::chrono::milliseconds kNodeDialTimeout{5000};
// Relayed WebSocket sessions and log streams open at once. Upstream: none (a
// goroutine pair per session); berth bounds them as it bounds exec sessions
// (apiserver/pod_exec.h kMaxExecSessions) and followed logs.
inline constexpr std::size_t kMaxNodeProxySessions = 256;
// Bytes one relay lets wait for the slower side before it stops reading the
// faster one.
inline constexpr std::size_t kNodeProxyQueueBytes = 1 << 20;

// Where a node's streaming server is, from its Node object.
struct NodeStreamingEndpoint {
  std::string host;         // status.addresses: the InternalIP, else the Hostname
  uint16_t port = 0;        // status.daemonEndpoints.kubeletEndpoint.Port
  std::string ca_pem;       // metadata.annotations[kKubeletServingCaAnnotation]
  std::string server_name;  // metadata.name: the serving certificate's DNS name
};

// Errors (kUnavailable, naming the node and what is missing):
//   node "n" has no streaming endpoint (status.daemonEndpoints.kubeletEndpoint.Port
//   is 0: its agent runs without a cluster CA, or is older than berth's node proxy)
//   node "n" has no address in status.addresses
//   node "n" has no berth.dev/kubelet-serving-ca annotation
StatusOr<NodeStreamingEndpoint> NodeStreamingEndpointOf(const api::Object& node);

struct NodeProxyOptions {
  // The API server's kubelet client identity (PEM), which node streaming
  // servers accept (pki/certificates.h kKubeletClientCommonName).
  std::string client_certificate_pem;
  std::string client_key_pem;
  std::chrono::milliseconds dial_timeout = kNodeDialTimeout;
};

class NodeProxy {
 public:
  explicit NodeProxy(NodeProxyOptions options);
  ~NodeProxy();  // Stop()
  NodeProxy(const NodeProxy&) = delete;
  NodeProxy& operator=(const NodeProxy&) = delete;

  // Forwards `req` (method, target and, for an upgrade, its offered
  // WebSocket subprotocols) to the streaming server of `node`, a Node object.
  HandlerResult Forward(const HttpRequest& req, const api::Object& node);

  // Ends every relay (closing both sides) and joins the I/O thread; later
  // Forwards answer 503.
  void Stop();

  // Relays open now (for tests).
  std::size_t open_sessions() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace berth::apiserver
