#include "controllers/jobs/trainjob/trainjob_controller.h"

#include "api/conditions.h"
#include "controllers/jobs/common/child_objects.h"
#include "controllers/jobs/common/owned_objects.h"
#include "controllers/jobs/jobset/jobset_controller.h"
#include "controllers/jobs/trainjob/trainjob_builder.h"

namespace berth::controllers::jobs::trainjob {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

using jobset::kJobSetsResource;

namespace {

constexpr char kBuildFailedReason[] = "TrainJobResourcesCreationFailed";
constexpr char kDeadlineExceededReason[] = "DeadlineExceeded";
constexpr char kDeadlineExceededMessage[] = "TrainJob exceeded its active deadline";

Object WithEffectiveSuspend(const Object& trainjob) {
  Object tj = trainjob;
  MutableObject(&tj, "spec")["suspend"] =
      jobs::EffectivelySuspended(trainjob, Field(ObjectAt(trainjob, "spec"), "suspend"));
  return tj;
}

}  // namespace

std::string RuntimeSnapshotName(const std::string& trainjob) { return trainjob + "-runtime-snapshot"; }

std::optional<Time> ActiveDeadline(const Object& trainjob) {
  const Object& spec = ObjectAt(trainjob, "spec");
  if (!Field(spec, "activeDeadlineSeconds").is_number_integer()) return std::nullopt;
  if (jobs::EffectivelySuspended(trainjob, Field(spec, "suspend"))) return std::nullopt;
  std::string start = StringAt(ObjectAt(trainjob, "metadata"), "creationTimestamp");
  if (FindCondition(trainjob, "Suspended") != nullptr) {
    // True: resumed but not yet recorded; the clock starts with the Resumed condition.
    if (IsConditionTrue(trainjob, "Suspended")) return std::nullopt;
    start = ConditionField(trainjob, "Suspended", "lastTransitionTime");
    if (start.empty()) start = StringAt(ObjectAt(trainjob, "metadata"), "creationTimestamp");
  }
  Time t;
  if (!ParseRfc3339(start, &t)) return std::nullopt;
  return t + std::chrono::seconds(IntAt(spec, "activeDeadlineSeconds", 0));
}

StatusOr<Object> ResolveRuntime(client::Client& client, const Object& trainjob, bool* snapshot_found) {
  if (snapshot_found != nullptr) *snapshot_found = false;
  const std::string& ns = api::Namespace(trainjob);
  auto snap = client.Get(kConfigMapsResource.Namespace(ns), RuntimeSnapshotName(api::Name(trainjob)));
  if (snap.ok() && jobs::IsControlledBy(snap.value(), api::Uid(trainjob))) {
    const std::string text = StringAt(ObjectAt(snap.value(), "data"), kRuntimeSnapshotKey);
    Object runtime = Object::parse(text, nullptr, /*allow_exceptions=*/false);
    if (runtime.is_object()) {
      if (snapshot_found != nullptr) *snapshot_found = true;
      return runtime;
    }
    return InvalidError("runtime snapshot " + RuntimeSnapshotName(api::Name(trainjob)) + " is not a JSON object");
  }
  if (!snap.ok() && snap.status().code() != Code::kNotFound) return snap.status();

  const RuntimeRef ref = RuntimeRef::FromTrainJob(trainjob);
  const client::GroupVersionResource gvr{ref.api_group, "v1alpha1", ref.resource()};
  auto runtime = client.Get(gvr.Namespace(ref.cluster_scoped() ? "" : ns), ref.name);
  if (!runtime.ok() && runtime.status().code() == Code::kNotFound) {
    return NotFoundError(RuntimeNotFoundMessage(trainjob));
  }
  return runtime;
}

Status TrainJobController::Sync(const std::string& key, const Object& original) {
  const std::string& ns = api::Namespace(original);
  const std::string& name = api::Name(original);
  const std::string managed_by = StringAt(ObjectAt(original, "spec"), "managedBy", kDefaultManagedBy);
  if (managed_by != kDefaultManagedBy) return Status::Ok();

  const Object tj = WithEffectiveSuspend(original);
  const Time now = clock_.Now();
  Object updated = original;

  if (auto unsupported = UnsupportedRuntimeMessage(original)) {
    SetCondition(&updated, {"Failed", "True", std::string(kTrainingRuntimeNotSupported), *unsupported}, now);
    return jobs::WriteStatusIfChanged(client_, kTrainJobsResource, original, updated);
  }

  const bool finished = IsConditionTrue(original, "Complete") || IsConditionTrue(original, "Failed");
  auto existing = client_.Get(kJobSetsResource.Namespace(ns), name);
  if (!existing.ok() && existing.status().code() != Code::kNotFound) return existing.status();
  const Object* jobset = existing.ok() && jobs::IsControlledBy(existing.value(), api::Uid(original))
                             ? &existing.value()
                             : nullptr;

  if (const std::optional<Time> deadline = ActiveDeadline(original); deadline && !finished) {
    if (now >= *deadline) {
      SetCondition(&updated, {"Failed", "True", kDeadlineExceededReason, kDeadlineExceededMessage}, now);
      if (jobset != nullptr) {
        BERTH_RETURN_IF_ERROR(jobs::DeleteIfPresent(client_, kJobSetsResource, ns, name));
      }
      return jobs::WriteStatusIfChanged(client_, kTrainJobsResource, original, updated);
    }
    if (requeue_after_) requeue_after_(key, *deadline - now);
  }

  if (!finished) {
    bool from_snapshot = false;
    auto runtime = ResolveRuntime(client_, original, &from_snapshot);
    if (!runtime.ok()) {
      if (runtime.status().code() != Code::kNotFound) return runtime.status();
      const std::string msg = runtime.status().message();
      if (SetCondition(&updated, {"Created", "False", "RuntimeNotFound", msg}, now)) {
        recorder_.Event(original, kEventTypeWarning, kBuildFailedReason, msg);
      }
      return jobs::WriteStatusIfChanged(client_, kTrainJobsResource, original, updated);
    }
    RemoveCondition(&updated, "Created");
    if (!from_snapshot) {
      Object snapshot{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata",
                       {{"name", RuntimeSnapshotName(name)},
                        {"namespace", ns},
                        {"ownerReferences", Object::array({jobs::ControllerReference(original)})}}},
                      {"data", {{kRuntimeSnapshotKey, runtime.value().dump()}}}};
      BERTH_RETURN_IF_ERROR(jobs::CreateIfAbsent(client_, kConfigMapsResource, snapshot));
    }
    if (ShouldApplyJobSet(tj, jobset)) {
      auto built = Build(tj, runtime.value());
      if (!built.ok()) {
        recorder_.Event(original, kEventTypeWarning, kBuildFailedReason, built.status().message());
        return jobs::WriteStatusIfChanged(client_, kTrainJobsResource, original, updated);
      }
      if (built.value().mpi_hostfile) {
        BERTH_RETURN_IF_ERROR(jobs::CreateIfAbsent(client_, kConfigMapsResource, *built.value().mpi_hostfile));
      }
      BERTH_RETURN_IF_ERROR(ApplyJobSet(built.value().jobset, jobset));
    }
  }

  const TrainJobStatus st = StatusFromJobSet(tj, jobset);
  for (const Condition& c : st.conditions) SetCondition(&updated, c, now);
  if (!st.jobs_status.empty() || HasField(ObjectAt(updated, "status"), "jobsStatus")) {
    MutableObject(&updated, "status")["jobsStatus"] = st.jobs_status;
  }
  return jobs::WriteStatusIfChanged(client_, kTrainJobsResource, original, updated);
}

Status TrainJobController::ApplyJobSet(const Object& built, const Object* existing) {
  if (existing == nullptr) return jobs::CreateIfAbsent(client_, kJobSetsResource, built);
  Object next = *existing;
  Object& meta = MutableObject(&next, "metadata");
  api::MergeStringMap(&MutableObject(&meta, "labels"), ObjectAt(ObjectAt(built, "metadata"), "labels"));
  api::MergeStringMap(&MutableObject(&meta, "annotations"), ObjectAt(ObjectAt(built, "metadata"), "annotations"));
  Object& spec = MutableObject(&next, "spec");
  spec["suspend"] = BoolAt(ObjectAt(built, "spec"), "suspend", false);
  Object& rjobs = MutableArray(&spec, "replicatedJobs");
  for (const Object& b : ArrayAt(ObjectAt(built, "spec"), "replicatedJobs")) {
    Object* e = api::FindNamed(&rjobs, StringAt(b, "name"));
    if (e == nullptr) continue;  // the set of replicatedJobs is immutable
    const Object& src = ObjectAt(ObjectAt(ObjectAt(b, "template"), "spec"), "template");
    Object& dst = MutableObject(&MutableObject(&MutableObject(e, "template"), "spec"), "template");
    for (std::string_view f : {"labels", "annotations"}) {
      Object& m = MutableObject(&dst, "metadata");
      if (HasField(ObjectAt(src, "metadata"), f)) m[std::string(f)] = Field(ObjectAt(src, "metadata"), f);
      else m.erase(std::string(f));
    }
    Object& dst_spec = MutableObject(&dst, "spec");
    for (std::string_view f : {"nodeSelector", "tolerations", "schedulingGates"}) {
      if (HasField(ObjectAt(src, "spec"), f)) dst_spec[std::string(f)] = Field(ObjectAt(src, "spec"), f);
      else dst_spec.erase(std::string(f));
    }
  }
  if (next == *existing) return Status::Ok();
  return client_.Update(kJobSetsResource.Namespace(api::Namespace(next)), next).status();
}

}  // namespace berth::controllers::jobs::trainjob
