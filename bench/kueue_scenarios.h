// Kueue's scheduler performance scenarios (Kueue
// test/performance/scheduler/configs/{baseline,large-scale}), shared by the
// engine-only replay (admission_bench.cc) and the real-time harness against a
// running berth server (kueue_realtime.cc).
//
// Shape (Kueue's runner generator): `cohorts` cohorts × `queues_per_cohort`
// ClusterQueues, each with one flavor "rf" and one resource cpu
// (nominalQuota 20, borrowingLimit 100, reclaimWithinCohort Any,
// withinClusterQueue LowerPriority). Per ClusterQueue, one workload set per
// class: `count` Workloads created sequentially, one every `interval_ms`
// (sets run concurrently), each requesting `cpu` cores with priority
// `priority` and finishing `runtime_ms` after admission.
//
// Published figures (the scenario's rangespec.yaml and the averages Kueue's
// thresholds were calibrated from): wall time of the run, ClusterQueue usage
// %, average time to admission per class (ms).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace berth::bench {

struct WorkloadClass {
  std::string name;
  int count;
  int64_t interval_ms;
  int64_t runtime_ms;
  int32_t priority;
  int64_t cpu;  // cores
};

struct ClassFigures {
  std::string name;
  double avg_ms;  // Kueue's measured mean
  double max_ms;  // Kueue's threshold (maxAvgTimeToAdmissionMs)
};

struct PublishedFigures {
  double avg_wall_ms;
  double max_wall_ms;
  double avg_usage_pct;
  double min_usage_pct;
  std::vector<ClassFigures> classes;
};

struct Scenario {
  std::string name;
  int cohorts;
  int queues_per_cohort;
  std::vector<WorkloadClass> classes;
  PublishedFigures kueue;
  int64_t nominal_cpu = 20;
  int64_t borrowing_limit_cpu = 100;

  int ClusterQueues() const { return cohorts * queues_per_cohort; }
  int64_t Workloads() const {
    int64_t n = 0;
    for (const auto& c : classes) n += c.count;
    return n * ClusterQueues();
  }
};

inline const Scenario kBaseline{
    "baseline",
    5,
    6,
    {{"small", 350, 100, 200, 50, 1}, {"medium", 100, 500, 500, 100, 5}, {"large", 50, 1200, 1000, 200, 20}},
    {351116, 425000, 55.9, 50, {{"small", 215468, 260000}, {"medium", 76768, 90000}, {"large", 16501, 23000}}}};

inline const Scenario kLargeScale{
    "large-scale",
    10,
    100,
    {{"small", 35, 60, 150, 50, 1}, {"medium", 11, 300, 350, 100, 5}, {"large", 4, 700, 700, 200, 20}},
    {1179411, 1416000, 38.64, 31.6, {{"small", 700379, 841000}, {"medium", 256413, 308000}, {"large", 105604, 128000}}}};

}  // namespace berth::bench
