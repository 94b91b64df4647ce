// JobSet (jobset.x-k8s.io/v1alpha2) → child Jobs, headless Service and the reconcile
// decision (failure policy, success policy, suspend/resume, restarts), as the JobSet
// controller (kubernetes-sigs/jobset pkg/controllers/jobset_controller.go) does it, as
// pure functions over JSON; the API and its defaults as jobset's api/jobset/v1alpha2/
// jobset_types.go and pkg/webhooks/jobset_webhook.go define them.
//
// Child Job (ChildJob): name "<jobset>-<replicatedJob>-<jobIndex>", namespace of the
// JobSet, controller ownerReference to the JobSet; the replicatedJob's JobTemplateSpec with
//   - labels AND annotations, on the Job and on its pod template:
//       jobset.sigs.k8s.io/jobset-name, jobset-uid, replicatedjob-name,
//       replicatedjob-replicas, global-replicas (Σ replicas), job-index, job-global-index
//       (position over all replicatedJobs in order), job-key (SHA-1 hex of
//       "<namespace>/<jobName>"), restart-attempt (= status.restarts), group-name,
//       group-replicas, job-group-index; coordinator (when spec.coordinator is set) =
//       "<jobset>-<rJob>-<jobIdx>-<podIdx>.<subdomain>";
//   - spec.suspend = JobSet spec.suspend; completionMode Indexed when unset;
//   - pod template spec.subdomain = Subdomain() when network.enableDNSHostnames (default
//     true), so pod hostnames are "<job>-<podIndex>" = "<jobset>-<rJob>-<jobIdx>-<podIdx>".
// Headless Service (HeadlessService): name Subdomain(), clusterIP None, selector
//   jobset.sigs.k8s.io/jobset-name, publishNotReadyAddresses (default true), no ports,
//   owned by the JobSet; only with enableDNSHostnames.
//
// Decision (PlanJobSet), from the JobSet and its child Jobs (any order):
//   1. finished JobSet (terminalState set): delete its unfinished Jobs, nothing else.
//   2. Jobs whose restart-attempt label is below status.restarts are the previous attempt:
//      deleted (the controller deletes them in foreground, pods first).
//   3. replicatedJobsStatus per replicatedJob (spec order): succeeded / failed = Jobs with
//      Complete / Failed True; of the others: suspended = spec.suspend, active = status.active
//      > 0, ready = status.ready + status.succeeded ≥ min(parallelism, completions).
//   4. a failed Job: no failurePolicy → Failed "FailedJobs"; else the first rule (in order)
//      that some failed Job matches (onJobFailureReasons against the Job's Failed reason,
//      onJobFailureMessagePatterns in Go's regexp syntax, api/regexp.h, against its message,
//      targetReplicatedJobs) decides, no match → RestartJobSet:
//        FailJobSet                        Failed "FailJobSetFailurePolicyAction"
//        RestartJobSet                     restarts+1 and restartsCountTowardsMax+1, or
//                                          Failed "ReachedMaxRestarts" at maxRestarts
//        RestartJobSetAndIgnoreMaxRestarts restarts+1 only
//      Failed messages end in " (first failed job: <name>)", the Job whose Failed condition
//      is oldest (name breaks ties). A rule's targets naming no replicatedJob match no
//      Job. RestartJob* (behind upstream's RestartJob feature gate, off; admission refuses
//      them) restart the JobSet here.
//   5. else, once a Job of this attempt has succeeded, the success policy (operator
//      All|Any over targetReplicatedJobs, default all): Completed "AllJobsCompleted" /
//      "jobset completed successfully". Targets naming no replicatedJob (refused by
//      admission, api/jobset_webhook.h; possible in a JobSet stored before) count no Job:
//      with All the first success completes the JobSet, as upstream.
//   6. suspend: Jobs get spec.suspend true, Suspended True "SuspendedJobs"/"jobset is
//      suspended"; resume: Jobs get spec.suspend false and the JobSet pod template's
//      labels, annotations, nodeSelector, tolerations and schedulingGates (what Kueue
//      injects), Suspended False "ResumeJobs"/"jobset is resumed".
//   7. missing Jobs of the current attempt are created in spec order, respecting dependsOn
//      (Ready: every Job of the dependency ready; Complete: every one succeeded) and
//      startupPolicy InOrder (a replicatedJob waits until the previous one is all ready).
// berth departure (docs/architecture.md, departure 3): new-attempt Jobs are created only
// once every Job of the previous attempt is gone, whatever restartStrategy says
// (BlockingRecreate semantics, kubernetes-sigs/jobset#684, for Recreate too): job names and
// pod hostnames repeat across attempts.
// A coordinator naming a missing replicatedJob or index still gets its label (admission
// refuses it, api/jobset_webhook.h). Not done: TTL after finished, volumeClaimPolicies,
// in-place restart, per-Job restart counters, the StartupPolicy* conditions.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/jobset_webhook.h"
#include "api/object.h"
#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/jobs/common/child_objects.h"
#include "controllers/kueue/pod_set.h"

namespace berth::controllers::jobs::jobset {

using api::Condition;
using api::Object;
using kueue::PodSet;

inline constexpr std::string_view kJobSetApiVersion = "jobset.x-k8s.io/v1alpha2";
inline constexpr std::string_view kJobSetNameKey = "jobset.sigs.k8s.io/jobset-name";
inline constexpr std::string_view kJobSetUidKey = "jobset.sigs.k8s.io/jobset-uid";
inline constexpr std::string_view kReplicatedJobNameKey = "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr std::string_view kReplicatedJobReplicasKey = "jobset.sigs.k8s.io/replicatedjob-replicas";
inline constexpr std::string_view kGlobalReplicasKey = "jobset.sigs.k8s.io/global-replicas";
inline constexpr std::string_view kJobIndexKey = "jobset.sigs.k8s.io/job-index";
inline constexpr std::string_view kJobGlobalIndexKey = "jobset.sigs.k8s.io/job-global-index";
inline constexpr std::string_view kJobKey = "jobset.sigs.k8s.io/job-key";
inline constexpr std::string_view kRestartsKey = "jobset.sigs.k8s.io/restart-attempt";
inline constexpr std::string_view kGroupNameKey = "jobset.sigs.k8s.io/group-name";
inline constexpr std::string_view kGroupReplicasKey = "jobset.sigs.k8s.io/group-replicas";
inline constexpr std::string_view kJobGroupIndexKey = "jobset.sigs.k8s.io/job-group-index";
inline constexpr std::string_view kCoordinatorKey = api::kJobSetCoordinatorKey;

// The JobSet webhook's defaults (api/jobset_webhook.h DefaultJobSet, which admission
// writes on the stored object) and the CRD schema's (replicas 1, groupName "default",
// failurePolicy.restartStrategy Recreate), for objects stored before admission wrote them.
void ApplyDefaults(Object* jobset);

// network.subdomain, or the JobSet name.
std::string Subdomain(const Object& jobset);
// "<jobset>-<replicatedJob>-<jobIndex>".
std::string ChildJobName(std::string_view jobset, std::string_view replicated_job, int32_t job_index);
// Lower-case hex SHA-1 of "<namespace>/<jobName>" (the job-key label).
std::string JobKey(std::string_view ns, std::string_view job_name);

// Every Job of the current attempt (status.restarts), replicatedJobs in order.
std::vector<Object> ChildJobs(const Object& jobset);
// The Job for replicatedJobs[rjob_index], replica job_index.
Object ChildJob(const Object& jobset, size_t rjob_index, int32_t job_index);
// The headless Service, or nullopt when enableDNSHostnames is false.
std::optional<Object> HeadlessService(const Object& jobset);

// Kueue's podSets for a JobSet: one per replicatedJob, named after it (lower-cased),
// count = replicas × min(parallelism, completions) (parallelism default 1), template =
// the replicatedJob's pod template.
std::vector<PodSet> PodSets(const Object& jobset);

struct Event {
  std::string type;  // "Normal" | "Warning"
  std::string reason;
  std::string message;
};

// The most child Jobs one reconcile creates (as kube's Job controller bounds its pods per
// sync): a JobSet of 2^31−1 replicas built every child in memory first (8 GB in 40 s).
inline constexpr size_t kMaxChildJobsPerSync = 500;

struct JobSetPlan {
  Object replicated_jobs_status = Object::array();  // status.replicatedJobsStatus
  int32_t restarts = 0;                              // status.restarts
  int32_t restarts_count_towards_max = 0;            // status.restartsCountTowardsMax
  std::string terminal_state;                        // "", "Completed", "Failed"
  std::vector<Condition> conditions;                 // to set, in order
  std::vector<std::string> delete_jobs;              // ascending names
  std::vector<Object> create_jobs;                   // spec order
  std::vector<Object> update_jobs;                   // suspend / resume edits
  std::optional<Event> event;
};

JobSetPlan PlanJobSet(const Object& jobset, const std::vector<Object>& child_jobs);

// Writes the plan's replicatedJobsStatus, restarts, restartsCountTowardsMax and
// terminalState into jobset["status"] (conditions are the caller's, SetCondition).
void WriteStatus(const JobSetPlan& plan, Object* jobset);

}  // namespace berth::controllers::jobs::jobset
