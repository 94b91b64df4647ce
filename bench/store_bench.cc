// Store throughput (Google Benchmark). Run:
//   build/bench/store_bench --benchmark_min_time=1
// Targets on a 2-core machine: MemoryStore >= 200,000 updates/s; SqliteStore
// (synchronous=FULL, every create acknowledged only once fsynced) >= 5,000
// creates/s with concurrent writers batched by group commit. items_per_second
// is the figure to read; the multi-writer runs use real time. */UpdateLarge writes
// objects of the size berth stores on average: SqliteNormal against Memory is SQLite's
// own work per write without the fsync (2026-12-07: 47 against 16 us; a third of
// SQLite's samples are the JSON text it stores, nlohmann's dump_escaped). The benchmarks
// call the *Shared methods (no copy of the stored object), as the API server
// should; Memory/UpdateValue is the value-returning Update for comparison.
#include "store/memory_store.h"
#include "store/sqlite_store.h"

#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace berth::store {
namespace {

const api::GroupResource kPods{"", "pods"};

api::Object Pod(const std::string& ns, const std::string& name, int n) {
  static const api::Object kTemplate = api::Object::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"labels": {"app": "bench", "tier": "x"}},
    "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "python:3",
      "command": ["torchrun", "train.py"],
      "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}})");
  api::Object pod = kTemplate;
  pod["metadata"]["namespace"] = ns;
  pod["metadata"]["name"] = name;
  pod["spec"]["n"] = n;
  return pod;
}

// A pod of the size berth stores on average (about 2.6 KB of JSON, README's bytes per
// stored object): the small one above with a status and an annotation of 1,800 bytes.
api::Object LargePod(const std::string& ns, const std::string& name, int n) {
  api::Object pod = Pod(ns, name, n);
  pod["metadata"]["annotations"]["note"] = std::string(1800, 'a');
  pod["status"] = api::Object::parse(R"({"phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.0.0.2",
    "startTime": "2026-12-07T00:00:00Z",
    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-07T00:00:00Z"},
                   {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-12-07T00:00:00Z"}],
    "containerStatuses": [{"name": "c", "ready": true, "restartCount": 0, "image": "python:3",
      "state": {"running": {"startedAt": "2026-12-07T00:00:00Z"}}}]})");
  return pod;
}

FakeClock& Clock() {
  static FakeClock clock;
  return clock;
}

std::string ScratchDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "berth-store-bench-XXXXXX").string();
  BERTH_CHECK(mkdtemp(tmpl.data()) != nullptr);
  return tmpl;
}

// One fresh store per benchmark run, shared by its threads.
enum class Kind { kMemory, kSqliteFull, kSqliteNormal };
std::unique_ptr<Store> g_store;
std::string g_dir;
std::atomic<int64_t> g_next{0};

void OpenStore(Kind kind) {
  g_next = 0;
  if (kind == Kind::kMemory) {
    g_store = std::make_unique<MemoryStore>(Clock());
    return;
  }
  g_dir = ScratchDir();
  SqliteOptions o;
  o.sync = kind == Kind::kSqliteFull ? SqliteOptions::Sync::kFull : SqliteOptions::Sync::kNormal;
  auto s = SqliteStore::Open(g_dir + "/bench.db", Clock(), o);
  BERTH_CHECK_OK(s.status());
  g_store = std::move(s).value();
}

void CloseStore(const benchmark::State&) {
  g_store.reset();
  if (!g_dir.empty()) std::filesystem::remove_all(g_dir);
  g_dir.clear();
}

template <Kind kind>
void Setup(const benchmark::State&) {
  OpenStore(kind);
}

void Preload(int count) {
  for (int i = 0; i < count; ++i) {
    BERTH_CHECK_OK(g_store->Create(kPods, Pod("ns" + std::to_string(i % 10), "p" + std::to_string(i), 0)).status());
  }
}

void BM_Create(benchmark::State& state) {
  for (auto _ : state) {
    int64_t i = g_next++;
    auto c = g_store->CreateShared(kPods, Pod("default", "p" + std::to_string(i), 0));
    if (!c.ok()) state.SkipWithError(c.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}

// Updates through UpdateShared, as the API server should call it: the
// request body is moved in and the response is the stored object itself (no
// copy inside the store). The next body is built in the timed loop as a
// client's copy of what it got back with a new spec (GET-modify-PUT), so
// every iteration still pays one deep copy, on the caller's side; the API
// server pays a JSON decode there instead.
template <api::Object (*Make)(const std::string&, const std::string&, int)>
void BM_UpdateOf(benchmark::State& state) {
  const std::string name = "u" + std::to_string(state.thread_index());
  auto created = g_store->CreateShared(kPods, Make("default", name, 0));
  BERTH_CHECK_OK(created.status());
  ObjectPtr stored = *created;
  int n = 0;
  for (auto _ : state) {
    api::Object body = *stored;
    body["spec"]["n"] = ++n;
    auto u = g_store->UpdateShared(kPods, std::move(body));
    if (!u.ok()) {
      state.SkipWithError(u.status().ToString().c_str());
      break;
    }
    stored = std::move(*u);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Update(benchmark::State& state) { BM_UpdateOf<Pod>(state); }
// With LargePod: a store's cost per write at the object size it meets.
void BM_UpdateLarge(benchmark::State& state) { BM_UpdateOf<LargePod>(state); }

// The same through the value-returning Update, whose result (the store's deep
// copy) is reused as the next body: also one deep copy per update, made inside
// the store. (This was Memory/Update before the shared forms existed.)
void BM_UpdateValue(benchmark::State& state) {
  const std::string name = "u" + std::to_string(state.thread_index());
  auto obj = g_store->Create(kPods, Pod("default", name, 0));
  BERTH_CHECK_OK(obj.status());
  api::Object cur = *obj;
  int n = 0;
  for (auto _ : state) {
    cur["spec"]["n"] = ++n;
    auto u = g_store->Update(kPods, std::move(cur));
    if (!u.ok()) {
      state.SkipWithError(u.status().ToString().c_str());
      break;
    }
    cur = std::move(*u);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Get(benchmark::State& state) {
  Preload(1000);
  int i = 0;
  for (auto _ : state) {
    int k = i++ % 1000;
    auto g = g_store->GetShared({kPods, "ns" + std::to_string(k % 10), "p" + std::to_string(k)});
    benchmark::DoNotOptimize(g);
  }
  state.SetItemsProcessed(state.iterations());
}

// A full list of 1,000 pods; items_per_second counts objects listed.
void BM_List1000(benchmark::State& state) {
  Preload(1000);
  for (auto _ : state) {
    auto l = g_store->List(kPods, {});
    benchmark::DoNotOptimize(l);
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}

// One update delivered to 10 watchers (one of which matches on a label
// selector), drained after every write.
void BM_WatchDelivery(benchmark::State& state) {
  std::vector<std::unique_ptr<Watcher>> watchers;
  for (int i = 0; i < 10; ++i) {
    WatchOptions o;
    if (i == 0) o.predicate = [](const api::Object& obj) { return obj["metadata"]["labels"]["app"] == "bench"; };
    watchers.push_back(std::move(g_store->Watch(kPods, o)).value());
  }
  ObjectPtr stored = *g_store->CreateShared(kPods, Pod("default", "w", 0));
  int n = 0;
  int64_t delivered = 0;
  for (auto _ : state) {
    api::Object body = *stored;
    body["spec"]["n"] = ++n;
    stored = *g_store->UpdateShared(kPods, std::move(body));
    for (auto& w : watchers) {
      while (true) {
        auto ev = w->TryNext();
        if (!ev.ok() || !ev->has_value()) break;
        ++delivered;
      }
    }
  }
  state.SetItemsProcessed(delivered);
}

// The disk's own fsync latency (write 4 KiB + fsync), the floor under every
// durable commit: with N closed-loop writers group commit can acknowledge at
// most about N / fsync-latency creates per second.
void BM_Fsync4KiB(benchmark::State& state) {
  const std::string dir = ScratchDir();
  const std::string path = dir + "/fsync";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  BERTH_CHECK(fd >= 0);
  const std::string page(4096, 'x');
  for (auto _ : state) {
    BERTH_CHECK(write(fd, page.data(), page.size()) == static_cast<ssize_t>(page.size()));
    BERTH_CHECK(fsync(fd) == 0);
  }
  close(fd);
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Fsync4KiB)->Name("Disk/Fsync4KiB")->UseRealTime();

#define STORE_BENCH(fn, kind, name) \
  BENCHMARK(fn)->Name(name)->Setup(Setup<kind>)->Teardown(CloseStore)

STORE_BENCH(BM_Create, Kind::kMemory, "Memory/Create");
STORE_BENCH(BM_Update, Kind::kMemory, "Memory/Update");
STORE_BENCH(BM_Update, Kind::kMemory, "Memory/Update")->Threads(2)->UseRealTime();
STORE_BENCH(BM_UpdateValue, Kind::kMemory, "Memory/UpdateValue");
STORE_BENCH(BM_UpdateLarge, Kind::kMemory, "Memory/UpdateLarge");
STORE_BENCH(BM_Get, Kind::kMemory, "Memory/Get");
STORE_BENCH(BM_List1000, Kind::kMemory, "Memory/List1000");
STORE_BENCH(BM_WatchDelivery, Kind::kMemory, "Memory/WatchDelivery10");

STORE_BENCH(BM_Create, Kind::kSqliteFull, "SqliteFull/Create")->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
STORE_BENCH(BM_Create, Kind::kSqliteNormal, "SqliteNormal/Create")->Threads(1)->Threads(4)->Threads(16)->UseRealTime();
STORE_BENCH(BM_Update, Kind::kSqliteFull, "SqliteFull/Update")->UseRealTime();
STORE_BENCH(BM_UpdateLarge, Kind::kSqliteFull, "SqliteFull/UpdateLarge")->UseRealTime();
STORE_BENCH(BM_UpdateLarge, Kind::kSqliteNormal, "SqliteNormal/UpdateLarge")->UseRealTime();
STORE_BENCH(BM_Get, Kind::kSqliteFull, "SqliteFull/Get");
STORE_BENCH(BM_List1000, Kind::kSqliteFull, "SqliteFull/List1000");
STORE_BENCH(BM_WatchDelivery, Kind::kSqliteFull, "SqliteFull/WatchDelivery10")->UseRealTime();

}  // namespace
}  // namespace berth::store

BENCHMARK_MAIN();
