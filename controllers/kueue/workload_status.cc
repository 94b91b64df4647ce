#include "controllers/kueue/workload_status.h"

#include <chrono>

#include "api/conditions.h"
#include "controllers/kueue/decoder.h"
#include "controllers/kueue/start_time_estimates.h"

namespace berth::controllers::kueue {

using api::FindCondition;
using api::RemoveCondition;
using api::SetCondition;

namespace {
// Sets a condition to False only when it exists (Kueue leaves absent ones absent).
bool FalseIfPresent(api::Object* wl, const std::string& type, const std::string& reason, const std::string& message,
                    Time now) {
  if (FindCondition(*wl, type) == nullptr) return false;
  return SetCondition(wl, {type, "False", reason, message}, now);
}

// Kueue's reset of Evicted/Preempted on a new reservation: False, reason
// QuotaReserved, message "Previously: " + the condition's own message (what
// the workload went through last time). Only a True condition is reset, so a
// second reservation does not prefix "Previously: " twice.
bool ResetIfTrue(api::Object* wl, const std::string& type, Time now) {
  if (!api::IsConditionTrue(*wl, type)) return false;
  const std::string message = "Previously: " + api::ConditionField(*wl, type, "message");
  return SetCondition(wl, {type, "False", "QuotaReserved", message}, now);
}
}  // namespace

bool SetQuotaReservation(api::Object* wl, const admission::Admission& admission, const admission::ResourceNames& names,
                         Time now) {
  bool changed = false;
  api::Object adm = EncodeAdmission(admission, names);
  api::Object& status = (*wl)["status"];
  if (!status.is_object()) status = api::Object::object();
  if (status.value("admission", api::Object()) != adm) {
    status["admission"] = adm;
    changed = true;
  }
  const std::string msg = "Quota reserved in ClusterQueue " + admission.cluster_queue;
  changed |= SetCondition(wl, {"QuotaReserved", "True", "QuotaReserved", msg}, now);
  changed |= SetCondition(wl, {"Admitted", "True", "Admitted", "The workload is admitted"}, now);
  changed |= ResetIfTrue(wl, "Evicted", now);
  changed |= ResetIfTrue(wl, "Preempted", now);
  changed |= FalseIfPresent(wl, "Requeued", "QuotaReserved", msg, now);
  // A pending workload's estimate (start_time_estimates.h) ends with its wait.
  changed |= RemoveCondition(wl, kEstimatedStartCondition);
  return changed;
}

bool SetPending(api::Object* wl, const std::string& reason, const std::string& message, Time now) {
  return SetCondition(wl, {"QuotaReserved", "False", reason, message}, now);
}

bool SetEvicted(api::Object* wl, const std::string& reason, const std::string& message,
                const std::string& preempted_reason, Time now) {
  bool changed = SetCondition(wl, {"Evicted", "True", reason, message}, now);
  if (!preempted_reason.empty()) changed |= SetCondition(wl, {"Preempted", "True", preempted_reason, message}, now);
  return changed;
}

bool ReleaseQuota(api::Object* wl, Time now) {
  const api::Object* ev = FindCondition(*wl, "Evicted");
  const std::string reason = ev ? ev->value("reason", "") : "";
  const std::string message = ev ? ev->value("message", "") : "";
  bool changed = false;
  if (wl->contains("status") && (*wl)["status"].contains("admission")) {
    (*wl)["status"].erase("admission");
    changed = true;
  }
  changed |= SetCondition(wl, {"QuotaReserved", "False", "PendingEvaluation", message}, now);
  // Kueue's SyncAdmittedCondition: the seconds (truncated) of the admission that ends here
  // are added to status.accumulatedPastExecutionTimeSeconds.
  if (api::IsConditionTrue(*wl, "Admitted")) {
    if (auto since = api::ConditionTransitionTime(*wl, "Admitted")) {
      const auto seconds = static_cast<int32_t>(std::chrono::duration_cast<std::chrono::seconds>(now - *since).count());
      api::Object& past = (*wl)["status"]["accumulatedPastExecutionTimeSeconds"];
      past = (past.is_number_integer() ? past.get<int32_t>() : 0) + seconds;
      changed = true;
    }
  }
  changed |= SetCondition(wl, {"Admitted", "False", "NoReservation", "The workload has no reservation"}, now);
  const bool requeue = reason == "Preempted" || reason == "NodeFailures";
  changed |= SetCondition(wl, {"Requeued", requeue ? "True" : "False", reason, message}, now);
  return changed;
}

bool SetFinished(api::Object* wl, bool succeeded, const std::string& message, Time now) {
  return SetCondition(wl, {"Finished", "True", succeeded ? "Succeeded" : "Failed", message}, now);
}

}  // namespace berth::controllers::kueue
