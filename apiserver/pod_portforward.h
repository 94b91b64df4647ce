// PodPortForwardServer: GET /api/v1/namespaces/{ns}/pods/{name}/portforward,
// what `kubectl port-forward POD LOCAL:REMOTE` asks for.
//
// kubectl 1.32 (PortForwardWebsockets on by default since 1.31) dials a
// WebSocket upgrade offering the subprotocol SPDY/3.1+portforward.k8s.io and
// speaks SPDY/3.1 (apiserver/spdy.h) inside binary WebSocket messages, the
// bytes of the SPDY connection cut anywhere
// (staging/src/k8s.io/client-go/tools/portforward/tunneling_dialer.go,
// tunneling_connection.go); only when that upgrade fails (an upgrade failure
// or an HTTPS proxy error, fallback_dialer.go and kubectl's
// pkg/cmd/portforward/portforward.go) it retries as a plain SPDY upgrade
// (POST). kube-apiserver answers the tunnel with 101 and the chosen
// protocol behind the same prefix (staging/src/k8s.io/apiserver/pkg/util/
// proxy/streamtunnel.go). berth serves the tunnel only and answers any other
// request with the errors the tunnel would have had, as pods/exec does.
//
// The protocol (portforward.k8s.io; the kubelet's
// pkg/kubelet/cri/streaming/portforward/httpstream.go, client-go's
// tools/portforward/portforward.go): for each local connection the client
// opens two streams with the headers streamtype (error | data), port and
// requestid; the server replies to each, pairs them by requestid, connects
// to the port and copies the data stream both ways. A failure is written to
// the error stream as text (kubectl prints "an error occurred forwarding
// L -> R: <text>" and ends with "lost connection to pod"); the server
// closes the error stream when the forward ends.
//
// Answers before the upgrade:
//   400 BadRequest  pod p does not have a host assigned / ports[i] not an
//                   integer in 1..65535 (the optional `ports` query) / no
//                   SPDY/3.1+portforward.k8s.io offered / a request that is
//                   not a WebSocket upgrade (plain SPDY is not served)
//   404 NotFound    pods "p" not found
//   429 TooManyRequests  kMaxPortForwardSessions or ..PerPod are open
//   503 ServiceUnavailable  no executor for the pod's node here, as exec
// On the error stream: an invalid or missing port header ("port" named), a
// dial failure (the kubelet's "error forwarding port P to pod NS/NAME,
// uid U: dial tcp4 127.0.0.1:P: connect: connection refused"), a pair not
// complete within kPortForwardStreamCreationTimeout.
// Authorization is the caller's (api_server.cc): `create` on
// pods/portforward, and for the WebSocket GET `get` as well.
//
// The session ends when the client goes, when it is idle (no frame either
// way) for kPortForwardIdleTimeout, on Stop, on a SPDY protocol error
// (GOAWAY), and when the pod is deleted (checked every
// kPortForwardPodCheckPeriod): kubectl then exits with "lost connection to
// pod", as it does when the kubelet's sandbox goes.
//
// Thread-safety: every method may be called from any thread. One thread per
// open session.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "apiserver/http_server.h"
#include "apiserver/pod_lookup.h"
#include "apiserver/stream_sessions.h"
#include "apiserver/request_info.h"
#include "client/container_exec.h"

namespace berth::apiserver {

inline constexpr char kPortForwardProtocol[] = "portforward.k8s.io";
// client-go's constants.WebsocketsSPDYTunnelingPrefix + the protocol.
inline constexpr char kPortForwardTunnelProtocol[] = "SPDY/3.1+portforward.k8s.io";

// Open port-forward sessions per server and per pod. Upstream: none (a
// goroutine per connection); berth runs a thread per session.
inline constexpr std::size_t kMaxPortForwardSessions = 128;
inline constexpr std::size_t kMaxPortForwardSessionsPerPod = 16;
// Streams open at once in one session (two per forwarded connection); a
// SYN_STREAM beyond is refused (RST_STREAM REFUSED_STREAM). Upstream: none.
inline constexpr std::size_t kMaxPortForwardStreams = 256;
// Bytes received from the client and not yet written to the pod, per
// session; beyond this the connection's reading pauses.
inline constexpr std::size_t kMaxPortForwardInboundBytes = 1 << 20;
// Bytes queued for the client before the pod's sockets are no longer read.
inline constexpr std::size_t kMaxPortForwardOutputQueueBytes = 1 << 20;
// One read of a pod socket, sent as one DATA frame (client-go's 32 KiB copy buffer).
inline constexpr std::size_t kPortForwardReadChunkBytes = 32 * 1024;
// The kubelet's streaming idle timeout (--streaming-connection-idle-timeout, 4h).
inline constexpr std::chrono::milliseconds kPortForwardIdleTimeout = std::chrono::hours(4);
// A requestid whose second stream has not come this long after the first
// gets "timed out waiting for streams" (the kubelet's DefaultStreamCreationTimeout, 30 s).
inline constexpr std::chrono::milliseconds kPortForwardStreamCreationTimeout = std::chrono::seconds(30);
// How often a session checks that its pod still exists.
inline constexpr std::chrono::milliseconds kPortForwardPodCheckPeriod = std::chrono::seconds(1);

class PodPortForwardServer {
 public:
  // `pods` finds the pods (pod_lookup.h); `executor_for` returns the node's
  // executor (nullptr: none), e.g. PodExecServer::ExecutorFor: exec and
  // port-forward share the node agents' registration.
  PodPortForwardServer(PodLookup pods, std::function<client::ContainerExecutor*(const std::string& node)> executor_for);
  ~PodPortForwardServer();  // Stop()

  // Serves one pods/{name}/portforward request (already authorized); `unbounded`: the
  // requester is not held to the session bounds (StreamSessions::Acquire).
  HandlerResult Serve(const HttpRequest& req, const std::string& ns, const std::string& name, const QueryParams& query,
                      bool unbounded = false);

  // Ends every session and waits for their threads.
  void Stop();
  std::size_t open_sessions() const;

 private:
  class Session;
  friend class Session;

  const PodLookup pods_;
  const std::function<client::ContainerExecutor*(const std::string&)> executor_for_;
  StreamSessions sessions_{kMaxPortForwardSessions, kMaxPortForwardSessionsPerPod};
};

}  // namespace berth::apiserver
