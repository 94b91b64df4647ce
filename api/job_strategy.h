// Strategy of the built-in batch/v1 Job: what kube-apiserver does for a Job in
// code (Kubernetes 1.32: pkg/apis/batch/v1/defaults.go SetDefaults_Job,
// pkg/registry/batch/job/strategy.go, pkg/apis/batch/validation), composed with
// Kueue's job webhook (api/kueue_job_webhook.h), which upstream runs as a
// mutating admission webhook on the same create.
//
// Create (PrepareForCreate), in upstream's order:
//   1. SetJobDefaults (SetDefaults_Job; on update too): parallelism and
//      completions 1 when both are unset, parallelism 1 when unset; backoffLimit
//      6, or 2147483647 when backoffLimitPerIndex is set; metadata.labels from
//      spec.template.metadata.labels when the Job has none; completionMode
//      NonIndexed; suspend false; podFailurePolicy onPodConditions[].status
//      "True" when empty; podReplacementPolicy Failed with a podFailurePolicy,
//      TerminatingOrFailed without; manualSelector false. Present fields are
//      kept. The schema cannot default these (resources/definitions/batch-v1.yaml:
//      the same JobSpec is embedded, undefaulted, in a JobSet).
//   2. Kueue's job webhook (framework batch/job, spec.suspend).
//   3. GenerateJobSelector unless spec.manualSelector is true (upstream's
//      generateSelector, called from the strategy's Validate): the template
//      labels batch.kubernetes.io/job-name, job-name = metadata.name and
//      batch.kubernetes.io/controller-uid, controller-uid = metadata.uid are
//      added where absent (a value the user set is kept, and rejected below
//      when it differs); spec.selector.matchLabels gets
//      batch.kubernetes.io/controller-uid = metadata.uid when absent (other
//      user matchLabels/matchExpressions stay, so validation rejects them).
//   metadata.uid exists at this point: the admission pipeline assigns it on
//   create (api/admission_pipeline.h; upstream's FillObjectMetaSystemFields
//   runs before admission) and the store keeps it.
//
// Validation (ValidateJobSelector, on create; on update only the template
// match): unless manualSelector is true (validateGeneratedSelector)
//   metadata.uid: Required value                               (no uid)
//   spec.template.metadata.labels[<key>]: Required value: <v>   (label absent)
//   spec.template.metadata.labels[<key>]: Invalid value: map[string]string{...}: must be '<v>'
//        for batch.kubernetes.io/controller-uid = uid and batch.kubernetes.io/job-name = name
//   spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{...},
//        MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated
//        when the selector does not match {batch.kubernetes.io/controller-uid: <uid>} alone;
// and always (ValidateJobSpec)
//   spec.selector: Required value                               (no selector, manualSelector;
//                                                               create only: Jobs stored before
//                                                               berth generated selectors have none)
//   spec.template.metadata.labels: Invalid value: map[string]string{...}: `selector` does not
//        match template `labels`
// Values are printed as Go's %#v prints them (field.ErrorBody), map keys sorted.
// Then, on create and update, the template's pod spec as ValidateJobSpec's
// ValidatePodTemplateSpec checks it: api/pod_validation.h, at spec.template.spec.
//
// Update (ValidateJobSpecUpdate, 1.32; the registry's ValidateUpdate runs the create
// checks above, then these), each `Invalid value: <new value>: field is immutable`:
//   spec.completions     unless the Job is Indexed (completionMode of the new Job) and the
//                        new completions equal the new parallelism (elastic Indexed Jobs,
//                        ElasticIndexedJob GA in 1.31); otherwise an Indexed Job gets
//                        `spec.completions: Invalid value: 4: can only be modified in tandem
//                        with spec.parallelism`
//   spec.selector        (printed as v1.LabelSelector{...})
//   spec.template        except, while the OLD Job is suspended and has no
//                        status.startTime (suspended and never started: the registry's
//                        AllowMutableSchedulingDirectives), its scheduling directives:
//                        template metadata labels and annotations, spec.nodeSelector,
//                        tolerations, schedulingGates and affinity.nodeAffinity (affinity
//                        may be cleared when it held nodeAffinity only)
//   spec.completionMode, spec.podFailurePolicy, spec.backoffLimitPerIndex,
//   spec.managedBy, spec.successPolicy
// parallelism, suspend, activeDeadlineSeconds, backoffLimit and ttlSecondsAfterFinished
// stay mutable. Upstream prints a struct value (the template, podFailurePolicy,
// successPolicy) as Go's %#v of the internal type (kilobytes of core.PodTemplateSpec{...});
// berth omits those values: `spec.template: Invalid value: field is immutable`. The
// cause's field names the path either way, which is what kubectl prints per error.
//
// Kueue-managed Jobs (KueueJobWebhook::Manages) — berth's departure from Kueue, whose
// webhook accepts the change and whose job reconciler suspends the Job only once it
// notices (pkg/controller/jobframework/reconciler.go ensureOneWorkload, "No matching
// Workload"): an update of a running Job (suspend false before and after) that changes its
// pod count (Kueue's podsCount: parallelism, at most completions) is stored with
// spec.suspend = true. Between the write and the reconciler's reaction the Job controller
// would otherwise create pods beyond the admitted count (parallelism 1 → 8 on a one-GPU
// ClusterQueue ran 8 GPU pods). The Kueue job reconciler then deletes the Workload that no
// longer matches and creates one that queues again (controllers/kueue/job_reconciler.h).
//
// restartPolicy (ValidateJobSpec, pkg/apis/batch/validation/validation.go), on create:
//   spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"
//        when absent or Always (upstream's SetDefaults_PodSpec turns an absent one into
//        Always before validation, so `kubectl create` of a Job without one is refused)
//   spec.template.spec.restartPolicy: Unsupported value: "X": supported values: "OnFailure", "Never"
//   spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported
//        when podFailurePolicy is specified
// Not on update: the template's restartPolicy is immutable (above), and a Job stored before
// berth checked it stays updatable (Kueue resumes it).
//
// podFailurePolicy, successPolicy, backoffLimitPerIndex and maxFailedIndexes, on create and
// update: api/job_policy_validation.h.
//
// Not here yet: completions/parallelism bounds beyond the schema's.
//
// Thread-safety: stateless functions; the strategy is immutable.
#pragma once

#include <string_view>

#include "api/field_errors.h"
#include "api/kueue_job_webhook.h"
#include "api/object.h"
#include "api/strategy.h"

namespace berth::api {

// The labels of a Job's pods (k8s.io/api/batch/v1 constants).
inline constexpr std::string_view kJobControllerUidLabel = "batch.kubernetes.io/controller-uid";
inline constexpr std::string_view kJobLegacyControllerUidLabel = "controller-uid";
inline constexpr std::string_view kJobNameLabel = "batch.kubernetes.io/job-name";
inline constexpr std::string_view kJobLegacyJobNameLabel = "job-name";
// An Indexed Job pod's completion index: the annotation and label the Job controller
// writes (batchv1.JobCompletionIndexAnnotation), the env var it injects and the
// downward-API path that env var (and Trainer's PET_NODE_RANK) reads it from.
inline constexpr std::string_view kJobCompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index";
inline constexpr std::string_view kJobCompletionIndexLabel = "batch.kubernetes.io/job-completion-index";
inline constexpr std::string_view kJobCompletionIndexEnv = "JOB_COMPLETION_INDEX";
inline constexpr std::string_view kJobCompletionIndexFieldPath =
    "metadata.annotations['batch.kubernetes.io/job-completion-index']";

// SetDefaults_Job (see above). `job` is a batch/v1 Job; a spec that is not an
// object is left for schema validation.
void SetJobDefaults(Object* job);

// generateSelector (see above), from metadata.name and metadata.uid.
void GenerateJobSelector(Object* job);

// The selector rules above (create: generated = true checks the generated
// selector unless manualSelector; update: generated = false, the template match only).
FieldErrorList ValidateJobSelector(const Object& job, bool generated);

// The update rules above (immutability and the elastic Indexed Job rule) of `job` over
// `old`, both batch/v1 Jobs as stored (defaulted).
FieldErrorList ValidateJobSpecUpdate(const Object& job, const Object& old);

// Registers the batch/Job strategy (with Kueue's job webhook as `kueue` says).
void RegisterJobStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& kueue = {});

}  // namespace berth::api
