// SchedulerMetrics: kube-scheduler's Prometheus metrics (k8s.io/kubernetes
// pkg/scheduler/metrics/metrics.go, v1.32), with its names, label names and
// buckets, for the pod scheduling loop of SchedulerController:
//
//   scheduler_schedule_attempts_total{result, profile}        counter
//   scheduler_scheduling_attempt_duration_seconds{result, profile}
//       histogram, ExponentialBuckets(0.001, 2, 15); one attempt = the
//       placement algorithm + the writes that apply its decision
//   scheduler_scheduling_algorithm_duration_seconds            histogram, same buckets
//   scheduler_preemption_attempts_total                        counter: every
//       attempt that found no fitting node (kube-scheduler runs PostFilter,
//       and counts it, for each), whether or not it found victims
//   scheduler_preemption_victims                               histogram,
//       ExponentialBuckets(1, 2, 7): victims of each preemption plan
//   scheduler_pending_pods{queue="active"|"backoff"|"unschedulable"} gauge
//   scheduler_pod_scheduling_attempts                          histogram,
//       ExponentialBuckets(1, 2, 5): attempts a pod needed until bound
//   scheduler_pod_scheduling_sli_duration_seconds{attempts}    histogram,
//       ExponentialBuckets(0.01, 2, 20): from the pod's first entry in the
//       scheduling queue until bound
//
// result is "scheduled", "unschedulable" (no node fits) or "error" (the
// attempt failed for another reason than fit, e.g. the binding write
// failed); profile is the scheduler name ("default-scheduler"). Not produced: queue="gated" (berth
// has no scheduling gates), the framework/plugin extension-point histograms,
// scheduler_queue_incoming_pods_total, scheduler_unschedulable_pods.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

#include "core/clock.h"

namespace berth::controllers::scheduler {

class SchedulerMetrics {
 public:
  enum class Result { kScheduled, kUnschedulable, kError };

  SchedulerMetrics(prometheus::Registry& registry, std::string profile = "default-scheduler");
  SchedulerMetrics(const SchedulerMetrics&) = delete;
  SchedulerMetrics& operator=(const SchedulerMetrics&) = delete;

  // One scheduling attempt of one pod: `attempt` covers algorithm + writes,
  // `algorithm` the placement engine alone.
  void SchedulingAttempt(Result result, Duration attempt, Duration algorithm);
  // An attempt found no fitting node (PostFilter ran).
  void PreemptionAttempt();
  // A preemption plan chose `victims` pods.
  void PreemptionVictims(int victims);
  // A pod was bound after `attempts` attempts, `since_queued` after it first
  // entered the queue.
  void PodScheduled(int attempts, Duration since_queued);
  // The scheduling queue after a cycle.
  void ReportPendingPods(int active, int backoff, int unschedulable);

 private:
  const std::string profile_;
  prometheus::Family<prometheus::Counter>& schedule_attempts_;
  prometheus::Family<prometheus::Histogram>& attempt_duration_;
  prometheus::Histogram& algorithm_duration_;
  prometheus::Counter& preemption_attempts_;
  prometheus::Histogram& preemption_victims_;
  prometheus::Family<prometheus::Gauge>& pending_pods_;
  prometheus::Histogram& pod_scheduling_attempts_;
  prometheus::Family<prometheus::Histogram>& pod_scheduling_sli_duration_;
};

}  // namespace berth::controllers::scheduler
