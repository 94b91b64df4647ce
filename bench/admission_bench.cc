// Replays Kueue's scheduler performance tests (test/performance/scheduler)
// on virtual time through the admission engine alone: queues +
// snapshot + Schedule, no store, no API.
//
// Setup as Kueue's runner generator (scenarios in kueue_scenarios.h, shared
// with the real-time harness kueue_realtime.cc): cohorts × ClusterQueues, each
// CQ with one flavor "rf" and one resource cpu (nominalQuota 20,
// borrowingLimit 100, reclaimWithinCohort Any, withinClusterQueue
// LowerPriority); per CQ three workload classes created sequentially every
// `interval` ms (all sets run concurrently), each running `runtime` ms once
// admitted. As the runner's
// controller does, an evicted workload's reservation is cleared at once and it
// is requeued; a finished one releases its quota.
//
// At every virtual instant with events, cycles run until one makes no
// progress (nothing admitted, nothing preempted, nothing moved aside).
// Reported counters: cycles, cycle wall-time p50/p99 (µs, engine only),
// average time to admission per class (virtual ms, admission − creation, last
// admission), CQ usage % (Σ cpu in use × ms / (nominal × elapsed)), evictions.
// CPU time of the whole replay is Google Benchmark's CPU column. Targets:
// baseline < 2 s CPU, large-scale < 20 s CPU.
//
// BM_BaselineLatency/L models a control plane whose every step takes L ms
// (the real-time harness's round trips), to read the real-time figures
// against: an admission is seen by the runner L ms after the cycle (its time
// to admission and its runtime start then), its Finished reaches the
// scheduler L ms after the runner wrote it (quota held runtime + 2L), and a
// preempted workload keeps its quota, as evicting, until the runner's release
// reaches the scheduler 2L ms after the eviction. wall_s is the virtual time
// from the first creation to the last event.
//
// Run: build-<x>/bench/admission_bench (add --benchmark_filter=Baseline).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "admission/queue_manager.h"
#include "admission/scheduler.h"
#include "admission/snapshot.h"
#include "bench/kueue_scenarios.h"

namespace berth::admission {
namespace {

using bench::kBaseline;
using bench::kLargeScale;
using bench::Scenario;

Time At(int64_t ms) { return Time(std::chrono::milliseconds(ms)); }

struct Stats {
  int64_t cycles = 0;
  int64_t evictions = 0;
  std::vector<double> cycle_us;
  std::map<std::string, std::pair<double, int64_t>> admission_ms;  // class -> (sum, n)
  double usage_pct = 0;
  double wall_s = 0;
  int64_t admitted = 0;
  int64_t total = 0;
};

Stats Replay(const Scenario& sc, int64_t latency_ms = 0) {
  ResourceNames names;
  ResourceId cpu = names.Intern("cpu");
  std::vector<ClusterQueue> cqs;
  for (int c = 0; c < sc.cohorts; ++c) {
    for (int q = 0; q < sc.queues_per_cohort; ++q) {
      ClusterQueue cq;
      cq.name = "cq-" + std::to_string(c) + "-" + std::to_string(q);
      cq.cohort = "cohort-" + std::to_string(c);
      cq.preemption.reclaim_within_cohort = PreemptionPolicy::kAny;
      cq.preemption.within_cluster_queue = PreemptionPolicy::kLowerPriority;
      ResourceGroup g;
      g.covered_resources = {cpu};
      g.flavors = {{"rf", {{1000 * sc.nominal_cpu, 1000 * sc.borrowing_limit_cpu, std::nullopt}}}};
      cq.resource_groups = {g};
      cqs.push_back(std::move(cq));
    }
  }
  Snapshot snap(names, {ResourceFlavor{"rf", {}, {}, {}}}, cqs, {});
  QueueManager queues;
  for (const auto& cq : cqs) queues.AddOrUpdateClusterQueue(cq.name, cq.queueing_strategy, cq.cohort, true);
  const int fr = snap.FindFr(snap.FlavorIndex("rf"), cpu);

  // Workloads and events.
  std::vector<Workload> wls;
  std::vector<int> wl_class;
  struct Event {
    int64_t t;
    int64_t seq;
    int kind;  // 0 arrival, 1 finish, 2 release of an evicted workload
    int wl;
    int64_t admission_seq;  // finish events of an earlier admission are stale
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  int64_t seq = 0;
  for (const auto& cq : cqs) {
    for (size_t k = 0; k < sc.classes.size(); ++k) {
      const auto& cls = sc.classes[k];
      for (int i = 0; i < cls.count; ++i) {
        Workload w;
        w.name = cq.name + "-" + cls.name + "-" + std::to_string(i);
        w.namespace_name = cq.name;
        w.uid = w.namespace_name + "/" + w.name;
        w.cluster_queue = cq.name;
        w.priority = cls.priority;
        int64_t created = (i + 1) * cls.interval_ms;
        w.queue_order_timestamp = At(created);
        PodSet ps;
        ps.requests.Set(cpu, cls.cpu * 1000);
        w.pod_sets = {ps};
        events.push({created, seq++, 0, static_cast<int>(wls.size()), 0});
        wls.push_back(std::move(w));
        wl_class.push_back(static_cast<int>(k));
      }
    }
  }
  std::map<std::string, int> index;
  for (size_t i = 0; i < wls.size(); ++i) index[wls[i].uid] = static_cast<int>(i);
  std::vector<int64_t> admitted_at(wls.size(), -1);
  std::vector<int64_t> admission_seq(wls.size(), 0);

  Stats st;
  st.total = static_cast<int64_t>(wls.size());
  double usage_integral = 0;
  int64_t in_use = 0;
  int64_t first_t = -1, last_t = 0;
  const double nominal_total = static_cast<double>(sc.nominal_cpu) * 1000 * static_cast<double>(cqs.size());

  while (!events.empty()) {
    int64_t now_ms = events.top().t;
    if (first_t < 0) first_t = now_ms;
    usage_integral += static_cast<double>(in_use) * static_cast<double>(now_ms - last_t);
    last_t = now_ms;
    std::vector<std::string> freed;
    while (!events.empty() && events.top().t == now_ms) {
      Event e = events.top();
      events.pop();
      Workload& w = wls[static_cast<size_t>(e.wl)];
      if (e.kind == 0) {
        queues.AddOrUpdateWorkload(w, At(now_ms));
      } else if (e.kind == 2) {
        const WorkloadInfo* v = snap.FindWorkload(w.uid);
        if (v != nullptr) in_use -= v->usage.empty() ? 0 : v->usage[0].second;
        snap.RemoveWorkload(w.uid);
        queues.AddOrUpdateWorkload(w, At(now_ms));
        freed.push_back(w.cluster_queue);
      } else if (e.admission_seq == admission_seq[static_cast<size_t>(e.wl)] && snap.RemoveWorkload(w.uid)) {
        in_use -= w.pod_sets[0].requests.Get(cpu);
        freed.push_back(w.cluster_queue);
      }
    }
    if (!freed.empty()) queues.QueueInadmissibleWorkloads(freed, At(now_ms));

    for (int guard = 0; guard < 100000; ++guard) {
      std::vector<Workload> heads = queues.Heads();
      if (heads.empty()) break;
      auto t0 = std::chrono::steady_clock::now();
      CycleResult r = Schedule(snap, heads, At(now_ms));
      auto t1 = std::chrono::steady_clock::now();
      st.cycle_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
      ++st.cycles;
      bool progress = false;
      std::vector<std::string> evicted_cqs;
      for (const auto& h : heads) {
        const EntryResult* er = r.Find(h.uid);
        int i = index[h.uid];
        if (er->outcome == EntryOutcome::kAdmitted) {
          progress = true;
          in_use += h.pod_sets[0].requests.Get(cpu);
          admitted_at[static_cast<size_t>(i)] = now_ms + latency_ms;
          int64_t s = ++admission_seq[static_cast<size_t>(i)];
          const auto& cls = sc.classes[static_cast<size_t>(wl_class[static_cast<size_t>(i)])];
          events.push({now_ms + cls.runtime_ms + 2 * latency_ms, seq++, 1, i, s});
          continue;
        }
        if (er->outcome == EntryOutcome::kDropped) continue;
        // The runner's controller clears an evicted workload's reservation at
        // once: its pods are gone, it is requeued.
        for (const auto& p : er->preempted) {
          progress = true;
          ++st.evictions;
          int vi = index[p.uid];
          ++admission_seq[static_cast<size_t>(vi)];
          admitted_at[static_cast<size_t>(vi)] = -1;
          if (latency_ms > 0) {
            // Held, as evicting, until the runner's release arrives.
            snap.SetEvicting(p.uid, h.uid);
            events.push({now_ms + 2 * latency_ms, seq++, 2, vi, 0});
            continue;
          }
          const WorkloadInfo* v = snap.FindWorkload(p.uid);
          in_use -= v->usage.empty() ? 0 : v->usage[0].second;
          snap.RemoveWorkload(p.uid);
          queues.AddOrUpdateWorkload(wls[static_cast<size_t>(vi)], At(now_ms));
          evicted_cqs.push_back(p.cluster_queue);
        }
        queues.RequeueWorkload(h, er->requeue_reason, At(now_ms));
        if (queues.IsInadmissible(h.uid)) progress = true;
      }
      if (!evicted_cqs.empty()) queues.QueueInadmissibleWorkloads(evicted_cqs, At(now_ms));
      if (!progress) break;
    }
  }
  (void)fr;
  for (size_t i = 0; i < wls.size(); ++i) {
    if (admitted_at[i] < 0) continue;
    ++st.admitted;
    auto& slot = st.admission_ms[sc.classes[static_cast<size_t>(wl_class[i])].name];
    int64_t created = std::chrono::duration_cast<std::chrono::milliseconds>(wls[i].queue_order_timestamp.time_since_epoch()).count();
    slot.first += static_cast<double>(admitted_at[i] - created);
    ++slot.second;
  }
  double elapsed = static_cast<double>(last_t - first_t);
  st.wall_s = elapsed / 1000;
  st.usage_pct = elapsed > 0 ? usage_integral / (nominal_total * elapsed) * 100 : 0;
  return st;
}

void Report(benchmark::State& state, Stats& st) {
  std::sort(st.cycle_us.begin(), st.cycle_us.end());
  auto pct = [&](double p) {
    if (st.cycle_us.empty()) return 0.0;
    return st.cycle_us[std::min(st.cycle_us.size() - 1, static_cast<size_t>(p * static_cast<double>(st.cycle_us.size())))];
  };
  state.counters["cycles"] = static_cast<double>(st.cycles);
  state.counters["cycle_p50_us"] = pct(0.50);
  state.counters["cycle_p99_us"] = pct(0.99);
  state.counters["evictions"] = static_cast<double>(st.evictions);
  state.counters["admitted"] = static_cast<double>(st.admitted);
  state.counters["workloads"] = static_cast<double>(st.total);
  state.counters["cq_usage_pct"] = st.usage_pct;
  state.counters["wall_s"] = st.wall_s;
  for (const auto& [cls, v] : st.admission_ms) {
    state.counters["avg_admission_ms_" + cls] = v.second ? v.first / static_cast<double>(v.second) : 0;
  }
}

void BM_Baseline(benchmark::State& state) {
  Stats st;
  for (auto _ : state) st = Replay(kBaseline);
  Report(state, st);
}
void BM_LargeScale(benchmark::State& state) {
  Stats st;
  for (auto _ : state) st = Replay(kLargeScale);
  Report(state, st);
}
void BM_BaselineLatency(benchmark::State& state) {
  Stats st;
  for (auto _ : state) st = Replay(kBaseline, state.range(0));
  Report(state, st);
}
BENCHMARK(BM_Baseline)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineLatency)->Arg(5)->Arg(10)->Arg(25)->Arg(50)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LargeScale)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace berth::admission

BENCHMARK_MAIN();
