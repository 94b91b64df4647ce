#include "controllers/jobs/pytorchjob/pytorchjob_pods.h"

#include <algorithm>
#include <charconv>
#include <cctype>

namespace berth::controllers::jobs::pytorchjob {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const Object& Replicas(const Object& job) { return ObjectAt(ObjectAt(job, "spec"), "pytorchReplicaSpecs"); }

int32_t MasterPort(const Object& job) {
  const Object& master = ObjectAt(Replicas(job), "Master");
  const Object& containers = ArrayAt(ObjectAt(ObjectAt(master, "template"), "spec"), "containers");
  if (const Object* c = FindNamed(containers, kDefaultContainerName)) {
    if (const Object* p = FindNamed(ArrayAt(*c, "ports"), kDefaultPortName)) {
      return static_cast<int32_t>(IntAt(*p, "containerPort", kDefaultPort));
    }
  }
  return kDefaultPort;
}

}  // namespace

void ApplyDefaults(Object* job) {
  Object& spec = MutableObject(job, "spec");
  Object& run_policy = MutableObject(&spec, "runPolicy");
  if (!HasField(run_policy, "cleanPodPolicy")) run_policy["cleanPodPolicy"] = "None";
  if (!HasField(spec, "nprocPerNode")) spec["nprocPerNode"] = "auto";
  Object& replicas = MutableObject(&spec, "pytorchReplicaSpecs");
  for (std::string_view type : {"Master", "Worker"}) {
    for (auto it = replicas.begin(); it != replicas.end(); ++it) {
      if (it.key() != type && Lower(it.key()) == Lower(std::string(type))) {
        Object v = it.value();
        replicas.erase(it);
        replicas[std::string(type)] = std::move(v);
        break;
      }
    }
  }
  for (auto it = replicas.begin(); it != replicas.end(); ++it) {
    Object& r = it.value();
    if (!HasField(r, "replicas")) r["replicas"] = 1;
    if (!HasField(r, "restartPolicy")) r["restartPolicy"] = "OnFailure";
    Object& containers = MutableArray(&MutableObject(&MutableObject(&r, "template"), "spec"), "containers");
    if (Object* c = FindNamed(&containers, kDefaultContainerName)) {
      if (FindNamed(ArrayAt(*c, "ports"), kDefaultPortName) == nullptr) {
        MutableArray(c, "ports").push_back(Object{{"name", kDefaultPortName}, {"containerPort", kDefaultPort}});
      }
    }
  }
}

std::vector<std::string> ReplicaTypes(const Object& job) {
  std::vector<std::string> out;
  const Object& replicas = Replicas(job);
  for (const char* t : {"Master", "Worker"}) {
    if (replicas.contains(t)) out.push_back(t);
  }
  for (auto it = replicas.begin(); it != replicas.end(); ++it) {  // keys sorted
    if (it.key() != "Master" && it.key() != "Worker") out.push_back(it.key());
  }
  return out;
}

std::vector<Object> Pods(const Object& input) {
  Object job = input;
  ApplyDefaults(&job);
  const std::string& name = api::Name(job);
  const Object& replicas = Replicas(job);
  const bool has_master = replicas.contains("Master");
  int64_t total = 0;
  for (auto it = replicas.begin(); it != replicas.end(); ++it) total += IntAt(it.value(), "replicas", 1);
  const Object& nproc = Field(ObjectAt(job, "spec"), "nprocPerNode");
  const std::string nproc_text = nproc.is_string()           ? nproc.get<std::string>()
                                 : nproc.is_number_integer() ? std::to_string(nproc.get<int64_t>())
                                                             : "";
  // An integer string within int32 (torchrun's --nproc-per-node); anything else counts 1.
  int64_t nproc_int = 1;
  int32_t parsed = 0;
  const char* text_end = nproc_text.data() + nproc_text.size();
  if (auto [p, ec] = std::from_chars(nproc_text.data(), text_end, parsed);
      !nproc_text.empty() && ec == std::errc() && p == text_end && parsed > 0) {
    nproc_int = parsed;
  }
  const std::string master_addr = name + "-master-0";
  const std::string master_port = std::to_string(MasterPort(job));

  std::vector<Object> pods;
  for (const std::string& type : ReplicaTypes(job)) {
    const Object& r = ObjectAt(replicas, type);
    const std::string rt = Lower(type);
    for (int64_t i = 0; i < IntAt(r, "replicas", 1); ++i) {
      Object pod{{"apiVersion", "v1"}, {"kind", "Pod"}};
      Object metadata = ObjectAt(ObjectAt(r, "template"), "metadata");
      metadata["name"] = name + "-" + rt + "-" + std::to_string(i);
      if (!api::Namespace(job).empty()) metadata["namespace"] = api::Namespace(job);
      Object& labels = MutableObject(&metadata, "labels");
      labels[std::string(kJobNameLabel)] = name;
      labels[std::string(kOperatorNameLabel)] = "pytorchjob-controller";
      labels[std::string(kReplicaTypeLabel)] = rt;
      labels[std::string(kReplicaIndexLabel)] = std::to_string(i);
      if (type == "Master") labels[std::string(kJobRoleLabel)] = "master";
      metadata["ownerReferences"] = Object::array({ControllerReference(job)});
      pod["metadata"] = std::move(metadata);

      Object spec = ObjectAt(ObjectAt(r, "template"), "spec");
      std::string restart = StringAt(r, "restartPolicy", "OnFailure");
      spec["restartPolicy"] = restart == "ExitCode" ? "Never" : restart;
      const int64_t rank = type == "Worker" ? i + 1 : i;
      for (Object& c : MutableArray(&spec, "containers")) {
        Object& env = MutableArray(&c, "env");
        env.push_back(EnvVar("PYTHONUNBUFFERED", "0"));
        if (has_master) {
          env.push_back(EnvVar("MASTER_PORT", master_port));
          env.push_back(EnvVar("PET_MASTER_PORT", master_port));
          env.push_back(EnvVar("MASTER_ADDR", master_addr));
          env.push_back(EnvVar("PET_MASTER_ADDR", master_addr));
          env.push_back(EnvVar("WORLD_SIZE", std::to_string(total * nproc_int)));
          env.push_back(EnvVar("RANK", std::to_string(rank)));
          env.push_back(EnvVar("PET_NPROC_PER_NODE", nproc_text));
          env.push_back(EnvVar("PET_NODE_RANK", std::to_string(rank)));
        }
        env.push_back(EnvVar("PET_NNODES", std::to_string(total)));
      }
      pod["spec"] = std::move(spec);
      pods.push_back(std::move(pod));
    }
  }
  return pods;
}

std::vector<Object> Services(const Object& input) {
  Object job = input;
  ApplyDefaults(&job);
  const std::string& name = api::Name(job);
  std::vector<Object> out;
  for (const std::string& type : ReplicaTypes(job)) {
    const Object& r = ObjectAt(Replicas(job), type);
    const std::string rt = Lower(type);
    Object ports = Object::array();
    const Object& containers = ArrayAt(ObjectAt(ObjectAt(r, "template"), "spec"), "containers");
    if (const Object* c = FindNamed(containers, kDefaultContainerName)) {
      if (const Object* p = FindNamed(ArrayAt(*c, "ports"), kDefaultPortName)) {
        ports.push_back(Object{{"name", kDefaultPortName}, {"port", IntAt(*p, "containerPort", kDefaultPort)}});
      }
    }
    for (int64_t i = 0; i < IntAt(r, "replicas", 1); ++i) {
      Object svc{{"apiVersion", "v1"}, {"kind", "Service"}};
      svc["metadata"] = Object{{"name", name + "-" + rt + "-" + std::to_string(i)},
                               {"ownerReferences", Object::array({ControllerReference(job)})},
                               {"labels", {{std::string(kJobNameLabel), name}}}};
      if (!api::Namespace(job).empty()) svc["metadata"]["namespace"] = api::Namespace(job);
      svc["spec"] = Object{{"clusterIP", "None"},
                           {"selector",
                            {{std::string(kJobNameLabel), name},
                             {std::string(kReplicaTypeLabel), rt},
                             {std::string(kReplicaIndexLabel), std::to_string(i)}}}};
      if (!ports.empty()) svc["spec"]["ports"] = ports;
      out.push_back(std::move(svc));
    }
  }
  return out;
}

std::vector<PodSet> PodSets(const Object& input) {
  Object job = input;
  ApplyDefaults(&job);
  std::vector<PodSet> out;
  for (const std::string& type : ReplicaTypes(job)) {
    const Object& r = ObjectAt(Replicas(job), type);
    out.push_back(PodSet{Lower(type), static_cast<int32_t>(IntAt(r, "replicas", 1)), ObjectAt(r, "template")});
  }
  return out;
}

}  // namespace berth::controllers::jobs::pytorchjob
