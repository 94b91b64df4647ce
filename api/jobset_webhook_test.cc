// The JobSet webhook's defaults written on the stored object and its rule-name checks
// (kubernetes-sigs/jobset pkg/webhooks/jobset_webhook.go), through the admission pipeline.
#include "api/jobset_webhook.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/testing/admission.h"
#include "api/yaml_codec.h"

namespace berth::api {
namespace {

StatusOr<AdmittedWrite> Create(const Object& obj) { return testing::AdmitCreate(obj); }
StatusOr<AdmittedWrite> Update(const Object& obj, const Object& old) { return testing::AdmitUpdate(old, obj); }

using Strings = std::vector<std::string>;

// "<field>: <message>" of each cause of a refused write; {"admitted"} when it was admitted.
Strings Errors(const StatusOr<AdmittedWrite>& w) {
  if (w.ok()) return {"admitted"};
  EXPECT_EQ(w.status().code(), Code::kInvalid) << w.status().ToString();
  return testing::CauseStrings(w);
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

// dependsOn names a previous replicatedJob; a dangling, forward or own one is refused, and
// the first replicatedJob has none.
TEST(JobSetWebhookTest, DependsOnNamesAPreviousReplicatedJob) {
  Object js = ParseYaml(kRestartAction).value();
  js["spec"]["replicatedJobs"][1]["dependsOn"] = Object::parse(R"([{"name":"leader","status":"Ready"}])");
  EXPECT_EQ(Errors(Create(js)), Strings{"admitted"});
  for (const char* name : {"nobody", "workers"}) {
    js["spec"]["replicatedJobs"][1]["dependsOn"][0]["name"] = name;
    EXPECT_EQ(Errors(Create(js)), Strings{std::string("spec.replicatedJobs[1].dependsOn[0].name: Invalid value: \"") +
                                          name + "\": replicatedJob: workers cannot depend on replicatedJob: " + name});
  }
  js["spec"]["replicatedJobs"][1].erase("dependsOn");
  js["spec"]["replicatedJobs"][0]["dependsOn"] = Object::parse(R"([{"name":"workers","status":"Ready"}])");
  EXPECT_EQ(Errors(Create(js)),
            (Strings{"spec.replicatedJobs[0].dependsOn: Forbidden: DependsOn can't be set for the first ReplicatedJob",
                     "spec.replicatedJobs[0].dependsOn[0].name: Invalid value: \"workers\": replicatedJob: leader "
                     "cannot depend on replicatedJob: workers"}));
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

// The messages of apimachinery's IsDNS1123Subdomain and IsDNS1035Label for a bad format.
constexpr char kDNS1123SubdomainFormat[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr char kDNS1035LabelFormat[] =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
    "is '[a-z]([-a-z0-9]*[a-z0-9])?')";

// The subdomain is a DNS-1123 subdomain and, naming the headless Service, a DNS-1035 label
// of at most 63 characters (upstream's own message for the length).
TEST(JobSetWebhookTest, SubdomainIsADNS1035Label) {
  Object js = ParseYaml(kRestartAction).value();
  js["spec"]["network"]["subdomain"] = "Bad_Sub";
  EXPECT_EQ(Errors(Create(js)), (Strings{
                                    std::string("spec.network.subdomain: Invalid value: \"Bad_Sub\": ") +
                                        kDNS1123SubdomainFormat,
                                    std::string("spec.network.subdomain: Invalid value: \"Bad_Sub\": ") +
                                        kDNS1035LabelFormat,
                                }));
  js["spec"]["network"]["subdomain"] = "a.b";  // a subdomain, not a label
  EXPECT_EQ(Errors(Create(js)),
            (Strings{std::string("spec.network.subdomain: Invalid value: \"a.b\": ") + kDNS1035LabelFormat}));
  const std::string long_label(64, 'a');
  js["spec"]["network"]["subdomain"] = long_label;
  EXPECT_EQ(Errors(Create(js)),
            (Strings{"spec.network.subdomain: Invalid value: \"" + long_label +
                     "\": .spec.network.subdomain is too long, must be less than 63 characters"}));
  js["spec"]["network"]["subdomain"] = std::string(63, 'a');
  EXPECT_EQ(Errors(Create(js)), Strings{"admitted"});
}

// The longest Job name (<jobset>-<replicatedJob>-<replicas-1>) and, for an Indexed job
// with completions, the longest pod name (that, -<completions-1>, and a 5-character
// suffix) must be DNS-1035 labels; the group name too.
TEST(JobSetWebhookTest, GeneratedNamesAndGroupNameAreDNS1035Labels) {
  Object js = ParseYaml(kRestartAction).value();
  // "<50 x j>-leader-0" is 59 characters; its pods' "-1-abcde" make 67.
  js["metadata"]["name"] = std::string(50, 'j');
  js["spec"]["network"]["subdomain"] = "svc";
  const std::string job = std::string(50, 'j') + "-leader-0";
  EXPECT_EQ(Errors(Create(js)), (Strings{"spec.replicatedJobs[0].name: Invalid value: \"" + job +
                                         "\": JobSet name is too long, pod names generated for this JobSet will "
                                         "exceed 63 characters"}));
  js["spec"]["replicatedJobs"][0]["template"]["spec"]["completionMode"] = "NonIndexed";
  EXPECT_EQ(Errors(Create(js)), Strings{"admitted"});  // no index in its pod names
  js["spec"]["replicatedJobs"][0]["template"]["spec"]["completionMode"] = "Indexed";
  js["spec"]["replicatedJobs"][0]["template"]["spec"].erase("completions");
  EXPECT_EQ(Errors(Create(js)), Strings{"admitted"});  // upstream checks pod names only with completions

  js["metadata"]["name"] = std::string(56, 'j');  // "<56 x j>-leader-0": 65
  const std::string long_job = std::string(56, 'j') + "-leader-0";
  const std::string long_workers = std::string(56, 'j') + "-workers-0";
  EXPECT_EQ(Errors(Create(js)),
            (Strings{
                "spec.replicatedJobs[0].name: Invalid value: \"" + long_job +
                    "\": JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
                "spec.replicatedJobs[1].name: Invalid value: \"" + long_workers +
                    "\": JobSet name is too long, job names generated for this JobSet will exceed 63 characters",
            }));

  js = ParseYaml(kRestartAction).value();
  js["spec"]["replicatedJobs"][0]["name"] = "Leader";
  js["spec"]["failurePolicy"]["rules"][0]["targetReplicatedJobs"][0] = "Leader";
  // Once for the Job name, once for its pods' names (as upstream, with the Job name as value).
  const std::string bad_name = std::string("spec.replicatedJobs[0].name: Invalid value: \"restart-Leader-0\": ") +
                               kDNS1035LabelFormat;
  EXPECT_EQ(Errors(Create(js)), (Strings{bad_name, bad_name}));

  js = ParseYaml(kRestartAction).value();
  js["spec"]["replicatedJobs"][1]["groupName"] = "Workers";
  js["spec"]["replicatedJobs"][0]["groupName"] = std::string(64, 'g');
  EXPECT_EQ(Errors(Create(js)),
            (Strings{"spec.replicatedJobs[0].groupName: Invalid value: \"" + std::string(64, 'g') +
                         "\": .spec.replicatedJob[].groupName is too long, must be less than 63 characters",
                     std::string("spec.replicatedJobs[1].groupName: Invalid value: \"Workers\": ") +
                         kDNS1035LabelFormat}));
}

TEST(JobSetWebhookTest, ReplicasTimesParallelismFitsAnInt32) {
  Object js = ParseYaml(kRestartAction).value();
  js["spec"]["replicatedJobs"][1]["replicas"] = 2;
  js["spec"]["replicatedJobs"][1]["template"]["spec"]["parallelism"] = 1073741824;  // 2^30
  EXPECT_EQ(Errors(Create(js)), (Strings{"spec.replicatedJobs[1].replicas: Invalid value: 2: the product of replicas "
                                         "and parallelism must not exceed 2147483647 for replicatedJob 'workers'"}));
  js["spec"]["replicatedJobs"][1]["template"]["spec"]["parallelism"] = 1073741823;
  EXPECT_EQ(Errors(Create(js)), Strings{"admitted"});
  // Past int32 the schema's error alone (no overflowing product).
  js["spec"]["replicatedJobs"][1]["replicas"] = int64_t{1} << 62;
  const Strings errors = Errors(Create(js));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("spec.replicatedJobs[1].replicas: ", 0), 0u) << errors[0];
  EXPECT_EQ(errors[0].find("product"), std::string::npos) << errors[0];
}

// successPolicy and failurePolicy rules target existing replicatedJobs; a rule's failure
// reasons are batch/v1's Job failure reasons.
TEST(JobSetWebhookTest, PolicyTargetsAndReasonsMustExist) {
  Object js = ParseYaml(kRestartAction).value();
  js["spec"]["successPolicy"] = Object::parse(R"({"operator":"All","targetReplicatedJobs":["workers","nobody"]})");
  Object& rule = js["spec"]["failurePolicy"]["rules"][1];
  rule["targetReplicatedJobs"] = Object::parse(R"(["ghost","leader"])");
  rule["onJobFailureReasons"] = Object::parse(R"(["PodFailurePolicy","OOMKilled"])");
  EXPECT_EQ(Errors(Create(js)),
            (Strings{
                "spec.successPolicy.targetReplicatedJobs[1]: Invalid value: \"nobody\": invalid replicatedJob name "
                "'nobody' does not appear in .spec.ReplicatedJobs",
                "spec.failurePolicy.rules[1].targetReplicatedJobs[0]: Invalid value: \"ghost\": invalid replicatedJob "
                "name 'ghost' in failure policy does not appear in .spec.ReplicatedJobs",
                "spec.failurePolicy.rules[1].onJobFailureReasons[1]: Invalid value: \"OOMKilled\": invalid job "
                "failure reason 'OOMKilled' in failure policy is not a recognized job failure reason",
            }));
  js["spec"]["successPolicy"]["targetReplicatedJobs"] = Object::parse(R"(["workers"])");
  rule["targetReplicatedJobs"] = Object::parse(R"(["leader"])");
  rule["onJobFailureReasons"] = Object::parse(
      R"(["BackoffLimitExceeded","DeadlineExceeded","FailedIndexes","MaxFailedIndexesExceeded","PodFailurePolicy"])");
  EXPECT_EQ(Errors(Create(js)), Strings{"admitted"});
}

// Upstream's default feature gates: RestartJob and InPlaceRestart are off. With a
// RestartJob action the failure policy's other checks are skipped.
TEST(JobSetWebhookTest, AlphaActionsAndRestartStrategyAreRefused) {
  Object js = ParseYaml(kRestartAction).value();
  js["spec"]["failurePolicy"]["rules"][1]["action"] = "RestartJobAndIgnoreMaxRestarts";
  js["spec"]["failurePolicy"]["rules"][0]["name"] = "bad-name";
  js["spec"]["failurePolicy"]["restartStrategy"] = "InPlaceRestart";
  EXPECT_EQ(Errors(Create(js)),
            (Strings{
                "spec.failurePolicy.restartStrategy: Invalid value: \"InPlaceRestart\": InPlaceRestart restart "
                "strategy cannot be set when InPlaceRestart feature gate is disabled",
                "spec.failurePolicy.rules[1].action: Invalid value: \"RestartJobAndIgnoreMaxRestarts\": RestartJob "
                "and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed when RestartJob feature "
                "gate is disabled",
            }));
}

// The coordinator names an existing replicatedJob, a job index within its replicas and a
// pod index within its completions; only the first of these errors is reported.
TEST(JobSetWebhookTest, CoordinatorNamesAnExistingPod) {
  Object js = ParseYaml(kRestartAction).value();
  auto with = [&](const char* coordinator) {
    js["spec"]["coordinator"] = Object::parse(coordinator);
    return Errors(Create(js));
  };
  EXPECT_EQ(with(R"({"replicatedJob":"leader","jobIndex":0,"podIndex":1})"), Strings{"admitted"});
  EXPECT_EQ(with(R"({"replicatedJob":"ghost","jobIndex":5,"podIndex":9})"),
            Strings{"spec.coordinator.replicatedJob: Invalid value: \"ghost\": coordinator replicatedJob ghost does "
                    "not exist"});
  EXPECT_EQ(with(R"({"replicatedJob":"leader","jobIndex":1,"podIndex":9})"),
            Strings{"spec.coordinator.jobIndex: Invalid value: 1: coordinator job index 1 is invalid for "
                    "replicatedJob leader"});
  EXPECT_EQ(with(R"({"replicatedJob":"leader","jobIndex":-1})"),
            Strings{"spec.coordinator.jobIndex: Invalid value: -1: coordinator job index -1 is invalid for "
                    "replicatedJob leader"});
  EXPECT_EQ(with(R"({"replicatedJob":"leader","jobIndex":0,"podIndex":2})"),
            Strings{"spec.coordinator.podIndex: Invalid value: 2: coordinator pod index 2 is invalid for "
                    "replicatedJob leader job index 0"});
  // workers has no completions: its pods' indexes are unknown.
  EXPECT_EQ(with(R"({"replicatedJob":"workers"})"),
            Strings{"spec.coordinator.replicatedJob: Invalid value: \"workers\": job for coordinator pod must be "
                    "indexed completion mode, and completions number must be set"});

  // The endpoint "<jobset>-<rjob>-<job>-<pod>.<subdomain>" is a label value: at most 63.
  js["spec"]["network"]["subdomain"] = std::string(40, 's');
  const std::string endpoint = "restart-leader-0-0." + std::string(40, 's');  // 59
  EXPECT_EQ(with(R"({"replicatedJob":"leader"})"), Strings{"admitted"});
  EXPECT_EQ(JobSetCoordinatorEndpoint(js), endpoint);
  js["spec"]["network"]["subdomain"] = std::string(45, 's');
  const std::string too_long = "restart-leader-0-0." + std::string(45, 's');  // 64
  EXPECT_EQ(with(R"({"replicatedJob":"leader"})"),
            Strings{"spec.coordinator: Invalid value: \"" + too_long + "\": spec will lead to invalid label value \"" +
                    too_long + "\" for coordinator label \"jobset.sigs.k8s.io/coordinator\" (long JobSet / "
                               "ReplicatedJob / SubDomain name?): must be no more than 63 characters"});
}

// managedBy is a domain-prefixed path of at most 63 characters (apimachinery's
// IsDomainPrefixedPath and upstream's maxManagedByLength).
TEST(JobSetWebhookTest, ManagedByIsADomainPrefixedPath) {
  Object js = ParseYaml(kRestartAction).value();
  auto with = [&](const std::string& manager) {
    js["spec"]["managedBy"] = manager;
    return Errors(Create(js));
  };
  EXPECT_EQ(with("kueue.x-k8s.io/multikueue"), Strings{"admitted"});
  EXPECT_EQ(with("controller"), Strings{"spec.managedBy: Invalid value: \"controller\": must be a domain-prefixed "
                                        "path (such as \"acme.io/foo\")"});
  EXPECT_EQ(with("Acme.io/foo"), Strings{std::string("spec.managedBy: Invalid value: \"Acme.io\": ") +
                                         kDNS1123SubdomainFormat});
  EXPECT_EQ(with("acme.io/a b"), Strings{"spec.managedBy: Invalid value: \"a b\": Invalid path (regex used for "
                                         "validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')"});
  const std::string long_manager = "acme.io/" + std::string(56, 'x');  // 64
  EXPECT_EQ(with(long_manager), Strings{"spec.managedBy: Too long: may not be more than 63 bytes"});
}

// On update, only errors the stored object does not already have are reported: a JobSet
// stored before a check existed can still be suspended, relabelled or finalized.
TEST(JobSetWebhookTest, UpdatesAreRatchetedAgainstTheStoredObject) {
  Object stored = Create(ParseYaml(kRestartAction).value()).value().object;
  // Stored before the check: admission now refuses it.
  stored["spec"]["successPolicy"]["targetReplicatedJobs"] = Object::parse(R"(["nobody"])");
  EXPECT_EQ(Errors(Create(stored)).size(), 1u);
  Object updated = stored;
  updated["spec"]["suspend"] = true;
  updated["metadata"]["labels"]["team"] = "a";
  EXPECT_EQ(Errors(Update(updated, stored)), Strings{"admitted"});
  // The coordinator is mutable: a new one is checked.
  updated["spec"]["coordinator"] = Object::parse(R"({"replicatedJob":"leader","jobIndex":1})");
  EXPECT_EQ(Errors(Update(updated, stored)),
            Strings{"spec.coordinator.jobIndex: Invalid value: 1: coordinator job index 1 is invalid for "
                    "replicatedJob leader"});
}

// Upstream's ValidateUpdate and its CRD's transition rules: the policies, the network and
// the replicatedJobs do not change, except the pod template fields Kueue sets while the
// JobSet is or was suspended; the CEL errors come alone, as the API server checks them
// before calling the webhook.
TEST(JobSetWebhookTest, UpdatesKeepTheSpecExceptKueuesPodTemplateFields) {
  Object stored = Create(ParseYaml(kRestartAction).value()).value().object;
  stored["spec"]["suspend"] = true;
  Object updated = stored;
  Object& pod = updated["spec"]["replicatedJobs"][1]["template"]["spec"]["template"];
  pod["metadata"]["labels"]["kueue.x-k8s.io/podset"] = "workers";
  pod["spec"]["nodeSelector"] = Object::parse(R"({"pool":"a"})");
  pod["spec"]["tolerations"] = Object::parse(R"([{"key":"gpu","operator":"Exists"}])");
  updated["spec"]["suspend"] = false;  // admitted: resumed with Kueue's fields in one update
  EXPECT_EQ(Errors(Update(updated, stored)), Strings{"admitted"});
  Object running = updated;
  pod["spec"]["nodeSelector"]["pool"] = "b";
  EXPECT_EQ(Errors(Update(updated, running)), Strings{"spec.replicatedJobs: Invalid value: field is immutable"});

  updated = stored;
  updated["spec"]["replicatedJobs"][1]["replicas"] = 3;
  updated["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  EXPECT_EQ(Errors(Update(updated, stored)),
            (Strings{"spec.replicatedJobs: Invalid value: field is immutable",
                     "spec.managedBy: Invalid value: \"kueue.x-k8s.io/multikueue\": field is immutable"}));

  updated = stored;
  updated["spec"]["failurePolicy"]["maxRestarts"] = 5;
  updated["spec"]["network"]["subdomain"] = "other";
  updated["spec"]["successPolicy"]["operator"] = "Any";
  updated["spec"]["replicatedJobs"][1]["replicas"] = 3;
  EXPECT_EQ(Errors(Update(updated, stored)),
            (Strings{"spec.network: Invalid value: \"object\": Value is immutable",
                     "spec.successPolicy: Invalid value: \"object\": Value is immutable",
                     "spec.failurePolicy: Invalid value: \"object\": Value is immutable"}));
}

// The CRD's rule: startupPolicy InOrder and dependsOn do not go together.
TEST(JobSetWebhookTest, InOrderStartupAndDependsOnAreMutuallyExclusive) {
  Object js = ParseYaml(kRestartAction).value();
  js["spec"]["startupPolicy"] = Object::parse(R"({"startupPolicyOrder":"InOrder"})");
  js["spec"]["replicatedJobs"][1]["dependsOn"] = Object::parse(R"([{"name":"leader","status":"Ready"}])");
  js["spec"]["successPolicy"] = Object::parse(R"({"operator":"All","targetReplicatedJobs":["nobody"]})");
  EXPECT_EQ(Errors(Create(js)),
            Strings{"spec: Invalid value: \"object\": StartupPolicy and DependsOn APIs are mutually exclusive"});
  js["spec"]["startupPolicy"]["startupPolicyOrder"] = "AnyOrder";
  js["spec"]["successPolicy"]["targetReplicatedJobs"][0] = "leader";
  EXPECT_EQ(Errors(Create(js)), Strings{"admitted"});
}

}  // namespace
}  // namespace berth::api
