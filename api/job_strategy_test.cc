// batch/v1 Job create and update through the real admission pipeline: SetDefaults_Job, the
// generated selector and controller-uid labels of Kubernetes 1.32, the error for a
// user selector without manualSelector, the fields an update may not change
// (ValidateJobSpecUpdate) and the suspend Kueue's managed Jobs get when their pod count
// changes while running.
#include "api/job_strategy.h"

#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/testing/admission.h"
#include "api/registry.h"
#include "api/yaml_codec.h"

namespace berth::api {
namespace {

constexpr char kJob[] = R"(apiVersion: batch/v1
kind: Job
metadata: {name: pi, namespace: team-a}
spec:
  template:
    metadata: {labels: {app: pi}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
)";

StatusOr<AdmittedWrite> CreateObject(Object obj) { return testing::AdmitCreate(std::move(obj)); }

StatusOr<AdmittedWrite> Create(const std::string& yaml) {
  auto obj = ParseYaml(yaml);
  if (!obj.ok()) return obj.status();
  return CreateObject(std::move(*obj));
}

TEST(JobStrategyTest, CreateGeneratesSelectorLabelsAndDefaults) {
  auto w = Create(kJob);
  ASSERT_TRUE(w.ok()) << w.status();
  const Object& job = w->object;
  const std::string uid = job["metadata"]["uid"].get<std::string>();
  ASSERT_FALSE(uid.empty());
  EXPECT_EQ(job["spec"]["selector"], Object({{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}}));
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"], Object({{"app", "pi"},
                                                                   {"batch.kubernetes.io/controller-uid", uid},
                                                                   {"batch.kubernetes.io/job-name", "pi"},
                                                                   {"controller-uid", uid},
                                                                   {"job-name", "pi"}}));
  // SetDefaults_Job: the Job's labels from the template's (before the generated ones).
  EXPECT_EQ(job["metadata"]["labels"], Object({{"app", "pi"}}));
  const Object& spec = job["spec"];
  EXPECT_EQ(spec["completions"], 1);
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["completionMode"], "NonIndexed");
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["manualSelector"], false);
  EXPECT_EQ(spec["podReplacementPolicy"], "TerminatingOrFailed");
}

TEST(JobStrategyTest, DefaultsKeepWhatIsSet) {
  Object job = ParseYaml(kJob).value();
  job["spec"]["parallelism"] = 3;
  job["spec"]["backoffLimitPerIndex"] = 1;
  job["spec"]["completionMode"] = "Indexed";
  job["spec"]["completions"] = 4;
  job["spec"]["podFailurePolicy"] =
      Object::parse(R"({"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]})");
  SetJobDefaults(&job);
  EXPECT_EQ(job["spec"]["parallelism"], 3);
  EXPECT_EQ(job["spec"]["completions"], 4);
  EXPECT_EQ(job["spec"]["backoffLimit"], 2147483647);
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["podReplacementPolicy"], "Failed");
  EXPECT_EQ(job["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"], "True");

  // parallelism alone: completions stays unset.
  Object only_parallelism = ParseYaml(kJob).value();
  only_parallelism["spec"]["parallelism"] = 2;
  SetJobDefaults(&only_parallelism);
  EXPECT_FALSE(only_parallelism["spec"].contains("completions"));
}

TEST(JobStrategyTest, UserSelectorWithoutManualSelectorIsRejected) {
  Object job = ParseYaml(kJob).value();
  job["spec"]["selector"] = Object({{"matchLabels", {{"app", "pi"}}}});
  // The selector error names the uid: admit the strategy's steps directly.
  job["metadata"]["uid"] = "0b1c";
  SetJobDefaults(&job);
  GenerateJobSelector(&job);
  FieldErrorList errs = ValidateJobSelector(job, true);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].Error(),
            "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"pi\", "
            "\"batch.kubernetes.io/controller-uid\":\"0b1c\"}, "
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated");

  // Through the pipeline: 422 with that cause.
  Object body = ParseYaml(kJob).value();
  body["spec"]["selector"] = Object({{"matchLabels", {{"app", "pi"}}}});
  auto w = Create(body.dump());
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Code::kInvalid);
  EXPECT_NE(w.status().message().find("spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"
                                      "\"app\":\"pi\", \"batch.kubernetes.io/controller-uid\":\""),
            std::string::npos)
      << w.status().message();
  EXPECT_NE(w.status().message().find("`selector` not auto-generated"), std::string::npos);
}

// validateJobSpec's counts: a negative ttlSecondsAfterFinished made the TTL controller
// delete the Job the moment it finished; a negative parallelism or completions, a
// negative backoffLimit or deadline, likewise reach the controllers.
TEST(JobStrategyTest, NegativeCountsAreRefusedFieldByField) {
  for (const char* field : {"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                            "ttlSecondsAfterFinished", "backoffLimitPerIndex"}) {
    Object job = ParseYaml(kJob).value();
    job["spec"][field] = -1;
    if (std::string(field) == "backoffLimitPerIndex") {
      job["spec"]["completionMode"] = "Indexed";
      job["spec"]["completions"] = 2;
    }
    auto w = Create(job.dump());
    ASSERT_FALSE(w.ok()) << field;
    EXPECT_EQ(w.status().code(), Code::kInvalid) << field;
    EXPECT_NE(w.status().message().find("spec." + std::string(field) +
                                        ": Invalid value: -1: must be greater than or equal to 0"),
              std::string::npos)
        << w.status().message();
  }
  Object zero = ParseYaml(kJob).value();
  zero["spec"]["ttlSecondsAfterFinished"] = 0;
  zero["spec"]["parallelism"] = 0;
  EXPECT_TRUE(Create(zero.dump()).ok());
}

TEST(JobStrategyTest, IndexedJobsNeedCompletionsAndBoundedParallelism) {
  Object job = ParseYaml(kJob).value();
  job["spec"]["completionMode"] = "Indexed";
  job["spec"]["parallelism"] = 100001;
  auto w = Create(job.dump());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("spec.completions: Required value: when completion mode is Indexed"),
            std::string::npos)
      << w.status().message();
  EXPECT_NE(w.status().message().find(
                "spec.parallelism: Invalid value: 100001: must be less than or equal to 100000 when completion "
                "mode is Indexed"),
            std::string::npos)
      << w.status().message();
  Object per_index = ParseYaml(kJob).value();
  per_index["spec"]["maxFailedIndexes"] = 1;
  w = Create(per_index.dump());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"),
            std::string::npos)
      << w.status().message();
}

// ValidateJobSpec (pkg/apis/batch/validation/validation.go): a Job's pods restart
// OnFailure or Never; an absent policy reads as SetDefaults_PodSpec's Always.
TEST(JobStrategyTest, RestartPolicyMustBeOnFailureOrNever) {
  const std::string path = "spec.template.spec.restartPolicy: ";
  const std::string required = path + R"(Required value: valid values: "OnFailure", "Never")";
  struct Case {
    Object policy;
    bool pod_failure_policy;
    std::string want;  // the whole error list, "" when accepted
  };
  const std::vector<Case> cases = {
      {Object(), false, required},
      {"Always", false, required},
      // ValidatePodSpec's validateRestartPolicy (the schema's enum) refuses it too, as upstream.
      {"Sometimes", false,
       "[" + path + R"(Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never", )" + path +
           R"(Unsupported value: "Sometimes": supported values: "OnFailure", "Never"])"},
      {"OnFailure", true,
       path + R"(Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified)"},
      {"OnFailure", false, ""},
      {"Never", true, ""},
  };
  for (const Case& c : cases) {
    Object job = ParseYaml(kJob).value();
    Object& pod_spec = job["spec"]["template"]["spec"];
    if (c.policy.is_null()) {
      pod_spec.erase("restartPolicy");
    } else {
      pod_spec["restartPolicy"] = c.policy;
    }
    if (c.pod_failure_policy) {
      job["spec"]["podFailurePolicy"] =
          ParseYaml("rules: [{action: FailJob, onExitCodes: {operator: In, values: [42]}}]").value();
    }
    auto w = Create(job.dump());
    if (c.want.empty()) {
      EXPECT_TRUE(w.ok()) << c.policy << ": " << w.status().message();
      continue;
    }
    ASSERT_FALSE(w.ok()) << c.policy;
    EXPECT_EQ(w.status().code(), Code::kInvalid);
    EXPECT_EQ(w.status().message(), "Job.batch \"pi\" is invalid: " + c.want);
    ASSERT_FALSE(w.status().causes().empty());
    EXPECT_EQ(w.status().causes().back().field, "spec.template.spec.restartPolicy");
  }
}

// Every integer field of a built-in kind refuses a JSON number with a fraction or
// exponent, as Go's json decoding into int32 does; the error names the field. (A YAML
// body's 1e3 is the integer 1000, as sigs.k8s.io/yaml converts it: api/yaml_codec.h.)
TEST(JobStrategyTest, IntegerFieldsRefuseNonIntegerNumbers) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"completions":1e3})", "spec.completions"},
      {R"({"parallelism":1.5})", "spec.parallelism"},
      {R"({"backoffLimit":2.0})", "spec.backoffLimit"},
      {R"({"template":{"spec":{"containers":[{"name":"c","image":"x","ports":[{"containerPort":80.5}]}]}}})",
       "spec.template.spec.containers[0].ports[0].containerPort"},
  };
  for (const auto& [patch, field] : cases) {
    Object job = ParseYaml(kJob).value();
    job["spec"].merge_patch(Object::parse(patch));
    auto w = CreateObject(job);
    ASSERT_FALSE(w.ok()) << patch;
    EXPECT_EQ(w.status().code(), Code::kInvalid);
    EXPECT_NE(w.status().message().find(field + R"(: Invalid value: "number": )" + field +
                                        R"( in body must be of type integer: "number")"),
              std::string::npos)
        << w.status().message();
  }
}

TEST(JobStrategyTest, ManualSelectorIsKeptAndMustMatchTheTemplate) {
  Object body = ParseYaml(kJob).value();
  body["spec"]["manualSelector"] = true;
  body["spec"]["selector"] = Object({{"matchLabels", {{"app", "pi"}}}});
  auto w = Create(body.dump());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->object["spec"]["selector"], Object({{"matchLabels", {{"app", "pi"}}}}));
  EXPECT_EQ(w->object["spec"]["template"]["metadata"]["labels"], Object({{"app", "pi"}}));

  body["spec"]["selector"] = Object({{"matchLabels", {{"app", "other"}}}});
  auto bad = Create(body.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(
      bad.status().message().find("spec.template.metadata.labels: Invalid value: "
                                  "map[string]string{\"app\":\"pi\"}: `selector` does not match template `labels`"),
      std::string::npos)
      << bad.status().message();
}

TEST(JobStrategyTest, WrongControllerUidLabelIsRejected) {
  Object job = ParseYaml(kJob).value();
  job["metadata"]["uid"] = "u1";
  job["spec"]["template"]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] = "u2";
  SetJobDefaults(&job);
  GenerateJobSelector(&job);
  FieldErrorList errs = ValidateJobSelector(job, true);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs[0].field, "spec.template.metadata.labels[batch.kubernetes.io/controller-uid]");
  EXPECT_EQ(errs[0].Body().substr(0, 33), "Invalid value: map[string]string{");
  EXPECT_EQ(errs[1].field, "spec.template.metadata.labels");
}

TEST(JobStrategyTest, QueuedJobIsSuspendedByKueuesWebhook) {
  Object body = ParseYaml(kJob).value();
  body["metadata"]["labels"] = Object({{"kueue.x-k8s.io/queue-name", "lq"}});
  auto w = Create(body.dump());
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->object["spec"]["suspend"], true);
  EXPECT_TRUE(w->object["spec"]["selector"]["matchLabels"].contains("batch.kubernetes.io/controller-uid"));
}

// The stored Job (create), then running: `suspend` as given, status.startTime when started.
Object Stored(const std::string& yaml, bool suspend, bool started) {
  auto w = Create(yaml);
  EXPECT_TRUE(w.ok()) << w.status();
  Object job = w.ok() ? w->object : Object::object();
  job["spec"]["suspend"] = suspend;
  if (started) job["status"]["startTime"] = "2025-01-01T00:00:00Z";
  return job;
}

StatusOr<AdmittedWrite> Update(const Object& stored, const Object& body) { return testing::AdmitUpdate(stored, body); }

// The causes of a refused update, as "field: message".
std::vector<std::string> Causes(const StatusOr<AdmittedWrite>& w) { return testing::CauseStrings(w); }

using Strings = std::vector<std::string>;

TEST(JobUpdateTest, ImmutableFieldsOfARunningJobAreRefusedWithKubernetesMessages) {
  const Object running = Stored(kJob, /*suspend=*/false, /*started=*/true);

  Object completions = running;
  completions["spec"]["completions"] = 4;
  auto w = Update(running, completions);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), Code::kInvalid);
  EXPECT_EQ(w.status().message(),
            "Job.batch \"pi\" is invalid: spec.completions: Invalid value: 4: field is immutable");
  EXPECT_EQ(Causes(w), Strings{"spec.completions: Invalid value: 4: field is immutable"});

  Object image = running;
  image["spec"]["template"]["spec"]["containers"][0]["image"] = "python";
  EXPECT_EQ(Causes(Update(running, image)), Strings{"spec.template: Invalid value: field is immutable"});

  Object requests = running;
  requests["spec"]["template"]["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "2"}}}};
  EXPECT_EQ(Causes(Update(running, requests)), Strings{"spec.template: Invalid value: field is immutable"});

  // A running Job's scheduling directives are part of the template too.
  Object node_selector = running;
  node_selector["spec"]["template"]["spec"]["nodeSelector"] = {{"gpu", "a100"}};
  EXPECT_EQ(Causes(Update(running, node_selector)), Strings{"spec.template: Invalid value: field is immutable"});

  Object mode = running;
  mode["spec"]["completionMode"] = "Indexed";
  EXPECT_EQ(Causes(Update(running, mode)),
            Strings{"spec.completionMode: Invalid value: \"Indexed\": field is immutable"});

  Object policy = running;
  policy["spec"]["podFailurePolicy"] =
      Object::parse(R"({"rules":[{"action":"FailJob","onExitCodes":{"operator":"In","values":[42]}}]})");
  // ValidateJob's errors of the new Job come first, as the registry's ValidateUpdate appends
  // ValidateJobUpdate's after them (api/job_policy_validation.h).
  EXPECT_EQ(
      Causes(Update(running, policy)),
      (Strings{R"(spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed")",
               "spec.podFailurePolicy: Invalid value: field is immutable"}));

  Object per_index = running;
  per_index["spec"]["backoffLimitPerIndex"] = 2;
  EXPECT_EQ(Causes(Update(running, per_index)),
            (Strings{"spec.backoffLimitPerIndex: Invalid value: 2: requires indexed completion mode",
                     "spec.backoffLimitPerIndex: Invalid value: 2: field is immutable"}));

  Object managed_by = running;
  managed_by["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  EXPECT_EQ(Causes(Update(running, managed_by)),
            Strings{"spec.managedBy: Invalid value: \"kueue.x-k8s.io/multikueue\": field is immutable"});

  Object success = running;
  success["spec"]["successPolicy"] = Object::parse(R"({"rules":[{"succeededCount":1}]})");
  EXPECT_EQ(Causes(Update(running, success)),
            (Strings{"spec.successPolicy: Invalid value: requires indexed completion mode",
                     "spec.successPolicy: Invalid value: field is immutable"}));

  const std::string uid = running["metadata"]["uid"].get<std::string>();
  Object selector = running;
  selector["spec"]["selector"]["matchLabels"]["app"] = "pi";
  EXPECT_EQ(Causes(Update(running, selector)),
            Strings{"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"pi\", "
                    "\"batch.kubernetes.io/controller-uid\":\"" +
                    uid + "\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"});

  // Several at once: one 422 listing each, in upstream's order.
  Object several = running;
  several["spec"]["completions"] = 2;
  several["spec"]["completionMode"] = "Indexed";
  several["spec"]["template"]["spec"]["containers"][0]["image"] = "python";
  EXPECT_EQ(Causes(Update(running, several)),
            (Strings{"spec.completions: Invalid value: 2: can only be modified in tandem with spec.parallelism",
                     "spec.template: Invalid value: field is immutable",
                     "spec.completionMode: Invalid value: \"Indexed\": field is immutable"}));
}

TEST(JobUpdateTest, ParallelismSuspendAndDeadlinesStayMutable) {
  const Object running = Stored(kJob, false, true);
  Object body = running;
  body["spec"]["parallelism"] = 3;
  body["spec"]["suspend"] = true;
  body["spec"]["activeDeadlineSeconds"] = 600;
  body["spec"]["backoffLimit"] = 2;
  body["spec"]["ttlSecondsAfterFinished"] = 60;
  body["metadata"]["labels"]["team"] = "a";
  auto w = Update(running, body);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->object["spec"]["parallelism"], 3);
  EXPECT_EQ(w->object["spec"]["suspend"], true);
  EXPECT_EQ(w->object["spec"]["activeDeadlineSeconds"], 600);
}

TEST(JobUpdateTest, SchedulingDirectivesOfASuspendedNeverStartedJobAreMutable) {
  const Object suspended = Stored(kJob, /*suspend=*/true, /*started=*/false);
  Object body = suspended;
  Object& spec = body["spec"]["template"]["spec"];
  spec["nodeSelector"] = {{"cloud.google.com/gke-accelerator", "a100"}};
  spec["tolerations"] = Object::parse(R"([{"key":"gpu","operator":"Exists","effect":"NoSchedule"}])");
  spec["schedulingGates"] = Object::parse(R"([{"name":"example.com/gate"}])");
  spec["affinity"] = Object::parse(
      R"({"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
           {"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]}}})");
  body["spec"]["template"]["metadata"]["labels"]["kueue.x-k8s.io/podset"] = "main";
  body["spec"]["template"]["metadata"]["annotations"] = {{"note", "x"}};
  auto w = Update(suspended, body);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->object["spec"]["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-accelerator"], "a100");

  // ...and cleared again (affinity that held nodeAffinity only).
  auto cleared = Update(w->object, suspended);
  ASSERT_TRUE(cleared.ok()) << cleared.status();

  // Anything else in the template stays immutable while suspended.
  Object requests = suspended;
  requests["spec"]["template"]["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "2"}}}};
  EXPECT_EQ(Causes(Update(suspended, requests)), Strings{"spec.template: Invalid value: field is immutable"});
  // A podAffinity is not a node scheduling directive.
  Object pod_affinity = suspended;
  pod_affinity["spec"]["template"]["spec"]["affinity"] = Object::parse(
      R"({"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"zone","labelSelector":{}}]}})");
  EXPECT_EQ(Causes(Update(suspended, pod_affinity)), Strings{"spec.template: Invalid value: field is immutable"});

  // Suspended after it started (status.startTime): the directives are immutable.
  const Object stopped = Stored(kJob, true, /*started=*/true);
  Object selector = stopped;
  selector["spec"]["template"]["spec"]["nodeSelector"] = {{"gpu", "a100"}};
  EXPECT_EQ(Causes(Update(stopped, selector)), Strings{"spec.template: Invalid value: field is immutable"});
  // Not suspended before the update (even when the update suspends it): immutable.
  const Object never_started_running = Stored(kJob, false, false);
  Object suspend_and_move = never_started_running;
  suspend_and_move["spec"]["suspend"] = true;
  suspend_and_move["spec"]["template"]["spec"]["nodeSelector"] = {{"gpu", "a100"}};
  EXPECT_EQ(Causes(Update(never_started_running, suspend_and_move)),
            Strings{"spec.template: Invalid value: field is immutable"});
}

TEST(JobUpdateTest, ElasticIndexedJobChangesCompletionsWithParallelism) {
  Object indexed = ParseYaml(kJob).value();
  indexed["spec"]["completionMode"] = "Indexed";
  indexed["spec"]["completions"] = 2;
  indexed["spec"]["parallelism"] = 2;
  const Object running = Stored(indexed.dump(), false, true);

  Object scaled = running;
  scaled["spec"]["completions"] = 4;
  scaled["spec"]["parallelism"] = 4;
  auto w = Update(running, scaled);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->object["spec"]["completions"], 4);

  Object completions_only = running;
  completions_only["spec"]["completions"] = 4;
  EXPECT_EQ(Causes(Update(running, completions_only)),
            Strings{"spec.completions: Invalid value: 4: can only be modified in tandem with spec.parallelism"});

  // A NonIndexed Job cannot, even in tandem.
  const Object non_indexed = Stored(kJob, false, true);
  Object tandem = non_indexed;
  tandem["spec"]["completions"] = 4;
  tandem["spec"]["parallelism"] = 4;
  EXPECT_EQ(Causes(Update(non_indexed, tandem)), Strings{"spec.completions: Invalid value: 4: field is immutable"});
}

// Kueue's ValidateUpdateForQueueName: removing the label of a running Job took it out of
// Kueue's hands with its pods running (a parallelism change then ran unaccounted pods).
TEST(JobUpdateTest, QueueNameOfARunningJobIsImmutable) {
  Object queued = ParseYaml(kJob).value();
  queued["metadata"]["labels"] = Object({{"kueue.x-k8s.io/queue-name", "lq"}});
  const Object running = Stored(queued.dump(), /*suspend=*/false, /*started=*/true);
  Object removed = running;
  removed["metadata"]["labels"].erase("kueue.x-k8s.io/queue-name");
  EXPECT_EQ(Causes(Update(running, removed)),
            Strings{"metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"\": field is immutable"});
  Object moved = running;
  moved["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "other";
  EXPECT_EQ(Causes(Update(running, moved)),
            Strings{"metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"other\": field is immutable"});
  // A running Job that was never Kueue's cannot be handed to it either.
  const Object plain = Stored(kJob, false, true);
  Object added = plain;
  added["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "lq";
  EXPECT_EQ(Causes(Update(plain, added)),
            Strings{"metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"lq\": field is immutable"});
  // Suspended (as Kueue keeps a queued Job), or suspended in the same write: it may move.
  const Object pending = Stored(queued.dump(), true, false);
  Object pending_moved = pending;
  pending_moved["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "other";
  EXPECT_TRUE(Update(pending, pending_moved).ok());
  Object suspend_and_move = moved;
  suspend_and_move["spec"]["suspend"] = true;
  EXPECT_TRUE(Update(running, suspend_and_move).ok());
}

TEST(JobUpdateTest, RunningKueueJobWhosePodCountChangesIsStoredSuspended) {
  Object queued = ParseYaml(kJob).value();
  queued["metadata"]["labels"] = Object({{"kueue.x-k8s.io/queue-name", "lq"}});
  queued["spec"]["completions"] = 8;
  queued["spec"]["parallelism"] = 1;
  const Object running = Stored(queued.dump(), /*suspend=*/false, /*started=*/true);

  Object wider = running;
  wider["spec"]["parallelism"] = 8;
  auto w = Update(running, wider);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->object["spec"]["parallelism"], 8);
  EXPECT_EQ(w->object["spec"]["suspend"], true);

  // Other changes leave it running.
  Object deadline = running;
  deadline["spec"]["activeDeadlineSeconds"] = 60;
  auto kept = Update(running, deadline);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->object["spec"]["suspend"], false);

  // So does a parallelism change that keeps the pod count (completions 1 caps it at 1).
  queued["spec"]["completions"] = 1;
  const Object single = Stored(queued.dump(), false, true);
  Object single_wider = single;
  single_wider["spec"]["parallelism"] = 8;
  auto capped = Update(single, single_wider);
  ASSERT_TRUE(capped.ok()) << capped.status();
  EXPECT_EQ(capped->object["spec"]["suspend"], false);

  // A suspended Kueue Job may change its parallelism and stays as the user wrote it.
  const Object pending = Stored(queued.dump(), true, false);
  Object pending_wider = pending;
  pending_wider["spec"]["parallelism"] = 8;
  auto p = Update(pending, pending_wider);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->object["spec"]["suspend"], true);

  // A Job Kueue does not manage runs with its new parallelism (completions unset: the
  // count is parallelism).
  Object work_queue = ParseYaml(kJob).value();
  work_queue["spec"]["parallelism"] = 2;
  const Object plain = Stored(work_queue.dump(), false, true);
  ASSERT_FALSE(plain["spec"].contains("completions"));
  Object plain_wider = plain;
  plain_wider["spec"]["parallelism"] = 8;
  auto v = Update(plain, plain_wider);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->object["spec"]["suspend"], false);

  // The same work queue Job, managed by Kueue, is suspended.
  work_queue["metadata"]["labels"] = Object({{"kueue.x-k8s.io/queue-name", "lq"}});
  const Object managed = Stored(work_queue.dump(), false, true);
  Object managed_wider = managed;
  managed_wider["spec"]["parallelism"] = 8;
  auto m = Update(managed, managed_wider);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->object["spec"]["suspend"], true);
}

}  // namespace
}  // namespace berth::api
