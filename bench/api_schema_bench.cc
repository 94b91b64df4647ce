// Cost of the resource-definition machinery: building the Registry from the embedded
// resource files (once per process) and one create through the admission pipeline
// (Strict unknown-field check, pruning, defaulting, metadata + schema + strategy
// validation) for a Pod (the large shared pod schema, reached through $refs) and a
// ClusterQueue (with Kueue's strategy), and one update of a Pod. Run:
//   build/bench/api_schema_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <string>

#include "api/admission_pipeline.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"

namespace {

using berth::api::AdmissionPipeline;
using berth::api::FieldValidation;
using berth::api::Object;
using berth::api::Registry;
using berth::api::StrategyRegistry;
using berth::api::WriteRequest;

constexpr const char* kPod = R"(
apiVersion: v1
kind: Pod
metadata:
  name: trainer-node-0-0
  namespace: team-a
  labels: {jobset.sigs.k8s.io/jobset-name: trainer}
spec:
  restartPolicy: OnFailure
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: node
    image: pytorch/pytorch:2.7.1
    command: [torchrun, --redirects, "2", --tee, "2", train.py]
    ports: [{containerPort: 29500}]
    env:
    - {name: PET_NNODES, value: "2"}
    - name: PET_NODE_RANK
      valueFrom: {fieldRef: {fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
    resources:
      requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: "1"}
      limits: {nvidia.com/gpu: "1"}
)";

constexpr const char* kClusterQueueV1beta2 = R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  cohortName: research
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: on-demand
      resources:
      - {name: cpu, nominalQuota: "64"}
      - {name: memory, nominalQuota: 256Gi}
      - {name: nvidia.com/gpu, nominalQuota: "8", borrowingLimit: "4"}
    - name: spot
      resources:
      - {name: cpu, nominalQuota: "32"}
      - {name: memory, nominalQuota: 128Gi}
      - {name: nvidia.com/gpu, nominalQuota: "4"}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority}
)";

Object Parse(const char* yaml) { return berth::api::ParseYaml(yaml).value(); }

void BM_RegistryFromEmbeddedFiles(benchmark::State& state) {
  for (auto _ : state) {
    auto r = Registry::FromFiles(berth::api::EmbeddedResourceFiles());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_RegistryFromEmbeddedFiles)->Unit(benchmark::kMillisecond);

// Admits `make_request()` once per iteration (the request built inside the timing).
template <typename MakeRequest>
void AdmitEach(benchmark::State& state, const AdmissionPipeline& pipeline, const MakeRequest& make_request) {
  for (auto _ : state) {
    auto w = pipeline.Admit(make_request());
    if (!w.ok()) {
      state.SkipWithError(w.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(w);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_AdmitCreate(benchmark::State& state, const char* yaml, const char* api_version) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  Object obj = Parse(yaml);
  if (api_version != nullptr) obj["apiVersion"] = api_version;
  AdmitEach(state, pipeline, [&] {
    WriteRequest req;
    req.object = obj;
    req.field_validation = FieldValidation::kStrict;
    return req;
  });
}
BENCHMARK_CAPTURE(BM_AdmitCreate, Pod, kPod, nullptr)->Unit(benchmark::kMicrosecond);

// An update of a stored Pod that changes a label (as a controller's relabel or annotation
// does): the pipeline also decides whether metadata.generation moves.
void BM_AdmitUpdatePodLabel(benchmark::State& state) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest create;
  create.object = Parse(kPod);
  auto stored = pipeline.Admit(std::move(create));
  if (!stored.ok()) {
    state.SkipWithError(stored.status().ToString().c_str());
    return;
  }
  const Object old = stored->object;
  Object changed = old;
  changed["metadata"]["labels"]["relabelled"] = "true";
  AdmitEach(state, pipeline, [&] {
    WriteRequest req;
    req.operation = berth::api::Operation::kUpdate;
    req.object = changed;
    req.old = &old;
    return req;
  });
}
BENCHMARK(BM_AdmitUpdatePodLabel)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AdmitCreate, ClusterQueueV1beta2, kClusterQueueV1beta2, nullptr)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
