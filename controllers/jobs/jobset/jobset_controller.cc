#include "controllers/jobs/jobset/jobset_controller.h"

#include "controllers/jobs/common/owned_objects.h"
#include "controllers/jobs/jobset/jobset_children.h"

namespace berth::controllers::jobs::jobset {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

using jobs::kJobsResource;

Status JobSetController::Sync(const std::string& key, const Object& original) {
  const std::string& ns = api::Namespace(original);
  const std::string& name = api::Name(original);

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

}  // namespace berth::controllers::jobs::jobset
