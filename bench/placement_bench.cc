// Placement throughput on a cluster of virtual nodes (issue 6 target:
// >= 5,000 pod placements/s on 1,000 nodes). Run:
//   build/bench/placement_bench --benchmark_counters_tabular=true
//
// Cluster: N nodes with 64 cpu, 256Gi memory, 8 nvidia.com/gpu, 110 pods,
// zone labels; every 10th node carries a NoSchedule taint and every 7th a
// PreferNoSchedule taint, so filters and scores do real work. Pods request
// 1 cpu / 4Gi (and 1 GPU in the GPU variant) with a zone nodeSelector on a
// third of them.
//
//   BM_PlaceAndAssume   one Schedule() + Snapshot::AddPod() per pod, as the
//                       controller does; the cluster is rebuilt (untimed)
//                       when it fills. items/s = placements/s.
//   BM_Decide           Schedule() alone on a half-full cluster (no assume).
//   BM_Unschedulable    a pod that fits nowhere and whose preemption dry-runs
//                       every node (full cluster of lower-priority pods, one
//                       victim found per node): the worst case per decision.
//   BM_PlaceGang16      PlaceGang() of a 16-pod gang (all-or-nothing trial).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "placement/scheduler.h"
#include "placement/snapshot.h"

namespace {

using berth::Quantity;
using berth::scheduling::TaintEffect;
using namespace berth::placement;

Node MakeNode(int i) {
  Node n;
  n.name = "node-" + std::to_string(10000 + i);
  n.labels["topology.kubernetes.io/zone"] = "zone-" + std::to_string(i % 3);
  n.labels["kubernetes.io/hostname"] = n.name;
  n.allocatable = ResourceList::MustParse(
      {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}});
  if (i % 10 == 9) n.taints.push_back({"dedicated", "infra", TaintEffect::kNoSchedule});
  if (i % 7 == 6) n.taints.push_back({"spot", "true", TaintEffect::kPreferNoSchedule});
  return n;
}

Snapshot MakeCluster(int nodes) {
  Snapshot s;
  for (int i = 0; i < nodes; ++i) s.UpsertNode(MakeNode(i));
  return s;
}

Pod MakePod(int64_t i, bool gpu, int32_t priority = 0) {
  Pod p;
  p.namespace_ = "team-a";
  p.name = "job-" + std::to_string(i / 16) + "-worker-" + std::to_string(i % 16);
  p.uid = "uid-" + std::to_string(i);
  p.priority = priority;
  berth::scheduling::ContainerResources<ResourceList> c;
  c.requests = ResourceList::MustParse({{"cpu", "1"}, {"memory", "4Gi"}});
  if (gpu) c.requests.Set("nvidia.com/gpu", Quantity::FromUnits(1));
  p.resources.containers.push_back(std::move(c));
  if (i % 3 == 0) p.node_selector["topology.kubernetes.io/zone"] = "zone-" + std::to_string(i % 3);
  return p;
}

// MakeCluster(nodes) with `per_node` pods of MakePod(i, gpu) bound to every
// node (round-robin, no nodeSelector).
Snapshot FilledCluster(benchmark::State& state, int nodes, int per_node, bool gpu) {
  Snapshot s = MakeCluster(nodes);
  for (int64_t i = 0; i < int64_t{nodes} * per_node; ++i) {
    Pod p = MakePod(i, gpu);
    p.node_selector.clear();
    p.node_name = s.nodes()[static_cast<size_t>(i % nodes)].name();
    if (!s.AddPod(std::move(p)).ok()) state.SkipWithError("AddPod failed");
  }
  return s;
}

void BM_PlaceAndAssume(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const bool gpu = state.range(1) != 0;
  Snapshot s = MakeCluster(nodes);
  int64_t i = 0;
  int64_t placed = 0;
  for (auto _ : state) {
    Pod p = MakePod(i++, gpu);
    Decision d = Schedule(s, p);
    if (!d.bound()) {
      state.PauseTiming();
      s = MakeCluster(nodes);
      state.ResumeTiming();
      continue;
    }
    p.node_name = d.node_name;
    if (!s.AddPod(std::move(p)).ok()) state.SkipWithError("AddPod failed");
    ++placed;
  }
  state.SetItemsProcessed(placed);
}
BENCHMARK(BM_PlaceAndAssume)->ArgsProduct({{100, 1000}, {0, 1}})->ArgNames({"nodes", "gpu"})
    ->Unit(benchmark::kMicrosecond);

void BM_Decide(benchmark::State& state) {
  // Half full: 32 one-cpu pods per node.
  Snapshot s = FilledCluster(state, static_cast<int>(state.range(0)), 32, false);
  Pod probe = MakePod(1000000, true);
  for (auto _ : state) {
    Decision d = Schedule(s, probe);
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Decide)->Arg(1000)->ArgName("nodes")->Unit(benchmark::kMicrosecond);

void BM_Unschedulable(benchmark::State& state) {
  // Every node full of priority-0 GPU pods (8 per node).
  Snapshot s = FilledCluster(state, static_cast<int>(state.range(0)), 8, true);
  Pod hp = MakePod(1000000, true, /*priority=*/1000);
  hp.node_selector.clear();
  for (auto _ : state) {
    Decision d = Schedule(s, hp);
    if (!d.preemption) state.SkipWithError("expected a preemption plan");
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Unschedulable)->Arg(1000)->ArgName("nodes")->Unit(benchmark::kMicrosecond);

void BM_PlaceGang16(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Snapshot s = MakeCluster(nodes);
  std::vector<Pod> gang;
  for (int64_t i = 0; i < 16; ++i) gang.push_back(MakePod(i, true));
  for (auto _ : state) {
    GangDecision g = PlaceGang(s, gang);
    if (!g.placed) state.SkipWithError("gang did not fit");
    benchmark::DoNotOptimize(g);
  }
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_PlaceGang16)->Arg(1000)->ArgName("nodes")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
