#include "placement/model.h"

#include <algorithm>

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
