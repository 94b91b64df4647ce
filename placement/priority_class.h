// PriorityClass resolution at pod creation, as the Kubernetes `Priority`
// admission plugin (plugin/pkg/admission/priority) computes spec.priority,
// spec.priorityClassName and spec.preemptionPolicy.
//
// ResolvePodPriority, in order:
//   1. The classes considered are the given ones plus the built-in system
//      classes (system-cluster-critical = 2000000000, system-node-critical =
//      2000001000) when the caller did not pass them: the API server creates
//      both at start-up, so they always exist.
//   2. spec.priorityClassName empty -> the globalDefault class, and
//      spec.priorityClassName is set to its name. If several classes claim
//      globalDefault (possible in a race; validation forbids creating a
//      second), the one with the lowest value wins, as upstream; berth breaks
//      an equal value by name. No default class -> priority 0, policy
//      PreemptLowerPriority, name left empty.
//   3. spec.priorityClassName set -> that class must exist, else 403
//      Forbidden `pods "<pod>" is forbidden: no PriorityClass with name <x> was found`.
//   4. A client-supplied spec.priority that differs from the class value ->
//      Forbidden `... the integer value of priority (N) must not be provided
//      in pod spec; priority admission controller computed M from the given
//      PriorityClass name`.
//   5. spec.preemptionPolicy: copied from the class when the class has one
//      (a client-supplied different value -> Forbidden `... the string value
//      of PreemptionPolicy (X) must not be provided in pod spec; priority
//      admission controller computed Y from the given PriorityClass name`).
//      When the class has none (a class stored without the field — the API
//      defaults it to PreemptLowerPriority, so only data written around
//      defaulting can lack it) the pod's own value is kept, and only when
//      both are genuinely absent is the result PreemptLowerPriority, the
//      value kube-scheduler assumes for a nil field (reported-failures C09:
//      the policy must never be lost on the way from class to pod).
//
// Seeds' trap 3: a globalDefault class with PreemptLowerPriority silently
// applies to every pod that names no class; the resolution result says which
// class was applied (priority_class_name) so callers can surface it.
//
// Errors: kForbidden with the messages above (the API server returns them as
// 403 with reason Forbidden). Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "placement/model.h"

namespace berth::placement {

inline constexpr int32_t kHighestUserDefinablePriority = 1000000000;
inline constexpr int32_t kSystemCriticalPriority = 2 * kHighestUserDefinablePriority;
inline constexpr std::string_view kSystemClusterCritical = "system-cluster-critical";
inline constexpr std::string_view kSystemNodeCritical = "system-node-critical";

// scheduling.k8s.io/v1 PriorityClass.
struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  // nullopt: the stored object lacks the field (see step 5).
  std::optional<PreemptionPolicy> preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
};

// system-cluster-critical (2000000000) and system-node-critical (2000001000),
// both PreemptLowerPriority, not globalDefault.
std::vector<PriorityClass> SystemPriorityClasses();

// What the pod carries before admission.
struct PodPrioritySpec {
  std::string priority_class_name;                   // spec.priorityClassName
  std::optional<int32_t> priority;                   // spec.priority as sent by the client
  std::optional<PreemptionPolicy> preemption_policy;  // spec.preemptionPolicy as sent
};

// What admission writes back into the pod.
struct ResolvedPriority {
  std::string priority_class_name;  // may now name the globalDefault class
  int32_t priority = 0;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  bool operator==(const ResolvedPriority&) const = default;
};

// The globalDefault class among `classes` (step 2), or nullptr.
const PriorityClass* DefaultPriorityClass(const std::vector<PriorityClass>& classes);

// Steps 1-5 for a pod named `pod_name` being created.
StatusOr<ResolvedPriority> ResolvePodPriority(const std::vector<PriorityClass>& classes,
                                              std::string_view pod_name,
                                              const PodPrioritySpec& spec);

}  // namespace berth::placement
