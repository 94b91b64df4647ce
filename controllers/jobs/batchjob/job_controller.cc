#include "controllers/jobs/batchjob/job_controller.h"

#include "controllers/jobs/batchjob/job_pods.h"
#include "controllers/jobs/common/owned_objects.h"
#include "core/ids.h"

namespace berth::controllers::jobs::batchjob {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

Status JobController::Sync(const std::string& key, const Object& original) {
  const std::string& ns = api::Namespace(original);
  const std::string& name = api::Name(original);

  Object job = original;
  MutableObject(&job, "spec")["suspend"] =
      jobs::EffectivelySuspended(original, Field(ObjectAt(original, "spec"), "suspend"));

  BERTH_ASSIGN_OR_RETURN(
      std::vector<Object> pods,
      jobs::ListOwned(client_, kPodsResource, job, std::string(kControllerUidLabel) + "=" + api::Uid(job)));
  std::vector<ObservedPod> observed;
  observed.reserve(pods.size());
  for (const Object& p : pods) observed.push_back(ObservedPod::FromObject(p));

  const Time now = clock_.Now();
  const JobPlan plan = PlanJob(job, observed, now);
  for (const std::string& pod : plan.delete_pods) {
    if (plan.uncounted_deletions) {
      // Marked first, so however its containers exit on SIGTERM the pod's end is not counted.
      const Object patch = {
          {"metadata", {{"annotations", {{std::string(kRemovedByJobControllerAnnotation), "true"}}}}}};
      StatusOr<Object> marked =
          client_.Patch(kPodsResource.Namespace(ns), pod, client::PatchType::kMerge, patch.dump());
      if (!marked.ok() && marked.status().code() == Code::kNotFound) continue;
      BERTH_RETURN_IF_ERROR(marked.status());
    }
    Status st = jobs::DeleteIfPresent(client_, kPodsResource, ns, pod);
    if (!st.ok()) {
      recorder_.Event(original, client::kEventTypeWarning, kFailedDeleteReason, "Error deleting: " + st.message());
      return st;
    }
    recorder_.Event(original, client::kEventTypeNormal, kSuccessfulDeleteReason, "Deleted pod: " + pod);
  }
  auto create = [&](const Object& pod) -> Status {
    Status st = jobs::CreateIfAbsent(client_, kPodsResource, pod);
    if (!st.ok()) {
      recorder_.Event(original, client::kEventTypeWarning, kFailedCreateReason, "Error creating: " + st.message());
      return st;
    }
    recorder_.Event(original, client::kEventTypeNormal, kSuccessfulCreateReason, "Created pod: " + api::Name(pod));
    return Status::Ok();
  };
  for (size_t i = 0; i < plan.create_indexes.size(); ++i) {
    std::optional<IndexFailureCounts> counts;
    if (i < plan.create_failure_counts.size()) counts = plan.create_failure_counts[i];
    BERTH_RETURN_IF_ERROR(create(NewPod(job, plan.create_indexes[i], RandomNameSuffix(), counts)));
  }
  for (int32_t i = 0; i < plan.create_count; ++i) {
    BERTH_RETURN_IF_ERROR(create(NewPod(job, std::nullopt, RandomNameSuffix())));
  }

  Object updated = original;
  WriteStatusCounts(plan, &updated);
  // What this pass did is already true of the pods: created ones are active, deleted ones
  // terminating (Kueue keeps an evicted Workload's quota while terminating > 0, so the
  // counts must never show a gap between "deleted" and "observed terminating").
  Object& status = MutableObject(&updated, "status");
  const int32_t created = static_cast<int32_t>(plan.create_indexes.size()) + plan.create_count;
  if (created > 0) status["active"] = IntAt(status, "active", 0) + created;
  const int32_t deleted = static_cast<int32_t>(plan.delete_pods.size());
  if (deleted > 0) status["terminating"] = IntAt(status, "terminating", 0) + deleted;
  const bool suspended = BoolAt(ObjectAt(job, "spec"), "suspend", false);
  // Set on first start; reset on resume, so the active deadline does not count the time
  // suspended (upstream syncJob).
  if (!suspended && (!HasField(status, "startTime") || plan.resumed) && !plan.finished()) {
    status["startTime"] = FormatRfc3339(now);
  }
  for (const Condition& c : plan.conditions) {
    SetCondition(&updated, c, now, api::ConditionKind::kNoObservedGeneration);  // batch/v1 JobCondition
    if (c.type == "Complete" && c.status == "True" && !HasField(status, "completionTime")) {
      MutableObject(&updated, "status")["completionTime"] = FormatRfc3339(now);
    }
  }
  BERTH_RETURN_IF_ERROR(jobs::WriteStatusIfChanged(client_, kJobsResource, original, updated));
  RecordTransitions(original, plan);
  // Requeued for the earlier of the active deadline and the end of a pod-failure backoff.
  std::optional<Time> wake = plan.active_deadline;
  if (plan.backoff_until && (!wake || *plan.backoff_until < *wake)) wake = plan.backoff_until;
  if (wake && requeue_after_) requeue_after_(key, *wake - now);
  return Status::Ok();
}

void JobController::RecordTransitions(const Object& original, const JobPlan& plan) {
  for (const Condition& c : plan.conditions) {
    if (c.status != "True" && c.type != "Suspended") continue;
    const Object* before = FindCondition(original, c.type);
    if (before != nullptr && before->value("status", "") == c.status) continue;  // no transition
    if (c.type == "Complete") {
      recorder_.Event(original, client::kEventTypeNormal, kCompletedReason, kCompletedMessage);
    } else if (c.type == "Failed") {
      recorder_.Event(original, client::kEventTypeWarning, c.reason, c.message);
    } else if (c.type == "Suspended" && c.status == "True") {
      recorder_.Event(original, client::kEventTypeNormal, kSuspendedReason, kSuspendedMessage);
    } else if (c.type == "Suspended" && before != nullptr) {
      recorder_.Event(original, client::kEventTypeNormal, kResumedReason, kResumedMessage);
    }
  }
}

}  // namespace berth::controllers::jobs::batchjob
