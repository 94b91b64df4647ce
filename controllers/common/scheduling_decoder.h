// The JSON → scheduling/ edge both scheduling controllers share: core/v1 quantities, taint
// effects, tolerations, node selector terms and label maps as the API server stores them,
// decoded into the types of scheduling/ (which hold no JSON).
//
// Every decoder is total: an absent or mistyped field reads as empty (the schema reports
// types on write), so a decoded object is never rejected here.
//   DecodeQuantity       a string ("500m", "8Gi") or a number; nullopt when neither parses.
//   DecodeTaintEffect    "NoSchedule" | "PreferNoSchedule" | "NoExecute"; nullopt otherwise.
//   DecodeTolerations    core/v1 Toleration list; operator "Exists", anything else Equal.
//   DecodeNodeSelectorTerms
//                        a NodeSelector's nodeSelectorTerms (matchExpressions and
//                        matchFields); an unknown operator becomes a requirement that matches
//                        nothing, as k8s.io/component-helpers nodeaffinity treats it.
//   DecodeLabels         a string map (labels, nodeSelector, nodeLabels); non-string values
//                        are skipped.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "core/quantity.h"
#include "scheduling/node_selector.h"
#include "scheduling/taint.h"
#include "scheduling/toleration.h"

namespace berth::controllers {

std::optional<Quantity> DecodeQuantity(const api::Object& value);
std::optional<scheduling::TaintEffect> DecodeTaintEffect(std::string_view effect);
std::vector<scheduling::Toleration> DecodeTolerations(const api::Object& list);
std::vector<scheduling::NodeSelectorTerm> DecodeNodeSelectorTerms(const api::Object& node_selector);
scheduling::Labels DecodeLabels(const api::Object& map);

}  // namespace berth::controllers
