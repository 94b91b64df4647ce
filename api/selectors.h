// Label and field selectors, as Kubernetes' k8s.io/apimachinery/pkg/labels and
// .../pkg/fields implement them.
//
// Label selectors come in two forms:
//   * the string form of `kubectl -l` and the `labelSelector=` query parameter:
//       a=b  a==b  a!=b  a in (x,y)  a notin (x)  a  !a  a>5  a<5   joined by ',' (AND),
//     whitespace allowed between tokens; parse errors are BadRequest Statuses with the
//     parser's message, e.g. "unable to parse requirement: found '', expected: identifier"
//     or, for a bad key, "unable to parse requirement: <nil>: Invalid value: \"-a\": name
//     part must consist of ..." (upstream prints its nil field path as "<nil>");
//   * metav1.LabelSelector JSON: {"matchLabels": {k: v}, "matchExpressions": [{"key": k,
//     "operator": "In"|"NotIn"|"Exists"|"DoesNotExist", "values": [...]}]}.
//     LabelSelectorAsSelector semantics: a null/absent selector matches NOTHING, an empty
//     one ({}) matches EVERYTHING. Kubernetes types that say "nil matches no objects" (e.g.
//     Kueue ClusterQueue.spec.namespaceSelector: nil = no namespace, {} = all namespaces)
//     get that by passing the field as-is; callers whose API documents nil as "everything"
//     must special-case the absent field themselves.
// Requirements are kept sorted by key (then by their text), values sorted and
// de-duplicated, so String() is deterministic: "!b,a in (x,y),c=d" parses and prints as
// "a in (x,y),!b,c=d".
//
// Field selectors (`--field-selector`, `fieldSelector=`): terms `path=value`,
// `path==value`, `path!=value`, joined by ',' (AND); '\' escapes ',', '=' and '\' in values.
// A term matches an object by the dotted path of its field (metadata.name, spec.nodeName,
// status.phase, involvedObject.name, ...): an absent or null field reads as "", strings as
// themselves, numbers and booleans as their JSON text. Which fields a resource supports is
// the API server's business (it answers `field label not supported`); this layer accepts
// any path. Terms are kept sorted by their text, as upstream does.
//
// Thread-safety: immutable values after parsing; safe to share across threads.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_errors.h"
#include "api/object.h"
#include "core/status.h"

namespace berth::api {

enum class SelectorOperator {
  kEquals,        // a=b
  kDoubleEquals,  // a==b
  kNotEquals,     // a!=b        (also matches objects without the label)
  kIn,            // a in (x,y)
  kNotIn,         // a notin (x) (also matches objects without the label)
  kExists,        // a
  kDoesNotExist,  // !a
  kGreaterThan,   // a>5         (label value parsed as an integer)
  kLessThan,      // a<5
};

// One label requirement: key, operator and the sorted, de-duplicated values.
struct LabelRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kExists;
  std::vector<std::string> values;

  bool Matches(const Object& labels) const;
  // "a=b", "a in (x,y)", "!a", ...
  std::string String() const;
  bool operator==(const LabelRequirement&) const = default;
};

// labels.NewRequirement: validates the key (qualified name), the values (label values) and
// the value count for the operator. Errors are BadRequest with upstream's message.
StatusOr<LabelRequirement> NewLabelRequirement(std::string key, SelectorOperator op,
                                               std::vector<std::string> values);

class LabelSelector {
 public:
  // Matches every object (labels.Everything(); also the empty string and `{}`).
  static LabelSelector Everything() { return LabelSelector(); }
  // Matches no object (labels.Nothing(); a null metav1.LabelSelector).
  static LabelSelector Nothing();

  // The string form ("app=x,tier in (a,b),!canary"). "" is Everything.
  static StatusOr<LabelSelector> Parse(std::string_view text);
  // metav1.LabelSelector JSON (see the header comment for null vs {}). Unknown operators
  // fail with "\"Foo\" is not a valid label selector operator".
  static StatusOr<LabelSelector> FromJson(const Object& selector);
  // From a set of labels (labels.SelectorFromSet): k1=v1,k2=v2.
  static StatusOr<LabelSelector> FromSet(const Object& labels);

  // `labels` is an object of string values (metadata.labels); null/absent = no labels.
  bool Matches(const Object& labels) const;
  // Convenience: Matches(obj.metadata.labels).
  bool MatchesObject(const Object& obj) const;

  bool IsEverything() const { return !nothing_ && requirements_.empty(); }
  bool IsNothing() const { return nothing_; }
  // The value an object's label must have to match, when the selector pins it with = / ==
  // or a one-value `in` (for index lookups), else nullopt.
  std::optional<std::string> RequiresExactMatch(std::string_view key) const;

  // Requirements joined by ','; "" for Everything and Nothing (as upstream).
  std::string String() const;
  const std::vector<LabelRequirement>& requirements() const { return requirements_; }

  bool operator==(const LabelSelector&) const = default;

 private:
  void Add(LabelRequirement r);  // then SortRequirements before use
  void SortRequirements();
  std::vector<LabelRequirement> requirements_;
  bool nothing_ = false;
};

// ValidateLabelSelector (metav1 validation) for a metav1.LabelSelector in an object, with
// field paths under `path`: matchLabels as ValidateLabels, each matchExpressions[i] with
// "must be specified when `operator` is 'In' or 'NotIn'", "may not be specified when
// `operator` is 'Exists' or 'DoesNotExist'", "not a valid selector operator", key and value
// syntax. null is valid.
FieldErrorList ValidateLabelSelector(const Object& selector, const FieldPath& path);

// One field selector term.
struct FieldRequirement {
  std::string field;  // dotted path, e.g. "spec.nodeName"
  bool not_equals = false;
  std::string value;  // unescaped

  bool Matches(const Object& obj) const;
  // "field=value" / "field!=value" with the value escaped ("==" prints as "=").
  std::string String() const;
  bool operator==(const FieldRequirement&) const = default;
};

class FieldSelector {
 public:
  static FieldSelector Everything() { return FieldSelector(); }
  // "" is Everything. Errors are BadRequest:
  //   "invalid selector: 'x'; can't understand 'x'" (a term without an operator),
  //   "invalid field selector: invalid escape sequence: \\x",
  //   "invalid field selector: unescaped character: ,".
  static StatusOr<FieldSelector> Parse(std::string_view text);

  bool Matches(const Object& obj) const;
  bool IsEverything() const { return requirements_.empty(); }
  // The value `field` must equal for the selector to match (a `field=value` term), if any.
  std::optional<std::string> RequiresExactMatch(std::string_view field) const;
  std::string String() const;
  const std::vector<FieldRequirement>& requirements() const { return requirements_; }

  bool operator==(const FieldSelector&) const = default;

 private:
  std::vector<FieldRequirement> requirements_;
};

// The string a field selector compares for `path` in `obj` ("" when absent).
std::string FieldValueAtPath(const Object& obj, std::string_view dotted_path);

// Field selector value escaping: '\' -> "\\", ',' -> "\,", '=' -> "\=".
std::string EscapeFieldSelectorValue(std::string_view value);

}  // namespace berth::api
