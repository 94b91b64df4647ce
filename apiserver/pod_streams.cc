#include "apiserver/pod_streams.h"

#include "apiserver/status_response.h"

namespace berth::apiserver {

PodStreams::PodStreams(PodLookup pods, Clock& clock, std::chrono::milliseconds log_poll_interval)
    : logs_(pods, clock, log_poll_interval),
      exec_(pods),
      portforward_(std::move(pods), [this](const std::string& node) { return exec_.ExecutorFor(node); }) {}

PodStreams::~PodStreams() { Stop(); }

bool PodStreams::IsPodStreamSubresource(std::string_view subresource) {
  return subresource == "log" || subresource == "exec" || subresource == "attach" || subresource == "portforward";
}

bool PodStreams::AllowsVerb(const RequestInfo& info) {
  return info.verb == "get" || (info.verb == "create" && info.subresource != "log");
}

bool PodStreams::ServesNode(const std::string& node_name) const { return exec_.ExecutorFor(node_name) != nullptr; }

HandlerResult PodStreams::Serve(const HttpRequest& req, const RequestInfo& info, bool unbounded) {
  if (!AllowsVerb(info)) {
    return StatusResponse(MethodNotAllowedError("the server does not allow this method on the requested resource"));
  }
  if (info.subresource == "log") return logs_.Serve(info.namespace_, info.name, info.query);
  if (info.subresource == "exec") return exec_.Serve(req, info.namespace_, info.name, info.query, unbounded);
  if (info.subresource == "attach") return logs_.ServeAttach(req, info.namespace_, info.name, info.query);
  return portforward_.Serve(req, info.namespace_, info.name, info.query, unbounded);
}

void PodStreams::RegisterExecutor(const std::string& node_name, client::ContainerExecutor* executor) {
  exec_.RegisterExecutor(node_name, executor);
}

void PodStreams::UnregisterExecutor(const std::string& node_name) { exec_.UnregisterExecutor(node_name); }

void PodStreams::RegisterLogSource(const std::string& node_name, client::PodLogSource* source) {
  logs_.RegisterSource(node_name, source);
}

void PodStreams::UnregisterLogSource(const std::string& node_name) { logs_.UnregisterSource(node_name); }

void PodStreams::Stop() {
  logs_.Stop();
  exec_.Stop();
  portforward_.Stop();
}

}  // namespace berth::apiserver
