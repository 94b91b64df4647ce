// Replays Kueue's scheduler performance tests (test/performance/scheduler)
// on virtual time through the admission engine alone: queues + snapshot +
// Schedule, no store, no API. The replay (setup, events, what latency models)
// is bench/kueue_replay.h, shared with the real-time harness
// kueue_realtime.cc, which prints its figures next to the zero-latency ones.
//
// BM_Baseline, BM_LargeScale: the zero-latency replay. Reported counters:
// cycles, cycle wall-time p50/p99 (µs, engine only), average time to
// admission per class (virtual ms, admission − creation, last admission), CQ
// usage % (Σ cpu in use × ms / (nominal × elapsed)), evictions, wall_s (the
// virtual time from the first creation to the last event). CPU time of the
// whole replay is Google Benchmark's CPU column. Targets: baseline < 2 s
// CPU, large-scale < 20 s CPU.
//
// BM_BaselineLatency/L: the baseline with a control plane whose every step
// takes L ms (kueue_replay.h), to read the real-time figures against.
//
// BM_BaselineEstimates/{0,1}: the accuracy of estimated start times
// (bench::EstimateProbe). Figures (2026-12-04, 2-core VM, load 0.7; one
// estimate pass per 50 arrivals, 300 sampled workloads):
//   run times known (0): not overtaken (25): |error| p50 0 s (0 %), p90 0.1 s;
//     overtaken by a later, higher-priority arrival (275): p50 47.7 s (86 %),
//     p90 66.1 s (97 %) — the estimate holds for the queue as it is, and the
//     baseline's medium and large classes keep arriving ahead of small ones.
//   learned (1): the same once a class has finished once (8 of 300 had no
//     estimate yet).
//   An estimate pass replays every pending workload: p50 79 ms, p99 289 ms
//   with 6,570 pending (max 13,020), against a scheduling cycle's 117 µs p50;
//   the controller runs at most one pass per --start-estimate-period (5 s),
//   off the scheduling thread: ≤ 6 % of one core with 13,000 pending.
//
// BM_EstimatePass/N: one estimate pass over a backlog of N pending 1-cpu
// workloads behind 2 running ones on a 2-cpu ClusterQueue, every run time
// known (1 s): the shape of bench/job_throughput.py's backlog. Its cost per
// pending workload should not grow with N.
//
// BM_EstimatePassTrees/N/C: one estimate pass over N pending 1-cpu workloads
// spread over C ClusterQueues of 2 cpu in 10 cohorts (Kueue's large-scale
// shape: C = 1,000), run times 1 s plus up to 96 ms so that ends rarely
// coincide, no head limit. An end retries only its cohort tree's
// inadmissible workloads. Figures (2026-12-06, 2-core VM, load 1.3), C = 100:
// N=1,000 33 ms, N=10,000 0.67 s, N=50,000 4.1 s (33, 67 and 82 µs per
// pending workload: more cycles per end as the backlog deepens, not N-fold);
// C = 1,000, N=50,000: 45 s, 6.2 million heads (hence max_heads). Retrying
// every ClusterQueue's at each end instead (the estimator before 56f4529):
// 141 ms and 3.2 s for C = 100, N = 1,000 and 10,000.
//
// Run: build-<x>/bench/admission_bench (add --benchmark_filter=Baseline).
#include <algorithm>
#include <benchmark/benchmark.h>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "admission/start_time_estimator.h"
#include "admission/testing/builders.h"
#include "bench/kueue_replay.h"
#include "bench/kueue_scenarios.h"

namespace berth::admission {
namespace {

using bench::EstimateProbe;
using bench::kBaseline;
using bench::kLargeScale;
using bench::Replay;
using bench::ReplayStats;

void Report(benchmark::State& state, ReplayStats& st) {
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
  ReplayStats st;
  for (auto _ : state) st = Replay(kBaseline);
  Report(state, st);
}
void BM_LargeScale(benchmark::State& state) {
  ReplayStats st;
  for (auto _ : state) st = Replay(kLargeScale);
  Report(state, st);
}
void BM_BaselineLatency(benchmark::State& state) {
  ReplayStats st;
  for (auto _ : state) st = Replay(kBaseline, state.range(0));
  Report(state, st);
}
// Estimate accuracy on the baseline: arg 0 run times known, 1 learned.
// Counters: for the sampled workloads, the median and p90 of |estimated wait
// - actual wait| in seconds and in % of the actual wait (waits of 1 s and
// more), split by whether a later arrival of its cohort was admitted before
// it ("overtaken": higher priority here); how many had no estimate; the wall
// time of an estimate pass (p50/p99, ms) and the pending workloads it
// replayed.
void BM_BaselineEstimates(benchmark::State& state) {
  EstimateProbe probe;
  probe.known = state.range(0) == 0;
  probe.sample_every = 50;
  ReplayStats st;
  for (auto _ : state) st = Replay(kBaseline, 0, &probe);
  // Overtaken: some workload of its cohort created later was first admitted earlier.
  const size_t n = st.first_admitted_at.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return st.created_ms[a] > st.created_ms[b]; });
  std::vector<bool> overtaken(n, false);
  std::map<std::string, int64_t> min_later;  // cohort -> earliest first admission among later arrivals
  for (size_t k = 0; k < n;) {
    size_t e = k;
    while (e < n && st.created_ms[order[e]] == st.created_ms[order[k]]) ++e;
    for (size_t j = k; j < e; ++j) {
      auto it = min_later.find(st.cohort_of[order[j]]);
      const int64_t mine = st.first_admitted_at[order[j]];
      overtaken[order[j]] = it != min_later.end() && mine >= 0 && it->second < mine;
    }
    for (size_t j = k; j < e; ++j) {
      const int64_t t = st.first_admitted_at[order[j]];
      if (t < 0) continue;
      auto [it, fresh] = min_later.emplace(st.cohort_of[order[j]], t);
      if (!fresh) it->second = std::min(it->second, t);
    }
    k = e;
  }
  struct Errors {
    std::vector<double> abs_s, rel_pct;
    int none = 0;
  };
  Errors all, kept, over;
  for (int i : probe.sampled) {
    const int64_t actual = st.first_admitted_at[static_cast<size_t>(i)] - st.created_ms[static_cast<size_t>(i)];
    for (Errors* e : {&all, overtaken[static_cast<size_t>(i)] ? &over : &kept}) {
      auto it = probe.estimated_wait_ms.find(i);
      if (it == probe.estimated_wait_ms.end() || st.first_admitted_at[static_cast<size_t>(i)] < 0) {
        ++e->none;
        continue;
      }
      const double err = std::abs(static_cast<double>(it->second - actual));
      e->abs_s.push_back(err / 1000);
      if (actual >= 1000) e->rel_pct.push_back(err / static_cast<double>(actual) * 100);
    }
  }
  auto pct = [](std::vector<double> v, double p) {
    if (v.empty()) return -1.0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
  };
  for (auto& [name, e] : std::map<std::string, Errors*>{{"all", &all}, {"kept", &kept}, {"overtaken", &over}}) {
    state.counters[name + "_n"] = static_cast<double>(e->abs_s.size());
    state.counters[name + "_no_estimate"] = e->none;
    state.counters[name + "_err_p50_s"] = pct(e->abs_s, 0.5);
    state.counters[name + "_err_p90_s"] = pct(e->abs_s, 0.9);
    state.counters[name + "_err_p50_pct"] = pct(e->rel_pct, 0.5);
    state.counters[name + "_err_p90_pct"] = pct(e->rel_pct, 0.9);
  }
  state.counters["pass_p50_ms"] = pct(probe.pass_ms, 0.5);
  state.counters["pass_p99_ms"] = pct(probe.pass_ms, 0.99);
  std::vector<double> pending(probe.pass_pending.begin(), probe.pass_pending.end());
  state.counters["pass_pending_p50"] = pct(pending, 0.5);
  state.counters["pass_pending_max"] = pct(pending, 1.0);
  std::vector<double> heads(probe.pass_heads.begin(), probe.pass_heads.end());
  state.counters["pass_heads_p50"] = pct(heads, 0.5);
  state.counters["pass_heads_max"] = pct(heads, 1.0);
  state.counters["passes_limited"] = static_cast<double>(probe.passes_limited);
  Report(state, st);
}

using testing::ClusterQueueBuilder;
using testing::FlavorBuilder;
using testing::FlavorQuotasBuilder;
using testing::T;
using testing::WorkloadBuilder;

// An estimate pass's counters: cycles, heads and events, and its time per
// pending workload; an error when one of the n pending has no estimate.
void ReportPass(benchmark::State& state, const EstimateResult& r, int64_t n) {
  if (static_cast<int64_t>(r.by_uid.size()) != n) state.SkipWithError("not every pending workload has an estimate");
  state.counters["cycles"] = static_cast<double>(r.cycles);
  state.counters["heads"] = static_cast<double>(r.heads);
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["time_per_pending"] = benchmark::Counter(
      static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_EstimatePass(benchmark::State& state) {
  const int64_t n = state.range(0);
  ResourceNames names;
  std::vector<ClusterQueue> cqs = {
      ClusterQueueBuilder(names, "cq").Group({FlavorQuotasBuilder("f").Resource("cpu", "2")}).Obj()};
  Snapshot snap(names, std::vector<ResourceFlavor>{FlavorBuilder("f").Obj()}, cqs, std::vector<Cohort>{});
  QueueManager queues;
  queues.AddOrUpdateClusterQueue("cq", QueueingStrategy::kBestEffortFIFO, "", true);
  for (int i = 0; i < 2; ++i) {
    if (!snap.AddWorkload(WorkloadBuilder(names, "run-" + std::to_string(i)).Request("cpu", "1").Admitted("cq", "f", T(0)).Obj())
             .ok()) {
      state.SkipWithError("AddWorkload");
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    queues.AddOrUpdateWorkload(
        WorkloadBuilder(names, "job-" + std::to_string(i)).Request("cpu", "1").Queue("cq").Created(T(static_cast<double>(i) / 1000)).Obj(),
        T(0));
  }
  const RunTime one_second{std::chrono::seconds(1), {}, RunTimeSource::kHistory};
  EstimateResult r;
  for (auto _ : state) {
    r = EstimateStartTimes(snap, queues, [&](const Workload&) { return one_second; }, T(0));
  }
  ReportPass(state, r, n);
}

void BM_EstimatePassTrees(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int kCohorts = 10, kPerCohort = static_cast<int>(state.range(1)) / 10;
  ResourceNames names;
  std::vector<ClusterQueue> cqs;
  for (int c = 0; c < kCohorts; ++c) {
    for (int q = 0; q < kPerCohort; ++q) {
      cqs.push_back(ClusterQueueBuilder(names, "cq-" + std::to_string(c) + "-" + std::to_string(q))
                        .Cohort("cohort-" + std::to_string(c))
                        .Group({FlavorQuotasBuilder("f").Resource("cpu", "2")})
                        .Obj());
    }
  }
  Snapshot snap(names, std::vector<ResourceFlavor>{FlavorBuilder("f").Obj()}, cqs, std::vector<Cohort>{});
  QueueManager queues;
  for (const ClusterQueue& cq : cqs) {
    queues.AddOrUpdateClusterQueue(cq.name, QueueingStrategy::kBestEffortFIFO, cq.cohort, true);
  }
  for (int64_t i = 0; i < n; ++i) {
    const std::string& cq = cqs[static_cast<size_t>(i) % cqs.size()].name;
    queues.AddOrUpdateWorkload(WorkloadBuilder(names, "job-" + std::to_string(i))
                                   .Request("cpu", "1")
                                   .Queue(cq)
                                   .Created(T(static_cast<double>(i) / 1000))
                                   .Obj(),
                               T(0));
  }
  auto run_time = [](const Workload& w) {
    const int64_t i = std::stoll(w.name.substr(w.name.find('-') + 1));
    return RunTime{std::chrono::milliseconds(1000 + i % 97), {}, RunTimeSource::kHistory};
  };
  EstimateOptions unbounded;
  unbounded.max_heads = std::numeric_limits<int64_t>::max();
  EstimateResult r;
  for (auto _ : state) {
    r = EstimateStartTimes(snap, queues, run_time, T(0), unbounded);
  }
  ReportPass(state, r, n);
}

BENCHMARK(BM_Baseline)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineEstimates)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineLatency)->Arg(5)->Arg(10)->Arg(25)->Arg(50)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LargeScale)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EstimatePass)->Arg(100)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EstimatePassTrees)
    ->Args({1000, 100})
    ->Args({10000, 100})
    ->Args({50000, 100})
    ->Args({50000, 1000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace berth::admission

BENCHMARK_MAIN();
