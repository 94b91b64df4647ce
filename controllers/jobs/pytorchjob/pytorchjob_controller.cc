#include "controllers/jobs/pytorchjob/pytorchjob_controller.h"

#include <cctype>
#include <map>

#include "api/conditions.h"
#include "controllers/jobs/common/owned_objects.h"
#include "controllers/jobs/pytorchjob/pytorchjob_pods.h"

namespace berth::controllers::jobs::pytorchjob {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

// Kubeflow's JobCondition (kubeflow/common apis/common/v1) has no observedGeneration.
bool SetJobCondition(Object* job, const Condition& c, Time now) {
  return SetCondition(job, c, now, ConditionKind::kNoObservedGeneration);
}

// A Failed pod whose restartPolicy restarts its containers (OnFailure, Always) did not
// fail by itself — its node was lost (failed by pod GC) or it was evicted: the Training Operator
// restarts such a pod (deleted, then created again) instead of failing the job.
bool RestartableFailure(const Object& pod) {
  if (StringAt(ObjectAt(pod, "status"), "phase") != "Failed") return false;
  const std::string policy = StringAt(ObjectAt(pod, "spec"), "restartPolicy");
  return policy == "OnFailure" || policy == "Always" || policy.empty();
}
}  // namespace

Status PyTorchJobController::Sync(const std::string& key, const Object& original) {
  const std::string& ns = api::Namespace(original);
  const std::string& name = api::Name(original);
  Object job = original;
  ApplyDefaults(&job);
  const bool suspended =
      jobs::EffectivelySuspended(original, Field(ObjectAt(ObjectAt(original, "spec"), "runPolicy"), "suspend"));
  const std::string selector = std::string(kJobNameLabel) + "=" + name;
  BERTH_ASSIGN_OR_RETURN(std::vector<Object> pods, jobs::ListOwned(client_, kPodsResource, job, selector));
  BERTH_ASSIGN_OR_RETURN(std::vector<Object> services, jobs::ListOwned(client_, kServicesResource, job, selector));

  Object updated = original;
  const Time now = clock_.Now();
  if (suspended) {
    for (const Object& p : pods) {
      if (!api::BeingDeleted(p)) BERTH_RETURN_IF_ERROR(jobs::DeleteIfPresent(client_, kPodsResource, ns, api::Name(p)));
    }
    for (const Object& s : services) BERTH_RETURN_IF_ERROR(jobs::DeleteIfPresent(client_, kServicesResource, ns, api::Name(s)));
    SetJobCondition(&updated, {"Suspended", "True", "JobSuspended", "PyTorchJob " + name + " is suspended."}, now);
  } else {
    std::map<std::string, const Object*> by_name;
    for (const Object& s : services) by_name[api::Name(s)] = &s;
    for (const Object& s : Services(job)) {
      if (by_name.count(api::Name(s)) == 0) BERTH_RETURN_IF_ERROR(jobs::CreateIfAbsent(client_, kServicesResource, s));
    }
    for (const Object& s : services) by_name.erase(api::Name(s));
    for (const Object& p : pods) {
      if (!api::BeingDeleted(p) && RestartableFailure(p)) {
        BERTH_RETURN_IF_ERROR(jobs::DeleteIfPresent(client_, kPodsResource, ns, api::Name(p)));
      }
      by_name[api::Name(p)] = &p;  // its replacement waits until it is gone (departure 3)
    }
    for (const Object& p : Pods(job)) {
      if (by_name.count(api::Name(p)) == 0) BERTH_RETURN_IF_ERROR(jobs::CreateIfAbsent(client_, kPodsResource, p));
    }
    if (api::IsConditionTrue(original, "Suspended")) {
      SetJobCondition(&updated, {"Suspended", "False", "JobResumed", "PyTorchJob " + name + " is resumed."}, now);
    }
    SetJobCondition(&updated, {"Created", "True", "PyTorchJobCreated", "PyTorchJob " + name + " is created."}, now);
  }

  // replicaStatuses and the Running / Succeeded / Failed conditions from the pods.
  Object statuses = Object::object();
  for (const std::string& type : ReplicaTypes(job)) statuses[type] = {{"active", 0}, {"succeeded", 0}, {"failed", 0}};
  int running = 0, total = 0;
  bool master_succeeded = false, any_failed = false;
  for (const Object& p : pods) {
    if (api::BeingDeleted(p)) continue;
    const std::string rt = StringAt(ObjectAt(ObjectAt(p, "metadata"), "labels"), kReplicaTypeLabel);
    std::string type;
    for (const std::string& t : ReplicaTypes(job)) {
      std::string lower = t;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (lower == rt) type = t;
    }
    if (type.empty()) continue;
    const std::string phase = StringAt(ObjectAt(p, "status"), "phase");
    ++total;
    // The Training Operator's updateJobReplicaStatuses: active counts Running pods only
    // (a Pending replacement is not active, so Kueue's PodsReady stays False meanwhile).
    const char* field = phase == "Succeeded" ? "succeeded" : phase == "Failed" ? "failed"
                        : phase == "Running"  ? "active"
                                              : nullptr;
    if (field != nullptr) statuses[type][field] = statuses[type][field].get<int>() + 1;
    if (phase == "Running") ++running;
    if (phase == "Succeeded" && type == "Master") master_succeeded = true;
    if (phase == "Failed" && !RestartableFailure(p)) any_failed = true;
  }
  MutableObject(&updated, "status")["replicaStatuses"] = statuses;
  // Without a Master the Workers decide: succeeded when every Worker has (the Training
  // Operator's UpdateJobStatus, pkg/controller.v1/pytorch/pytorchjob_controller.go: the
  // Master, else the Worker replica type, finishes the job when expected == 0). Before, a
  // worker-only job stayed Created for ever and, queued, held its quota.
  const Object& specs = ObjectAt(ObjectAt(job, "spec"), "pytorchReplicaSpecs");
  bool has_master = false;
  for (const std::string& t : ReplicaTypes(job)) has_master = has_master || t == "Master";
  if (!has_master && statuses.contains("Worker")) {
    auto w = specs.find("Worker");
    const int64_t want = w != specs.end() ? IntAt(*w, "replicas", 1) : 1;
    if (want > 0 && statuses["Worker"]["succeeded"].get<int>() >= want) master_succeeded = true;
  }
  if (!suspended && total > 0 && running == total) {
    SetJobCondition(&updated, {"Running", "True", "PyTorchJobRunning", "PyTorchJob " + name + " is running."}, now);
  }
  if (master_succeeded) {
    SetJobCondition(&updated,
                    {"Succeeded", "True", "PyTorchJobSucceeded", "PyTorchJob " + name + " is successfully completed."},
                    now);
  } else if (any_failed) {
    SetJobCondition(&updated, {"Failed", "True", "PyTorchJobFailed", "PyTorchJob " + name + " is failed."}, now);
  }
  return jobs::WriteStatusIfChanged(client_, kPyTorchJobsResource, original, updated);
}

}  // namespace berth::controllers::jobs::pytorchjob
