// PodExecServer: POST|GET /api/v1/namespaces/{ns}/pods/{name}/exec, what
// `kubectl exec [-i] [-t] POD -- CMD...` and `kubectl cp` (exec of tar) ask
// for, over WebSocket (remote_command.h: v5.channel.k8s.io, v4).
//
// In Kubernetes the API server resolves the pod's node and container
// (pkg/registry/core/pod/strategy.go ExecLocation/streamLocation) and
// proxies the upgraded connection to the kubelet, which runs the command
// through the runtime (pkg/kubelet/server/server.go getExec). In berth the
// node agents register a client::ContainerExecutor per node name; the
// process it starts is bridged to the WebSocket here. Pods are found through
// the PodLookup given at construction (pod_lookup.h).
//
// Query parameters (corev1.PodExecOptions): command (repeated, required),
// container ("" = the pod's only container), stdin, stdout, stderr, tty
// (with tty, stderr is not used: the terminal carries both, as the kubelet
// does). kubectl 1.32 sends a WebSocket upgrade (GET) and falls back to SPDY
// (POST) when that upgrade is refused; berth serves the WebSocket only and
// answers any other request with the errors the WebSocket would have had,
// so kubectl prints them after its fallback as it would against a cluster
// ("error: unable to upgrade connection: container not found ("c")").
// Answers:
//   101 Switching Protocols  the session (below)
//   400 BadRequest  no command / none of stdin, stdout, stderr / pod p does
//                   not have a host assigned / a container name must be
//                   specified ... / container c is not valid for pod p /
//                   requested protocol(s) are not supported / a request that
//                   is not a WebSocket upgrade (SPDY is not served)
//   404 NotFound    pods "p" not found
//   429 TooManyRequests  kMaxExecSessions or kMaxExecSessionsPerPod are open
//   500 InternalError  container not found ("c") (not running); the
//                   command could not start (executable not found)
//   503 ServiceUnavailable  no executor for the pod's node here (a remote
//                   agent the API server could not relay to: pod_lookup.h
//                   NodeNotServedError; the relay itself is node_proxy.h)
// Authorization is the caller's (api_server.cc): `create` on pods/exec, and
// for the WebSocket GET `get` as well (kube-apiserver authorizes the GET as
// `get`; 1.35's AuthorizePodWebsocketUpgradeCreatePermission adds the
// `create` check, kubernetes/kubernetes#134577, which berth applies always).
//
// The session: stdin frames are written to the process (at most
// kMaxExecStdinBufferBytes buffered; beyond that the connection's reading
// pauses), its stdout and stderr are sent as frames of at most
// kExecReadChunkBytes (reading pauses while more than
// kMaxExecOutputQueueBytes wait for the client), resize frames set the
// terminal's size, v5's close of stdin ends its input. When the command has
// exited and its output is sent, the exit is written to the error stream
// (remote_command.h ExitStatusJson) and the connection closes normally. A
// client that goes away, a session idle (no frame either way) for
// kExecIdleTimeout, or Stop, kill the command's process group.
//
// Thread-safety: every method may be called from any thread; executors
// must outlive their registration. One thread per open session.
#pragma once

#include <chrono>
#include <condition_variable>
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

// Open exec sessions per server. Upstream: none in kube-apiserver or the
// kubelet's streaming server (each session is a goroutine and the
// runtime's process); berth runs a thread and a process per session.
inline constexpr std::size_t kMaxExecSessions = 128;
// Open exec sessions per pod. Upstream: none.
inline constexpr std::size_t kMaxExecSessionsPerPod = 16;
// A session with no frame in either direction for this long is ended.
// Upstream: the kubelet's --streaming-connection-idle-timeout, default 4h
// (pkg/kubelet/apis/config/v1beta1/defaults.go); kube-apiserver has none.
inline constexpr std::chrono::milliseconds kExecIdleTimeout = std::chrono::hours(4);
// How long a session waits after the upgrade before it forwards the command's first output.
// client-go's WebSocket executor starts reading frames before it has made its streams and
// drops a frame of a stream it has not made yet ("Unknown stream id 1, discarding message",
// tools/remotecommand/websocket.go readDemuxLoop); a runtime's exec startup hides that race
// from the kubelet, berth's process starts at once, so a fast command's output was lost.
inline constexpr std::chrono::milliseconds kExecClientSetupDelay = std::chrono::milliseconds(250);
// Stdin bytes received and not yet taken by the process before the
// connection stops reading. Upstream: client-go's 32 KiB copy buffer and the
// pipes' buffers.
inline constexpr std::size_t kMaxExecStdinBufferBytes = 1 << 20;
// Output bytes queued for a client before the command's output is no longer
// read (the command then blocks on a full pipe).
inline constexpr std::size_t kMaxExecOutputQueueBytes = 1 << 20;
// One read of the command's output, sent as one frame (client-go's 32 KiB
// copy buffer).
inline constexpr std::size_t kExecReadChunkBytes = 32 * 1024;

class PodExecServer {
 public:
  explicit PodExecServer(PodLookup pods);
  ~PodExecServer();  // Stop()

  void RegisterExecutor(const std::string& node_name, client::ContainerExecutor* executor);
  void UnregisterExecutor(const std::string& node_name);
  // The executor registered for `node_name`, nullptr when none (pods/portforward shares it).
  client::ContainerExecutor* ExecutorFor(const std::string& node_name) const;

  // Serves one pods/{name}/exec request (already authorized); `unbounded`: the
  // requester is not held to the session bounds (StreamSessions::Acquire).
  HandlerResult Serve(const HttpRequest& req, const std::string& ns, const std::string& name, const QueryParams& query,
                      bool unbounded = false);

  // Ends every session (killing its command) and waits for their threads.
  void Stop();

  // Sessions open now (for tests).
  std::size_t open_sessions() const;

 private:
  class Session;
  friend class Session;

  const PodLookup pods_;
  mutable std::mutex mu_;
  std::map<std::string, client::ContainerExecutor*> executors_;
  StreamSessions sessions_{kMaxExecSessions, kMaxExecSessionsPerPod};
};

}  // namespace berth::apiserver
