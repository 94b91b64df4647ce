// Quantity::Parse and Quantity::String throughput on the shapes seen in pod
// requests and ClusterQueue quotas. Run:
//   build/bench/quantity_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/quantity.h"

namespace {

// A mix of request/quota spellings: CPU in milli and whole cores, memory in
// binary and SI suffixes, fractions, exponents.
const std::vector<std::string_view>& Inputs() {
  static const std::vector<std::string_view> kInputs = {
      "500m", "2", "1.5", "8Gi", "20096Mi", "100M", "1e3", "0.1", "1536Mi", "250m",
      "64", "1.5Gi", "12e-3", "4Ti", "750Mi", "1000k",
  };
  return kInputs;
}

// Inputs(), parsed.
std::vector<berth::Quantity> ParsedInputs() {
  std::vector<berth::Quantity> quantities;
  for (std::string_view text : Inputs()) quantities.push_back(berth::Quantity::MustParse(text));
  return quantities;
}

void BM_Parse(benchmark::State& state, std::string_view text) {
  for (auto _ : state) {
    auto q = berth::Quantity::Parse(text);
    benchmark::DoNotOptimize(q);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ParseMix(benchmark::State& state) {
  const auto& inputs = Inputs();
  size_t i = 0;
  for (auto _ : state) {
    auto q = berth::Quantity::Parse(inputs[i]);
    benchmark::DoNotOptimize(q);
    if (++i == inputs.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_StringMix(benchmark::State& state) {
  const std::vector<berth::Quantity> quantities = ParsedInputs();
  size_t i = 0;
  for (auto _ : state) {
    std::string s = quantities[i].String();
    benchmark::DoNotOptimize(s);
    if (++i == quantities.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}

// Summing per-pod requests times pod counts, as quota usage is computed.
void BM_SumRequests(benchmark::State& state) {
  const std::vector<berth::Quantity> quantities = ParsedInputs();
  for (auto _ : state) {
    berth::Quantity total;
    for (const auto& q : quantities) total += q * 8;
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(quantities.size()));
}

BENCHMARK_CAPTURE(BM_Parse, milli_cpu, std::string_view("500m"));
BENCHMARK_CAPTURE(BM_Parse, binary_memory, std::string_view("20096Mi"));
BENCHMARK_CAPTURE(BM_Parse, fractional_binary, std::string_view("1.5Gi"));
BENCHMARK_CAPTURE(BM_Parse, exponent, std::string_view("12e-3"));
BENCHMARK(BM_ParseMix);
BENCHMARK(BM_StringMix);
BENCHMARK(BM_SumRequests);

}  // namespace

BENCHMARK_MAIN();
