// The job integration interface: what a job kind (batch/v1 Job here; TrainJob,
// JobSet and PyTorchJob with issue 5) provides so the generic job reconciler
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
//
// Thread-safety: a GenericJob is used by one reconcile at a time; a
// JobIntegration is immutable and shared.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/object.h"
#include "client/client.h"
#include "core/status.h"

namespace berth::controllers::kueue {

// One podSet as derived from the job: name, pod count and pod template
// (metadata + spec, JSON) as it goes into Workload spec.podSets[i].
struct PodSetTemplate {
  std::string name;
  int32_t count = 1;
  api::Object pod_template;
};

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
inline void InjectPodSetInfo(const PodSetInfo& info, api::Object* pod_spec) {
  if (!info.node_selector.empty()) {
    api::Object& ns = (*pod_spec)["nodeSelector"];
    if (!ns.is_object()) ns = api::Object::object();
    for (const auto& [k, v] : info.node_selector) ns[k] = v;
  }
  if (!info.tolerations.empty()) {
    api::Object& tols = (*pod_spec)["tolerations"];
    if (!tols.is_array()) tols = api::Object::array();
    for (const api::Object& t : info.tolerations) {
      if (std::find(tols.begin(), tols.end(), t) == tols.end()) tols.push_back(t);
    }
  }
}

// Kueue's podset.RestorePodSpec: puts back the nodeSelector and tolerations
// recorded before admission. Returns whether the spec changed.
inline bool RestorePodSetInfo(const PodSetInfo& info, api::Object* pod_spec) {
  const api::Object before = *pod_spec;
  if (info.node_selector.empty()) {
    pod_spec->erase("nodeSelector");
  } else {
    (*pod_spec)["nodeSelector"] = info.node_selector;
  }
  if (info.tolerations.empty()) {
    pod_spec->erase("tolerations");
  } else {
    (*pod_spec)["tolerations"] = info.tolerations;
  }
  return *pod_spec != before;
}

struct JobFinishedState {
  bool succeeded = false;
  std::string message;
};

class GenericJob {
 public:
  virtual ~GenericJob() = default;
  virtual const api::Object& object() const = 0;
  virtual std::vector<PodSetTemplate> PodSets() const = 0;
  virtual bool IsSuspended() const = 0;
  virtual void Suspend() = 0;
  // Unsuspends and injects; kInvalid when the infos do not match PodSets().
  virtual Status RunWithPodSetsInfo(const std::vector<PodSetInfo>& infos) = 0;
  virtual bool RestorePodSetsInfo(const std::vector<PodSetInfo>& infos) = 0;
  virtual std::optional<JobFinishedState> Finished() const = 0;
  virtual bool PodsReady() const = 0;
  virtual bool IsActive() const = 0;
};

// A job kind (Kueue's integration framework registration).
class JobIntegration {
 public:
  virtual ~JobIntegration() = default;
  // Kueue's framework name, e.g. "batch/job".
  virtual std::string Name() const = 0;
  virtual client::GroupVersionResource Resource() const = 0;
  virtual api::GroupVersionKind Kind() const = 0;
  virtual std::unique_ptr<GenericJob> Wrap(api::Object job) const = 0;
  // The pod label whose value names the job of this kind a pod belongs to
  // (e.g. "jobset.sigs.k8s.io/jobset-name"); Wrap's IsActive looks for live
  // pods with it, and the job is reconciled again on every change of such a
  // pod, so an evicted job gives its quota back as soon as its last pod is
  // gone. "" when the job's own status says whether pods are alive (batch/v1
  // Job: status.active and status.terminating).
  virtual std::string PodJobNameLabel() const { return ""; }
};

}  // namespace berth::controllers::kueue
