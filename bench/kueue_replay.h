// Kueue's scheduler performance scenarios (Kueue test/performance/scheduler,
// kueue_scenarios.h) replayed on virtual time through the admission engine
// alone: QueueManager + Snapshot + Schedule, no store, no API, no threads.
// With `latency_ms` 0 this is the run with a zero-latency control plane: the
// bound Kueue's semantics allow, against which the real-time harness
// (kueue_realtime.cc) and admission_bench (BM_Baseline, BM_LargeScale) read
// their figures.
//
// Setup as Kueue's runner generator: cohorts × ClusterQueues "cq-<c>-<q>" in
// cohort "cohort-<c>", each with one flavor "rf" and one resource cpu
// (nominalQuota, borrowingLimit from the scenario; reclaimWithinCohort Any,
// withinClusterQueue LowerPriority); per ClusterQueue one workload set per
// class, its i-th workload (1-based) created at i × interval ms of virtual
// time (all sets concurrently), each running `runtime_ms` once admitted. As
// the runner's controller does, an evicted workload's reservation is cleared
// at once and it is requeued; a finished one releases its quota.
//
// At every virtual instant with events, cycles run (Heads → Schedule →
// RequeueWorkload) until one makes no progress (nothing admitted, nothing
// preempted, nothing moved aside).
//
// latency_ms = L > 0 models a control plane whose every step takes L ms (the
// real-time harness's round trips): an admission is seen by the runner L ms
// after the cycle (its time to admission and its runtime start then), its
// Finished reaches the scheduler L ms after the runner wrote it (quota held
// runtime + 2L), and a preempted workload keeps its quota, as evicting, until
// the runner's release reaches the scheduler 2L ms after the eviction.
//
// Time: virtual (ms from the scenario's start, i.e. from 0; the first
// creation is one interval later), except cycle_us and the probe's pass_ms,
// which are real wall time of the engine calls (std::chrono::steady_clock).
// Cost: the baseline replays in ~1 s of CPU, large-scale in a few seconds.
// Thread-safety: Replay is a pure function of its arguments (the probe, if
// any, is written); concurrent calls with distinct probes are safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/kueue_scenarios.h"

namespace berth::bench {

struct ReplayStats {
  int64_t cycles = 0;     // Schedule calls
  int64_t evictions = 0;  // preemptions (a workload may be evicted several times)
  std::vector<double> cycle_us;  // real wall time of each Schedule call, µs, in order
  // Class name -> (Σ time to admission in virtual ms, workloads): admission
  // (the last one, + latency) − creation, over the workloads admitted at the end.
  std::map<std::string, std::pair<double, int64_t>> admission_ms;
  // ClusterQueue usage %: Σ cpu in use × ms / (nominal × ClusterQueues ×
  // (last event − first creation)).
  double usage_pct = 0;
  double wall_s = 0;  // virtual s from the first creation to the last event
  double end_s = 0;   // virtual s from the scenario's start (0) to the last event
  int64_t admitted = 0;  // workloads holding or having held quota at the end
  int64_t total = 0;     // workloads in the scenario
  // With an EstimateProbe: per workload (index in creation order: ClusterQueue,
  // then class, then i), its first admission (virtual ms, -1 if never) and its
  // creation (virtual ms), and its cohort.
  std::vector<int64_t> first_admitted_at;
  std::vector<int64_t> created_ms;
  std::vector<std::string> cohort_of;

  // Mean time to admission of class `cls` in virtual ms; 0 when none was admitted.
  double AvgAdmissionMs(const std::string& cls) const;
};

// Estimate accuracy (admission_bench BM_BaselineEstimates): at every
// `sample_every`-th arrival, one estimate pass
// (admission/start_time_estimator.h) from the replay's state at that instant,
// as the controller would make it when the workload is submitted; afterwards
// each sampled workload's estimated wait is compared with its actual wait to
// its first admission. Run times are `known` (every workload's own, as
// max-exec-time-seconds would give them) or learned (the mean run time of the
// finished workloads of its ClusterQueue and class so far; none before the
// first ends).
struct EstimateProbe {
  int sample_every = 100;
  bool known = true;
  // Outputs, per sampled workload (index into the replay's workloads, as
  // ReplayStats::first_admitted_at).
  std::map<int, int64_t> estimated_wait_ms;  // virtual ms; absent: no estimate
  std::vector<int> sampled;
  std::vector<double> pass_ms;        // real wall time of each estimate pass
  std::vector<int64_t> pass_pending;  // pending workloads replayed by each pass
  std::vector<int64_t> pass_heads;    // heads each pass scheduled (EstimateResult::heads)
  int64_t passes_limited = 0;         // passes stopped, or with a tree stopped, at a limit (EstimateOptions)
};

// Replays `sc` until every workload has finished. `latency_ms` ≥ 0 (see
// above); `probe` optional (its outputs are appended to). `arrivals_ms`
// optional: each workload's creation in virtual ms from the start, one per
// workload in the replay's order (ClusterQueue cq-<c>-<q> by c then q, then
// class, then i; Scenario::Workloads() entries), in place of the scenario's
// i × interval: the real-time harness passes the instants its server made
// the workloads visible, for the ideal given that server's ingestion.
// Entries must be ≥ 0; a vector of another size is ignored.
ReplayStats Replay(const Scenario& sc, int64_t latency_ms = 0, EstimateProbe* probe = nullptr,
                   const std::vector<int64_t>* arrivals_ms = nullptr);

}  // namespace berth::bench
