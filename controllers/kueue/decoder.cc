#include "controllers/kueue/decoder.h"

#include <cstdlib>

#include "api/conditions.h"
#include "api/unstructured.h"
#include "controllers/common/scheduling_decoder.h"
#include "core/quantity.h"
#include "scheduling/node_selector.h"
#include "scheduling/pod_requests.h"
#include "scheduling/taint.h"
#include "scheduling/toleration.h"

namespace berth::controllers::kueue {

using admission::Amount;
using admission::ResourceNames;
using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

const client::GroupVersionResource kResourceFlavors{"kueue.x-k8s.io", "v1beta2", "resourceflavors"};
const client::GroupVersionResource kClusterQueues{"kueue.x-k8s.io", "v1beta2", "clusterqueues"};
const client::GroupVersionResource kCohorts{"kueue.x-k8s.io", "v1beta2", "cohorts"};
const client::GroupVersionResource kLocalQueues{"kueue.x-k8s.io", "v1beta2", "localqueues"};
const client::GroupVersionResource kWorkloadPriorityClasses{"kueue.x-k8s.io", "v1beta2", "workloadpriorityclasses"};
const client::GroupVersionResource kWorkloads{"kueue.x-k8s.io", "v1beta2", "workloads"};
const client::GroupVersionResource kNamespaces{"", "v1", "namespaces"};
const client::GroupVersionResource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses"};

namespace {

std::vector<admission::ResourceGroup> DecodeResourceGroups(const api::Object& groups, ResourceNames& names) {
  std::vector<admission::ResourceGroup> out;
  if (!groups.is_array()) return out;
  for (const api::Object& g : groups) {
    admission::ResourceGroup rg;
    for (const api::Object& r : NestedField(g, {"coveredResources"})) rg.covered_resources.push_back(names.Intern(AsString(r)));
    const api::Object& flavors = NestedField(g, {"flavors"});
    if (flavors.is_array()) {
      for (const api::Object& f : flavors) {
        admission::FlavorQuotas fq;
        fq.flavor = NestedString(f, {"name"});
        const api::Object& resources = NestedField(f, {"resources"});
        if (resources.is_array()) {
          for (const api::Object& r : resources) {
            admission::ResourceQuota q;
            q.nominal = DecodeAmount(NestedField(r, {"nominalQuota"}));
            if (const api::Object& b = NestedField(r, {"borrowingLimit"}); !b.is_null()) q.borrowing_limit = DecodeAmount(b);
            if (const api::Object& l = NestedField(r, {"lendingLimit"}); !l.is_null()) q.lending_limit = DecodeAmount(l);
            fq.resources.push_back(q);
          }
        }
        rg.flavors.push_back(std::move(fq));
      }
    }
    out.push_back(std::move(rg));
  }
  return out;
}

admission::PreemptionPolicy DecodePreemptionPolicy(const std::string& s) {
  if (s == "LowerPriority") return admission::PreemptionPolicy::kLowerPriority;
  if (s == "LowerOrNewerEqualPriority") return admission::PreemptionPolicy::kLowerOrNewerEqualPriority;
  if (s == "Any") return admission::PreemptionPolicy::kAny;
  return admission::PreemptionPolicy::kNever;
}

scheduling::ContainerResources<admission::ResourceList> DecodeContainer(const api::Object& c, ResourceNames& names) {
  scheduling::ContainerResources<admission::ResourceList> out;
  out.requests = DecodeResourceList(NestedField(c, {"resources", "requests"}), names);
  out.limits = DecodeResourceList(NestedField(c, {"resources", "limits"}), names);
  out.restart_always = NestedString(c, {"restartPolicy"}) == "Always";
  return out;
}

// The pod's required node affinity as Kueue's flavor assigner reads it: matchExpressions only
// (pkg/scheduler/flavorassigner flavorSelector copies no matchFields).
std::vector<scheduling::NodeSelectorTerm> DecodeRequiredAffinity(const api::Object& spec) {
  std::vector<scheduling::NodeSelectorTerm> terms = DecodeNodeSelectorTerms(
      NestedField(spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"}));
  for (scheduling::NodeSelectorTerm& t : terms) t.match_fields.clear();
  return terms;
}

}  // namespace

Amount DecodeAmount(const api::Object& value) {
  std::optional<Quantity> q = DecodeQuantity(value);
  return q ? q->milli() : 0;
}

admission::ResourceList DecodeResourceList(const api::Object& list, ResourceNames& names) {
  admission::ResourceList out;
  if (!list.is_object()) return out;
  for (auto it = list.begin(); it != list.end(); ++it) out.Set(names.Intern(it.key()), DecodeAmount(it.value()));
  return out;
}

api::Object EncodeResourceList(const admission::ResourceList& list, const ResourceNames& names) {
  api::Object out = api::Object::object();
  for (const auto& [r, a] : list.items()) out[names.Name(r)] = admission::FormatAmount(names.Name(r), a);
  return out;
}

admission::ResourceFlavor DecodeResourceFlavor(const api::Object& rf) {
  admission::ResourceFlavor out;
  out.name = api::Name(rf);
  out.node_labels = DecodeLabels(NestedField(rf, {"spec", "nodeLabels"}));
  const api::Object& taints = NestedField(rf, {"spec", "nodeTaints"});
  if (taints.is_array()) {
    for (const api::Object& t : taints) {
      scheduling::Taint taint;
      taint.key = NestedString(t, {"key"});
      taint.value = NestedString(t, {"value"});
      taint.effect = DecodeTaintEffect(NestedString(t, {"effect"})).value_or(scheduling::TaintEffect::kNoSchedule);
      out.node_taints.push_back(std::move(taint));
    }
  }
  out.tolerations = DecodeTolerations(NestedField(rf, {"spec", "tolerations"}));
  return out;
}

admission::StopPolicy DecodeStopPolicy(const api::Object& spec) {
  const std::string s = NestedString(spec, {"stopPolicy"});
  if (s == "Hold") return admission::StopPolicy::kHold;
  if (s == "HoldAndDrain") return admission::StopPolicy::kHoldAndDrain;
  return admission::StopPolicy::kNone;
}

double DecodeFairWeight(const api::Object& spec) {
  const api::Object& w = NestedField(spec, {"fairSharing", "weight"});
  if (w.is_null()) return 1.0;
  if (w.is_number()) return w.get<double>();
  // A plain decimal or exponent ("0.5", "1e-6") keeps its full precision, as
  // Kueue's Quantity.AsFloat64Slow; a suffixed one ("500m") goes through the
  // Quantity, whose unit is the milli.
  if (w.is_string()) {
    const std::string text = w.get<std::string>();
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!text.empty() && end == text.c_str() + text.size() && text.find_first_of("xXnNiI") == std::string::npos) {
      return v;
    }
  }
  std::optional<Quantity> q = DecodeQuantity(w);
  return q ? static_cast<double>(q->milli()) / 1000.0 : 1.0;
}

admission::ClusterQueue DecodeClusterQueue(const api::Object& cq, ResourceNames& names) {
  admission::ClusterQueue out;
  out.name = api::Name(cq);
  const api::Object& spec = NestedField(cq, {"spec"});
  out.cohort = NestedString(spec, {"cohortName"});
  out.resource_groups = DecodeResourceGroups(NestedField(spec, {"resourceGroups"}), names);
  out.queueing_strategy = NestedString(spec, {"queueingStrategy"}) == "StrictFIFO"
                              ? admission::QueueingStrategy::kStrictFIFO
                              : admission::QueueingStrategy::kBestEffortFIFO;
  const api::Object& ff = NestedField(spec, {"flavorFungibility"});
  out.flavor_fungibility.when_can_borrow = NestedString(ff, {"whenCanBorrow"}) == "TryNextFlavor"
                                               ? admission::FungibilityPolicy::kTryNextFlavor
                                               : admission::FungibilityPolicy::kMayStopSearch;
  out.flavor_fungibility.when_can_preempt = NestedString(ff, {"whenCanPreempt"}) == "MayStopSearch"
                                                ? admission::FungibilityPolicy::kMayStopSearch
                                                : admission::FungibilityPolicy::kTryNextFlavor;
  const std::string pref = NestedString(ff, {"preference"});
  out.flavor_fungibility.preference = pref == "BorrowingOverPreemption"
                                          ? admission::FungibilityPreference::kBorrowingOverPreemption
                                      : pref == "PreemptionOverBorrowing"
                                          ? admission::FungibilityPreference::kPreemptionOverBorrowing
                                          : admission::FungibilityPreference::kUnset;
  const api::Object& pre = NestedField(spec, {"preemption"});
  out.preemption.reclaim_within_cohort = DecodePreemptionPolicy(NestedString(pre, {"reclaimWithinCohort"}));
  out.preemption.within_cluster_queue = DecodePreemptionPolicy(NestedString(pre, {"withinClusterQueue"}));
  if (NestedString(pre, {"borrowWithinCohort", "policy"}) == "LowerPriority") {
    out.preemption.borrow_within_cohort.policy = admission::BorrowWithinCohort::Policy::kLowerPriority;
  }
  if (const api::Object& t = NestedField(pre, {"borrowWithinCohort", "maxPriorityThreshold"}); t.is_number_integer()) {
    out.preemption.borrow_within_cohort.max_priority_threshold = t.get<int32_t>();
  }
  out.stop_policy = DecodeStopPolicy(spec);
  out.fair_weight = DecodeFairWeight(spec);
  if (api::BeingDeleted(cq)) {
    out.inactive_reason = "Terminating";
    out.inactive_message = "Can't admit new workloads; clusterQueue is terminating";
  }
  return out;
}

admission::Cohort DecodeCohort(const api::Object& cohort, ResourceNames& names) {
  admission::Cohort out;
  out.name = api::Name(cohort);
  out.parent = NestedString(cohort, {"spec", "parentName"});
  out.resource_groups = DecodeResourceGroups(NestedField(cohort, {"spec", "resourceGroups"}), names);
  out.fair_weight = DecodeFairWeight(NestedField(cohort, {"spec"}));
  return out;
}

admission::PodSet DecodePodSet(const std::string& name, int32_t count, const api::Object& pod_template,
                               ResourceNames& names) {
  admission::PodSet ps;
  ps.name = name;
  ps.count = count;
  const api::Object& spec = NestedField(pod_template, {"spec"});
  scheduling::PodResources<admission::ResourceList> pod;
  for (const api::Object& c : NestedField(spec, {"containers"})) pod.containers.push_back(DecodeContainer(c, names));
  for (const api::Object& c : NestedField(spec, {"initContainers"})) pod.init_containers.push_back(DecodeContainer(c, names));
  pod.overhead = DecodeResourceList(NestedField(spec, {"overhead"}), names);
  ps.requests = scheduling::PodRequests(pod);
  // Kueue's resources.ResourceValue: cpu in milli-units, every other resource in whole
  // units rounded up, per pod, before the count multiplies it. Summing the milli-units
  // instead made `memory: 1500m` x 2 pods a usage of "3" bytes, which the Workload's
  // admission check (a multiple of the count) refused at every cycle, and the refused head
  // held its whole ClusterQueue back.
  for (const auto& [id, amount] : std::vector<std::pair<admission::ResourceId, Amount>>(ps.requests.items())) {
    if (names.Name(id) == "cpu" || amount % 1000 == 0) continue;
    ps.requests.Set(id, (amount / 1000 + (amount > 0 ? 1 : 0)) * 1000);
  }
  ps.node_selector = DecodeLabels(NestedField(spec, {"nodeSelector"}));
  ps.required_affinity_terms = DecodeRequiredAffinity(spec);
  ps.tolerations = DecodeTolerations(NestedField(spec, {"tolerations"}));
  return ps;
}

std::optional<admission::Admission> DecodeAdmission(const api::Object& workload, ResourceNames& names) {
  const api::Object& adm = NestedField(workload, {"status", "admission"});
  if (!adm.is_object()) return std::nullopt;
  admission::Admission out;
  out.cluster_queue = NestedString(adm, {"clusterQueue"});
  const api::Object& psas = NestedField(adm, {"podSetAssignments"});
  if (psas.is_array()) {
    for (const api::Object& p : psas) {
      admission::PodSetAssignment psa;
      psa.name = NestedString(p, {"name"});
      const api::Object& flavors = NestedField(p, {"flavors"});
      if (flavors.is_object()) {
        for (auto it = flavors.begin(); it != flavors.end(); ++it) {
          psa.flavors.push_back({names.Intern(it.key()), AsString(it.value())});
        }
        std::sort(psa.flavors.begin(), psa.flavors.end(),
                  [](const auto& a, const auto& b) { return a.resource < b.resource; });
      }
      psa.resource_usage = DecodeResourceList(NestedField(p, {"resourceUsage"}), names);
      const api::Object& count = NestedField(p, {"count"});
      psa.count = count.is_number_integer() ? count.get<int32_t>() : 0;
      out.pod_sets.push_back(std::move(psa));
    }
  }
  return out;
}

api::Object EncodeAdmission(const admission::Admission& admission, const ResourceNames& names) {
  api::Object psas = api::Object::array();
  for (const admission::PodSetAssignment& psa : admission.pod_sets) {
    api::Object flavors = api::Object::object();
    for (const auto& f : psa.flavors) flavors[names.Name(f.resource)] = f.flavor;
    psas.push_back({{"name", psa.name},
                    {"flavors", flavors},
                    {"resourceUsage", EncodeResourceList(psa.resource_usage, names)},
                    {"count", psa.count}});
  }
  return {{"clusterQueue", admission.cluster_queue}, {"podSetAssignments", psas}};
}

admission::Workload DecodeWorkload(const api::Object& wl, ResourceNames& names) {
  admission::Workload out;
  out.uid = api::Uid(wl);
  out.namespace_name = api::Namespace(wl);
  out.name = api::Name(wl);
  out.generation = api::Generation(wl);
  const api::Object& spec = NestedField(wl, {"spec"});
  out.queue_name = NestedString(spec, {"queueName"});
  std::map<std::string, int32_t> reclaimable;
  for (const api::Object& r : NestedField(wl, {"status", "reclaimablePods"})) {
    const api::Object& c = NestedField(r, {"count"});
    reclaimable[NestedString(r, {"name"})] = c.is_number_integer() ? c.get<int32_t>() : 0;
  }
  const api::Object& pod_sets = NestedField(spec, {"podSets"});
  if (pod_sets.is_array()) {
    for (const api::Object& p : pod_sets) {
      const api::Object& c = NestedField(p, {"count"});
      std::string name = NestedString(p, {"name"});
      if (name.empty()) name = "main";
      admission::PodSet ps = DecodePodSet(name, c.is_number_integer() ? c.get<int32_t>() : 1, NestedField(p, {"template"}), names);
      ps.reclaimable = reclaimable.count(name) ? reclaimable[name] : 0;
      if (const api::Object& m = NestedField(p, {"minCount"}); m.is_number_integer()) ps.min_count = m.get<int32_t>();
      out.pod_sets.push_back(std::move(ps));
    }
  }
  if (const api::Object& p = NestedField(spec, {"priority"}); p.is_number_integer()) out.priority = p.get<int32_t>();
  if (const api::Object& a = NestedField(spec, {"active"}); a.is_boolean()) out.active = a.get<bool>();
  out.finished = IsConditionTrue(wl, "Finished");
  out.queue_order_timestamp = CreationTime(wl);
  Time requeue_at;
  if (ParseRfc3339(NestedString(wl, {"status", "requeueState", "requeueAt"}), &requeue_at)) out.requeue_at = requeue_at;
  if (const api::Object* qr = FindCondition(wl, "QuotaReserved"); qr != nullptr && qr->value("status", "") == "False") {
    out.pending_reason = qr->value("reason", "");
    out.pending_message = qr->value("message", "");
  }
  if (IsConditionTrue(wl, "QuotaReserved")) {
    out.admission = DecodeAdmission(wl, names);
    if (out.admission) {
      out.cluster_queue = out.admission->cluster_queue;
      out.state = IsConditionTrue(wl, "Evicted") ? admission::AdmissionState::kEvicting
                                                 : admission::AdmissionState::kAdmitted;
      out.quota_reserved_time = ConditionTransitionTime(wl, "QuotaReserved").value_or(Time{});
      if (out.state == admission::AdmissionState::kEvicting && IsConditionTrue(wl, "Preempted")) {
        const api::Object* pc = FindCondition(wl, "Preempted");
        const std::string msg = pc->value("message", "");
        auto pos = msg.find("(UID: ");
        if (pos != std::string::npos) {
          pos += 6;
          auto end = msg.find_first_of(",)", pos);
          out.evicted_for = msg.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        }
      }
    }
  }
  return out;
}

Time CreationTime(const api::Object& obj) {
  Time t{};
  ParseRfc3339(api::MetaString(obj, "creationTimestamp"), &t);
  return t;
}

std::string Label(const api::Object& obj, const std::string& key) {
  return NestedString(obj, {"metadata", "labels", key.c_str()});
}

std::optional<std::string> Annotation(const api::Object& obj, const std::string& key) {
  const api::Object& v = NestedField(obj, {"metadata", "annotations", key.c_str()});
  if (!v.is_string()) return std::nullopt;
  return v.get<std::string>();
}

bool HasFinalizer(const api::Object& obj, const std::string& finalizer) {
  for (const api::Object& f : NestedField(obj, {"metadata", "finalizers"})) {
    if (f.is_string() && f.get<std::string>() == finalizer) return true;
  }
  return false;
}

}  // namespace berth::controllers::kueue
