// What the Kueue controller needs to keep every pending Workload's estimated
// start current (admission/start_time_estimator.h replays the engine):
//   - RunTimeHistory: the run times of finished Workloads, per LocalQueue and
//     shape;
//   - RunTimeOf: a Workload's expected run time and where it comes from;
//   - the `EstimatedStart` condition written on pending Workloads and the
//     `estimatedStart` object of the visibility API's pending workloads.
//
// Kueue has no estimate (kubernetes-sigs/kueue#13159); Slurm's
// `squeue --start` is the model: an expected start from the queue played
// forward against the running jobs' expected ends.
//
// Run time, in this order (the first that is known):
//   1. spec.maximumExecutionTimeSeconds minus
//      status.accumulatedPastExecutionTimeSeconds (Kueue sets the first from
//      the job label kueue.x-k8s.io/max-exec-time-seconds and deactivates the
//      Workload when it is exceeded: workload_lifecycle.h): a bound.
//   2. The job's activeDeadlineSeconds (batch/v1 Job spec, PyTorchJob
//      runPolicy), or every podSet's pod-level activeDeadlineSeconds (the
//      largest): a bound.
//   3. The mean of the last kRunTimeSamples run times (Admitted → Finished)
//      of finished Workloads of the same LocalQueue and shape (podSet names,
//      counts and requests), with their standard deviation as the spread
//      (half the run time with one sample). The conditions' times are whole
//      seconds, so a run shorter than a second is a sample of 0 s or 1 s by
//      where it falls between two ticks; both are kept, and their mean is
//      the true run time.
//   4. Unknown: the Workload never ends in the replay.
//
// The condition (type EstimatedStart) on a pending Workload:
//   status True, reason the weakest run-time source along the estimate's
//   chain (MaxExecutionTime, ActiveDeadline, RunTimeHistory) or
//   RequeueBackoff, message e.g.
//   "Expected to start at 2026-12-04T05:00:00Z (in 40m ± 5m), after
//   team-b/pretrain-abc12 ends (run time from its history)";
//   status False, reason UnknownRunTime: "No estimate: it waits for
//   workloads whose run time is unknown: ns/a, ns/b"; reason
//   BeyondHorizon when the replay stopped at its cycle or time limit, reason
//   ReplayLimit when its cohort tree's replay stopped at max_heads
//   (admission/start_time_estimator.h) before reaching it.
// It is removed when the Workload is admitted.
//
// Thread-safety: RunTimeHistory may be used from any thread; the functions
// are pure.
#pragma once

#include <algorithm>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "admission/model.h"
#include "admission/start_time_estimator.h"
#include "api/conditions.h"
#include "api/object.h"
#include "core/clock.h"

namespace berth::controllers::kueue {

inline constexpr char kEstimatedStartCondition[] = "EstimatedStart";
// A written estimate is rewritten when its start moved by more than this or
// by 10 % of the wait, whichever is larger (or when its reason or the
// workload it waits for changed).
inline constexpr Duration kEstimateRewriteMin = std::chrono::seconds(60);
// The next estimate pass waits at least this many times the previous pass's
// duration: the replay's share of a core stays at most about 1/10 (Slurm's
// backfill scheduler bounds itself the same way, bf_interval and
// bf_max_time).
inline constexpr int kEstimateDutyFactor = 10;
// How long after a request the next pass runs: `period`, or
// kEstimateDutyFactor × `last_pass` when that is longer.
inline Duration EstimateDelay(Duration period, Duration last_pass) {
  return std::max(period, last_pass * kEstimateDutyFactor);
}
// Samples kept per (LocalQueue, shape), and (LocalQueue, shape) pairs kept
// (the least recently recorded is forgotten first): at most 4,096 × 32
// durations.
inline constexpr size_t kRunTimeSamples = 32;
inline constexpr size_t kRunTimeShapes = 4096;

// The shape run times are grouped by: podSet names, counts and their
// containers' and init containers' requests, read from the Workload's JSON
// (no decode, no lock: it runs for every finished Workload at start).
uint64_t RunShape(const api::Object& workload);

class RunTimeHistory {
 public:
  // `local_queue` is "namespace/name".
  void Record(const std::string& local_queue, uint64_t shape, Duration run_time);
  // Mean and spread of the recorded run times; nullopt with none.
  std::optional<admission::RunTime> Lookup(const std::string& local_queue, uint64_t shape) const;
  size_t size() const;

 private:
  struct Samples {
    std::vector<double> seconds;  // ring of at most kRunTimeSamples
    size_t next = 0;
    std::list<std::pair<std::string, uint64_t>>::iterator lru;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, uint64_t>, Samples> samples_;
  std::list<std::pair<std::string, uint64_t>> lru_;  // most recent first
};

// The run time of a Workload (see the header comment); `job_deadline` is
// the owning job's activeDeadlineSeconds when it has one.
admission::RunTime RunTimeOf(const api::Object& workload, std::optional<Duration> job_deadline,
                             const RunTimeHistory& history);

// The EstimatedStart condition of a pending Workload: from its estimate, or,
// without one, from the quota holders of unknown run time it waits for (the
// message names the first 5 and counts the rest; `hit_limit`: the replay
// stopped before reaching it). `now` is what "in 40m" counts from.
api::Condition EstimatedStartCondition(const admission::StartEstimate* estimate,
                                       const admission::UnknownBlockers& unknown_blockers, bool hit_limit, Time now);

// The visibility API's `estimatedStart` of a pending workload:
// {"time": RFC 3339, "waitSeconds", "uncertaintySeconds", "source",
//  "upperBound", "after"} with an estimate, else {"source": "Unknown",
//  "waitsFor": [at most UnknownBlockers::kMaxKeys keys], "waitsForTotal"
//  (only when more wait than are listed)}.
api::Object EstimateJson(const admission::StartEstimate* estimate, const admission::UnknownBlockers& unknown_blockers,
                         Time now);

// The EstimatedStart condition last written on a pending Workload.
struct WrittenEstimate {
  std::string key;  // namespace/name
  api::Condition condition;
  std::optional<Time> start;  // the estimate's start, when it had one
};

// Whether a pass's condition `c` (with its estimate's `start`, computed at
// `now`) is worth a write over the one written (`written`; nullptr: none):
//   - none written: unless its wait is shorter than kEstimateRewriteMin (the
//     next cycles admit it);
//   - its status or reason changed: yes;
//   - both have a start: only when the start moved by more than
//     max(kEstimateRewriteMin, 10 % of the wait). A change of the workload it
//     waits on alone is not: in a busy queue the chain of ends shifts on every
//     pass while the start holds, and a write per pending Workload per pass is
//     the load Kueue moved queue positions out of status fields for
//     (kubernetes-sigs/kueue keps/168-2-pending-workloads-visibility). The
//     message names the workload waited on when written; the visibility API's
//     estimatedStart is always the latest pass's;
//   - otherwise (no start): when the message changed (the blockers named).
bool EstimateWorthWriting(const WrittenEstimate* written, const api::Condition& c, std::optional<Time> start, Time now);

// Whether an update of a Workload changed what a replay reads of it: spec,
// status.admission, requeueState, reclaimablePods, or the status of its
// QuotaReserved, Admitted, Evicted, Finished or PodsReady condition (not
// their messages, nor other conditions such as EstimatedStart itself).
bool EstimateInputsChanged(const api::Object& old_workload, const api::Object& workload);

// "40m", "2h5m", "35s": a wait as a person reads it.
std::string HumanDuration(Duration d);

}  // namespace berth::controllers::kueue
