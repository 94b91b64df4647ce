// Score plugins: how kube-scheduler ranks the nodes that passed the filters
// (kubernetes v1.32 default profile). Each plugin gives a node 0..100
// (framework.MaxNodeScore); the node's score is the weighted sum.
//
//   1. NodeResourcesFit, strategy LeastAllocated, resources cpu (weight 1)
//      and memory (weight 1), weight 1 in the profile. Per resource with a
//      non-zero allocatable: (allocatable − requested) × 100 / allocatable
//      in integer arithmetic (0 when requested > allocatable), where
//      requested = the node's non-zero requests + the pod's non-zero request
//      (snapshot.h: 100m cpu / 200Mi memory assumed for containers without a
//      request); the node score is Σ score × weight / Σ weight (integer).
//   2. NodeResourcesBalancedAllocation, resources cpu and memory, weight 1.
//      fraction_r = min(1, (node requested + pod requested) / allocatable)
//      with the actual requests; with two resources std = |f_cpu − f_mem| / 2
//      (the population standard deviation in general); score =
//      int64((1 − std) × 100). A pod requesting neither cpu nor memory is not
//      scored by this plugin (0), as upstream since kubernetes#129138.
//   3. TaintToleration, weight 3: the number of the node's PreferNoSchedule
//      taints not tolerated by the pod's tolerations whose effect is empty
//      or PreferNoSchedule, normalised over the feasible nodes with
//      DefaultNormalizeScore(100, reverse): 100 − count × 100 / max_count
//      (all 100 when no node has such taints).
//   Units as upstream: cpu in milli-cores, memory in bytes.
// NodeAffinity's preferred terms, PodTopologySpread, InterPodAffinity and
// ImageLocality are not modelled (berth pods carry none of their inputs).
//
// Node choice: the highest total; kube-scheduler breaks ties at random
// (reservoir sampling), berth picks the smallest node name so decisions are
// reproducible.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "placement/model.h"
#include "placement/snapshot.h"

namespace berth::placement {

inline constexpr int64_t kMaxNodeScore = 100;

struct ScoreWeights {
  int64_t node_resources_fit = 1;
  int64_t balanced_allocation = 1;
  int64_t taint_toleration = 3;
};

// Step 1 (0..100).
int64_t LeastAllocatedScore(const PodUsage& pod, const NodeInfo& node, const NodeUsage& usage);
// Step 2 (0..100).
int64_t BalancedAllocationScore(const PodUsage& pod, const NodeInfo& node, const NodeUsage& usage);
// Step 3 before normalisation: the intolerable PreferNoSchedule taint count.
int64_t IntolerablePreferNoScheduleTaints(const Pod& pod, const NodeInfo& node);
// DefaultNormalizeScore(100, reverse = true) in place.
void NormalizeReverse(std::vector<int64_t>& counts);

}  // namespace berth::placement
