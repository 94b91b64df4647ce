#include "placement/priority_class.h"

#include <fmt/format.h>

namespace berth::placement {

std::vector<PriorityClass> SystemPriorityClasses() {
  return {
      {std::string(kSystemClusterCritical), kSystemCriticalPriority, false,
       PreemptionPolicy::kPreemptLowerPriority},
      {std::string(kSystemNodeCritical), kSystemCriticalPriority + 1000, false,
       PreemptionPolicy::kPreemptLowerPriority},
  };
}

const PriorityClass* DefaultPriorityClass(const std::vector<PriorityClass>& classes) {
  const PriorityClass* best = nullptr;
  for (const auto& pc : classes) {
    if (!pc.global_default) continue;
    if (best == nullptr || pc.value < best->value ||
        (pc.value == best->value && pc.name < best->name)) {
      best = &pc;
    }
  }
  return best;
}

namespace {

const PriorityClass* FindClass(const std::vector<PriorityClass>& classes,
                               const std::vector<PriorityClass>& system, std::string_view name) {
  for (const auto& pc : classes) {
    if (pc.name == name) return &pc;
  }
  for (const auto& pc : system) {
    if (pc.name == name) return &pc;
  }
  return nullptr;
}

Status Forbidden(std::string_view pod_name, std::string_view why) {
  return ForbiddenError(fmt::format("pods \"{}\" is forbidden: {}", pod_name, why));
}

}  // namespace

StatusOr<ResolvedPriority> ResolvePodPriority(const std::vector<PriorityClass>& classes,
                                              std::string_view pod_name,
                                              const PodPrioritySpec& spec) {
  static const std::vector<PriorityClass> kSystem = SystemPriorityClasses();
  ResolvedPriority out;
  std::optional<PreemptionPolicy> class_policy;
  if (spec.priority_class_name.empty()) {
    if (const PriorityClass* def = DefaultPriorityClass(classes)) {
      out.priority_class_name = def->name;
      out.priority = def->value;
      class_policy = def->preemption_policy;
    } else {
      out.priority = 0;
      class_policy = PreemptionPolicy::kPreemptLowerPriority;
    }
  } else {
    const PriorityClass* pc = FindClass(classes, kSystem, spec.priority_class_name);
    if (pc == nullptr) {
      return Forbidden(pod_name, fmt::format("no PriorityClass with name {} was found",
                                             spec.priority_class_name));
    }
    out.priority_class_name = pc->name;
    out.priority = pc->value;
    class_policy = pc->preemption_policy;
  }
  if (spec.priority.has_value() && *spec.priority != out.priority) {
    return Forbidden(pod_name,
                     fmt::format("the integer value of priority ({}) must not be provided in pod "
                                 "spec; priority admission controller computed {} from the given "
                                 "PriorityClass name",
                                 *spec.priority, out.priority));
  }
  if (class_policy.has_value()) {
    if (spec.preemption_policy.has_value() && *spec.preemption_policy != *class_policy) {
      return Forbidden(
          pod_name,
          fmt::format("the string value of PreemptionPolicy ({}) must not be provided in pod "
                      "spec; priority admission controller computed {} from the given "
                      "PriorityClass name",
                      PreemptionPolicyName(*spec.preemption_policy),
                      PreemptionPolicyName(*class_policy)));
    }
    out.preemption_policy = *class_policy;
  } else {
    out.preemption_policy =
        spec.preemption_policy.value_or(PreemptionPolicy::kPreemptLowerPriority);
  }
  return out;
}

}  // namespace berth::placement
