#include "scheduling/taint.h"

namespace berth::scheduling {

std::string_view TaintEffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
  }
  return "";
}

std::string Taint::String() const {
  return "{" + key + " " + value + " " + std::string(TaintEffectName(effect)) + " <nil>}";
}

}  // namespace berth::scheduling
