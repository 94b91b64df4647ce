// Partial admission's search for the largest pod counts that fit.
//
// Follows Kueue's PodSetReducer (pkg/scheduler/flavorassigner/
// podset_reducer.go), used by Scheduler.getInitialAssignments (pkg/scheduler/
// scheduler.go) when the PartialAdmission gate is on (beta, on by default
// since Kueue v0.5; berth: always on):
//   * Each podSet i may lose delta_i = count_i − minCount_i pods (0 without a
//     minCount); total = Σ delta_i. With total = 0 there is nothing to search.
//   * Search index k in [0, total] stands for the counts
//     count_i − ⌊delta_i × k / total⌋: every podSet shrinks in proportion,
//     k = 0 is the full counts, k = total every podSet at its minCount.
//   * A binary search (Go's sort.Search over total + 1 indices) finds the
//     smallest k whose counts `fits` accepts, i.e. the largest counts, on
//     the assumption that fewer pods fit whenever more do. The answer is the
//     value `fits` returned for that k; none when no k fits.
// The counts are spec counts (reclaimable pods are not subtracted), as in
// Kueue.
//
// Thread-safety: a pure function; `fits` is called synchronously.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "admission/model.h"

namespace berth::admission {

// The counts for search index `k` of `total` (see above). Exposed for tests.
inline std::vector<int32_t> ReducedCounts(const std::vector<PodSet>& pod_sets, int64_t k, int64_t total) {
  std::vector<int32_t> out;
  out.reserve(pod_sets.size());
  for (const PodSet& ps : pod_sets) {
    int64_t delta = ps.count - ps.min_count.value_or(ps.count);
    out.push_back(static_cast<int32_t>(ps.count - (total == 0 ? 0 : delta * k / total)));
  }
  return out;
}

// Runs the search. `fits(counts)` returns std::optional<R>: a value when the
// counts can be admitted. Returns that value for the largest fitting counts,
// or nullopt.
template <class Fits>
auto ReducePodSets(const std::vector<PodSet>& pod_sets, Fits&& fits) -> decltype(fits(std::vector<int32_t>{})) {
  using Result = decltype(fits(std::vector<int32_t>{}));
  int64_t total = 0;
  for (const PodSet& ps : pod_sets) total += ps.count - ps.min_count.value_or(ps.count);
  if (total <= 0) return Result{};
  Result best{};
  int64_t best_k = -1;
  int64_t lo = 0, hi = total + 1;  // sort.Search(total + 1, ...)
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    Result r = fits(ReducedCounts(pod_sets, mid, total));
    if (r) {
      best = std::move(r);
      best_k = mid;
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (lo != best_k) return Result{};
  return best;
}

}  // namespace berth::admission
