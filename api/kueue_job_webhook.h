// Kueue's mutating webhook for the job kinds it integrates
// (jobframework.ApplyDefaultForSuspend, registered for CREATE only): a job
// Kueue manages is stored suspended, so no pod of it can exist before its
// Workload is admitted. The Kueue job reconciler unsuspends it on admission
// (controllers/kueue/job_reconciler.h).
//
// Which jobs are suspended (KueueJobWebhookOptions, from Kueue's
// Configuration, controllers/kueue/configuration.h JobWebhookOptions):
//   - only kinds whose framework is in integrations.frameworks: Kueue
//     registers the webhook of an enabled framework only, so a job of another
//     kind is left alone even with the queue-name label, and runs unmanaged.
//     Since berth's job controllers treat an ABSENT suspend field on a job
//     with the queue-name label as suspended (controllers/jobs/common/owned_objects.h
//     EffectivelySuspended), such a job is stored with its suspend field set
//     to false explicitly (what an absent field means upstream: Kubernetes'
//     SetDefaults_Job, the CRDs' default false), so they start it;
//   - with the kueue.x-k8s.io/queue-name label (non-empty), or without it
//     when manageJobsWithoutQueueName is true and the namespace is not one
//     Kueue leaves alone (kube-system, kueue-system: Kueue's default
//     managedJobsNamespaceSelector; KueueManagesNamespace), as the job
//     reconciler decides;
//   - not with a controller ownerReference (a JobSet of a TrainJob, the Jobs
//     of a JobSet: the owner is the unit Kueue admits, as upstream's "owner
//     managed by Kueue").
// An explicit `suspend: true` stays; an explicit `suspend: false` is
// overridden, as upstream does.
//
// Kinds, their Kueue framework name and suspend field:
//   batch/v1 Job                   batch/job                      spec.suspend (its
//                                  strategy, api/job_strategy.cc, calls
//                                  KueueJobWebhook::Default)
//   jobset.x-k8s.io JobSet         jobset.x-k8s.io/jobset         spec.suspend
//   kubeflow.org/v1 PyTorchJob     kubeflow.org/pytorchjob        spec.runPolicy.suspend
//   trainer.kubeflow.org TrainJob  trainer.kubeflow.org/trainjob  spec.suspend (its
//                                  strategy, api/trainer_strategies.cc, calls
//                                  KueueJobWebhook::Default)
//
// The JobSet and PyTorchJob strategies registered here also run those kinds' own checks
// on create and update (api/job_kinds_validation.h: pod templates, JobSet's message
// patterns).
//
// Wiring: the options reach the strategies through InstallDefaultStrategies
// (api/strategy.h); `berth server` builds its StrategyRegistry from --config
// (cmd/berth/main.cc). StrategyRegistry::Default() uses the defaults (every
// framework managed, manageJobsWithoutQueueName false: berth without
// --config).
//
// Thread-safety: immutable values and pure functions; the strategies are
// stateless.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/strategy.h"

namespace berth::api {

inline constexpr std::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
// Kueue's MaxExecTimeSecondsLabel: the job's Workload gets
// spec.maximumExecutionTimeSeconds from it.
inline constexpr std::string_view kMaxExecTimeSecondsLabel = "kueue.x-k8s.io/max-exec-time-seconds";

// Kueue's MaximumExecutionTimeSecondsForObject (pkg/controller/jobframework/utils.go): the
// max-exec-time-seconds label read as a base-10 int32 (strconv.ParseInt(v, 10, 32): an
// optional sign, then digits) when it is > 0; nullopt when the label is absent, not such an
// integer, or <= 0 (the Workload then has no maximum).
std::optional<int32_t> MaxExecTimeSecondsFromLabel(const Object& job);

// Kueue's partial admission of a batch/v1 Job (pkg/controller/jobs/job/job_controller.go
// JobMinParallelismAnnotation): the least parallelism it may run with.
inline constexpr std::string_view kJobMinParallelismAnnotation = "kueue.x-k8s.io/job-min-parallelism";
// JobCompletionsEqualParallelismAnnotation: an Indexed Job partially admitted runs with
// completions = the admitted parallelism too.
inline constexpr std::string_view kJobCompletionsEqualParallelismAnnotation =
    "kueue.x-k8s.io/job-completions-equal-parallelism";

// Kueue's podsCount of a batch/v1 Job spec: parallelism (1 when unset), at most completions.
int64_t KueueJobPodsCount(const Object& spec);

// Kueue's syncCompletionWithParallelism: the completions-equal-parallelism annotation read
// as a Go bool (strconv.ParseBool: 1 t T TRUE true True, 0 f F FALSE false False); false
// when absent or not a bool.
bool CompletionsEqualParallelism(const Object& job);

// Kueue's framework names (Configuration integrations.frameworks) of the job
// kinds berth implements.
inline constexpr std::string_view kBatchJobFramework = "batch/job";
inline constexpr std::string_view kJobSetFramework = "jobset.x-k8s.io/jobset";
inline constexpr std::string_view kPyTorchJobFramework = "kubeflow.org/pytorchjob";
inline constexpr std::string_view kTrainJobFramework = "trainer.kubeflow.org/trainjob";

struct KueueJobWebhookOptions {
  // integrations.frameworks: only these kinds are suspended (see above).
  std::set<std::string, std::less<>> frameworks = {std::string(kBatchJobFramework), std::string(kJobSetFramework),
                                                   std::string(kPyTorchJobFramework), std::string(kTrainJobFramework)};
  bool manage_jobs_without_queue_name = false;
};

// Kueue manages jobs of this namespace without the queue-name label (with
// manageJobsWithoutQueueName): every namespace but kube-system and
// kueue-system (Kueue's default managedJobsNamespaceSelector).
bool KueueManagesNamespace(std::string_view ns);

class KueueJobWebhook {
 public:
  explicit KueueJobWebhook(KueueJobWebhookOptions options = {}) : options_(std::move(options)) {}

  // Applies the webhook to a job of `framework` being created, whose suspend
  // field is at `suspend_path` (e.g. {"spec", "runPolicy", "suspend"}; missing
  // parents are created). Returns true when it changed the object.
  bool Default(Object* job, std::string_view framework, const std::vector<std::string>& suspend_path) const;

  // Whether Kueue manages `job` of `framework` (the three conditions above): the framework
  // is enabled, the job has no controller owner, and it is queued (or
  // manageJobsWithoutQueueName covers its namespace).
  bool Manages(const Object& job, std::string_view framework) const;

  // The Kueue label checks of Kueue's ValidateJobOnCreate (pkg/controller/jobframework/
  // validation.go validateCreateForMaxExecTime), for every job of an enabled framework
  // (managed or not, as Kueue's validating webhooks): the max-exec-time-seconds label, when
  // present, is a Go int (strconv.Atoi) greater than 0, else 422
  //   metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: "abc":
  //     strconv.Atoi: parsing "abc": invalid syntax   (or "value out of range")
  //   metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid value: 0: should be
  //     greater than 0
  // Nothing when `framework` is not enabled (Kueue's webhook does not run).
  FieldErrorList ValidateCreate(const Object& job, std::string_view framework) const;

  // Kueue's ValidateJobOnUpdate (pkg/controller/jobframework/validation.go) plus, as every
  // Kueue job webhook's update does, ValidateCreate on the updated job:
  //   - ValidateUpdateForQueueName: while the updated job is not suspended, its queue-name
  //     label may not change (added, removed or set to another queue): 422
  //     `metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "": field is immutable`.
  //     Without it, removing the label of an admitted job took it out of Kueue's hands
  //     with its pods running, and a parallelism change then ran unaccounted pods.
  //   - validateUpdateForMaxExecTime: unless the job is suspended both before and after
  //     the update, the max-exec-time-seconds label may not change (added, removed or
  //     another value): `metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid
  //     value: "<new value, \"\" when removed>": field is immutable`.
  // A job is suspended when the boolean at `suspend_path` is true.
  // Nothing when `framework` is not enabled (Kueue's webhook does not run).
  FieldErrorList ValidateUpdate(const Object& job, const Object& old, std::string_view framework,
                                const std::vector<std::string>& suspend_path) const;

  // Kueue's batch/v1 Job webhook (pkg/controller/jobs/job/job_webhook.go), for every Job
  // while batch/job is enabled (managed or not); `old` is null on create:
  //   - job-min-parallelism, on create and when its value changes: a Go int
  //     (strconv.Atoi) in 1..podsCount−1, podsCount being parallelism (1 when unset), at
  //     most completions: `metadata.annotations[kueue.x-k8s.io/job-min-parallelism]: Invalid
  //     value: 4: should be between 0 and 3` (Kueue's wording), or the strconv.Atoi error;
  //   - job-completions-equal-parallelism, on create and every update: a Go bool, else
  //     `...: Invalid value: "yes": strconv.ParseBool: parsing "yes": invalid syntax`; when
  //     true, the Job is Indexed (`...: should not be enabled for NonIndexed jobs`) and its
  //     completions equal its parallelism (`spec.completions: Invalid value: 4: should be
  //     equal to parallelism when kueue.x-k8s.io/job-completions-equal-parallelism
  //     annotation is true`);
  //   - on update, with job-min-parallelism on the old Job, spec.parallelism changes only
  //     while the old Job is suspended (`spec.parallelism: Forbidden: cannot change when
  //     partial admission is enabled and the job is not suspended`), and the
  //     completions-equal-parallelism setting does not change while the Job stays running
  //     (`...: Forbidden: field is immutable while the job is not suspended`).
  FieldErrorList ValidateBatchJob(const Object& job, const Object* old) const;

  const KueueJobWebhookOptions& options() const { return options_; }

 private:
  KueueJobWebhookOptions options_;
};

// Registers the webhook for jobset.x-k8s.io/JobSet and kubeflow.org/PyTorchJob
// (kinds that have no other strategy). batch/Job's strategy (api/job_strategy.h)
// calls KueueJobWebhook::Default itself, as TrainJob's does.
void RegisterKueueJobStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& options = {});

}  // namespace berth::api
