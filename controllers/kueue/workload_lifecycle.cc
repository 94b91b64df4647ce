#include "controllers/kueue/workload_lifecycle.h"

#include <algorithm>
#include <fmt/format.h>

#include "api/unstructured.h"
#include "controllers/kueue/decoder.h"

namespace berth::controllers::kueue {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

constexpr char kNotReadyMsg[] = "Not all pods are ready or succeeded";
constexpr char kRecoveryMsg[] = "At least one pod has failed, waiting for recovery";
constexpr char kReadyMsg[] = "All pods reached readiness and the workload is running";

bool HoldsQuota(const api::Object& wl) { return IsConditionTrue(wl, "QuotaReserved"); }

bool ConditionIs(const api::Object& wl, const char* type, const char* status, const char* reason) {
  const api::Object* c = FindCondition(wl, type);
  return c && c->value("status", "") == status && c->value("reason", "") == reason;
}

api::Object& Status(api::Object* wl) {
  api::Object& st = (*wl)["status"];
  if (!st.is_object()) st = api::Object::object();
  return st;
}

int32_t RequeueCount(const api::Object& wl) {
  auto st = wl.find("status");
  if (st == wl.end() || !st->contains("requeueState")) return 0;
  const api::Object& c = (*st)["requeueState"].value("count", api::Object());
  return c.is_number_integer() ? c.get<int32_t>() : 0;
}

// Kueue's workloadEvictionStateInc: status.schedulingStats.evictions[] keyed
// by (reason, underlyingCause).
void IncrementEvictionStats(api::Object* wl, const std::string& reason, const std::string& cause) {
  api::Object& stats = Status(wl)["schedulingStats"];
  if (!stats.is_object()) stats = api::Object::object();
  api::Object& evictions = stats["evictions"];
  if (!evictions.is_array()) evictions = api::Object::array();
  for (api::Object& e : evictions) {
    if (e.value("reason", "") == reason && e.value("underlyingCause", "") == cause) {
      e["count"] = e.value("count", 0) + 1;
      return;
    }
  }
  // underlyingCause is required and written even when empty (Kueue's
  // WorkloadSchedulingStatsEviction has no omitempty on it); without it the
  // Workload's status write is refused.
  evictions.push_back({{"reason", reason}, {"underlyingCause", cause}, {"count", 1}});
}

LifecycleStep StatusStep(api::Object wl, std::string event_reason = "", std::string event_message = "") {
  LifecycleStep s;
  s.kind = LifecycleStep::Kind::kUpdateStatus;
  s.workload = std::move(wl);
  s.event_reason = std::move(event_reason);
  s.event_message = std::move(event_message);
  return s;
}

// Step 4 (see the header): the PodsReady timeout of an admitted, active workload.
LifecycleStep PodsReadyTimeoutStep(const api::Object& wl, const WaitForPodsReadyConfig& config, Time now) {
  LifecycleStep none;
  if (!config.enabled || !HoldsQuota(wl) || IsConditionTrue(wl, "Evicted") || !IsConditionTrue(wl, "Admitted") ||
      IsConditionTrue(wl, "PodsReady")) {
    return none;
  }
  const api::Object* ready = FindCondition(wl, "PodsReady");
  const std::string reason = ready ? ready->value("reason", "") : "";
  std::string cause;
  Time deadline{};
  if (ready == nullptr || reason == "WaitForStart" || reason == "PodsReady") {
    cause = "WaitForStart";
    deadline = ConditionTransitionTime(wl, "Admitted").value_or(now) + config.timeout;
  } else if (reason == "WaitForRecovery" && config.recovery_timeout) {
    cause = "WaitForRecovery";
    deadline = ConditionTransitionTime(wl, "PodsReady").value_or(now) + *config.recovery_timeout;
  } else {
    return none;
  }
  if (deadline > now) {
    none.recheck_after = deadline - now;
    return none;
  }
  const int32_t count = RequeueCount(wl) + 1;
  api::Object out = wl;
  if (config.backoff_limit_count && count > *config.backoff_limit_count) {
    SetCondition(
        &out,
        {"DeactivationTarget", "True", "RequeuingLimitExceeded", "exceeding the maximum number of re-queuing retries"},
        now);
    return StatusStep(std::move(out));
  }
  const std::string message = fmt::format("Exceeded the PodsReady timeout {}/{}", api::Namespace(wl), api::Name(wl));
  SetCondition(&out, {"Evicted", "True", "PodsReadyTimeout", message}, now);
  IncrementEvictionStats(&out, "PodsReadyTimeout", cause);
  Status(&out)["requeueState"] = {{"count", count}, {"requeueAt", FormatRfc3339(now + config.Backoff(count))}};
  return StatusStep(std::move(out), "EvictedDueToPodsReadyTimeout", message);
}

// Step 5 (see the header): Kueue's reconcileMaxExecutionTime, for an active workload that
// holds quota with Admitted=True and no DeactivationTarget=True (step 1 acts on that).
LifecycleStep MaxExecutionTimeStep(const api::Object& wl, Time now) {
  LifecycleStep none;
  const api::Object& max = NestedField(wl, {"spec", "maximumExecutionTimeSeconds"});
  if (!HoldsQuota(wl) || !IsConditionTrue(wl, "Admitted") || !max.is_number_integer()) return none;
  const int64_t max_seconds = max.get<int64_t>();
  const api::Object& past = NestedField(wl, {"status", "accumulatedPastExecutionTimeSeconds"});
  const int64_t past_seconds = past.is_number_integer() ? past.get<int64_t>() : 0;
  const Duration remaining =
      std::chrono::seconds(max_seconds - past_seconds) - (now - ConditionTransitionTime(wl, "Admitted").value_or(now));
  if (remaining > Duration::zero()) {
    none.recheck_after = remaining;
    return none;
  }
  api::Object out = wl;
  SetCondition(
      &out, {"DeactivationTarget", "True", kMaximumExecutionTimeExceeded, "exceeding the maximum execution time"}, now);
  Status(&out).erase("accumulatedPastExecutionTimeSeconds");
  LifecycleStep s = StatusStep(std::move(out), kMaximumExecutionTimeExceeded,
                               fmt::format("The maximum execution time ({}s) exceeded", max_seconds));
  s.event_type = "Warning";
  return s;
}

}  // namespace

LifecycleStep NextLifecycleStep(const api::Object& wl, const WaitForPodsReadyConfig& config, Time now) {
  LifecycleStep none;
  if (IsConditionTrue(wl, "Finished")) return none;
  const api::Object& spec = wl.value("spec", api::Object::object());
  const bool active = !spec.contains("active") || !spec["active"].is_boolean() || spec["active"].get<bool>();
  const bool evicted = IsConditionTrue(wl, "Evicted");

  if (!active) {
    const api::Object* target = FindCondition(wl, "DeactivationTarget");
    const bool has_requeue_state = wl.contains("status") && wl["status"].contains("requeueState");
    if (HoldsQuota(wl) && !evicted) {
      api::Object out = wl;
      std::string message = "The workload is deactivated";
      std::string cause;
      if (target) {
        message += " due to " + target->value("message", "");
        cause = target->value("reason", "");
      }
      SetCondition(&out, {"Evicted", "True", "Deactivated", message}, now);
      IncrementEvictionStats(&out, "Deactivated", cause);
      RemoveCondition(&out, "DeactivationTarget");
      Status(&out).erase("requeueState");
      return StatusStep(std::move(out), "EvictedDueToDeactivated", message);
    }
    if (target || has_requeue_state) {
      api::Object out = wl;
      RemoveCondition(&out, "DeactivationTarget");
      Status(&out).erase("requeueState");
      return StatusStep(std::move(out));
    }
    return none;
  }

  // 1. Deactivation requested.
  if (IsConditionTrue(wl, "DeactivationTarget")) {
    LifecycleStep s;
    s.kind = LifecycleStep::Kind::kUpdateSpec;
    s.workload = wl;
    s.workload["spec"]["active"] = false;
    return s;
  }
  // 2. Reactivated.
  if (ConditionIs(wl, "Requeued", "False", "Deactivated")) {
    api::Object out = wl;
    SetCondition(&out, {"Requeued", "True", "Reactivated", "The workload was reactivated"}, now);
    return StatusStep(std::move(out));
  }
  // 3. Backoff after a PodsReady timeout.
  if (!HoldsQuota(wl) && ConditionIs(wl, "Requeued", "False", "PodsReadyTimeout")) {
    Time requeue_at{};
    const api::Object& rs = wl["status"].value("requeueState", api::Object::object());
    if (ParseRfc3339(rs.value("requeueAt", ""), &requeue_at) && requeue_at > now) {
      none.recheck_after = requeue_at - now;
      return none;
    }
    api::Object out = wl;
    if (out["status"].contains("requeueState")) out["status"]["requeueState"].erase("requeueAt");
    SetCondition(&out, {"Requeued", "True", "BackoffFinished", "The workload backoff was finished"}, now);
    LifecycleStep s = StatusStep(std::move(out));
    s.requeue_inadmissible = true;
    return s;
  }
  // 4. PodsReady timeout of an admitted workload.
  LifecycleStep ready_step = PodsReadyTimeoutStep(wl, config, now);
  if (ready_step.kind != LifecycleStep::Kind::kNone) return ready_step;
  // 5. Maximum execution time.
  LifecycleStep max_step = MaxExecutionTimeStep(wl, now);
  if (max_step.kind != LifecycleStep::Kind::kNone) return max_step;
  // The earlier of the two rechecks (Kueue: the minimum non-zero RequeueAfter).
  const Duration a = ready_step.recheck_after, b = max_step.recheck_after;
  none.recheck_after = a > Duration::zero() && b > Duration::zero() ? std::min(a, b) : std::max(a, b);
  return none;
}

Condition PodsReadyCondition(const api::Object& wl, bool pods_ready) {
  if (!HoldsQuota(wl) || !IsConditionTrue(wl, "Admitted")) return {"PodsReady", "False", "WaitForStart", kNotReadyMsg};
  const api::Object* cur = FindCondition(wl, "PodsReady");
  const std::string reason = cur ? cur->value("reason", "") : "";
  if (pods_ready) {
    const bool recovered = reason == "WaitForRecovery" || reason == "Recovered";
    return {"PodsReady", "True", recovered ? "Recovered" : "Started", kReadyMsg};
  }
  if (cur && (cur->value("status", "") == "True" || reason == "WaitForRecovery")) {
    return {"PodsReady", "False", "WaitForRecovery", kRecoveryMsg};
  }
  return {"PodsReady", "False", "WaitForStart", kNotReadyMsg};
}

Time QueueOrderTimestamp(const api::Object& wl, const WaitForPodsReadyConfig& config) {
  if (config.timestamp == RequeuingTimestamp::kEviction && ConditionIs(wl, "Evicted", "True", "PodsReadyTimeout")) {
    if (auto t = ConditionTransitionTime(wl, "Evicted")) return *t;
  }
  return CreationTime(wl);
}

bool BlocksAdmission(const api::Object& wl) {
  return HoldsQuota(wl) && IsConditionTrue(wl, "Admitted") && !IsConditionTrue(wl, "Finished") &&
         !IsConditionTrue(wl, "PodsReady");
}

}  // namespace berth::controllers::kueue
