#include "controllers/jobset/jobset_controller.h"

#include "client/indexer.h"
#include "controllers/job/job_controller.h"
#include "controllers/job/owned_objects.h"
#include "controllers/jobset/jobset_children.h"

namespace berth::controllers::jobset {

using jobs::BoolAt;
using jobs::Field;
using jobs::HasField;
using jobs::HasTrueCondition;
using jobs::IntAt;
using jobs::MutableArray;
using jobs::MutableObject;
using jobs::ObjectAt;
using jobs::StringAt;

using job::kJobsResource;

Status JobSetController::Reconcile(const std::string& key) {
  auto [ns, name] = client::SplitMetaNamespaceKey(key);
  auto got = client_.Get(kJobSetsResource.Namespace(ns), name);
  if (!got.ok()) return got.status().code() == Code::kNotFound ? Status::Ok() : got.status();
  const Object& original = got.value();
  if (jobs::BeingDeleted(original)) return Status::Ok();

  Object js = original;
  ApplyDefaults(&js);
  MutableObject(&js, "spec")["suspend"] =
      jobs::EffectivelySuspended(original, Field(ObjectAt(original, "spec"), "suspend"));

  BERTH_ASSIGN_OR_RETURN(std::vector<Object> children,
                         jobs::ListOwned(client_, kJobsResource, js, std::string(kJobSetNameKey) + "=" + name));
  const JobSetPlan plan = PlanJobSet(js, children);

  for (const std::string& j : plan.delete_jobs) {
    BERTH_RETURN_IF_ERROR(
        jobs::DeleteIfPresent(client_, kJobsResource, ns, j, client::PropagationPolicy::kForeground));
  }
  for (const Object& j : plan.update_jobs) {
    BERTH_RETURN_IF_ERROR(client_.Update(kJobsResource.Namespace(ns), j).status());
  }
  if (plan.terminal_state.empty()) {
    if (auto svc = HeadlessService(js)) BERTH_RETURN_IF_ERROR(jobs::CreateIfAbsent(client_, kServicesResource, *svc));
  }
  for (const Object& j : plan.create_jobs) {
    BERTH_RETURN_IF_ERROR(jobs::CreateIfAbsent(client_, kJobsResource, j));
  }

  Object updated = original;
  WriteStatus(plan, &updated);
  const Time now = clock_.Now();
  for (const Condition& c : plan.conditions) SetCondition(&updated, c, now);
  const bool changed = Field(original, "status") != Field(updated, "status");
  BERTH_RETURN_IF_ERROR(jobs::WriteStatusIfChanged(client_, kJobSetsResource, original, updated));
  if (changed && plan.event) recorder_.Event(original, plan.event->type, plan.event->reason, plan.event->message);
  return Status::Ok();
}

Status JobSetController::ReconcileAll() {
  BERTH_ASSIGN_OR_RETURN(client::ObjectList list, client_.List(kJobSetsResource));
  Status first = Status::Ok();
  for (const Object& j : list.items) {
    Status st = Reconcile(client::MetaNamespaceKey(j));
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

}  // namespace berth::controllers::jobset
