// Pod priority as kube-apiserver computes it (kubernetes v1.32,
// plugin/pkg/admission/priority and pkg/apis/scheduling/validation), and the
// PriorityClass kind's rules (pkg/apis/scheduling/v1/defaults.go,
// pkg/registry/scheduling/priorityclass/strategy.go).
//
// The Priority admission plugin, on Pod create (AdmitPodPriority):
//   1. spec.priorityClassName empty -> the globalDefault PriorityClass; its
//      name is written to spec.priorityClassName. If several classes claim
//      globalDefault (possible in a race; ValidatePriorityClassAdmission
//      refuses a second one), the one with the LOWEST value wins, as
//      upstream's getDefaultPriorityClass; berth breaks an equal value by
//      name. No default class -> priority 0, spec.priorityClassName left
//      empty, spec.preemptionPolicy left as sent (kube-scheduler reads an
//      absent policy as PreemptLowerPriority). This is the globalDefault trap:
//      a globalDefault class silently applies to every pod that names none.
//   2. spec.priorityClassName set -> that class must be stored, else 403
//      `pods "<pod>" is forbidden: no PriorityClass with name <x> was found`.
//   3. A client-supplied spec.priority that differs from the class value ->
//      403 `pods "<pod>" is forbidden: the integer value of priority (N) must
//      not be provided in pod spec; priority admission controller computed M
//      from the given PriorityClass name`. Then spec.priority = value.
//   4. The class has a preemptionPolicy (the schema defaults it, so every
//      stored class has one): a client-supplied different value -> 403 `...
//      the string value of PreemptionPolicy (X) must not be provided in pod
//      spec; priority admission controller computed Y from the given
//      PriorityClass name`; then spec.preemptionPolicy = the class's.
// On Pod update: spec.priority and spec.preemptionPolicy missing from the new
// object are carried over from the stored pod (upstream: "ensure the existing
// priority is preserved on update").
//
// The system classes system-cluster-critical (2000000000) and
// system-node-critical (2000001000) are ordinary stored objects: the API
// server creates them at start when missing (SystemPriorityClasses; upstream's
// scheduling/bootstrap-system-priority-classes post-start hook), so the
// plugin finds them like any other class.
//
// PriorityClass (scheduling.k8s.io/v1) strategy:
//   validation (ValidatePriorityClass): a name with the "system-" prefix must
//     be one of the system classes with its value and globalDefault false
//     (metadata.name: Forbidden: priority class names with 'system-' prefix
//     are reserved for system use only. error: <why>); any other class
//     value > 1000000000 -> `value: Forbidden: maximum allowed value of a user
//     defined priority is 1000000000`. Negative values are allowed; the
//     schema bounds value to int32 and preemptionPolicy to its enum.
//   update: `value: Forbidden: may not be changed in an update.`;
//     preemptionPolicy immutable (`preemptionPolicy: Invalid value: "Never":
//     field is immutable`).
//   validating admission (the Priority plugin's PriorityClass half): with
//     globalDefault true, another class already globalDefault -> 403
//     `priorityclasses.scheduling.k8s.io "<new>" is forbidden: PriorityClass
//     <existing> is already marked as default. Only one default can exist`
//     (on update only when the existing default is another class).
//
// Thread-safety: pure functions and stateless strategies.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "api/admission_attributes.h"
#include "api/field_errors.h"
#include "api/object.h"
#include "api/strategy.h"

namespace berth::api {

inline constexpr int32_t kHighestUserDefinablePriority = 1000000000;
inline constexpr int32_t kSystemCriticalPriority = 2 * kHighestUserDefinablePriority;
inline constexpr std::string_view kSystemClusterCritical = "system-cluster-critical";
inline constexpr std::string_view kSystemNodeCritical = "system-node-critical";

// scheduling.k8s.io/v1 priorityclasses and core/v1 pods.
extern const GroupResource kPriorityClassesResource;
extern const GroupResource kPodsResource;

// system-cluster-critical and system-node-critical as PriorityClass objects
// (apiVersion scheduling.k8s.io/v1), in that order, with upstream's values
// and descriptions.
std::vector<Object> SystemPriorityClasses();

// The Priority plugin on a Pod (create: steps 1-4; update: carry-over).
Status AdmitPodPriority(const AdmissionAttributes& attrs, Object* pod);

// The globalDefault class among `classes` (step 1): the one with the lowest value, an equal
// value broken by name; nullptr when no class is globalDefault. The one lookup of the default
// class: the Priority admission plugin, Kueue's job reconciler (its pkg/util/priority
// getDefaultPriorityClass picks the same) and `berth explain`/`lint` all call it.
const Object* DefaultPriorityClass(const std::vector<std::shared_ptr<const Object>>& classes);
const Object* DefaultPriorityClass(const std::vector<Object>& classes);

FieldErrorList ValidatePriorityClass(const Object& pc);
FieldErrorList ValidatePriorityClassUpdate(const Object& pc, const Object& old);
// The one-globalDefault rule.
Status ValidatePriorityClassAdmission(const AdmissionAttributes& attrs, const Object& pc);

// Registers the PriorityClass strategy.
void RegisterSchedulingStrategies(StrategyRegistry* registry);

}  // namespace berth::api
