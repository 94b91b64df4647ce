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
//   - a Failed pod matching a podFailurePolicy FailJob rule (job_policies.h; the first such
//     pod by name): FailureTarget True then, once no pod is active or terminating, Failed
//     True, both reason PodFailurePolicy with the rule's message; active pods are deleted;
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
//   - else (Indexed with spec.backoffLimitPerIndex) more failed indexes than
//     spec.maxFailedIndexes: reason MaxFailedIndexesExceeded, message "Job has exceeded the
//     specified maximal number of failed indexes"; or every index succeeded or failed and
//     one failed: reason FailedIndexes, message "Job has failed indexes" (both
//     FailureTarget then Failed, as above);
//   - (Indexed) a successPolicy rule is met by the succeeded indexes: SuccessCriteriaMet
//     True then, once no pod is active or terminating, Complete True, both reason
//     SuccessPolicy, message "Matched rules at index <i>"; active pods are deleted;
//   - success (Indexed: every index in [0, completions) has a Succeeded pod; NonIndexed:
//     succeeded ≥ completions, or with nil completions one success and nothing active):
//     SuccessCriteriaMet True then Complete True, reason CompletionsReached, message
//     "Reached expected number of succeeded pods" (Kubernetes ≥ 1.31 order);
//   - otherwise pods are created up to parallelism: Indexed the lowest indexes that have no
//     Succeeded and no live pod and are not failed; NonIndexed min(parallelism, remaining) −
//     live; unless the pod-failure backoff below holds them back.
// backoffLimitPerIndex (Indexed; upstream indexed_job_utils.go calculateFailedIndexes,
// isIndexFailed, getNewIndexFailureCounts): a pod replacing a failed pod of its index carries
// the annotation batch.kubernetes.io/job-index-failure-count = the failed pod's count + 1
// (the index's first pod: "0"), and batch.kubernetes.io/job-index-ignored-failure-count
// copied when > 0; when the failed pod matched a podFailurePolicy Ignore rule, the failure
// count is copied and the ignored count grows by one instead. An index whose Failed pod has
// a failure count ≥ backoffLimitPerIndex (and did not match Ignore), or matched a FailIndex
// rule, is failed: it gets no more pods (a live pod
// of it is deleted) and is listed in status.failedIndexes ("0,2-4", kept from the previous
// status so a deleted pod's index stays failed). backoffLimit then defaults to MaxInt32
// (the API server's default, api/job_strategy.h) and still applies when set. A failed pod
// that is deleted before its index's replacement exists takes its count with it (upstream
// holds it with the job-tracking finalizer; berth keeps failed pods and does not delete
// them itself).
// Pod-failure backoff (upstream backoff_utils.go getRemainingTimeForFailuresCount,
// getRemainingTimePerIndex; manageJob): after n consecutive failures the replacement waits
// kDefaultPodFailureBackoff × 2^(n−1), at most kMaxPodFailureBackoff, counted from the last
// failure's finish time (ObservedPod::finish_time). Without backoffLimitPerIndex n is the
// number of Failed pods that finished after the last Succeeded pod finished, and while the
// delay runs no pod of the Job is created; with it, n is the index's last failed pod's
// failure + ignored-failure count + 1, the delay holds back that index only, and the indexes
// picked for creation (the lowest pending ones, up to parallelism) that are still backing
// off are skipped, as upstream. JobPlan::backoff_until says when the earliest delay ends, for
// the controller's requeue (upstream enqueueSyncJobWithDelay).
// Replacement rule (docs/architecture.md, departure 3; kubernetes/kubernetes#115844): a pod
// being deleted (deletionTimestamp set) holds its slot — its index, or one of the parallelism
// slots — until it is gone from the API, whatever its phase, so its replacement is created
// only then: podReplacementPolicy: Failed semantics for every Job, and stricter (upstream
// replaces a deleted pod once it is Failed, while it may still exist). berth does this
// always: the next pod of an index reuses the index's hostname, and two live pods with one
// hostname would both join the job's rendezvous. A
// Failed pod that is not deleted (a retry after a failure) is replaced once the pod-failure
// backoff below has run out, as upstream. status.terminating therefore counts every pod being deleted (upstream: only
// those not yet terminal), so Kueue keeps an evicted Job's quota until its pods are gone.
// Failures that do not count (upstream trackJobStatusAndRemoveFinalizers, nonIgnoredFailed-
// PodsCount): a Failed pod matching a podFailurePolicy Ignore rule is not in status.failed
// (it is still replaced, after the pod-failure backoff); a pod the controller deleted because
// the Job was suspended or had more pods than it needs (ObservedPod::uncounted) is neither a
// success nor a failure, whatever its containers exit with on SIGTERM, and no policy rule is
// matched against it: upstream removes its job-tracking finalizer before deleting it
// (deleteJobPods), so a Job Kueue suspends and resumes any number of times never reaches its
// backoffLimit that way. Pods deleted because the Job finished still count (deleteActivePods).
// Counts: status.completedIndexes keeps the indexes it listed (a Succeeded pod deleted
// afterwards does not make its index run again: upstream calculateSucceededIndexes); the
// counts succeeded/failed never decrease below the previous status' values (a deleted
// terminal pod stays counted); Indexed succeeded = number of distinct succeeded indexes.
// Upstream: kubernetes/kubernetes pkg/controller/job/job_controller.go (syncJob,
// pastBackoffLimitOnFailure, pastActiveDeadline, manageJob), indexed_job_utils.go,
// backoff_utils.go, pod_failure_policy.go, success_policy.go.
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
#include "api/kueue_job_webhook.h"
#include "api/object.h"
#include "api/unstructured.h"
#include "controllers/jobs/batchjob/job_policies.h"
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
// backoffLimitPerIndex's annotations on a Job's pods (batch/v1 JobIndexFailureCountAnnotation,
// JobIndexIgnoredFailureCountAnnotation).
inline constexpr std::string_view kJobIndexFailureCountAnnotation = "batch.kubernetes.io/job-index-failure-count";
inline constexpr std::string_view kJobIndexIgnoredFailureCountAnnotation =
    "batch.kubernetes.io/job-index-ignored-failure-count";
// Written by the controller on a pod it is about to delete because its Job is suspended or
// has more pods than it needs: that pod's end is not a failure (see "Failures that do not
// count" above; upstream removes the pod's job-tracking finalizer before the delete instead).
inline constexpr std::string_view kRemovedByJobControllerAnnotation = "batch.berth.dev/removed-by-job-controller";
// The delay before replacing a pod after the first failure, doubled per further consecutive
// failure up to the maximum: upstream DefaultJobPodFailureBackOff 10 s and
// MaxJobPodFailureBackOff 10 min (pkg/controller/job/job_controller.go, Kubernetes 1.32).
inline constexpr Duration kDefaultPodFailureBackoff = std::chrono::seconds(10);
inline constexpr Duration kMaxPodFailureBackoff = std::chrono::minutes(10);
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
  // spec.backoffLimitPerIndex / spec.maxFailedIndexes, read for Indexed Jobs only.
  std::optional<int32_t> backoff_limit_per_index;
  std::optional<int32_t> max_failed_indexes;
  // spec.podFailurePolicy and (Indexed) spec.successPolicy as written; null when absent.
  api::Object pod_failure_policy;
  api::Object success_policy;
  static JobSpec FromObject(const Object& job);
};

// The generateName prefix of the Job's pods ("<job>-<index>-" / "<job>-", cut to 58).
std::string PodGenerateName(std::string_view job_name, std::optional<int32_t> index);

// A pod's backoffLimitPerIndex counts (the two annotations; absent, unparsable, negative or
// beyond int32 read as 0, as upstream parseInt32).
struct IndexFailureCounts {
  int32_t failed = 0;
  int32_t ignored = 0;
  bool operator==(const IndexFailureCounts&) const = default;
};

// The pod for `index` (nullopt for NonIndexed), named prefix + `suffix` (5 random
// characters from core/ids.h RandomNameSuffix in the controller; fixed in tests). With
// `counts` (Jobs with backoffLimitPerIndex) it carries the failure-count annotation, and the
// ignored-failure-count one when that is > 0.
Object NewPod(const Object& job, std::optional<int32_t> index, std::string_view suffix,
              std::optional<IndexFailureCounts> counts = std::nullopt);

// The delay before a replacement after `failures` consecutive failures: 0 for none, else
// kDefaultPodFailureBackoff × 2^(failures − 1), at most kMaxPodFailureBackoff.
Duration PodFailureBackoff(int32_t failures);

// What the controller needs to know about one pod of the Job.
struct ObservedPod {
  std::string name;
  std::string phase;                  // Pending | Running | Succeeded | Failed | Unknown
  std::optional<int32_t> index;       // completion-index annotation, Indexed Jobs
  bool terminating = false;           // metadata.deletionTimestamp set
  bool ready = false;                 // condition Ready True
  int32_t restart_count = 0;          // restartCount summed over init and regular containers
  IndexFailureCounts failure_counts;  // backoffLimitPerIndex annotations
  // kRemovedByJobControllerAnnotation is set: with `terminating`, the pod's end does not count.
  bool removed_by_controller = false;
  PodFailureFacts failure_facts;  // Failed pods: what a podFailurePolicy matches
  // When the pod finished (upstream getFinishedTime): the latest terminated.finishedAt when
  // every container has one; else the Ready False condition's lastTransitionTime; else
  // deletionTimestamp − deletionGracePeriodSeconds; else creationTimestamp; else the epoch.
  Time finish_time{};
  static ObservedPod FromObject(const Object& pod);
  bool terminal() const { return phase == "Succeeded" || phase == "Failed"; }
  // Neither terminal nor terminating.
  bool active() const { return !terminal() && !terminating; }
  // Deleted by the Job controller while suspending or scaling down (kRemovedByJobController-
  // Annotation): neither a success nor a failure of the Job.
  bool uncounted() const { return removed_by_controller && terminating; }
};

// The most pods one sync creates (kube's MaxPodCreateDeletePerSync, pkg/controller/job/
// job_controller.go): a Job of parallelism 2^31−1 gets its pods 500 at a time, each batch's
// pod events bringing the next sync, and a deleted Job stops getting them at once.
inline constexpr int32_t kMaxPodCreatesPerSync = 500;

struct JobPlan {
  std::vector<int32_t> create_indexes;  // Indexed: indexes to create, ascending (≤ kMaxPodCreatesPerSync)
  // backoffLimitPerIndex: the counts for the pod of each create_indexes entry (same order).
  std::vector<IndexFailureCounts> create_failure_counts;
  int32_t create_count = 0;              // NonIndexed: pods to create (≤ kMaxPodCreatesPerSync)
  std::vector<std::string> delete_pods;  // by name, ascending
  // The deletions are the Job's suspension or scale-down (upstream deleteJobPods): each pod
  // gets kRemovedByJobControllerAnnotation before its delete, so its end is not counted.
  // False when the Job finished (upstream deleteActivePods: those pods still count).
  bool uncounted_deletions = false;
  // status counts
  int32_t active = 0;
  int32_t ready = 0;
  int32_t terminating = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::string completed_indexes;  // Indexed: "0-2,4" (interval form as upstream)
  // backoffLimitPerIndex: status.failedIndexes in the same form; nullopt without it.
  std::optional<std::string> failed_indexes;
  // Conditions to set, in order (the controller stamps lastTransitionTime).
  std::vector<Condition> conditions;
  // The Job resumes in this reconcile (Suspended True → False): startTime is reset to now.
  bool resumed = false;
  // When spec.activeDeadlineSeconds will run out, for an active Job that has one.
  std::optional<Time> active_deadline;
  // When the earliest pod-failure backoff holding back a pod ends.
  std::optional<Time> backoff_until;
  bool finished() const;
};

// One reconcile of `job` (its spec and status) given its pods (any order), at `now` (the
// controller's clock; only the active deadline reads it).
JobPlan PlanJob(const Object& job, const std::vector<ObservedPod>& pods, Time now);

// Writes the plan's counts (active, ready, terminating, succeeded, failed and, Indexed,
// completedIndexes, failedIndexes) into job["status"]; the conditions are the caller's to set
// (api/conditions.h SetCondition).
void WriteStatusCounts(const JobPlan& plan, Object* job);

// Upstream's compressed index list (orderedIntervals.String): ascending unique indexes →
// "0-2,4,6,7" (a run of two is written "6,7", a longer run "0-2").
std::string FormatIndexIntervals(const std::vector<int32_t>& sorted_indexes);

// The indexes < `completions` in such a list (upstream parseIndexesFromString: an
// unparsable interval is skipped, a run is cut at completions − 1), ascending.
std::vector<int32_t> ParseIndexIntervals(std::string_view text, int32_t completions);

using api::kJobMinParallelismAnnotation;  // Kueue's partial admission (api/kueue_job_webhook.h)

// The annotation's value parsed as a decimal int32 (Kueue's minPodsCount: strconv.Atoi);
// nullopt when absent or not a number.
std::optional<int32_t> MinParallelism(const Object& job);

// Kueue's podSets for a batch/v1 Job: one "main" with count = parallelism, reduced to
// completions when completions < parallelism; minCount = MinParallelism when it lies in
// [1, count − 1] (ignored otherwise); template = spec.template.
std::vector<PodSet> PodSets(const Object& job);

}  // namespace berth::controllers::jobs::batchjob
