// Fuzz target: label and field selectors (api/selectors.h), parsing and matching, as the
// labelSelector= and fieldSelector= query parameters, `kubectl -l` and the
// metav1.LabelSelector fields of objects reach them.
//
// Input: <mode byte><selector>\n<object JSON>. The mode picks the form (any byte maps onto
// one by value): 'l' a label selector string, 'j' a metav1.LabelSelector as JSON (the
// selector line), 's' labels.SelectorFromSet of the selector line's JSON object,
// 'f' a field selector string. The object (metadata.labels for label selectors, the whole
// object for field selectors) is what the selector is matched against; when it is not a
// JSON object, {"metadata":{"labels":{"a":"b"}}} is used.
//
// Invariants checked (a violation aborts):
//   - parse errors are 400/422 Statuses, never a crash or an exception;
//   - String() of a parsed selector parses back to an equal selector that matches the
//     same objects (labels.Parse(s.String()) == s upstream);
//   - RequiresExactMatch(key) of a key the selector pins agrees with Matches;
//   - a metav1.LabelSelector (object or null) that ValidateLabelSelector accepts converts
//     (FromJson).
#include <cstdint>
#include <string>

#include "api/field_errors.h"
#include "api/selectors.h"
#include "api/yaml_codec.h"
#include "fuzz/fuzz_check.h"

using berth::api::FieldSelector;
using berth::api::LabelSelector;
using berth::api::Object;
using berth::fuzz::Check;
using berth::fuzz::CheckInputError;

namespace {

// obj.metadata.labels, or null.
const Object& LabelsOf(const Object& obj) {
  static const Object kNull;
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return kNull;
  auto labels = meta->find("labels");
  return labels == meta->end() ? kNull : *labels;
}

void CheckLabelSelector(const LabelSelector& sel, const Object& obj, std::string_view input) {
  const Object& labels = LabelsOf(obj);
  const bool matches = sel.Matches(labels);
  Check(matches == sel.MatchesObject(obj), "Matches and MatchesObject disagree", input);
  const std::string text = sel.String();
  if (sel.IsNothing()) return;  // Nothing prints as "" (as upstream), which is Everything
  auto back = LabelSelector::Parse(text);
  Check(back.ok(), "String() does not parse: " + text + ": " + back.status().ToString(), input);
  Check(*back == sel, "String() parses to another selector: " + text + " -> " + back->String(), input);
  Check(back->Matches(labels) == matches, "String() matches other labels: " + text, input);
  for (const auto& r : sel.requirements()) {
    auto exact = sel.RequiresExactMatch(r.key);
    if (!exact || !labels.is_object()) continue;
    auto it = labels.find(r.key);
    const bool has_value = it != labels.end() && it->is_string() && it->get<std::string>() == *exact;
    if (!has_value) Check(!matches, "matches without the label value it requires: " + r.key, input);
  }
}

void CheckFieldSelector(const FieldSelector& sel, const Object& obj, std::string_view input) {
  const bool matches = sel.Matches(obj);
  const std::string text = sel.String();
  auto back = FieldSelector::Parse(text);
  Check(back.ok(), "String() does not parse: " + text + ": " + back.status().ToString(), input);
  Check(*back == sel, "String() parses to another selector: " + text + " -> " + back->String(), input);
  Check(back->Matches(obj) == matches, "String() matches other objects: " + text, input);
  for (const auto& r : sel.requirements()) {
    auto exact = sel.RequiresExactMatch(r.field);
    if (exact && matches) {
      Check(berth::api::FieldValueAtPath(obj, r.field) == *exact,
            "matches without the field value it requires: " + r.field, input);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  berth::fuzz::Input in(data, size);
  const std::string_view input = in.text();
  char mode = static_cast<char>(in.Byte());
  if (std::string_view("ljsf").find(mode) == std::string_view::npos) mode = "ljsf"[static_cast<uint8_t>(mode) % 4];
  const std::string_view selector = in.Line();
  auto parsed = berth::api::ParseJson(in.Rest());
  Object obj = parsed.ok() && parsed->is_object() ? *parsed : Object{{"metadata", {{"labels", {{"a", "b"}}}}}};

  switch (mode) {
    case 'l': {
      auto sel = LabelSelector::Parse(selector);
      if (!sel.ok()) return CheckInputError(sel.status(), input), 0;
      CheckLabelSelector(*sel, obj, input);
      break;
    }
    case 'j':
    case 's': {
      auto json = berth::api::ParseJson(selector);
      if (!json.ok()) return 0;
      if (mode == 's') {
        auto sel = LabelSelector::FromSet(*json);
        if (!sel.ok()) return CheckInputError(sel.status(), input), 0;
        CheckLabelSelector(*sel, obj, input);
        if (json->is_object()) Check(sel->Matches(*json), "SelectorFromSet does not match its own set", input);
        break;
      }
      const bool valid = berth::api::ValidateLabelSelector(*json, berth::api::FieldPath("spec.selector")).empty();
      auto sel = LabelSelector::FromJson(*json);
      if (!sel.ok()) {
        CheckInputError(sel.status(), input);
        // Only objects and null are selectors (the schema refuses other types before this).
        Check(!valid || !(json->is_object() || json->is_null()),
              "a valid metav1.LabelSelector does not convert: " + sel.status().ToString(), input);
        return 0;
      }
      CheckLabelSelector(*sel, obj, input);
      break;
    }
    case 'f': {
      auto sel = FieldSelector::Parse(selector);
      if (!sel.ok()) return CheckInputError(sel.status(), input), 0;
      CheckFieldSelector(*sel, obj, input);
      break;
    }
  }
  return 0;
}
