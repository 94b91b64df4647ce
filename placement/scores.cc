#include "placement/scores.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "scheduling/taint.h"
#include "scheduling/toleration.h"

namespace berth::placement {

namespace {

// leastRequestedScore: integer arithmetic as upstream. 128-bit intermediate
// so very large memory sizes cannot overflow the product.
int64_t LeastRequested(int64_t requested, int64_t capacity) {
  if (capacity <= 0 || requested > capacity) return 0;
  if (capacity <= INT64_MAX / kMaxNodeScore) return (capacity - requested) * kMaxNodeScore / capacity;
  return static_cast<int64_t>(static_cast<__int128>(capacity - requested) * kMaxNodeScore /
                              capacity);
}

}  // namespace

int64_t LeastAllocatedScore(const PodUsage& pod, const NodeInfo& node, const NodeUsage& usage) {
  int64_t score = 0;
  int64_t weight_sum = 0;
  if (node.cpu_milli() != 0) {
    score += LeastRequested(SaturatingAdd(usage.non_zero_cpu_milli, pod.non_zero_cpu_milli),
                            node.cpu_milli());
    weight_sum += 1;
  }
  if (node.memory_bytes() != 0) {
    score += LeastRequested(SaturatingAdd(usage.non_zero_memory_bytes, pod.non_zero_memory_bytes),
                            node.memory_bytes());
    weight_sum += 1;
  }
  return weight_sum == 0 ? 0 : score / weight_sum;
}

int64_t BalancedAllocationScore(const PodUsage& pod, const NodeInfo& node, const NodeUsage& usage) {
  if (pod.cpu_milli == 0 && pod.memory_bytes == 0) return 0;  // best-effort pod: skipped
  double fractions[2];
  int n = 0;
  auto add = [&](int64_t requested, int64_t allocatable) {
    if (allocatable == 0) return;
    double f = static_cast<double>(requested) / static_cast<double>(allocatable);
    fractions[n++] = std::min(f, 1.0);
  };
  add(SaturatingAdd(usage.cpu_milli, pod.cpu_milli), node.cpu_milli());
  add(SaturatingAdd(usage.memory_bytes, pod.memory_bytes), node.memory_bytes());
  double std_dev = n == 2 ? std::abs((fractions[0] - fractions[1]) / 2) : 0.0;
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

int64_t IntolerablePreferNoScheduleTaints(const Pod& pod, const NodeInfo& node) {
  int64_t count = 0;
  for (const scheduling::Taint& t : node.taints()) {
    if (t.effect != scheduling::TaintEffect::kPreferNoSchedule) continue;
    bool tolerated = std::any_of(
        pod.tolerations.begin(), pod.tolerations.end(), [&](const scheduling::Toleration& tol) {
          return (!tol.effect || *tol.effect == scheduling::TaintEffect::kPreferNoSchedule) &&
                 tol.Tolerates(t);
        });
    if (!tolerated) ++count;
  }
  return count;
}

void NormalizeReverse(std::vector<int64_t>& counts) {
  int64_t max_count = 0;
  for (int64_t c : counts) max_count = std::max(max_count, c);
  for (int64_t& c : counts) {
    c = max_count == 0 ? kMaxNodeScore : kMaxNodeScore - kMaxNodeScore * c / max_count;
  }
}

}  // namespace berth::placement
