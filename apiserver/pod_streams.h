// PodStreams: the pods subresources that stream from a node —
//   GET      pods/{name}/log          PodLogServer::Serve (pod_log.h)
//   GET|POST pods/{name}/exec         PodExecServer (pod_exec.h)
//   GET|POST pods/{name}/attach       PodLogServer::ServeAttach (pod_log.h)
//   GET|POST pods/{name}/portforward  PodPortForwardServer (pod_portforward.h)
// — in one place, for the two servers that answer them with the same shapes
// and errors: the API server for the pods of its embedded nodes (api_server.h)
// and a node agent's streaming server for its own pods
// (node_streaming_server.h), as kube-apiserver and the kubelet answer the same
// requests (kube-apiserver's pod REST storage resolves the node and proxies
// to the kubelet, pkg/registry/core/pod/rest/subresources.go; the kubelet
// serves them, pkg/kubelet/server/server.go).
//
// Serve checks the verb (RequestInfo's, from the HTTP method: log takes `get`,
// the others `get` or `create`; any other verb is 405 MethodNotAllowed "the
// server does not allow this method on the requested resource", as the API
// server answers it) and dispatches to the subresource's server, which
// answers with its own errors (see each header). Authentication and
// authorization are the caller's.
//
// Nodes: the executor (exec, port-forward) and log source (log, attach) of a
// node are registered under its name; a pod is served by those of its
// spec.nodeName, and with none registered its request is 503 (pod_exec.h).
//
// Thread-safety: every method may be called from any thread; executors and
// sources must outlive their registration. Stop once the transport has stopped
// (no more Serve calls), before destroying what is registered.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "apiserver/http_server.h"
#include "apiserver/pod_exec.h"
#include "apiserver/pod_log.h"
#include "apiserver/pod_lookup.h"
#include "apiserver/pod_portforward.h"
#include "apiserver/request_info.h"
#include "client/container_exec.h"
#include "client/log_source.h"
#include "core/clock.h"

namespace berth::apiserver {

class PodStreams {
 public:
  // `clock` is the log server's (sinceSeconds); `log_poll_interval` how often
  // a followed log is read again (PodLogServer).
  PodStreams(PodLookup pods, Clock& clock,
             std::chrono::milliseconds log_poll_interval = std::chrono::milliseconds(200));
  ~PodStreams();  // Stop()
  PodStreams(const PodStreams&) = delete;
  PodStreams& operator=(const PodStreams&) = delete;

  // Whether pods/{name}/`subresource` is one of the four above.
  static bool IsPodStreamSubresource(std::string_view subresource);

  // Whether `info.verb` is one the subresource takes (Serve answers 405 otherwise).
  static bool AllowsVerb(const RequestInfo& info);

  // Whether an executor is registered for `node_name` (a node of this process:
  // its pods are served here; others' are a remote node's, node_proxy.h).
  bool ServesNode(const std::string& node_name) const;

  // Serves one request for `info`: a core-group pods request with a
  // namespace, a name and IsPodStreamSubresource(info.subresource). `unbounded`: the
  // requester (system:masters) is not held to the exec and port-forward session bounds.
  HandlerResult Serve(const HttpRequest& req, const RequestInfo& info, bool unbounded = false);

  void RegisterExecutor(const std::string& node_name, client::ContainerExecutor* executor);
  void UnregisterExecutor(const std::string& node_name);
  void RegisterLogSource(const std::string& node_name, client::PodLogSource* source);
  void UnregisterLogSource(const std::string& node_name);

  // Ends every follow and session (killing exec'd commands) and joins their
  // threads. Idempotent.
  void Stop();

 private:
  PodLogServer logs_;
  PodExecServer exec_;
  PodPortForwardServer portforward_;
};

}  // namespace berth::apiserver
