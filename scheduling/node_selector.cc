#include "scheduling/node_selector.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

namespace berth::scheduling {

namespace {

bool ParseInt64(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const char* begin = s.data();
  // strconv.ParseInt accepts a leading '+'; from_chars does not.
  if (*begin == '+') {
    ++begin;
    if (begin == s.data() + s.size() || *begin == '-') return false;
  }
  auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), *out, 10);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool Contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// Evaluates one requirement against a value that may be absent (nullopt).
// Returns nullopt when the requirement itself is invalid (the term then
// fails).
std::optional<bool> MatchRequirement(const NodeSelectorRequirement& r,
                                     std::optional<std::string_view> value) {
  using Op = NodeSelectorRequirement::Operator;
  switch (r.op) {
    case Op::kIn:
      if (r.values.empty()) return std::nullopt;
      return value.has_value() && Contains(r.values, *value);
    case Op::kNotIn:
      if (r.values.empty()) return std::nullopt;
      return !value.has_value() || !Contains(r.values, *value);
    case Op::kExists:
      if (!r.values.empty()) return std::nullopt;
      return value.has_value();
    case Op::kDoesNotExist:
      if (!r.values.empty()) return std::nullopt;
      return !value.has_value();
    case Op::kGt:
    case Op::kLt: {
      int64_t bound = 0;
      if (r.values.size() != 1 || !ParseInt64(r.values[0], &bound)) return std::nullopt;
      int64_t actual = 0;
      if (!value.has_value() || !ParseInt64(*value, &actual)) return false;
      return r.op == Op::kGt ? actual > bound : actual < bound;
    }
  }
  return std::nullopt;
}

}  // namespace

bool MatchesNodeSelectorTerm(const NodeSelectorTerm& term, const Labels& labels,
                             std::string_view node_name) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& r : term.match_expressions) {
    auto it = labels.find(r.key);
    std::optional<std::string_view> value;
    if (it != labels.end()) value = it->second;
    std::optional<bool> m = MatchRequirement(r, value);
    if (!m.value_or(false)) return false;
  }
  for (const auto& r : term.match_fields) {
    using Op = NodeSelectorRequirement::Operator;
    // Field selectors support metadata.name with In/NotIn only.
    if (r.key != "metadata.name" || (r.op != Op::kIn && r.op != Op::kNotIn)) return false;
    std::optional<bool> m = MatchRequirement(r, node_name);
    if (!m.value_or(false)) return false;
  }
  return true;
}

bool MatchesNodeSelectorTerms(const std::vector<NodeSelectorTerm>& terms, const Labels& labels,
                              std::string_view node_name) {
  for (const auto& term : terms) {
    if (MatchesNodeSelectorTerm(term, labels, node_name)) return true;
  }
  return false;
}

}  // namespace berth::scheduling
