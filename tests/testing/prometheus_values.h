// Test helper: read one series of a prometheus::Registry (what /metrics
// would print for it), so tests assert metric values without parsing text.
//
//   MetricValue(reg, "kueue_admitted_workloads_total", {{"cluster_queue", "cq"}})
//     counter / gauge value of the series whose labels include the given
//     ones; nullopt when no such series exists (a removed gauge).
//   HistogramCount(reg, name, labels) / HistogramSum: a histogram series'
//     sample count and sum.
// When several series match, the first one wins: give every label that
// distinguishes them. Header-only; link prometheus-cpp::core.
#pragma once

#include <prometheus/registry.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace berth::testing {

inline std::optional<prometheus::ClientMetric> FindSeries(const prometheus::Registry& registry,
                                                          const std::string& name,
                                                          const std::map<std::string, std::string>& labels) {
  for (const prometheus::MetricFamily& f : registry.Collect()) {
    if (f.name != name) continue;
    for (const prometheus::ClientMetric& m : f.metric) {
      const bool all = std::all_of(labels.begin(), labels.end(), [&m](const auto& want) {
        return std::any_of(m.label.begin(), m.label.end(),
                           [&want](const auto& l) { return l.name == want.first && l.value == want.second; });
      });
      if (all) return m;
    }
  }
  return std::nullopt;
}

inline std::optional<double> MetricValue(const prometheus::Registry& registry, const std::string& name,
                                         const std::map<std::string, std::string>& labels = {}) {
  for (const prometheus::MetricFamily& f : registry.Collect()) {
    if (f.name != name) continue;
    auto m = FindSeries(registry, name, labels);
    if (!m) return std::nullopt;
    return f.type == prometheus::MetricType::Counter ? m->counter.value : m->gauge.value;
  }
  return std::nullopt;
}

inline std::optional<uint64_t> HistogramCount(const prometheus::Registry& registry, const std::string& name,
                                              const std::map<std::string, std::string>& labels = {}) {
  auto m = FindSeries(registry, name, labels);
  if (!m) return std::nullopt;
  return m->histogram.sample_count;
}

inline std::optional<double> HistogramSum(const prometheus::Registry& registry, const std::string& name,
                                          const std::map<std::string, std::string>& labels = {}) {
  auto m = FindSeries(registry, name, labels);
  if (!m) return std::nullopt;
  return m->histogram.sample_sum;
}

}  // namespace berth::testing
