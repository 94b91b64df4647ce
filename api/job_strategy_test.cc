// batch/v1 Job create through the real admission pipeline: SetDefaults_Job, the
// generated selector and controller-uid labels of Kubernetes 1.32, and the error for a
// user selector without manualSelector.
#include "api/job_strategy.h"

#include <gtest/gtest.h>

#include <string>

#include "api/admission_pipeline.h"
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

StatusOr<AdmittedWrite> Create(const std::string& yaml) {
  auto obj = ParseYaml(yaml);
  if (!obj.ok()) return obj.status();
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest req;
  req.operation = Operation::kCreate;
  req.object = std::move(*obj);
  return pipeline.Admit(std::move(req));
}

TEST(JobStrategyTest, CreateGeneratesSelectorLabelsAndDefaults) {
  auto w = Create(kJob);
  ASSERT_TRUE(w.ok()) << w.status();
  const Object& job = w->object;
  const std::string uid = job["metadata"]["uid"].get<std::string>();
  ASSERT_FALSE(uid.empty());
  EXPECT_EQ(job["spec"]["selector"], Object({{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}}));
  EXPECT_EQ(job["spec"]["template"]["metadata"]["labels"],
            Object({{"app", "pi"},
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
  job["spec"]["podFailurePolicy"] = Object::parse(
      R"({"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]})");
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
  EXPECT_NE(bad.status().message().find("spec.template.metadata.labels: Invalid value: "
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

}  // namespace
}  // namespace berth::api
