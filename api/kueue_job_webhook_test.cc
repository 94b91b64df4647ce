// Kueue's create-time job webhook through the real admission pipeline: every
// integrated kind with the queue-name label is stored suspended.
#include "api/kueue_job_webhook.h"
#include "api/unstructured.h"

#include <gtest/gtest.h>

#include "api/admission_pipeline.h"
#include "api/registry.h"
#include "api/yaml_codec.h"

namespace berth::api {
namespace {

struct Kind {
  const char* name;
  const char* manifest;  // with QUEUE_LABELS and OWNER placeholders
  std::vector<std::string> suspend_path;
};

const Kind kKinds[] = {
    {"Job", R"(apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: team-a, labels: {LABELS}, ownerReferences: [OWNER]}
spec:
  suspend: false
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
)",
     {"spec", "suspend"}},
    {"JobSet", R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: team-a, labels: {LABELS}, ownerReferences: [OWNER]}
spec:
  replicatedJobs:
  - name: node
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers: [{name: c, image: busybox}]
)",
     {"spec", "suspend"}},
    {"PyTorchJob", R"(apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pj, namespace: team-a, labels: {LABELS}, ownerReferences: [OWNER]}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{name: pytorch, image: busybox}]
)",
     {"spec", "runPolicy", "suspend"}},
    {"TrainJob", R"(apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: team-a, labels: {LABELS}, ownerReferences: [OWNER]}
spec:
  suspend: false
  runtimeRef: {name: torch-distributed}
)",
     {"spec", "suspend"}},
};

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  if (auto pos = s.find(from); pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

// The stored suspend value of `kind` created with these labels/owner (nullopt: unset),
// through the strategies of `strategies` (default: berth without --config).
std::optional<bool> StoredSuspend(const Kind& kind, const std::string& labels, const std::string& owner,
                                  const StrategyRegistry& strategies = StrategyRegistry::Default(),
                                  const std::string& ns = "team-a") {
  std::string yaml = Replace(Replace(Replace(kind.manifest, "LABELS", labels), "OWNER", owner), "team-a", ns);
  auto obj = ParseYaml(yaml);
  EXPECT_TRUE(obj.ok()) << obj.status().ToString();
  AdmissionPipeline pipeline(Registry::Default(), strategies);
  WriteRequest req;
  req.object = obj.value();
  auto admitted = pipeline.Admit(std::move(req));
  EXPECT_TRUE(admitted.ok()) << kind.name << ": " << admitted.status().ToString();
  if (!admitted.ok()) return std::nullopt;
  const Object* at = &admitted.value().object;
  for (const std::string& key : kind.suspend_path) {
    if (!at->is_object() || !at->contains(key)) return std::nullopt;
    at = &(*at)[key];
  }
  return at->is_boolean() ? std::optional<bool>(at->get<bool>()) : std::nullopt;
}

constexpr char kQueued[] = "kueue.x-k8s.io/queue-name: lq";
constexpr char kOwner[] =
    "{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, name: tj, uid: u1, controller: true}";

TEST(KueueJobWebhookTest, AQueuedJobOfEveryKindIsStoredSuspended) {
  for (const Kind& kind : kKinds) {
    EXPECT_EQ(StoredSuspend(kind, kQueued, ""), true) << kind.name;
  }
}

TEST(KueueJobWebhookTest, JobsWithoutTheLabelOrWithAControllerOwnerAreLeftAlone) {
  for (const Kind& kind : kKinds) {
    EXPECT_NE(StoredSuspend(kind, "app: x", ""), true) << kind.name << " without the label";
    EXPECT_NE(StoredSuspend(kind, kQueued, kOwner), true) << kind.name << " owned by a controller";
  }
}

StrategyRegistry Strategies(const KueueJobWebhookOptions& kueue) {
  StrategyRegistry r;
  InstallDefaultStrategies(&r, kueue);
  return r;
}

// integrations.frameworks: Kueue registers only the enabled frameworks' webhooks.
// A labelled job of another kind is left to run: stored with suspend false (not
// absent, which berth's job controllers would read as suspended on a labelled job).
TEST(KueueJobWebhookTest, OnlyTheConfiguredFrameworksAreSuspended) {
  const StrategyRegistry only_jobs = Strategies({.frameworks = {"batch/job"}});
  const StrategyRegistry none = Strategies({.frameworks = {}});
  for (const Kind& kind : kKinds) {
    const bool is_job = std::string(kind.name) == "Job";
    EXPECT_EQ(StoredSuspend(kind, kQueued, "", only_jobs), is_job) << kind.name;
    EXPECT_EQ(StoredSuspend(kind, kQueued, "", none), false) << kind.name;
    // An owned job is not touched, managed kind or not (its owner decides).
    EXPECT_NE(StoredSuspend(kind, kQueued, kOwner, none), true) << kind.name;
  }
}

// manageJobsWithoutQueueName: Kueue's webhook suspends an unlabelled job at create
// too (so no pod starts before the reconciler sees it), except in kube-system and
// kueue-system and for a job owned by a controller.
TEST(KueueJobWebhookTest, ManageJobsWithoutQueueNameSuspendsUnlabelledJobs) {
  const StrategyRegistry manage = Strategies({.manage_jobs_without_queue_name = true});
  const StrategyRegistry manage_pytorch_only =
      Strategies({.frameworks = {"kubeflow.org/pytorchjob"}, .manage_jobs_without_queue_name = true});
  for (const Kind& kind : kKinds) {
    EXPECT_EQ(StoredSuspend(kind, "app: x", "", manage), true) << kind.name;
    EXPECT_NE(StoredSuspend(kind, "app: x", "", manage, "kube-system"), true) << kind.name;
    EXPECT_NE(StoredSuspend(kind, "app: x", "", manage, "kueue-system"), true) << kind.name;
    EXPECT_NE(StoredSuspend(kind, "app: x", kOwner, manage), true) << kind.name;
    EXPECT_EQ(StoredSuspend(kind, "app: x", "", manage_pytorch_only) == true,
              std::string(kind.name) == "PyTorchJob")
        << kind.name;
  }
}

TEST(KueueJobWebhookTest, DefaultReportsWhetherItChangedTheObject) {
  const KueueJobWebhook webhook;
  Object job = {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", "lq"}}}}}, {"spec", Object::object()}};
  EXPECT_TRUE(webhook.Default(&job, kPyTorchJobFramework, {"spec", "runPolicy", "suspend"}));
  EXPECT_EQ(job["spec"]["runPolicy"]["suspend"], true);
  EXPECT_FALSE(webhook.Default(&job, kPyTorchJobFramework, {"spec", "runPolicy", "suspend"}));
  Object empty_queue = {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", ""}}}}}};
  EXPECT_FALSE(webhook.Default(&empty_queue, kBatchJobFramework, {"spec", "suspend"}));
  // Not a configured framework: an explicit value is kept, an absent one becomes false.
  const KueueJobWebhook jobs_only({.frameworks = {"batch/job"}});
  Object set = {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", "lq"}}}}}, {"spec", {{"suspend", true}}}};
  EXPECT_FALSE(jobs_only.Default(&set, kJobSetFramework, {"spec", "suspend"}));
  EXPECT_EQ(set["spec"]["suspend"], true);
  Object unset = {{"metadata", {{"labels", {{"kueue.x-k8s.io/queue-name", "lq"}}}}}};
  EXPECT_TRUE(jobs_only.Default(&unset, kJobSetFramework, {"spec", "suspend"}));
  EXPECT_EQ(unset["spec"]["suspend"], false);
}

// Kueue's validateCreateForMaxExecTime through the admission pipeline, for every kind and
// whether or not the job is queued: a Go int > 0, else 422 naming the label.
StatusOr<AdmittedWrite> CreateWithLabels(const Kind& kind, const std::string& labels,
                                         const StrategyRegistry& strategies = StrategyRegistry::Default()) {
  auto obj = ParseYaml(Replace(Replace(kind.manifest, "LABELS", labels), ", ownerReferences: [OWNER]", ""));
  EXPECT_TRUE(obj.ok()) << obj.status().ToString();
  AdmissionPipeline pipeline(Registry::Default(), strategies);
  WriteRequest req;
  req.object = obj.value();
  return pipeline.Admit(std::move(req));
}

std::vector<std::string> Causes(const StatusOr<AdmittedWrite>& w) {
  std::vector<std::string> out;
  if (w.ok()) return out;
  for (const StatusCause& c : w.status().causes()) out.push_back(c.field + ": " + c.message);
  return out;
}

using Strings = std::vector<std::string>;
constexpr char kMaxLabel[] = "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]";

TEST(KueueJobWebhookTest, MaxExecTimeLabelMustBeAPositiveInteger) {
  for (const Kind& kind : kKinds) {
    for (const char* queue : {"kueue.x-k8s.io/queue-name: lq, ", ""}) {
      const std::string q = queue;
      auto bad = CreateWithLabels(kind, q + "kueue.x-k8s.io/max-exec-time-seconds: abc");
      ASSERT_FALSE(bad.ok()) << kind.name;
      EXPECT_EQ(bad.status().code(), Code::kInvalid) << kind.name;
      EXPECT_EQ(Causes(bad), Strings{std::string(kMaxLabel) +
                                     ": Invalid value: \"abc\": strconv.Atoi: parsing \"abc\": invalid syntax"})
          << kind.name;
      EXPECT_NE(bad.status().message().find(kMaxLabel), std::string::npos) << bad.status().message();
      EXPECT_EQ(Causes(CreateWithLabels(kind, q + "kueue.x-k8s.io/max-exec-time-seconds: \"0\"")),
                Strings{std::string(kMaxLabel) + ": Invalid value: 0: should be greater than 0"})
          << kind.name;
      EXPECT_EQ(Causes(CreateWithLabels(kind, q + "kueue.x-k8s.io/max-exec-time-seconds: \"007\"")), Strings{})
          << kind.name;  // Atoi reads 7
      EXPECT_EQ(Causes(CreateWithLabels(kind, q + "kueue.x-k8s.io/max-exec-time-seconds: \"99999999999999999999\"")),
                Strings{std::string(kMaxLabel) +
                        ": Invalid value: \"99999999999999999999\": strconv.Atoi: parsing \"99999999999999999999\": "
                        "value out of range"})
          << kind.name;
      EXPECT_TRUE(CreateWithLabels(kind, q + "kueue.x-k8s.io/max-exec-time-seconds: \"30\"").ok()) << kind.name;
      // A Go int beyond int32 is valid here; the Workload then has no maximum (below).
      EXPECT_TRUE(CreateWithLabels(kind, q + "kueue.x-k8s.io/max-exec-time-seconds: \"9999999999\"").ok()) << kind.name;
    }
    // A framework that is not enabled has no Kueue webhook.
    EXPECT_TRUE(
        CreateWithLabels(kind, "kueue.x-k8s.io/max-exec-time-seconds: abc", Strategies({.frameworks = {}})).ok())
        << kind.name;
  }
}

Object JobWithLabels(Object labels, bool suspended) {
  return {{"metadata", {{"labels", std::move(labels)}}}, {"spec", {{"suspend", suspended}}}};
}

// validateUpdateForMaxExecTime: the label changes only while the job is suspended before
// and after; ValidateCreate's check runs on the updated job too.
TEST(KueueJobWebhookTest, MaxExecTimeLabelIsImmutableUnlessSuspendedBeforeAndAfter) {
  const KueueJobWebhook webhook;
  const std::vector<std::string> path = {"spec", "suspend"};
  const Object v10 = {{"kueue.x-k8s.io/queue-name", "lq"}, {"kueue.x-k8s.io/max-exec-time-seconds", "10"}};
  const Object v20 = {{"kueue.x-k8s.io/queue-name", "lq"}, {"kueue.x-k8s.io/max-exec-time-seconds", "20"}};
  const Object none = {{"kueue.x-k8s.io/queue-name", "lq"}};
  auto errors = [&](const Object& now, bool now_suspended, const Object& old, bool old_suspended) {
    Strings out;
    for (const FieldError& e : webhook.ValidateUpdate(JobWithLabels(now, now_suspended),
                                                      JobWithLabels(old, old_suspended), kBatchJobFramework, path)) {
      out.push_back(e.Error());
    }
    return out;
  };
  EXPECT_EQ(errors(v20, true, v10, true), Strings{});
  EXPECT_EQ(errors(none, true, v10, true), Strings{});
  EXPECT_EQ(errors(v10, false, v10, true), Strings{});  // unsuspended, label unchanged
  const std::string immutable = std::string(kMaxLabel) + ": Invalid value: \"20\": field is immutable";
  EXPECT_EQ(errors(v20, false, v10, false), Strings{immutable});
  EXPECT_EQ(errors(v20, false, v10, true), Strings{immutable});  // unsuspended in the same update
  EXPECT_EQ(errors(v20, true, v10, false), Strings{immutable});  // suspended in the same update
  EXPECT_EQ(errors(none, false, v10, false),
            Strings{std::string(kMaxLabel) + ": Invalid value: \"\": field is immutable"});
  const Object bad = {{"kueue.x-k8s.io/queue-name", "lq"}, {"kueue.x-k8s.io/max-exec-time-seconds", "x"}};
  EXPECT_EQ(errors(bad, true, v10, true),
            Strings{std::string(kMaxLabel) + ": Invalid value: \"x\": strconv.Atoi: parsing \"x\": invalid syntax"});
}

TEST(KueueJobWebhookTest, MaxExecTimeSecondsFromLabelIsAPositiveInt32) {
  auto from = [](const char* v) {
    return MaxExecTimeSecondsFromLabel({{"metadata", {{"labels", {{"kueue.x-k8s.io/max-exec-time-seconds", v}}}}}});
  };
  EXPECT_EQ(from("3"), 3);
  EXPECT_EQ(from("+7"), 7);
  EXPECT_EQ(from("2147483647"), 2147483647);
  EXPECT_EQ(from("2147483648"), std::nullopt);  // beyond int32
  EXPECT_EQ(from("0"), std::nullopt);
  EXPECT_EQ(from("-3"), std::nullopt);
  EXPECT_EQ(from("abc"), std::nullopt);
  EXPECT_EQ(from(""), std::nullopt);
  EXPECT_EQ(MaxExecTimeSecondsFromLabel({{"metadata", Object::object()}}), std::nullopt);
}

// Kueue's job_webhook.go for batch/v1 Jobs, through the admission pipeline (create: the
// stored Job as the API server keeps it, defaults applied; update: against that Job).
StatusOr<AdmittedWrite> AdmitJob(const std::string& annotations, const std::string& spec, const Object* old = nullptr) {
  auto obj = ParseYaml("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns, annotations: {" +
                       annotations + "}}\nspec: {" + spec +
                       "template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}\n");
  EXPECT_TRUE(obj.ok()) << obj.status().ToString();
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest req;
  req.object = obj.value();
  if (old != nullptr) {
    req.operation = Operation::kUpdate;
    req.object["metadata"]["resourceVersion"] = Field(Field(*old, "metadata"), "resourceVersion");
    req.object["metadata"]["uid"] = Field(Field(*old, "metadata"), "uid");
    req.object["spec"]["selector"] = (*old)["spec"]["selector"];
    req.object["spec"]["template"]["metadata"] = (*old)["spec"]["template"]["metadata"];
    req.old = old;
  }
  return pipeline.Admit(std::move(req));
}

constexpr char kMinAnn[] = "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]";
constexpr char kSyncAnn[] = "metadata.annotations[kueue.x-k8s.io/job-completions-equal-parallelism]";

TEST(KueueJobWebhookTest, JobMinParallelismIsBetweenOneAndThePodCountLessOne) {
  const std::string min = "kueue.x-k8s.io/job-min-parallelism: ";
  EXPECT_EQ(Causes(AdmitJob(min + "\"2\"", "parallelism: 4, completions: 4, ")), Strings{});
  EXPECT_EQ(Causes(AdmitJob(min + "\"3\"", "parallelism: 4, ")), Strings{});  // completions unset: parallelism
  EXPECT_EQ(Causes(AdmitJob(min + "\"4\"", "parallelism: 4, completions: 4, ")),
            Strings{std::string(kMinAnn) + ": Invalid value: 4: should be between 0 and 3"});
  // The pod count is parallelism capped by completions.
  EXPECT_EQ(Causes(AdmitJob(min + "\"2\"", "parallelism: 4, completions: 2, ")),
            Strings{std::string(kMinAnn) + ": Invalid value: 2: should be between 0 and 1"});
  EXPECT_EQ(Causes(AdmitJob(min + "\"0\"", "parallelism: 4, ")),
            Strings{std::string(kMinAnn) + ": Invalid value: 0: should be between 0 and 3"});
  EXPECT_EQ(Causes(AdmitJob(min + "\"-1\"", "parallelism: 4, ")),
            Strings{std::string(kMinAnn) + ": Invalid value: -1: should be between 0 and 3"});
  EXPECT_EQ(Causes(AdmitJob(min + "two", "parallelism: 4, ")),
            Strings{std::string(kMinAnn) + ": Invalid value: \"two\": strconv.Atoi: parsing \"two\": invalid syntax"});
  EXPECT_EQ(Causes(AdmitJob(min + "\"99999999999999999999\"", "parallelism: 4, ")),
            Strings{std::string(kMinAnn) +
                    ": Invalid value: \"99999999999999999999\": strconv.Atoi: parsing \"99999999999999999999\": "
                    "value out of range"});
  // A single-pod Job cannot be partially admitted at all.
  EXPECT_EQ(Causes(AdmitJob(min + "\"1\"", "")),
            Strings{std::string(kMinAnn) + ": Invalid value: 1: should be between 0 and 0"});
}

TEST(KueueJobWebhookTest, CompletionsEqualParallelismNeedsAnIndexedJobWithEqualCounts) {
  const std::string sync = "kueue.x-k8s.io/job-completions-equal-parallelism: ";
  const std::string indexed = "completionMode: Indexed, ";
  EXPECT_EQ(Causes(AdmitJob(sync + "\"true\"", indexed + "parallelism: 4, completions: 4, ")), Strings{});
  EXPECT_EQ(Causes(AdmitJob(sync + "\"T\"", indexed + "parallelism: 4, completions: 4, ")), Strings{});
  EXPECT_EQ(Causes(AdmitJob(sync + "\"false\"", "parallelism: 4, completions: 2, ")), Strings{});
  EXPECT_EQ(Causes(AdmitJob(sync + "\"true\"", "parallelism: 4, completions: 4, ")),
            Strings{std::string(kSyncAnn) + ": Invalid value: \"true\": should not be enabled for NonIndexed jobs"});
  EXPECT_EQ(Causes(AdmitJob(sync + "\"1\"", indexed + "parallelism: 4, completions: 6, ")),
            Strings{"spec.completions: Invalid value: 6: should be equal to parallelism when "
                    "kueue.x-k8s.io/job-completions-equal-parallelism annotation is true"});
  EXPECT_EQ(Causes(AdmitJob(sync + "\"yes\"", indexed + "parallelism: 4, completions: 4, ")),
            Strings{std::string(kSyncAnn) +
                    ": Invalid value: \"yes\": strconv.ParseBool: parsing \"yes\": invalid syntax"});
}

// validatePartialAdmissionUpdate: a running partially-admittable Job keeps its parallelism;
// the completions-equal-parallelism setting changes only around a suspension.
TEST(KueueJobWebhookTest, PartialAdmissionSettingsHoldWhileTheJobRuns) {
  const std::string both =
      "kueue.x-k8s.io/job-min-parallelism: \"2\", kueue.x-k8s.io/job-completions-equal-parallelism: \"true\"";
  const std::string indexed = "completionMode: Indexed, ";
  auto stored = [&](bool suspend) {
    auto created = AdmitJob(both, indexed + "parallelism: 4, completions: 4, suspend: " + (suspend ? "true" : "false") + ", ");
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    Object obj = created.value().object;
    obj["metadata"]["resourceVersion"] = "1";
    obj["metadata"]["uid"] = "u";
    return obj;
  };
  const Object running = stored(false);
  EXPECT_EQ(Causes(AdmitJob(both, indexed + "parallelism: 2, completions: 2, suspend: false, ", &running)),
            Strings{"spec.parallelism: Forbidden: cannot change when partial admission is enabled and the job is "
                    "not suspended"});
  EXPECT_EQ(Causes(AdmitJob("kueue.x-k8s.io/job-min-parallelism: \"2\"",
                            indexed + "parallelism: 4, completions: 4, suspend: false, ", &running)),
            Strings{std::string(kSyncAnn) + ": Forbidden: field is immutable while the job is not suspended"});
  // Suspended before: Kueue's own start at the admitted count (suspend false, parallelism 2).
  const Object suspended = stored(true);
  EXPECT_EQ(Causes(AdmitJob(both, indexed + "parallelism: 2, completions: 2, suspend: false, ", &suspended)),
            Strings{});
  EXPECT_EQ(Causes(AdmitJob("kueue.x-k8s.io/job-min-parallelism: \"2\"",
                            indexed + "parallelism: 4, completions: 4, suspend: true, ", &suspended)),
            Strings{});
}

}  // namespace
}  // namespace berth::api
