#include "admission/fair_sharing.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace berth::admission {

DominantResourceShare DominantResourceShare::Negative() {
  DominantResourceShare d;
  d.unweighted_ratio = -1;
  return d;
}

double DominantResourceShare::PreciseWeightedShare() const {
  if (IsZero()) return 0;
  if (weight == 0) return std::numeric_limits<double>::infinity();
  return unweighted_ratio / weight;
}

int64_t DominantResourceShare::RoundedWeightedShare() const {
  if (ZeroWeightBorrows()) return std::numeric_limits<int64_t>::max();
  double v = std::ceil(PreciseWeightedShare());
  if (v >= static_cast<double>(std::numeric_limits<int64_t>::max())) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v);
}

bool DominantResourceShare::IsBorrowingOn(const FrUsage& requested) const {
  for (const auto& [fr, v] : requested) {
    if (v > 0 && std::binary_search(borrowed_frs.begin(), borrowed_frs.end(), fr)) return true;
  }
  return false;
}

namespace {
int Cmp(double a, double b) { return a < b ? -1 : (a > b ? 1 : 0); }
}  // namespace

int CompareDRS(const DominantResourceShare& a, const DominantResourceShare& b) {
  const bool az = a.ZeroWeightBorrows(), bz = b.ZeroWeightBorrows();
  if (az && bz) return Cmp(a.unweighted_ratio, b.unweighted_ratio);
  if (az) return 1;
  if (bz) return -1;
  return Cmp(a.PreciseWeightedShare(), b.PreciseWeightedShare());
}

DominantResourceShare ComputeDRS(const Snapshot& snap, int node, const FrUsage& request) {
  DominantResourceShare d;
  d.weight = snap.FairWeight(node);
  if (!snap.HasParent(node)) return d;

  const int frs = snap.fr_count();
  std::map<ResourceId, Amount> borrowed;
  size_t ri = 0;
  for (int fr = 0; fr < frs; ++fr) {
    if (!snap.HasSubtreeQuota(node, fr)) continue;
    Amount req = 0;
    while (ri < request.size() && request[ri].first < fr) ++ri;
    if (ri < request.size() && request[ri].first == fr) req = request[ri].second;
    Amount b = SubAmount(AddAmount(req, snap.Usage(node, fr)), snap.SubtreeQuota(node, fr));
    if (b > 0) {
      Amount& sum = borrowed[snap.FrResource(fr)];
      sum = AddAmount(sum, b);
      d.borrowed_frs.push_back(fr);
    }
  }
  if (borrowed.empty()) return d;
  d.borrowing = true;

  // calculateLendable(parent): every fr of the tree, summed per resource.
  const int parent = snap.Parent(node);
  std::map<ResourceId, Amount> lendable;
  for (int fr = 0; fr < frs; ++fr) {
    ResourceId r = snap.FrResource(fr);
    if (!borrowed.count(r)) continue;
    Amount& sum = lendable[r];
    sum = AddAmount(sum, snap.PotentialAvailable(parent, fr));
  }
  for (const auto& [r, b] : borrowed) {
    Amount lr = lendable[r];
    if (lr <= 0) continue;
    double ratio = static_cast<double>(b) * 1000.0 / static_cast<double>(lr);
    const std::string& name = snap.names().Name(r);
    if (ratio > d.unweighted_ratio || (ratio == d.unweighted_ratio && name < d.dominant_resource)) {
      d.unweighted_ratio = ratio;
      d.dominant_resource = name;
    }
  }
  return d;
}

}  // namespace berth::admission
