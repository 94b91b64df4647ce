#include "admission/model.h"

#include <algorithm>

#include "core/quantity.h"

namespace berth::admission {

Amount AddAmount(Amount a, Amount b) { return SaturatingAdd(a, b); }
Amount SubAmount(Amount a, Amount b) { return SaturatingSub(a, b); }

std::string FormatAmount(std::string_view resource, Amount a) {
  if (resource != "memory" && resource != "ephemeral-storage" && !resource.starts_with("hugepages-")) {
    return Quantity::FromMilli(a).String();
  }
  // newCanonicalQuantity: a binary-format byte count that is not a multiple
  // of 1Ki prints as a plain number, which parses back as decimal SI.
  std::string binary = Quantity::FromMilli(a, Quantity::Format::kBinarySI).String();
  auto reparsed = Quantity::Parse(binary);
  return reparsed.ok() ? reparsed->String() : binary;
}

ResourceId ResourceNames::Intern(std::string_view name) {
  auto it = ids_.find(std::string(name));
  if (it != ids_.end()) return it->second;
  auto id = static_cast<ResourceId>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(std::string(name), id);
  return id;
}

ResourceId ResourceNames::Find(std::string_view name) const {
  auto it = ids_.find(std::string(name));
  return it == ids_.end() ? -1 : it->second;
}

// ---------------------------------------------------------------------------

ResourceList::ResourceList(std::initializer_list<std::pair<ResourceId, Amount>> items) {
  for (const auto& [r, a] : items) Add(r, a);
}

Amount ResourceList::Get(ResourceId r) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), r,
                             [](const auto& p, ResourceId id) { return p.first < id; });
  return (it != items_.end() && it->first == r) ? it->second : 0;
}

bool ResourceList::Has(ResourceId r) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), r,
                             [](const auto& p, ResourceId id) { return p.first < id; });
  return it != items_.end() && it->first == r;
}

void ResourceList::Set(ResourceId r, Amount a) {
  auto it = std::lower_bound(items_.begin(), items_.end(), r,
                             [](const auto& p, ResourceId id) { return p.first < id; });
  if (it != items_.end() && it->first == r) {
    it->second = a;
  } else {
    items_.insert(it, {r, a});
  }
}

void ResourceList::Add(ResourceId r, Amount a) {
  auto it = std::lower_bound(items_.begin(), items_.end(), r,
                             [](const auto& p, ResourceId id) { return p.first < id; });
  if (it != items_.end() && it->first == r) {
    it->second = AddAmount(it->second, a);
  } else {
    items_.insert(it, {r, a});
  }
}

void ResourceList::MaxWith(const ResourceList& o) {
  for (const auto& [r, a] : o.items_) {
    if (!Has(r) || Get(r) < a) Set(r, a);
  }
}

void ResourceList::AddAll(const ResourceList& o) {
  for (const auto& [r, a] : o.items_) Add(r, a);
}

ResourceList ResourceList::Scaled(int64_t n) const {
  ResourceList out;
  out.items_.reserve(items_.size());
  for (const auto& [r, a] : items_) out.items_.push_back({r, SaturatingMul(a, n)});
  return out;
}

// ---------------------------------------------------------------------------

std::vector<FlavorResourceAmount> AdmissionUsage(const Admission& admission) {
  std::map<std::pair<std::string, ResourceId>, Amount> sum;
  for (const auto& ps : admission.pod_sets) {
    for (const auto& [r, a] : ps.resource_usage.items()) {
      if (a == 0) continue;
      std::string flavor;
      for (const auto& f : ps.flavors) {
        if (f.resource == r) flavor = f.flavor;
      }
      auto& slot = sum[{flavor, r}];
      slot = AddAmount(slot, a);
    }
  }
  std::vector<FlavorResourceAmount> out;
  out.reserve(sum.size());
  for (const auto& [k, a] : sum) out.push_back({k.first, k.second, a});
  return out;
}

bool Workload::CanBePartiallyAdmitted() const {
  for (const PodSet& ps : pod_sets) {
    if (ps.min_count && *ps.min_count < ps.count) return true;
  }
  return false;
}

ResourceList PodSetTotal(const PodSet& ps, int32_t count) {
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(count) - ps.reclaimable);
  return ps.requests.Scaled(n);
}

}  // namespace berth::admission
