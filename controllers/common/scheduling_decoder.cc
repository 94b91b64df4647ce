#include "controllers/common/scheduling_decoder.h"

#include <utility>

#include "api/unstructured.h"

namespace berth::controllers {

using api::ArrayAt;
using api::StringAt;

std::optional<Quantity> DecodeQuantity(const api::Object& value) {
  StatusOr<Quantity> q = Status(Code::kInvalid, "not a quantity");
  if (value.is_string()) {
    q = Quantity::Parse(value.get<std::string>());
  } else if (value.is_number()) {
    q = Quantity::Parse(value.dump());
  }
  if (!q.ok()) return std::nullopt;
  return q.value();
}

std::optional<scheduling::TaintEffect> DecodeTaintEffect(std::string_view effect) {
  if (effect == "NoSchedule") return scheduling::TaintEffect::kNoSchedule;
  if (effect == "PreferNoSchedule") return scheduling::TaintEffect::kPreferNoSchedule;
  if (effect == "NoExecute") return scheduling::TaintEffect::kNoExecute;
  return std::nullopt;
}

std::vector<scheduling::Toleration> DecodeTolerations(const api::Object& list) {
  std::vector<scheduling::Toleration> out;
  if (!list.is_array()) return out;
  for (const api::Object& t : list) {
    scheduling::Toleration tol;
    tol.key = StringAt(t, "key");
    tol.op = StringAt(t, "operator") == "Exists" ? scheduling::Toleration::Operator::kExists
                                                 : scheduling::Toleration::Operator::kEqual;
    tol.value = StringAt(t, "value");
    tol.effect = DecodeTaintEffect(StringAt(t, "effect"));
    out.push_back(std::move(tol));
  }
  return out;
}

namespace {

std::vector<scheduling::NodeSelectorRequirement> DecodeRequirements(const api::Object& list) {
  using Op = scheduling::NodeSelectorRequirement::Operator;
  std::vector<scheduling::NodeSelectorRequirement> out;
  if (!list.is_array()) return out;
  for (const api::Object& r : list) {
    scheduling::NodeSelectorRequirement req;
    req.key = StringAt(r, "key");
    const std::string op = StringAt(r, "operator");
    if (op == "In") {
      req.op = Op::kIn;
    } else if (op == "NotIn") {
      req.op = Op::kNotIn;
    } else if (op == "Exists") {
      req.op = Op::kExists;
    } else if (op == "DoesNotExist") {
      req.op = Op::kDoesNotExist;
    } else if (op == "Gt") {
      req.op = Op::kGt;
    } else if (op == "Lt") {
      req.op = Op::kLt;
    } else {
      // An unknown operator makes the term match nothing (scheduling/node_selector.h):
      // "Gt" without values is invalid and has that effect.
      req.op = Op::kGt;
      out.push_back(std::move(req));
      continue;
    }
    for (const api::Object& v : ArrayAt(r, "values")) req.values.push_back(api::AsString(v));
    out.push_back(std::move(req));
  }
  return out;
}

}  // namespace

std::vector<scheduling::NodeSelectorTerm> DecodeNodeSelectorTerms(const api::Object& node_selector) {
  std::vector<scheduling::NodeSelectorTerm> terms;
  for (const api::Object& t : ArrayAt(node_selector, "nodeSelectorTerms")) {
    terms.push_back(
        {DecodeRequirements(api::Field(t, "matchExpressions")), DecodeRequirements(api::Field(t, "matchFields"))});
  }
  return terms;
}

scheduling::Labels DecodeLabels(const api::Object& map) {
  scheduling::Labels out;
  if (!map.is_object()) return out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it.value().is_string()) out.emplace(it.key(), it.value().get<std::string>());
  }
  return out;
}

}  // namespace berth::controllers
