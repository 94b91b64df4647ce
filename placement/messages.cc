#include "placement/messages.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace berth::placement {

std::string FitErrorMessage(size_t num_all_nodes, const std::vector<NodeFailure>& failures,
                            std::string_view post_filter_message) {
  std::string out = fmt::format("0/{} nodes are available:", num_all_nodes);
  std::map<std::string_view, int> counts;
  for (const auto& f : failures) {
    for (const auto& r : f.status.reasons) ++counts[r];
  }
  std::vector<std::string> histogram;
  histogram.reserve(counts.size());
  for (const auto& [reason, n] : counts) histogram.push_back(fmt::format("{} {}", n, reason));
  std::sort(histogram.begin(), histogram.end());
  if (!histogram.empty()) {
    out += " ";
    for (size_t i = 0; i < histogram.size(); ++i) {
      if (i > 0) out += ", ";
      out += histogram[i];
    }
    out += ".";
  }
  if (!post_filter_message.empty()) {
    out += " ";
    out += post_filter_message;
    out += ".";
  }
  return out;
}

std::string ScheduledMessage(std::string_view pod_namespace, std::string_view pod_name,
                             std::string_view node_name) {
  return fmt::format("Successfully assigned {}/{} to {}", pod_namespace, pod_name, node_name);
}

std::string PreemptedMessage(std::string_view preemptor_uid, std::string_view node_name) {
  return fmt::format("Preempted by pod {} on node {}", preemptor_uid, node_name);
}

std::string DisruptionTargetMessage(std::string_view scheduler_name) {
  return fmt::format("{}: preempting to accommodate a higher priority pod", scheduler_name);
}

}  // namespace berth::placement
