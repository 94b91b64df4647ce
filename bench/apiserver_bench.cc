// The API server over HTTP (Google Benchmark): an in-process ApiServer on
// 127.0.0.1 with a MemoryStore, driven by client::HttpClient (keep-alive).
// Run:
//   build/bench/apiserver_bench --benchmark_min_time=2
// Figures (targets on a 2-core machine, issue 3):
//   BM_Create/threads:8      Pods created/s by 8 keep-alive clients   >= 5,000/s
//   BM_CreateSecured/threads:8  the same over TLS with a bearer token and RBAC
//                            (issue 19: within 25 % of BM_Create)
//   BM_Get/threads:8         GETs/s of one Pod by 8 clients
//   BM_List10k               latency of one LIST of 10,000 Pods (JSON, not Table)
//   BM_WatchDelivery         delay from just before a PATCH is sent to its
//                            MODIFIED event arriving, on each of 100 concurrent
//                            watches; counters p50_ms / p99_ms / max_ms
//                                                                 p99 < 50 ms
// items_per_second is the figure for the throughput runs (real time).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "apiserver/api_server.h"
#include "client/http_client.h"
#include "core/logging.h"
#include "store/memory_store.h"
#include "bench/bench_server.h"

namespace berth {
namespace {

using nlohmann::json;

const client::GroupVersionResource kPods{"", "v1", "pods"};

bench::BenchServer& TheServer() { return bench::BenchServer::Get(); }
json Pod(const std::string& name) { return bench::BenchPod(name); }

std::atomic<int64_t> g_pod_counter{0};

void BM_Create(benchmark::State& state) {
  auto c = TheServer().HttpClient();
  const auto ref = kPods.Namespace("default");
  for (auto _ : state) {
    auto created = c->Create(ref, Pod("create-" + std::to_string(g_pod_counter++)));
    if (!created.ok()) state.SkipWithError(created.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Create)->Threads(8)->UseRealTime();

// The same creates through TLS, a bearer token and RBAC (a RoleBinding of the
// user's group): the cost of `berth server`'s default security per request.
void BM_CreateSecured(benchmark::State& state) {
  auto c = bench::BenchServer::Secured().HttpClient();
  const auto ref = kPods.Namespace("default");
  for (auto _ : state) {
    auto created = c->Create(ref, Pod("secured-" + std::to_string(g_pod_counter++)));
    if (!created.ok()) state.SkipWithError(created.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CreateSecured)->Threads(8)->UseRealTime();

void BM_Get(benchmark::State& state) {
  auto c = TheServer().HttpClient();
  const auto ref = kPods.Namespace("default");
  if (state.thread_index() == 0) (void)c->Create(ref, Pod("get-target"));
  for (auto _ : state) {
    auto got = c->Get(ref, "get-target");
    if (!got.ok() && got.status().code() != Code::kNotFound) state.SkipWithError(got.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Get)->Threads(8)->UseRealTime();

void BM_List10k(benchmark::State& state) {
  auto c = TheServer().HttpClient();
  const auto ref = kPods.Namespace("list10k");
  static bool filled = false;
  if (!filled) {
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "list10k"}}}};
    (void)c->Create(client::GroupVersionResource{"", "v1", "namespaces"}, ns);
    for (int i = 0; i < 10000; ++i) {
      auto created = c->Create(ref, Pod("p-" + std::to_string(i)));
      if (!created.ok()) {
        state.SkipWithError(created.status().ToString().c_str());
        return;
      }
    }
    filled = true;
  }
  for (auto _ : state) {
    auto list = c->List(ref);
    if (!list.ok() || list->items.size() != 10000) state.SkipWithError("list failed");
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_List10k)->Unit(benchmark::kMillisecond)->UseRealTime();

// 100 watchers on one Pod; each iteration patches it once and waits until
// every watcher has seen the change. The delay is measured per watcher from
// just before the PATCH is sent (the sent time travels in an annotation).
void BM_WatchDelivery(benchmark::State& state) {
  constexpr int kWatchers = 100;
  auto writer = TheServer().HttpClient();
  const auto ref = kPods.Namespace("default");
  (void)writer->Create(ref, Pod("watched"));
  auto start = writer->Get(ref, "watched");
  if (!start.ok()) {
    state.SkipWithError("no pod");
    return;
  }
  std::vector<std::unique_ptr<client::HttpClient>> clients;
  std::vector<std::unique_ptr<client::WatchStream>> streams;
  for (int i = 0; i < kWatchers; ++i) {
    clients.push_back(TheServer().HttpClient());
    client::WatchOptions wo;
    wo.resource_version = api::ResourceVersion(*start);
    wo.field_selector = "metadata.name=watched";
    auto w = clients.back()->Watch(ref, wo);
    if (!w.ok()) {
      state.SkipWithError(w.status().ToString().c_str());
      return;
    }
    streams.push_back(std::move(w).value());
  }
  std::mutex mu;
  std::vector<double> delays_ms;
  std::atomic<int64_t> seen{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int i = 0; i < kWatchers; ++i) {
    readers.emplace_back([&, i] {
      while (!stop) {
        auto ev = streams[i]->Next(std::chrono::milliseconds(200));
        if (!ev.ok()) return;
        if (!ev->has_value() || (*ev)->type != client::WatchEventType::kModified) continue;
        const json& obj = *(*ev)->object;
        auto a = obj["metadata"]["annotations"].find("sent");
        if (a == obj["metadata"]["annotations"].end()) continue;
        const int64_t sent = std::stoll(a->get<std::string>());
        const int64_t now = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count();
        {
          std::lock_guard<std::mutex> l(mu);
          delays_ms.push_back((now - sent) / 1000.0);
        }
        seen++;
      }
    });
  }
  int64_t expected = 0;
  for (auto _ : state) {
    const int64_t sent = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count();
    json patch = {{"metadata", {{"annotations", {{"sent", std::to_string(sent)}}}}}};
    auto r = writer->Patch(ref, "watched", client::PatchType::kMerge, patch.dump());
    if (!r.ok()) {
      state.SkipWithError(r.status().ToString().c_str());
      break;
    }
    expected += kWatchers;
    while (seen < expected) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  stop = true;
  for (auto& s : streams) s->Stop();
  for (auto& t : readers) t.join();
  std::sort(delays_ms.begin(), delays_ms.end());
  if (!delays_ms.empty()) {
    auto pct = [&](double p) { return delays_ms[std::min(delays_ms.size() - 1, size_t(p * delays_ms.size()))]; };
    state.counters["p50_ms"] = pct(0.50);
    state.counters["p99_ms"] = pct(0.99);
    state.counters["max_ms"] = delays_ms.back();
    state.counters["deliveries"] = static_cast<double>(delays_ms.size());
  }
}
BENCHMARK(BM_WatchDelivery)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(200);

}  // namespace
}  // namespace berth

BENCHMARK_MAIN();
