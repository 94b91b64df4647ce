#include "controllers/scheduler/pod_decoder.h"

#include <optional>
#include <utility>

#include "core/clock.h"
#include "core/quantity.h"
#include "placement/messages.h"
#include "scheduling/node_selector.h"
#include "scheduling/pod_requests.h"
#include "scheduling/taint.h"
#include "scheduling/toleration.h"

namespace berth::controllers::scheduler {

const client::GroupVersionResource kPods{"", "v1", "pods"};
const client::GroupVersionResource kNodes{"", "v1", "nodes"};

namespace {

const api::Object& Null() {
  static const api::Object null;
  return null;
}

// obj[path...] or null when any step is missing or not an object.
const api::Object& At(const api::Object& obj, std::initializer_list<const char*> path) {
  const api::Object* cur = &obj;
  for (const char* p : path) {
    if (!cur->is_object()) return Null();
    auto it = cur->find(p);
    if (it == cur->end()) return Null();
    cur = &*it;
  }
  return *cur;
}

std::string Str(const api::Object& v) { return v.is_string() ? v.get<std::string>() : std::string(); }

std::optional<Quantity> DecodeQuantity(const api::Object& v) {
  StatusOr<Quantity> q = Status(Code::kInvalid, "not a quantity");
  if (v.is_string()) {
    q = Quantity::Parse(v.get<std::string>());
  } else if (v.is_number()) {
    q = Quantity::Parse(v.dump());
  }
  if (!q.ok()) return std::nullopt;
  return q.value();
}

placement::ResourceList DecodeResourceList(const api::Object& list) {
  placement::ResourceList out;
  if (!list.is_object()) return out;
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (std::optional<Quantity> q = DecodeQuantity(it.value())) out.Set(it.key(), *q);
  }
  return out;
}

std::map<std::string, std::string, std::less<>> DecodeStringMap(const api::Object& m) {
  std::map<std::string, std::string, std::less<>> out;
  if (!m.is_object()) return out;
  for (auto it = m.begin(); it != m.end(); ++it) {
    if (it.value().is_string()) out.emplace(it.key(), it.value().get<std::string>());
  }
  return out;
}

std::optional<scheduling::TaintEffect> DecodeEffect(const std::string& e) {
  if (e == "NoSchedule") return scheduling::TaintEffect::kNoSchedule;
  if (e == "PreferNoSchedule") return scheduling::TaintEffect::kPreferNoSchedule;
  if (e == "NoExecute") return scheduling::TaintEffect::kNoExecute;
  return std::nullopt;
}

std::vector<scheduling::Toleration> DecodeTolerations(const api::Object& list) {
  std::vector<scheduling::Toleration> out;
  if (!list.is_array()) return out;
  for (const api::Object& t : list) {
    scheduling::Toleration tol;
    tol.key = Str(At(t, {"key"}));
    tol.op = Str(At(t, {"operator"})) == "Exists" ? scheduling::Toleration::Operator::kExists
                                                  : scheduling::Toleration::Operator::kEqual;
    tol.value = Str(At(t, {"value"}));
    tol.effect = DecodeEffect(Str(At(t, {"effect"})));
    out.push_back(std::move(tol));
  }
  return out;
}

std::vector<scheduling::NodeSelectorRequirement> DecodeRequirements(const api::Object& list) {
  using Op = scheduling::NodeSelectorRequirement::Operator;
  std::vector<scheduling::NodeSelectorRequirement> out;
  if (!list.is_array()) return out;
  for (const api::Object& r : list) {
    scheduling::NodeSelectorRequirement req;
    req.key = Str(At(r, {"key"}));
    const std::string op = Str(At(r, {"operator"}));
    if (op == "In") {
      req.op = Op::kIn;
    } else if (op == "NotIn") {
      req.op = Op::kNotIn;
    } else if (op == "Exists") {
      req.op = Op::kExists;
    } else if (op == "DoesNotExist") {
      req.op = Op::kDoesNotExist;
    } else if (op == "Gt") {
      req.op = Op::kGt;
    } else if (op == "Lt") {
      req.op = Op::kLt;
    } else {
      // An unknown operator makes the term match nothing
      // (scheduling/node_selector.h); "Gt" without values is invalid and has
      // that effect.
      req.op = Op::kGt;
      req.values.clear();
      out.push_back(std::move(req));
      continue;
    }
    const api::Object& values = At(r, {"values"});
    if (values.is_array()) {
      for (const api::Object& v : values) req.values.push_back(Str(v));
    }
    out.push_back(std::move(req));
  }
  return out;
}

scheduling::ContainerResources<placement::ResourceList> DecodeContainer(const api::Object& c) {
  scheduling::ContainerResources<placement::ResourceList> out;
  out.requests = DecodeResourceList(At(c, {"resources", "requests"}));
  out.limits = DecodeResourceList(At(c, {"resources", "limits"}));
  out.restart_always = Str(At(c, {"restartPolicy"})) == "Always";
  return out;
}

std::optional<placement::PreemptionPolicy> DecodePolicy(const api::Object& v) {
  return v.is_string() ? placement::ParsePreemptionPolicy(v.get<std::string>()) : std::nullopt;
}

}  // namespace

placement::Node DecodeNode(const api::Object& obj) {
  placement::Node n;
  n.name = api::Name(obj);
  n.labels = DecodeStringMap(At(obj, {"metadata", "labels"}));
  const api::Object& taints = At(obj, {"spec", "taints"});
  if (taints.is_array()) {
    for (const api::Object& t : taints) {
      std::optional<scheduling::TaintEffect> effect = DecodeEffect(Str(At(t, {"effect"})));
      if (!effect) continue;
      n.taints.push_back({Str(At(t, {"key"})), Str(At(t, {"value"})), *effect});
    }
  }
  n.allocatable = DecodeResourceList(At(obj, {"status", "allocatable"}));
  const api::Object& unschedulable = At(obj, {"spec", "unschedulable"});
  n.unschedulable = unschedulable.is_boolean() && unschedulable.get<bool>();
  n.ready = false;
  const api::Object& conds = At(obj, {"status", "conditions"});
  if (conds.is_array()) {
    for (const api::Object& c : conds) {
      if (Str(At(c, {"type"})) == "Ready") n.ready = Str(At(c, {"status"})) == "True";
    }
  }
  return n;
}

placement::Pod DecodePod(const api::Object& obj) {
  placement::Pod p;
  p.namespace_ = api::Namespace(obj);
  p.name = api::Name(obj);
  p.uid = api::Uid(obj);
  const api::Object& spec = At(obj, {"spec"});
  if (const api::Object& prio = At(spec, {"priority"}); prio.is_number_integer()) {
    p.priority = prio.get<int32_t>();
  }
  p.preemption_policy =
      DecodePolicy(At(spec, {"preemptionPolicy"})).value_or(placement::PreemptionPolicy::kPreemptLowerPriority);
  for (const char* list : {"initContainers", "containers"}) {
    const api::Object& cs = At(spec, {list});
    if (!cs.is_array()) continue;
    auto& out = std::string_view(list) == "containers" ? p.resources.containers : p.resources.init_containers;
    for (const api::Object& c : cs) out.push_back(DecodeContainer(c));
  }
  p.resources.overhead = DecodeResourceList(At(spec, {"overhead"}));
  p.node_name = Str(At(spec, {"nodeName"}));
  p.node_selector = DecodeStringMap(At(spec, {"nodeSelector"}));
  const api::Object& required =
      At(spec, {"affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"});
  if (required.is_object()) {
    std::vector<scheduling::NodeSelectorTerm> terms;
    const api::Object& list = At(required, {"nodeSelectorTerms"});
    if (list.is_array()) {
      for (const api::Object& t : list) {
        terms.push_back({DecodeRequirements(At(t, {"matchExpressions"})), DecodeRequirements(At(t, {"matchFields"}))});
      }
    }
    p.required_node_affinity = std::move(terms);
  }
  p.tolerations = DecodeTolerations(At(spec, {"tolerations"}));
  p.nominated_node_name = Str(At(obj, {"status", "nominatedNodeName"}));
  Time start;
  if (ParseRfc3339(Str(At(obj, {"status", "startTime"})), &start)) p.start_time = start;
  p.terminating = !At(obj, {"metadata", "deletionTimestamp"}).is_null();
  const api::Object& conds = At(obj, {"status", "conditions"});
  if (conds.is_array()) {
    for (const api::Object& c : conds) {
      if (Str(At(c, {"type"})) == "DisruptionTarget" && Str(At(c, {"status"})) == "True" &&
          Str(At(c, {"reason"})) == "PreemptionByScheduler") {
        p.terminating_by_preemption = p.terminating;
      }
    }
  }
  return p;
}

std::string SchedulerName(const api::Object& pod) {
  std::string s = Str(At(pod, {"spec", "schedulerName"}));
  return s.empty() ? std::string(placement::kDefaultSchedulerName) : s;
}

bool IsPodTerminal(const api::Object& pod) {
  const std::string phase = Str(At(pod, {"status", "phase"}));
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace berth::controllers::scheduler
