#include "placement/model.h"

#include <algorithm>
#include <charconv>

#include "core/pod_requests.h"

namespace berth::placement {

// ---------------------------------------------------------------------------
// ResourceList

namespace {
auto FindName(std::vector<std::pair<std::string, Quantity>>& v, std::string_view name) {
  return std::lower_bound(v.begin(), v.end(), name,
                          [](const auto& e, std::string_view n) { return e.first < n; });
}
auto FindName(const std::vector<std::pair<std::string, Quantity>>& v, std::string_view name) {
  return std::lower_bound(v.begin(), v.end(), name,
                          [](const auto& e, std::string_view n) { return e.first < n; });
}
}  // namespace

ResourceList::ResourceList(std::initializer_list<std::pair<std::string, Quantity>> items) {
  for (const auto& [name, q] : items) Set(name, q);
}

ResourceList ResourceList::MustParse(
    std::initializer_list<std::pair<std::string_view, std::string_view>> items) {
  ResourceList out;
  for (const auto& [name, text] : items) out.Set(name, Quantity::MustParse(text));
  return out;
}

Quantity ResourceList::Get(std::string_view name) const {
  auto it = FindName(items_, name);
  return it != items_.end() && it->first == name ? it->second : Quantity();
}

bool ResourceList::Has(std::string_view name) const {
  auto it = FindName(items_, name);
  return it != items_.end() && it->first == name;
}

void ResourceList::Set(std::string_view name, Quantity q) {
  auto it = FindName(items_, name);
  if (it != items_.end() && it->first == name) {
    it->second = q;
  } else {
    items_.insert(it, {std::string(name), q});
  }
}

void ResourceList::Add(std::string_view name, Quantity q) {
  auto it = FindName(items_, name);
  if (it != items_.end() && it->first == name) {
    it->second += q;
  } else {
    items_.insert(it, {std::string(name), q});
  }
}

void ResourceList::AddAll(const ResourceList& o) {
  for (const auto& [name, q] : o.items_) Add(name, q);
}

void ResourceList::MaxWith(const ResourceList& o) {
  for (const auto& [name, q] : o.items_) {
    auto it = FindName(items_, name);
    if (it != items_.end() && it->first == name) {
      if (q > it->second) it->second = q;
    } else {
      items_.insert(it, {name, q});
    }
  }
}

bool ResourceList::operator==(const ResourceList& o) const {
  if (items_.size() != o.items_.size()) return false;
  for (size_t i = 0; i < items_.size(); ++i) {
    if (items_[i].first != o.items_[i].first || items_[i].second != o.items_[i].second) {
      return false;
    }
  }
  return true;
}

ResourceList PodRequests(const PodResources& pod) { return EffectivePodRequests(pod); }

// ---------------------------------------------------------------------------
// Taints and tolerations

std::string_view TaintEffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
  }
  return "";
}

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

// ---------------------------------------------------------------------------
// Node affinity

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

// Evaluates one requirement against a value that may be absent. Returns
// nullopt when the requirement itself is invalid (the term then fails).
std::optional<bool> MatchRequirement(const NodeSelectorRequirement& r,
                                     const std::string* value) {
  using Op = NodeSelectorRequirement::Operator;
  switch (r.op) {
    case Op::kIn:
      if (r.values.empty()) return std::nullopt;
      return value != nullptr && Contains(r.values, *value);
    case Op::kNotIn:
      if (r.values.empty()) return std::nullopt;
      return value == nullptr || !Contains(r.values, *value);
    case Op::kExists:
      if (!r.values.empty()) return std::nullopt;
      return value != nullptr;
    case Op::kDoesNotExist:
      if (!r.values.empty()) return std::nullopt;
      return value == nullptr;
    case Op::kGt:
    case Op::kLt: {
      int64_t bound = 0;
      if (r.values.size() != 1 || !ParseInt64(r.values[0], &bound)) return std::nullopt;
      int64_t actual = 0;
      if (value == nullptr || !ParseInt64(*value, &actual)) return false;
      return r.op == Op::kGt ? actual > bound : actual < bound;
    }
  }
  return std::nullopt;
}

}  // namespace

bool MatchesNodeSelectorTerm(const NodeSelectorTerm& term, const Node& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const auto& r : term.match_expressions) {
    auto it = node.labels.find(r.key);
    std::optional<bool> m = MatchRequirement(r, it == node.labels.end() ? nullptr : &it->second);
    if (!m.value_or(false)) return false;
  }
  for (const auto& r : term.match_fields) {
    using Op = NodeSelectorRequirement::Operator;
    // Field selectors support metadata.name with In/NotIn only.
    if (r.key != "metadata.name" || (r.op != Op::kIn && r.op != Op::kNotIn)) return false;
    std::optional<bool> m = MatchRequirement(r, &node.name);
    if (!m.value_or(false)) return false;
  }
  return true;
}

bool MatchesNodeSelectorTerms(const std::vector<NodeSelectorTerm>& terms, const Node& node) {
  for (const auto& term : terms) {
    if (MatchesNodeSelectorTerm(term, node)) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------
// Pod

std::string_view PreemptionPolicyName(PreemptionPolicy p) {
  switch (p) {
    case PreemptionPolicy::kPreemptLowerPriority: return "PreemptLowerPriority";
    case PreemptionPolicy::kNever: return "Never";
  }
  return "";
}

std::optional<PreemptionPolicy> ParsePreemptionPolicy(std::string_view s) {
  if (s == "PreemptLowerPriority") return PreemptionPolicy::kPreemptLowerPriority;
  if (s == "Never") return PreemptionPolicy::kNever;
  return std::nullopt;
}

std::string Pod::Key() const { return namespace_ + "/" + name; }

bool MoreImportantPod(const Pod& a, const Pod& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  // A pod that has not started counts as starting now: later than any start.
  if (a.start_time != b.start_time) {
    if (!a.start_time) return false;
    if (!b.start_time) return true;
    return *a.start_time < *b.start_time;
  }
  if (a.namespace_ != b.namespace_) return a.namespace_ < b.namespace_;
  return a.name < b.name;
}

}  // namespace berth::placement
