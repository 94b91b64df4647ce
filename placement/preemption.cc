#include "placement/preemption.h"

#include <algorithm>

#include "placement/messages.h"

namespace berth::placement {

std::string PreemptionIneligibility(const Snapshot& snapshot, const Pod& pod,
                                    const NodeStatus* nominated_node_status) {
  if (pod.preemption_policy == PreemptionPolicy::kNever) return std::string(kNotEligibleNever);
  if (pod.nominated_node_name.empty()) return "";
  if (nominated_node_status != nullptr &&
      nominated_node_status->code == FilterCode::kUnschedulableAndUnresolvable) {
    // kubernetes/kubernetes#92600: the nominated node is no use any more; preempt elsewhere.
    return "";
  }
  if (const NodeInfo* node = snapshot.FindNode(pod.nominated_node_name)) {
    for (const auto& bp : node->pods()) {
      if (bp.pod.priority < pod.priority && bp.pod.terminating &&
          bp.pod.terminating_by_preemption) {
        return std::string(kNotEligibleTerminating);
      }
    }
  }
  return "";
}

VictimSelection SelectVictimsOnNode(const Snapshot& snapshot, const Pod& pod,
                                    const PodUsage& pod_usage, const NodeInfo& node) {
  VictimSelection out;
  NodeUsage usage = node.usage();
  std::vector<const NodeInfo::BoundPod*> potential;
  for (const auto& bp : node.pods()) {
    if (bp.pod.priority < pod.priority) {
      potential.push_back(&bp);
      usage.Remove(bp.usage);
    }
  }
  if (potential.empty()) {
    out.status = NodeStatus::Unresolvable(kNoPreemptionVictims);
    return out;
  }
  const ResourceNames& names = snapshot.resource_names();
  out.status = RunFiltersWithNominatedPods(pod, pod_usage, node, usage, names);
  if (!out.status.ok()) return out;
  std::sort(potential.begin(), potential.end(),
            [](const NodeInfo::BoundPod* a, const NodeInfo::BoundPod* b) {
              return MoreImportantPod(a->pod, b->pod);
            });
  for (const NodeInfo::BoundPod* bp : potential) {
    usage.Add(bp->usage);
    if (!RunFiltersWithNominatedPods(pod, pod_usage, node, usage, names).ok()) {
      usage.Remove(bp->usage);
      out.victims.push_back(bp);
    }
  }
  return out;
}

namespace {

struct Candidate {
  const NodeInfo* node;
  std::vector<const NodeInfo::BoundPod*> victims;  // most important first
};

// Earliest start among the highest-priority victims (nullopt = now).
std::optional<Time> EarliestStartOfHighest(const Candidate& c) {
  int32_t highest = c.victims.front()->pod.priority;
  std::optional<Time> earliest;
  bool any = false;
  for (const auto* v : c.victims) {
    if (v->pod.priority != highest) continue;
    const auto& s = v->pod.start_time;
    if (!any) {
      earliest = s;
      any = true;
    } else if (s && (!earliest || *s < *earliest)) {
      earliest = s;
    }
  }
  return earliest;
}

int64_t SumPriorities(const Candidate& c) {
  int64_t sum = 0;
  for (const auto* v : c.victims) sum += static_cast<int64_t>(v->pod.priority) + (int64_t{1} << 31);
  return sum;
}

// Step 4: true when a is the better node to preempt on.
bool BetterCandidate(const Candidate& a, const Candidate& b) {
  if (a.victims.empty() != b.victims.empty()) return a.victims.empty();
  if (!a.victims.empty()) {
    int32_t ha = a.victims.front()->pod.priority, hb = b.victims.front()->pod.priority;
    if (ha != hb) return ha < hb;
    int64_t sa = SumPriorities(a), sb = SumPriorities(b);
    if (sa != sb) return sa < sb;
    if (a.victims.size() != b.victims.size()) return a.victims.size() < b.victims.size();
    std::optional<Time> ta = EarliestStartOfHighest(a), tb = EarliestStartOfHighest(b);
    if (ta != tb) {
      // Latest wins; nullopt (not started) is the latest of all.
      if (!ta) return true;
      if (!tb) return false;
      return *ta > *tb;
    }
  }
  return a.node->name() < b.node->name();
}

}  // namespace

PreemptionResult Preempt(const Snapshot& snapshot, const Pod& pod, const PodUsage& pod_usage,
                         const std::vector<NodeFailure>& statuses) {
  PreemptionResult result;
  const auto& nodes = snapshot.nodes();
  BERTH_CHECK(statuses.size() == nodes.size());

  // 1. Eligibility.
  const NodeStatus* nominated_status = nullptr;
  if (!pod.nominated_node_name.empty()) {
    int i = snapshot.NodeIndex(pod.nominated_node_name);
    if (i >= 0) nominated_status = &statuses[static_cast<size_t>(i)].status;
  }
  std::string ineligible = PreemptionIneligibility(snapshot, pod, nominated_status);
  if (!ineligible.empty()) {
    result.kind = PreemptionResult::Kind::kNotEligible;
    result.message = "preemption: " + ineligible;
    return result;
  }

  // 2-3. Dry run on every node where preemption might help.
  std::vector<NodeFailure> preemption_statuses;
  std::optional<Candidate> best;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeInfo& node = nodes[i];
    if (statuses[i].status.code == FilterCode::kUnschedulableAndUnresolvable) {
      preemption_statuses.push_back(
          {node.name(), NodeStatus::Unresolvable(kPreemptionNotHelpful)});
      continue;
    }
    VictimSelection sel = SelectVictimsOnNode(snapshot, pod, pod_usage, node);
    if (!sel.status.ok()) {
      preemption_statuses.push_back({node.name(), std::move(sel.status)});
      continue;
    }
    // 4. Keep the best candidate so far.
    Candidate c{&node, std::move(sel.victims)};
    if (!best || BetterCandidate(c, *best)) best = std::move(c);
  }
  if (!best) {
    result.kind = PreemptionResult::Kind::kNoCandidate;
    result.message = "preemption: " + FitErrorMessage(nodes.size(), preemption_statuses);
    return result;
  }

  // 5. The plan.
  PreemptionPlan plan;
  plan.node_name = best->node->name();
  for (const auto* v : best->victims) {
    plan.victims.push_back({v->pod.Key(), v->pod.uid, v->pod.priority, v->pod.terminating});
  }
  for (const auto& n : best->node->nominated()) {
    if (n.pod.priority < pod.priority && n.pod.Key() != pod.Key()) {
      plan.nominations_to_clear.push_back(n.pod.Key());
    }
  }
  std::sort(plan.nominations_to_clear.begin(), plan.nominations_to_clear.end());
  result.kind = PreemptionResult::Kind::kPlanned;
  result.plan = std::move(plan);
  return result;
}

}  // namespace berth::placement
