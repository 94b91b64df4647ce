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
#include "authn/token_file.h"
#include "client/http_client.h"
#include "core/logging.h"
#include "pki/certificates.h"
#include "store/memory_store.h"

namespace berth::bench {

struct BenchServer {
  store::MemoryStore store{RealClock::Get(), store::StoreOptions{.history_limit = 200000, .watcher_buffer_limit = 100000}};
  api::AdmissionPipeline pipeline{api::Registry::Default(), api::StrategyRegistry::Default(), api::Convert};
  std::unique_ptr<apiserver::ApiServer> server;
  std::string ca_pem;  // set when secured

  // Secured: what `berth server` serves by default: TLS, authentication and
  // RBAC, with the token "bench-token" of the user "bench" in the group
  // "bench", which a RoleBinding lets create and read pods in "default" (so
  // each request walks the bindings as a team member's does).
  explicit BenchServer(bool secured = false) {
    SetLogLevel("warn");
    apiserver::ApiServerOptions o;
    o.http.port = 0;
    o.http.threads = 2;
    if (secured) {
      const Time now = RealClock::Get().Now();
      auto ca = pki::CreateCertificateAuthority("bench-ca", now);
      pki::CertificateRequest request;
      request.common_name = "bench";
      request.ip_addresses = {"127.0.0.1"};
      request.server_auth = true;
      auto serving = ca.ok() ? pki::IssueCertificate(*ca, request, now) : ca.status();
      auto tokens = authn::TokenFile::Parse("bench-token,bench,u-1,bench\nadmin-token,admin,u-0,system:masters\n");
      if (!ca.ok() || !serving.ok() || !tokens.ok()) std::abort();
      ca_pem = ca->certificate_pem;
      o.http.tls = apiserver::HttpTlsOptions{serving->certificate_pem, serving->private_key_pem, ca_pem};
      o.authentication.enabled = true;
      o.authentication.token_file = std::make_shared<const authn::TokenFile>(std::move(tokens).value());
      o.rbac_authorization = true;
    }
    server = std::make_unique<apiserver::ApiServer>(api::Registry::Default(), pipeline, store, RealClock::Get(), o);
    if (!server->Start().ok()) std::abort();
    if (secured) {
      auto admin = HttpClient("admin-token");
      const client::GroupVersionResource roles{"rbac.authorization.k8s.io", "v1", "clusterroles"};
      const client::GroupVersionResource bindings{"rbac.authorization.k8s.io", "v1", "rolebindings"};
      auto role = admin->Create(roles, nlohmann::json::parse(R"({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole", "metadata": {"name": "pod-writer"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "get", "list"]}]})"));
      auto binding = admin->Create(bindings.Namespace("default"), nlohmann::json::parse(R"({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "bench"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pod-writer"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "bench"}]})"));
      if (!role.ok() || !binding.ok()) std::abort();
    }
  }
  // A keep-alive HTTP client of this server; secured, with this bearer token.
  std::unique_ptr<client::HttpClient> HttpClient(const std::string& token = "bench-token") const {
    client::RestConfig cfg;
    cfg.server = std::string(ca_pem.empty() ? "http" : "https") + "://127.0.0.1:" + std::to_string(server->port());
    cfg.url = *client::ParseServerUrl(cfg.server);
    if (!ca_pem.empty()) {
      cfg.certificate_authority_pem = ca_pem;
      cfg.bearer_token = token;
    }
    return std::make_unique<client::HttpClient>(cfg);
  }
  // The process's one server of each kind (never destroyed: benchmarks run until exit).
  static BenchServer& Get() {
    static BenchServer* s = new BenchServer();
    return *s;
  }
  static BenchServer& Secured() {
    static BenchServer* s = new BenchServer(true);
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
