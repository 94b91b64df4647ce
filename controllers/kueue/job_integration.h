// The job integration interface: what a job kind (batch/v1 Job, JobSet, TrainJob,
// PyTorchJob: controllers/jobs/<kind>/<kind>_integration.h) provides so the generic job reconciler
// (job_reconciler.h) can manage it through Kueue, as Kueue's
// jobframework.GenericJob (pkg/controller/jobframework/interface.go).
//
// A GenericJob wraps one job object (its JSON as read from the informer
// cache). Mutating methods change the wrapped JSON only; the reconciler writes
// it back with client::Client::Update.
//
//   PodSets()            the podSets Kueue derives from the job's templates,
//                        in the kind's order, with counts as Kueue computes
//                        them (batch/v1 Job: one podSet "main", count =
//                        parallelism reduced to completions when smaller).
//   IsSuspended/Suspend  the kind's suspend switch (Job spec.suspend).
//   RunWithPodSetsInfo   unsuspends and injects each admitted podSet's flavor
//                        nodeSelector (ResourceFlavor nodeLabels) and
//                        tolerations into its template (Kueue
//                        podset.Merge: existing keys are overwritten by the
//                        flavor's, tolerations are appended when not present).
//   RestorePodSetsInfo   puts each template's nodeSelector and tolerations
//                        back to the given (original) ones, on eviction;
//                        returns whether anything changed.
//   Finished             Succeeded/Failed with a message once the job is done.
//   PodsReady            every pod of the job is ready (or has succeeded).
//   IsActive             some pod still exists that has not terminated
//                        (running or terminating). berth releases an evicted
//                        workload's quota only once this is false.
//   ResetStartTime       on stop, after the suspend: clears the status field that makes
//                        the kind's pod template immutable once the job started, so the
//                        reconciler can restore and later inject scheduling directives
//                        (batch/v1 Job: status.startTime, Kueue's Job.Stop "Reset start
//                        time if necessary, so we can update the scheduling directives";
//                        api/job_strategy.h). Returns whether the status changed; the
//                        reconciler writes it with UpdateStatus. Default: nothing.
//
// Thread-safety: a GenericJob is used by one reconcile at a time; a
// JobIntegration is immutable and shared.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "client/client.h"
#include "controllers/kueue/pod_set.h"
#include "core/status.h"

namespace berth::controllers::kueue {

// What is injected into (or restored onto) one podSet's pod template
// (Kueue podset.PodSetInfo).
struct PodSetInfo {
  std::string name;
  int32_t count = 0;
  std::map<std::string, std::string> node_selector;
  std::vector<api::Object> tolerations;  // core/v1 Toleration JSON
};

// Kueue's podset.Merge for one pod template's spec: adds the admitted
// flavor's nodeSelector entries and tolerations (without duplicates).
void InjectPodSetInfo(const PodSetInfo& info, api::Object* pod_spec);

// Kueue's podset.RestorePodSpec: puts back the nodeSelector and tolerations
// recorded before admission. Returns whether the spec changed.
bool RestorePodSetInfo(const PodSetInfo& info, api::Object* pod_spec);

// The pod spec (a PodTemplateSpec's spec) of podSet `i` inside a job, created when absent.
using PodSpecAt = std::function<api::Object*(size_t i)>;

// RunWithPodSetsInfo / RestorePodSetsInfo of a kind whose `pod_sets` podSets are, in order,
// the pod specs `spec_at` returns: the infos must match them one to one, else kInvalid
// ("invalid podset infos: expecting N podset, got M", Kueue's podset.BadPodSetsInfoLenError)
// / false, and nothing is touched.
Status InjectPodSetsInfo(const std::vector<PodSetInfo>& infos, size_t pod_sets, const PodSpecAt& spec_at);
bool RestorePodSetsInfo(const std::vector<PodSetInfo>& infos, size_t pod_sets, const PodSpecAt& spec_at);

struct JobFinishedState {
  bool succeeded = false;
  std::string message;
};

// Finished() of a kind whose own conditions say it: `succeeded_type` True → succeeded,
// "Failed" True → failed, each with the condition's message (`failed_default` when the
// Failed condition has none); nullopt while neither holds.
std::optional<JobFinishedState> FinishedByConditions(const api::Object& job, std::string_view succeeded_type,
                                                     std::string_view failed_default = "");

class GenericJob {
 public:
  virtual ~GenericJob() = default;
  virtual const api::Object& object() const = 0;
  virtual std::vector<PodSet> PodSets() const = 0;
  virtual bool IsSuspended() const = 0;
  virtual void Suspend() = 0;
  // Unsuspends and injects; kInvalid when the infos do not match PodSets().
  virtual Status RunWithPodSetsInfo(const std::vector<PodSetInfo>& infos) = 0;
  virtual bool RestorePodSetsInfo(const std::vector<PodSetInfo>& infos) = 0;
  virtual std::optional<JobFinishedState> Finished() const = 0;
  virtual bool PodsReady() const = 0;
  virtual bool IsActive() const = 0;
  virtual bool ResetStartTime() { return false; }
};

// A job kind (Kueue's integration framework registration): what it is called and where
// its objects are, and how to wrap one as a GenericJob.
//   name              Kueue's framework name, e.g. "batch/job".
//   pod_job_name_label
//                     the pod label whose value names the job of this kind a pod belongs
//                     to (e.g. "jobset.sigs.k8s.io/jobset-name"); Wrap's IsActive looks for
//                     live pods with it, and the job is reconciled again on every change of
//                     such a pod, so an evicted job gives its quota back as soon as its last
//                     pod is gone. "" when the job's own status says whether pods are alive
//                     (batch/v1 Job: status.active and status.terminating).
class JobIntegration {
 public:
  JobIntegration(std::string name, client::GroupVersionResource resource, api::GroupVersionKind kind,
                 std::string pod_job_name_label = "")
      : name_(std::move(name)),
        resource_(std::move(resource)),
        kind_(std::move(kind)),
        pod_job_name_label_(std::move(pod_job_name_label)) {}
  virtual ~JobIntegration() = default;

  const std::string& Name() const { return name_; }
  const client::GroupVersionResource& Resource() const { return resource_; }
  const api::GroupVersionKind& Kind() const { return kind_; }
  const std::string& PodJobNameLabel() const { return pod_job_name_label_; }

  virtual std::unique_ptr<GenericJob> Wrap(api::Object job) const = 0;
  // The job's own run-time bound (batch/v1 Job spec.activeDeadlineSeconds,
  // PyTorchJob spec.runPolicy.activeDeadlineSeconds), counted from its
  // start; nullopt when it has none. A pure read of the object (no I/O,
  // unlike Wrap): estimated start times call it for every workload.
  virtual std::optional<Duration> ActiveDeadline(const api::Object& /*job*/) const { return std::nullopt; }

 private:
  const std::string name_;
  const client::GroupVersionResource resource_;
  const api::GroupVersionKind kind_;
  const std::string pod_job_name_label_;
};

}  // namespace berth::controllers::kueue
