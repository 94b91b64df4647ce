// A core/v1 Toleration and the rule that decides whether it tolerates a
// Taint (scheduling/taint.h). Both scheduling layers use it: kube-scheduler's
// TaintToleration and NodeUnschedulable filters and its TaintToleration score
// (placement/), Kueue's flavor assigner against a ResourceFlavor's nodeTaints
// (admission/).
//
// Upstream behaviour followed (kubernetes v1.32):
//   - Toleration::Tolerates is k8s.io/api core/v1 Toleration.ToleratesTaint:
//     the effect, when set, must equal the taint's; the key, when set, must
//     equal the taint's; then Exists tolerates any value and Equal needs the
//     same value. An empty key with Exists and no effect tolerates every
//     taint.
//   - TolerationsTolerate is k8s.io/component-helpers scheduling/corev1
//     TolerationsTolerateTaint: some toleration of the list tolerates the
//     taint.
//   - tolerationSeconds is not kept: it only matters for eviction by
//     NoExecute taints, which no decision here makes.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scheduling/taint.h"

namespace berth::scheduling {

struct Toleration {
  enum class Operator { kEqual, kExists };
  std::string key;  // empty with kExists tolerates every key
  Operator op = Operator::kEqual;
  std::string value;
  std::optional<TaintEffect> effect;  // nullopt tolerates every effect

  // corev1 Toleration.ToleratesTaint (see file comment).
  bool Tolerates(const Taint& t) const;
};

// True when some toleration of the list tolerates t; false for an empty list.
bool TolerationsTolerate(const std::vector<Toleration>& tolerations, const Taint& t);

}  // namespace berth::scheduling
