#include "api/kueue_strategies.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "api/conditions.h"
#include "api/selectors.h"
#include "api/unstructured.h"
#include "core/quantity.h"

namespace berth::api {
namespace {

constexpr std::string_view kIsNegativeErrorMsg = "must be greater than or equal to 0";
constexpr std::string_view kFieldImmutableErrorMsg = "field is immutable";

// A quantity-valued field (string or integer); nullopt when absent or not a quantity
// (schema validation reports malformed values).
std::optional<Quantity> QuantityValue(const Object& v) {
  if (v.is_string()) {
    auto q = Quantity::Parse(v.get<std::string>());
    if (q.ok()) return *q;
    return std::nullopt;
  }
  if (v.is_number_integer()) return Quantity::FromUnits(v.get<int64_t>());
  return std::nullopt;
}

// A CEL rule's failure: the node's OpenAPI type as the value, as apiextensions reports it.
FieldError CelError(const FieldPath& path, std::string_view type, std::string message) {
  return Invalid(path, std::string(type), std::move(message));
}

void Append(FieldErrorList* to, FieldErrorList from) {
  for (FieldError& e : from) to->push_back(std::move(e));
}

// Adds `finalizer` to metadata.finalizers unless present (controllerutil.AddFinalizer).
void AddFinalizer(Object* obj, std::string_view finalizer) {
  Object& finalizers = (*obj)["metadata"]["finalizers"];
  if (!finalizers.is_array()) finalizers = Object::array();
  for (const Object& f : finalizers) {
    if (f == finalizer) return;
  }
  finalizers.push_back(std::string(finalizer));
}

// content.IsLabelKey / ValidateLabelName: one Invalid per message.
FieldErrorList ValidateQualifiedName(const std::string& name, const FieldPath& path) {
  FieldErrorList errs;
  for (std::string& msg : IsQualifiedName(name)) errs.push_back(Invalid(path, name, std::move(msg)));
  return errs;
}

// ValidateImmutableField: Invalid(path, new value, "field is immutable") when they differ.
FieldErrorList ValidateImmutable(const Object& new_value, const Object& old_value, const FieldPath& path) {
  if (new_value == old_value) return {};
  return {Invalid(path, new_value, std::string(kFieldImmutableErrorMsg))};
}

// ---------------------------------------------------------------------------------------
// Resource groups (ClusterQueue and Cohort share them: pkg/webhooks/clusterqueue_webhook.go
// validateResourceGroups and common.go).

struct QuotaOwner {
  bool has_parent = false;                  // cohortName (ClusterQueue) / parentName (Cohort)
  bool enforce_lending_within_nominal = false;  // ClusterQueue only
  std::string_view parent_word;             // "cohort" / "parent" in "must be nil when %s is empty"
};

FieldErrorList ValidateNonNegative(const Object& value, const FieldPath& path) {
  auto q = QuantityValue(value);
  if (q && q->milli() < 0) return {Invalid(path, q->String(), std::string(kIsNegativeErrorMsg))};
  return {};
}

// CEL on each resource group: every flavor has as many resources as coveredResources.
FieldErrorList ResourceGroupCelErrors(const Object& groups, const FieldPath& path) {
  FieldErrorList errs;
  for (size_t i = 0; i < groups.size(); ++i) {
    const size_t covered = ArrayAt(groups[i], "coveredResources").size();
    for (const Object& flavor : ArrayAt(groups[i], "flavors")) {
      if (ArrayAt(flavor, "resources").size() != covered) {
        errs.push_back(CelError(path.Index(i), "object",
                                "flavors must have the same number of resources as the coveredResources"));
        break;
      }
    }
  }
  return errs;
}

FieldErrorList ValidateResourceGroups(const Object& groups, const QuotaOwner& owner, const FieldPath& path) {
  FieldErrorList errs;
  std::set<std::string> seen_resources;
  std::set<std::string> seen_flavors;
  const std::string limit_msg = "must be nil when " + std::string(owner.parent_word) + " is empty";
  for (size_t i = 0; i < groups.size(); ++i) {
    const FieldPath gp = path.Index(i);
    const Object& covered = ArrayAt(groups[i], "coveredResources");
    for (size_t j = 0; j < covered.size(); ++j) {
      const FieldPath rp = gp.Child("coveredResources").Index(j);
      std::string name = covered[j].is_string() ? covered[j].get<std::string>() : std::string();
      Append(&errs, ValidateQualifiedName(name, rp));
      if (!seen_resources.insert(name).second) errs.push_back(Duplicate(rp, name));
    }
    const Object& flavors = ArrayAt(groups[i], "flavors");
    for (size_t j = 0; j < flavors.size(); ++j) {
      const FieldPath fp = gp.Child("flavors").Index(j);
      const Object& resources = ArrayAt(flavors[j], "resources");
      for (size_t k = 0; k < resources.size() && k < covered.size(); ++k) {
        const Object& r = resources[k];
        const FieldPath qp = fp.Child("resources").Index(k);
        if (Field(r, "name") != covered[k]) {
          errs.push_back(Invalid(qp.Child("name"), Field(r, "name"), "must match the name in coveredResources"));
        }
        Append(&errs, ValidateNonNegative(Field(r, "nominalQuota"), qp.Child("nominalQuota")));
        if (HasField(r, "borrowingLimit")) {
          const FieldPath bp = qp.Child("borrowingLimit");
          auto limit = QuantityValue(Field(r, "borrowingLimit"));
          if (!owner.has_parent && limit) errs.push_back(Invalid(bp, limit->String(), limit_msg));
          Append(&errs, ValidateNonNegative(Field(r, "borrowingLimit"), bp));
        }
        if (HasField(r, "lendingLimit")) {
          const FieldPath lp = qp.Child("lendingLimit");
          auto lending = QuantityValue(Field(r, "lendingLimit"));
          Append(&errs, ValidateNonNegative(Field(r, "lendingLimit"), lp));
          if (!owner.has_parent && lending) errs.push_back(Invalid(lp, lending->String(), limit_msg));
          auto nominal = QuantityValue(Field(r, "nominalQuota"));
          if (owner.enforce_lending_within_nominal && lending && nominal && *lending > *nominal) {
            errs.push_back(Invalid(lp, lending->String(), "must be less than or equal to the nominalQuota"));
          }
        }
      }
      std::string flavor = StringAt(flavors[j], "name");
      if (!seen_flavors.insert(flavor).second) errs.push_back(Duplicate(fp.Child("name"), flavor));
    }
  }
  return errs;
}

// common.go validateFairSharing: weight ≥ 0. (Upstream also rejects 0 < weight ≤ 1n;
// berth's quantities are milli-units, so such a weight cannot be told apart from 1m.)
FieldErrorList ValidateFairSharing(const Object& fair_sharing, const FieldPath& path) {
  auto weight = QuantityValue(Field(fair_sharing, "weight"));
  if (weight && weight->milli() < 0) {
    return {Invalid(path, weight->String(), std::string(kIsNegativeErrorMsg))};
  }
  return {};
}

// Flavor names of every resource group, in ClusterQueue order.
std::vector<std::string> AllFlavors(const Object& spec) {
  std::vector<std::string> out;
  for (const Object& g : ArrayAt(spec, "resourceGroups")) {
    for (const Object& f : ArrayAt(g, "flavors")) {
      std::string name = StringAt(f, "name");
      if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    }
  }
  return out;
}

std::set<std::string> StringSet(const Object& list) {
  std::set<std::string> out;
  for (const Object& v : list) {
    if (v.is_string()) out.insert(v.get<std::string>());
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// ClusterQueue

class ClusterQueueStrategy : public Strategy {
 public:
  void PrepareForCreate(Object* obj) const override { AddFinalizer(obj, kResourceInUseFinalizer); }

  FieldErrorList ValidateCreate(const Object& obj) const override { return Validate(obj, nullptr); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    return Validate(obj, &old);
  }

 private:
  static FieldErrorList CelErrors(const Object& spec) {
    const FieldPath sp("spec");
    FieldErrorList errs;
    const Object& groups = ArrayAt(spec, "resourceGroups");
    if (!HasField(spec, "cohortName") && HasField(spec, "resourceGroups")) {
      bool borrowing = false;
      for (const Object& g : groups) {
        for (const Object& f : ArrayAt(g, "flavors")) {
          for (const Object& r : ArrayAt(f, "resources")) borrowing = borrowing || HasField(r, "borrowingLimit");
        }
      }
      if (borrowing) errs.push_back(CelError(sp, "object", "borrowingLimit must be nil when cohort is empty"));
    }
    Append(&errs, ResourceGroupCelErrors(groups, sp.Child("resourceGroups")));
    const Object& fungibility = ObjectAt(spec, "flavorFungibility");
    if (HasField(fungibility, "preference") && (StringAt(fungibility, "whenCanBorrow") != "TryNextFlavor" ||
                                           StringAt(fungibility, "whenCanPreempt") != "TryNextFlavor")) {
      errs.push_back(CelError(sp.Child("flavorFungibility"), "object",
                              "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"));
    }
    const Object& preemption = ObjectAt(spec, "preemption");
    if (StringAt(preemption, "reclaimWithinCohort") == "Never" && HasField(preemption, "borrowWithinCohort") &&
        StringAt(ObjectAt(preemption, "borrowWithinCohort"), "policy") != "Never") {
      errs.push_back(CelError(sp.Child("preemption"), "object",
                              "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"));
    }
    return errs;
  }

  static FieldErrorList ValidateAdmissionCheckFlavors(const Object& spec, const Object* old_spec) {
    FieldErrorList errs;
    const Object& checks = ArrayAt(ObjectAt(spec, "admissionChecksStrategy"), "admissionChecks");
    if (checks.empty()) return errs;
    const std::vector<std::string> flavors = AllFlavors(spec);
    const std::set<std::string> flavor_set(flavors.begin(), flavors.end());
    // Unchanged checks of a ClusterQueue whose flavors did not change are not re-checked,
    // so legacy objects with invalid onFlavors stay updatable.
    std::map<std::string, std::set<std::string>> old_on_flavors;
    if (old_spec != nullptr) {
      std::vector<std::string> old_flavors = AllFlavors(*old_spec);
      if (std::set<std::string>(old_flavors.begin(), old_flavors.end()) == flavor_set) {
        for (const Object& c : ArrayAt(ObjectAt(*old_spec, "admissionChecksStrategy"), "admissionChecks")) {
          old_on_flavors[StringAt(c, "name")] = StringSet(ArrayAt(c, "onFlavors"));
        }
      }
    }
    const FieldPath path = FieldPath("spec").Child("admissionChecksStrategy").Child("admissionChecks");
    for (size_t i = 0; i < checks.size(); ++i) {
      const Object& on_flavors = ArrayAt(checks[i], "onFlavors");
      auto old = old_on_flavors.find(StringAt(checks[i], "name"));
      if (old != old_on_flavors.end() && old->second == StringSet(on_flavors)) continue;
      for (size_t j = 0; j < on_flavors.size(); ++j) {
        if (on_flavors[j].is_string() && flavor_set.count(on_flavors[j].get<std::string>()) == 0) {
          errs.push_back(NotSupported(path.Index(i).Child("onFlavors").Index(j), on_flavors[j], flavors));
        }
      }
    }
    return errs;
  }

  static FieldErrorList ValidateTotals(const Object& groups, const FieldPath& path) {
    FieldErrorList errs;
    size_t flavors = 0, covered = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
      flavors += ArrayAt(groups[i], "flavors").size();
      covered += ArrayAt(groups[i], "coveredResources").size();
      size_t combinations = 0;
      for (const Object& f : ArrayAt(groups[i], "flavors")) combinations += ArrayAt(f, "resources").size();
      if (combinations > 512) {
        errs.push_back(Invalid(path.Index(i), combinations,
                               "number of flavor-resource combinations in a resourceGroup must be ≤ 512, got " +
                                   std::to_string(combinations)));
      }
    }
    if (flavors > 256) {
      errs.push_back(Invalid(path, flavors,
                             "total number of flavors across all resourceGroups must be ≤ 256, got " +
                                 std::to_string(flavors)));
    }
    if (covered > 256) {
      errs.push_back(Invalid(path, covered,
                             "total number of covered resources across all resourceGroups must be ≤ 256, got " +
                                 std::to_string(covered)));
    }
    return errs;
  }

  static FieldErrorList Validate(const Object& obj, const Object* old) {
    const Object& spec = ObjectAt(obj, "spec");
    FieldErrorList errs = CelErrors(spec);
    if (!errs.empty()) return errs;
    const FieldPath sp("spec");
    const Object& groups = ArrayAt(spec, "resourceGroups");
    QuotaOwner owner{HasField(spec, "cohortName") && !StringAt(spec, "cohortName").empty(), true, "cohort"};
    Append(&errs, ValidateResourceGroups(groups, owner, sp.Child("resourceGroups")));
    Append(&errs, ValidateLabelSelector(Field(spec, "namespaceSelector"), sp.Child("namespaceSelector")));
    Append(&errs, ValidateFairSharing(ObjectAt(spec, "fairSharing"), sp.Child("fairSharing")));
    Append(&errs, ValidateTotals(groups, sp.Child("resourceGroups")));
    const Object* old_spec = old != nullptr ? &ObjectAt(*old, "spec") : nullptr;
    Append(&errs, ValidateAdmissionCheckFlavors(spec, old_spec));
    if (old_spec != nullptr) {
      Append(&errs, ValidateImmutable(Field(spec, "concurrentAdmissionPolicy"),
                                      Field(*old_spec, "concurrentAdmissionPolicy"),
                                      sp.Child("concurrentAdmissionPolicy")));
    }
    return errs;
  }
};

// ---------------------------------------------------------------------------------------
// Cohort

class CohortStrategy : public Strategy {
 public:
  FieldErrorList ValidateCreate(const Object& obj) const override { return Validate(obj); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object&) const override { return Validate(obj); }

 private:
  static FieldErrorList Validate(const Object& obj) {
    const Object& spec = ObjectAt(obj, "spec");
    const FieldPath sp("spec");
    const Object& groups = ArrayAt(spec, "resourceGroups");
    FieldErrorList errs = ResourceGroupCelErrors(groups, sp.Child("resourceGroups"));
    if (!errs.empty()) return errs;
    Append(&errs, ValidateFairSharing(ObjectAt(spec, "fairSharing"), sp.Child("fairSharing")));
    QuotaOwner owner{!StringAt(spec, "parentName").empty(), false, "parent"};
    Append(&errs, ValidateResourceGroups(groups, owner, sp.Child("resourceGroups")));
    return errs;
  }
};

// ---------------------------------------------------------------------------------------
// LocalQueue

class LocalQueueStrategy : public Strategy {
 public:
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    // CEL `self == oldSelf` on spec.clusterQueue: a transition rule, checked when the field
    // is present in both objects.
    const Object& spec = ObjectAt(obj, "spec");
    const Object& old_spec = ObjectAt(old, "spec");
    if (HasField(spec, "clusterQueue") && HasField(old_spec, "clusterQueue") &&
        Field(spec, "clusterQueue") != Field(old_spec, "clusterQueue")) {
      return {CelError(FieldPath("spec").Child("clusterQueue"), "string", std::string(kFieldImmutableErrorMsg))};
    }
    return {};
  }
};

// ---------------------------------------------------------------------------------------
// ResourceFlavor

class ResourceFlavorStrategy : public Strategy {
 public:
  void PrepareForCreate(Object* obj) const override { AddFinalizer(obj, kResourceInUseFinalizer); }

  FieldErrorList ValidateCreate(const Object& obj) const override { return Validate(obj, nullptr); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    return Validate(obj, &old);
  }

 private:
  static FieldErrorList CelErrors(const Object& spec, const Object* old_spec) {
    const FieldPath sp("spec");
    FieldErrorList errs;
    const Object& tolerations = ArrayAt(spec, "tolerations");
    auto rule_fails = [&](auto pred) {
      return std::any_of(tolerations.begin(), tolerations.end(), [&](const Object& t) { return pred(t); });
    };
    const FieldPath tp = sp.Child("tolerations");
    if (rule_fails([](const Object& t) { return !HasField(t, "key") && StringAt(t, "operator") != "Exists"; })) {
      errs.push_back(CelError(tp, "array",
                              "operator must be Exists when 'key' is empty, which means 'match all values and all keys'"));
    }
    if (rule_fails([](const Object& t) {
          return HasField(t, "tolerationSeconds") && StringAt(t, "effect") != "NoExecute";
        })) {
      errs.push_back(CelError(tp, "array", "effect must be 'NoExecute' when 'tolerationSeconds' is set"));
    }
    if (rule_fails([](const Object& t) { return StringAt(t, "operator") == "Exists" && HasField(t, "value"); })) {
      errs.push_back(CelError(tp, "array", "a value must be empty when 'operator' is 'Exists'"));
    }
    if (HasField(spec, "topologyName") && ObjectAt(spec, "nodeLabels").empty()) {
      errs.push_back(CelError(sp, "object", "at least one nodeLabel is required when topology is set"));
    }
    if (old_spec != nullptr && HasField(*old_spec, "topologyName") &&
        Field(spec, "topologyName") != Field(*old_spec, "topologyName")) {
      errs.push_back(CelError(sp, "object", "topologyName is immutable when topologyName is set"));
    }
    return errs;
  }

  static FieldErrorList ValidateTaints(const Object& taints, const FieldPath& path) {
    FieldErrorList errs;
    std::set<std::pair<std::string, std::string>> seen;  // (effect, key)
    for (size_t i = 0; i < taints.size(); ++i) {
      const FieldPath ip = path.Index(i);
      std::string key = StringAt(taints[i], "key");
      Append(&errs, ValidateQualifiedName(key, ip.Child("key")));
      std::string value = StringAt(taints[i], "value");
      std::vector<std::string> value_errs = IsValidLabelValue(value);
      if (!value_errs.empty()) {
        std::string joined;
        for (const std::string& m : value_errs) joined += (joined.empty() ? "" : ";") + m;
        errs.push_back(Invalid(ip.Child("value"), value, std::move(joined)));
      }
      if (!seen.emplace(StringAt(taints[i], "effect"), key).second) {
        FieldError dup = Duplicate(ip, taints[i]);
        dup.detail = "taints must be unique by key and effect pair";
        errs.push_back(std::move(dup));
      }
    }
    return errs;
  }

  static FieldErrorList Validate(const Object& obj, const Object* old) {
    const Object& spec = ObjectAt(obj, "spec");
    FieldErrorList errs = CelErrors(spec, old != nullptr ? &ObjectAt(*old, "spec") : nullptr);
    if (!errs.empty()) return errs;
    const FieldPath sp("spec");
    Append(&errs, ValidateLabels(ObjectAt(spec, "nodeLabels"), sp.Child("nodeLabels")));
    Append(&errs, ValidateTaints(ArrayAt(spec, "nodeTaints"), sp.Child("nodeTaints")));
    const Object& tolerations = ArrayAt(spec, "tolerations");
    for (size_t i = 0; i < tolerations.size(); ++i) {
      std::string key = StringAt(tolerations[i], "key");
      if (!key.empty()) Append(&errs, ValidateQualifiedName(key, sp.Child("tolerations").Index(i).Child("key")));
    }
    return errs;
  }
};

// ---------------------------------------------------------------------------------------
// Workload

constexpr std::string_view kQuotaReserved = "QuotaReserved";
constexpr std::string_view kAdmitted = "Admitted";

class WorkloadStrategy : public Strategy {
 public:
  FieldErrorList ValidateCreate(const Object& obj) const override { return Validate(obj, nullptr); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    return Validate(obj, &old);
  }
  FieldErrorList ValidateStatusUpdate(const Object& obj, const Object& old) const override {
    return Validate(obj, &old);
  }

 private:
  static FieldErrorList CelErrors(const Object& obj, const Object* old) {
    FieldErrorList errs;
    const FieldPath sp("spec");
    const Object& spec = ObjectAt(obj, "spec");
    const Object& pod_sets = ArrayAt(spec, "podSets");
    for (size_t i = 0; i < pod_sets.size(); ++i) {
      const Object& min_count = Field(pod_sets[i], "minCount");
      const Object& count = Field(pod_sets[i], "count");
      if (min_count.is_number_integer() && count.is_number_integer() &&
          min_count.get<int64_t>() > count.get<int64_t>()) {
        errs.push_back(CelError(sp.Child("podSets").Index(i), "object",
                                "minCount should be positive and less or equal to count"));
      }
    }
    const Object& ref = ObjectAt(spec, "priorityClassRef");
    if (StringAt(ref, "group") == "scheduling.k8s.io" && StringAt(ref, "kind") != "PriorityClass") {
      errs.push_back(CelError(sp.Child("priorityClassRef"), "object",
                              "only the PriorityClass kind is allowed for the scheduling.k8s.io group"));
    }
    if (StringAt(ref, "group") == "kueue.x-k8s.io" && StringAt(ref, "kind") != "WorkloadPriorityClass") {
      errs.push_back(CelError(sp.Child("priorityClassRef"), "object",
                              "only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group"));
    }
    if (HasField(spec, "priorityClassRef") && !HasField(spec, "priority")) {
      errs.push_back(CelError(sp, "object", "priority should not be nil when priorityClassRef is set"));
    }
    const Object& status = ObjectAt(obj, "status");
    const FieldPath st("status");
    if (HasField(status, "clusterName") && !ArrayAt(status, "nominatedClusterNames").empty()) {
      errs.push_back(CelError(st, "object", "clusterName and nominatedClusterNames are mutually exclusive"));
    }
    const bool reserved = IsConditionTrue(obj, kQuotaReserved);
    if (reserved && HasField(status, "admission") &&
        pod_sets.size() != ArrayAt(ObjectAt(status, "admission"), "podSetAssignments").size()) {
      errs.push_back(CelError(FieldPath(), "object", "podSetAssignments must have the same number of podSets as the spec"));
    }
    if (old == nullptr) return errs;

    const Object& old_spec = ObjectAt(*old, "spec");
    const Object& old_status = ObjectAt(*old, "status");
    if (HasField(old_status, "clusterName") && HasField(status, "clusterName") &&
        Field(old_status, "clusterName") != Field(status, "clusterName")) {
      errs.push_back(CelError(st, "object", "clusterName is immutable once set"));
    }
    const bool old_reserved = IsConditionTrue(*old, kQuotaReserved);
    if (old_reserved) {
      const Object& old_ref = ObjectAt(old_spec, "priorityClassRef");
      const bool both = HasField(spec, "priorityClassRef") && HasField(old_spec, "priorityClassRef");
      if (HasField(spec, "priorityClassRef") != HasField(old_spec, "priorityClassRef")) {
        errs.push_back(CelError(FieldPath(), "object", "priorityClassRef is immutable while workload quota reserved"));
      }
      if (both && Field(ref, "group") != Field(old_ref, "group")) {
        errs.push_back(CelError(FieldPath(), "object", "priorityClassRef.group is immutable while workload quota reserved"));
      }
      if (both && Field(ref, "kind") != Field(old_ref, "kind")) {
        errs.push_back(CelError(FieldPath(), "object", "priorityClassRef.kind is immutable while workload quota reserved"));
      }
      if (both && StringAt(ref, "group") == "scheduling.k8s.io" && StringAt(ref, "kind") == "PriorityClass" &&
          Field(ref, "name") != Field(old_ref, "name")) {
        errs.push_back(CelError(FieldPath(), "object",
                                "priorityClassRef.name is immutable for scheduling.k8s.io/priorityclass while workload quota reserved"));
      }
      if (reserved && Field(spec, "queueName") != Field(old_spec, "queueName")) {
        errs.push_back(CelError(FieldPath(), "object", "queueName is immutable while workload quota reserved"));
      }
    }
    // CEL reads an unset maximumExecutionTimeSeconds as 0.
    auto max_exec = [](const Object& s) {
      const Object& v = Field(s, "maximumExecutionTimeSeconds");
      return v.is_number_integer() ? v.get<int64_t>() : 0;
    };
    if (IsConditionTrue(*old, kAdmitted) && IsConditionTrue(obj, kAdmitted) &&
        max_exec(spec) != max_exec(old_spec)) {
      errs.push_back(CelError(FieldPath(), "object",
                              "maximumExecutionTimeSeconds is immutable while workload quota reserved"));
    }
    return errs;
  }

  // validateResourceList: the `pods` key is reserved; quantities non-negative.
  static FieldErrorList ValidateResourceList(const Object& resources, const FieldPath& path) {
    FieldErrorList errs;
    if (!resources.is_object()) return errs;
    for (const auto& [name, value] : resources.items()) {
      if (name == "pods") errs.push_back(Invalid(path.Key(name), "pods", "the key is reserved for internal kueue use"));
      Append(&errs, ValidateNonNegative(value, path.Key(name)));
    }
    return errs;
  }

  static FieldErrorList ValidatePodSet(const Object& pod_set, const FieldPath& path) {
    FieldErrorList errs;
    const Object& tmpl = ObjectAt(pod_set, "template");
    const Object& meta = ObjectAt(tmpl, "metadata");
    const FieldPath tp = path.Child("template");
    Append(&errs, ValidateLabels(ObjectAt(meta, "labels"), tp.Child("metadata").Child("labels")));
    Append(&errs, ValidateAnnotations(ObjectAt(meta, "annotations"), tp.Child("metadata").Child("annotations")));
    const Object& pod_spec = ObjectAt(tmpl, "spec");
    for (std::string_view list : {"initContainers", "containers"}) {
      const Object& containers = ArrayAt(pod_spec, list);
      for (size_t i = 0; i < containers.size(); ++i) {
        const FieldPath rp = tp.Child("spec").Child(list).Index(i).Child("resources");
        const Object& res = ObjectAt(containers[i], "resources");
        Append(&errs, ValidateResourceList(Field(res, "requests"), rp.Child("requests")));
        Append(&errs, ValidateResourceList(Field(res, "limits"), rp.Child("limits")));
      }
    }
    if (HasField(pod_spec, "resources")) {
      const FieldPath rp = tp.Child("spec").Child("resources");
      const Object& res = ObjectAt(pod_spec, "resources");
      Append(&errs, ValidateResourceList(Field(res, "requests"), rp.Child("requests")));
      Append(&errs, ValidateResourceList(Field(res, "limits"), rp.Child("limits")));
    }
    return errs;
  }

  static std::vector<std::string> PodSetNames(const Object& spec) {
    std::vector<std::string> names;
    for (const Object& ps : ArrayAt(spec, "podSets")) names.push_back(StringAt(ps, "name"));
    return names;
  }

  // validateAdmission (only while QuotaReserved=True).
  static FieldErrorList ValidateAdmission(const Object& obj, const Object* old) {
    const FieldPath path = FieldPath("status").Child("admission");
    const Object& admission = Field(ObjectAt(obj, "status"), "admission");
    if (!admission.is_object()) {
      const bool old_stuck = old != nullptr && IsConditionTrue(*old, kQuotaReserved) &&
                             !Field(ObjectAt(*old, "status"), "admission").is_object();
      if (old_stuck) return {};
      return {Required(path, "must be set while the QuotaReserved condition is true")};
    }
    FieldErrorList errs;
    const std::vector<std::string> names = PodSetNames(ObjectAt(obj, "spec"));
    const Object& assignments = ArrayAt(admission, "podSetAssignments");
    for (size_t i = 0; i < assignments.size(); ++i) {
      const FieldPath ap = path.Child("podSetAssignments").Index(i);
      const Object& a = assignments[i];
      if (std::find(names.begin(), names.end(), StringAt(a, "name")) == names.end()) {
        errs.push_back(NotFound(ap.Child("name"), Field(a, "name")));
      }
      const Object& count_v = Field(a, "count");
      const int64_t count = count_v.is_number_integer() ? count_v.get<int64_t>() : 0;
      if (count <= 0) continue;
      const Object& usage = ObjectAt(a, "resourceUsage");
      for (const auto& [name, value] : usage.items()) {
        auto q = QuantityValue(value);
        if (!q) continue;
        // resources.ResourceValue: CPU in milli-units, everything else in whole units.
        const int64_t v = name == "cpu" ? q->milli() : q->Value();
        if (v % count != 0) {
          errs.push_back(Invalid(ap.Child("resourceUsage").Key(name), q->String(),
                                 "is not a multiple of " + std::to_string(count)));
        }
      }
    }
    return errs;
  }

  static FieldErrorList ValidateReclaimablePods(const Object& obj) {
    FieldErrorList errs;
    const Object& spec = ObjectAt(obj, "spec");
    const std::vector<std::string> names = PodSetNames(spec);
    const FieldPath path = FieldPath("status").Child("reclaimablePods");
    for (const Object& rp : ArrayAt(ObjectAt(obj, "status"), "reclaimablePods")) {
      std::string name = StringAt(rp, "name");
      const FieldPath np = path.Key(name);
      auto it = std::find(names.begin(), names.end(), name);
      if (it == names.end()) {
        errs.push_back(NotSupported(np.Child("name"), Field(rp, "name"), names));
        continue;
      }
      const Object& ps = ArrayAt(spec, "podSets")[it - names.begin()];
      const int64_t ps_count = Field(ps, "count").is_number_integer() ? Field(ps, "count").get<int64_t>() : 1;
      const Object& count = Field(rp, "count");
      if (count.is_number_integer() && count.get<int64_t>() > ps_count) {
        errs.push_back(Invalid(np.Child("count"), count, "should be less or equal to " + std::to_string(ps_count)));
      }
    }
    return errs;
  }

  static FieldErrorList ValidatePodSetUpdates(const Object& obj) {
    FieldErrorList errs;
    const std::vector<std::string> names = PodSetNames(ObjectAt(obj, "spec"));
    const Object& checks = ArrayAt(ObjectAt(obj, "status"), "admissionChecks");
    for (size_t i = 0; i < checks.size(); ++i) {
      const Object& updates = ArrayAt(checks[i], "podSetUpdates");
      for (size_t j = 0; j < updates.size(); ++j) {
        const Object& u = updates[j];
        const FieldPath up =
            FieldPath("status").Child("admissionChecks").Index(i).Child("podSetUpdates").Index(j);
        if (std::find(names.begin(), names.end(), StringAt(u, "name")) == names.end()) {
          std::vector<std::string> sorted = names;
          std::sort(sorted.begin(), sorted.end());
          errs.push_back(NotSupported(up.Child("name"), Field(u, "name"), sorted));
        }
        const Object& tolerations = ArrayAt(u, "tolerations");
        for (size_t k = 0; k < tolerations.size(); ++k) {
          std::string key = StringAt(tolerations[k], "key");
          if (!key.empty()) {
            Append(&errs, ValidateQualifiedName(key, up.Child("tolerations").Index(k).Child("key")));
          }
        }
        Append(&errs, ValidateAnnotations(ObjectAt(u, "annotations"), up.Child("annotations")));
        Append(&errs, ValidateLabels(ObjectAt(u, "nodeSelector"), up.Child("nodeSelector")));
        Append(&errs, ValidateLabels(ObjectAt(u, "labels"), up.Child("labels")));
      }
    }
    return errs;
  }

  static FieldErrorList ValidateWebhook(const Object& obj, const Object* old) {
    FieldErrorList errs;
    const FieldPath sp("spec");
    const Object& pod_sets = ArrayAt(ObjectAt(obj, "spec"), "podSets");
    int64_t with_min_count = 0;
    for (size_t i = 0; i < pod_sets.size(); ++i) {
      Append(&errs, ValidatePodSet(pod_sets[i], sp.Child("podSets").Index(i)));
      if (HasField(pod_sets[i], "minCount")) ++with_min_count;
    }
    if (with_min_count > 1) {
      errs.push_back(Invalid(sp.Child("podSets"), with_min_count, "at most one podSet can use minCount"));
    }
    if (IsConditionTrue(obj, kQuotaReserved)) Append(&errs, ValidateAdmission(obj, old));
    Append(&errs, ValidateReclaimablePods(obj));
    Append(&errs, ValidatePodSetUpdates(obj));
    if (old != nullptr) Append(&errs, ValidateWebhookUpdate(obj, *old));
    return errs;
  }

  static FieldErrorList ValidateWebhookUpdate(const Object& obj, const Object& old) {
    FieldErrorList errs;
    const FieldPath st("status");
    const Object& status = ObjectAt(obj, "status");
    const Object& old_status = ObjectAt(old, "status");
    const bool reserved = IsConditionTrue(obj, kQuotaReserved);
    const bool old_reserved = IsConditionTrue(old, kQuotaReserved);
    if (old_reserved) {
      // podSets are immutable while quota is reserved (count included).
      const Object& pod_sets = ArrayAt(ObjectAt(obj, "spec"), "podSets");
      const Object& old_pod_sets = ArrayAt(ObjectAt(old, "spec"), "podSets");
      const FieldPath pp = FieldPath("spec").Child("podSets");
      if (pod_sets.size() != old_pod_sets.size()) {
        errs.push_back(Invalid(pp, pod_sets, std::string(kFieldImmutableErrorMsg)));
      } else {
        for (size_t i = 0; i < pod_sets.size(); ++i) {
          Append(&errs, ValidateImmutable(pod_sets[i], old_pod_sets[i], pp.Index(i)));
        }
      }
    }
    if (reserved && old_reserved) {
      // Reclaimable pod counts only grow while reserved.
      const FieldPath rp = st.Child("reclaimablePods");
      const Object& now = ArrayAt(status, "reclaimablePods");
      for (const Object& before : ArrayAt(old_status, "reclaimablePods")) {
        std::string name = StringAt(before, "name");
        auto it = std::find_if(now.begin(), now.end(), [&](const Object& r) { return StringAt(r, "name") == name; });
        if (it == now.end()) {
          errs.push_back(Required(rp.Key(name), "cannot be removed"));
        } else if (Field(*it, "count").is_number_integer() && Field(before, "count").is_number_integer() &&
                   Field(*it, "count").get<int64_t>() < Field(before, "count").get<int64_t>()) {
          errs.push_back(Invalid(rp.Key(name).Child("count"), Field(*it, "count"),
                                 "cannot be less than " + std::to_string(Field(before, "count").get<int64_t>())));
        }
      }
    }
    // status.admission may be set or cleared but not changed; topology assignments of the
    // same podSets may be filled in (TopologyAwareScheduling).
    const Object& admission = Field(status, "admission");
    const Object& old_admission = Field(old_status, "admission");
    if (admission.is_object() && old_admission.is_object()) {
      Object a = admission;
      Object b = old_admission;
      if (ArrayAt(a, "podSetAssignments").size() == ArrayAt(b, "podSetAssignments").size()) {
        for (Object* x : {&a, &b}) {
          if (!Field(*x, "podSetAssignments").is_array()) continue;
          for (Object& psa : (*x)["podSetAssignments"]) {
            if (!psa.is_object()) continue;
            psa.erase("topologyAssignment");
            psa.erase("delayedTopologyRequest");
          }
        }
      }
      if (a != b) errs.push_back(Invalid(st.Child("admission"), admission, std::string(kFieldImmutableErrorMsg)));
    }
    // podSetUpdates of a check that stays Ready are immutable.
    const Object& checks = ArrayAt(status, "admissionChecks");
    const Object& old_checks = ArrayAt(old_status, "admissionChecks");
    for (size_t i = 0; i < old_checks.size(); ++i) {
      auto it = std::find_if(checks.begin(), checks.end(), [&](const Object& c) {
        return Field(c, "name") == Field(old_checks[i], "name");
      });
      if (it == checks.end()) continue;
      if (StringAt(old_checks[i], "state") == "Ready" && StringAt(*it, "state") == "Ready") {
        Append(&errs, ValidateImmutable(Field(*it, "podSetUpdates"), Field(old_checks[i], "podSetUpdates"),
                                        st.Child("admissionChecks").Index(i).Child("podSetUpdates")));
      }
    }
    // A clusterName may only be set to one of the nominated clusters.
    if (!HasField(old_status, "clusterName") && HasField(status, "clusterName")) {
      const Object& nominated = ArrayAt(old_status, "nominatedClusterNames");
      if (std::find(nominated.begin(), nominated.end(), Field(status, "clusterName")) == nominated.end()) {
        errs.push_back(Invalid(st.Child("clusterName"), Field(status, "clusterName"),
                               "when setting clusterName it must be one of the nominatedClusterNames"));
      }
    }
    return errs;
  }

  static FieldErrorList Validate(const Object& obj, const Object* old) {
    FieldErrorList errs = CelErrors(obj, old);
    if (!errs.empty()) return errs;
    return ValidateWebhook(obj, old);
  }
};

}  // namespace

void RegisterKueueStrategies(StrategyRegistry* registry) {
  const std::string group(kKueueGroupName);
  registry->Register(group, "ClusterQueue", std::make_unique<ClusterQueueStrategy>());
  registry->Register(group, "Cohort", std::make_unique<CohortStrategy>());
  registry->Register(group, "LocalQueue", std::make_unique<LocalQueueStrategy>());
  registry->Register(group, "ResourceFlavor", std::make_unique<ResourceFlavorStrategy>());
  registry->Register(group, "Workload", std::make_unique<WorkloadStrategy>());
}

}  // namespace berth::api
