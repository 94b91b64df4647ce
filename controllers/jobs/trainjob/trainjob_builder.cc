#include "controllers/jobs/trainjob/trainjob_builder.h"

#include <algorithm>
#include <cctype>

#include "api/strategic_merge_patch.h"
#include "api/trainer_strategies.h"
#include "api/job_strategy.h"
#include "controllers/jobs/jobset/jobset_children.h"
#include "core/quantity.h"

namespace berth::controllers::jobs::trainjob {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

const Object& TrainerSpec(const Object& trainjob) { return ObjectAt(ObjectAt(trainjob, "spec"), "trainer"); }
const Object& MlPolicy(const Object& runtime) { return ObjectAt(ObjectAt(runtime, "spec"), "mlPolicy"); }
bool HasTorch(const Object& runtime) { return HasField(MlPolicy(runtime), "torch"); }
bool HasMpi(const Object& runtime) { return HasField(MlPolicy(runtime), "mpi"); }

std::string Ancestor(const Object& rjob) {
  return StringAt(ObjectAt(ObjectAt(ObjectAt(rjob, "template"), "metadata"), "labels"), kAncestorLabel);
}

Object& PodTemplate(Object* rjob) {
  return MutableObject(&MutableObject(&MutableObject(rjob, "template"), "spec"), "template");
}
Object& Containers(Object* rjob) { return MutableArray(&MutableObject(&PodTemplate(rjob), "spec"), "containers"); }

Object* FindRJob(Object* jobset_spec, std::string_view name) {
  return FindNamed(&MutableArray(jobset_spec, "replicatedJobs"), name);
}
Object* FindAncestor(Object* jobset_spec, std::string_view ancestor) {
  for (Object& rjob : MutableArray(jobset_spec, "replicatedJobs")) {
    if (Ancestor(rjob) == ancestor) return &rjob;
  }
  return nullptr;
}

int32_t NumNodes(const Object& trainjob, const Object& runtime) {
  const Object& n = Field(TrainerSpec(trainjob), "numNodes");
  if (n.is_number_integer()) return n.get<int32_t>();
  return static_cast<int32_t>(IntAt(MlPolicy(runtime), "numNodes", 1));
}

std::optional<Quantity> QuantityOf(const Object& v) {
  if (v.is_string()) {
    auto q = Quantity::Parse(v.get<std::string>());
    if (q.ok()) return *q;
  } else if (v.is_number_integer()) {
    return Quantity::FromUnits(v.get<int64_t>());
  } else if (v.is_number_float()) {
    return Quantity::FromMilli(static_cast<int64_t>(v.get<double>() * 1000 + 0.999999));
  }
  return std::nullopt;
}

// GPUs per node: the first resource whose name contains "gpu", requests before limits.
int64_t GpuCount(const Object& resources) {
  for (std::string_view list : {"requests", "limits"}) {
    const Object& l = ObjectAt(resources, list);
    for (auto it = l.begin(); it != l.end(); ++it) {
      std::string key = it.key();
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      if (key.find("gpu") == std::string::npos) continue;
      if (auto q = QuantityOf(it.value())) return q->Value();
    }
  }
  return 0;
}

const Object* RuntimeNodeContainer(const Object& runtime) {
  for (const Object& rjob : ArrayAt(ObjectAt(ObjectAt(ObjectAt(runtime, "spec"), "template"), "spec"), "replicatedJobs")) {
    if (Ancestor(rjob) != kAncestorTrainer && StringAt(rjob, "name") != kNode) continue;
    const Object& containers =
        ArrayAt(ObjectAt(ObjectAt(ObjectAt(ObjectAt(rjob, "template"), "spec"), "template"), "spec"), "containers");
    if (const Object* c = FindNamed(containers, kNode)) return c;
  }
  return nullptr;
}

const Object& NodeResources(const Object& trainjob, const Object& runtime) {
  static const Object kEmpty = Object::object();
  if (HasField(TrainerSpec(trainjob), "resourcesPerNode")) return ObjectAt(TrainerSpec(trainjob), "resourcesPerNode");
  const Object* c = RuntimeNodeContainer(runtime);
  return c == nullptr ? kEmpty : ObjectAt(*c, "resources");
}

// Strategic-merge-patches `patch` (a PodTemplateSpec fragment) onto the pod template.
Status PatchPodTemplate(Object* rjob, const Object& patch) {
  auto r = api::ApplyStrategicMergePatch(PodTemplate(rjob), patch, api::StrategicMergeSchema::ForKind("", "Pod"));
  if (!r.ok()) return r.status();
  PodTemplate(rjob) = std::move(r).value();
  return Status::Ok();
}

Status UnknownTarget(std::string_view what, std::string_view name) {
  return InvalidError(std::string(what) + " \"" + std::string(name) + "\" is not defined in the runtime");
}

// Every container / initContainer a pod-spec patch names must exist in the runtime.
Status CheckPatchedContainers(Object* rjob, const Object& pod_spec_patch) {
  const Object& spec = ObjectAt(PodTemplate(rjob), "spec");
  for (std::string_view list : {"containers", "initContainers"}) {
    for (const Object& c : ArrayAt(pod_spec_patch, list)) {
      if (FindNamed(ArrayAt(spec, list), StringAt(c, "name")) == nullptr) {
        return UnknownTarget(list == "containers" ? "container" : "initContainer", StringAt(c, "name"));
      }
    }
  }
  return Status::Ok();
}

void MergeResources(Object* container, const Object& per_node) {
  Object& resources = MutableObject(container, "resources");
  for (std::string_view list : {"requests", "limits", "claims"}) {
    if (!HasField(per_node, list)) continue;
    if (list == "claims") {
      resources["claims"] = Field(per_node, list);
      continue;
    }
    MergeStringMap(&MutableObject(&resources, list), ObjectAt(per_node, list));
  }
}

void ApplyInitializer(Object* spec, const Object& trainjob, std::string_view ancestor, std::string_view key) {
  const Object& init = ObjectAt(ObjectAt(ObjectAt(trainjob, "spec"), "initializer"), key);
  Object* rjob = FindAncestor(spec, ancestor);
  if (rjob == nullptr || init.empty()) return;
  Object* container = FindNamed(&Containers(rjob), ancestor);
  if (container == nullptr) return;
  Object& env = MutableArray(container, "env");
  if (HasField(init, "storageUri")) UpsertNamed(&env, EnvVar("STORAGE_URI", StringAt(init, "storageUri")));
  for (const Object& e : ArrayAt(init, "env")) UpsertNamed(&env, e);
  const std::string secret = StringAt(ObjectAt(init, "secretRef"), "name");
  if (!secret.empty()) {
    Object& env_from = MutableArray(container, "envFrom");
    Object ref{{"secretRef", {{"name", secret}}}};
    if (std::find(env_from.begin(), env_from.end(), ref) == env_from.end()) env_from.push_back(ref);
  }
}

}  // namespace

RuntimeRef RuntimeRef::FromTrainJob(const Object& trainjob) {
  const Object& ref = ObjectAt(ObjectAt(trainjob, "spec"), "runtimeRef");
  return RuntimeRef{StringAt(ref, "apiGroup", kTrainerGroup), StringAt(ref, "kind", "ClusterTrainingRuntime"),
                    StringAt(ref, "name")};
}

std::string RuntimeRef::resource() const {
  return cluster_scoped() ? "clustertrainingruntimes" : "trainingruntimes";
}

std::string RuntimeNotFoundMessage(const Object& trainjob) {
  RuntimeRef ref = RuntimeRef::FromTrainJob(trainjob);
  return ref.resource() + "." + std::string(kTrainerGroup) + " \"" + ref.name + "\" not found: specified " +
         (ref.cluster_scoped() ? "clusterTrainingRuntime" : "trainingRuntime") +
         " must be created before the TrainJob is created";
}

std::optional<std::string> UnsupportedRuntimeMessage(const Object& trainjob) {
  RuntimeRef ref = RuntimeRef::FromTrainJob(trainjob);
  if (ref.api_group == kTrainerGroup && (ref.kind == "ClusterTrainingRuntime" || ref.kind == "TrainingRuntime")) {
    return std::nullopt;
  }
  return "unsupported runtime: " + ref.kind + "." + ref.api_group;
}

std::string ResolveNumProcPerNode(const Object& trainjob, const Object& runtime) {
  Object value = Field(TrainerSpec(trainjob), "numProcPerNode");
  if (value.is_null()) value = Field(ObjectAt(MlPolicy(runtime), "torch"), "numProcPerNode");
  if (value.is_null()) value = "auto";
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  const std::string text = value.is_string() ? value.get<std::string>() : "auto";
  if (text != "auto" && text != "cpu") return text;  // "gpu", or an integer written as a string
  const Object& resources = NodeResources(trainjob, runtime);
  if (text == "auto" && GpuCount(resources) > 0) return "auto";
  std::optional<Quantity> cpu = QuantityOf(Field(ObjectAt(resources, "requests"), "cpu"));
  if (!cpu) cpu = QuantityOf(Field(ObjectAt(resources, "limits"), "cpu"));
  int64_t n = cpu ? cpu->Value() : 1;  // Value() rounds up
  return std::to_string(std::max<int64_t>(1, n));
}

StatusOr<TrainJobObjects> Build(const Object& trainjob, const Object& runtime) {
  const std::string& name = api::Name(trainjob);
  const Object& tj_spec = ObjectAt(trainjob, "spec");
  const Object& tmpl = ObjectAt(ObjectAt(runtime, "spec"), "template");
  const std::string runtime_desc = StringAt(runtime, "kind", "TrainingRuntime") + " " + api::Name(runtime);

  Object jobset = Object::object();
  jobset["apiVersion"] = jobset::kJobSetApiVersion;
  jobset["kind"] = "JobSet";
  Object metadata{{"name", name}};
  if (!api::Namespace(trainjob).empty()) metadata["namespace"] = api::Namespace(trainjob);
  Object labels = ObjectAt(ObjectAt(tmpl, "metadata"), "labels");
  Object annotations = ObjectAt(ObjectAt(tmpl, "metadata"), "annotations");
  MergeStringMap(&labels, ObjectAt(tj_spec, "labels"));
  MergeStringMap(&annotations, ObjectAt(tj_spec, "annotations"));
  for (const Object& patch : ArrayAt(tj_spec, "runtimePatches")) {
    const Object& pm = ObjectAt(ObjectAt(ObjectAt(patch, "trainingRuntimeSpec"), "template"), "metadata");
    MergeStringMap(&labels, ObjectAt(pm, "labels"));
    MergeStringMap(&annotations, ObjectAt(pm, "annotations"));
  }
  if (!labels.empty()) metadata["labels"] = labels;
  if (!annotations.empty()) metadata["annotations"] = annotations;
  Object owner = trainjob;
  if (!HasField(owner, "apiVersion")) owner["apiVersion"] = kTrainJobApiVersion;
  if (!HasField(owner, "kind")) owner["kind"] = "TrainJob";
  metadata["ownerReferences"] = Object::array({ControllerReference(owner)});
  jobset["metadata"] = std::move(metadata);

  Object spec = ObjectAt(tmpl, "spec");
  MutableArray(&spec, "replicatedJobs");

  // v2.1 podTemplateOverrides.
  for (const Object& o : ArrayAt(tj_spec, "podTemplateOverrides")) {
    Object patch = Object::object();
    if (HasField(o, "metadata")) patch["metadata"] = Field(o, "metadata");
    if (HasField(o, "spec")) patch["spec"] = Field(o, "spec");
    for (const Object& target : ArrayAt(o, "targetJobs")) {
      Object* rjob = FindRJob(&spec, StringAt(target, "name"));
      if (rjob == nullptr) return UnknownTarget("replicatedJob", StringAt(target, "name"));
      BERTH_RETURN_IF_ERROR(CheckPatchedContainers(rjob, ObjectAt(o, "spec")));
      BERTH_RETURN_IF_ERROR(PatchPodTemplate(rjob, patch));
    }
  }
  // v2.2+ runtimePatches.
  for (const Object& p : ArrayAt(tj_spec, "runtimePatches")) {
    const Object& pspec = ObjectAt(ObjectAt(ObjectAt(p, "trainingRuntimeSpec"), "template"), "spec");
    for (const Object& prjob : ArrayAt(pspec, "replicatedJobs")) {
      Object* rjob = FindRJob(&spec, StringAt(prjob, "name"));
      if (rjob == nullptr) return UnknownTarget("replicatedJob", StringAt(prjob, "name"));
      const Object& job_tmpl = ObjectAt(prjob, "template");
      Object& job_meta = MutableObject(&MutableObject(rjob, "template"), "metadata");
      MergeStringMap(&MutableObject(&job_meta, "labels"), ObjectAt(ObjectAt(job_tmpl, "metadata"), "labels"));
      MergeStringMap(&MutableObject(&job_meta, "annotations"), ObjectAt(ObjectAt(job_tmpl, "metadata"), "annotations"));
      const Object& pod_tmpl = ObjectAt(ObjectAt(job_tmpl, "spec"), "template");
      BERTH_RETURN_IF_ERROR(CheckPatchedContainers(rjob, ObjectAt(pod_tmpl, "spec")));
      BERTH_RETURN_IF_ERROR(PatchPodTemplate(rjob, pod_tmpl));
    }
  }

  Object* trainer_rjob = FindAncestor(&spec, kAncestorTrainer);
  if (trainer_rjob == nullptr) {
    return InvalidError("runtime " + runtime_desc + " has no replicatedJob with label " + std::string(kAncestorLabel) +
                        "=" + std::string(kAncestorTrainer));
  }
  Object* node_container = FindNamed(&Containers(trainer_rjob), kNode);
  if (node_container == nullptr) {
    return InvalidError("runtime " + runtime_desc + ": replicatedJob \"" + StringAt(*trainer_rjob, "name") +
                        "\" must contain the required container for the ancestor: trainer");
  }

  const Object& trainer = TrainerSpec(trainjob);
  const bool mpi = HasMpi(runtime);
  const Object& mpi_policy = ObjectAt(MlPolicy(runtime), "mpi");
  const bool launcher_as_node = mpi && BoolAt(mpi_policy, "runLauncherAsNode", false);
  const int32_t num_nodes = NumNodes(trainjob, runtime);

  // TrainJob overrides on the trainer container (and on job `node` with runLauncherAsNode).
  std::vector<Object*> trainer_containers = {node_container};
  if (launcher_as_node) {
    if (Object* node_rjob = FindRJob(&spec, kNode); node_rjob != nullptr && node_rjob != trainer_rjob) {
      if (Object* c = FindNamed(&Containers(node_rjob), kNode)) trainer_containers.push_back(c);
    }
  }
  for (Object* c : trainer_containers) {
    if (HasField(trainer, "image")) (*c)["image"] = Field(trainer, "image");
    if (HasField(trainer, "command")) (*c)["command"] = Field(trainer, "command");
    if (HasField(trainer, "args")) (*c)["args"] = Field(trainer, "args");
    for (const Object& e : ArrayAt(trainer, "env")) UpsertNamed(&MutableArray(c, "env"), e);
    if (HasField(trainer, "resourcesPerNode")) MergeResources(c, ObjectAt(trainer, "resourcesPerNode"));
  }
  ApplyInitializer(&spec, trainjob, kDatasetInitializer, "dataset");
  ApplyInitializer(&spec, trainjob, kModelInitializer, "model");

  // Counts: replicas 1 for ancestors, parallelism = completions = podSet count.
  for (Object& rjob : MutableArray(&spec, "replicatedJobs")) {
    const std::string rname = StringAt(rjob, "name");
    const std::string ancestor = Ancestor(rjob);
    if (!ancestor.empty()) rjob["replicas"] = 1;
    Object& job_spec = MutableObject(&MutableObject(&rjob, "template"), "spec");
    int64_t count = IntAt(job_spec, "parallelism", 1);
    if (rname == kNode) {
      count = launcher_as_node ? std::max(1, num_nodes - 1) : num_nodes;
    } else if (ancestor == kAncestorTrainer) {
      count = mpi ? 1 : num_nodes;
    }
    job_spec["parallelism"] = count;
    job_spec["completions"] = count;
  }

  // Torch plugin.
  if (HasTorch(runtime)) {
    Object& env = MutableArray(node_container, "env");
    const Object& command = Field(trainer, "command");
    const bool torchtune = command == Object::array({"tune", "run"});
    UpsertNamed(&env, EnvVar("PET_NNODES", std::to_string(num_nodes)));
    UpsertNamed(&env, EnvVar("PET_NPROC_PER_NODE", ResolveNumProcPerNode(trainjob, runtime)));
    UpsertNamed(&env, EnvVarFromField("PET_NODE_RANK", api::kJobCompletionIndexFieldPath));
    if (!torchtune) {
      UpsertNamed(&env, EnvVar("PET_MASTER_ADDR", name + "-" + std::string(kNode) + "-0-0." + name));
      UpsertNamed(&env, EnvVar("PET_MASTER_PORT", std::to_string(kTorchMasterPort)));
    }
    Object& ports = MutableArray(node_container, "ports");
    bool has_port = false;
    for (const Object& p : ports) has_port |= IntAt(p, "containerPort", 0) == kTorchMasterPort;
    if (!has_port) ports.push_back(Object{{"containerPort", kTorchMasterPort}});
  }

  // Coscheduling.
  if (HasField(ObjectAt(ObjectAt(runtime, "spec"), "podGroupPolicy"), "coscheduling")) {
    for (Object& rjob : MutableArray(&spec, "replicatedJobs")) {
      MutableObject(&MutableObject(&PodTemplate(&rjob), "metadata"), "labels")[std::string(kPodGroupLabel)] = name;
    }
  }

  if (HasField(tj_spec, "suspend")) spec["suspend"] = Field(tj_spec, "suspend");
  jobset["spec"] = std::move(spec);

  TrainJobObjects out;
  if (mpi) {
    Object& js_spec = jobset["spec"];
    const std::string subdomain = jobset::Subdomain(jobset);
    int64_t slots = IntAt(mpi_policy, "numProcPerNode", 1);
    if (Field(trainer, "numProcPerNode").is_number_integer()) {
      slots = IntAt(trainer, "numProcPerNode", 1);
    } else if (slots == 1 && GpuCount(NodeResources(trainjob, runtime)) > 1) {
      slots = GpuCount(NodeResources(trainjob, runtime));
    }
    std::string hostfile;
    auto add_hosts = [&](std::string_view rjob_name) {
      Object* rjob = FindRJob(&js_spec, rjob_name);
      if (rjob == nullptr) return;
      int64_t pods = IntAt(ObjectAt(ObjectAt(*rjob, "template"), "spec"), "parallelism", 1);
      for (int64_t p = 0; p < pods; ++p) {
        hostfile += name + "-" + std::string(rjob_name) + "-0-" + std::to_string(p) + "." + subdomain +
                    " slots=" + std::to_string(slots) + "\n";
      }
    };
    if (launcher_as_node) add_hosts(kLauncher);
    add_hosts(kNode);
    Object cm{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"data", {{"hostfile", hostfile}}}};
    cm["metadata"] = Object{{"name", name + "-mpi-hostfile"}, {"ownerReferences", jobset["metadata"]["ownerReferences"]}};
    if (!api::Namespace(trainjob).empty()) cm["metadata"]["namespace"] = api::Namespace(trainjob);
    out.mpi_hostfile = std::move(cm);

    Object* launcher = FindAncestor(&js_spec, kAncestorTrainer);
    Object& pod_spec = MutableObject(&PodTemplate(launcher), "spec");
    UpsertNamed(&MutableArray(&pod_spec, "volumes"),
                Object{{"name", "mpi-hostfile"},
                       {"configMap",
                        {{"name", name + "-mpi-hostfile"},
                         {"items", Object::array({{{"key", "hostfile"}, {"path", "hostfile"}, {"mode", 0444}}})}}}});
    Object* lc = FindNamed(&MutableArray(&pod_spec, "containers"), kNode);
    UpsertNamed(&MutableArray(lc, "volumeMounts"), Object{{"name", "mpi-hostfile"}, {"mountPath", "/etc/mpi"}});
    Object& env = MutableArray(lc, "env");
    UpsertNamed(&env, EnvVar("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"));
    UpsertNamed(&env, EnvVar("OMPI_MCA_orte_keep_fqdn_hostnames", "true"));
    UpsertNamed(&env, EnvVar("OMPI_MCA_orte_set_default_slots", std::to_string(slots)));
    UpsertNamed(&env, EnvVar("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"));
  }
  out.jobset = std::move(jobset);
  return out;
}

StatusOr<std::vector<PodSet>> PodSets(const Object& trainjob, const Object& runtime) {
  BERTH_ASSIGN_OR_RETURN(TrainJobObjects objects, Build(trainjob, runtime));
  return jobset::PodSets(objects.jobset);
}

api::FieldErrorList ValidateWithRuntime(const Object& trainjob, const Object& runtime) {
  if (!HasTorch(runtime)) return {};
  return api::ValidateTrainJobReservedEnv(trainjob);
}

bool ShouldApplyJobSet(const Object& trainjob, const Object* existing_jobset) {
  if (IsConditionTrue(trainjob, "Complete") || IsConditionTrue(trainjob, "Failed")) return false;
  if (existing_jobset == nullptr) return true;
  return BoolAt(ObjectAt(trainjob, "spec"), "suspend", false) ||
         BoolAt(ObjectAt(*existing_jobset, "spec"), "suspend", false);
}

TrainJobStatus StatusFromJobSet(const Object& trainjob, const Object* jobset) {
  TrainJobStatus out;
  if (BoolAt(ObjectAt(trainjob, "spec"), "suspend", false)) {
    out.conditions.push_back({"Suspended", "True", "Suspended", "TrainJob is suspended"});
  } else if (IsConditionTrue(trainjob, "Suspended")) {
    out.conditions.push_back({"Suspended", "False", "Resumed", "TrainJob is resumed"});
  }
  if (jobset == nullptr) return out;
  if (IsConditionTrue(*jobset, "Completed")) {
    out.conditions.push_back({"Complete", "True", ConditionField(*jobset, "Completed", "reason"),
                              ConditionField(*jobset, "Completed", "message")});
  }
  if (IsConditionTrue(*jobset, "Failed")) {
    out.conditions.push_back({"Failed", "True", ConditionField(*jobset, "Failed", "reason"),
                              ConditionField(*jobset, "Failed", "message")});
  }
  for (const Object& s : ArrayAt(ObjectAt(*jobset, "status"), "replicatedJobsStatus")) {
    Object j{{"name", StringAt(s, "name")}};
    for (const char* k : {"ready", "succeeded", "failed", "active", "suspended"}) j[k] = IntAt(s, k, 0);
    out.jobs_status.push_back(std::move(j));
  }
  return out;
}

}  // namespace berth::controllers::jobs::trainjob
