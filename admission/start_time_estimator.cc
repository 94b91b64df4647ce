#include "admission/start_time_estimator.h"

#include <algorithm>
#include <queue>
#include <set>
#include <vector>

namespace berth::admission {

std::string_view RunTimeSourceName(RunTimeSource s) {
  switch (s) {
    case RunTimeSource::kMaxExecutionTime:
      return "MaxExecutionTime";
    case RunTimeSource::kActiveDeadline:
      return "ActiveDeadline";
    case RunTimeSource::kHistory:
      return "RunTimeHistory";
    case RunTimeSource::kUnknown:
      break;
  }
  return "Unknown";
}

namespace {

// How a replayed run ends: when, with what accumulated uncertainty and
// source, and which admission it belongs to (a preempted workload's earlier
// end is stale).
struct Run {
  Time end{};
  Duration uncertainty{};
  RunTimeSource source = RunTimeSource::kUnknown;  // weakest along the chain
  bool bound = true;
  int64_t generation = 0;
  std::string key;
};

struct EndEvent {
  Time at;
  int64_t seq;
  std::string uid;
  int64_t generation;
  bool operator>(const EndEvent& o) const { return at != o.at ? at > o.at : seq > o.seq; }
};

RunTimeSource Weakest(RunTimeSource a, RunTimeSource b) { return std::max(a, b); }

}  // namespace

EstimateResult EstimateStartTimes(Snapshot snapshot, QueueManager queues,
                                  const std::function<RunTime(const Workload&)>& run_time, Time now,
                                  const EstimateOptions& options) {
  EstimateResult out;
  queues.ReturnInFlightHeads(now);            // step 1: the live cycle's heads are pending like the rest
  std::unordered_map<std::string, Run> runs;  // quota holders in the replay, by uid
  std::unordered_map<std::string, Workload> pending;  // not yet started in the replay, by uid
  std::priority_queue<EndEvent, std::vector<EndEvent>, std::greater<EndEvent>> ends;
  int64_t seq = 0;
  std::set<Time> wakeups;  // requeue backoffs expiring

  // Quota holders: remaining = run time - time held, at least the spread and 1 s.
  for (int i = 0; i < snapshot.cluster_queue_count(); ++i) {
    for (const auto& [uid, info] : snapshot.Workloads(snapshot.ClusterQueueNode(i))) {
      const RunTime rt = run_time(info->workload);
      Run r;
      r.key = info->workload.Key();
      r.source = rt.source;
      r.bound = IsBound(rt.source);
      if (!rt.duration) {
        runs.emplace(uid, std::move(r));
        continue;
      }
      const Duration held = now - info->workload.quota_reserved_time;
      const Duration remaining = std::max({*rt.duration - held, rt.spread, Duration(std::chrono::seconds(1))});
      r.end = now + remaining;
      r.uncertainty = rt.spread;
      ends.push({r.end, seq++, uid, 0});
      runs.emplace(uid, std::move(r));
    }
  }
  for (int i = 0; i < snapshot.cluster_queue_count(); ++i) {
    for (const Workload* w : queues.Pending(snapshot.NodeName(snapshot.ClusterQueueNode(i)))) {
      pending.emplace(w->uid, *w);
      if (w->requeue_at && *w->requeue_at > now) wakeups.insert(*w->requeue_at);
    }
  }

  // Heads scheduled per cohort tree (root node), and the trees past max_heads.
  std::unordered_map<int, int64_t> tree_heads;
  std::set<int> limited_roots;
  size_t limited_pending = 0;  // pending workloads of those trees left without an estimate
  Time t = now;
  // The end that moved the clock to `t` (its run), for the estimates made at t.
  std::string last_end_uid;
  queues.QueueAllInadmissibleWorkloads(t);
  while (true) {
    // Step 2: cycles at t until no progress.
    for (;;) {
      if (out.cycles >= options.max_cycles) {
        out.hit_limit = true;
        break;
      }
      std::vector<Workload> heads = queues.Heads();
      // A cohort tree past its budget is not replayed further: its heads
      // (popped above) and its other pending workloads leave the copy.
      std::erase_if(heads, [&](const Workload& h) {
        const int node = snapshot.ClusterQueueIndex(h.cluster_queue);
        if (node < 0) return false;
        const int root = snapshot.Root(node);
        if (limited_roots.count(root)) return true;
        if (++tree_heads[root] <= options.max_heads) return false;
        limited_roots.insert(root);
        for (const auto& [uid, w] : pending) {
          const int n = snapshot.ClusterQueueIndex(w.cluster_queue);
          if (n < 0 || snapshot.Root(n) != root) continue;
          queues.DeleteWorkload(uid);
          if (!out.by_uid.count(uid)) ++limited_pending;
        }
        return true;
      });
      if (heads.empty()) break;
      ++out.cycles;
      out.heads += static_cast<int64_t>(heads.size());
      CycleResult r = Schedule(snapshot, heads, t, options.cycle);
      bool progress = false;
      std::vector<std::string> evicted_from;  // the victims' ClusterQueues
      for (const Workload& h : heads) {
        const EntryResult* er = r.Find(h.uid);
        if (er == nullptr || er->outcome == EntryOutcome::kDropped) continue;
        if (er->outcome == EntryOutcome::kAdmitted) {
          progress = true;
          StartEstimate e;
          e.start = t;
          Run run;
          run.key = h.Key();
          run.source = RunTimeSource::kMaxExecutionTime;  // the strongest: no chain yet
          if (!last_end_uid.empty()) {
            const Run& before = runs.at(last_end_uid);
            e.after = before.key;
            e.uncertainty = before.uncertainty;
            e.source = before.source;
            e.upper_bound = before.bound;
            run.uncertainty = before.uncertainty;
            run.source = before.source;
            run.bound = before.bound;
          }
          if (pending.count(h.uid)) out.by_uid[h.uid] = e;
          const RunTime rt = run_time(h);
          run.source = Weakest(run.source, rt.source);
          run.bound = run.bound && IsBound(rt.source);
          auto old = runs.find(h.uid);
          run.generation = old == runs.end() ? 0 : old->second.generation + 1;
          if (rt.duration) {
            run.end = t + *rt.duration;
            run.uncertainty += rt.spread;
            ends.push({run.end, seq++, h.uid, run.generation});
          }
          runs[h.uid] = std::move(run);
          continue;
        }
        for (const PreemptedWorkload& v : er->preempted) {
          progress = true;
          evicted_from.push_back(v.cluster_queue);
          const WorkloadInfo* info = snapshot.FindWorkload(v.uid);
          if (info == nullptr) continue;
          Workload again = info->workload;
          again.state = AdmissionState::kPending;
          again.admission.reset();
          again.evicted_for.clear();
          again.queue_order_timestamp = t;
          snapshot.RemoveWorkload(v.uid);
          auto run = runs.find(v.uid);
          if (run != runs.end()) ++run->second.generation;  // its end is stale
          out.by_uid.erase(v.uid);
          // A victim that was a caller's pending workload, or a running one,
          // is pending again in the replay; it gets an estimate only if it
          // was pending to begin with.
          queues.AddOrUpdateWorkload(again, t);
        }
        queues.RequeueWorkload(h, er->requeue_reason, t);
        if (queues.IsInadmissible(h.uid)) progress = true;
      }
      if (!evicted_from.empty()) queues.QueueInadmissibleWorkloads(evicted_from, t);
      if (!progress) break;
    }
    if (out.hit_limit) break;
    // by_uid holds pending workloads only (a victim's estimate is erased);
    // those of a stopped tree get none.
    if (out.by_uid.size() + limited_pending == pending.size()) break;

    // Step 3: the next event.
    while (!ends.empty()) {
      const EndEvent& e = ends.top();
      auto run = runs.find(e.uid);
      if (run != runs.end() && run->second.generation == e.generation && snapshot.FindWorkload(e.uid)) break;
      ends.pop();
    }
    const bool have_end = !ends.empty();
    const bool have_wakeup = !wakeups.empty();
    if (!have_end && !have_wakeup) break;
    Time next = have_end ? ends.top().at : *wakeups.begin();
    if (have_wakeup && *wakeups.begin() < next) next = *wakeups.begin();
    if (next - now > options.horizon) {
      out.hit_limit = true;
      break;
    }
    t = next;
    ++out.events;
    last_end_uid.clear();
    bool woke = false;
    while (!wakeups.empty() && *wakeups.begin() <= t) {
      wakeups.erase(wakeups.begin());
      woke = true;
    }
    std::vector<std::string> released;  // ClusterQueues whose holders ended
    while (!ends.empty() && ends.top().at <= t) {
      const EndEvent e = ends.top();
      ends.pop();
      auto run = runs.find(e.uid);
      if (run == runs.end() || run->second.generation != e.generation) continue;
      const WorkloadInfo* info = snapshot.FindWorkload(e.uid);
      if (info == nullptr) continue;
      released.push_back(snapshot.NodeName(info->cq));
      if (!snapshot.RemoveWorkload(e.uid)) continue;
      last_end_uid = e.uid;
    }
    // As Kueue on a workload's end: the inadmissible workloads of its cohort
    // tree are retried (trees share no quota, so no other can be let in);
    // a backoff's expiry retries every ClusterQueue.
    if (woke) {
      queues.QueueAllInadmissibleWorkloads(t);
    } else {
      queues.QueueInadmissibleWorkloads(released, t);
    }
  }

  // Blockers per cohort tree (root node): one list each, however many
  // workloads of the tree are pending.
  std::unordered_map<int, std::shared_ptr<UnknownBlockers>> by_root;
  const auto none = std::make_shared<const UnknownBlockers>();
  if (!out.hit_limit) {
    for (int i = 0; i < snapshot.cluster_queue_count(); ++i) {
      const int node = snapshot.ClusterQueueNode(i);
      for (const auto& [holder, info] : snapshot.Workloads(node)) {
        auto run = runs.find(holder);
        if (run == runs.end() || run->second.source != RunTimeSource::kUnknown) continue;
        auto& b = by_root[snapshot.Root(node)];
        if (!b) b = std::make_shared<UnknownBlockers>();
        b->keys.push_back(run->second.key);
        ++b->total;
      }
    }
    for (auto& [root, b] : by_root) {
      const size_t shown = std::min(b->keys.size(), UnknownBlockers::kMaxKeys);
      std::partial_sort(b->keys.begin(), b->keys.begin() + static_cast<std::ptrdiff_t>(shown), b->keys.end());
      b->keys.resize(shown);
    }
  }
  const auto limited = std::make_shared<UnknownBlockers>();
  limited->limited = true;
  for (const auto& [uid, w] : pending) {
    if (out.by_uid.count(uid)) continue;
    const int node = snapshot.ClusterQueueIndex(w.cluster_queue);
    if (node >= 0 && limited_roots.count(snapshot.Root(node))) {
      out.unknown.emplace(uid, limited);
      continue;
    }
    auto b = node >= 0 ? by_root.find(snapshot.Root(node)) : by_root.end();
    out.unknown.emplace(uid, b == by_root.end() ? none : std::shared_ptr<const UnknownBlockers>(b->second));
  }
  out.limited_trees = static_cast<int64_t>(limited_roots.size());
  return out;
}

}  // namespace berth::admission
