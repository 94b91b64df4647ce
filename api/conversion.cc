#include "api/conversion.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <utility>

#include "api/registry.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

constexpr std::string_view kKueueGroup = "kueue.x-k8s.io";
constexpr std::string_view kV1beta1 = "v1beta1";
constexpr std::string_view kV1beta2 = "v1beta2";

// v1beta1 Workload priorityClassSource values and the v1beta2 ref they stand for.
struct PriorityClassSource {
  std::string_view source;
  std::string_view group;
  std::string_view kind;
};
constexpr std::array<PriorityClassSource, 2> kPriorityClassSources = {{
    {"kueue.x-k8s.io/workloadpriorityclass", "kueue.x-k8s.io", "WorkloadPriorityClass"},
    {"scheduling.k8s.io/priorityclass", "scheduling.k8s.io", "PriorityClass"},
}};

// The object at obj[path...] when every step exists and is an object; else nullptr.
Object* FindObject(Object* obj, std::initializer_list<std::string_view> path) {
  Object* cur = obj;
  for (std::string_view key : path) {
    if (cur == nullptr || !cur->is_object()) return nullptr;
    auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur != nullptr && cur->is_object() ? cur : nullptr;
}

// Moves parent[from] to parent[to] (replacing it) when present.
void Rename(Object* parent, std::string_view from, std::string_view to) {
  if (parent == nullptr) return;
  auto it = parent->find(from);
  if (it == parent->end()) return;
  Object value = std::move(*it);
  parent->erase(it);
  (*parent)[std::string(to)] = std::move(value);
}

void Erase(Object* parent, std::string_view key) {
  if (parent != nullptr) parent->erase(std::string(key));
}

// Calls fn on every object element of obj[path...] when that is an array.
template <typename Fn>
void ForEachItem(Object* obj, std::initializer_list<std::string_view> path, Fn fn) {
  Object* cur = obj;
  for (std::string_view key : path) {
    if (cur == nullptr || !cur->is_object()) return;
    auto it = cur->find(key);
    if (it == cur->end()) return;
    cur = &*it;
  }
  if (cur == nullptr || !cur->is_array()) return;
  for (Object& item : *cur) {
    if (item.is_object()) fn(&item);
  }
}

// ---------------------------------------------------------------------------------------
// ClusterQueue

void ClusterQueueToV1beta2(Object* obj) {
  Object* spec = FindObject(obj, {"spec"});
  if (spec != nullptr) {
    // Go's CohortName has omitempty: an empty v1beta1 cohort is no cohort.
    auto cohort = spec->find("cohort");
    if (cohort != spec->end() && cohort->is_string() && cohort->get_ref<const std::string&>().empty()) {
      spec->erase(cohort);
    }
    Rename(spec, "cohort", "cohortName");
    auto checks = spec->find("admissionChecks");
    if (checks != spec->end()) {
      if (checks->is_array() && !checks->empty()) {
        Object rules = Object::array();
        for (const Object& name : *checks) rules.push_back(Object{{"name", name}});
        (*spec)["admissionChecksStrategy"] = Object{{"admissionChecks", std::move(rules)}};
      }
      spec->erase("admissionChecks");
    }
    if (Object* fungibility = FindObject(spec, {"flavorFungibility"})) {
      if (fungibility->value("whenCanBorrow", Object()) == "Borrow") {
        (*fungibility)["whenCanBorrow"] = "MayStopSearch";
      }
      if (fungibility->value("whenCanPreempt", Object()) == "Preempt") {
        (*fungibility)["whenCanPreempt"] = "MayStopSearch";
      }
    }
  }
  Object* status = FindObject(obj, {"status"});
  Erase(status, "pendingWorkloadsStatus");
  Erase(FindObject(status, {"fairSharing"}), "admissionFairSharingStatus");
}

void ClusterQueueToV1beta1(Object* obj) {
  Object* spec = FindObject(obj, {"spec"});
  Rename(spec, "cohortName", "cohort");
  Erase(spec, "concurrentAdmissionPolicy");
}

// ---------------------------------------------------------------------------------------
// Cohort

void CohortToV1beta2(Object* obj) {
  Erase(FindObject(obj, {"status", "fairSharing"}), "admissionFairSharingStatus");
}

// ---------------------------------------------------------------------------------------
// LocalQueue

void LocalQueueToV1beta2(Object* obj) {
  Object* status = FindObject(obj, {"status"});
  Erase(status, "flavors");
  Rename(status, "flavorUsage", "flavorsUsage");
}

void LocalQueueToV1beta1(Object* obj) {
  Rename(FindObject(obj, {"status"}), "flavorsUsage", "flavorUsage");
}

// ---------------------------------------------------------------------------------------
// Workload topology assignments

// Longest common prefix and suffix of `values` that do not overlap in the shortest value.
std::pair<size_t, size_t> CommonAffixes(const std::vector<std::string>& values) {
  size_t min_len = values.front().size();
  for (const std::string& v : values) min_len = std::min(min_len, v.size());
  size_t prefix = min_len;
  size_t suffix = min_len;
  const std::string& first = values.front();
  for (const std::string& v : values) {
    size_t p = 0;
    while (p < prefix && v[p] == first[p]) ++p;
    prefix = p;
    size_t s = 0;
    while (s < suffix && v[v.size() - 1 - s] == first[first.size() - 1 - s]) ++s;
    suffix = s;
  }
  if (prefix + suffix > min_len) prefix = min_len - suffix;
  return {prefix, suffix};
}

// v1beta1 {levels, domains[{values, count}]} -> v1beta2 {levels, slices}.
void TopologyAssignmentToV1beta2(Object* ta) {
  auto domains_it = ta->find("domains");
  if (domains_it == ta->end() || !domains_it->is_array()) return;
  for (const Object& d : *domains_it) {
    // Malformed domains stay where they are, for validation to report.
    if (!d.is_object() || !d.contains("values") || !d["values"].is_array()) return;
  }
  Object domains = std::move(*domains_it);
  ta->erase(domains_it);
  Object slices = Object::array();
  if (!domains.empty()) {
    size_t levels = 0;
    for (const Object& d : domains) levels = std::max(levels, d["values"].size());
    Object slice;
    slice["domainCount"] = domains.size();
    Object values_per_level = Object::array();
    for (size_t level = 0; level < levels; ++level) {
      std::vector<std::string> values;
      for (const Object& d : domains) {
        const Object& v = d["values"];
        values.push_back(level < v.size() && v[level].is_string() ? v[level].get<std::string>() : "");
      }
      bool all_equal = std::all_of(values.begin(), values.end(),
                                   [&](const std::string& v) { return v == values.front(); });
      if (all_equal) {
        values_per_level.push_back(Object{{"universal", values.front()}});
        continue;
      }
      auto [prefix, suffix] = CommonAffixes(values);
      Object individual;
      if (prefix > 0) individual["prefix"] = values.front().substr(0, prefix);
      if (suffix > 0) individual["suffix"] = values.front().substr(values.front().size() - suffix);
      Object roots = Object::array();
      for (const std::string& v : values) roots.push_back(v.substr(prefix, v.size() - prefix - suffix));
      individual["roots"] = std::move(roots);
      values_per_level.push_back(Object{{"individual", std::move(individual)}});
    }
    slice["valuesPerLevel"] = std::move(values_per_level);
    Object counts = Object::array();
    for (const Object& d : domains) counts.push_back(d.is_object() ? d.value("count", Object(0)) : Object(0));
    bool same_counts = std::all_of(counts.begin(), counts.end(),
                                   [&](const Object& c) { return c == counts.front(); });
    slice["podCounts"] = same_counts ? Object{{"universal", counts.front()}}
                                     : Object{{"individual", std::move(counts)}};
    slices.push_back(std::move(slice));
  }
  (*ta)["slices"] = std::move(slices);
}

// The value of domain `i` of a slice at one level; "" when malformed.
std::string SliceValue(const Object& level_values, size_t i) {
  if (!level_values.is_object()) return "";
  auto universal = level_values.find("universal");
  if (universal != level_values.end() && universal->is_string()) return universal->get<std::string>();
  auto individual = level_values.find("individual");
  if (individual == level_values.end() || !individual->is_object()) return "";
  const Object& roots = individual->value("roots", Object::array());
  if (!roots.is_array() || i >= roots.size() || !roots[i].is_string()) return "";
  std::string prefix = StringAt(*individual, "prefix");
  std::string suffix = StringAt(*individual, "suffix");
  return prefix + roots[i].get<std::string>() + suffix;
}

// v1beta2 {levels, slices} -> v1beta1 {levels, domains}.
void TopologyAssignmentToV1beta1(Object* ta) {
  auto slices_it = ta->find("slices");
  if (slices_it == ta->end()) return;
  Object slices = std::move(*slices_it);
  ta->erase(slices_it);
  size_t levels = 0;
  if (auto l = ta->find("levels"); l != ta->end() && l->is_array()) levels = l->size();
  Object domains = Object::array();
  if (slices.is_array()) {
    for (const Object& slice : slices) {
      if (!slice.is_object()) continue;
      const Object count_obj = slice.value("domainCount", Object(0));
      if (!count_obj.is_number_integer() || count_obj.get<int64_t>() < 0) continue;
      const size_t count = count_obj.get<size_t>();
      const Object& per_level = slice.value("valuesPerLevel", Object::array());
      const Object& pod_counts = slice.value("podCounts", Object::object());
      for (size_t i = 0; i < count; ++i) {
        Object values = Object::array();
        for (size_t level = 0; level < levels; ++level) {
          values.push_back(per_level.is_array() && level < per_level.size()
                               ? SliceValue(per_level[level], i)
                               : std::string());
        }
        Object pods = 0;
        if (pod_counts.is_object()) {
          if (pod_counts.contains("universal")) {
            pods = pod_counts["universal"];
          } else if (pod_counts.contains("individual") && pod_counts["individual"].is_array() &&
                     i < pod_counts["individual"].size()) {
            pods = pod_counts["individual"][i];
          }
        }
        domains.push_back(Object{{"count", std::move(pods)}, {"values", std::move(values)}});
      }
    }
  }
  (*ta)["domains"] = std::move(domains);
}

template <typename Fn>
void ForEachTopologyAssignment(Object* obj, Fn fn) {
  ForEachItem(obj, {"status", "admission", "podSetAssignments"}, [&](Object* psa) {
    if (Object* ta = FindObject(psa, {"topologyAssignment"})) fn(ta);
  });
}

// ---------------------------------------------------------------------------------------
// Workload

void WorkloadToV1beta2(Object* obj) {
  if (Object* spec = FindObject(obj, {"spec"})) {
    Object source = spec->value("priorityClassSource", Object());
    Object name = spec->value("priorityClassName", Object(""));
    for (const PriorityClassSource& s : kPriorityClassSources) {
      if (source == s.source) {
        (*spec)["priorityClassRef"] = Object{{"group", s.group}, {"kind", s.kind}, {"name", name}};
      }
    }
    spec->erase("priorityClassSource");
    spec->erase("priorityClassName");
  }
  Rename(FindObject(obj, {"status"}), "accumulatedPastExexcutionTimeSeconds",
         "accumulatedPastExecutionTimeSeconds");
  ForEachTopologyAssignment(obj, TopologyAssignmentToV1beta2);
}

void WorkloadToV1beta1(Object* obj) {
  if (Object* spec = FindObject(obj, {"spec"})) {
    if (Object* ref = FindObject(spec, {"priorityClassRef"})) {
      Object group = ref->value("group", Object());
      Object kind = ref->value("kind", Object());
      Object name = ref->value("name", Object(""));
      for (const PriorityClassSource& s : kPriorityClassSources) {
        if (group == s.group && kind == s.kind) {
          (*spec)["priorityClassSource"] = s.source;
          (*spec)["priorityClassName"] = std::move(name);
          break;
        }
      }
    }
    spec->erase("priorityClassRef");
    spec->erase("preemptionGates");
    ForEachItem(spec, {"podSets"}, [](Object* ps) {
      Erase(FindObject(ps, {"topologyRequest"}), "podsetSliceRequiredTopologyConstraints");
    });
  }
  Object* status = FindObject(obj, {"status"});
  Rename(status, "accumulatedPastExecutionTimeSeconds", "accumulatedPastExexcutionTimeSeconds");
  Erase(status, "preemptionGates");
  ForEachTopologyAssignment(obj, TopologyAssignmentToV1beta1);
}

// ---------------------------------------------------------------------------------------
// AdmissionCheck

void AdmissionCheckToV1beta2(Object* obj) { Erase(FindObject(obj, {"spec"}), "retryDelayMinutes"); }

// ---------------------------------------------------------------------------------------

struct Converter {
  std::string_view group;
  std::string_view kind;
  std::string_view from;
  std::string_view to;
  void (*convert)(Object*);
};

constexpr std::array<Converter, 7> kConverters = {{
    {kKueueGroup, "ClusterQueue", kV1beta1, kV1beta2, ClusterQueueToV1beta2},
    {kKueueGroup, "ClusterQueue", kV1beta2, kV1beta1, ClusterQueueToV1beta1},
    {kKueueGroup, "Cohort", kV1beta1, kV1beta2, CohortToV1beta2},
    {kKueueGroup, "LocalQueue", kV1beta1, kV1beta2, LocalQueueToV1beta2},
    {kKueueGroup, "LocalQueue", kV1beta2, kV1beta1, LocalQueueToV1beta1},
    {kKueueGroup, "Workload", kV1beta1, kV1beta2, WorkloadToV1beta2},
    {kKueueGroup, "Workload", kV1beta2, kV1beta1, WorkloadToV1beta1},
}};
constexpr Converter kAdmissionCheckConverter = {kKueueGroup, "AdmissionCheck", kV1beta1, kV1beta2,
                                                AdmissionCheckToV1beta2};

const Converter* FindConverter(std::string_view group, std::string_view kind, std::string_view from,
                               std::string_view to) {
  auto matches = [&](const Converter& c) {
    return c.group == group && c.kind == kind && c.from == from && c.to == to;
  };
  for (const Converter& c : kConverters) {
    if (matches(c)) return &c;
  }
  return matches(kAdmissionCheckConverter) ? &kAdmissionCheckConverter : nullptr;
}

// ---------------------------------------------------------------------------------------
// Event: core/v1 <-> events.k8s.io/v1, one stored object viewed in two groups.

// (core/v1 name, events.k8s.io/v1 name) of the fields whose names differ.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kEventFieldNames = {{
    {"involvedObject", "regarding"},
    {"message", "note"},
    {"source", "deprecatedSource"},
    {"firstTimestamp", "deprecatedFirstTimestamp"},
    {"lastTimestamp", "deprecatedLastTimestamp"},
    {"count", "deprecatedCount"},
}};
constexpr std::string_view kCoreReportingComponent = "reportingComponent";
constexpr std::string_view kEventsReportingController = "reportingController";

void CoreEventToEventsV1(Object* obj) {
  for (const auto& [core, events] : kEventFieldNames) Rename(obj, core, events);
  Rename(obj, kCoreReportingComponent, kEventsReportingController);
}

void EventsV1ToCoreEvent(Object* obj) {
  for (const auto& [core, events] : kEventFieldNames) Rename(obj, events, core);
  Rename(obj, kEventsReportingController, kCoreReportingComponent);
}

// A kind served in two groups: the conversion between the two apiVersions.
struct CrossGroupConverter {
  std::string_view kind;
  std::string_view from;  // apiVersion
  std::string_view to;
  void (*convert)(Object*);
};

constexpr std::array<CrossGroupConverter, 2> kCrossGroupConverters = {{
    {"Event", "v1", "events.k8s.io/v1", CoreEventToEventsV1},
    {"Event", "events.k8s.io/v1", "v1", EventsV1ToCoreEvent},
}};

}  // namespace

StatusOr<Object> ConvertObject(const Object& obj, std::string_view target_api_version) {
  if (!obj.is_object()) return BadRequestError("object must be a JSON object");
  auto api_version = obj.find("apiVersion");
  auto kind = obj.find("kind");
  if (api_version == obj.end() || !api_version->is_string() ||
      api_version->get_ref<const std::string&>().empty()) {
    return BadRequestError("Object 'apiVersion' is missing in object");
  }
  if (kind == obj.end() || !kind->is_string() || kind->get_ref<const std::string&>().empty()) {
    return BadRequestError("Object 'Kind' is missing in object");
  }
  const std::string& from_api_version = api_version->get_ref<const std::string&>();
  if (from_api_version == target_api_version) return obj;

  std::string from_group, from_version, to_group, to_version;
  SplitApiVersion(from_api_version, &from_group, &from_version);
  SplitApiVersion(target_api_version, &to_group, &to_version);
  const std::string& kind_name = kind->get_ref<const std::string&>();
  if (from_group != to_group) {
    for (const CrossGroupConverter& c : kCrossGroupConverters) {
      if (c.kind == kind_name && c.from == from_api_version && c.to == target_api_version) {
        Object out = obj;
        c.convert(&out);
        out["apiVersion"] = std::string(target_api_version);
        return out;
      }
    }
    return BadRequestError("cannot convert " + kind_name + " from " + from_api_version + " to " +
                           std::string(target_api_version) + ": different API groups");
  }
  Object out = obj;
  if (const Converter* c = FindConverter(from_group, kind_name, from_version, to_version)) {
    c->convert(&out);
  }
  out["apiVersion"] = std::string(target_api_version);
  return out;
}

StatusOr<Object> Convert(const Registry& registry, const Object& obj,
                         std::string_view target_api_version) {
  if (obj.is_object()) {
    auto kind = obj.find("kind");
    if (kind != obj.end() && kind->is_string()) {
      // kNotFound `no matches for kind ...` unless the kind serves the target version.
      auto definition = registry.ForKind(target_api_version, kind->get_ref<const std::string&>());
      if (!definition.ok()) return definition.status();
    }
  }
  return ConvertObject(obj, target_api_version);
}

}  // namespace berth::api
