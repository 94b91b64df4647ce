// Estimated start times of pending workloads: the admission engine replayed
// forward on virtual time from the live state.
//
// Kueue gives none (kubernetes-sigs/kueue#13159: "Users see Pending with no
// way to know if admission is minutes or hours away"); Slurm's
// `squeue --start` reports the backfill scheduler's expected start, computed
// the same way: the queue played forward against the expected end times of
// the running jobs. berth's engine is pure, so the replay is the real
// admission logic (Schedule, QueueManager), not a model of it.
//
// The replay, from `now`:
//   1. The heads the live scheduling cycle has in flight go back to their
//      heaps (QueueManager::ReturnInFlightHeads), and every inadmissible
//      workload is retried (QueueAllInadmissibleWorkloads).
//   2. Cycles run (QueueManager::Heads → Schedule → RequeueWorkload) until
//      one makes no progress: nothing admitted, nothing preempted, nothing set
//      aside. A workload admitted at virtual time t gets t as its estimated
//      start and runs for its estimated run time from then. A preemption
//      victim leaves at once and is queued again with its whole run time (a
//      preempted job starts over); its estimate, if it had one, is dropped.
//   3. Virtual time jumps to the next event: the estimated end of a workload
//      holding quota (its quota is released and the inadmissible workloads of
//      its cohort tree are retried, as Kueue's
//      QueueAssociatedInadmissibleWorkloadsAfter does) or a requeue backoff's
//      expiry (status.requeueState.requeueAt: every ClusterQueue's are
//      retried). Then step 2 again. A preemption likewise retries the
//      victims' trees.
// It stops when every pending workload has a start, when no event is left
// (the rest wait behind workloads whose run time is unknown: those never end
// in the replay), or at `max_cycles` cycles or `horizon` of virtual time. A
// cohort tree (trees share no quota, so each replays on its own) whose heads
// scheduled pass `max_heads` is dropped from the replay there: its pending
// workloads not reached get no estimate (UnknownBlockers::limited) while the
// other trees go on.
//
// Run times come from the caller (RunTime), each with its source and spread.
// A quota holder's remaining time is its run time minus the time it has held
// quota (quota_reserved_time), at least its spread and at least one second: a
// run that overran its estimate is still running. An evicting workload's
// remaining time is the caller's too (its pods' termination).
// An estimate's uncertainty is the spread accumulated along the chain of
// ends it waits on: the end of the workload it is admitted after, which
// itself started after another, and so on (sums of spreads). Its source is
// the weakest along that chain (a bound, then history, in that order).
// `upper_bound` is true when every run time along the chain is a bound
// (max-exec-time, activeDeadlineSeconds): the workload starts no later,
// unless later arrivals overtake it.
//
// Not modelled: workloads that arrive later (an estimate holds for the
// queue as it is), waitForPodsReady, admission checks, backoff of an
// eviction in the replay.
//
// Cost: one replay gives the estimates of every pending workload; it is
// O(events × (cycle cost + the retried tree's inadmissible workloads)),
// bounded by `max_heads` per tree and by `max_cycles` and `horizon` (bench/
// admission_bench BM_EstimatePassTrees: 4.1 s for 50,000 pending on 100
// ClusterQueues with no head limit). The caller runs it on copies, off the
// scheduling path (controllers/kueue).
//
// Pure: no clock, no I/O. Thread-safety: none needed (value inputs).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "admission/model.h"
#include "admission/queue_manager.h"
#include "admission/scheduler.h"
#include "admission/snapshot.h"

namespace berth::admission {

// Where a run time comes from, strongest first.
enum class RunTimeSource {
  kMaxExecutionTime,  // spec.maximumExecutionTimeSeconds (kueue.x-k8s.io/max-exec-time-seconds): a bound
  kActiveDeadline,    // the job's activeDeadlineSeconds: a bound
  kHistory,           // finished workloads of the same LocalQueue and shape
  kUnknown,           // nothing known: the workload never ends in the replay
};
// "MaxExecutionTime", "ActiveDeadline", "RunTimeHistory", "Unknown".
std::string_view RunTimeSourceName(RunTimeSource s);
// The bounds are the two first sources.
inline bool IsBound(RunTimeSource s) {
  return s == RunTimeSource::kMaxExecutionTime || s == RunTimeSource::kActiveDeadline;
}

struct RunTime {
  std::optional<Duration> duration;  // nullopt: unknown
  Duration spread{};                 // ± (history: a standard deviation; bounds: 0)
  RunTimeSource source = RunTimeSource::kUnknown;
};

struct StartEstimate {
  Time start{};             // virtual time of its admission
  Duration uncertainty{};   // ±, accumulated along its chain
  // The weakest run-time source along its chain; nullopt when it waits on no
  // run time (it fits now, or once its requeue backoff expires).
  std::optional<RunTimeSource> source;
  bool upper_bound = false;  // every run time along its chain is a bound
  std::string after;  // key (namespace/name) of the workload whose end let it in; "" when none
};

struct EstimateOptions {
  CycleOptions cycle;
  int64_t max_cycles = 200000;
  // Heads scheduled per cohort tree: what a tree's replay costs (4-7 µs of
  // CPU each on a 2-core VM, bench/admission_bench BM_EstimatePass*), so a
  // tree takes at most ~0.7 s of a pass. Kueue's baseline needs at most
  // 15,600 per pass, a backlog of 10,000 on one ClusterQueue 15,000; Kueue's
  // large-scale (50,000 pending on 1,000 ClusterQueues in 10 cohorts) 6.2
  // million in all. Like Slurm's bf_max_job_test (jobs tried per backfill
  // pass, default 500), it bounds the replay of a deep backlog: its
  // workloads not reached have no estimate (UnknownBlockers::limited), and
  // the other trees' estimates do not suffer for it. (The controller also
  // spaces passes by ten times the last one's duration.)
  int64_t max_heads = 100000;
  Duration horizon = std::chrono::hours(24 * 30);
};

// The quota holders of unknown run time a pending workload without an
// estimate waits behind: those of its cohort tree still holding quota when
// the replay ended (trees share no quota, so no other holder's end can let it
// in). One list per tree, shared by its pending workloads.
struct UnknownBlockers {
  static constexpr size_t kMaxKeys = 10;  // keys listed; `total` counts all
  std::vector<std::string> keys;          // namespace/name, sorted, the first kMaxKeys
  size_t total = 0;
  bool limited = false;  // the tree's replay stopped at max_heads (no keys listed)
};

struct EstimateResult {
  // Pending workloads (by uid) with an estimate.
  std::unordered_map<std::string, StartEstimate> by_uid;
  // Pending workloads (by uid) without one, with the blockers of their tree
  // (none listed when the replay stopped at a limit). Never null.
  std::unordered_map<std::string, std::shared_ptr<const UnknownBlockers>> unknown;
  int64_t cycles = 0;
  int64_t heads = 0;  // heads scheduled, summed over the cycles
  int64_t limited_trees = 0;  // cohort trees whose replay stopped at max_heads
  int64_t events = 0;
  bool hit_limit = false;  // stopped at max_cycles or horizon
};

// `run_time` is asked once per workload (quota holders and pending ones) and
// must not throw. `snapshot` (with the quota holders' usage) and `queues`
// (the pending workloads) are taken by value: the replay changes them.
EstimateResult EstimateStartTimes(Snapshot snapshot, QueueManager queues,
                                  const std::function<RunTime(const Workload&)>& run_time, Time now,
                                  const EstimateOptions& options = {});

}  // namespace berth::admission
