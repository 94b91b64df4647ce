#include "cli/diagnostics/lint.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <sstream>

#include "api/conversion.h"
#include "api/unstructured.h"
#include "controllers/jobs/batchjob/job_pods.h"
#include "controllers/jobs/jobset/jobset_children.h"
#include "controllers/jobs/pytorchjob/pytorchjob_pods.h"
#include "controllers/jobs/trainjob/trainjob_builder.h"
#include "controllers/kueue/decoder.h"
#include "core/quantity.h"

namespace berth::cli::diagnostics {

namespace resources {
const client::GroupVersionResource kClusterTrainingRuntimes{"trainer.kubeflow.org", "v1alpha1",
                                                            "clustertrainingruntimes"};
const client::GroupVersionResource kTrainingRuntimes{"trainer.kubeflow.org", "v1alpha1", "trainingruntimes"};
}  // namespace resources

namespace {

using api::Object;

using controllers::kueue::kPriorityClassLabel;
constexpr char kKueueV1beta1[] = "kueue.x-k8s.io/v1beta1";
constexpr int64_t kDefaultGracePeriodSeconds = 30;  // the Pod API's default

using api::AsString;
using api::Field;

bool HasControllerOwner(const Object& obj) {
  const Object& refs = Field(Field(obj, "metadata"), "ownerReferences");
  if (!refs.is_array()) return false;
  for (const Object& r : refs) {
    if (Field(r, "controller").is_boolean() && Field(r, "controller").get<bool>()) return true;
  }
  return false;
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Up to 5 items joined by sep, then "and N more": a finding stays readable on a big cluster.
std::string JoinCapped(const std::vector<std::string>& items, std::string_view sep) {
  constexpr size_t kMax = 5;
  std::string out;
  for (size_t i = 0; i < items.size() && i < kMax; ++i) out += (i ? std::string(sep) : "") + items[i];
  if (items.size() > kMax) out += std::string(sep) + "and " + std::to_string(items.size() - kMax) + " more";
  return out;
}

// ---------------------------------------------------------------------------------------
// The pod PriorityClass a pod template gets (kube-apiserver's Priority admission).

struct PodClass {
  std::string name;                // the class applied ("" when none)
  bool from_default = false;       // no priorityClassName: the globalDefault class
  int64_t value = 0;
  bool preempts = true;            // preemptionPolicy is not Never
  const Object* object = nullptr;  // the PriorityClass, nullptr when none
};

bool PolicyPreempts(const Object& pc) { return AsString(Field(pc, "preemptionPolicy")) != "Never"; }

std::string Describe(const PodClass& c) {
  if (c.object == nullptr) {
    return c.name.empty() ? "no PriorityClass (priority 0, preemptionPolicy PreemptLowerPriority)"
                          : "PriorityClass " + Quote(c.name) + " (not found)";
  }
  return "PriorityClass " + Quote(c.name) + " (value " + std::to_string(c.value) + ", preemptionPolicy " +
         (c.preempts ? "PreemptLowerPriority" : "Never") + ")";
}

// ---------------------------------------------------------------------------------------
// Training jobs and their pod groups.

struct PodGroup {
  std::string name;
  int32_t count = 0;
  Object pod_template;          // {metadata, spec}
  std::string spec_field;       // path of the template's spec in the job ("" for a TrainJob)
  std::string runtime_where;    // TrainJob: "ClusterTrainingRuntime torch-distributed ...spec"
  admission::PodSet decoded;    // per-pod requests, nodeSelector
  PodClass pod_class;
  std::string class_name_written;  // spec.priorityClassName as written
};

struct Job {
  const Object* object = nullptr;
  std::string kind, ns, name;
  std::vector<PodGroup> groups;
  int64_t gang = 0;
  bool bare_pod = false;
  std::optional<std::string> queue_name;  // the queue-name label
  int64_t workload_priority = 0;
  std::string workload_priority_source;   // "WorkloadPriorityClass \"x\"" / "PriorityClass \"y\"" / ""
  std::vector<scheduling::Labels> selectors;  // node selectors (see lint.h)
  std::string cluster_queue;              // via its LocalQueue; "" when unknown

  std::string Id() const { return kind + " " + (ns.empty() ? name : ns + "/" + name); }
  // Field of a pod group's spec (or the runtimeRef for a TrainJob, whose templates live in its runtime).
  std::string FieldOf(const PodGroup& g, std::string_view leaf) const {
    return g.spec_field.empty() ? "spec.runtimeRef" : FieldChild(g.spec_field, leaf);
  }
  // " (in ClusterTrainingRuntime x ...)" for a TrainJob's groups.
  std::string Where(const PodGroup& g, std::string_view leaf) const {
    return g.runtime_where.empty() ? "" : " (" + FieldChild(g.runtime_where, leaf) + ")";
  }
  int64_t MaxPodPriority() const {
    int64_t v = INT64_MIN;
    for (const PodGroup& g : groups) v = std::max(v, g.pod_class.value);
    return groups.empty() ? 0 : v;
  }
  const PodGroup* LowestClassGroup() const {
    const PodGroup* best = nullptr;
    for (const PodGroup& g : groups) {
      if (best == nullptr || g.pod_class.value < best->pod_class.value) best = &g;
    }
    return best;
  }
  const PodGroup* HighestClassGroup() const {
    const PodGroup* best = nullptr;
    for (const PodGroup& g : groups) {
      if (best == nullptr || g.pod_class.value > best->pod_class.value) best = &g;
    }
    return best;
  }
};

// A resource amount in the words of the cost messages: "12 GPUs", "3 CPUs", "8Gi memory".
std::string AmountText(const std::string& resource, admission::Amount milli) {
  std::string q = Quantity::FromMilli(milli).String();
  std::string lower = resource;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.find("gpu") != std::string::npos) return q + (milli == 1000 ? " GPU" : " GPUs");
  if (resource == "cpu") return q + (milli == 1000 ? " CPU" : " CPUs");
  return q + " " + resource;
}

class Linter {
 public:
  Linter(const ClusterView& view, const Provenance& provenance) : view_(view), provenance_(provenance) {
    CollectJobs();
  }

  std::vector<Finding> Run() {
    PodPreemption();
    MixedPodClasses();
    PriorityOrder();
    QueueRules();
    ClusterQueueRules();
    WithinClusterQueueNever();
    V1beta1();
    GracePeriod();
    std::sort(findings_.begin(), findings_.end(), [](const Finding& a, const Finding& b) {
      return std::tie(a.severity, a.rule, a.object.kind, a.object.ns, a.object.name, a.field, a.message) <
             std::tie(b.severity, b.rule, b.object.kind, b.object.ns, b.object.name, b.field, b.message);
    });
    return std::move(findings_);
  }

 private:
  const ClusterView& view_;
  const Provenance& provenance_;
  admission::ResourceNames names_;
  std::vector<Job> jobs_;   // training jobs, in view order
  std::vector<Job> pods_;   // bare Pods (preemptors only)
  std::vector<Finding> findings_;

  // ---- findings ------------------------------------------------------------------------

  void Add(std::string rule, Severity severity, const Object& obj, std::string field, std::string message,
           std::string fix) {
    Finding f;
    f.rule = std::move(rule);
    f.severity = severity;
    f.object.kind = api::StringAt(obj, "kind");
    f.object.ns = api::Namespace(obj);
    f.object.name = api::Name(obj);
    f.object.api_version = api::StringAt(obj, "apiVersion");
    auto origin = provenance_.find(ObjectKey{f.object.kind, f.object.ns, f.object.name});
    if (origin != provenance_.end()) {
      f.object.api_version = origin->second.api_version;
      f.object.source = origin->second.source;
      // The line of the field, else of its closest written ancestor.
      std::string path = field;
      while (true) {
        auto it = origin->second.lines.find(path);
        if (it != origin->second.lines.end()) {
          f.object.line = it->second;
          break;
        }
        if (path.empty()) break;
        size_t cut = path.find_last_of(".[");
        path = cut == std::string::npos ? "" : path.substr(0, cut);
      }
    }
    f.field = std::move(field);
    f.message = std::move(message);
    f.fix = std::move(fix);
    findings_.push_back(std::move(f));
  }

  // ---- jobs ----------------------------------------------------------------------------

  PodClass ResolveClass(const std::string& written) const {
    PodClass c;
    const Object* pc = view_.ResolvePriorityClass(written);
    c.from_default = written.empty();
    c.name = written;
    if (pc != nullptr) {
      c.object = pc;
      c.name = api::Name(*pc);
      c.value = Field(*pc, "value").is_number_integer() ? Field(*pc, "value").get<int64_t>() : 0;
      c.preempts = PolicyPreempts(*pc);
    }
    return c;
  }

  void AddGroup(Job* job, std::string name, int32_t count, const Object& tmpl, std::string spec_field,
                std::string runtime_where) {
    PodGroup g;
    g.name = std::move(name);
    g.count = count;
    g.pod_template = tmpl;
    g.spec_field = std::move(spec_field);
    g.runtime_where = std::move(runtime_where);
    g.decoded = controllers::kueue::DecodePodSet(g.name, count, tmpl, names_);
    g.class_name_written = AsString(Field(Field(tmpl, "spec"), "priorityClassName"));
    g.pod_class = ResolveClass(g.class_name_written);
    job->gang += count;
    job->groups.push_back(std::move(g));
  }

  void CollectJobs() {
    using controllers::kueue::PodSet;
    for (const Object& o : view_.Objects(resources::kJobs)) {
      if (HasControllerOwner(o)) continue;
      Job job = NewJob(o);
      for (const PodSet& ps : controllers::jobs::batchjob::PodSets(o)) {
        AddGroup(&job, ps.name, ps.count, ps.template_spec, "spec.template.spec", "");
      }
      jobs_.push_back(std::move(job));
    }
    for (const Object& o : view_.Objects(resources::kJobSets)) {
      if (HasControllerOwner(o)) continue;
      Job job = NewJob(o);
      std::vector<PodSet> sets = controllers::jobs::jobset::PodSets(o);
      for (size_t i = 0; i < sets.size(); ++i) {
        AddGroup(&job, sets[i].name, sets[i].count, sets[i].template_spec,
                 FieldIndex("spec.replicatedJobs", i) + ".template.spec.template.spec", "");
      }
      jobs_.push_back(std::move(job));
    }
    for (const Object& o : view_.Objects(resources::kTrainJobs)) {
      if (HasControllerOwner(o)) continue;
      Job job = NewJob(o);
      controllers::jobs::trainjob::RuntimeRef ref = controllers::jobs::trainjob::RuntimeRef::FromTrainJob(o);
      const Object* runtime = ref.cluster_scoped() ? view_.Find(resources::kClusterTrainingRuntimes, "", ref.name)
                                                   : view_.Find(resources::kTrainingRuntimes, job.ns, ref.name);
      if (runtime != nullptr) {
        auto sets = controllers::jobs::trainjob::PodSets(o, *runtime);
        if (sets.ok()) {
          for (size_t i = 0; i < sets->size(); ++i) {
            AddGroup(&job, (*sets)[i].name, (*sets)[i].count, (*sets)[i].template_spec, "",
                     "in " + ref.kind + " " + ref.name + " " +
                         FieldIndex("spec.template.spec.replicatedJobs", i) + ".template.spec.template.spec");
          }
        }
      }
      jobs_.push_back(std::move(job));
    }
    for (const Object& o : view_.Objects(resources::kPyTorchJobs)) {
      if (HasControllerOwner(o)) continue;
      Job job = NewJob(o);
      std::vector<std::string> types = controllers::jobs::pytorchjob::ReplicaTypes(o);
      std::vector<PodSet> sets = controllers::jobs::pytorchjob::PodSets(o);
      for (size_t i = 0; i < sets.size() && i < types.size(); ++i) {
        AddGroup(&job, sets[i].name, sets[i].count, sets[i].template_spec,
                 FieldChild("spec.pytorchReplicaSpecs", types[i]) + ".template.spec", "");
      }
      jobs_.push_back(std::move(job));
    }
    for (Job& job : jobs_) FinishJob(&job);
    // Bare pods (no controller): they preempt like any pod (the seed's inference pod).
    for (const Object& o : view_.Pods()) {
      if (HasControllerOwner(o)) continue;
      Job pod = NewJob(o);
      pod.bare_pod = true;
      AddGroup(&pod, "pod", 1, Object{{"metadata", Field(o, "metadata")}, {"spec", Field(o, "spec")}}, "spec", "");
      FinishJob(&pod);
      pods_.push_back(std::move(pod));
    }
  }

  Job NewJob(const Object& o) const {
    Job job;
    job.object = &o;
    job.kind = api::StringAt(o, "kind");
    job.ns = api::Namespace(o);
    job.name = api::Name(o);
    job.queue_name = LabelValue(o, kQueueNameLabel);
    return job;
  }

  void FinishJob(Job* job) const {
    // Kueue's workload priority.
    if (auto wpc_name = LabelValue(*job->object, kPriorityClassLabel)) {
      if (const Object* wpc = view_.WorkloadPriorityClass(*wpc_name)) {
        job->workload_priority = Field(*wpc, "value").is_number_integer() ? Field(*wpc, "value").get<int64_t>() : 0;
        job->workload_priority_source = "WorkloadPriorityClass " + Quote(*wpc_name);
      }
    }
    if (job->workload_priority_source.empty() && !job->groups.empty() && job->groups[0].pod_class.object) {
      job->workload_priority = job->groups[0].pod_class.value;
      job->workload_priority_source = "PriorityClass " + Quote(job->groups[0].pod_class.name);
    }
    // ClusterQueue and flavors.
    std::vector<const Object*> flavors;
    bool flavors_known = false;
    if (job->queue_name) {
      if (const Object* lq = view_.LocalQueue(job->ns, *job->queue_name)) {
        if (const Object* cq = view_.ClusterQueueFor(*lq)) {
          job->cluster_queue = api::Name(*cq);
          flavors_known = true;
          for (const Object& rg : Field(Field(*cq, "spec"), "resourceGroups")) {
            for (const Object& fl : Field(rg, "flavors")) {
              const Object* rf = view_.ResourceFlavor(AsString(Field(fl, "name")));
              if (rf != nullptr && std::find(flavors.begin(), flavors.end(), rf) == flavors.end()) {
                flavors.push_back(rf);
              }
            }
          }
        }
      }
    }
    for (const PodGroup& g : job->groups) {
      if (!flavors_known || flavors.empty()) {
        job->selectors.push_back(g.decoded.node_selector);
        continue;
      }
      for (const Object* rf : flavors) {
        scheduling::Labels sel = g.decoded.node_selector;
        bool ok = true;
        const Object& labels = Field(Field(*rf, "spec"), "nodeLabels");
        if (labels.is_object()) {
          for (auto it = labels.begin(); it != labels.end(); ++it) {
            auto [pos, inserted] = sel.emplace(it.key(), AsString(*it));
            if (!inserted && pos->second != AsString(*it)) ok = false;
          }
        }
        if (ok) job->selectors.push_back(std::move(sel));
      }
    }
  }

  static bool Matches(const scheduling::Labels& sel, const Object& node) {
    for (const auto& [k, v] : sel) {
      if (LabelValue(node, k) != v) return false;
    }
    return true;
  }
  static bool Compatible(const scheduling::Labels& a, const scheduling::Labels& b) {
    for (const auto& [k, v] : a) {
      auto it = b.find(k);
      if (it != b.end() && it->second != v) return false;
    }
    return true;
  }

  bool ShareNodes(const Job& a, const Job& b) const {
    if (!view_.Nodes().empty()) {
      for (const Object& node : view_.Nodes()) {
        bool ma = std::any_of(a.selectors.begin(), a.selectors.end(), [&](const auto& s) { return Matches(s, node); });
        bool mb = std::any_of(b.selectors.begin(), b.selectors.end(), [&](const auto& s) { return Matches(s, node); });
        if (ma && mb) return true;
      }
      return false;
    }
    for (const auto& sa : a.selectors) {
      for (const auto& sb : b.selectors) {
        if (Compatible(sa, sb)) return true;
      }
    }
    return false;
  }

  // "one preempted worker leaves 12 GPUs idle": the largest pod group loses one pod, the
  // rest of the gang keeps its resources and cannot train.
  std::string GangCost(const Job& job) {
    if (job.groups.empty()) return "";
    const PodGroup* victim = &job.groups[0];
    for (const PodGroup& g : job.groups) {
      if (g.count >= victim->count) victim = &g;
    }
    // The accelerator: the first GPU-like resource the job requests, else cpu.
    std::string resource;
    for (const PodGroup& g : job.groups) {
      for (size_t id = 0; id < names_.size() && resource.empty(); ++id) {
        std::string lower = names_.Name(static_cast<admission::ResourceId>(id));
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        if (lower.find("gpu") != std::string::npos && g.decoded.requests.Get(static_cast<admission::ResourceId>(id)) > 0) {
          resource = names_.Name(static_cast<admission::ResourceId>(id));
        }
      }
    }
    if (resource.empty()) resource = "cpu";
    admission::ResourceId rid = names_.Find(resource);
    admission::Amount total = 0;
    for (const PodGroup& g : job.groups) total += (rid < 0 ? 0 : g.decoded.requests.Get(rid)) * g.count;
    admission::Amount idle = total - (rid < 0 ? 0 : victim->decoded.requests.Get(rid));
    const int64_t rest = job.gang - 1;
    return "one preempted " + victim->name + " pod leaves " +
           (rest == 1 ? std::string("the other pod") : "the other " + std::to_string(rest) + " pods") +
           " of the gang holding " + AmountText(resource, idle) + " idle";
  }

  // ---- rules 1 and 2: pod-level preemption ---------------------------------------------

  void PodPreemption() {
    std::map<std::string, std::vector<std::string>> default_users;  // default class -> jobs
    for (const Job& job : jobs_) {
      if (job.gang < 2) continue;  // not a gang
      std::set<std::string> reported;
      for (const PodGroup& g : job.groups) {
        const PodClass& c = g.pod_class;
        if (c.object == nullptr || !c.preempts) continue;
        if (c.from_default) {
          auto& users = default_users[c.name];
          if (users.empty() || users.back() != job.Id()) users.push_back(job.Id());
          continue;
        }
        if (!reported.insert(c.name).second) continue;
        Add("pod-preemption-on-training-pods", Severity::kError, *job.object,
            job.FieldOf(g, "priorityClassName"),
            "the " + g.name + " pods of this job get " + Describe(c) + job.Where(g, "priorityClassName") +
                ": kube-scheduler may evict single pods of lower priority to place them, one gang member at a "
                "time, instead of Kueue preempting whole workloads; a gang that loses one pod stops training (for "
                "this job: " + GangCost(job) + ")",
            "set preemptionPolicy: Never on PriorityClass " + Quote(c.name) +
                " (one class, value 0, for every training job, e.g. pytorchjob-zero-priority) and let Kueue "
                "preempt whole workloads (ClusterQueue spec.preemption.withinClusterQueue: LowerPriority)");
      }
    }
    for (auto& [cls, users] : default_users) {
      std::sort(users.begin(), users.end());
      users.erase(std::unique(users.begin(), users.end()), users.end());
      const Object* pc = view_.PriorityClass(cls);
      const std::string list = JoinCapped(users, ", ");
      Add("global-default-priority-class", Severity::kError, *pc, "globalDefault",
          "this globalDefault class (value " + std::to_string(ResolveClass(cls).value) +
              ", preemptionPolicy PreemptLowerPriority) is given to every training pod without "
              "priorityClassName (" + list + "): those pods may preempt single gang members of lower-priority "
              "jobs, and Kueue's whole-workload preemption no longer decides alone",
          "write priorityClassName: pytorchjob-zero-priority (value 0, preemptionPolicy: Never) in every training "
          "pod template, or set preemptionPolicy: Never on " + Quote(cls));
    }
  }

  // ---- rule 3: different pod classes on shared nodes -----------------------------------

  void MixedPodClasses() {
    std::vector<const Job*> preemptors;
    for (const Job& j : jobs_) preemptors.push_back(&j);
    for (const Job& p : pods_) preemptors.push_back(&p);
    for (const Job& victim : jobs_) {
      if (victim.gang < 2) continue;
      const PodGroup* low = victim.LowestClassGroup();
      if (low == nullptr) continue;
      std::vector<std::string> by;
      for (const Job* p : preemptors) {
        if (p == &victim) continue;
        const PodGroup* high = p->HighestClassGroup();
        if (high == nullptr || !high->pod_class.preempts) continue;
        if (high->pod_class.value <= low->pod_class.value || high->pod_class.name == low->pod_class.name) continue;
        if (!ShareNodes(victim, *p)) continue;
        by.push_back((p->bare_pod ? "Pod " + p->ns + "/" + p->name : p->Id()) + " with " + Describe(high->pod_class));
      }
      if (by.empty()) continue;
      std::sort(by.begin(), by.end());
      const std::string list = JoinCapped(by, "; ");
      Add("mixed-pod-priority-classes", Severity::kError, *victim.object, victim.FieldOf(*low, "priorityClassName"),
          "the " + low->name + " pods of this job, with " + Describe(low->pod_class) +
              victim.Where(*low, "priorityClassName") + ", share nodes with pods of a higher PriorityClass that may "
              "preempt them one at a time: " + list + "; " + GangCost(victim),
          "give every training job the same PriorityClass (value 0, preemptionPolicy: Never, e.g. "
          "pytorchjob-zero-priority) and order jobs with the kueue.x-k8s.io/priority-class label instead");
    }
  }

  // ---- rule 4: Kueue and the scheduler order two jobs differently ----------------------

  void PriorityOrder() {
    for (const Job& a : jobs_) {
      if (!a.queue_name) continue;
      std::vector<std::string> lower;
      for (const Job& b : jobs_) {
        if (&a == &b || !b.queue_name) continue;
        if (a.workload_priority <= b.workload_priority) continue;
        if (a.MaxPodPriority() >= b.MaxPodPriority()) continue;
        if (!ShareNodes(a, b) && (a.cluster_queue.empty() || a.cluster_queue != b.cluster_queue)) continue;
        lower.push_back(b.Id() + " (workload priority " + std::to_string(b.workload_priority) +
                        (b.workload_priority_source.empty() ? "" : " from " + b.workload_priority_source) + ", " +
                        Describe(b.HighestClassGroup()->pod_class) + ")");
      }
      if (lower.empty()) continue;
      const PodGroup* ga = a.HighestClassGroup();
      Add("priority-order-mismatch", Severity::kWarning, *a.object, a.FieldOf(*ga, "priorityClassName"),
          "Kueue admits this job (workload priority " + std::to_string(a.workload_priority) + " from " +
              a.workload_priority_source + ", pods with " + Describe(ga->pod_class) + ") before " +
              JoinCapped(lower, "; ") +
              ", but kube-scheduler ranks those jobs' pods higher: once admitted, this job's pods queue behind, or "
              "are preempted by, pods of jobs Kueue ranked lower",
          "use one PriorityClass for every training pod and express job priority only with the "
          "kueue.x-k8s.io/priority-class label (WorkloadPriorityClass)");
    }
  }

  // ---- rule 7: queue-name ---------------------------------------------------------------

  void QueueRules() {
    static const std::vector<std::string> kKeys = {kQueueNameLabel, kPriorityClassLabel};
    for (const Job& job : jobs_) {
      const Object& meta = Field(*job.object, "metadata");
      const Object& labels = Field(meta, "labels");
      const Object& annotations = Field(meta, "annotations");
      if (!job.queue_name && AnnotationValue(*job.object, kQueueNameLabel)) {
        Add("queue-name-label", Severity::kError, *job.object, FieldChild("metadata.annotations", kQueueNameLabel),
            "kueue.x-k8s.io/queue-name is written as an annotation: Kueue reads only the label, so no Workload "
            "is created, the job is not queued or counted against any quota and its pods are created at once "
            "(it does not show in kubectl get workloads)",
            "move it to metadata.labels: kueue.x-k8s.io/queue-name: " +
                *AnnotationValue(*job.object, kQueueNameLabel));
      }
      for (const auto& [map, field] : {std::pair{&labels, "metadata.labels"}, {&annotations, "metadata.annotations"}}) {
        if (!map->is_object()) continue;
        for (auto it = map->begin(); it != map->end(); ++it) {
          const std::string& key = it.key();
          for (const std::string& want : kKeys) {
            if (key == want) continue;
            size_t d = EditDistance(key, want);
            if (d == 0 || d > 3) continue;
            Add("queue-name-label", Severity::kError, *job.object, FieldChild(field, key),
                Quote(key) + " is not a key Kueue reads (did you mean " + Quote(want) + "?)" +
                    (want == kQueueNameLabel ? ": the job is not managed by Kueue, no Workload is created and its "
                                               "pods start at once outside any quota"
                                             : ": the job's workload priority falls back to its pod PriorityClass"),
                "write the label " + want + ": " + AsString(*it));
          }
        }
      }
      if (job.queue_name && view_.LocalQueue(job.ns, *job.queue_name) == nullptr) {
        if (!view_.Covers(resources::kLocalQueues)) {
          NotInInput(*job.object, FieldChild("metadata.labels", kQueueNameLabel), "LocalQueue",
                     job.ns + "/" + *job.queue_name);
          continue;
        }
        std::string suggestion;
        size_t best = 3;
        for (const Object& lq : view_.LocalQueues()) {
          if (api::Namespace(lq) != job.ns) continue;
          size_t d = EditDistance(api::Name(lq), *job.queue_name);
          if (d < best) {
            best = d;
            suggestion = api::Name(lq);
          }
        }
        Add("queue-name-label", Severity::kError, *job.object, FieldChild("metadata.labels", kQueueNameLabel),
            "LocalQueue " + Quote(*job.queue_name) + " does not exist in namespace " + Quote(job.ns) +
                (suggestion.empty() ? "" : " (did you mean " + Quote(suggestion) + "?)") +
                ": Kueue keeps the job suspended and its Workload inadmissible until the queue exists",
            suggestion.empty() ? "create LocalQueue " + Quote(*job.queue_name) + " in namespace " + Quote(job.ns) +
                                     " (spec.clusterQueue: <your ClusterQueue>) or name an existing one"
                               : "set kueue.x-k8s.io/queue-name: " + suggestion);
      }
    }
  }

  // ---- rules 5 and 6: ClusterQueue flavors and quotas -----------------------------------

  void ClusterQueueRules() {
    for (const Object& cq : view_.ClusterQueues()) {
      const Object& groups = Field(Field(cq, "spec"), "resourceGroups");
      if (!groups.is_array()) continue;
      for (size_t i = 0; i < groups.size(); ++i) {
        const Object& flavors = Field(groups[i], "flavors");
        if (!flavors.is_array()) continue;
        for (size_t j = 0; j < flavors.size(); ++j) {
          const std::string flavor_field = FieldIndex(FieldIndex("spec.resourceGroups", i) + ".flavors", j);
          const std::string name = AsString(Field(flavors[j], "name"));
          const Object* rf = view_.ResourceFlavor(name);
          if (rf == nullptr) {
            MissingFlavor(cq, flavor_field + ".name", name);
            continue;
          }
          if (view_.Nodes().empty()) continue;
          FlavorCapacity cap = view_.NodeCapacity(*rf);
          const Object& res = Field(flavors[j], "resources");
          if (!res.is_array()) continue;
          if (cap.nodes.empty()) {
            Add("quota-exceeds-node-allocatable", Severity::kError, cq, flavor_field + ".name",
                "ResourceFlavor " + Quote(name) + " selects no node: no node has every label of its spec.nodeLabels " +
                    Field(Field(*rf, "spec"), "nodeLabels").dump() + ", so the pods of every workload admitted with it "
                    "get a nodeSelector no node satisfies and stay Pending (FailedScheduling 'node(s) didn't match "
                    "Pod's node affinity/selector'); all of this flavor's quota can never run",
                "correct the ResourceFlavor's spec.nodeLabels to labels the nodes carry, or label the nodes "
                "(kubectl label node <node> <key>=<value>)");
            continue;
          }
          for (size_t k = 0; k < res.size(); ++k) {
            const std::string rname = AsString(Field(res[k], "name"));
            admission::Amount quota = controllers::kueue::DecodeAmount(Field(res[k], "nominalQuota"));
            auto have = cap.allocatable.find(rname);
            admission::Amount alloc = have == cap.allocatable.end() ? 0 : have->second.milli();
            if (quota <= alloc) continue;
            std::string nodes;
            for (const std::string& n : cap.nodes) nodes += (nodes.empty() ? "" : ", ") + n;
            Add("quota-exceeds-node-allocatable", Severity::kError, cq,
                FieldIndex(flavor_field + ".resources", k) + ".nominalQuota",
                "nominalQuota " + Quantity::FromMilli(quota).String() + " " + rname + " of flavor " + Quote(name) +
                    " is above the " + Quantity::FromMilli(alloc).String() + " the flavor's " +
                    std::to_string(cap.nodes.size()) + " node(s) can allocate" +
                    (nodes.empty() ? "" : " (" + nodes + ")") + ": Kueue admits workloads the nodes cannot hold "
                    "(Workload Admitted, pods Pending with FailedScheduling 'Insufficient " + rname + "'), up to " +
                    AmountText(rname, quota - alloc) + " of quota that can never run",
                "set nominalQuota to at most " + Quantity::FromMilli(alloc).String() +
                    " (the nodes' allocatable minus what system pods use), or add nodes");
          }
        }
      }
    }
  }

  // A reference to an object of a kind the input does not hold at all (files
  // without --live): whether it exists cannot be judged, so it is an info,
  // not an error (ClusterView::Covers).
  void NotInInput(const Object& obj, const std::string& field, const std::string& kind, const std::string& name) {
    Add("unresolved-reference", Severity::kInfo, obj, field,
        kind + " " + Quote(name) + " is not in the input (it holds no " + kind +
            " at all), so whether it exists is not checked",
        "check it against the server with --live, or pass its manifest with -f");
  }

  void MissingFlavor(const Object& cq, const std::string& field, const std::string& name) {
    if (!view_.Covers(resources::kResourceFlavors)) {
      NotInInput(cq, field, "ResourceFlavor", name);
      return;
    }
    std::string suggestion;
    size_t best = 3;
    for (const Object& rf : view_.ResourceFlavors()) {
      size_t d = EditDistance(api::Name(rf), name);
      if (d < best) {
        best = d;
        suggestion = api::Name(rf);
      }
    }
    Add("missing-resource-flavor", Severity::kError, cq, field,
        "ResourceFlavor " + Quote(name) + " does not exist" +
            (suggestion.empty() ? "" : " (did you mean " + Quote(suggestion) + "?)") +
            ": the ClusterQueue is inactive (Active=False, FlavorNotFound) and admits no workload; every job of "
            "its LocalQueues waits",
        suggestion.empty() ? "create ResourceFlavor " + Quote(name) + " or name an existing flavor"
                           : "rename the flavor reference to " + Quote(suggestion));
  }

  // ---- rule 9 -------------------------------------------------------------------------------

  void WithinClusterQueueNever() {
    for (const Object& cq : view_.ClusterQueues()) {
      const std::string policy = AsString(Field(Field(Field(cq, "spec"), "preemption"), "withinClusterQueue"));
      if (!policy.empty() && policy != "Never") continue;
      std::map<int64_t, std::vector<std::string>> by_priority;
      for (const Job& job : jobs_) {
        if (job.cluster_queue != api::Name(cq)) continue;
        by_priority[job.workload_priority].push_back(
            job.Id() + (job.workload_priority_source.empty() ? "" : " (" + job.workload_priority_source + ")"));
      }
      for (const Object& wl : view_.Workloads()) {  // Workloads without a job in the view
        if (!Field(Field(wl, "metadata"), "ownerReferences").empty()) continue;
        const Object* lq = view_.LocalQueue(api::Namespace(wl), AsString(Field(Field(wl, "spec"), "queueName")));
        const Object* owner_cq = lq ? view_.ClusterQueueFor(*lq) : nullptr;
        if (owner_cq != &cq) continue;
        const Object& p = Field(Field(wl, "spec"), "priority");
        by_priority[p.is_number_integer() ? p.get<int64_t>() : 0].push_back("Workload " + api::Namespace(wl) + "/" +
                                                                              api::Name(wl));
      }
      if (by_priority.size() < 2) continue;
      std::vector<std::string> items;
      for (auto it = by_priority.rbegin(); it != by_priority.rend(); ++it) {
        for (const std::string& w : it->second) items.push_back(w + " priority " + std::to_string(it->first));
      }
      const std::string list = JoinCapped(items, ", ");
      Add("within-cluster-queue-never", Severity::kWarning, cq, "spec.preemption.withinClusterQueue",
          std::string("withinClusterQueue is Never") + (policy.empty() ? " (the default when unset)" : "") +
              " but the workloads of this ClusterQueue have different priorities (" + list +
              "): a higher-priority workload never preempts a lower one here, it waits until they finish",
          "set spec.preemption.withinClusterQueue: LowerPriority (keep Never only for a queue whose jobs must "
          "never be preempted, and give its jobs one priority)");
    }
  }

  // ---- rule 8 -------------------------------------------------------------------------------

  static void DiffPaths(const Object& a, const Object& b, const std::string& path, std::vector<std::string>* out) {
    if (a == b) return;
    if (a.is_object() && b.is_object()) {
      std::set<std::string> keys;
      for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
      for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
      for (const std::string& k : keys) {
        static const Object kNull;
        DiffPaths(a.contains(k) ? a[k] : kNull, b.contains(k) ? b[k] : kNull, FieldChild(path, k), out);
      }
      return;
    }
    out->push_back(path);
  }

  // What v1beta2 writes differently, for the fields this object uses (api/conversion.h).
  static std::string V1beta2Changes(const std::string& kind, const Object& written) {
    const Object& spec = Field(written, "spec");
    std::vector<std::string> notes;
    if (kind == "ClusterQueue") {
      if (!Field(spec, "cohort").is_null()) notes.push_back("spec.cohort is spec.cohortName");
      if (!Field(spec, "admissionChecks").is_null()) {
        notes.push_back("spec.admissionChecks moves to spec.admissionChecksStrategy.admissionChecks");
      }
      const Object& ff = Field(spec, "flavorFungibility");
      for (const char* k : {"whenCanBorrow", "whenCanPreempt"}) {
        const std::string v = AsString(Field(ff, k));
        if (v == "Borrow" || v == "Preempt") notes.push_back(std::string("flavorFungibility.") + k + " " + v + " is MayStopSearch");
      }
    } else if (kind == "Workload") {
      if (!Field(spec, "priorityClassName").is_null()) {
        notes.push_back("spec.priorityClassName/priorityClassSource become spec.priorityClassRef");
      }
    }
    if (notes.empty()) return "the fields it uses are the same in v1beta2; only apiVersion changes";
    std::string text = "in v1beta2 ";
    for (size_t i = 0; i < notes.size(); ++i) text += (i ? ", " : "") + notes[i];
    return text;
  }

  void V1beta1() {
    for (const auto& [key, origin] : provenance_) {
      if (origin.api_version != kKueueV1beta1) continue;
      const auto& [kind, ns, name] = key;
      std::vector<std::string> lost;
      auto up = api::ConvertObject(origin.written, "kueue.x-k8s.io/v1beta2");
      if (up.ok()) {
        auto down = api::ConvertObject(*up, kKueueV1beta1);
        if (down.ok()) DiffPaths(origin.written, *down, "", &lost);
      }
      std::string lost_text;
      for (const std::string& p : lost) lost_text += (lost_text.empty() ? "" : ", ") + p;
      Object target = origin.written;
      if (!target.contains("metadata") || !target["metadata"].is_object()) target["metadata"] = Object::object();
      if (!ns.empty()) target["metadata"]["namespace"] = ns;
      Add("kueue-v1beta1", lost.empty() ? Severity::kInfo : Severity::kWarning, target, "apiVersion",
          "written as kueue.x-k8s.io/v1beta1: berth serves it and stores it converted to v1beta2; Kueue stores "
          "v1beta2 since v0.16 and plans to drop v1beta1, and a cluster that no longer serves it rejects the "
          "manifest (no matches for kind " + Quote(kind) + " in version " + Quote(kKueueV1beta1) + "); " + V1beta2Changes(kind, origin.written) +
              (lost.empty() ? "" : "; converting this object loses " + lost_text),
          "write apiVersion: kueue.x-k8s.io/v1beta2" +
              std::string(lost.empty() ? "" : " and the v1beta2 form of " + lost_text));
    }
  }

  // ---- rule 10 ------------------------------------------------------------------------------

  void GracePeriod() {
    for (const Job& job : jobs_) {
      auto text = AnnotationValue(*job.object, kCheckpointSecondsAnnotation);
      if (!text) continue;
      int64_t need = -1;
      auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), need);
      const std::string field = FieldChild("metadata.annotations", kCheckpointSecondsAnnotation);
      if (ec != std::errc() || end != text->data() + text->size() || need < 0) {
        Add("grace-period-shorter-than-checkpoint", Severity::kWarning, *job.object, field,
            std::string(kCheckpointSecondsAnnotation) + " is " + Quote(*text) +
                ", not a number of seconds: the grace period cannot be checked against it",
            "write the seconds a checkpoint needs as a decimal integer, e.g. \"60\"");
        continue;
      }
      for (const PodGroup& g : job.groups) {
        const Object& tg = Field(Field(g.pod_template, "spec"), "terminationGracePeriodSeconds");
        const bool set = tg.is_number_integer();
        const int64_t grace = set ? tg.get<int64_t>() : kDefaultGracePeriodSeconds;
        if (grace >= need) continue;
        Add("grace-period-shorter-than-checkpoint", Severity::kError, *job.object,
            job.FieldOf(g, "terminationGracePeriodSeconds"),
            "the " + g.name + " pods get SIGKILL " + std::to_string(grace) + " s after SIGTERM" +
                (set ? "" : " (terminationGracePeriodSeconds unset: the default 30)") +
                job.Where(g, "terminationGracePeriodSeconds") + " but the job declares " + std::to_string(need) +
                " s to write a checkpoint (" + kCheckpointSecondsAnnotation + "): every preemption kills it "
                "mid-checkpoint and the job resumes from the previous one, redoing that work on all " +
                std::to_string(job.gang) + " pods",
            "set terminationGracePeriodSeconds: " + std::to_string(need) + " (or more) in the " + g.name +
                " pod template");
      }
    }
  }
};

}  // namespace

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "info";
  }
  return "info";
}

std::string FieldChild(std::string_view parent, std::string_view key) {
  if (key.find_first_of("./") != std::string_view::npos) return std::string(parent) + "[" + std::string(key) + "]";
  if (parent.empty()) return std::string(key);
  return std::string(parent) + "." + std::string(key);
}

std::string FieldIndex(std::string_view parent, size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<Finding> Lint(const ClusterView& view, const Provenance& provenance) {
  return Linter(view, provenance).Run();
}

bool HasErrors(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kError; });
}

api::Object FindingsToJson(const std::vector<Finding>& findings) {
  Object out = Object::array();
  for (const Finding& f : findings) {
    Object ref{{"apiVersion", f.object.api_version}, {"kind", f.object.kind}, {"name", f.object.name}};
    if (!f.object.ns.empty()) ref["namespace"] = f.object.ns;
    if (!f.object.source.empty()) ref["source"] = f.object.source;
    if (f.object.line > 0) ref["line"] = f.object.line;
    Object item{{"rule", f.rule},       {"severity", std::string(SeverityName(f.severity))},
                {"object", ref},        {"message", f.message},
                {"fix", f.fix}};
    if (!f.field.empty()) item["field"] = f.field;
    out.push_back(std::move(item));
  }
  return out;
}

std::string FindingsToText(const std::vector<Finding>& findings) {
  std::ostringstream out;
  size_t counts[3] = {0, 0, 0};
  for (const Finding& f : findings) {
    ++counts[static_cast<int>(f.severity)];
    out << SeverityName(f.severity) << ": " << f.rule << ": " << f.object.kind << " "
        << (f.object.ns.empty() ? "" : f.object.ns + "/") << f.object.name;
    if (!f.object.source.empty()) {
      out << " (" << f.object.source;
      if (f.object.line > 0) out << ":" << f.object.line;
      out << ")";
    }
    out << "\n";
    if (!f.field.empty()) out << "  field: " << f.field << "\n";
    out << "  why:   " << f.message << "\n";
    out << "  fix:   " << f.fix << "\n";
  }
  if (findings.empty()) {
    out << "No findings.\n";
  } else {
    auto plural = [](size_t n, const char* word) {
      return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
    };
    out << plural(counts[0], "error") << ", " << plural(counts[1], "warning") << ", " << plural(counts[2], "info")
        << "\n";
  }
  return out.str();
}

}  // namespace berth::cli::diagnostics
