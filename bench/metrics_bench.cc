// What /metrics costs:
//   BM_RecordRequest   labels (LabelsForRequest) + apiserver_request_total +
//                      apiserver_request_duration_seconds for one request, the
//                      work ApiServer::Handle adds per request when metrics are on
//                      (RequestInfo parsed once outside the loop, as Handle has it);
//   BM_Scrape/N        GET /metrics (MetricsResponse: collect, sort, text) of a
//                      registry with Kueue's metrics for N ClusterQueues (each 2
//                      flavors x 3 resources, 4 priority classes) and the request
//                      metrics of 40 resource/verb pairs.
#include <benchmark/benchmark.h>
#include <prometheus/registry.h>

#include "apiserver/request_metrics.h"
#include "controllers/kueue/metrics.h"

namespace berth::bench {
namespace {

void BM_RecordRequest(benchmark::State& state) {
  prometheus::Registry registry;
  apiserver::RequestMetrics metrics(registry);
  apiserver::HttpRequest req;
  req.method = "PUT";
  req.target = "/apis/kueue.x-k8s.io/v1beta2/namespaces/team-a/workloads/job-train-1a2b3/status";
  const apiserver::RequestInfo info = *apiserver::ParseRequestInfo(req.method, req.target);
  for (auto _ : state) {
    metrics.Observe(apiserver::LabelsForRequest(req, &info, {.resource = true, .subresource = true, .path_template = ""}), 200, std::chrono::microseconds(800));
  }
}
BENCHMARK(BM_RecordRequest);

void BM_Scrape(benchmark::State& state) {
  prometheus::Registry registry;
  controllers::kueue::KueueMetrics kueue(registry);
  apiserver::RequestMetrics requests(registry);
  for (int q = 0; q < state.range(0); ++q) {
    const std::string cq = "cq-" + std::to_string(q);
    controllers::kueue::ClusterQueueMetrics m;
    m.name = cq;
    m.cohort = "all";
    m.status = controllers::kueue::ClusterQueueMetricStatus::kActive;
    for (const char* flavor : {"on-demand", "spot"}) {
      for (const char* resource : {"cpu", "memory", "nvidia.com/gpu"}) {
        m.resources.push_back({flavor, resource, 8000, 4000, std::nullopt, 3000, 2000});
      }
    }
    kueue.ReportClusterQueue(m);
    kueue.ReportPendingWorkloads(cq, 3, 1);
    const controllers::kueue::LocalQueueKey lq{"team-" + std::to_string(q), "user-queue"};
    for (const char* pc : {"", "low", "mid", "high"}) kueue.WorkloadAdmitted(cq, {}, lq, pc, std::chrono::seconds(q % 30));
    kueue.WorkloadEvicted(cq, lq, "Preempted", "", "low");
  }
  for (const char* resource : {"pods", "jobs", "workloads", "clusterqueues", "events", "nodes", "leases", "jobsets",
                               "trainjobs", "pytorchjobs"}) {
    for (const char* verb : {"GET", "LIST", "WATCH", "PUT"}) {
      requests.Observe({verb, "", "g", "v1", resource, "", "namespace", "apiserver"}, 200, std::chrono::milliseconds(2));
    }
  }
  apiserver::HttpRequest get;
  get.method = "GET";
  size_t bytes = 0;
  for (auto _ : state) {
    apiserver::HttpResponse r = apiserver::MetricsResponse(registry, get);
    bytes = r.body.size();
    benchmark::DoNotOptimize(r);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_Scrape)->Arg(1)->Arg(20)->Arg(100)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace berth::bench

BENCHMARK_MAIN();
