#include "placement/snapshot.h"

#include <algorithm>

#include <fmt/format.h>

#include "scheduling/pod_requests.h"

namespace berth::placement {

// ---------------------------------------------------------------------------
// ResourceNames

ResourceNames::ResourceNames() {
  Intern(kCpu);
  Intern(kMemory);
  Intern(kEphemeralStorage);
}

ResourceId ResourceNames::Intern(std::string_view name) {
  auto it = ids_.find(name);
  if (it != ids_.end()) return it->second;
  auto id = static_cast<ResourceId>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(std::string(name), id);
  return id;
}

ResourceId ResourceNames::Find(std::string_view name) const {
  auto it = ids_.find(name);
  return it == ids_.end() ? -1 : it->second;
}

bool IsSchedulableResource(std::string_view name) {
  if (name == kCpu || name == kMemory || name == kEphemeralStorage) return true;
  if (name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")) return true;
  // Extended resource: a domain-qualified name outside kubernetes.io
  // (v1helper.IsExtendedResourceName).
  size_t slash = name.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == name.size()) return false;
  std::string_view domain = name.substr(0, slash);
  if (domain == "kubernetes.io" || domain.ends_with(".kubernetes.io")) return false;
  if (name.starts_with("requests.")) return false;
  return true;
}

// ---------------------------------------------------------------------------
// NodeUsage

void NodeUsage::Add(const PodUsage& p) {
  for (const auto& [id, milli] : p.requests) {
    if (static_cast<size_t>(id) >= requested.size()) requested.resize(static_cast<size_t>(id) + 1);
    requested[static_cast<size_t>(id)] = SaturatingAdd(requested[static_cast<size_t>(id)], milli);
  }
  ++pod_count;
  cpu_milli = SaturatingAdd(cpu_milli, p.cpu_milli);
  memory_bytes = SaturatingAdd(memory_bytes, p.memory_bytes);
  non_zero_cpu_milli = SaturatingAdd(non_zero_cpu_milli, p.non_zero_cpu_milli);
  non_zero_memory_bytes = SaturatingAdd(non_zero_memory_bytes, p.non_zero_memory_bytes);
}

void NodeUsage::Remove(const PodUsage& p) {
  for (const auto& [id, milli] : p.requests) {
    if (static_cast<size_t>(id) < requested.size()) {
      requested[static_cast<size_t>(id)] = SaturatingSub(requested[static_cast<size_t>(id)], milli);
    }
  }
  --pod_count;
  cpu_milli = SaturatingSub(cpu_milli, p.cpu_milli);
  memory_bytes = SaturatingSub(memory_bytes, p.memory_bytes);
  non_zero_cpu_milli = SaturatingSub(non_zero_cpu_milli, p.non_zero_cpu_milli);
  non_zero_memory_bytes = SaturatingSub(non_zero_memory_bytes, p.non_zero_memory_bytes);
}

// ---------------------------------------------------------------------------
// Compilation

namespace {

constexpr int64_t kDefaultMilliCpuRequest = 100;                  // schedutil.DefaultMilliCPURequest
constexpr int64_t kDefaultMemoryRequestBytes = 200 * 1024 * 1024;  // schedutil.DefaultMemoryRequest

// The pod's requests with the scoring defaults for containers that request
// no cpu / memory (resourcehelper NonMissingContainerRequests).
ResourceList NonZeroRequests(const scheduling::PodResources<ResourceList>& resources) {
  scheduling::PodResources<ResourceList> nz = resources;
  auto fill = [](scheduling::ContainerResources<ResourceList>& c) {
    c.requests = scheduling::EffectiveContainerRequests(c);
    c.limits = ResourceList();
    if (!c.requests.Has(kCpu)) c.requests.Set(kCpu, Quantity::FromMilli(kDefaultMilliCpuRequest));
    if (!c.requests.Has(kMemory)) {
      c.requests.Set(kMemory, Quantity::FromUnits(kDefaultMemoryRequestBytes));
    }
  };
  for (auto& c : nz.containers) fill(c);
  for (auto& c : nz.init_containers) fill(c);
  return scheduling::PodRequests(nz);
}

template <typename Lookup>
PodUsage CompileWith(const Pod& pod, Lookup&& lookup) {
  PodUsage u;
  ResourceList req = scheduling::PodRequests(pod.resources);
  for (const auto& [name, q] : req.items()) {
    if (!IsSchedulableResource(name) || q.milli() <= 0) continue;
    ResourceId id = lookup(name);
    if (id < 0) {
      u.unknown_requests.emplace_back(name, q.milli());
    } else {
      u.requests.emplace_back(id, q.milli());
    }
  }
  std::sort(u.requests.begin(), u.requests.end());
  u.cpu_milli = req.Get(kCpu).milli();
  u.memory_bytes = req.Get(kMemory).Value();
  ResourceList nz = NonZeroRequests(pod.resources);
  u.non_zero_cpu_milli = nz.Get(kCpu).milli();
  u.non_zero_memory_bytes = nz.Get(kMemory).Value();
  return u;
}

}  // namespace

PodUsage Snapshot::Compile(const Pod& pod) const {
  return CompileWith(pod, [this](std::string_view n) { return names_.Find(n); });
}

PodUsage Snapshot::CompileInterning(const Pod& pod) {
  return CompileWith(pod, [this](std::string_view n) { return names_.Intern(n); });
}

// ---------------------------------------------------------------------------
// Nodes

namespace {
auto NodeLowerBound(std::vector<NodeInfo>& nodes, std::string_view name) {
  return std::lower_bound(nodes.begin(), nodes.end(), name,
                          [](const NodeInfo& n, std::string_view v) { return n.name() < v; });
}
}  // namespace

int Snapshot::NodeIndex(std::string_view name) const {
  auto it = std::lower_bound(nodes_.begin(), nodes_.end(), name,
                             [](const NodeInfo& n, std::string_view v) { return n.name() < v; });
  if (it == nodes_.end() || it->name() != name) return -1;
  return static_cast<int>(it - nodes_.begin());
}

const NodeInfo* Snapshot::FindNode(std::string_view name) const {
  int i = NodeIndex(name);
  return i < 0 ? nullptr : &nodes_[static_cast<size_t>(i)];
}

NodeInfo* Snapshot::MutableNode(std::string_view name) {
  int i = NodeIndex(name);
  return i < 0 ? nullptr : &nodes_[static_cast<size_t>(i)];
}

void Snapshot::Recompile(NodeInfo& info) {
  const Node& node = info.node_;
  info.allocatable_.clear();
  for (const auto& [name, q] : node.allocatable.items()) {
    if (!IsSchedulableResource(name)) continue;
    ResourceId id = names_.Intern(name);
    if (static_cast<size_t>(id) >= info.allocatable_.size()) {
      info.allocatable_.resize(static_cast<size_t>(id) + 1);
    }
    info.allocatable_[static_cast<size_t>(id)] = q.milli();
  }
  info.allowed_pods_ = node.allocatable.Get(kPods).Value();
  info.cpu_milli_ = node.allocatable.Get(kCpu).milli();
  info.memory_bytes_ = node.allocatable.Get(kMemory).Value();
  info.taints_ = node.taints;
  if (node.disk_pressure &&
      std::none_of(node.taints.begin(), node.taints.end(),
                   [](const scheduling::Taint& t) { return t.key == kTaintNodeDiskPressure; })) {
    info.taints_.push_back({std::string(kTaintNodeDiskPressure), "", scheduling::TaintEffect::kNoSchedule});
  }
  if (!node.ready) {
    bool has_condition_taint =
        std::any_of(node.taints.begin(), node.taints.end(), [](const scheduling::Taint& t) {
          return t.key == kTaintNodeNotReady || t.key == kTaintNodeUnreachable;
        });
    if (!has_condition_taint) {
      info.taints_.push_back(
          {std::string(kTaintNodeNotReady), "", scheduling::TaintEffect::kNoSchedule});
    }
  }
}

void Snapshot::UpsertNode(Node node) {
  auto it = NodeLowerBound(nodes_, node.name);
  if (it == nodes_.end() || it->name() != node.name) {
    it = nodes_.insert(it, NodeInfo());
  }
  it->node_ = std::move(node);
  Recompile(*it);
}

Status Snapshot::RemoveNode(std::string_view name) {
  int i = NodeIndex(name);
  if (i < 0) return NotFoundError(fmt::format("nodes \"{}\" not found", name));
  NodeInfo& info = nodes_[static_cast<size_t>(i)];
  for (const auto& bp : info.pods_) pod_node_.erase(bp.pod.Key());
  for (const auto& bp : info.nominated_) nominated_node_.erase(bp.pod.Key());
  nodes_.erase(nodes_.begin() + i);
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Pods

Status Snapshot::AddPod(Pod pod) {
  std::string key = pod.Key();
  if (pod_node_.count(key) > 0) {
    return AlreadyExistsError(fmt::format("pods \"{}\" already exists", pod.name));
  }
  NodeInfo* info = MutableNode(pod.node_name);
  if (info == nullptr) return NotFoundError(fmt::format("nodes \"{}\" not found", pod.node_name));
  PodUsage usage = CompileInterning(pod);
  info->usage_.Add(usage);
  pod_node_.emplace(std::move(key), pod.node_name);
  info->pods_.push_back({std::move(pod), std::move(usage)});
  return Status::Ok();
}

Status Snapshot::RemovePod(std::string_view key) {
  auto it = pod_node_.find(key);
  if (it == pod_node_.end()) return NotFoundError(fmt::format("pods \"{}\" not found", key));
  NodeInfo* info = MutableNode(it->second);
  pod_node_.erase(it);
  BERTH_CHECK(info != nullptr);
  auto& pods = info->pods_;
  for (auto p = pods.begin(); p != pods.end(); ++p) {
    if (p->pod.Key() == key) {
      info->usage_.Remove(p->usage);
      pods.erase(p);
      return Status::Ok();
    }
  }
  BERTH_CHECK_MSG(false, "pod index out of sync with node");
  return Status::Ok();
}

Status Snapshot::AddNominatedPod(Pod pod) {
  std::string key = pod.Key();
  if (nominated_node_.count(key) > 0) {
    return AlreadyExistsError(fmt::format("pods \"{}\" already exists", pod.name));
  }
  NodeInfo* info = MutableNode(pod.nominated_node_name);
  if (info == nullptr) {
    return NotFoundError(fmt::format("nodes \"{}\" not found", pod.nominated_node_name));
  }
  PodUsage usage = CompileInterning(pod);
  nominated_node_.emplace(std::move(key), pod.nominated_node_name);
  info->nominated_.push_back({std::move(pod), std::move(usage)});
  return Status::Ok();
}

Status Snapshot::RemoveNominatedPod(std::string_view key) {
  auto it = nominated_node_.find(key);
  if (it == nominated_node_.end()) return NotFoundError(fmt::format("pods \"{}\" not found", key));
  NodeInfo* info = MutableNode(it->second);
  nominated_node_.erase(it);
  BERTH_CHECK(info != nullptr);
  auto& pods = info->nominated_;
  for (auto p = pods.begin(); p != pods.end(); ++p) {
    if (p->pod.Key() == key) {
      pods.erase(p);
      return Status::Ok();
    }
  }
  BERTH_CHECK_MSG(false, "nomination index out of sync with node");
  return Status::Ok();
}

}  // namespace berth::placement
