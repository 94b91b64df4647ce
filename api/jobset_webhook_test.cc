// The JobSet webhook's defaults written on the stored object and its rule-name checks
// (kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go), through the admission pipeline.
#include "api/jobset_webhook.h"

#include <gtest/gtest.h>
#include <string>

#include "api/admission_pipeline.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"

namespace berth::api {
namespace {

StatusOr<AdmittedWrite> Create(const Object& obj) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest req;
  req.operation = Operation::kCreate;
  req.object = obj;
  return pipeline.Admit(std::move(req));
}

// The shape of JobSet's examples/failure-policy/restartjobset-action.yaml: a rule without
// a name, two replicatedJobs without completionMode or restartPolicy.
constexpr char kRestartAction[] = R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: restart, namespace: default}
spec:
  failurePolicy:
    maxRestarts: 3
    rules:
    - action: RestartJobSet
      targetReplicatedJobs: [leader]
    - action: FailJobSet
  replicatedJobs:
  - name: leader
    replicas: 1
    template:
      spec:
        backoffLimit: 0
        completions: 2
        parallelism: 2
        template:
          spec:
            containers: [{name: leader, image: bash, command: [bash, -c, exit 1]}]
  - name: workers
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: worker, image: bash, command: [sleep, "1000"]}]
)";

TEST(JobSetWebhookTest, DefaultsAreWrittenOnTheStoredObject) {
  Object js = ParseYaml(kRestartAction).value();
  js["spec"]["replicatedJobs"][0]["template"]["spec"]["parallelism"] = 2.0;  // JSON 2.0
  auto w = Create(js);
  ASSERT_TRUE(w.ok()) << w.status().message();
  const Object& spec = w->object["spec"];
  EXPECT_EQ(spec["failurePolicy"]["rules"][0]["name"], "failurePolicyRule0");
  EXPECT_EQ(spec["failurePolicy"]["rules"][1]["name"], "failurePolicyRule1");
  EXPECT_EQ(spec["failurePolicy"]["restartStrategy"], "Recreate");
  EXPECT_EQ(spec["successPolicy"], Object::parse(R"({"operator":"All"})"));
  EXPECT_EQ(spec["startupPolicy"], Object::parse(R"({"startupPolicyOrder":"AnyOrder"})"));
  EXPECT_EQ(spec["network"], Object::parse(R"({"enableDNSHostnames":true,"publishNotReadyAddresses":true})"));
  const Object& leader = spec["replicatedJobs"][0]["template"]["spec"];
  EXPECT_EQ(leader["completionMode"], "Indexed");
  EXPECT_EQ(leader["template"]["spec"]["restartPolicy"], "OnFailure");
  // A CRD's whole float passes its integer field (isFloatInt) and is stored as an integer.
  EXPECT_TRUE(leader["parallelism"].is_number_integer());
  EXPECT_EQ(leader["parallelism"], 2);
  const Object& workers = spec["replicatedJobs"][1];
  EXPECT_EQ(workers["replicas"], 1);
  EXPECT_EQ(workers["groupName"], "default");
  EXPECT_EQ(workers["template"]["spec"]["template"]["spec"]["restartPolicy"], "Never");
}

// dependsOn names a previous replicatedJob; a dangling or forward one is refused.
TEST(JobSetWebhookTest, DependsOnNamesAPreviousReplicatedJob) {
  Object js = ParseYaml(kRestartAction).value();
  js["spec"]["replicatedJobs"][1]["dependsOn"] = Object::parse(R"([{"name":"leader","status":"Ready"}])");
  EXPECT_TRUE(Create(js).ok()) << Create(js).status().ToString();
  for (const char* name : {"nobody", "workers"}) {
    js["spec"]["replicatedJobs"][1]["dependsOn"][0]["name"] = name;
    auto w = Create(js);
    ASSERT_FALSE(w.ok()) << name;
    ASSERT_EQ(w.status().causes().size(), 1u) << w.status().ToString();
    EXPECT_EQ(w.status().causes()[0].field + ": " + w.status().causes()[0].message,
              std::string("spec.replicatedJobs[1].dependsOn[0].name: Invalid value: \"") + name +
                  "\": must be the name of a previous replicatedJob");
  }
  js["spec"]["replicatedJobs"][1].erase("dependsOn");
  js["spec"]["replicatedJobs"][0]["dependsOn"] = Object::parse(R"([{"name":"workers","status":"Ready"}])");
  EXPECT_FALSE(Create(js).ok());  // the first replicatedJob has no previous one
}

TEST(JobSetWebhookTest, RuleNamesFollowUpstreamsPatternLengthAndUniqueness) {
  Object js = ParseYaml(kRestartAction).value();
  Object& rules = js["spec"]["failurePolicy"]["rules"];
  rules[0]["name"] = "restart-leader";
  rules[1]["name"] = std::string(129, 'a');
  rules.push_back(Object::parse(R"({"action":"FailJobSet","name":"restart-leader"})"));
  auto w = Create(js);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Code::kInvalid);
  const std::string at = "spec.failurePolicy.rules";
  const std::string pattern_rest =
      "a failure policy rule name must start with an alphabetic character, optionally followed by a string of "
      "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";
  const std::string errors[] = {
      at + R"([0].name: Invalid value: "restart-leader": invalid failure policy rule name 'restart-leader', )" +
          pattern_rest,
      at + "[1].name: Invalid value: \"" + std::string(129, 'a') +
          "\": invalid failure policy rule name of length 129, the rule name must be at least 1 characters long "
          "and at most 128 characters long",
      at + R"([2].name: Invalid value: "restart-leader": invalid failure policy rule name 'restart-leader', )" +
          pattern_rest,
      at + R"([0].name: Invalid value: "restart-leader": rule names are not unique, rules with indices [0 2] all )"
           R"(have the same name 'restart-leader')",
  };
  for (const std::string& e : errors) {
    EXPECT_NE(w.status().message().find(e), std::string::npos) << e << "\nin: " << w.status().message();
  }
  EXPECT_EQ(w.status().causes().size(), 4u);

  rules = Object::parse(R"([{"action":"RestartJobSet","name":"Restart_leader:1,x_"}])");
  EXPECT_TRUE(Create(js).ok());
}

}  // namespace
}  // namespace berth::api
