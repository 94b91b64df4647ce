// Fluent builders for placement tests: nodes and pods in a line each.
//   Snapshot s;
//   s.UpsertNode(NodeBuilder("n1").Cpu("4").Memory("8Gi").Build());
//   s.AddPod(PodBuilder("w0").Cpu("1").Priority(0).BoundTo("n1").Build());
// Nodes get allocatable pods=110 unless Pods() says otherwise. Pods have one
// container holding the requests given with Cpu/Memory/Resource; their uid
// is "uid-<name>".
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "placement/model.h"
#include "placement/snapshot.h"

namespace berth::placement::testing {

inline Quantity Q(std::string_view s) { return Quantity::MustParse(s); }

// A fixed instant plus `seconds`, for start times.
inline Time At(int seconds) {
  return Time(std::chrono::seconds(1767225600 + seconds));  // 2026-01-01T00:00:00Z + s
}

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name) {
    node_.name = std::move(name);
    node_.allocatable.Set(kPods, Quantity::FromUnits(110));
  }
  NodeBuilder& Cpu(std::string_view q) { return Resource(kCpu, q); }
  NodeBuilder& Memory(std::string_view q) { return Resource(kMemory, q); }
  NodeBuilder& Pods(int64_t n) {
    node_.allocatable.Set(kPods, Quantity::FromUnits(n));
    return *this;
  }
  NodeBuilder& Resource(std::string_view name, std::string_view q) {
    node_.allocatable.Set(name, Q(q));
    return *this;
  }
  NodeBuilder& Label(std::string k, std::string v) {
    node_.labels[std::move(k)] = std::move(v);
    return *this;
  }
  NodeBuilder& Taint(std::string k, std::string v,
                     scheduling::TaintEffect e = scheduling::TaintEffect::kNoSchedule) {
    node_.taints.push_back({std::move(k), std::move(v), e});
    return *this;
  }
  NodeBuilder& Unschedulable() {
    node_.unschedulable = true;
    return *this;
  }
  NodeBuilder& NotReady() {
    node_.ready = false;
    return *this;
  }
  NodeBuilder& DiskPressure() {
    node_.disk_pressure = true;
    return *this;
  }
  NodeBuilder& HostImages(std::vector<std::string> patterns) {
    node_.host_images = std::move(patterns);
    return *this;
  }
  Node Build() const { return node_; }

 private:
  Node node_;
};

class PodBuilder {
 public:
  explicit PodBuilder(std::string name, std::string ns = "default") {
    pod_.name = std::move(name);
    pod_.namespace_ = std::move(ns);
    pod_.uid = "uid-" + pod_.name;
    pod_.resources.containers.emplace_back();
  }
  PodBuilder& Cpu(std::string_view q) { return Resource(kCpu, q); }
  PodBuilder& Memory(std::string_view q) { return Resource(kMemory, q); }
  PodBuilder& Resource(std::string_view name, std::string_view q) {
    pod_.resources.containers[0].requests.Set(name, Q(q));
    return *this;
  }
  PodBuilder& Priority(int32_t p) {
    pod_.priority = p;
    return *this;
  }
  PodBuilder& Never() {
    pod_.preemption_policy = PreemptionPolicy::kNever;
    return *this;
  }
  PodBuilder& NodeName(std::string n) {
    pod_.node_name = std::move(n);
    return *this;
  }
  PodBuilder& BoundTo(std::string n) { return NodeName(std::move(n)); }
  PodBuilder& NodeSelector(std::string k, std::string v) {
    pod_.node_selector[std::move(k)] = std::move(v);
    return *this;
  }
  PodBuilder& RequiredAffinity(std::vector<scheduling::NodeSelectorTerm> terms) {
    pod_.required_node_affinity = std::move(terms);
    return *this;
  }
  PodBuilder& Image(std::string image) {
    pod_.images.push_back(std::move(image));
    return *this;
  }
  PodBuilder& Tolerate(scheduling::Toleration t) {
    pod_.tolerations.push_back(std::move(t));
    return *this;
  }
  PodBuilder& Nominated(std::string n) {
    pod_.nominated_node_name = std::move(n);
    return *this;
  }
  PodBuilder& Started(Time t) {
    pod_.start_time = t;
    return *this;
  }
  PodBuilder& Terminating(bool by_preemption = false) {
    pod_.terminating = true;
    pod_.terminating_by_preemption = by_preemption;
    return *this;
  }
  Pod Build() const { return pod_; }

 private:
  Pod pod_;
};

}  // namespace berth::placement::testing
