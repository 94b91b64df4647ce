#include "apiserver/node_streaming_server.h"

#include "api/unstructured.h"
#include "apiserver/request_info.h"
#include "apiserver/status_response.h"
#include "pki/certificates.h"

namespace berth::apiserver {
namespace {

// The kubelet's API verb for an HTTP method (auth.go GetRequestAttributes).
std::string KubeletVerb(std::string_view method) {
  if (method == "POST") return "create";
  if (method == "GET") return "get";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "";
}

}  // namespace

NodeStreamingServer::NodeStreamingServer(NodeStreamingServerOptions options, Clock& clock)
    : options_(std::move(options)),
      streams_([this](const std::string& ns, const std::string& name) { return LookupPod(ns, name); }, clock,
               options_.log_poll_interval) {}

NodeStreamingServer::~NodeStreamingServer() { Stop(); }

Status NodeStreamingServer::Start() {
  if (options_.tls.certificate_chain_pem.empty() || options_.tls.private_key_pem.empty() ||
      options_.tls.client_ca_pem.empty()) {
    return InvalidError("the node streaming server needs a serving certificate, its key and the cluster CA");
  }
  HttpServerOptions http;
  http.address = options_.address;
  http.port = options_.port;
  http.threads = options_.threads;
  http.tls = options_.tls;
  http_ = std::make_unique<HttpServer>(std::move(http), [this](const HttpRequest& req) { return Handle(req); });
  Status started = http_->Start();
  if (!started.ok()) http_.reset();
  return started;
}

uint16_t NodeStreamingServer::port() const { return http_ ? http_->port() : 0; }

void NodeStreamingServer::Attach(PodLookup pods, client::ContainerExecutor* executor, client::PodLogSource* logs) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pods_ = std::move(pods);
  }
  streams_.RegisterExecutor(options_.node_name, executor);
  streams_.RegisterLogSource(options_.node_name, logs);
}

void NodeStreamingServer::Stop() {
  if (http_) http_->Stop();
  streams_.Stop();
  streams_.UnregisterExecutor(options_.node_name);
  streams_.UnregisterLogSource(options_.node_name);
  std::lock_guard<std::mutex> lock(mu_);
  pods_ = nullptr;
}

StatusOr<std::shared_ptr<const api::Object>> NodeStreamingServer::LookupPod(const std::string& ns,
                                                                            const std::string& name) const {
  PodLookup pods;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pods = pods_;
  }
  const Status not_found = NotFoundError("pods \"" + name + "\" not found");
  if (!pods) return not_found;
  StatusOr<std::shared_ptr<const api::Object>> pod = pods(ns, name);
  if (pod.ok() && api::NestedString(**pod, {"spec", "nodeName"}) != options_.node_name) return not_found;
  return pod;
}

HandlerResult NodeStreamingServer::Handle(const HttpRequest& req) {
  const std::optional<ClientCertificate>& cert = req.client_certificate;
  if (!cert || !cert->verified) return StatusResponse(Status(Code::kUnauthorized, "Unauthorized"));
  if (cert->common_name != pki::kKubeletClientCommonName) {
    return StatusResponse(ForbiddenError("Forbidden (user=" + cert->common_name + ", verb=" + KubeletVerb(req.method) +
                                         ", resource=nodes, subresource=proxy)"));
  }
  StatusOr<RequestInfo> info = ParseRequestInfo(req.method, req.target);
  if (!info.ok()) return StatusResponse(info.status());
  if (!info->is_resource_request || info->api_prefix != "api" || info->api_version != "v1" ||
      info->resource != "pods" || info->namespace_.empty() || info->name.empty() ||
      !PodStreams::IsPodStreamSubresource(info->subresource)) {
    return StatusResponse(NotFoundError("the server could not find the requested resource"));
  }
  return streams_.Serve(req, *info);
}

}  // namespace berth::apiserver
