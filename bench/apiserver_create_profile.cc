// Instruction profile of one Pod create over HTTP (not a Google Benchmark:
// a plain driver for callgrind, which counts instructions reliably on a
// shared, noisy machine where wall-clock figures are not).
//
// It starts an ApiServer on 127.0.0.1 with a MemoryStore (as
// apiserver_bench does), warms up with `warmup` creates, then turns callgrind's
// instrumentation on for `count` creates by one keep-alive HttpClient (client
// and server threads both counted), and off again before shutdown. Outside
// valgrind the macros do nothing and it just runs.
// Run:
//   valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=cg.out
//       build/bench/apiserver_create_profile [count=2000] [warmup=200]
// (one command line)
//   callgrind_annotate --inclusive=yes cg.out | less
// Instructions per create = callgrind's "Collected" / count.
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else  // no valgrind headers: the driver still builds and runs, unprofiled
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include <cstdio>
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

int main(int argc, char** argv) {
  using namespace berth;
  using nlohmann::json;
  const int count = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int warmup = argc > 2 ? std::atoi(argv[2]) : 200;
  SetLogLevel("warn");
  store::MemoryStore store{RealClock::Get(), store::StoreOptions{}};
  api::AdmissionPipeline pipeline{api::Registry::Default(), api::StrategyRegistry::Default(), api::Convert};
  apiserver::ApiServerOptions o;
  o.http.port = 0;
  o.http.threads = 2;
  apiserver::ApiServer server(api::Registry::Default(), pipeline, store, RealClock::Get(), o);
  if (!server.Start().ok()) return 1;
  client::RestConfig cfg;
  cfg.server = "http://127.0.0.1:" + std::to_string(server.port());
  cfg.url = *client::ParseServerUrl(cfg.server);
  client::HttpClient c(cfg);
  const client::GroupVersionResource pods{"", "v1", "pods"};
  const auto ref = pods.Namespace("default");
  // The same Pod as apiserver_bench's BM_Create.
  const json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"labels": {"app": "bench"}},
    "spec": {"containers": [{"name": "c", "image": "python:3", "command": ["torchrun", "train.py"],
      "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}})");
  auto create = [&](int i) {
    json p = pod;
    p["metadata"]["name"] = "create-" + std::to_string(i);
    auto created = c.Create(ref, p);
    if (!created.ok()) {
      std::fprintf(stderr, "create %d: %s\n", i, created.status().ToString().c_str());
      std::exit(1);
    }
  };
  for (int i = 0; i < warmup; ++i) create(i);
  CALLGRIND_START_INSTRUMENTATION;
  for (int i = warmup; i < warmup + count; ++i) create(i);
  CALLGRIND_STOP_INSTRUMENTATION;
  std::printf("%d creates profiled\n", count);
  server.Stop();
  return 0;
}
