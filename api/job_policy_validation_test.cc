// A Job's podFailurePolicy, successPolicy and per-index backoff fields through the real
// admission pipeline: each error with upstream's field path and message
// (pkg/apis/batch/validation/validation.go, Kubernetes 1.32).
#include "api/job_policy_validation.h"

#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/registry.h"
#include "api/yaml_codec.h"

namespace berth::api {
namespace {

using Strings = std::vector<std::string>;

constexpr char kJob[] = R"(apiVersion: batch/v1
kind: Job
metadata: {name: pf, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      initContainers: [{name: init, image: busybox}]
      containers: [{name: main, image: busybox}]
)";

// The causes ("field: message") of creating kJob with `spec` merged into its spec; empty
// when accepted.
Strings Create(const std::string& spec_yaml) {
  Object job = ParseYaml(kJob).value();
  Object spec = ParseYaml(spec_yaml).value();
  for (auto& [key, value] : spec.items()) job["spec"][key] = value;
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest req;
  req.operation = Operation::kCreate;
  req.object = std::move(job);
  StatusOr<AdmittedWrite> w = pipeline.Admit(std::move(req));
  Strings out;
  if (w.ok()) return out;
  for (const StatusCause& c : w.status().causes()) out.push_back(c.field + ": " + c.message);
  return out;
}

TEST(JobPolicyValidationTest, AcceptsUpstreamExamples) {
  EXPECT_EQ(Create(R"(podFailurePolicy: {rules: [
      {action: FailJob, onExitCodes: {containerName: main, operator: In, values: [1, 2, 42]}},
      {action: Ignore, onPodConditions: [{type: DisruptionTarget}]},
      {action: Count, onExitCodes: {operator: NotIn, values: [0]}}]})"),
            Strings{});
  EXPECT_EQ(Create(R"({completionMode: Indexed, completions: 4, parallelism: 4, backoffLimitPerIndex: 1,
      maxFailedIndexes: 2,
      podFailurePolicy: {rules: [{action: FailIndex, onExitCodes: {operator: In, values: [3]}}]},
      successPolicy: {rules: [{succeededIndexes: "0,2-3", succeededCount: 2}, {succeededCount: 4}]}})"),
            Strings{});
}

TEST(JobPolicyValidationTest, PodFailurePolicyRules) {
  const std::string rules = "spec.podFailurePolicy.rules";
  EXPECT_EQ(
      Create(R"(podFailurePolicy: {rules: [
      {action: FailIndex, onExitCodes: {containerName: side, operator: In, values: [3, 0, 1, 3]}},
      {action: Ignore},
      {action: Count, onExitCodes: {operator: NotIn, values: []}, onPodConditions: [{type: "a b", status: Maybe}]}]})"),
      (Strings{
          // The schema's list-type set, reported before the strategy's checks.
          rules + "[0].onExitCodes.values[3]: Duplicate value: 3",
          rules + R"([0].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set)",
          rules +
              R"([0].onExitCodes.containerName: Invalid value: "side": must be one of the container or initContainer names in the pod template)",
          rules + "[0].onExitCodes.values[1]: Invalid value: 0: must not be 0 for the In operator",
          rules + "[0].onExitCodes.values: Invalid value: []int32{3, 0, 1, 3}: must be ordered",
          rules + "[1]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
          rules + "[2].onExitCodes.values: Invalid value: []int32{}: at least one value is required",
          rules +
              R"([2].onPodConditions[0].type: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'))",
          rules +
              R"([2].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown")",
          rules + "[2]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
      }));
}

TEST(JobPolicyValidationTest, PodFailurePolicyLimitsAndReplacementPolicy) {
  std::string many_rules = "podFailurePolicy: {rules: [";
  for (int i = 0; i <= kMaxPodFailurePolicyRules; ++i) {
    many_rules += "{action: Count, onExitCodes: {operator: In, values: [1]}},";
  }
  many_rules += "]}";
  EXPECT_EQ(Create(many_rules), Strings{"spec.podFailurePolicy.rules: Too many: 21: must have at most 20 items"});
  std::string values;
  for (int i = 1; i <= kMaxPodFailurePolicyOnExitCodesValues + 1; ++i) values += std::to_string(i) + ",";
  EXPECT_EQ(
      Create("podFailurePolicy: {rules: [{action: Count, onExitCodes: {operator: In, values: [" + values + "]}}]}"),
      Strings{"spec.podFailurePolicy.rules[0].onExitCodes.values: Too many: 256: must have at most 255 items"});
  std::string patterns;
  for (int i = 0; i <= kMaxPodFailurePolicyOnPodConditionsPatterns; ++i)
    patterns += "{type: C" + std::to_string(i) + "},";
  EXPECT_EQ(Create("podFailurePolicy: {rules: [{action: Ignore, onPodConditions: [" + patterns + "]}]}"),
            Strings{"spec.podFailurePolicy.rules[0].onPodConditions: Too many: 21: must have at most 20 items"});
  EXPECT_EQ(
      Create(R"({podReplacementPolicy: TerminatingOrFailed,
      podFailurePolicy: {rules: [{action: Count, onExitCodes: {operator: In, values: [1]}}]}})"),
      Strings{R"(spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed")"});
}

TEST(JobPolicyValidationTest, SuccessPolicyRules) {
  EXPECT_EQ(Create("successPolicy: {rules: [{succeededCount: 1}]}"),
            Strings{"spec.successPolicy: Invalid value: requires indexed completion mode"});
  const std::string indexed = "completionMode: Indexed, completions: 4, parallelism: 4, ";
  EXPECT_EQ(Create("{" + indexed + "successPolicy: {rules: []}}"),
            Strings{"spec.successPolicy.rules: Required value: at least one rules must be specified when the "
                    "successPolicy is specified"});
  const std::string r = "spec.successPolicy.rules";
  EXPECT_EQ(
      Create("{" + indexed + R"(successPolicy: {rules: [{}, {succeededIndexes: "1-0"},
      {succeededIndexes: "9"}, {succeededIndexes: "x"}, {succeededIndexes: "1-2-3"}, {succeededIndexes: "2,1"},
      {succeededCount: 5}, {succeededIndexes: "0-1", succeededCount: 3}, {succeededCount: -1}]}})"),
      (Strings{
          r + "[0]: Required value: at least one of succeededCount or succeededIndexes must be specified",
          r + R"([1].succeededIndexes: Invalid value: "1-0": error parsing succeededIndexes: non-increasing order, previous: 1, current: 0)",
          r + R"([2].succeededIndexes: Invalid value: "9": error parsing succeededIndexes: too large index: "9")",
          r + R"([3].succeededIndexes: Invalid value: "x": error parsing succeededIndexes: cannot convert string to integer for index: "x")",
          r + R"([4].succeededIndexes: Invalid value: "1-2-3": error parsing succeededIndexes: the fragment "1-2-3" violates the requirement that an index interval can have at most two parts separated by '-')",
          r + R"([5].succeededIndexes: Invalid value: "2,1": error parsing succeededIndexes: non-increasing order, previous: 2, current: 1)",
          r + "[6].succeededCount: Invalid value: 5: must be less than or equal to 4 (the number of specified "
              "completions)",
          r + "[7].succeededCount: Invalid value: 3: must be less than or equal to 2 (the number of indexes in "
              "the specified succeededIndexes field)",
          r + "[8].succeededCount: Invalid value: -1: must be greater than or equal to 0",
      }));
  std::string many = "{" + indexed + "successPolicy: {rules: [";
  for (int i = 0; i <= kMaxSuccessPolicyRules; ++i) many += "{succeededCount: 1},";
  EXPECT_EQ(Create(many + "]}}"), Strings{r + ": Too many: 21: must have at most 20 items"});
  std::string long_indexes(kMaxSuccessPolicySucceededIndexesLength + 1, '1');
  Strings got = Create("{" + indexed + "successPolicy: {rules: [{succeededIndexes: \"" + long_indexes + "\"}]}}");
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got[0], r + "[0].succeededIndexes: Too long: may not be more than 65536 bytes");
}

TEST(JobPolicyValidationTest, PerIndexFieldsNeedAnIndexedJob) {
  EXPECT_EQ(Create("{backoffLimitPerIndex: 1, maxFailedIndexes: 1}"),
            (Strings{"spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
                     "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode"}));
  EXPECT_EQ(Create("{completionMode: Indexed, completions: 2, parallelism: 2, backoffLimitPerIndex: 1, "
                   "maxFailedIndexes: 3}"),
            Strings{"spec.maxFailedIndexes: Invalid value: 3: must be less than or equal to completions"});
}

}  // namespace
}  // namespace berth::api
