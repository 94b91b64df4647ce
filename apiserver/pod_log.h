// PodLogServer: GET /api/v1/namespaces/{ns}/pods/{name}/log, what
// `kubectl logs [-f] [-c C] [--tail N] [--timestamps] [--since D]` asks for.
//
// In Kubernetes the API server finds the pod's node and proxies the request
// to that node's kubelet. In berth the node agents register a
// client::PodLogSource per node name (RegisterSource); the request goes to the
// source of the pod's spec.nodeName. Pods are found through the PodLookup given
// at construction (pod_lookup.h): the API server's store, or a node agent's
// informer cache (node_streaming_server.h).
//
// Query parameters (corev1.PodLogOptions): container, previous, timestamps,
// tailLines, limitBytes, sinceSeconds, sinceTime (RFC 3339), follow.
// Answers (kube-apiserver's pod LogLocation and the kubelet's texts):
//   200 text/plain          the log text
//   404 NotFound            pods "p" not found
//   400 BadRequest          pod p does not have a host assigned (not bound yet);
//                           the source's errors (container name required or
//                           unknown, container waiting to start, no previous run)
//   400 BadRequest          a malformed tailLines/limitBytes/sinceSeconds/sinceTime
//   503 ServiceUnavailable  no log source registered for the pod's node (a
//                           remote agent the API server could not relay to:
//                           pod_lookup.h NodeNotServedError; node_proxy.h)
// The source applies tailLines reading from the end of the log (the cost is
// the tail's, not the log's). follow=true streams: the current text first
// (tail/limit applied), then what was written after it, read from the
// source's cursor (never the whole log again, also across rotations of the
// log files) every `poll_interval` of real time, at most kFollowChunkBytes
// per read (a follower with more to read reads again without waiting), until
// the followed run has ended (its final output is sent first; a restarted
// container is a new run, and `kubectl logs -f` ends with its container as
// the kubelet's follow does), the pod is gone or terminal, limitBytes is
// reached, the client disconnects or the server stops.
//
// ServeAttach: POST|GET /api/v1/namespaces/{ns}/pods/{name}/attach, what
// `kubectl attach POD [-c C]` asks for (corev1.PodAttachOptions: container,
// stdin, stdout, stderr, tty), over the WebSocket remote-command protocol of
// exec (remote_command.h, v5/v4; kubectl 1.32's default). The kubelet
// connects the runtime's attach to the container's live output
// (pkg/kubelet/cri/streaming/server.go serveAttach); berth follows the
// container's log from where it ends at the upgrade, as `logs -f` does, and
// sends what the container writes as frames of stdout (of stderr when only
// stderr was asked for: the log keeps both streams in one order), from
// kExecClientSetupDelay after the upgrade. When the container's run ends the
// error stream carries Success and the connection closes: kubectl attach
// exits 0 whatever the container's exit code, as against a kubelet. Input
// frames are read and dropped: berth connects no container stdin (a
// container's `stdin: true` and `tty: true` are not implemented).
// Answers before the upgrade: 400 none of stdin/stdout/stderr, no host
// assigned, the source's container errors (name required, not valid,
// waiting to start), no WebSocket upgrade (SPDY is not served) or no v5/v4
// subprotocol; 404 no such pod; 500 container not found ("c") when the
// container is not running (the kubelet attaches to running containers
// only); 503 no source for the pod's node (NodeNotServedError).
//
// Thread-safety: every method may be called from any thread; sources must
// outlive their registration (Unregister before destroying them).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/http_server.h"
#include "apiserver/pod_lookup.h"
#include "apiserver/request_info.h"
#include "client/log_source.h"
#include "core/clock.h"

namespace berth::apiserver {

// Bytes of log a follower reads at once.
inline constexpr size_t kFollowChunkBytes = 1 << 20;

class PodLogServer {
 public:
  PodLogServer(PodLookup pods, Clock& clock,
               std::chrono::milliseconds poll_interval = std::chrono::milliseconds(200));
  ~PodLogServer();  // Stop()

  void RegisterSource(const std::string& node_name, client::PodLogSource* source);
  void UnregisterSource(const std::string& node_name);

  // Serves one pods/{name}/log request.
  HandlerResult Serve(const std::string& ns, const std::string& name, const QueryParams& query);
  // Serves one pods/{name}/attach request (already authorized).
  HandlerResult ServeAttach(const HttpRequest& req, const std::string& ns, const std::string& name,
                            const QueryParams& query);

  // Ends every follow stream and joins the follower thread. Idempotent.
  void Stop();

 private:
  struct Follow;
  void AddFollow(const std::shared_ptr<Follow>& f);
  void FollowLoop();
  client::PodLogSource* Source(const std::string& node);
  // True when the followed container can write no more (pod gone, terminated).
  bool Finished(const Follow& f);

  const PodLookup pods_;
  Clock& clock_;
  const std::chrono::milliseconds poll_interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, client::PodLogSource*> sources_;
  std::vector<std::shared_ptr<Follow>> follows_;
  bool stopping_ = false;
  std::thread follower_;
};

}  // namespace berth::apiserver
