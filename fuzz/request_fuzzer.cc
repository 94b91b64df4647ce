// Fuzz target: one API request through ApiServer::Handle (request-target and
// query parsing, body decoding as JSON or YAML, the admission pipeline, every
// patch type, selectors, tables, watches) over a MemoryStore, plus
// api::ParseJsonOrYaml on the body alone.
//
// Input: <op byte><request-target>\n<body>. The op byte picks the method and
// headers (see kOps; any other byte maps onto them by value), so the corpus
// (fuzz/corpus/request) reads like requests kubectl sends.
//
// Invariants checked (a violation aborts, which the fuzzer reports):
//   - the handler never throws;
//   - every error response (status >= 400) is a Kubernetes Status document
//     whose `code` equals the HTTP status;
//   - every 2xx JSON response parses.
//
// Built two ways (fuzz/CMakeLists.txt): with libFuzzer (scripts/fuzz), or with
// fuzz/standalone_main.cc, a small deterministic mutator that CTest runs for a
// bounded number of iterations.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"
#include "apiserver/api_server.h"
#include "core/logging.h"
#include "store/memory_store.h"

namespace {

using berth::apiserver::HandlerResult;
using berth::apiserver::HttpRequest;
using berth::apiserver::HttpResponse;
using berth::apiserver::ResponseStream;
using berth::apiserver::StreamingResponse;

struct Op {
  char code;
  const char* method;
  const char* content_type;
  const char* accept;
};
constexpr Op kOps[] = {
    {'P', "POST", "application/json", "application/json"},
    {'Y', "POST", "application/yaml", "application/json"},
    {'U', "PUT", "application/json", "application/json"},
    {'S', "PATCH", "application/strategic-merge-patch+json", "application/json"},
    {'J', "PATCH", "application/json-patch+json", "application/json"},
    {'M', "PATCH", "application/merge-patch+json", "application/json"},
    {'A', "PATCH", "application/apply-patch+yaml", "application/json"},
    {'G', "GET", "", "application/json"},
    {'T', "GET", "", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"},
    {'W', "GET", "", "application/json"},
    {'V', "GET", "", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"},
    {'D', "DELETE", "application/json", "application/json"},
    {'B', "POST", "application/vnd.kubernetes.protobuf", "application/json"},
};

const Op& PickOp(uint8_t b) {
  for (const Op& op : kOps) {
    if (op.code == static_cast<char>(b)) return op;
  }
  return kOps[b % (sizeof(kOps) / sizeof(kOps[0]))];
}

// A stream that ends at once: watches are opened and closed again.
class ClosedStream : public ResponseStream {
 public:
  bool Write(std::string) override { return false; }
  void Close() override {}
  bool Done() const override { return true; }
  void OnDone(std::function<void()> fn) override { fn(); }
};

struct Fixture {
  berth::FakeClock clock;
  berth::store::MemoryStore store{clock};
  berth::api::AdmissionPipeline pipeline{berth::api::Registry::Default(), berth::api::StrategyRegistry::Default(),
                                         berth::api::Convert};
  std::unique_ptr<berth::apiserver::ApiServer> server;

  Fixture() {
    berth::SetLogLevel("off");
    berth::apiserver::ApiServerOptions o;
    o.garbage_collector = false;
    server = std::make_unique<berth::apiserver::ApiServer>(berth::api::Registry::Default(), pipeline, store, clock, o);
    if (!server->EnsureSystemNamespaces().ok()) std::abort();
  }
};

[[noreturn]] void Violation(const char* what, const HttpRequest& req, const HttpResponse& r) {
  std::fprintf(stderr, "invariant violated: %s\n%s %s\n-> %d %s\n", what, req.method.c_str(), req.target.c_str(),
               r.status, r.body.substr(0, 2000).c_str());
  std::abort();
}

void Check(const HttpRequest& req, const HttpResponse& r) {
  if (r.content_type.rfind("application/json", 0) != 0) return;  // text/plain health, etc.
  nlohmann::json body = nlohmann::json::parse(r.body, nullptr, false);
  if (body.is_discarded()) Violation("response body is not JSON", req, r);
  if (r.status >= 400) {
    if (!body.is_object() || body.value("kind", "") != "Status" || body.value("status", "") != "Failure") {
      Violation("error response is not a Failure Status", req, r);
    }
    if (body.value("code", 0) != r.status) Violation("Status code differs from the HTTP status", req, r);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const Op& op = PickOp(data[0]);
  size_t nl = in.find('\n');
  HttpRequest req;
  req.method = op.method;
  req.target = std::string(in.substr(0, nl));
  if (req.target.empty() || req.target[0] != '/') req.target.insert(0, "/");
  req.body = nl == std::string_view::npos ? std::string() : std::string(in.substr(nl + 1));
  if (*op.content_type) req.headers.emplace_back("Content-Type", op.content_type);
  req.headers.emplace_back("Accept", op.accept);

  (void)berth::api::ParseJsonOrYaml(req.body);

  HandlerResult result = fixture->server->Handle(req);
  if (auto* r = std::get_if<HttpResponse>(&result)) {
    Check(req, *r);
  } else if (auto* sr = std::get_if<StreamingResponse>(&result)) {
    if (sr->start) sr->start(std::make_shared<ClosedStream>());
  }
  return 0;
}
