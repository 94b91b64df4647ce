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
// BM_BaselineEstimates/{0,1}: the accuracy of estimated start times
// (EstimateProbe below). Figures (2026-12-04, 2-core VM, load 0.7; one
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
// Run: build-<x>/bench/admission_bench (add --benchmark_filter=Baseline).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "admission/queue_manager.h"
#include "admission/scheduler.h"
#include "admission/snapshot.h"
#include "admission/start_time_estimator.h"
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
  // With an EstimateProbe: per workload, its first admission and creation
  // (virtual ms) and its cohort.
  std::vector<int64_t> first_admitted_at;
  std::vector<int64_t> created_ms;
  std::vector<std::string> cohort_of;
};

// Estimate accuracy (BM_BaselineEstimates): at every `sample_every`-th
// arrival, one estimate pass (admission/start_time_estimator.h) from the
// replay's state at that instant, as the controller would make it when the
// workload is submitted; afterwards each sampled workload's estimated wait is
// compared with its actual wait to its first admission. Run times are
// `known` (every workload's own, as max-exec-time-seconds would give them) or
// learned (the mean run time of the finished workloads of its ClusterQueue
// and class so far; none before the first ends).
struct EstimateProbe {
  int sample_every = 100;
  bool known = true;
  // Outputs, per sampled workload (index into the replay's workloads).
  std::map<int, int64_t> estimated_wait_ms;  // absent: no estimate
  std::vector<int> sampled;
  std::vector<double> pass_ms;  // wall time of each estimate pass
  std::vector<int64_t> pass_pending;  // pending workloads replayed by each pass
};

Stats Replay(const Scenario& sc, int64_t latency_ms = 0, EstimateProbe* probe = nullptr) {
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

  std::vector<int64_t> first_admitted_at(wls.size(), -1);
  // (cluster queue, class) -> (sum of finished run times, count), for the learned probe.
  std::map<std::pair<std::string, int>, std::pair<int64_t, int64_t>> learned;
  int arrivals = 0;

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
    std::vector<int> sampled_now;
    while (!events.empty() && events.top().t == now_ms) {
      Event e = events.top();
      events.pop();
      Workload& w = wls[static_cast<size_t>(e.wl)];
      if (e.kind == 0) {
        queues.AddOrUpdateWorkload(w, At(now_ms));
        if (probe != nullptr && arrivals++ % probe->sample_every == 0) sampled_now.push_back(e.wl);
      } else if (e.kind == 2) {
        const WorkloadInfo* v = snap.FindWorkload(w.uid);
        if (v != nullptr) in_use -= v->usage.empty() ? 0 : v->usage[0].second;
        snap.RemoveWorkload(w.uid);
        queues.AddOrUpdateWorkload(w, At(now_ms));
        freed.push_back(w.cluster_queue);
      } else if (e.admission_seq == admission_seq[static_cast<size_t>(e.wl)] && snap.RemoveWorkload(w.uid)) {
        in_use -= w.pod_sets[0].requests.Get(cpu);
        freed.push_back(w.cluster_queue);
        const auto& cls = sc.classes[static_cast<size_t>(wl_class[static_cast<size_t>(e.wl)])];
        auto& l = learned[{w.cluster_queue, wl_class[static_cast<size_t>(e.wl)]}];
        l.first += cls.runtime_ms;
        ++l.second;
      }
    }
    if (!freed.empty()) queues.QueueInadmissibleWorkloads(freed, At(now_ms));
    if (!sampled_now.empty()) {
      auto run_time = [&](const Workload& w) {
        const int i = index.at(w.uid);
        const int k = wl_class[static_cast<size_t>(i)];
        if (probe->known) {
          return RunTime{std::chrono::milliseconds(sc.classes[static_cast<size_t>(k)].runtime_ms), {},
                         RunTimeSource::kMaxExecutionTime};
        }
        auto it = learned.find({w.cluster_queue, k});
        if (it == learned.end()) return RunTime{};
        return RunTime{std::chrono::milliseconds(it->second.first / it->second.second), {}, RunTimeSource::kHistory};
      };
      auto t0 = std::chrono::steady_clock::now();
      EstimateResult r = EstimateStartTimes(snap, queues, run_time, At(now_ms));
      auto t1 = std::chrono::steady_clock::now();
      probe->pass_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      probe->pass_pending.push_back(static_cast<int64_t>(r.by_uid.size() + r.unknown.size()));
      for (int i : sampled_now) {
        probe->sampled.push_back(i);
        auto it = r.by_uid.find(wls[static_cast<size_t>(i)].uid);
        if (it == r.by_uid.end()) continue;
        probe->estimated_wait_ms[i] =
            std::chrono::duration_cast<std::chrono::milliseconds>(it->second.start - At(now_ms)).count();
      }
    }

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
          if (first_admitted_at[static_cast<size_t>(i)] < 0) first_admitted_at[static_cast<size_t>(i)] = now_ms;
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
  if (probe != nullptr) {
    st.first_admitted_at = std::move(first_admitted_at);
    for (const Workload& w : wls) {
      st.created_ms.push_back(
          std::chrono::duration_cast<std::chrono::milliseconds>(w.queue_order_timestamp.time_since_epoch()).count());
      // cq-<cohort>-<queue>: the cohort is what precedes the last dash.
      st.cohort_of.push_back(w.cluster_queue.substr(0, w.cluster_queue.rfind('-')));
    }
  }
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
  Stats st;
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
  Report(state, st);
}

BENCHMARK(BM_Baseline)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineEstimates)->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BaselineLatency)->Arg(5)->Arg(10)->Arg(25)->Arg(50)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LargeScale)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace berth::admission

BENCHMARK_MAIN();
