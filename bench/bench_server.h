// The API server the apiserver benchmarks drive: one ApiServer on 127.0.0.1 (an
// ephemeral port, 2 HTTP threads) over a MemoryStore with a long watch history,
// started once per process, plus the Pod they create. Header-only; bench code only.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "apiserver/api_server.h"
#include "client/http_client.h"
#include "core/logging.h"
#include "store/memory_store.h"

namespace berth::bench {

struct BenchServer {
  store::MemoryStore store{RealClock::Get(), store::StoreOptions{.history_limit = 200000, .watcher_buffer_limit = 100000}};
  api::AdmissionPipeline pipeline{api::Registry::Default(), api::StrategyRegistry::Default(), api::Convert};
  std::unique_ptr<apiserver::ApiServer> server;

  BenchServer() {
    SetLogLevel("warn");
    apiserver::ApiServerOptions o;
    o.http.port = 0;
    o.http.threads = 2;
    server = std::make_unique<apiserver::ApiServer>(api::Registry::Default(), pipeline, store, RealClock::Get(), o);
    if (!server->Start().ok()) std::abort();
  }
  // A keep-alive HTTP client of this server.
  std::unique_ptr<client::HttpClient> HttpClient() const {
    client::RestConfig cfg;
    cfg.server = "http://127.0.0.1:" + std::to_string(server->port());
    cfg.url = *client::ParseServerUrl(cfg.server);
    return std::make_unique<client::HttpClient>(cfg);
  }
  // The process's one server (never destroyed: benchmarks run until exit).
  static BenchServer& Get() {
    static BenchServer* s = new BenchServer();
    return *s;
  }
};

// A one-container Pod named `name` requesting 1 cpu / 1Gi.
inline nlohmann::json BenchPod(const std::string& name) {
  static const nlohmann::json kTemplate = nlohmann::json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"labels": {"app": "bench"}},
    "spec": {"containers": [{"name": "c", "image": "python:3", "command": ["torchrun", "train.py"],
      "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}})");
  nlohmann::json pod = kTemplate;
  pod["metadata"]["name"] = name;
  return pod;
}

}  // namespace berth::bench
