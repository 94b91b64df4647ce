// Lint (cli/diagnostics/lint.h) over N PyTorchJobs (Master 1 + Worker 7, 1 GPU each) in one
// namespace and ClusterQueue on 16 nodes, half of them with a PreemptLowerPriority class of
// value 1000 and half with value 0, so every pairwise rule (mixed pod classes, order
// mismatch, shared nodes) walks all pairs. Reports jobs/s.
#include <benchmark/benchmark.h>

#include <string>

#include "cli/diagnostics/cluster_view.h"
#include "cli/diagnostics/lint.h"

namespace berth::cli::diagnostics {
namespace {

api::Object Template(const std::string& pc) {
  return {{"spec",
           {{"priorityClassName", pc},
            {"containers", {{{"name", "pytorch"}, {"image", "x"}, {"resources", {{"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}};
}

ClusterView MakeView(int jobs) {
  std::map<api::GroupResource, std::vector<api::Object>> objects;
  auto& pcs = objects[{"scheduling.k8s.io", "priorityclasses"}];
  pcs.push_back({{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", "high"}}}, {"value", 1000}});
  pcs.push_back({{"apiVersion", "scheduling.k8s.io/v1"}, {"kind", "PriorityClass"}, {"metadata", {{"name", "low"}}}, {"value", 0}});
  objects[{"kueue.x-k8s.io", "workloadpriorityclasses"}] = {
      {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "WorkloadPriorityClass"}, {"metadata", {{"name", "w-high"}}}, {"value", 100}},
      {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "WorkloadPriorityClass"}, {"metadata", {{"name", "w-low"}}}, {"value", 0}}};
  objects[{"kueue.x-k8s.io", "resourceflavors"}] = {
      {{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "ResourceFlavor"}, {"metadata", {{"name", "gpu"}}}}};
  objects[{"kueue.x-k8s.io", "clusterqueues"}] = {
      {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
       {"kind", "ClusterQueue"},
       {"metadata", {{"name", "cq"}}},
       {"spec",
        {{"resourceGroups",
          {{{"coveredResources", {"nvidia.com/gpu"}},
            {"flavors", {{{"name", "gpu"}, {"resources", {{{"name", "nvidia.com/gpu"}, {"nominalQuota", "128"}}}}}}}}}}}}}};
  objects[{"kueue.x-k8s.io", "localqueues"}] = {{{"apiVersion", "kueue.x-k8s.io/v1beta2"},
                                                {"kind", "LocalQueue"},
                                                {"metadata", {{"name", "lq"}, {"namespace", "t"}}},
                                                {"spec", {{"clusterQueue", "cq"}}}}};
  auto& nodes = objects[{"", "nodes"}];
  for (int i = 0; i < 16; ++i) {
    nodes.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata", {{"name", "node-" + std::to_string(i)}}},
                     {"status", {{"allocatable", {{"nvidia.com/gpu", "8"}}}}}});
  }
  auto& pytorchjobs = objects[{"kubeflow.org", "pytorchjobs"}];
  for (int i = 0; i < jobs; ++i) {
    const bool high = i % 2 == 0;
    pytorchjobs.push_back(
        {{"apiVersion", "kubeflow.org/v1"},
         {"kind", "PyTorchJob"},
         {"metadata",
          {{"name", "job-" + std::to_string(i)},
           {"namespace", "t"},
           {"labels", {{"kueue.x-k8s.io/queue-name", "lq"}, {"kueue.x-k8s.io/priority-class", high ? "w-low" : "w-high"}}}}},
         {"spec",
          {{"pytorchReplicaSpecs",
            {{"Master", {{"replicas", 1}, {"template", Template(high ? "high" : "low")}}},
             {"Worker", {{"replicas", 7}, {"template", Template(high ? "high" : "low")}}}}}}}});
  }
  return ClusterView::FromObjects(std::move(objects));
}

void BM_Lint(benchmark::State& state) {
  const ClusterView view = MakeView(static_cast<int>(state.range(0)));
  size_t findings = 0;
  for (auto _ : state) {
    auto f = Lint(view);
    findings = f.size();
    benchmark::DoNotOptimize(f);
  }
  state.counters["findings"] = static_cast<double>(findings);
  state.counters["jobs/s"] = benchmark::Counter(static_cast<double>(state.iterations() * state.range(0)),
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Lint)->Arg(10)->Arg(100)->Arg(400)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace berth::cli::diagnostics
BENCHMARK_MAIN();
