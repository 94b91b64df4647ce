// A batch/v1 Job's podFailurePolicy and successPolicy as the Job controller evaluates them
// (Kubernetes 1.32, kubernetes/kubernetes pkg/controller/job/pod_failure_policy.go
// matchPodFailurePolicy, success_policy.go matchSuccessPolicy), as pure functions over what
// the controller reads from a failed pod (PodFailureFacts) and the Job's succeeded indexes.
//
// podFailurePolicy (spec.podFailurePolicy.rules, in order; the first rule that matches
// decides, a rule with an unknown action is skipped):
//   onExitCodes      matches when a container (containerStatuses first, then
//                    initContainerStatuses) has state.terminated with a non-zero exitCode,
//                    its name equals containerName when one is given, and the operator holds
//                    (In: the code is among values; NotIn: it is not);
//   onPodConditions  matches when the pod has a condition whose type and status equal one
//                    pattern's (status defaults to "True" in the API server).
//   Actions: FailJob (the Job fails: FailureTarget then Failed, reason PodFailurePolicy,
//   message "Container <c> for pod <ns>/<pod> failed with exit code <n> matching FailJob rule
//   at index <i>" or "Pod <ns>/<pod> has condition <type> matching FailJob rule at index <i>");
//   Ignore (the failure does not count toward backoffLimit, nor backoffLimitPerIndex: the
//   index's ignored-failure count grows instead); FailIndex (the pod's index fails at once;
//   needs backoffLimitPerIndex); Count (counted, as without a policy). No rule matching:
//   counted.
// successPolicy (Indexed Jobs; rules in order, the first met decides): a rule with
//   succeededIndexes is met when the succeeded indexes cover all of its indexes, or at least
//   succeededCount of them when that is set (an unparsable or empty succeededIndexes makes the
//   rule never match); a rule with succeededCount only is met when that many indexes
//   succeeded. Met: SuccessCriteriaMet then Complete, reason SuccessPolicy, message "Matched
//   rules at index <i>". Nothing is met before any index succeeded.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"

namespace berth::controllers::jobs::batchjob {

// batch/v1 JobReasonPodFailurePolicy and JobReasonSuccessPolicy.
inline constexpr std::string_view kPodFailurePolicyReason = "PodFailurePolicy";
inline constexpr std::string_view kSuccessPolicyReason = "SuccessPolicy";

// What a podFailurePolicy reads from a pod.
struct PodFailureFacts {
  struct TerminatedContainer {
    std::string name;
    int64_t exit_code = 0;
    bool operator==(const TerminatedContainer&) const = default;
  };
  struct ConditionState {
    std::string type;
    std::string status;
    bool operator==(const ConditionState&) const = default;
  };
  // Containers with state.terminated: containerStatuses then initContainerStatuses, in order.
  std::vector<TerminatedContainer> terminated;
  std::vector<ConditionState> conditions;  // status.conditions, in order
  static PodFailureFacts FromObject(const api::Object& pod);
  bool operator==(const PodFailureFacts&) const = default;
};

enum class PodFailureAction { kNone, kFailJob, kFailIndex, kIgnore, kCount };

struct PodFailureMatch {
  PodFailureAction action = PodFailureAction::kNone;  // kNone: no rule matched
  bool counts = true;                                 // false for Ignore
  std::string fail_job_message;                       // FailJob only
};

// Matches one failed pod `<ns>/<pod>` against `policy` (spec.podFailurePolicy; null or not an
// object: no policy, counted).
PodFailureMatch MatchPodFailurePolicy(const api::Object& policy, std::string_view ns, std::string_view pod,
                                      const PodFailureFacts& facts);

// The message of the first successPolicy rule met by `succeeded_indexes` (ascending,
// < completions), e.g. "Matched rules at index 0"; nullopt when none is (or no policy).
std::optional<std::string> MatchSuccessPolicy(const api::Object& policy, int32_t completions,
                                              const std::vector<int32_t>& succeeded_indexes);

}  // namespace berth::controllers::jobs::batchjob
