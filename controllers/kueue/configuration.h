// KueueConfiguration: Kueue's component configuration
// (config.kueue.x-k8s.io Configuration: configuration_types.go and defaults.go of
// apis/config/v1beta2 and v1beta1), as `berth server --config FILE` reads it.
//
// Reading (ParseKueueConfiguration): one YAML (or JSON) document through the
// project's codec (api/yaml_codec.h), decoded strictly as Kueue's config
// loader does (serializer.EnableStrict): a field Kueue's types do not have is
// an error, `strict decoding error: unknown field "waitForPodsReady.foo"`; a
// field of the wrong JSON type is `json: cannot unmarshal string into Go
// struct field WaitForPodsReady.waitForPodsReady.blockAdmission of type bool`
// (shortened by berth to the path and the expected type). Then defaults, then
// validation with field errors rendered as apimachinery renders them
// (`waitForPodsReady.requeuingStrategy.backoffBaseSeconds: Invalid value: -1:
// must be greater than or equal to 0`). Errors are BadRequest Statuses whose
// message starts with the source name.
//
// Applied by berth (everything else Kueue's types accept is read, checked for
// its JSON shape and reported in `ignored`, so a Kueue deployment's
// controller_manager_config.yaml loads unchanged):
//   manageJobsWithoutQueueName (default false): a job of a managed kind
//     without the queue-name label gets a Workload with an empty queueName
//     (it then waits "LocalQueue  doesn't exist", as in Kueue without a
//     default LocalQueue).
//   waitForPodsReady: see WaitForPodsReadyConfig. Enabled:
//     v1beta1 — `enable: true` (timeout default 5m, blockAdmission default
//     true, recoveryTimeout default none: Kueue's v1beta1 conversion);
//     v1beta2 — the section being present, or absent (Kueue HEAD defaults it
//     on, apis/config/v1beta2/defaults.go: timeout 30m, blockAdmission false, recoveryTimeout =
//     timeout, "0s" disables recovery).
//   integrations.frameworks: the job kinds Kueue manages. berth implements
//     batch/job, jobset.x-k8s.io/jobset, kubeflow.org/pytorchjob and
//     trainer.kubeflow.org/trainjob. Empty → ["batch/job"] (Kueue's default).
//     Another framework Kueue knows (kubeflow.org/mpijob, pod, ...) is
//     accepted with a warning (berth has no such kind); an unknown name is a
//     validation error.
//     The API server's job webhook follows the same list and
//     manageJobsWithoutQueueName (JobWebhookOptions, api/kueue_job_webhook.h):
//     a job of an unlisted kind is left to run unmanaged, as in Kueue where
//     the disabled kind's webhook is not registered; with
//     manageJobsWithoutQueueName an unlabelled job of a listed kind is stored
//     suspended, so no pod starts before its Workload is admitted.
//     Without an `integrations` section only batch/job is managed (Kueue's
//     API default), unlike berth without --config: `berth server` logs a
//     warning naming the kinds left unmanaged (UnmanagedFrameworks).
//   fairSharing: Kueue's Fair Sharing (admission/fair_sharing.h: shares,
//     the admission tournament, fair preemption). Enabled by v1beta1
//     `enable: true` (preemptionStrategies default
//     [LessThanOrEqualToFinalShare, LessThanInitialShare]: Kueue's v1beta1
//     defaults/conversion) or, in v1beta2, by the section being present
//     (preemptionStrategies then required: `fairSharing.preemptionStrategies:
//     Required value: must be specified`). The list must be one of
//     [LessThanOrEqualToFinalShare], [LessThanInitialShare],
//     [LessThanOrEqualToFinalShare, LessThanInitialShare] (Kueue's
//     pkg/config/validation.go; otherwise `Unsupported value`). The feature
//     gates FairSharingPreemptWithinNominal and
//     FairSharingPrioritizeNonBorrowing stay at Kueue's default (on).
//   admissionFairSharing: Kueue's Admission Fair Sharing
//     (admission/admission_fair_sharing.h; the AdmissionFairSharing feature
//     gate is beta and on in Kueue v0.19), on when the section is present:
//     usageHalfLifeTime (default 0: usage resets at every sample; negative:
//     `admissionFairSharing.usageHalfLifeTime: Invalid value: "-1s": must be
//     greater than or equal to 0`), usageSamplingInterval (0 or absent: 5m;
//     negative: `... must be greater than 0`; below kMinUsageSamplingInterval,
//     1s, refused: berth's limit, Kueue has none), resourceWeights (a number ≥ 0
//     per resource name, `admissionFairSharing.resourceWeights[cpu]: Invalid
//     value: -1: ...`). It applies to ClusterQueues with
//     spec.admissionScope.admissionMode UsageBasedAdmissionFairSharing.
//   objectRetentionPolicies.workloads.afterFinished: a Go duration ≥ 0 (negative:
//     `objectRetentionPolicies.workloads.afterFinished: Invalid value: "-1s": must be
//     greater than or equal to 0`); afterDeactivatedByKueue is read and not applied
//     (listed in `ignored`).
//
// Without --config, `berth server` runs ServerDefault(): Kueue v0.19's
// defaults for a v1beta2 Configuration without a file's sections
// (waitForPodsReady on: timeout 30m, recoveryTimeout 30m, blockAdmission
// false, requeuing backoff 60 s doubling to 3600 s, no backoffLimitCount;
// manageJobsWithoutQueueName false), except that every implemented framework
// is managed (DefaultFrameworks(); Kueue's default is batch/job only), so the
// seeds' TrainJobs, PyTorchJobs and JobSets queue without a file.
// KueueConfiguration{} (waitForPodsReady off) is the engine's plain state
// that unit tests build on.
//
// Thread-safety: plain values; the parser is a pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admission/admission_fair_sharing.h"
#include "admission/fair_sharing.h"
#include "api/kueue_job_webhook.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::kueue {

// The shortest admissionFairSharing.usageSamplingInterval accepted (see above).
inline constexpr Duration kMinUsageSamplingInterval = std::chrono::seconds(1);

// requeuingStrategy.timestamp: which time orders a workload evicted by
// PodsReadyTimeout when it is queued again.
enum class RequeuingTimestamp {
  kEviction,  // the Evicted condition's lastTransitionTime (default)
  kCreation,  // metadata.creationTimestamp
};

struct WaitForPodsReadyConfig {
  bool enabled = false;
  // Admission → PodsReady=True must happen within `timeout`, else the
  // workload is evicted with reason PodsReadyTimeout.
  Duration timeout = std::chrono::minutes(5);
  // PodsReady True→False (a pod failed) must recover within this; nullopt:
  // no recovery timeout.
  std::optional<Duration> recovery_timeout;
  // While an admitted workload is not PodsReady, no other workload is
  // admitted anywhere ("waiting for all admitted workloads to be in
  // PodsReady condition").
  bool block_admission = false;
  RequeuingTimestamp timestamp = RequeuingTimestamp::kEviction;
  // Evictions by timeout after which the workload is deactivated
  // (spec.active=false); nullopt: requeued forever.
  std::optional<int32_t> backoff_limit_count;
  int32_t backoff_base_seconds = 60;
  int32_t backoff_max_seconds = 3600;

  // Kueue's requeue backoff for the n-th requeue (n ≥ 1):
  // min(base·2^(n−1), max) seconds. Kueue adds a random jitter of at most
  // 0.01 % (wait.Backoff Jitter 0.0001); berth leaves it out so requeue times
  // are deterministic.
  Duration Backoff(int32_t n) const;
};

struct KueueConfiguration {
  std::string api_version;  // "config.kueue.x-k8s.io/v1beta2" or ".../v1beta1"; "" = no file
  bool manage_jobs_without_queue_name = false;
  WaitForPodsReadyConfig wait_for_pods_ready;
  // Framework names to manage, in the file's order, only those berth
  // implements.
  std::vector<std::string> frameworks = DefaultFrameworks();
  // fairSharing (enable false: classical ordering and preemption).
  admission::FairSharingConfig fair_sharing;
  // admissionFairSharing (enabled false: no LocalQueue usage, usual order).
  admission::AdmissionFairSharingConfig admission_fair_sharing;
  // objectRetentionPolicies.workloads.afterFinished: a Workload Finished this long is
  // deleted (Kueue's workload_controller.go; 0: at once); nullopt: kept (Kueue's default).
  std::optional<Duration> workload_retention_after_finished;
  // Human-readable notes on what was read but is not applied: frameworks
  // berth does not implement (in the file's order), then top-level sections
  // ("namespace", "internalCertManagement", ...) in name order.
  std::vector<std::string> ignored;

  bool Manages(std::string_view framework) const;
  // Every framework berth implements (the default without --config).
  static std::vector<std::string> DefaultFrameworks();
  // The frameworks berth implements that this configuration does not manage,
  // in DefaultFrameworks() order.
  std::vector<std::string> UnmanagedFrameworks() const;
  // The warning `berth server --config` logs when UnmanagedFrameworks() is
  // not empty ("" otherwise): which kinds Kueue leaves alone and how to
  // manage them.
  std::string UnmanagedFrameworksWarning() const;
  // What the API server's Kueue job webhook needs (api/kueue_job_webhook.h).
  api::KueueJobWebhookOptions JobWebhookOptions() const;
  // What `berth server` runs without --config (see the file comment).
  static KueueConfiguration ServerDefault();
};

// Parses, defaults and validates a Configuration document (see the file
// comment). `source` names the file in error messages.
StatusOr<KueueConfiguration> ParseKueueConfiguration(std::string_view text, std::string_view source = "");

// Go's time.ParseDuration as metav1.Duration uses it: "300ms", "1.5h",
// "2h45m", "0s", "0"; units ns, us, µs, ms, s, m, h; a leading sign.
// BadRequest `time: invalid duration "x"` otherwise.
StatusOr<Duration> ParseGoDuration(std::string_view text);

}  // namespace berth::controllers::kueue
