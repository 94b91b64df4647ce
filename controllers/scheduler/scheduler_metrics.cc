#include "controllers/scheduler/scheduler_metrics.h"

#include <utility>

namespace berth::controllers::scheduler {

namespace {

using prometheus::Histogram;

// client_golang's ExponentialBuckets(start, factor, count).
Histogram::BucketBoundaries Exponential(double start, double factor, int count) {
  Histogram::BucketBoundaries b;
  for (int i = 0; i < count; ++i, start *= factor) b.push_back(start);
  return b;
}

const Histogram::BucketBoundaries kAttemptBuckets = Exponential(0.001, 2, 15);
const Histogram::BucketBoundaries kSliBuckets = Exponential(0.01, 2, 20);

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

const char* ResultName(SchedulerMetrics::Result r) {
  switch (r) {
    case SchedulerMetrics::Result::kScheduled: return "scheduled";
    case SchedulerMetrics::Result::kUnschedulable: return "unschedulable";
    case SchedulerMetrics::Result::kError: return "error";
  }
  return "error";
}

}  // namespace

SchedulerMetrics::SchedulerMetrics(prometheus::Registry& r, std::string profile)
    : profile_(std::move(profile)),
      schedule_attempts_(prometheus::BuildCounter()
                             .Name("scheduler_schedule_attempts_total")
                             .Help("Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
                                   "could not be scheduled, while 'error' means an internal scheduler problem.")
                             .Register(r)),
      attempt_duration_(prometheus::BuildHistogram()
                            .Name("scheduler_scheduling_attempt_duration_seconds")
                            .Help("Scheduling attempt latency in seconds (scheduling algorithm + binding)")
                            .Register(r)),
      algorithm_duration_(prometheus::BuildHistogram()
                              .Name("scheduler_scheduling_algorithm_duration_seconds")
                              .Help("Scheduling algorithm latency in seconds")
                              .Register(r)
                              .Add({}, kAttemptBuckets)),
      preemption_attempts_(prometheus::BuildCounter()
                               .Name("scheduler_preemption_attempts_total")
                               .Help("Total preemption attempts in the cluster till now")
                               .Register(r)
                               .Add({})),
      preemption_victims_(prometheus::BuildHistogram()
                              .Name("scheduler_preemption_victims")
                              .Help("Number of selected preemption victims")
                              .Register(r)
                              .Add({}, Exponential(1, 2, 7))),
      pending_pods_(prometheus::BuildGauge()
                        .Name("scheduler_pending_pods")
                        .Help("Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
                              "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
                              "unschedulablePods that the scheduler attempted to schedule and failed.")
                        .Register(r)),
      pod_scheduling_attempts_(prometheus::BuildHistogram()
                                   .Name("scheduler_pod_scheduling_attempts")
                                   .Help("Number of attempts to successfully schedule a pod.")
                                   .Register(r)
                                   .Add({}, Exponential(1, 2, 5))),
      pod_scheduling_sli_duration_(prometheus::BuildHistogram()
                                       .Name("scheduler_pod_scheduling_sli_duration_seconds")
                                       .Help("E2e latency for a pod being scheduled, from the time the pod enters "
                                             "the scheduling queue and might involve multiple scheduling attempts.")
                                       .Register(r)) {
  ReportPendingPods(0, 0, 0);
}

void SchedulerMetrics::SchedulingAttempt(Result result, Duration attempt, Duration algorithm) {
  const std::map<std::string, std::string> labels = {{"result", ResultName(result)}, {"profile", profile_}};
  schedule_attempts_.Add(labels).Increment();
  attempt_duration_.Add(labels, kAttemptBuckets).Observe(Seconds(attempt));
  algorithm_duration_.Observe(Seconds(algorithm));
}

void SchedulerMetrics::PreemptionAttempt() { preemption_attempts_.Increment(); }

void SchedulerMetrics::PreemptionVictims(int victims) { preemption_victims_.Observe(victims); }

void SchedulerMetrics::PodScheduled(int attempts, Duration since_queued) {
  pod_scheduling_attempts_.Observe(attempts);
  pod_scheduling_sli_duration_.Add({{"attempts", std::to_string(attempts)}}, kSliBuckets).Observe(Seconds(since_queued));
}

void SchedulerMetrics::ReportPendingPods(int active, int backoff, int unschedulable) {
  pending_pods_.Add({{"queue", "active"}}).Set(active);
  pending_pods_.Add({{"queue", "backoff"}}).Set(backoff);
  pending_pods_.Add({{"queue", "unschedulable"}}).Set(unschedulable);
}

}  // namespace berth::controllers::scheduler
