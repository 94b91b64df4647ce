// The engine-only replay of Kueue's scheduler performance scenarios
// (kueue_replay.h).
#include "bench/kueue_replay.h"

#include <chrono>
#include <functional>
#include <optional>
#include <queue>

#include "admission/queue_manager.h"
#include "admission/scheduler.h"
#include "admission/snapshot.h"
#include "admission/start_time_estimator.h"

namespace berth::bench {

using namespace admission;  // NOLINT(build/namespaces): the engine's model, queues, snapshot and scheduler

namespace {

Time At(int64_t ms) { return Time(std::chrono::milliseconds(ms)); }

}  // namespace

double ReplayStats::AvgAdmissionMs(const std::string& cls) const {
  auto it = admission_ms.find(cls);
  return it == admission_ms.end() || it->second.second == 0 ? 0 : it->second.first / static_cast<double>(it->second.second);
}

ReplayStats Replay(const Scenario& sc, int64_t latency_ms, EstimateProbe* probe,
                   const std::vector<int64_t>* arrivals_ms) {
  if (arrivals_ms != nullptr && static_cast<int64_t>(arrivals_ms->size()) != sc.Workloads()) arrivals_ms = nullptr;
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
        int64_t created = arrivals_ms != nullptr ? (*arrivals_ms)[wls.size()] : (i + 1) * cls.interval_ms;
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

  ReplayStats st;
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
      probe->pass_heads.push_back(r.heads);
      probe->passes_limited += r.hit_limit || r.limited_trees > 0 ? 1 : 0;
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
  st.end_s = static_cast<double>(last_t) / 1000;
  st.usage_pct = elapsed > 0 ? usage_integral / (nominal_total * elapsed) * 100 : 0;
  return st;
}

}  // namespace berth::bench
