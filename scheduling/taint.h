// A core/v1 Taint and its effect, as both scheduling layers read them: a
// Node's spec.taints (placement/) and a ResourceFlavor's spec.nodeTaints
// (admission/). Follows k8s.io/api core/v1 types.go (Taint, TaintEffect);
// timeAdded is not kept (no decision here reads it).
//
// Thread-safety: plain values.
#pragma once

#include <string>
#include <string_view>

namespace berth::scheduling {

// corev1.TaintEffect. The API allows only these three.
enum class TaintEffect { kNoSchedule, kPreferNoSchedule, kNoExecute };
// "NoSchedule", "PreferNoSchedule", "NoExecute".
std::string_view TaintEffectName(TaintEffect e);

struct Taint {
  std::string key;
  std::string value;  // "" when the taint has none
  TaintEffect effect = TaintEffect::kNoSchedule;

  // As Go prints a corev1.Taint with %s: "{key value NoSchedule <nil>}" (the
  // trailing field is the unset timeAdded). Kueue writes taints this way in
  // its "untolerated taint ... in flavor F" messages.
  std::string String() const;
};

}  // namespace berth::scheduling
