// The texts kube-scheduler writes, built exactly as upstream builds them
// (framework.FitError.Error, DefaultPreemption.PostFilter, the binder and
// preemption executor), so `kubectl describe pod` reads as on a cluster.
//
// FitErrorMessage(num_all_nodes, failures, post_filter_message):
//   1. "0/<N> nodes are available:"
//   2. the histogram: for every distinct reason over all failing nodes (a node
//      contributes each of its reasons once), the string "<count> <reason>";
//      these strings are sorted lexicographically AS STRINGS (so "10 x" sorts
//      before "2 y") and joined with ", ", then " " + that + "." is appended.
//   3. when the post-filter (preemption) produced a message:
//      " " + message + "." — the preemption message is itself a FitError
//      ending in ".", hence the two dots real clusters print:
//      "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes
//      are available: 3 No preemption victims found for incoming pod.."
// With no node at all kube-scheduler reports kNoNodesAvailable instead.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "placement/filters.h"

namespace berth::placement {

inline constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";

// Preemption texts (DefaultPreemption).
inline constexpr std::string_view kNotEligibleNever = "not eligible due to preemptionPolicy=Never.";
inline constexpr std::string_view kNotEligibleTerminating =
    "not eligible due to a terminating pod on the nominated node.";
inline constexpr std::string_view kNoPreemptionVictims =
    "No preemption victims found for incoming pod";
inline constexpr std::string_view kPreemptionNotHelpful = "Preemption is not helpful for scheduling";

// Steps 1-3 above. `post_filter_message` is the whole PostFilter text
// ("preemption: ...") or empty.
std::string FitErrorMessage(size_t num_all_nodes, const std::vector<NodeFailure>& failures,
                            std::string_view post_filter_message = "");

// Event Scheduled (type Normal, reason Scheduled):
// "Successfully assigned <namespace>/<name> to <node>".
std::string ScheduledMessage(std::string_view pod_namespace, std::string_view pod_name,
                             std::string_view node_name);
// Event Preempted on a victim (type Normal, reason Preempted):
// "Preempted by pod <preemptor uid> on node <node>".
std::string PreemptedMessage(std::string_view preemptor_uid, std::string_view node_name);
// Condition DisruptionTarget=True, reason PreemptionByScheduler, on a victim:
// "<schedulerName>: preempting to accommodate a higher priority pod".
std::string DisruptionTargetMessage(std::string_view scheduler_name = kDefaultSchedulerName);

}  // namespace berth::placement
