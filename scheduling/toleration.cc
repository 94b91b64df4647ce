#include "scheduling/toleration.h"

namespace berth::scheduling {

bool Toleration::Tolerates(const Taint& t) const {
  if (effect.has_value() && *effect != t.effect) return false;
  if (!key.empty() && key != t.key) return false;
  switch (op) {
    case Operator::kExists: return true;
    case Operator::kEqual: return value == t.value;
  }
  return false;
}

bool TolerationsTolerate(const std::vector<Toleration>& tolerations, const Taint& t) {
  for (const auto& tol : tolerations) {
    if (tol.Tolerates(t)) return true;
  }
  return false;
}

}  // namespace berth::scheduling
