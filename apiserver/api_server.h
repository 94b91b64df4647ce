// ApiServer: the Kubernetes-compatible HTTP API that the real kubectl (v1.32)
// drives, generic over every kind in the api::Registry and backed by a
// store::Store. What it serves (tests/e2e/kubectl_e2e.sh checks it with the real kubectl):
//
//   /version                      {"major":"1","minor":"32",...}: kubectl's
//                                 dispatcher picks its 1.32 client from it
//   /api, /apis                   aggregated discovery v2 when asked, else legacy
//   /api/v1, /apis/{g}[/{v}]      legacy discovery (APIResourceList, APIGroup)
//   /openapi/v3[/{key}]           OpenAPI v3 index and group-version documents
//   /openapi/v2                   an empty Swagger document (openapi.h says why)
//   /healthz /livez /readyz       "ok", or the check list with ?verbose; a failed
//                                 check: 500 with the list, "[-]etcd failed:
//                                 reason withheld" and "readyz check failed";
//                                 /readyz/etcd etc. for one check ("internal
//                                 server error: <reason>"), ?exclude=<check>,
//                                 as staging/src/k8s.io/apiserver/pkg/server/
//                                 healthz/healthz.go. Checks: ping everywhere,
//                                 and on /readyz only "etcd" (Store::Health:
//                                 fails while the store cannot commit, e.g. a
//                                 full disk, and passes again by itself). Upstream
//                                 also lists etcd in /livez and /healthz, where
//                                 its check is a read (factory/etcd3.go
//                                 newETCD3Check); berth's checks writes, which
//                                 a restart (what a failed liveness probe brings)
//                                 cannot repair.
//   resource paths                generic REST, see below
//
// REST, for every served version of every definition (request_info.h parses
// the paths; objects are stored in the storage version and converted to the
// URL's version on the way out, api/conversion.h):
//   GET    object / list           Table when Accept asks for as=Table
//                                  (table_convertor.h); list options
//                                  labelSelector, fieldSelector, limit,
//                                  continue, resourceVersion(+Match)
//   GET    ?watch=true             chunked newline-delimited JSON events from
//                                  resourceVersion ("" or "0": ADDED for every
//                                  current object first), label/field
//                                  selectors, timeoutSeconds, BOOKMARK events
//                                  only with allowWatchBookmarks=true, one-row
//                                  Tables when asked; a too-old
//                                  resourceVersion gets one ERROR event (410
//                                  Expired Status) and the stream ends
//   POST   create (201)            through api::AdmissionPipeline; namespace
//                                  must exist; dryRun=All; fieldValidation
//   PUT    update / status update  409 Conflict on a stale resourceVersion
//   PATCH  merge (RFC 7386), JSON patch (RFC 6902), strategic merge, and
//          apply-patch+yaml (creates when absent; see api_server.cc for what
//          it does and does not do yet)
//   DELETE object (DeleteOptions body or query) / deletecollection
// Warnings from the pipeline (fieldValidation=Warn) become `Warning: 299 - "..."`
// response headers, which kubectl prints as `Warning: ...`.
// Every error is a Kubernetes Status (status_response.h).
//
// Every request, extra handlers included, is first authenticated
// (authentication.h: 401 when it has no valid credential), then acts as the
// user it impersonates (Impersonate-* headers, when allowed), then is
// authorized (authorization.h: 403 with upstream's message). Creates and
// updates of Roles, ClusterRoles and their bindings are refused (403) when
// they would grant rights the user does not hold (rbac/escalation.h
// CheckRbacWrite). The
// review kinds kubectl auth uses are answered by access_reviews.h.
//
// DELETE goes through the Deleter (deletion.h: grace periods, propagation
// policy finalizers, namespace finalization) and the GarbageCollector started
// with the server (garbage_collector.h) carries out the cascades.
//
// Request bodies (objects and DeleteOptions) are JSON, YAML or Kubernetes
// protobuf (what kubectl's typed commands such as `kubectl create namespace`
// send; protobuf_codec.h). Responses are always JSON, which kubectl accepts
// when it asked for protobuf.
//
//   GET|POST pods/{name}/exec      a command in the pod's container over
//                                  WebSocket (pod_exec.h)
//   GET    pods/{name}/log         from the node agent's PodLogSource of the
//                                  pod's node (pod_log.h), follow included
//   any    /apis/{g}/{v}/...       of a group in options.api_services: by its
//                                  handler, after authentication and
//                                  authorization as a resource request
//   POST   serviceaccounts/{name}/token  a TokenRequest: a signed, bound
//                                  token (service_account_token.h)
//   POST   pods/{name}/binding     a Binding (BindingREST): spec.nodeName and
//                                  PodScheduled=True in one write, admitted as
//                                  an update of the pod; 409 when the pod is
//                                  bound, being deleted or gated
// Not served yet: server-side apply field ownership (managedFields),
// Events written by the server itself.
//
// Thread-safety: Handle may be called from any number of threads; Start/Stop
// from one controlling thread. The registry, pipeline, store and clock must
// outlive the ApiServer.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "api/admission_pipeline.h"
#include "api/api_service.h"
#include "api/registry.h"
#include "apiserver/authentication.h"
#include "apiserver/http_server.h"
#include "apiserver/node_proxy.h"
#include "apiserver/per_user_limits.h"
#include "apiserver/request_info.h"
#include "apiserver/service_account_token.h"
#include "client/container_exec.h"
#include "client/log_source.h"
#include "core/clock.h"
#include "store/store.h"

namespace prometheus {
class Registry;
}

namespace berth::apiserver {

// A group-version served by a delegate (api/api_service.h), kube-aggregator's
// APIService without the proxy: the handler is called in process.
struct ApiService {
  api::ApiServiceDescription description;
  // Answers one request of the group, already authenticated as `user` and
  // authorized for `info` (a resource request). Called from any thread.
  std::function<HandlerResult(const HttpRequest&, const RequestInfo& info, const authn::UserInfo& user)> handler;
};

struct ApiServerOptions {
  HttpServerOptions http;
  // Namespaces created at Start when missing and checked again every
  // system_objects_interval of Clock time while the server runs, with the
  // system PriorityClasses and the default RBAC roles and bindings (kube-apiserver's system namespaces controller,
  // pkg/controlplane/controller/systemnamespaces, checks every minute).
  std::vector<std::string> system_namespaces = {"default", "kube-system", "kube-public", "kube-node-lease"};
  Duration system_objects_interval = std::chrono::minutes(1);
  // Interval of BOOKMARK events on watches that allow them.
  Duration bookmark_interval = std::chrono::seconds(60);
  // Run the garbage collector (ownerReferences cascades, namespace deletion;
  // garbage_collector.h) with the server.
  bool garbage_collector = true;
  // When set, every request handled (resource or not, extra handlers
  // included) is counted and timed there as kube-apiserver's
  // apiserver_request_total and apiserver_request_duration_seconds
  // (request_metrics.h). The API server only registers its own families; the
  // binary serves the registry.
  std::shared_ptr<prometheus::Registry> metrics_registry;
  // Remove expired objects (store.h, "Expiry": Events after --event-ttl) every
  // store::kExpirySweepInterval while the server runs.
  bool remove_expired_objects = true;
  // Who makes each request (authentication.h). Off: every request is
  // system:unsecured in system:masters.
  AuthenticationOptions authentication;
  // Authorize requests with RBAC over the stored Roles and bindings
  // (authorization.h); false = every authenticated request is allowed.
  bool rbac_authorization = false;
  // Groups served by delegates, listed in discovery after every group of the
  // Registry.
  std::vector<ApiService> api_services;
  // ServiceAccount tokens (service_account_token.h): the token subresource of
  // serviceaccounts and the JWT authenticator; off without a signing key.
  ServiceAccountTokenOptions service_account_tokens;
  // The API server's client certificate towards node agents' streaming
  // servers (node_proxy.h): pods/log, exec, attach and portforward of pods on
  // nodes of other processes (`berth agent`) are relayed to them. Without a
  // certificate those answer 503 ("no executor for node ...").
  NodeProxyOptions node_proxy;
  // Long-running requests (watches, followed logs, exec, attach, port-forward) one
  // user may hold open at once; beyond it, 429 (per_user_limits.h). Requests of
  // the in-process client are not counted.
  std::size_t max_long_running_requests_per_user = kMaxLongRunningRequestsPerUser;
  // Bytes of whole responses being written to one user (per_user_limits.h).
  std::size_t max_response_bytes_per_user = kMaxResponseBytesPerUser;
  // Exec, attach and port-forward sessions one user may hold open (per_user_limits.h).
  std::size_t max_sessions_per_user = kMaxSessionsPerUser;
};

class ApiServer {
 public:
  ApiServer(const api::Registry& registry, const api::AdmissionPipeline& pipeline, store::Store& store, Clock& clock,
            ApiServerOptions options = {});
  ~ApiServer();
  ApiServer(const ApiServer&) = delete;
  ApiServer& operator=(const ApiServer&) = delete;

  // Creates the system namespaces, PriorityClasses and the default RBAC
  // policy, then listens, and re-creates them when missing every
  // system_objects_interval.
  // kUnavailable when the port cannot be bound.
  Status Start();
  uint16_t port() const;
  // The HTTP transport's counters (http_server.h); any thread.
  HttpServerStats TransportStats() const;
  // Ends every watch, finishes in-flight requests, closes the listener.
  void Stop();

  // Serves one request without the network (what the HTTP transport calls).
  // Streaming results (watches) need a ResponseStream to start.
  HandlerResult Handle(const HttpRequest& request);

  // Serves pods/{name}/log of pods bound to `node_name` from `source`
  // (apiserver/pod_log.h); the source must stay alive until unregistered.
  void RegisterPodLogSource(const std::string& node_name, client::PodLogSource* source);
  void UnregisterPodLogSource(const std::string& node_name);
  // Serves pods/{name}/exec of pods bound to `node_name` with `executor`
  // (apiserver/pod_exec.h); it must stay alive until unregistered.
  void RegisterContainerExecutor(const std::string& node_name, client::ContainerExecutor* executor);
  void UnregisterContainerExecutor(const std::string& node_name);

  // Serves every request whose path is `path_prefix` or lies under it
  // (whole segments: "/metrics" matches "/metrics" and "/metrics/x", not
  // "/metricsx") with `handler`, before any built-in route; this is how the
  // binary adds /metrics and the diagnostics endpoints without the API server
  // knowing them. The longest matching prefix wins. Call before Start; the
  // handler is then called from any number of threads at once.
  using NonResourceHandler = std::function<HandlerResult(const HttpRequest&)>;
  void RegisterNonResourceHandler(std::string path_prefix, NonResourceHandler handler);

  // Creates the system namespaces when missing (Start calls it).
  Status EnsureSystemNamespaces();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::apiserver
