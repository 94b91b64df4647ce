#include "api/priority_admission.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "api/unstructured.h"

namespace berth::api {

const GroupResource kPriorityClassesResource{"scheduling.k8s.io", "priorityclasses"};
const GroupResource kPodsResource{"", "pods"};

namespace {

constexpr std::string_view kSystemPriorityClassPrefix = "system-";

std::optional<int64_t> IntField(const Object& obj, const char* key) {
  const Object& v = Field(obj, key);
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

const Object& Deref(const Object& pc) { return pc; }
const Object& Deref(const std::shared_ptr<const Object>& pc) { return *pc; }

template <typename Classes>
const Object* LowestGlobalDefault(const Classes& classes) {
  const Object* best = nullptr;
  int64_t best_value = 0;
  for (const auto& entry : classes) {
    const Object& pc = Deref(entry);
    if (!BoolAt(pc, "globalDefault", false)) continue;
    const int64_t value = IntAt(pc, "value", 0);
    if (best == nullptr || value < best_value || (value == best_value && Name(pc) < Name(*best))) {
      best = &pc;
      best_value = value;
    }
  }
  return best;
}

// The pod's spec as an object, created when absent.
Object& SpecOf(Object* pod) {
  Object& spec = (*pod)["spec"];
  if (!spec.is_object()) spec = Object::object();
  return spec;
}

Status AdmitPodCreate(const AdmissionAttributes& attrs, Object* pod) {
  BERTH_ASSIGN_OR_RETURN(auto classes, attrs.lookup.List(kPriorityClassesResource, ""));
  Object& spec = SpecOf(pod);
  const std::string name = Name(*pod);
  const std::string class_name = StringAt(spec, "priorityClassName");
  int64_t priority = 0;
  std::optional<std::string> policy;
  if (class_name.empty()) {
    if (const Object* def = DefaultPriorityClass(classes)) {
      spec["priorityClassName"] = Name(*def);
      priority = IntField(*def, "value").value_or(0);
      if (Field(*def, "preemptionPolicy").is_string()) policy = StringAt(*def, "preemptionPolicy");
    }
  } else {
    const Object* found = nullptr;
    for (const auto& pc : classes) {
      if (Name(*pc) == class_name) found = pc.get();
    }
    if (found == nullptr) {
      return AdmissionForbidden(kPodsResource, name,
                                fmt::format("no PriorityClass with name {} was found", class_name));
    }
    priority = IntField(*found, "value").value_or(0);
    if (Field(*found, "preemptionPolicy").is_string()) policy = StringAt(*found, "preemptionPolicy");
  }
  if (auto sent = IntField(spec, "priority"); sent.has_value() && *sent != priority) {
    return AdmissionForbidden(kPodsResource, name,
                              fmt::format("the integer value of priority ({}) must not be provided in pod spec; "
                                          "priority admission controller computed {} from the given PriorityClass name",
                                          *sent, priority));
  }
  spec["priority"] = priority;
  if (policy.has_value()) {
    const Object& sent = Field(spec, "preemptionPolicy");
    if (sent.is_string() && sent.get<std::string>() != *policy) {
      return AdmissionForbidden(
          kPodsResource, name,
          fmt::format("the string value of PreemptionPolicy ({}) must not be provided in pod spec; priority "
                      "admission controller computed {} from the given PriorityClass name",
                      sent.get<std::string>(), *policy));
    }
    spec["preemptionPolicy"] = *policy;
  }
  return Status::Ok();
}

}  // namespace

std::vector<Object> SystemPriorityClasses() {
  auto make = [](std::string_view name, int32_t value, const char* description) {
    return Object{{"apiVersion", "scheduling.k8s.io/v1"},
                  {"kind", "PriorityClass"},
                  {"metadata", {{"name", std::string(name)}}},
                  {"value", value},
                  {"description", description},
                  {"preemptionPolicy", "PreemptLowerPriority"}};
  };
  return {
      make(kSystemClusterCritical, kSystemCriticalPriority,
           "Used for system critical pods that must run in the cluster, but can be moved to another node if "
           "necessary."),
      make(kSystemNodeCritical, kSystemCriticalPriority + 1000,
           "Used for system critical pods that must not be moved from their current node."),
  };
}

const Object* DefaultPriorityClass(const std::vector<std::shared_ptr<const Object>>& classes) {
  return LowestGlobalDefault(classes);
}

const Object* DefaultPriorityClass(const std::vector<Object>& classes) { return LowestGlobalDefault(classes); }

Status AdmitPodPriority(const AdmissionAttributes& attrs, Object* pod) {
  switch (attrs.operation) {
    case Operation::kCreate:
      return AdmitPodCreate(attrs, pod);
    case Operation::kUpdate: {
      if (attrs.old == nullptr) return Status::Ok();
      const Object& old_spec = Field(*attrs.old, "spec");
      Object& spec = SpecOf(pod);
      for (const char* key : {"priority", "preemptionPolicy"}) {
        if (Field(spec, key).is_null() && !Field(old_spec, key).is_null()) spec[key] = old_spec[key];
      }
      return Status::Ok();
    }
    case Operation::kUpdateStatus:
      return Status::Ok();
  }
  return Status::Ok();
}

FieldErrorList ValidatePriorityClass(const Object& pc) {
  FieldErrorList errs;
  const std::string& name = Name(pc);
  const std::optional<int64_t> value = IntField(pc, "value");
  if (name.starts_with(kSystemPriorityClassPrefix)) {
    std::string why;
    bool known = false;
    for (const Object& system : SystemPriorityClasses()) {
      if (Name(system) != name) continue;
      known = true;
      if (value != IntField(system, "value")) {
        why = fmt::format("value of {} PriorityClass must be {}", name, system["value"].get<int64_t>());
      } else if (BoolAt(pc, "globalDefault", false)) {
        why = fmt::format("globalDefault of {} PriorityClass must be false", name);
      }
    }
    if (!known) why = fmt::format("{} is not a known system priority class", name);
    if (!why.empty()) {
      errs.push_back(Forbidden(FieldPath("metadata").Child("name"),
                               "priority class names with 'system-' prefix are reserved for system use only. "
                               "error: " +
                                   why));
    }
  } else if (value.has_value() && *value > kHighestUserDefinablePriority) {
    errs.push_back(Forbidden(FieldPath("value"), fmt::format("maximum allowed value of a user defined priority is {}",
                                                             kHighestUserDefinablePriority)));
  }
  return errs;
}

FieldErrorList ValidatePriorityClassUpdate(const Object& pc, const Object& old) {
  FieldErrorList errs;
  if (IntField(pc, "value") != IntField(old, "value")) {
    errs.push_back(Forbidden(FieldPath("value"), "may not be changed in an update."));
  }
  const Object& policy = Field(pc, "preemptionPolicy");
  if (policy != Field(old, "preemptionPolicy")) {
    errs.push_back(Invalid(FieldPath("preemptionPolicy"), policy, "field is immutable"));
  }
  return errs;
}

Status ValidatePriorityClassAdmission(const AdmissionAttributes& attrs, const Object& pc) {
  if (!BoolAt(pc, "globalDefault", false)) return Status::Ok();
  BERTH_ASSIGN_OR_RETURN(auto classes, attrs.lookup.List(kPriorityClassesResource, ""));
  const Object* existing = DefaultPriorityClass(classes);
  if (existing == nullptr) return Status::Ok();
  if (attrs.operation == Operation::kCreate || Name(*existing) != Name(pc)) {
    return AdmissionForbidden(
        kPriorityClassesResource, Name(pc),
        fmt::format("PriorityClass {} is already marked as default. Only one default can exist", Name(*existing)));
  }
  return Status::Ok();
}

namespace {

class PriorityClassStrategy : public Strategy {
 public:
  FieldErrorList ValidateCreate(const Object& obj) const override { return ValidatePriorityClass(obj); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs = ValidatePriorityClass(obj);
    for (auto& e : ValidatePriorityClassUpdate(obj, old)) errs.push_back(std::move(e));
    return errs;
  }
  Status ValidateAdmission(const AdmissionAttributes& attrs, const Object& obj) const override {
    return ValidatePriorityClassAdmission(attrs, obj);
  }
};

}  // namespace

void RegisterSchedulingStrategies(StrategyRegistry* registry) {
  registry->Register("scheduling.k8s.io", "PriorityClass", std::make_unique<PriorityClassStrategy>());
}

}  // namespace berth::api
