// batch/v1 Job → pods, as the Kubernetes Job controller (pkg/controller/job) does it,
// as pure functions: the pod a Job creates for a completion index, and the plan for one
// reconcile (which indexes / how many pods to create, which pods to delete, the status
// counts and conditions) from the pods that exist.
//
// Pods (NewPod):
//   name        generateName + suffix: Indexed "<job>-<index>-<suffix>", NonIndexed
//               "<job>-<suffix>"; the prefix is cut to 58 characters as upstream (Indexed
//               keeps its "-<index>-" tail), so the name stays a 63-character label.
//   labels      the template's, plus batch.kubernetes.io/controller-uid, controller-uid,
//               batch.kubernetes.io/job-name, job-name; Indexed also the label
//               batch.kubernetes.io/job-completion-index (PodIndexLabel, on since 1.28).
//   annotations Indexed: batch.kubernetes.io/job-completion-index = "<index>".
//   env         Indexed: JOB_COMPLETION_INDEX from the downward API (fieldRef on that
//               annotation) in every container and init container that does not set it.
//   hostname    Indexed: "<job>-<index>" (subdomain stays the template's).
//   owner       controller reference to the Job (batch/v1, blockOwnerDeletion).
//   Not done: the batch.kubernetes.io/job-tracking finalizer (berth counts terminal pods
//   from the pods and the previous status instead, see PlanJob).
//
// Reconcile plan (PlanJob), with Job defaults parallelism 1, completions = parallelism
// for Indexed and nil (any success completes) for NonIndexed, backoffLimit 6:
//   - a finished Job (Complete or Failed True) creates nothing and deletes its active pods;
//   - suspend: every active pod is deleted; condition Suspended True "JobSuspended"/"Job
//     suspended"; on resume Suspended False "JobResumed"/"Job resumed";
//   - failed pods > backoffLimit, or (restartPolicy OnFailure) the containers' and init
//     containers' restartCount summed over the Running and Pending pods ≥ backoffLimit (> 0
//     when backoffLimit is 0; upstream pastBackoffLimitOnFailure, which does not add the
//     failed pods): FailureTarget True then, once no pod is active or terminating, Failed
//     True, both reason BackoffLimitExceeded, message "Job has reached the specified backoff
//     limit"; active pods are deleted;
//   - else spec.activeDeadlineSeconds passed (now ≥ status.startTime + the deadline; not
//     while suspended; upstream pastActiveDeadline): the same with reason DeadlineExceeded,
//     message "Job was active longer than specified deadline". The deadline counts from
//     the Job's start or its last resume: a Job started or resumed by this reconcile (no
//     startTime yet, or Suspended still True) counts from `now`, as the controller then
//     writes startTime = now (upstream resets startTime on resume). JobPlan::active_deadline
//     says when it will pass, for the controller's requeue (upstream queue.AddAfter);
//   - success (Indexed: every index in [0, completions) has a Succeeded pod; NonIndexed:
//     succeeded ≥ completions, or with nil completions one success and nothing active):
//     SuccessCriteriaMet True then Complete True, reason CompletionsReached, message
//     "Reached expected number of succeeded pods" (Kubernetes ≥ 1.31 order);
//   - otherwise pods are created up to parallelism: Indexed the lowest indexes that have no
//     Succeeded and no live pod; NonIndexed min(parallelism, remaining) − live.
// Replacement rule (docs/architecture.md, departure 3; kubernetes/kubernetes#115844): a pod
// being deleted (deletionTimestamp set) holds its slot — its index, or one of the parallelism
// slots — until it is gone from the API, whatever its phase, so its replacement is created
// only then: podReplacementPolicy: Failed semantics for every Job, and stricter (upstream
// replaces a deleted pod once it is Failed, while it may still exist). berth does this
// always: the next pod of an index reuses the index's hostname, and two live pods with one
// hostname would both join the job's rendezvous. A
// Failed pod that is not deleted (a retry after a failure) is replaced at once, as
// upstream. status.terminating therefore counts every pod being deleted (upstream: only
// those not yet terminal), so Kueue keeps an evicted Job's quota until its pods are gone.
// Counts: succeeded/failed never decrease below the previous status' values (a deleted
// terminal pod stays counted); Indexed succeeded = number of distinct succeeded indexes.
// Upstream: kubernetes/kubernetes pkg/controller/job/job_controller.go (syncJob,
// pastBackoffLimitOnFailure, pastActiveDeadline, manageJob).
// Not done: podFailurePolicy, backoffLimitPerIndex, successPolicy, exponential back-off
// delays between re-creations.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/conditions.h"
#include "api/job_strategy.h"
#include "api/object.h"
#include "api/unstructured.h"
#include "controllers/jobs/common/child_objects.h"
#include "controllers/kueue/pod_set.h"
#include "core/clock.h"

namespace berth::controllers::jobs::batchjob {

using api::Condition;
using api::Object;
using kueue::PodSet;

using api::kJobCompletionIndexAnnotation;
using api::kJobCompletionIndexEnv;
using api::kJobCompletionIndexFieldPath;
using api::kJobCompletionIndexLabel;
// The labels the API server's Job strategy puts on the template (api/job_strategy.h).
inline constexpr std::string_view kControllerUidLabel = api::kJobControllerUidLabel;
inline constexpr std::string_view kLegacyControllerUidLabel = api::kJobLegacyControllerUidLabel;
inline constexpr std::string_view kJobNameLabel = api::kJobNameLabel;
inline constexpr std::string_view kLegacyJobNameLabel = api::kJobLegacyJobNameLabel;
// Longest generateName prefix (63 − 5 random characters), names.MaxGeneratedNameLength.
inline constexpr size_t kMaxGeneratedNameLength = 58;

// The Job's spec as the controller reads it, defaults applied.
struct JobSpec {
  int32_t parallelism = 1;
  std::optional<int32_t> completions;  // nil: NonIndexed "any success completes"
  bool indexed = false;                // completionMode Indexed
  int32_t backoff_limit = 6;
  bool suspend = false;
  bool restart_on_failure = false;                 // template restartPolicy OnFailure
  std::optional<int64_t> active_deadline_seconds;  // spec.activeDeadlineSeconds
  static JobSpec FromObject(const Object& job);
};

// The generateName prefix of the Job's pods ("<job>-<index>-" / "<job>-", cut to 58).
std::string PodGenerateName(std::string_view job_name, std::optional<int32_t> index);

// The pod for `index` (nullopt for NonIndexed), named prefix + `suffix` (5 random
// characters from core/ids.h RandomNameSuffix in the controller; fixed in tests).
Object NewPod(const Object& job, std::optional<int32_t> index, std::string_view suffix);

// What the controller needs to know about one pod of the Job.
struct ObservedPod {
  std::string name;
  std::string phase;             // Pending | Running | Succeeded | Failed | Unknown
  std::optional<int32_t> index;  // completion-index annotation, Indexed Jobs
  bool terminating = false;      // metadata.deletionTimestamp set
  bool ready = false;            // condition Ready True
  int32_t restart_count = 0;     // restartCount summed over init and regular containers
  static ObservedPod FromObject(const Object& pod);
  bool terminal() const { return phase == "Succeeded" || phase == "Failed"; }
  // Neither terminal nor terminating.
  bool active() const { return !terminal() && !terminating; }
};

struct JobPlan {
  std::vector<int32_t> create_indexes;   // Indexed: indexes to create, ascending
  int32_t create_count = 0;              // NonIndexed: pods to create
  std::vector<std::string> delete_pods;  // by name, ascending
  // status counts
  int32_t active = 0;
  int32_t ready = 0;
  int32_t terminating = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::string completed_indexes;  // Indexed: "0-2,4" (interval form as upstream)
  // Conditions to set, in order (the controller stamps lastTransitionTime).
  std::vector<Condition> conditions;
  // The Job resumes in this reconcile (Suspended True → False): startTime is reset to now.
  bool resumed = false;
  // When spec.activeDeadlineSeconds will run out, for an active Job that has one.
  std::optional<Time> active_deadline;
  bool finished() const;
};

// One reconcile of `job` (its spec and status) given its pods (any order), at `now` (the
// controller's clock; only the active deadline reads it).
JobPlan PlanJob(const Object& job, const std::vector<ObservedPod>& pods, Time now);

// Writes the plan's counts (active, ready, terminating, succeeded, failed and, Indexed,
// completedIndexes) into job["status"]; the conditions are the caller's to set
// (api/conditions.h SetCondition).
void WriteStatusCounts(const JobPlan& plan, Object* job);

// Upstream's compressed index list: ascending unique indexes → "0-2,4,6-7".
std::string FormatIndexIntervals(const std::vector<int32_t>& sorted_indexes);

// Kueue's podSets for a batch/v1 Job: one "main" with count = parallelism, reduced to
// completions when completions < parallelism; template = spec.template.
std::vector<PodSet> PodSets(const Object& job);

}  // namespace berth::controllers::jobs::batchjob
