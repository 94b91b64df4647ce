#include "controllers/jobs/batchjob/job_policies.h"

#include <algorithm>

#include "api/unstructured.h"
#include "controllers/jobs/batchjob/job_pods.h"

namespace berth::controllers::jobs::batchjob {

using namespace api;  // NOLINT(build/namespaces): objects and accessors

PodFailureFacts PodFailureFacts::FromObject(const Object& pod) {
  PodFailureFacts f;
  const Object& status = ObjectAt(pod, "status");
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    const Object& statuses = Field(status, list);
    if (!statuses.is_array()) continue;
    for (const Object& cs : statuses) {
      const Object& terminated = Field(ObjectAt(cs, "state"), "terminated");
      if (!terminated.is_object()) continue;  // still running or waiting: no exit code to match
      f.terminated.push_back({StringAt(cs, "name"), IntAt(terminated, "exitCode", 0)});
    }
  }
  const Object& conditions = Field(status, "conditions");
  if (conditions.is_array()) {
    for (const Object& c : conditions) f.conditions.push_back({StringAt(c, "type"), StringAt(c, "status")});
  }
  return f;
}

namespace {

// Upstream isOnExitCodesOperatorMatching.
bool OperatorMatches(const Object& requirement, int64_t code) {
  const Object& values = Field(requirement, "values");
  bool in = false;
  if (values.is_array()) {
    in = std::any_of(values.begin(), values.end(),
                     [&](const Object& v) { return v.is_number_integer() && v.get<int64_t>() == code; });
  }
  const std::string op = StringAt(requirement, "operator");
  if (op == "In") return in;
  if (op == "NotIn") return !in;
  return false;
}

// Upstream matchOnExitCodes: the first terminated container with a non-zero code that the
// requirement matches.
const PodFailureFacts::TerminatedContainer* MatchOnExitCodes(const Object& requirement, const PodFailureFacts& facts) {
  const Object& container = Field(requirement, "containerName");
  for (const auto& t : facts.terminated) {
    if (t.exit_code == 0) continue;
    if (container.is_string() && container.get<std::string>() != t.name) continue;
    if (OperatorMatches(requirement, t.exit_code)) return &t;
  }
  return nullptr;
}

// Upstream matchOnPodConditions: the first pod condition that one pattern matches.
const PodFailureFacts::ConditionState* MatchOnPodConditions(const Object& patterns, const PodFailureFacts& facts) {
  for (const auto& c : facts.conditions) {
    for (const Object& p : patterns) {
      if (StringAt(p, "type") == c.type && StringAt(p, "status", "True") == c.status) return &c;
    }
  }
  return nullptr;
}

}  // namespace

PodFailureMatch MatchPodFailurePolicy(const Object& policy, std::string_view ns, std::string_view pod,
                                      const PodFailureFacts& facts) {
  const Object& rules = Field(policy, "rules");
  if (!rules.is_array()) return {};
  for (size_t i = 0; i < rules.size(); ++i) {
    const Object& rule = rules[i];
    const std::string action = StringAt(rule, "action");
    std::string fail_job_message;
    const Object& on_exit_codes = Field(rule, "onExitCodes");
    const Object& on_conditions = Field(rule, "onPodConditions");
    if (on_exit_codes.is_object()) {
      const auto* t = MatchOnExitCodes(on_exit_codes, facts);
      if (t == nullptr) continue;
      fail_job_message = "Container " + t->name + " for pod " + std::string(ns) + "/" + std::string(pod) +
                         " failed with exit code " + std::to_string(t->exit_code) + " matching FailJob rule at index " +
                         std::to_string(i);
    } else if (on_conditions.is_array()) {
      const auto* c = MatchOnPodConditions(on_conditions, facts);
      if (c == nullptr) continue;
      fail_job_message = "Pod " + std::string(ns) + "/" + std::string(pod) + " has condition " + c->type +
                         " matching FailJob rule at index " + std::to_string(i);
    } else {
      continue;
    }
    if (action == "Ignore") return {PodFailureAction::kIgnore, false, ""};
    if (action == "FailIndex") return {PodFailureAction::kFailIndex, true, ""};
    if (action == "Count") return {PodFailureAction::kCount, true, ""};
    if (action == "FailJob") return {PodFailureAction::kFailJob, true, std::move(fail_job_message)};
    // An unknown action: the rule is skipped.
  }
  return {};
}

std::optional<std::string> MatchSuccessPolicy(const Object& policy, int32_t completions,
                                              const std::vector<int32_t>& succeeded) {
  const Object& rules = Field(policy, "rules");
  if (!rules.is_array() || succeeded.empty()) return std::nullopt;
  for (size_t i = 0; i < rules.size(); ++i) {
    const Object& rule = rules[i];
    const Object& count = Field(rule, "succeededCount");
    const std::optional<int64_t> want =
        count.is_number_integer() ? std::optional<int64_t>(count.get<int64_t>()) : std::nullopt;
    bool met = false;
    if (Field(rule, "succeededIndexes").is_string()) {
      const std::vector<int32_t> required = ParseIndexIntervals(StringAt(rule, "succeededIndexes"), completions);
      if (required.empty()) continue;  // unparsable: never matches
      std::vector<int32_t> both;
      std::set_intersection(required.begin(), required.end(), succeeded.begin(), succeeded.end(),
                            std::back_inserter(both));
      const auto contains = static_cast<int64_t>(both.size());
      met = contains == static_cast<int64_t>(required.size()) || (want && contains >= *want);
    } else if (want) {
      met = static_cast<int64_t>(succeeded.size()) >= *want;
    }
    if (met) return "Matched rules at index " + std::to_string(i);
  }
  return std::nullopt;
}

}  // namespace berth::controllers::jobs::batchjob
