#include "admission/snapshot.h"

#include <algorithm>

namespace berth::admission {

struct Snapshot::Node {
  std::string name;
  bool is_cq = false;
  int parent = -1;
  std::vector<int> child_cohorts;
  std::vector<int> child_cqs;
  // Per fr; resized to fr_keys_.size().
  std::vector<Amount> nominal;
  std::vector<Amount> borrowing_limit;  // kUnlimited: nil
  std::vector<Amount> lending_limit;    // kUnlimited: nil
  std::vector<Amount> subtree;
  std::vector<Amount> usage;
  std::vector<char> own_fr;                // the node's resource groups name the fr
  std::vector<char> subtree_fr;            // own_fr of the node or of a descendant
  std::vector<ResourceGroup> spec_groups;  // cohorts' own quota
  double fair_weight = 1.0;                // spec.fairSharing.weight

  void Resize(size_t n) {
    nominal.resize(n, 0);
    borrowing_limit.resize(n, kUnlimited);
    lending_limit.resize(n, kUnlimited);
    subtree.resize(n, 0);
    usage.resize(n, 0);
    own_fr.resize(n, 0);
    subtree_fr.resize(n, 0);
  }
};

struct Snapshot::CqData {
  ClusterQueue spec;
  std::vector<ResolvedGroup> groups;
  std::vector<int> group_by_resource;  // by ResourceId; -1 not covered
  bool active = true;
  std::string active_reason = "Ready";
  std::string active_message = "Can admit new workloads";
  std::map<std::string, WorkloadInfo*> workloads;
};

namespace {
int64_t FrKey(int flavor, ResourceId r) { return (static_cast<int64_t>(flavor) << 32) | static_cast<uint32_t>(r); }
const std::vector<int> kNoChildren;
}  // namespace

Snapshot::Snapshot(const ResourceNames& names, std::vector<ResourceFlavor> flavors,
                   std::vector<ClusterQueue> cluster_queues, std::vector<Cohort> cohorts)
    : names_(&names) {
  std::sort(flavors.begin(), flavors.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& f : flavors) {
    int idx = InternFlavor(f.name);
    flavors_[static_cast<size_t>(idx)] = std::move(f);
  }
  BuildTree(std::move(cluster_queues), std::move(cohorts));
}

Snapshot::Snapshot(const Snapshot& o) { *this = o; }

Snapshot& Snapshot::operator=(const Snapshot& o) {
  if (this == &o) return *this;
  names_ = o.names_;
  owned_names_ = o.owned_names_;
  flavor_names_ = o.flavor_names_;
  flavor_index_ = o.flavor_index_;
  flavors_ = o.flavors_;
  fr_keys_ = o.fr_keys_;
  fr_index_ = o.fr_index_;
  nodes_ = o.nodes_;
  cq_nodes_ = o.cq_nodes_;
  cq_index_ = o.cq_index_;
  cqs_ = o.cqs_;
  victims_by_preemptor_ = o.victims_by_preemptor_;
  workloads_.clear();
  for (const auto& [uid, info] : o.workloads_) workloads_.emplace(uid, std::make_unique<WorkloadInfo>(*info));
  RebuildWorkloadIndex();
  return *this;
}

Snapshot::Snapshot(Snapshot&&) noexcept = default;
Snapshot& Snapshot::operator=(Snapshot&&) noexcept = default;
Snapshot::~Snapshot() = default;

void Snapshot::OwnNames() {
  owned_names_ = std::make_shared<const ResourceNames>(*names_);
  names_ = owned_names_.get();
}

void Snapshot::RebuildWorkloadIndex() {
  for (auto& c : cqs_) c.workloads.clear();
  for (auto& [uid, info] : workloads_) cqs_[static_cast<size_t>(info->cq)].workloads[uid] = info.get();
}

int Snapshot::InternFlavor(std::string_view name) {
  auto it = flavor_index_.find(std::string(name));
  if (it != flavor_index_.end()) return it->second;
  int idx = static_cast<int>(flavor_names_.size());
  flavor_names_.emplace_back(name);
  flavors_.emplace_back();
  flavor_index_.emplace(std::string(name), idx);
  return idx;
}

int Snapshot::InternFr(int flavor, ResourceId r) {
  auto key = FrKey(flavor, r);
  auto it = fr_index_.find(key);
  if (it != fr_index_.end()) return it->second;
  int idx = static_cast<int>(fr_keys_.size());
  fr_keys_.push_back({flavor, r});
  fr_index_.emplace(key, idx);
  for (auto& n : nodes_) n.Resize(fr_keys_.size());
  return idx;
}

int Snapshot::FindFr(int flavor, ResourceId r) const {
  auto it = fr_index_.find(FrKey(flavor, r));
  return it == fr_index_.end() ? -1 : it->second;
}

int Snapshot::FlavorIndex(std::string_view name) const {
  auto it = flavor_index_.find(std::string(name));
  return it == flavor_index_.end() ? -1 : it->second;
}
const std::string& Snapshot::FlavorName(int flavor) const { return flavor_names_[static_cast<size_t>(flavor)]; }
const ResourceFlavor* Snapshot::Flavor(int flavor) const {
  const auto& f = flavors_[static_cast<size_t>(flavor)];
  return f.has_value() ? &*f : nullptr;
}

void Snapshot::ApplyQuotas(Node& n, const std::vector<ResourceGroup>& groups) {
  for (const auto& g : groups) {
    for (const auto& fq : g.flavors) {
      int flavor = InternFlavor(fq.flavor);
      for (size_t i = 0; i < g.covered_resources.size() && i < fq.resources.size(); ++i) {
        int fr = InternFr(flavor, g.covered_resources[i]);
        const auto& q = fq.resources[i];
        n.nominal[static_cast<size_t>(fr)] = q.nominal;
        n.borrowing_limit[static_cast<size_t>(fr)] = q.borrowing_limit.value_or(kUnlimited);
        n.lending_limit[static_cast<size_t>(fr)] = q.lending_limit.value_or(kUnlimited);
        n.own_fr[static_cast<size_t>(fr)] = 1;
      }
    }
  }
}

void Snapshot::BuildTree(std::vector<ClusterQueue> cqs, std::vector<Cohort> cohorts) {
  std::sort(cqs.begin(), cqs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::sort(cohorts.begin(), cohorts.end(), [](const auto& a, const auto& b) { return a.name < b.name; });

  // 1. Cohort nodes: explicit ones, then implicit ones named as parents or
  //    by ClusterQueues.
  std::map<std::string, int> cohort_node;
  std::map<std::string, std::string> cohort_parent;
  auto ensure_cohort = [&](const std::string& name) {
    auto it = cohort_node.find(name);
    if (it != cohort_node.end()) return it->second;
    int idx = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
    nodes_.back().name = name;
    cohort_node.emplace(name, idx);
    return idx;
  };
  for (auto& c : cohorts) {
    int idx = ensure_cohort(c.name);
    nodes_[static_cast<size_t>(idx)].spec_groups = std::move(c.resource_groups);
    nodes_[static_cast<size_t>(idx)].fair_weight = c.fair_weight;
    if (!c.parent.empty()) cohort_parent[c.name] = c.parent;
  }
  for (const auto& [name, parent] : cohort_parent) ensure_cohort(parent);
  for (const auto& cq : cqs) {
    if (!cq.cohort.empty()) ensure_cohort(cq.cohort);
  }

  // 2. Cycle detection: a cohort whose parent chain revisits a cohort is
  //    cyclic, and so is every cohort below it.
  std::set<std::string> cyclic;
  for (const auto& [name, idx] : cohort_node) {
    std::set<std::string> seen;
    std::string cur = name;
    while (true) {
      if (!seen.insert(cur).second) {
        cyclic.insert(name);
        break;
      }
      auto p = cohort_parent.find(cur);
      if (p == cohort_parent.end()) break;
      cur = p->second;
    }
  }
  for (const auto& [name, parent] : cohort_parent) {
    if (cyclic.count(name)) continue;
    int child = cohort_node[name];
    int par = cohort_node[parent];
    nodes_[static_cast<size_t>(child)].parent = par;
    nodes_[static_cast<size_t>(par)].child_cohorts.push_back(child);
  }

  // 3. ClusterQueue nodes.
  for (auto& cq : cqs) {
    int idx = static_cast<int>(nodes_.size());
    nodes_.emplace_back();
    nodes_.back().name = cq.name;
    nodes_.back().is_cq = true;
    nodes_.back().fair_weight = cq.fair_weight;
    cq_nodes_.push_back(idx);
    cq_index_.emplace(cq.name, idx);
    CqData data;
    if (!cq.cohort.empty()) {
      if (cyclic.count(cq.cohort)) {
        data.active = false;
        data.active_reason = "CohortCycle";
        data.active_message = "Can't admit new workloads: the cohort tree of the ClusterQueue has a cycle.";
      } else {
        int par = cohort_node[cq.cohort];
        nodes_.back().parent = par;
        nodes_[static_cast<size_t>(par)].child_cqs.push_back(idx);
      }
    }
    data.spec = std::move(cq);
    if (cqs_.size() < nodes_.size()) cqs_.resize(nodes_.size());
    cqs_[static_cast<size_t>(idx)] = std::move(data);
  }
  cqs_.resize(nodes_.size());

  // 4. Quotas (interning frs resizes every node).
  for (auto& n : nodes_) n.Resize(fr_keys_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].is_cq) {
      ApplyQuotas(nodes_[i], cqs_[i].spec.resource_groups);
    } else {
      ApplyQuotas(nodes_[i], nodes_[i].spec_groups);
    }
  }

  // 5. Resolved resource groups and activity.
  for (int idx : cq_nodes_) {
    auto& d = cqs_[static_cast<size_t>(idx)];
    std::vector<std::string> missing;
    for (const auto& g : d.spec.resource_groups) {
      ResolvedGroup rg;
      rg.covered = g.covered_resources;
      for (const auto& fq : g.flavors) {
        ResolvedFlavor rf;
        rf.flavor = InternFlavor(fq.flavor);
        if (Flavor(rf.flavor) == nullptr &&
            std::find(missing.begin(), missing.end(), fq.flavor) == missing.end()) {
          missing.push_back(fq.flavor);
        }
        for (ResourceId r : g.covered_resources) rf.frs.push_back(InternFr(rf.flavor, r));
        rg.flavors.push_back(std::move(rf));
      }
      for (ResourceId r : g.covered_resources) {
        if (d.group_by_resource.size() <= static_cast<size_t>(r)) d.group_by_resource.resize(static_cast<size_t>(r) + 1, -1);
        d.group_by_resource[static_cast<size_t>(r)] = static_cast<int>(d.groups.size());
      }
      d.groups.push_back(std::move(rg));
    }
    if (!d.active) continue;  // cohort cycle
    // Kueue clusterQueue.inactiveReason: reasons in this order, first wins.
    std::vector<std::pair<std::string, std::string>> reasons;
    if (!d.spec.inactive_reason.empty()) reasons.push_back({d.spec.inactive_reason, d.spec.inactive_message});
    if (d.spec.stop_policy != StopPolicy::kNone) reasons.push_back({"Stopped", "is stopped"});
    if (!missing.empty()) {
      std::string list;
      for (const auto& m : missing) list += (list.empty() ? "" : ",") + m;
      reasons.push_back({"FlavorNotFound", "references missing ResourceFlavor(s): [" + list + "]"});
    }
    if (!reasons.empty()) {
      d.active = false;
      d.active_reason = reasons[0].first;
      if (!d.spec.inactive_reason.empty() && reasons.size() == 1) {
        d.active_message = d.spec.inactive_message;
      } else {
        std::string msg;
        for (const auto& r : reasons) {
          if (r.second.empty()) continue;
          msg += (msg.empty() ? "" : ", ") + r.second;
        }
        d.active_message = "Can't admit new workloads: " + msg + ".";
      }
    }
  }

  // 6. Subtree quotas, from the roots down.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].parent < 0) RecomputeSubtree(static_cast<int>(i));
  }
}

void Snapshot::RecomputeSubtree(int node) {
  Node& n = nodes_[static_cast<size_t>(node)];
  n.subtree = n.nominal;
  n.subtree_fr = n.own_fr;
  auto accumulate = [&](int child) {
    RecomputeSubtree(child);
    const Node& c = nodes_[static_cast<size_t>(child)];
    for (size_t fr = 0; fr < fr_keys_.size(); ++fr) {
      n.subtree_fr[fr] = static_cast<char>(n.subtree_fr[fr] | c.subtree_fr[fr]);
      Amount delta = SubAmount(c.subtree[fr], LocalQuota(child, static_cast<int>(fr)));
      n.subtree[fr] = AddAmount(n.subtree[fr], delta);
    }
  };
  // Copy: the recursion may not reallocate nodes_, but keep the loop simple.
  std::vector<int> children = n.child_cohorts;
  children.insert(children.end(), n.child_cqs.begin(), n.child_cqs.end());
  for (int c : children) accumulate(c);
}

// ---------------------------------------------------------------------------
// Workloads

Status Snapshot::AddWorkload(const Workload& wl) {
  if (!wl.admission.has_value() || wl.state == AdmissionState::kPending) {
    return InvalidError("workload " + wl.Key() + " holds no quota reservation");
  }
  int cq = ClusterQueueIndex(wl.admission->cluster_queue);
  if (cq < 0) return InvalidError("ClusterQueue " + wl.admission->cluster_queue + " not found");
  if (workloads_.count(wl.uid)) return AlreadyExistsError("workload " + wl.uid + " already holds quota");
  auto info = std::make_unique<WorkloadInfo>();
  info->workload = wl;
  info->cq = cq;
  info->usage = ToFrUsage(AdmissionUsage(*wl.admission));
  AddUsage(cq, info->usage);
  cqs_[static_cast<size_t>(cq)].workloads[wl.uid] = info.get();
  if (wl.state == AdmissionState::kEvicting && !wl.evicted_for.empty()) {
    victims_by_preemptor_[wl.evicted_for].insert(wl.uid);
  }
  workloads_.emplace(wl.uid, std::move(info));
  return Status::Ok();
}

bool Snapshot::RemoveWorkload(std::string_view uid) {
  auto it = workloads_.find(std::string(uid));
  if (it == workloads_.end()) return false;
  WorkloadInfo& info = *it->second;
  if (!info.removed) RemoveUsage(info.cq, info.usage);
  cqs_[static_cast<size_t>(info.cq)].workloads.erase(it->first);
  if (!info.workload.evicted_for.empty()) {
    auto v = victims_by_preemptor_.find(info.workload.evicted_for);
    if (v != victims_by_preemptor_.end()) {
      v->second.erase(it->first);
      if (v->second.empty()) victims_by_preemptor_.erase(v);
    }
  }
  workloads_.erase(it);
  return true;
}

bool Snapshot::SetEvicting(std::string_view uid, std::string_view preemptor_uid) {
  auto it = workloads_.find(std::string(uid));
  if (it == workloads_.end()) return false;
  Workload& wl = it->second->workload;
  wl.state = AdmissionState::kEvicting;
  wl.evicted_for = std::string(preemptor_uid);
  if (!wl.evicted_for.empty()) victims_by_preemptor_[wl.evicted_for].insert(wl.uid);
  return true;
}

const WorkloadInfo* Snapshot::FindWorkload(std::string_view uid) const {
  auto it = workloads_.find(std::string(uid));
  return it == workloads_.end() ? nullptr : it->second.get();
}

std::vector<const WorkloadInfo*> Snapshot::PendingVictims(std::string_view preemptor_uid) const {
  std::vector<const WorkloadInfo*> out;
  auto v = victims_by_preemptor_.find(std::string(preemptor_uid));
  if (v == victims_by_preemptor_.end()) return out;
  for (const auto& uid : v->second) {
    if (const WorkloadInfo* w = FindWorkload(uid)) out.push_back(w);
  }
  return out;
}

FrUsage Snapshot::ToFrUsage(const std::vector<FlavorResourceAmount>& amounts) {
  FrUsage out;
  for (const auto& a : amounts) {
    if (a.amount == 0) continue;
    int fr = InternFr(InternFlavor(a.flavor), a.resource);
    out.push_back({fr, a.amount});
  }
  std::sort(out.begin(), out.end());
  // Merge duplicates.
  FrUsage merged;
  for (const auto& [fr, v] : out) {
    if (!merged.empty() && merged.back().first == fr) {
      merged.back().second = AddAmount(merged.back().second, v);
    } else {
      merged.push_back({fr, v});
    }
  }
  return merged;
}

// ---------------------------------------------------------------------------
// ClusterQueues and tree

int Snapshot::ClusterQueueIndex(std::string_view name) const {
  auto it = cq_index_.find(std::string(name));
  return it == cq_index_.end() ? -1 : it->second;
}
const ClusterQueue& Snapshot::Spec(int cq) const { return cqs_[static_cast<size_t>(cq)].spec; }
const std::vector<ResolvedGroup>& Snapshot::Groups(int cq) const { return cqs_[static_cast<size_t>(cq)].groups; }
int Snapshot::GroupForResource(int cq, ResourceId r) const {
  const auto& g = cqs_[static_cast<size_t>(cq)].group_by_resource;
  return (r >= 0 && static_cast<size_t>(r) < g.size()) ? g[static_cast<size_t>(r)] : -1;
}
bool Snapshot::Active(int cq) const { return cqs_[static_cast<size_t>(cq)].active; }
const std::string& Snapshot::ActiveReason(int cq) const { return cqs_[static_cast<size_t>(cq)].active_reason; }
const std::string& Snapshot::ActiveMessage(int cq) const { return cqs_[static_cast<size_t>(cq)].active_message; }
const std::map<std::string, WorkloadInfo*>& Snapshot::Workloads(int cq) const {
  return cqs_[static_cast<size_t>(cq)].workloads;
}

void Snapshot::SetLocalQueueUsage(
    const std::function<std::optional<double>(const std::string& cluster_queue, const Workload&)>& usage) {
  for (auto& [uid, info] : workloads_) info->local_queue_usage = usage(NodeName(info->cq), info->workload);
}

std::string Snapshot::Path(int cq) const {
  std::string path;
  for (int n = cq; n >= 0; n = Parent(n)) path = "/" + NodeName(n) + path;
  return path;
}

int Snapshot::Parent(int node) const { return nodes_[static_cast<size_t>(node)].parent; }
int Snapshot::Root(int node) const {
  while (Parent(node) >= 0) node = Parent(node);
  return node;
}
const std::string& Snapshot::NodeName(int node) const { return nodes_[static_cast<size_t>(node)].name; }
bool Snapshot::IsClusterQueue(int node) const { return nodes_[static_cast<size_t>(node)].is_cq; }
const std::vector<int>& Snapshot::ChildCohorts(int cohort) const {
  return nodes_[static_cast<size_t>(cohort)].is_cq ? kNoChildren : nodes_[static_cast<size_t>(cohort)].child_cohorts;
}
const std::vector<int>& Snapshot::ChildClusterQueues(int cohort) const {
  return nodes_[static_cast<size_t>(cohort)].is_cq ? kNoChildren : nodes_[static_cast<size_t>(cohort)].child_cqs;
}
double Snapshot::FairWeight(int node) const { return nodes_[static_cast<size_t>(node)].fair_weight; }
int Snapshot::CohortIndex(std::string_view name) const {
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (!nodes_[i].is_cq && nodes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}
void Snapshot::SubtreeClusterQueues(int node, std::vector<int>* out) const {
  const Node& n = nodes_[static_cast<size_t>(node)];
  if (n.is_cq) {
    out->push_back(node);
    return;
  }
  for (int c : n.child_cohorts) SubtreeClusterQueues(c, out);
  for (int q : n.child_cqs) out->push_back(q);
}
int Snapshot::Height(int cohort) const {
  const Node& n = nodes_[static_cast<size_t>(cohort)];
  int h = (n.child_cqs.size() + n.child_cohorts.size()) > 0 ? 1 : 0;
  for (int c : n.child_cohorts) h = std::max(h, Height(c) + 1);
  return h;
}

// ---------------------------------------------------------------------------
// Quota arithmetic

Amount Snapshot::Nominal(int node, int fr) const { return nodes_[static_cast<size_t>(node)].nominal[static_cast<size_t>(fr)]; }
Amount Snapshot::BorrowingLimit(int node, int fr) const {
  return nodes_[static_cast<size_t>(node)].borrowing_limit[static_cast<size_t>(fr)];
}
Amount Snapshot::SubtreeQuota(int node, int fr) const { return nodes_[static_cast<size_t>(node)].subtree[static_cast<size_t>(fr)]; }
bool Snapshot::HasSubtreeQuota(int node, int fr) const {
  return nodes_[static_cast<size_t>(node)].subtree_fr[static_cast<size_t>(fr)] != 0;
}
Amount Snapshot::Usage(int node, int fr) const { return nodes_[static_cast<size_t>(node)].usage[static_cast<size_t>(fr)]; }

Amount Snapshot::LocalQuota(int node, int fr) const {
  const Node& n = nodes_[static_cast<size_t>(node)];
  Amount ll = n.lending_limit[static_cast<size_t>(fr)];
  if (ll == kUnlimited) return 0;
  return std::max<Amount>(0, SubAmount(n.subtree[static_cast<size_t>(fr)], ll));
}

Amount Snapshot::LocalAvailable(int node, int fr) const {
  return std::max<Amount>(0, SubAmount(LocalQuota(node, fr), Usage(node, fr)));
}

Amount Snapshot::AvailableRaw(int node, int fr) const {
  const Node& n = nodes_[static_cast<size_t>(node)];
  const auto f = static_cast<size_t>(fr);
  if (n.parent < 0) return SubAmount(n.subtree[f], n.usage[f]);
  Amount parent_available = AvailableRaw(n.parent, fr);
  if (n.borrowing_limit[f] != kUnlimited) {
    Amount lq = LocalQuota(node, fr);
    Amount stored_in_parent = SubAmount(n.subtree[f], lq);
    Amount used_in_parent = std::max<Amount>(0, SubAmount(n.usage[f], lq));
    Amount with_max = AddAmount(SubAmount(stored_in_parent, used_in_parent), n.borrowing_limit[f]);
    parent_available = std::min(with_max, parent_available);
  }
  return AddAmount(LocalAvailable(node, fr), parent_available);
}

Amount Snapshot::Available(int cq, int fr) const { return std::max<Amount>(0, AvailableRaw(cq, fr)); }

Amount Snapshot::PotentialAvailable(int node, int fr) const {
  const Node& n = nodes_[static_cast<size_t>(node)];
  const auto f = static_cast<size_t>(fr);
  if (n.parent < 0) return n.subtree[f];
  Amount avail = AddAmount(LocalQuota(node, fr), PotentialAvailable(n.parent, fr));
  if (n.borrowing_limit[f] != kUnlimited) avail = std::min(AddAmount(n.subtree[f], n.borrowing_limit[f]), avail);
  return avail;
}

bool Snapshot::BorrowingWith(int node, int fr, Amount val) const {
  const Node& n = nodes_[static_cast<size_t>(node)];
  const auto f = static_cast<size_t>(fr);
  Amount cap = n.is_cq ? n.nominal[f] : n.subtree[f];
  return cap < AddAmount(n.usage[f], val);
}

bool Snapshot::Fits(int cq, const FrUsage& usage) const {
  for (const auto& [fr, v] : usage) {
    if (Available(cq, fr) < v) return false;
  }
  return true;
}

bool Snapshot::IsWithinNominal(int node, const std::vector<int>& frs) const {
  for (int fr : frs) {
    if (SubtreeQuota(node, fr) < Usage(node, fr)) return false;
  }
  return true;
}

std::pair<int, bool> Snapshot::BorrowingLevel(int cq, int fr, Amount val) const {
  if (!BorrowingWith(cq, fr, val) || !HasParent(cq)) return {0, HasParent(cq)};
  Amount remaining = SubAmount(val, LocalAvailable(cq, fr));
  for (int node = Parent(cq); node >= 0; node = Parent(node)) {
    if (!BorrowingWith(node, fr, remaining)) return {Height(node), HasParent(node)};
    remaining = SubAmount(remaining, LocalAvailable(node, fr));
  }
  return {Height(Root(cq)), false};
}

bool Snapshot::FitsInSubtreeQuota(int node, const FrUsage& requests, FrUsage* remaining) const {
  bool fits = true;
  FrUsage out;
  out.reserve(requests.size());
  for (const auto& [fr, v] : requests) {
    if (SubtreeQuota(node, fr) < AddAmount(Usage(node, fr), v)) fits = false;
    out.push_back({fr, std::max<Amount>(0, SubAmount(v, LocalAvailable(node, fr)))});
  }
  *remaining = std::move(out);
  return fits;
}

void Snapshot::AddUsageAt(int node, int fr, Amount val) {
  Node& n = nodes_[static_cast<size_t>(node)];
  Amount local_available = LocalAvailable(node, fr);
  n.usage[static_cast<size_t>(fr)] = AddAmount(n.usage[static_cast<size_t>(fr)], val);
  if (n.parent >= 0 && val > local_available) AddUsageAt(n.parent, fr, SubAmount(val, local_available));
}

void Snapshot::RemoveUsageAt(int node, int fr, Amount val) {
  Node& n = nodes_[static_cast<size_t>(node)];
  Amount stored_in_parent = SubAmount(n.usage[static_cast<size_t>(fr)], LocalQuota(node, fr));
  n.usage[static_cast<size_t>(fr)] = SubAmount(n.usage[static_cast<size_t>(fr)], val);
  if (stored_in_parent <= 0 || n.parent < 0) return;
  RemoveUsageAt(n.parent, fr, std::min(val, stored_in_parent));
}

void Snapshot::AddUsage(int cq, const FrUsage& usage) {
  for (const auto& [fr, v] : usage) AddUsageAt(cq, fr, v);
}
void Snapshot::RemoveUsage(int cq, const FrUsage& usage) {
  for (const auto& [fr, v] : usage) RemoveUsageAt(cq, fr, v);
}

UndoGuard Snapshot::SimulateUsageAddition(int cq, const FrUsage& usage) {
  AddUsage(cq, usage);
  return UndoGuard([this, cq, usage] { RemoveUsage(cq, usage); });
}

UndoGuard Snapshot::SimulateUsageRemoval(int cq, const FrUsage& usage) {
  RemoveUsage(cq, usage);
  return UndoGuard([this, cq, usage] { AddUsage(cq, usage); });
}

UndoGuard Snapshot::SimulateWorkloadRemoval(const std::vector<const WorkloadInfo*>& workloads) {
  std::vector<WorkloadInfo*> done;
  for (const WorkloadInfo* w : workloads) {
    auto* info = const_cast<WorkloadInfo*>(w);
    if (info->removed) continue;
    RemoveUsage(info->cq, info->usage);
    info->removed = true;
    done.push_back(info);
  }
  return UndoGuard([this, done] {
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      AddUsage((*it)->cq, (*it)->usage);
      (*it)->removed = false;
    }
  });
}

}  // namespace berth::admission
