#include "cli/diagnostics/explain.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "admission/flavor_assigner.h"
#include "admission/model.h"
#include "admission/preemptor.h"
#include "admission/snapshot.h"
#include "api/conditions.h"
#include "api/selectors.h"
#include "api/unstructured.h"
#include "controllers/kueue/decoder.h"
#include "controllers/kueue/start_time_estimates.h"
#include "controllers/kueue/workload_lifecycle.h"
#include "controllers/scheduler/pod_decoder.h"
#include "placement/scheduler.h"
#include "placement/snapshot.h"

namespace berth::cli::diagnostics {

namespace {

namespace kq = controllers::kueue;
namespace sched = controllers::scheduler;

// ---------------------------------------------------------------------------
// Kinds

struct KindEntry {
  const client::GroupVersionResource* gvr;
  const char* kind;
  std::vector<std::string> names;  // singular, plural, short names
};

const std::vector<KindEntry>& Kinds() {
  static const std::vector<KindEntry> kKinds = {
      {&resources::kTrainJobs, "TrainJob", {"trainjob", "trainjobs"}},
      {&resources::kPyTorchJobs, "PyTorchJob", {"pytorchjob", "pytorchjobs"}},
      {&resources::kJobSets, "JobSet", {"jobset", "jobsets"}},
      {&resources::kJobs, "Job", {"job", "jobs"}},
      {&resources::kWorkloads, "Workload", {"workload", "workloads", "wl"}},
      {&resources::kPods, "Pod", {"pod", "pods", "po"}},
  };
  return kKinds;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

StatusOr<const KindEntry*> ResolveKind(const std::string& typed) {
  std::string k = Lower(typed);
  for (const KindEntry& e : Kinds()) {
    const std::string qualified = e.gvr->resource + (e.gvr->group.empty() ? "" : "." + e.gvr->group);
    if (k == qualified || k == Lower(e.kind)) return &e;
    for (const std::string& n : e.names) {
      if (k == n) return &e;
    }
  }
  return Status(Code::kBadRequest, "explain does not support resource type \"" + typed +
                                       "\" (supported: trainjob, pytorchjob, jobset, job, workload, pod)");
}

// ---------------------------------------------------------------------------
// Small helpers

std::string Ref(const std::string& kind, const api::Object& obj) {
  const std::string& ns = api::Namespace(obj);
  return kind + " " + (ns.empty() ? "" : ns + "/") + api::Name(obj);
}
std::string KindOf(const api::Object& obj) { return obj.value("kind", ""); }
std::string Ref(const api::Object& obj) { return Ref(KindOf(obj), obj); }

std::string ConditionField(const std::string& type, const char* member) {
  return "status.conditions[" + type + "]." + member;
}

Time ParseTimeOrZero(const std::string& s) {
  Time t{};
  if (!s.empty()) ParseRfc3339(s, &t);
  return t;
}

std::string Plural(size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// A resource amount in canonical Kubernetes form (core/quantity.h): binary SI
// for the byte-valued resources ("8Gi" memory), decimal SI otherwise ("500m" cpu).
std::string AmountText(const std::string& resource, admission::Amount milli) {
  const bool bytes = resource == "memory" || resource == "ephemeral-storage" || resource.rfind("hugepages-", 0) == 0;
  return Quantity::FromMilli(milli, bytes ? Quantity::Format::kBinarySI : Quantity::Format::kDecimalSI).String();
}

std::string Join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

bool IsTerminalPod(const api::Object& pod) {
  const std::string phase = api::NestedString(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

// ---------------------------------------------------------------------------
// The subject and its relations

struct Subject {
  const KindEntry* kind = nullptr;
  const api::Object* object = nullptr;  // what was asked about
  const api::Object* job = nullptr;     // the top-level job (nullptr for a bare pod / ownerless Workload)
  const api::Object* workload = nullptr;
  std::vector<const api::Object*> pods;
};

// The owner `obj` names in metadata.ownerReferences: the controller reference
// (controller: true), else the first one; nullptr when none is in the view.
const api::Object* Owner(const ClusterView& view, const api::Object& obj) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return nullptr;
  auto r = m->find("ownerReferences");
  if (r == m->end() || !r->is_array() || r->empty()) return nullptr;
  const api::Object* chosen = &(*r)[0];
  for (const api::Object& ref : *r) {
    if (ref.is_object() && ref.value("controller", false) == true) {
      chosen = &ref;
      break;
    }
  }
  return view.FindByUid(api::NestedString(*chosen, {"uid"}));
}

// The first ancestor (self included) of `obj` for which Kueue created a Workload.
const api::Object* JobWithWorkload(const ClusterView& view, const api::Object& obj, const api::Object** workload) {
  const api::Object* cur = &obj;
  std::set<std::string> seen;
  while (cur != nullptr && seen.insert(api::Uid(*cur)).second) {
    if (const api::Object* wl = view.WorkloadFor(*cur)) {
      *workload = wl;
      return cur;
    }
    cur = Owner(view, *cur);
  }
  return nullptr;
}

// The top of `obj`'s ownerReference chain (obj itself when it has no owner in the view).
const api::Object* TopOwner(const ClusterView& view, const api::Object& obj) {
  const api::Object* cur = &obj;
  std::set<std::string> seen;
  for (;;) {
    if (!seen.insert(api::Uid(*cur)).second) return cur;
    const api::Object* parent = Owner(view, *cur);
    if (parent == nullptr) return cur;
    cur = parent;
  }
}

// ---------------------------------------------------------------------------
// The report under construction

class Builder {
 public:
  Builder(const ClusterView& view, Subject subject, ExplainReport* report)
      : view_(view), s_(std::move(subject)), r_(*report) {}

  void Run();

 private:
  void Add(std::string statement, std::vector<Evidence> evidence, std::string fix = "") {
    r_.findings.push_back({std::move(statement), std::move(evidence), std::move(fix)});
  }

  void NotManaged(const api::Object& job);
  // Step 1. Returns false when the analysis cannot go on (queue objects missing).
  void NotAdmitted(const api::Object& wl);
  void Deactivated(const api::Object& wl);
  void NamespaceSelector(const api::Object& wl, const api::Object& cq);
  void WaitingForPodsReady(const api::Object& wl, const api::Object& quota_reserved);
  void PodsFitNoNode(const api::Object& wl, const api::Object& cq);
  bool QueueObjects(const api::Object& wl, const api::Object** cq);
  void QueuePosition(const api::Object& wl, const api::Object& cq);
  void EstimatedStart(const api::Object& wl);
  void Quota(const api::Object& wl, const api::Object& cq);
  // Step 2.
  void PodsPending(const api::Object& wl);
  void Placement(const std::vector<const api::Object*>& pending);
  void QuotaAboveNodes(const api::Object& wl);
  // Step 3.
  void Timeline();

  const ClusterView& view_;
  Subject s_;
  ExplainReport& r_;
  // Why Kueue will not admit the Workload now whatever its quota (deactivated,
  // namespace not selected, blockAdmission), in words; Quota() never claims
  // an admission while one is listed.
  std::vector<std::string> blockers_;
  bool never_placeable_ = false;  // some podSet fits no node the ClusterQueue's flavors select
};

void Builder::Run() {
  const api::Object* wl = s_.workload;
  if (s_.job != nullptr && s_.object != s_.job && s_.kind->gvr != &resources::kPods &&
      s_.kind->gvr != &resources::kWorkloads) {
    // A JobSet of a TrainJob, a Job of a JobSet: Kueue manages the top-level owner only.
    Add(Ref(*s_.object) + " is part of " + Ref(*s_.job) + " (its controller ownerReference chain): Kueue queues "
            "and admits the top-level job as one Workload, so this explains " + Ref(*s_.job),
        {{Ref(*s_.object), "metadata.ownerReferences", Ref(*s_.job)}});
  }
  if (wl == nullptr) {
    NotManaged(s_.job != nullptr ? *s_.job : *s_.object);
  } else if (api::IsConditionTrue(*wl, "Finished")) {
    r_.layer = Layer::kFinished;
    const api::Object* c = api::FindCondition(*wl, "Finished");
    r_.summary = "finished: the Workload's quota is released";
    Add("The Workload finished (" + api::NestedString(*c, {"reason"}) + "): " + api::NestedString(*c, {"message"}),
        {{Ref("Workload", *wl), ConditionField("Finished", "reason"), api::NestedString(*c, {"reason"})}});
  } else if (api::IsConditionTrue(*wl, "QuotaReserved")) {
    if (api::IsConditionTrue(*wl, "Evicted")) {
      r_.layer = Layer::kEvicting;
      const api::Object* c = api::FindCondition(*wl, "Evicted");
      size_t alive = 0;
      for (const api::Object* p : s_.pods) alive += IsTerminalPod(*p) ? 0 : 1;
      r_.summary = "evicted: its pods are terminating; the quota is held until they are gone, then it is requeued";
      Add("The Workload was evicted (" + api::NestedString(*c, {"reason"}) + "): " + api::NestedString(*c, {"message"}) + "; " +
              Plural(alive, "pod") + " still to terminate before its quota is released and it is requeued",
          {{Ref("Workload", *wl), ConditionField("Evicted", "message"), api::NestedString(*c, {"message"})}});
    } else {
      PodsPending(*wl);
    }
  } else {
    NotAdmitted(*wl);
  }
  Timeline();
}

void Builder::NotManaged(const api::Object& job) {
  r_.layer = Layer::kNotManaged;
  const std::string ref = Ref(job);
  if (KindOf(job) == "Pod") {
    // berth's Kueue has no Pod integration: a pod outside a job kind is never queued.
    r_.summary = "not managed by Kueue: a bare Pod (berth's Kueue queues job kinds only)";
    Add(ref + " is not owned by a job: berth's Kueue manages only job kinds (batch/v1 Job, JobSet, PyTorchJob, "
            "TrainJob; Kueue's pod integration is not part of berth), so this pod is not queued, holds no quota and "
            "goes straight to kube-scheduler",
        {{ref, "metadata.ownerReferences", ""}});
    std::vector<const api::Object*> pending;
    for (const api::Object* p : s_.pods) {
      if (!IsTerminalPod(*p) && api::NestedString(*p, {"spec", "nodeName"}).empty()) pending.push_back(p);
    }
    Placement(pending);
    return;
  }
  const auto label = LabelValue(job, kQueueNameLabel);
  const auto annotation = AnnotationValue(job, kQueueNameLabel);
  if (label.has_value()) {
    // Labelled but no Workload: Kueue has not caught up (or does not manage this kind).
    r_.layer = Layer::kNotAdmitted;
    r_.summary = "not admitted: Kueue has not created a Workload for it yet";
    Add(ref + " has the queue-name label " + *label + " but no Workload owns it yet: Kueue creates the "
            "Workload when it reconciles the job; `kubectl get workloads -n " + api::Namespace(job) +
            "` does not list it yet",
        {{ref, std::string("metadata.labels[") + kQueueNameLabel + "]", *label}});
    return;
  }
  if (annotation.has_value()) {
    r_.summary = "not managed by Kueue: the queue name is an annotation, not a label";
    Add(ref + " names its queue in the annotation " + kQueueNameLabel + "=" + *annotation +
            ", which Kueue does not read: Kueue manages only jobs with the label, so the job is not queued, "
            "no Workload exists (`kubectl get workloads` does not list it) and it runs outside every quota",
        {{ref, std::string("metadata.annotations[") + kQueueNameLabel + "]", *annotation}},
        std::string("move it to metadata.labels: ") + kQueueNameLabel + ": " + *annotation);
  } else {
    r_.summary = "not managed by Kueue: no queue-name label";
    Add(ref + " has no " + kQueueNameLabel + " label: Kueue does not manage it, no Workload exists "
            "(`kubectl get workloads` does not list it) and it runs outside every quota",
        {{ref, std::string("metadata.labels[") + kQueueNameLabel + "]", ""}},
        std::string("add the label ") + kQueueNameLabel + ": <LocalQueue name> in metadata.labels");
  }
  // Its pods, if any, go straight to the scheduler.
  std::vector<const api::Object*> pending;
  for (const api::Object* p : s_.pods) {
    if (!IsTerminalPod(*p) && api::NestedString(*p, {"spec", "nodeName"}).empty()) pending.push_back(p);
  }
  Placement(pending);
}

// ---------------------------------------------------------------------------
// Step 1: not admitted

void Builder::NotAdmitted(const api::Object& wl) {
  r_.layer = Layer::kNotAdmitted;
  r_.summary = "not admitted: Kueue has not reserved quota for its Workload, so no pods exist (step 1: admission)";
  const std::string wref = Ref("Workload", wl);
  if (api::IsConditionTrue(wl, "Evicted")) {
    const api::Object* c = api::FindCondition(wl, "Evicted");
    std::vector<Evidence> ev = {{wref, ConditionField("Evicted", "message"), api::NestedString(*c, {"message"})}};
    // Requeued=False (e.g. Deactivated, or a backoff still running): not back in the queue.
    const api::Object* rq = api::FindCondition(wl, "Requeued");
    const bool requeued = rq == nullptr || api::NestedString(*rq, {"status"}) == "True";
    std::string tail = " and requeued";
    if (!requeued) {
      tail = ", not requeued (Requeued=False " + api::NestedString(*rq, {"reason"}) +
             (api::NestedString(*rq, {"message"}).empty() ? "" : ": " + api::NestedString(*rq, {"message"})) + ")";
      ev.push_back({wref, ConditionField("Requeued", "status"), "False"});
    }
    Add("The Workload was evicted (" + api::NestedString(*c, {"reason"}) + ")" + tail + ": " + api::NestedString(*c, {"message"}),
        std::move(ev));
  }
  if (auto it = wl.find("spec"); it != wl.end() && it->is_object() && it->value("active", true) == false) {
    Deactivated(wl);
  }
  const api::Object* cq = nullptr;
  if (!QueueObjects(wl, &cq)) return;
  NamespaceSelector(wl, *cq);
  if (const api::Object* c = api::FindCondition(wl, "QuotaReserved"); c != nullptr && !api::NestedString(*c, {"message"}).empty()) {
    if (api::NestedString(*c, {"reason"}) == kq::kWaitingForPodsReadyReason) {
      WaitingForPodsReady(wl, *c);
    } else {
      Add("Kueue's last decision (" + api::NestedString(*c, {"reason"}) + "): " + api::NestedString(*c, {"message"}),
          {{wref, ConditionField("QuotaReserved", "message"), api::NestedString(*c, {"message"})}});
    }
  }
  PodsFitNoNode(wl, *cq);
  QueuePosition(wl, *cq);
  EstimatedStart(wl);
  Quota(wl, *cq);
}

// berth's estimate of when it starts (controllers/kueue/start_time_estimates.h),
// as the controller last wrote it.
void Builder::EstimatedStart(const api::Object& wl) {
  const api::Object* c = api::FindCondition(wl, kq::kEstimatedStartCondition);
  if (c == nullptr || api::NestedString(*c, {"message"}).empty()) return;
  const std::string message = api::NestedString(*c, {"message"});
  Add("When it starts (berth's estimate, from the queue replayed forward; " + api::NestedString(*c, {"reason"}) +
          "): " + message,
      {{Ref("Workload", wl), ConditionField(kq::kEstimatedStartCondition, "message"), message}});
}

void Builder::Deactivated(const api::Object& wl) {
  const std::string wref = Ref("Workload", wl);
  std::vector<Evidence> ev = {{wref, "spec.active", "false"}};
  // Why: the Evicted condition Kueue wrote when it deactivated it ("The workload is
  // deactivated due to <DeactivationTarget message>"), a DeactivationTarget still
  // pending, and the eviction counts by underlying cause (status.schedulingStats).
  std::vector<std::string> why;
  bool requeuing_limit = false;
  if (const api::Object* c = api::FindCondition(wl, "Evicted");
      c != nullptr && api::NestedString(*c, {"status"}) == "True" && api::NestedString(*c, {"reason"}) == "Deactivated") {
    why.push_back(api::NestedString(*c, {"message"}));
    ev.push_back({wref, ConditionField("Evicted", "message"), api::NestedString(*c, {"message"})});
    requeuing_limit |= api::NestedString(*c, {"message"}).find("re-queuing retries") != std::string::npos;
  }
  if (const api::Object* c = api::FindCondition(wl, "DeactivationTarget"); c != nullptr) {
    why.push_back(api::NestedString(*c, {"reason"}) + ": " + api::NestedString(*c, {"message"}));
    ev.push_back({wref, ConditionField("DeactivationTarget", "reason"), api::NestedString(*c, {"reason"})});
    requeuing_limit |= api::NestedString(*c, {"reason"}) == "RequeuingLimitExceeded";
  }
  const api::Object& evictions =
      wl.value("status", api::Object::object()).value("schedulingStats", api::Object::object()).value("evictions",
                                                                                                  api::Object::array());
  for (size_t i = 0; evictions.is_array() && i < evictions.size(); ++i) {
    const std::string reason = evictions[i].value("reason", "");
    const std::string cause = evictions[i].value("underlyingCause", "");
    const std::string count = std::to_string(evictions[i].value("count", 0));
    ev.push_back({wref, "status.schedulingStats.evictions[" + std::to_string(i) + "]",
                  reason + (cause.empty() ? "" : "/" + cause) + " x" + count});
    requeuing_limit |= cause == "RequeuingLimitExceeded";
  }
  std::string statement = "The Workload is deactivated (spec.active=false): Kueue does not queue or admit it until "
                          "spec.active is true";
  if (!why.empty()) statement += "; why: " + Join(why, "; ");
  const std::string patch = "kubectl patch workload " + api::Name(wl) + " -n " + api::Namespace(wl) +
                            " --type=merge -p '{\"spec\":{\"active\":true}}'";
  std::string fix = patch;
  if (requeuing_limit) {
    statement += ". Kueue deactivated it because its pods did not all become Ready within waitForPodsReady.timeout "
                 "more times than requeuingStrategy.backoffLimitCount allows (RequeuingLimitExceeded): re-activating "
                 "it repeats the loop (admitted, pods not Ready in time, evicted, requeued, deactivated) unless the "
                 "cause its pods do not become Ready is fixed";
    fix = "fix why its pods do not become Ready (the findings below, `kubectl describe pods`), then re-activate: " +
          patch;
  }
  Add(std::move(statement), std::move(ev), std::move(fix));
  blockers_.push_back("it is deactivated (spec.active=false)");
}

// Kueue's cache: a ClusterQueue admits workloads only from the namespaces its
// spec.namespaceSelector selects (a null selector selects none, {} all);
// the namespace's labels plus kubernetes.io/metadata.name.
void Builder::NamespaceSelector(const api::Object& wl, const api::Object& cq) {
  const std::string ns = api::Namespace(wl);
  const api::Object& spec = cq.value("spec", api::Object::object());
  const api::Object selector = spec.value("namespaceSelector", api::Object());
  api::Object labels = api::Object::object();
  if (const api::Object* nso = view_.Find(resources::kNamespaces, "", ns)) {
    const api::Object& l = nso->value("metadata", api::Object::object()).value("labels", api::Object::object());
    if (l.is_object()) labels = l;
  }
  labels["kubernetes.io/metadata.name"] = ns;
  bool selected = false;
  if (!selector.is_null()) {
    auto sel = api::LabelSelector::FromJson(selector);
    selected = sel.ok() && sel.value().Matches(labels);
  }
  if (selected) return;
  const std::string shown = selector.is_null() ? "null" : selector.dump();
  std::string label_cmd;
  if (selector.is_object() && selector.contains("matchLabels") && selector["matchLabels"].is_object()) {
    for (const auto& [k, v] : selector["matchLabels"].items()) {
      label_cmd += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    }
  }
  Add("ClusterQueue " + api::Name(cq) + "'s namespaceSelector " + shown + " does not select namespace " + ns +
          " (labels " + labels.dump() + "): Kueue never admits workloads from it (\"workload namespace doesn't "
          "match ClusterQueue selector\")",
      {{Ref("ClusterQueue", cq), "spec.namespaceSelector", shown}, {"Namespace " + ns, "metadata.labels", labels.dump()}},
      (label_cmd.empty() ? std::string("label namespace ") + ns + " so the selector matches it"
                         : "kubectl label namespace " + ns + label_cmd) +
          ", or change ClusterQueue " + api::Name(cq) + "'s spec.namespaceSelector to select it");
  blockers_.push_back("ClusterQueue " + api::Name(cq) + "'s namespaceSelector does not select namespace " + ns);
}

// waitForPodsReady.blockAdmission: Kueue admits nothing while an admitted
// workload's pods are not all Ready (controllers/kueue BlocksAdmission).
void Builder::WaitingForPodsReady(const api::Object& wl, const api::Object& quota_reserved) {
  std::vector<std::string> blocking;
  std::vector<Evidence> ev = {{Ref("Workload", wl), ConditionField("QuotaReserved", "reason"),
                               api::NestedString(quota_reserved, {"reason"})}};
  for (const api::Object& w : view_.Workloads()) {
    if (&w == &wl || !kq::BlocksAdmission(w)) continue;
    const api::Object* pr = api::FindCondition(w, "PodsReady");
    const std::string state = pr == nullptr ? "no PodsReady condition"
                                            : "PodsReady=" + api::NestedString(*pr, {"status"}) + " " + api::NestedString(*pr, {"reason"});
    blocking.push_back(api::Namespace(w) + "/" + api::Name(w) + " (" + state + ")");
    ev.push_back({Ref("Workload", w), ConditionField("PodsReady", "status"), pr ? api::NestedString(*pr, {"status"}) : ""});
  }
  std::string statement = "Kueue holds it back (" + api::NestedString(quota_reserved, {"reason"}) + ": " +
                          api::NestedString(quota_reserved, {"message"}) + "): waitForPodsReady.blockAdmission admits nothing "
                          "while an admitted workload's pods are not all Ready";
  if (blocking.empty()) {
    statement += "; no admitted workload is waiting for PodsReady now, so the block has lifted";
  } else {
    statement += "; waiting for " + Join(blocking, ", ");
    blockers_.push_back("waitForPodsReady.blockAdmission waits for " + Join(blocking, ", ") + " to be PodsReady");
  }
  Add(std::move(statement), std::move(ev));
}

// Per-pod requests of each podSet against every node the ClusterQueue's
// flavors select: a podSet no node can hold is never placed, so it never
// becomes Ready (the real cause behind PodsReady timeouts).
void Builder::PodsFitNoNode(const api::Object& wl_obj, const api::Object& cq) {
  if (view_.Nodes().empty()) return;  // no nodes in view: cannot judge
  std::set<std::string> node_names;
  const api::Object& groups = cq.value("spec", api::Object::object()).value("resourceGroups", api::Object::array());
  for (const api::Object& g : groups) {
    for (const api::Object& f : g.value("flavors", api::Object::array())) {
      const api::Object* rf = view_.ResourceFlavor(f.value("name", ""));
      if (rf == nullptr) continue;
      for (const std::string& n : view_.NodeCapacity(*rf).nodes) node_names.insert(n);
    }
  }
  admission::ResourceNames names;
  const admission::Workload wl = kq::DecodeWorkload(wl_obj, names);
  const std::string wref = Ref("Workload", wl_obj);
  for (size_t i = 0; i < wl.pod_sets.size(); ++i) {
    const admission::PodSet& ps = wl.pod_sets[i];
    std::vector<std::string> request;
    for (const auto& [r, v] : ps.requests.items()) {
      if (v > 0) request.push_back(names.Name(r) + " " + AmountText(names.Name(r), v));
    }
    if (request.empty()) continue;
    std::vector<std::string> per_node;
    std::vector<Evidence> ev = {{wref, "spec.podSets[" + std::to_string(i) + "].template.spec.containers[*].resources."
                                       "requests", Join(request, ", ")}};
    bool any = false;
    for (const std::string& n : node_names) {
      const api::Object* node = view_.Find(resources::kNodes, "", n);
      const api::Object& alloc =
          node == nullptr ? api::Object::object()
                          : node->value("status", api::Object::object()).value("allocatable", api::Object::object());
      bool fits = true;
      std::vector<std::string> have;
      for (const auto& [r, v] : ps.requests.items()) {
        if (v <= 0) continue;
        const std::string rname = names.Name(r);
        const admission::Amount a =
            alloc.is_object() && alloc.contains(rname) ? kq::DecodeAmount(alloc[rname]) : admission::Amount{0};
        fits = fits && v <= a;
        have.push_back(rname + " " + AmountText(rname, a));
      }
      any = any || fits;
      per_node.push_back(n + ": " + Join(have, ", "));
      ev.push_back({"Node " + n, "status.allocatable", Join(have, ", ")});
    }
    if (any) continue;
    never_placeable_ = true;
    Add("PodSet " + ps.name + " requests " + Join(request, ", ") + " per pod, more than any node ClusterQueue " +
            api::Name(cq) + "'s flavors select can allocate" +
            (per_node.empty() ? " (its flavors select no node)" : " (" + Join(per_node, "; ") + ")") +
            ": its pods can never be scheduled, so once admitted they stay Pending and never become Ready; this is "
            "the real cause to fix",
        std::move(ev),
        per_node.empty() ? "correct the ResourceFlavors' spec.nodeLabels, or label the nodes"
                         : "lower the per-pod requests (spread the work over more, smaller pods) or add nodes that "
                           "large");
  }
}

bool Builder::QueueObjects(const api::Object& wl, const api::Object** cq_out) {
  const std::string wref = Ref("Workload", wl);
  const std::string ns = api::Namespace(wl);
  const std::string queue = api::NestedString(wl, {"spec", "queueName"});
  const api::Object* lq = queue.empty() ? nullptr : view_.LocalQueue(ns, queue);
  if (lq == nullptr) {
    Add("LocalQueue " + ns + "/" + queue + " does not exist: the Workload cannot be queued",
        {{wref, "spec.queueName", queue}},
        "create LocalQueue " + queue + " in namespace " + ns + " (spec.clusterQueue: <ClusterQueue>), or correct the "
        "job's " + kQueueNameLabel + " label");
    return false;
  }
  const std::string cq_name = api::NestedString(*lq, {"spec", "clusterQueue"});
  const api::Object* cq = view_.ClusterQueueFor(*lq);
  if (cq == nullptr) {
    Add("LocalQueue " + ns + "/" + queue + " points to ClusterQueue " + cq_name + ", which does not exist",
        {{Ref("LocalQueue", *lq), "spec.clusterQueue", cq_name}},
        "create ClusterQueue " + cq_name + " or correct the LocalQueue's spec.clusterQueue");
    return false;
  }
  const api::Object* active = api::FindCondition(*cq, "Active");
  const std::string cref = Ref("ClusterQueue", *cq);
  if (active != nullptr && api::NestedString(*active, {"status"}) != "True") {
    const std::string reason = api::NestedString(*active, {"reason"});
    std::vector<Evidence> ev = {{cref, ConditionField("Active", "reason"), reason},
                                {cref, ConditionField("Active", "message"), api::NestedString(*active, {"message"})}};
    std::string fix;
    // Name the missing flavors (the seeds' typo case).
    std::vector<std::string> missing;
    if (auto spec = cq->find("spec"); spec != cq->end() && spec->contains("resourceGroups")) {
      const api::Object& groups = (*spec)["resourceGroups"];
      for (size_t g = 0; groups.is_array() && g < groups.size(); ++g) {
        const api::Object& flavors = groups[g].value("flavors", api::Object::array());
        for (size_t f = 0; f < flavors.size(); ++f) {
          const std::string fname = flavors[f].value("name", "");
          if (view_.ResourceFlavor(fname) == nullptr) {
            missing.push_back(fname);
            ev.push_back({cref, "spec.resourceGroups[" + std::to_string(g) + "].flavors[" + std::to_string(f) + "].name",
                          fname});
          }
        }
      }
    }
    if (!missing.empty()) {
      std::string list;
      for (const std::string& m : missing) list += (list.empty() ? "" : ", ") + m;
      fix = "create ResourceFlavor " + list + ", or correct the flavor name in the ClusterQueue (`kubectl get "
            "resourceflavors` lists the existing ones)";
    } else if (reason == "Stopped") {
      fix = "set the ClusterQueue's spec.stopPolicy to None";
    }
    Add("ClusterQueue " + api::Name(*cq) + " (from LocalQueue " + ns + "/" + queue + ") is inactive: " + reason +
            (missing.empty() ? "" : " (ResourceFlavor " + missing.front() + " does not exist)") +
            "; an inactive ClusterQueue admits nothing",
        std::move(ev), std::move(fix));
    return false;
  }
  Add("The Workload is queued in LocalQueue " + ns + "/" + queue + " -> ClusterQueue " + api::Name(*cq) +
          (active != nullptr ? " (Active: " + api::NestedString(*active, {"reason"}) + ")" : ""),
      {{wref, "spec.queueName", queue}, {Ref("LocalQueue", *lq), "spec.clusterQueue", cq_name}});
  *cq_out = cq;
  return true;
}

// The ClusterQueue a Workload is queued in through its LocalQueue ("" when none).
std::string QueuedClusterQueue(const ClusterView& view, const api::Object& wl) {
  const api::Object* lq = view.LocalQueue(api::Namespace(wl), api::NestedString(wl, {"spec", "queueName"}));
  return lq == nullptr ? "" : api::NestedString(*lq, {"spec", "clusterQueue"});
}

int32_t WorkloadPriority(const api::Object& wl) {
  auto spec = wl.find("spec");
  if (spec == wl.end() || !spec->is_object()) return 0;
  auto p = spec->find("priority");
  return p != spec->end() && p->is_number_integer() ? p->get<int32_t>() : 0;
}

void Builder::QueuePosition(const api::Object& wl, const api::Object& cq) {
  const std::string cq_name = api::Name(cq);
  struct Entry {
    int32_t priority;
    Time created;
    std::string uid;
    const api::Object* obj;
  };
  std::vector<Entry> pending;
  for (const api::Object& w : view_.Workloads()) {
    if (api::IsConditionTrue(w, "QuotaReserved") || api::IsConditionTrue(w, "Finished")) continue;
    if (auto spec = w.find("spec"); spec != w.end() && spec->is_object() && spec->value("active", true) == false) continue;
    if (QueuedClusterQueue(view_, w) != cq_name) continue;
    pending.push_back({WorkloadPriority(w), CreationTime(w), api::Uid(w), &w});
  }
  // Kueue's queue order (BestEffortFIFO and StrictFIFO heaps): higher priority first,
  // then earlier queue-order timestamp, then uid.
  std::sort(pending.begin(), pending.end(), [](const Entry& a, const Entry& b) {
    return std::make_tuple(-static_cast<int64_t>(a.priority), a.created, a.uid) <
           std::make_tuple(-static_cast<int64_t>(b.priority), b.created, b.uid);
  });
  size_t pos = 0;
  std::string ahead;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (pending[i].obj == &wl) {
      pos = i + 1;
      break;
    }
    ahead += (ahead.empty() ? "" : ", ") + api::Namespace(*pending[i].obj) + "/" + api::Name(*pending[i].obj) +
             " (priority " + std::to_string(pending[i].priority) + ")";
  }
  if (pos == 0) return;
  Add("Position " + std::to_string(pos) + " of " + Plural(pending.size(), "pending workload") + " in ClusterQueue " +
          cq_name + " (Kueue's order: priority, then creation time); priority " +
          std::to_string(WorkloadPriority(wl)) + (ahead.empty() ? "" : "; ahead of it: " + ahead),
      {{Ref("Workload", wl), "spec.priority", std::to_string(WorkloadPriority(wl))},
       {Ref("Workload", wl), "metadata.creationTimestamp", api::NestedString(wl, {"metadata", "creationTimestamp"})}});
}

// The admission engine's view of the live Kueue objects.
struct Engine {
  admission::ResourceNames names;
  std::optional<admission::Snapshot> snap;
  std::map<std::string, const api::Object*> by_uid;  // workload uid -> object

  explicit Engine(const ClusterView& view) {
    std::vector<admission::ResourceFlavor> flavors;
    for (const api::Object& rf : view.ResourceFlavors()) flavors.push_back(kq::DecodeResourceFlavor(rf));
    std::vector<admission::ClusterQueue> cqs;
    for (const api::Object& cq : view.ClusterQueues()) cqs.push_back(kq::DecodeClusterQueue(cq, names));
    std::vector<admission::Cohort> cohorts;
    for (const api::Object& c : view.Cohorts()) cohorts.push_back(kq::DecodeCohort(c, names));
    snap.emplace(names, std::move(flavors), std::move(cqs), std::move(cohorts));
    for (const api::Object& w : view.Workloads()) {
      admission::Workload d = kq::DecodeWorkload(w, names);
      by_uid[d.uid] = &w;
      if (d.finished || d.state == admission::AdmissionState::kPending) continue;
      (void)snap->AddWorkload(d);  // admitted to a deleted ClusterQueue: holds nothing
    }
  }
};

std::string WorkloadName(const Engine& e, const admission::WorkloadInfo& wi) {
  auto it = e.by_uid.find(wi.workload.uid);
  return it == e.by_uid.end() ? wi.workload.Key() : api::Namespace(*it->second) + "/" + api::Name(*it->second);
}

std::string UsageText(const admission::Snapshot& snap, const admission::FrUsage& usage,
                      const std::vector<int>& only_frs) {
  std::string out;
  for (const auto& [fr, v] : usage) {
    if (!only_frs.empty() && std::find(only_frs.begin(), only_frs.end(), fr) == only_frs.end()) continue;
    out += (out.empty() ? "" : ", ") + AmountText(snap.names().Name(snap.FrResource(fr)), v) + " " + snap.names().Name(snap.FrResource(fr)) +
           " in " + snap.FlavorName(snap.FrFlavor(fr));
  }
  return out;
}

// The ClusterQueue's live status.flavorsReservation entry for (flavor, resource).
Evidence ReservationEvidence(const api::Object& cq, const std::string& flavor, const std::string& resource) {
  const api::Object& list = cq.value("status", api::Object::object()).value("flavorsReservation", api::Object::array());
  for (size_t i = 0; list.is_array() && i < list.size(); ++i) {
    if (list[i].value("name", "") != flavor) continue;
    const api::Object& res = list[i].value("resources", api::Object::array());
    for (size_t k = 0; res.is_array() && k < res.size(); ++k) {
      if (res[k].value("name", "") != resource) continue;
      const api::Object& total = res[k].value("total", api::Object());
      return {Ref("ClusterQueue", cq),
              "status.flavorsReservation[" + std::to_string(i) + "].resources[" + std::to_string(k) + "].total",
              total.is_string() ? total.get<std::string>() : total.dump()};
    }
  }
  return {Ref("ClusterQueue", cq), "status.flavorsReservation", "(not reported)"};
}

void Builder::Quota(const api::Object& wl_obj, const api::Object& cq_obj) {
  Engine e(view_);
  admission::Snapshot& snap = *e.snap;
  const int cq = snap.ClusterQueueIndex(api::Name(cq_obj));
  if (cq < 0) return;
  admission::Workload wl = kq::DecodeWorkload(wl_obj, e.names);
  wl.cluster_queue = api::Name(cq_obj);
  const std::string wref = Ref("Workload", wl_obj);
  const std::string cref = Ref("ClusterQueue", cq_obj);

  // What it needs, per resource, against each flavor of the covering group.
  admission::ResourceList total;
  for (const admission::PodSet& ps : wl.pod_sets) total.AddAll(admission::PodSetTotal(ps, ps.count));
  for (const auto& [r, need] : total.items()) {
    if (need == 0) continue;
    const std::string rname = e.names.Name(r);
    const int g = snap.GroupForResource(cq, r);
    if (g < 0) {
      Add("It requests " + AmountText(rname, need) + " " + rname + ", which ClusterQueue " + api::Name(cq_obj) +
              " does not cover: it can never be admitted there",
          {{wref, "spec.podSets[*].template.spec.containers[*].resources.requests." + rname, AmountText(rname, need)}},
          "add " + rname + " to a resourceGroup's coveredResources of ClusterQueue " + api::Name(cq_obj) +
              ", or remove the request");
      continue;
    }
    const auto& group_flavors = snap.Groups(cq)[static_cast<size_t>(g)].flavors;
    for (size_t fi = 0; fi < group_flavors.size(); ++fi) {
      const admission::ResolvedFlavor& f = group_flavors[fi];
      const auto& covered = snap.Groups(cq)[static_cast<size_t>(g)].covered;
      const size_t k = static_cast<size_t>(std::find(covered.begin(), covered.end(), r) - covered.begin());
      if (k >= f.frs.size() || f.frs[k] < 0) continue;
      const int fr = f.frs[k];
      const admission::Amount nominal = snap.Nominal(cq, fr);
      const admission::Amount used = snap.Usage(cq, fr);
      const admission::Amount local_free = std::max<admission::Amount>(0, admission::SubAmount(nominal, used));
      const admission::Amount available = snap.Available(cq, fr);
      const admission::Amount borrowable = std::max<admission::Amount>(0, admission::SubAmount(available, local_free));
      const std::string fname = snap.FlavorName(f.flavor);
      size_t holders = 0;
      for (const auto& [uid, wi] : snap.Workloads(cq)) {
        for (const auto& [wfr, v] : wi->usage) holders += (wfr == fr && v > 0) ? 1 : 0;
      }
      Add("Needs " + AmountText(rname, need) + " " + rname + " in flavor " + fname + ": nominalQuota " +
              AmountText(rname, nominal) + ", " + AmountText(rname, used) + " in use by " +
              Plural(holders, "admitted workload") + ", " + AmountText(rname, local_free) + " free, " +
              AmountText(rname, borrowable) + " borrowable from the cohort" +
              (available >= need ? " (fits)" : " (" + AmountText(rname, need - available) + " short)"),
          {{cref, "spec.resourceGroups[" + std::to_string(g) + "].flavors[" + std::to_string(fi) + "].resources[" +
                      std::to_string(k) + "].nominalQuota",
            AmountText(rname, nominal)},
           ReservationEvidence(cq_obj, fname, rname)});
    }
  }

  // What berth's Kueue decides now.
  admission::Preemptor preemptor;
  admission::Assignment a = admission::AssignFlavors(snap, cq, wl, &preemptor);
  const admission::FlavorAssignmentMode mode = a.RepresentativeMode();
  if (mode == admission::FlavorAssignmentMode::kFit) {
    const std::string unplaceable =
        never_placeable_ ? "; even once admitted its pods fit no node (above), so they stay Pending" : "";
    if (!blockers_.empty()) {
      Add("Its request fits the free quota now, but Kueue does not admit it: " + Join(blockers_, "; ") + unplaceable,
          {{cref, "status.pendingWorkloads",
            std::to_string(static_cast<int64_t>(cq_obj.value("status", api::Object::object()).value("pendingWorkloads", 0)))}});
      return;
    }
    const api::Object* qr = api::FindCondition(wl_obj, "QuotaReserved");
    if (qr != nullptr && api::NestedString(*qr, {"status"}) == "False" && !api::NestedString(*qr, {"message"}).empty()) {
      // The engine and Kueue disagree: Kueue's live decision stands.
      Add("berth's admission engine finds room for it in the free quota now, but Kueue's own last decision says "
          "otherwise (" + api::NestedString(*qr, {"reason"}) + ": " + api::NestedString(*qr, {"message"}) + "); Kueue has not admitted "
          "it, so its message is the one to act on (Kueue evaluates the Workload again when quota is released or the "
          "queue changes)" + unplaceable,
          {{wref, ConditionField("QuotaReserved", "message"), api::NestedString(*qr, {"message"})}});
      return;
    }
    Add("It fits the free quota now: Kueue admits it at its next scheduling cycle (when it reaches the head of the "
        "queue)" + unplaceable,
        {{cref, "status.pendingWorkloads", std::to_string(static_cast<int64_t>(cq_obj.value("status", api::Object::object())
                                                                                   .value("pendingWorkloads", 0)))}});
    return;
  }
  if (mode == admission::FlavorAssignmentMode::kPreempt) {
    std::vector<admission::PreemptionTarget> targets = preemptor.GetTargets(snap, cq, wl, a);
    if (!targets.empty()) {
      std::string list;
      std::vector<Evidence> ev;
      for (const admission::PreemptionTarget& t : targets) {
        list += (list.empty() ? "" : ", ") + WorkloadName(e, *t.workload) + " (priority " +
                std::to_string(t.workload->workload.priority) + ", " + t.reason + ")";
        ev.push_back({"Workload " + WorkloadName(e, *t.workload), "spec.priority",
                      std::to_string(t.workload->workload.priority)});
      }
      Add("Kueue can admit it by preempting " + list + ": they are evicted whole and requeued", std::move(ev));
      return;
    }
  }
  // No fit without preemption: who would have to finish? The smallest prefix, in
  // admission order, of the admitted workloads using the contested quota whose
  // removal makes the engine admit it, then minimised (walking back, as Kueue's
  // preemption does).
  std::vector<const admission::WorkloadInfo*> candidates;
  {
    admission::Assignment probe = admission::AssignFlavors(snap, cq, wl, nullptr);
    std::set<std::string> flavors_tried;
    for (const auto& ps : probe.pod_sets) {
      for (const auto& ra : ps.flavors) {
        if (ra.flavor >= 0) flavors_tried.insert(snap.FlavorName(ra.flavor));
      }
    }
    std::vector<int> frs;  // every fr of the flavors the ClusterQueue offers for the requested resources
    for (const auto& [r, need] : total.items()) {
      const int g = snap.GroupForResource(cq, r);
      if (g < 0 || need == 0) continue;
      const auto& grp = snap.Groups(cq)[static_cast<size_t>(g)];
      const size_t k = static_cast<size_t>(std::find(grp.covered.begin(), grp.covered.end(), r) - grp.covered.begin());
      for (const auto& f : grp.flavors) {
        if (k < f.frs.size() && f.frs[k] >= 0) frs.push_back(f.frs[k]);
      }
    }
    // Admitted workloads of the whole cohort tree that hold any of those frs.
    const int root = snap.Root(cq);
    for (int i = 0; i < snap.cluster_queue_count(); ++i) {
      const int node = snap.ClusterQueueNode(i);
      if (snap.Root(node) != root) continue;
      for (const auto& [uid, wi] : snap.Workloads(node)) {
        if (wi->workload.state != admission::AdmissionState::kAdmitted) continue;
        bool uses = false;
        for (const auto& [wfr, v] : wi->usage) uses |= v > 0 && std::find(frs.begin(), frs.end(), wfr) != frs.end();
        if (uses) candidates.push_back(wi);
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const admission::WorkloadInfo* x, const admission::WorkloadInfo* y) {
      return std::tie(x->workload.quota_reserved_time, x->workload.uid) <
             std::tie(y->workload.quota_reserved_time, y->workload.uid);
    });
  }
  auto fits_without = [&](const std::vector<const admission::WorkloadInfo*>& gone) {
    admission::Snapshot copy = snap;
    for (const admission::WorkloadInfo* w : gone) copy.RemoveWorkload(w->workload.uid);
    return admission::AssignFlavors(copy, cq, wl, nullptr).RepresentativeMode() == admission::FlavorAssignmentMode::kFit;
  };
  std::vector<const admission::WorkloadInfo*> chosen;
  bool fits = false;
  for (const admission::WorkloadInfo* c : candidates) {
    chosen.push_back(c);
    if (fits_without(chosen)) {
      fits = true;
      break;
    }
  }
  if (!fits) {
    // Not a.Message(): Kueue's text prints raw amounts (bytes); the needs per flavor above are canonical.
    Add("It does not fit even with every admitted workload gone: the request exceeds what ClusterQueue " +
            api::Name(cq_obj) + " can ever provide in any of its flavors (nominalQuota plus what it may borrow; the "
            "need per flavor and resource is above)",
        {{cref, "spec.resourceGroups", ""}},
        "raise nominalQuota (or borrowingLimit within a cohort) of ClusterQueue " + api::Name(cq_obj) +
            ", or lower the job's requests");
    return;
  }
  for (size_t i = chosen.size() - 1; i-- > 0;) {
    std::vector<const admission::WorkloadInfo*> without = chosen;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (fits_without(without)) chosen = std::move(without);
  }
  std::string list;
  std::vector<Evidence> ev;
  for (const admission::WorkloadInfo* w : chosen) {
    list += (list.empty() ? "" : ", ") + WorkloadName(e, *w) + " (holds " + UsageText(snap, w->usage, {}) +
            ", priority " + std::to_string(w->workload.priority) + ")";
    ev.push_back({"Workload " + WorkloadName(e, *w), "status.admission.clusterQueue", w->workload.cluster_queue});
  }
  const admission::ClusterQueue& spec = snap.Spec(cq);
  const bool preemption_off = spec.preemption.within_cluster_queue == admission::PreemptionPolicy::kNever &&
                              spec.preemption.reclaim_within_cohort == admission::PreemptionPolicy::kNever;
  Add("Insufficient quota: " + Plural(chosen.size(), "admitted workload") + " would have to finish before it fits: " +
          list + (preemption_off ? " (ClusterQueue " + api::Name(cq_obj) + " preempts nothing: preemption "
                                   "withinClusterQueue and reclaimWithinCohort are Never)"
                                 : " (none of them can be preempted for it under the ClusterQueue's preemption policy "
                                   "and the priorities)"),
      std::move(ev));
}

// ---------------------------------------------------------------------------
// Step 2: admitted, pods pending

void Builder::PodsPending(const api::Object& wl) {
  std::vector<const api::Object*> pending;
  size_t alive = 0;
  for (const api::Object* p : s_.pods) {
    if (IsTerminalPod(*p)) continue;
    ++alive;
    if (api::NestedString(*p, {"spec", "nodeName"}).empty()) pending.push_back(p);
  }
  const std::string wref = Ref("Workload", wl);
  const api::Object* adm = api::FindCondition(wl, "QuotaReserved");
  const std::string cq = api::NestedString(wl, {"status", "admission", "clusterQueue"});
  if (pending.empty() && alive > 0) {
    r_.layer = Layer::kRunning;
    r_.summary = "running: admitted by Kueue and every pod is placed on a node";
    std::set<std::string> nodes;
    for (const api::Object* p : s_.pods) {
      if (!IsTerminalPod(*p)) nodes.insert(api::NestedString(*p, {"spec", "nodeName"}));
    }
    std::string list;
    for (const std::string& n : nodes) list += (list.empty() ? "" : ", ") + n;
    Add("Admitted to ClusterQueue " + cq + "; " + Plural(alive, "pod") + " placed on " + list,
        {{wref, ConditionField("QuotaReserved", "lastTransitionTime"), adm ? api::NestedString(*adm, {"lastTransitionTime"}) : ""}});
    return;
  }
  r_.layer = Layer::kAdmittedPodsPending;
  r_.summary = "admitted, but pods are not running: Kueue reserved quota; the pods wait for placement (step 2: kube-scheduler)";
  if (alive == 0) {
    Add("Admitted to ClusterQueue " + cq + " but no pod exists yet: the job controller creates them once the job is "
        "unsuspended",
        {{wref, "status.admission.clusterQueue", cq}});
  } else {
    Add("Admitted to ClusterQueue " + cq + ", but " + std::to_string(pending.size()) + " of " +
            Plural(alive, "pod") + (pending.size() == 1 ? " is" : " are") +
            " Pending: quota is not capacity, the nodes must hold the pods",
        {{wref, "status.admission.clusterQueue", cq}});
    Placement(pending);
  }
  QuotaAboveNodes(wl);
}

void Builder::Placement(const std::vector<const api::Object*>& pending) {
  if (pending.empty()) return;
  placement::Snapshot snap;
  for (const api::Object& n : view_.Nodes()) snap.UpsertNode(sched::DecodeNode(n));
  for (const api::Object& p : view_.Pods()) {
    if (IsTerminalPod(p) || api::NestedString(p, {"spec", "nodeName"}).empty()) continue;
    (void)snap.AddPod(sched::DecodePod(p));  // a pod on an unknown node holds nothing placeable
  }
  placement::PlacementOptions options;
  options.enable_preemption = false;
  for (const api::Object* p : pending) {
    const std::string pref = Ref("Pod", *p);
    placement::Decision d = placement::Schedule(snap, sched::DecodePod(*p), options);
    std::vector<Evidence> ev;
    if (const api::Object* c = api::FindCondition(*p, "PodScheduled")) {
      ev.push_back({pref, ConditionField("PodScheduled", "message"), api::NestedString(*c, {"message"})});
    }
    if (d.bound()) {
      Add(pref + " is Pending but node " + d.node_name + " can hold it now: kube-scheduler places it at its next "
          "attempt",
          std::move(ev));
      continue;
    }
    std::string per_node;
    for (const placement::NodeFailure& f : d.failures) {
      std::string reasons;
      for (const std::string& r : f.status.reasons) reasons += (reasons.empty() ? "" : ", ") + r;
      per_node += "; node " + f.node_name + ": " + reasons;
      const api::Object* node = view_.Find(resources::kNodes, "", f.node_name);
      ev.push_back({"Node " + f.node_name, "status.allocatable",
                    node == nullptr ? "" : node->value("status", api::Object::object())
                                               .value("allocatable", api::Object::object())
                                               .dump()});
    }
    std::string fix;
    if (d.message.find("Insufficient") != std::string::npos) {
      fix = "lower the pod's requests to what a node can hold, or add node capacity";
    } else if (d.message.find("taint") != std::string::npos || d.message.find("affinity") != std::string::npos) {
      fix = "match the pod's tolerations / nodeSelector to the nodes (or the ResourceFlavor's nodeLabels and "
            "tolerations)";
    }
    Add(pref + " cannot be placed: " + d.message + per_node, std::move(ev), std::move(fix));
  }
}

void Builder::QuotaAboveNodes(const api::Object& wl) {
  const std::string cq_name = api::NestedString(wl, {"status", "admission", "clusterQueue"});
  const api::Object* cq = view_.ClusterQueue(cq_name);
  if (cq == nullptr) return;
  const api::Object& groups = cq->value("spec", api::Object::object()).value("resourceGroups", api::Object::array());
  // The flavors this Workload was admitted with.
  std::set<std::string> admitted;
  auto adm = wl.find("status");
  if (adm != wl.end() && adm->contains("admission")) {
    for (const api::Object& psa : (*adm)["admission"].value("podSetAssignments", api::Object::array())) {
      const api::Object flavors = psa.value("flavors", api::Object::object());
      for (const auto& [res, flavor] : flavors.items()) {
        if (flavor.is_string()) admitted.insert(flavor.get<std::string>());
      }
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const api::Object& flavors = groups[g].value("flavors", api::Object::array());
    for (size_t f = 0; f < flavors.size(); ++f) {
      const std::string fname = flavors[f].value("name", "");
      if (!admitted.count(fname)) continue;
      const api::Object* rf = view_.ResourceFlavor(fname);
      if (rf == nullptr) continue;
      FlavorCapacity cap = view_.NodeCapacity(*rf);
      const api::Object& res = flavors[f].value("resources", api::Object::array());
      for (size_t k = 0; k < res.size(); ++k) {
        const std::string rname = res[k].value("name", "");
        const admission::Amount nominal = kq::DecodeAmount(res[k].value("nominalQuota", api::Object()));
        auto it = cap.allocatable.find(rname);
        const int64_t alloc = it == cap.allocatable.end() ? 0 : it->second.milli();
        if (nominal <= alloc) continue;
        if (cap.nodes.empty()) {
          // Not a capacity question: the flavor's nodeLabels select no node at all.
          Add("ResourceFlavor " + fname + " (admitted for ClusterQueue " + cq_name + ") selects no node: no node has "
                  "every label of its spec.nodeLabels " +
                  rf->value("spec", api::Object::object()).value("nodeLabels", api::Object::object()).dump() +
                  ", so its pods get a nodeSelector no node satisfies and stay Pending (node(s) didn't match Pod's "
                  "node affinity/selector)",
              {{"ResourceFlavor " + fname, "spec.nodeLabels",
                rf->value("spec", api::Object::object()).value("nodeLabels", api::Object::object()).dump()}},
              "correct ResourceFlavor " + fname + "'s spec.nodeLabels to labels the nodes carry, or label the nodes "
              "(kubectl label node <node> <key>=<value>)");
          break;  // once per flavor
        }
        std::string nodes;
        for (const std::string& n : cap.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
        const std::string field = "spec.resourceGroups[" + std::to_string(g) + "].flavors[" + std::to_string(f) +
                                  "].resources[" + std::to_string(k) + "].nominalQuota";
        std::vector<Evidence> ev = {{Ref("ClusterQueue", *cq), field, AmountText(rname, nominal)}};
        for (const std::string& n : cap.nodes) {
          const api::Object* node = view_.Find(resources::kNodes, "", n);
          std::string v;
          if (node != nullptr) {
            const api::Object& a = node->value("status", api::Object::object()).value("allocatable", api::Object::object());
            if (a.contains(rname)) v = a[rname].is_string() ? a[rname].get<std::string>() : a[rname].dump();
          }
          ev.push_back({"Node " + n, "status.allocatable." + rname, v});
        }
        Add("ClusterQueue " + cq_name + " nominalQuota for " + rname + " in flavor " + fname + " is " +
                AmountText(rname, nominal) + ", above the " + AmountText(rname, alloc) +
                " allocatable of the " + Plural(cap.nodes.size(), "node") + " the flavor selects" +
                (nodes.empty() ? "" : " (" + nodes + ")") +
                ": Kueue admits workloads the nodes cannot hold, so their pods stay Pending",
            std::move(ev),
            "set nominalQuota to at most " + AmountText(rname, alloc) +
                " (the nodes' allocatable minus what system pods use: kubectl describe node)");
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Step 3: timeline

void Builder::Timeline() {
  std::vector<std::pair<std::string, const api::Object*>> objs;
  if (s_.job != nullptr) objs.push_back({Ref(*s_.job), s_.job});
  if (s_.workload != nullptr) objs.push_back({Ref("Workload", *s_.workload), s_.workload});
  if (s_.job == nullptr && s_.object != nullptr && s_.object != s_.workload) objs.push_back({Ref(*s_.object), s_.object});
  for (const api::Object* p : s_.pods) objs.push_back({Ref("Pod", *p), p});
  std::vector<TimelineEntry> t;
  for (const auto& [ref, obj] : objs) {
    const api::Object& conds = obj->value("status", api::Object::object()).value("conditions", api::Object::array());
    for (const api::Object& c : conds) {
      const std::string when = api::NestedString(c, {"lastTransitionTime"});
      if (when.empty()) continue;
      std::string what = api::NestedString(c, {"type"}) + "=" + api::NestedString(c, {"status"});
      if (!api::NestedString(c, {"reason"}).empty()) what += " " + api::NestedString(c, {"reason"});
      if (!api::NestedString(c, {"message"}).empty()) what += ": " + api::NestedString(c, {"message"});
      t.push_back({ParseTimeOrZero(when), ref, std::move(what)});
    }
    for (const api::Object* ev : view_.EventsFor(*obj)) {
      std::string when = api::NestedString(*ev, {"lastTimestamp"});
      if (when.empty()) when = api::NestedString(*ev, {"eventTime"});
      if (when.empty()) when = api::NestedString(*ev, {"firstTimestamp"});
      if (when.empty()) when = api::NestedString(*ev, {"metadata", "creationTimestamp"});
      std::string what = api::NestedString(*ev, {"type"}) + " " + api::NestedString(*ev, {"reason"}) + ": " + api::NestedString(*ev, {"message"});
      t.push_back({ParseTimeOrZero(when), ref, std::move(what)});
    }
  }
  std::stable_sort(t.begin(), t.end(), [](const TimelineEntry& a, const TimelineEntry& b) { return a.time < b.time; });
  r_.timeline = std::move(t);
}

}  // namespace

std::string_view LayerName(Layer layer) {
  switch (layer) {
    case Layer::kNotManaged: return "NotManaged";
    case Layer::kNotAdmitted: return "NotAdmitted";
    case Layer::kAdmittedPodsPending: return "AdmittedPodsPending";
    case Layer::kRunning: return "Running";
    case Layer::kEvicting: return "Evicting";
    case Layer::kFinished: return "Finished";
  }
  return "Unknown";
}

nlohmann::json ExplainReport::ToJson() const {
  nlohmann::json out = {{"kind", kind}, {"namespace", ns}, {"name", name}, {"layer", std::string(LayerName(layer))},
                        {"summary", summary}, {"asOf", FormatRfc3339(as_of)}};
  nlohmann::json fs = nlohmann::json::array();
  for (const ExplainFinding& f : findings) {
    nlohmann::json ev = nlohmann::json::array();
    for (const Evidence& e : f.evidence) ev.push_back({{"object", e.object}, {"field", e.field}, {"value", e.value}});
    nlohmann::json j = {{"statement", f.statement}, {"evidence", std::move(ev)}};
    if (!f.fix.empty()) j["fix"] = f.fix;
    fs.push_back(std::move(j));
  }
  out["findings"] = std::move(fs);
  nlohmann::json tl = nlohmann::json::array();
  for (const TimelineEntry& e : timeline) {
    tl.push_back({{"time", FormatRfc3339(e.time)}, {"object", e.object}, {"what", e.what}});
  }
  out["timeline"] = std::move(tl);
  return out;
}

std::string ExplainReport::ToText() const {
  std::ostringstream out;
  out << kind << " " << (ns.empty() ? "" : ns + "/") << name << ": " << LayerName(layer) << "\n";
  out << "  " << summary << "\n";
  int i = 0;
  for (const ExplainFinding& f : findings) {
    out << "\n" << ++i << ". " << f.statement << "\n";
    for (const Evidence& e : f.evidence) {
      out << "   evidence: " << e.object << " " << e.field;
      if (!e.value.empty()) out << " = " << e.value;
      out << "\n";
    }
    if (!f.fix.empty()) out << "   fix: " << f.fix << "\n";
  }
  if (!timeline.empty()) {
    out << "\nTimeline:\n";
    for (const TimelineEntry& e : timeline) {
      out << "  " << FormatRfc3339(e.time) << " (" << HumanDuration(as_of - e.time) << " ago)  " << e.object << "  "
          << e.what << "\n";
    }
  }
  return out.str();
}

StatusOr<ExplainReport> Explain(const ClusterView& view, const std::string& kind, const std::string& ns,
                                const std::string& name, Clock& clock) {
  auto entry = ResolveKind(kind);
  if (!entry.ok()) return entry.status();
  const KindEntry& k = *entry.value();
  const api::Object* obj = view.Find(*k.gvr, ns, name);
  if (obj == nullptr) {
    return Status(Code::kNotFound, k.gvr->resource + (k.gvr->group.empty() ? "" : "." + k.gvr->group) + " \"" + name +
                                       "\" not found");
  }
  Subject s;
  s.kind = &k;
  s.object = obj;
  if (k.gvr == &resources::kWorkloads) {
    s.workload = obj;
    const api::Object* owner = nullptr;
    if (auto m = obj->find("metadata"); m != obj->end() && m->contains("ownerReferences")) {
      const api::Object& refs = (*m)["ownerReferences"];
      if (refs.is_array() && !refs.empty()) owner = view.FindByUid(api::NestedString(refs[0], {"uid"}));
    }
    s.job = owner;
    if (owner != nullptr) s.pods = view.PodsOf(*owner);
  } else if (k.gvr == &resources::kPods) {
    const api::Object* wl = nullptr;
    s.job = JobWithWorkload(view, *obj, &wl);
    s.workload = wl;
    if (s.job == nullptr) {
      const api::Object* top = TopOwner(view, *obj);
      s.job = top != obj ? top : nullptr;
    }
    s.pods = {obj};
  } else {
    // A job kind owned by another (a TrainJob's JobSet, a JobSet's Jobs): the
    // nearest owner with a Workload, else the top of the controller chain.
    const api::Object* wl = nullptr;
    s.job = JobWithWorkload(view, *obj, &wl);
    if (s.job == nullptr) s.job = TopOwner(view, *obj);
    s.workload = wl;
    s.pods = view.PodsOf(*s.job);
  }
  ExplainReport report;
  report.kind = k.kind;
  report.ns = ns;
  report.name = name;
  report.as_of = clock.Now();
  Builder(view, std::move(s), &report).Run();
  return report;
}

StatusOr<ExplainReport> Explain(client::Client& client, const std::string& kind, const std::string& ns,
                                const std::string& name, Clock& clock) {
  auto kind_ok = ResolveKind(kind);
  if (!kind_ok.ok()) return kind_ok.status();
  auto view = ClusterView::Fetch(client);
  if (!view.ok()) return view.status();
  return Explain(view.value(), kind, ns, name, clock);
}

namespace {

// %XX escapes of one path segment or query value.
std::string Unescape(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size() && std::isxdigit(static_cast<unsigned char>(in[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(in[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(in.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(in[i] == '+' ? ' ' : in[i]);
    }
  }
  return out;
}

}  // namespace

StatusOr<ExplainHttpBody> ServeExplain(client::Client& client, const std::string& method, const std::string& target,
                                       Clock& clock) {
  if (method != "GET") {
    return Status(Code::kMethodNotAllowed, "the server does not allow this method on the requested resource");
  }
  std::string_view path = target;
  std::string_view query;
  if (size_t q = path.find('?'); q != std::string_view::npos) {
    query = path.substr(q + 1);
    path = path.substr(0, q);
  }
  const Status not_found(Code::kNotFound, "the server could not find the requested resource");
  const std::string_view prefix = kExplainPathPrefix;
  if (path.substr(0, prefix.size()) != prefix) return not_found;
  path.remove_prefix(prefix.size());
  std::vector<std::string> segs;
  while (!path.empty()) {
    if (path.front() == '/') {
      path.remove_prefix(1);
      continue;
    }
    size_t end = path.find('/');
    segs.push_back(Unescape(path.substr(0, end)));
    path = end == std::string_view::npos ? std::string_view() : path.substr(end);
  }
  if (segs.size() != 4 || segs[0] != "namespaces") return not_found;
  std::string output = "json";
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (kv.substr(0, 7) == "output=") output = Unescape(kv.substr(7));
  }
  if (output != "json" && output != "text") {
    return Status(Code::kBadRequest, "unknown output \"" + output + "\": must be json or text");
  }
  BERTH_ASSIGN_OR_RETURN(ExplainReport report, Explain(client, segs[2], segs[1], segs[3], clock));
  if (output == "text") return ExplainHttpBody{"text/plain; charset=utf-8", report.ToText()};
  return ExplainHttpBody{"application/json", report.ToJson().dump() + "\n"};
}

}  // namespace berth::cli::diagnostics
