// The cost of TLS in the transport: a trivial handler (a 2-byte body) behind
// HttpServer on 127.0.0.1, driven by client::HttpClient, over plain HTTP and
// over TLS (ECDSA P-256 certificates from pki/, a client certificate
// verified on every connection).
//   BM_Get/{plain,tls}: GETs/s with 8 keep-alive clients (one connection each);
//   BM_NewConnection/{plain,tls}: one request per new connection (TCP connect,
//     the TLS handshake, the request), one client.
// Run: build/bench/http_transport_bench
#include <benchmark/benchmark.h>
#include <chrono>
#include <memory>

#include "apiserver/http_server.h"
#include "client/http_client.h"
#include "pki/certificates.h"

namespace berth {
namespace {

struct Server {
  pki::CertificateAndKey ca, serving, user;
  std::unique_ptr<apiserver::HttpServer> server;

  explicit Server(bool tls) {
    const auto now = std::chrono::system_clock::now();
    apiserver::HttpServerOptions options;
    if (tls) {
      ca = *pki::CreateCertificateAuthority("bench-ca", now);
      pki::CertificateRequest req;
      req.common_name = "berth-apiserver";
      req.ip_addresses = {"127.0.0.1"};
      req.server_auth = true;
      serving = *pki::IssueCertificate(ca, req, now);
      pki::CertificateRequest client_req;
      client_req.common_name = "bench";
      client_req.organizations = {"system:masters"};
      client_req.client_auth = true;
      user = *pki::IssueCertificate(ca, client_req, now);
      options.tls = apiserver::HttpTlsOptions{serving.certificate_pem, serving.private_key_pem, ca.certificate_pem};
    }
    server = std::make_unique<apiserver::HttpServer>(options, [](const apiserver::HttpRequest&) {
      return apiserver::HandlerResult(apiserver::HttpResponse{200, "text/plain", {}, "ok"});
    });
    if (!server->Start().ok()) std::abort();
  }

  client::RestConfig Config() const {
    client::RestConfig cfg;
    cfg.server =
        std::string(ca.certificate_pem.empty() ? "http" : "https") + "://127.0.0.1:" + std::to_string(server->port());
    cfg.url = *client::ParseServerUrl(cfg.server);
    cfg.certificate_authority_pem = ca.certificate_pem;
    cfg.client_certificate_pem = user.certificate_pem;
    cfg.client_key_pem = user.private_key_pem;
    return cfg;
  }
};

Server& TheServer(bool tls) {
  static Server plain(false);
  static Server secure(true);
  return tls ? secure : plain;
}

// GETs of /healthz through one HttpClient, as many as the benchmark asks.
void RunGets(benchmark::State& state, client::HttpClientOptions options) {
  client::HttpClient c(TheServer(state.range(0) == 1).Config(), options);
  client::RawRequest r;
  r.target = "/healthz";
  for (auto _ : state) {
    auto res = c.Do(r);
    if (!res.ok() || res->status != 200) state.SkipWithError("request failed");
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Get(benchmark::State& state) { RunGets(state, {}); }
BENCHMARK(BM_Get)->ArgName("tls")->Arg(0)->Arg(1)->Threads(8)->UseRealTime();

void BM_NewConnection(benchmark::State& state) {
  client::HttpClientOptions options;
  options.max_idle_connections = 0;  // every request on a new connection
  RunGets(state, options);
}
BENCHMARK(BM_NewConnection)->ArgName("tls")->Arg(0)->Arg(1)->UseRealTime();

}  // namespace
}  // namespace berth

BENCHMARK_MAIN();
