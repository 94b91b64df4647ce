#include "placement/scheduler.h"

#include <algorithm>
#include <map>

#include "placement/messages.h"

namespace berth::placement {

namespace {

// Usage that differs from the snapshot's (pods assumed during a gang trial),
// by node index.
using UsageOverlay = std::map<size_t, NodeUsage>;

const NodeUsage& UsageOf(const NodeInfo& node, size_t index, const UsageOverlay* overlay) {
  if (overlay != nullptr) {
    auto it = overlay->find(index);
    if (it != overlay->end()) return it->second;
  }
  return node.usage();
}

Decision ScheduleImpl(const Snapshot& snapshot, const Pod& pod, const PlacementOptions& options,
                      const UsageOverlay* overlay) {
  Decision d;
  const auto& nodes = snapshot.nodes();
  const ResourceNames& names = snapshot.resource_names();

  // 1.
  PodUsage pod_usage = snapshot.Compile(pod);

  // 2.
  if (nodes.empty()) {
    d.message = std::string(kNoNodesAvailable);
    return d;
  }

  // 3. The nominated node first.
  if (!pod.nominated_node_name.empty()) {
    int i = snapshot.NodeIndex(pod.nominated_node_name);
    if (i >= 0) {
      const NodeInfo& node = nodes[static_cast<size_t>(i)];
      if (RunFiltersWithNominatedPods(pod, pod_usage, node,
                                      UsageOf(node, static_cast<size_t>(i), overlay), names)
              .ok()) {
        d.node_name = node.name();
        return d;
      }
    }
  }

  // 4. Filters on every node.
  std::vector<size_t> feasible;
  feasible.reserve(nodes.size());
  d.failures.reserve(nodes.size() / 4);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeInfo& node = nodes[i];
    NodeStatus st =
        RunFiltersWithNominatedPods(pod, pod_usage, node, UsageOf(node, i, overlay), names);
    if (st.ok()) {
      feasible.push_back(i);
    } else {
      d.failures.push_back({node.name(), std::move(st)});
    }
  }

  // 5. Score and pick.
  if (!feasible.empty()) {
    std::vector<int64_t> taint(feasible.size());
    for (size_t k = 0; k < feasible.size(); ++k) {
      taint[k] = IntolerablePreferNoScheduleTaints(pod, nodes[feasible[k]]);
    }
    NormalizeReverse(taint);
    struct Scored {
      int64_t total, least, balanced;
    };
    std::vector<Scored> scores(feasible.size());
    size_t best = 0;
    for (size_t k = 0; k < feasible.size(); ++k) {
      const NodeInfo& node = nodes[feasible[k]];
      const NodeUsage& usage = UsageOf(node, feasible[k], overlay);
      Scored& s = scores[k];
      s.least = LeastAllocatedScore(pod_usage, node, usage);
      s.balanced = BalancedAllocationScore(pod_usage, node, usage);
      s.total = s.least * options.weights.node_resources_fit +
                s.balanced * options.weights.balanced_allocation +
                taint[k] * options.weights.taint_toleration;
      // Nodes are in name order: a strictly higher total is needed to win.
      if (s.total > scores[best].total) best = k;
    }
    d.node_name = nodes[feasible[best]].name();
    size_t report = std::min(options.max_reported_scores, scores.size());
    if (report > 0) {
      // Indices of the reported nodes, best first, ties by name (= index).
      std::vector<size_t> order(scores.size());
      for (size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(report),
                        order.end(), [&](size_t a, size_t b) {
                          if (scores[a].total != scores[b].total) {
                            return scores[a].total > scores[b].total;
                          }
                          return a < b;
                        });
      d.scores.reserve(report);
      for (size_t k = 0; k < report; ++k) {
        const Scored& s = scores[order[k]];
        d.scores.push_back({nodes[feasible[order[k]]].name(), s.total, s.least, s.balanced,
                            taint[order[k]]});
      }
    }
    return d;
  }

  // 6. Unschedulable, then preemption.
  if (!options.enable_preemption) {
    d.message = FitErrorMessage(nodes.size(), d.failures);
    return d;
  }
  PreemptionResult pr = Preempt(snapshot, pod, pod_usage, d.failures);
  switch (pr.kind) {
    case PreemptionResult::Kind::kPlanned:
      d.message = FitErrorMessage(nodes.size(), d.failures);
      d.nominated_node_name = pr.plan->node_name;
      d.preemption = std::move(pr.plan);
      break;
    case PreemptionResult::Kind::kNotEligible:
      d.message = FitErrorMessage(nodes.size(), d.failures, pr.message);
      break;
    case PreemptionResult::Kind::kNoCandidate:
      d.message = FitErrorMessage(nodes.size(), d.failures, pr.message);
      if (!pod.nominated_node_name.empty()) d.nominated_node_name = "";
      break;
  }
  return d;
}

}  // namespace

Decision Schedule(const Snapshot& snapshot, const Pod& pod, const PlacementOptions& options) {
  return ScheduleImpl(snapshot, pod, options, nullptr);
}

std::vector<std::string> StaleNominations(const Snapshot& snapshot) {
  std::vector<std::string> stale;
  const ResourceNames& names = snapshot.resource_names();
  for (const NodeInfo& node : snapshot.nodes()) {
    if (node.nominated().empty()) continue;
    // What stays once every terminating pod is gone.
    NodeUsage usage = node.usage();
    for (const auto& bp : node.pods()) {
      if (bp.pod.terminating) usage.Remove(bp.usage);
    }
    std::vector<const NodeInfo::BoundPod*> order;
    for (const auto& n : node.nominated()) order.push_back(&n);
    std::sort(order.begin(), order.end(),
              [](const NodeInfo::BoundPod* a, const NodeInfo::BoundPod* b) {
                return MoreImportantPod(a->pod, b->pod);
              });
    for (const NodeInfo::BoundPod* n : order) {
      if (RunFilters(n->pod, n->usage, node, usage, names).ok()) {
        usage.Add(n->usage);  // kept: it reserves room for the ones after it
      } else {
        stale.push_back(n->pod.Key());
      }
    }
  }
  std::sort(stale.begin(), stale.end());
  return stale;
}

GangDecision PlaceGang(const Snapshot& snapshot, const std::vector<Pod>& pods,
                       const PlacementOptions& options) {
  GangDecision out;
  PlacementOptions opts = options;
  opts.enable_preemption = false;
  opts.max_reported_scores = 0;
  UsageOverlay overlay;
  for (size_t i = 0; i < pods.size(); ++i) {
    Decision d = ScheduleImpl(snapshot, pods[i], opts, &overlay);
    if (!d.bound()) {
      out.bindings.clear();
      out.failed_index = i;
      out.failed = std::move(d);
      return out;
    }
    // Assume the pod onto its node for the pods after it.
    size_t index = static_cast<size_t>(snapshot.NodeIndex(d.node_name));
    auto it = overlay.find(index);
    if (it == overlay.end()) it = overlay.emplace(index, snapshot.nodes()[index].usage()).first;
    it->second.Add(snapshot.Compile(pods[i]));
    out.bindings.emplace_back(pods[i].Key(), d.node_name);
  }
  out.placed = true;
  return out;
}

}  // namespace berth::placement
