// One Client contract, two transports (Google Benchmark): a Pod create
// followed by a GET of it, through client::HttpClient over 127.0.0.1
// (keep-alive) and through the in-process client
// (apiserver/in_process_client.h), against one ApiServer on a MemoryStore.
// Both run the same RestClient code; the difference is the transport (HTTP
// framing, sockets and the server's I/O threads vs a direct Handle call).
// Run:
//   build/bench/in_process_client_bench --benchmark_min_time=2
// Figures: items_per_second = create+get pairs per second (real time), for
//   BM_CreateGet<kHttp>/threads:N  and  BM_CreateGet<kInProcess>/threads:N;
//   the ratio in-process / HTTP is what embedding the controllers saves.
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <string>

#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "apiserver/api_server.h"
#include "apiserver/in_process_client.h"
#include "client/http_client.h"
#include "core/logging.h"
#include "store/memory_store.h"
#include "bench/bench_server.h"

namespace berth {
namespace {

using nlohmann::json;

const client::GroupVersionResource kPods{"", "v1", "pods"};

enum Transport { kHttp, kInProcess };

// One listening server for the whole process.
struct Server {
  bench::BenchServer& base = bench::BenchServer::Get();
  std::unique_ptr<client::Client> Client(Transport t) const {
    if (t == kInProcess) return apiserver::NewInProcessClient(*base.server);
    return base.HttpClient();
  }
};

Server& TheServer() {
  static Server s;
  return s;
}
json Pod(const std::string& name) { return bench::BenchPod(name); }

std::atomic<int64_t> g_counter{0};

template <Transport T>
void BM_CreateGet(benchmark::State& state) {
  auto c = TheServer().Client(T);
  const auto ref = kPods.Namespace("default");
  for (auto _ : state) {
    const std::string name = "p-" + std::to_string(g_counter++);
    auto created = c->Create(ref, Pod(name));
    if (!created.ok()) {
      state.SkipWithError(created.status().ToString().c_str());
      break;
    }
    auto got = c->Get(ref, name);
    if (!got.ok()) {
      state.SkipWithError(got.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_TEMPLATE(BM_CreateGet, kHttp)->Threads(1)->Threads(4)->UseRealTime();
BENCHMARK_TEMPLATE(BM_CreateGet, kInProcess)->Threads(1)->Threads(4)->UseRealTime();

}  // namespace
}  // namespace berth

BENCHMARK_MAIN();
