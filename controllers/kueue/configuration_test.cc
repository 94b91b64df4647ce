#include "controllers/kueue/configuration.h"

#include <gtest/gtest.h>
#include <set>

namespace berth::controllers::kueue {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

TEST(ParseGoDuration, GoSyntax) {
  EXPECT_EQ(ParseGoDuration("5m").value(), minutes(5));
  EXPECT_EQ(ParseGoDuration("1h30m").value(), minutes(90));
  EXPECT_EQ(ParseGoDuration("1.5h").value(), minutes(90));
  EXPECT_EQ(ParseGoDuration("300ms").value(), std::chrono::milliseconds(300));
  EXPECT_EQ(ParseGoDuration("0").value(), Duration::zero());
  EXPECT_EQ(ParseGoDuration("0s").value(), Duration::zero());
  EXPECT_EQ(ParseGoDuration("-2s").value(), seconds(-2));
  EXPECT_EQ(ParseGoDuration("5").status().message(), "time: missing unit in duration \"5\"");
  EXPECT_EQ(ParseGoDuration("5d").status().message(), "time: unknown unit \"d\" in duration \"5d\"");
  EXPECT_EQ(ParseGoDuration("m").status().message(), "time: invalid duration \"m\"");
}

TEST(KueueConfiguration, V1beta2Defaults) {
  auto cfg = ParseKueueConfiguration("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  const WaitForPodsReadyConfig& w = cfg.value().wait_for_pods_ready;
  EXPECT_TRUE(w.enabled);  // Kueue HEAD defaults waitForPodsReady on
  EXPECT_EQ(w.timeout, minutes(30));
  EXPECT_EQ(w.recovery_timeout, std::optional<Duration>(minutes(30)));
  EXPECT_FALSE(w.block_admission);
  EXPECT_EQ(w.timestamp, RequeuingTimestamp::kEviction);
  EXPECT_EQ(w.backoff_limit_count, std::nullopt);
  EXPECT_EQ(w.backoff_base_seconds, 60);
  EXPECT_EQ(w.backoff_max_seconds, 3600);
  EXPECT_EQ(cfg.value().frameworks, std::vector<std::string>{"batch/job"});
  EXPECT_FALSE(cfg.value().manage_jobs_without_queue_name);
  // Kueue's default, unlike berth without --config: said, not silent.
  EXPECT_EQ(
      cfg.value().UnmanagedFrameworks(),
      (std::vector<std::string>{"jobset.x-k8s.io/jobset", "kubeflow.org/pytorchjob", "trainer.kubeflow.org/trainjob"}));
  EXPECT_EQ(cfg.value().UnmanagedFrameworksWarning(),
            "integrations.frameworks is [batch/job] (without an integrations section Kueue manages batch/job "
            "only): jobset.x-k8s.io/jobset, kubeflow.org/pytorchjob, trainer.kubeflow.org/trainjob are NOT managed "
            "by Kueue; such jobs are not queued and run as soon as they are created, even with the "
            "kueue.x-k8s.io/queue-name label; to manage them list them under integrations.frameworks");
  const api::KueueJobWebhookOptions webhook = cfg.value().JobWebhookOptions();
  EXPECT_EQ(webhook.frameworks, (std::set<std::string, std::less<>>{"batch/job"}));
  EXPECT_FALSE(webhook.manage_jobs_without_queue_name);
}

// `berth server` without --config: Kueue v0.19's defaults (waitForPodsReady on),
// with every implemented kind managed, so there is nothing to warn about.
TEST(KueueConfiguration, TheServerWithoutAFileRunsKueueDefaultsAndManagesEveryKind) {
  const KueueConfiguration cfg = KueueConfiguration::ServerDefault();
  const WaitForPodsReadyConfig& w = cfg.wait_for_pods_ready;
  EXPECT_TRUE(w.enabled);
  EXPECT_EQ(w.timeout, minutes(30));
  EXPECT_EQ(w.recovery_timeout, std::optional<Duration>(minutes(30)));
  EXPECT_FALSE(w.block_admission);
  EXPECT_EQ(w.timestamp, RequeuingTimestamp::kEviction);
  EXPECT_EQ(w.backoff_limit_count, std::nullopt);
  EXPECT_EQ(w.backoff_base_seconds, 60);
  EXPECT_EQ(w.backoff_max_seconds, 3600);
  EXPECT_EQ(cfg.api_version, "");
  EXPECT_FALSE(cfg.manage_jobs_without_queue_name);
  EXPECT_EQ(cfg.frameworks, KueueConfiguration::DefaultFrameworks());
  EXPECT_TRUE(cfg.UnmanagedFrameworks().empty());
  EXPECT_EQ(cfg.UnmanagedFrameworksWarning(), "");
  EXPECT_EQ(cfg.JobWebhookOptions().frameworks, api::KueueJobWebhookOptions().frameworks);
  // The engine's plain state stays off: unit tests opt in.
  EXPECT_FALSE(KueueConfiguration().wait_for_pods_ready.enabled);
}

TEST(KueueConfiguration, V1beta1EnableAndDefaults) {
  auto off = ParseKueueConfiguration(
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady:\n  timeout: 10m\n");
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_FALSE(off.value().wait_for_pods_ready.enabled);

  auto on = ParseKueueConfiguration(
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady:\n  enable: true\n");
  ASSERT_TRUE(on.ok()) << on.status().message();
  EXPECT_TRUE(on.value().wait_for_pods_ready.enabled);
  EXPECT_EQ(on.value().wait_for_pods_ready.timeout, minutes(5));
  EXPECT_TRUE(on.value().wait_for_pods_ready.block_admission);  // v1beta1 conversion default
  EXPECT_EQ(on.value().wait_for_pods_ready.recovery_timeout, std::nullopt);
}

TEST(KueueConfiguration, FullWaitForPodsReadyAndFrameworks) {
  auto cfg = ParseKueueConfiguration(R"(apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
manageJobsWithoutQueueName: true
health:
  healthProbeBindAddress: :8081
waitForPodsReady:
  timeout: 2m
  recoveryTimeout: 0s
  blockAdmission: true
  requeuingStrategy:
    timestamp: Creation
    backoffLimitCount: 3
    backoffBaseSeconds: 10
    backoffMaxSeconds: 100
integrations:
  frameworks:
  - trainer.kubeflow.org/trainjob
  - kubeflow.org/mpijob
  - batch/job
)",
                                     "kueue.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  const KueueConfiguration& c = cfg.value();
  EXPECT_TRUE(c.manage_jobs_without_queue_name);
  EXPECT_EQ(c.wait_for_pods_ready.timeout, minutes(2));
  EXPECT_EQ(c.wait_for_pods_ready.recovery_timeout, std::nullopt);  // "0s" disables
  EXPECT_TRUE(c.wait_for_pods_ready.block_admission);
  EXPECT_EQ(c.wait_for_pods_ready.timestamp, RequeuingTimestamp::kCreation);
  EXPECT_EQ(c.wait_for_pods_ready.backoff_limit_count, std::optional<int32_t>(3));
  EXPECT_EQ(c.frameworks, (std::vector<std::string>{"trainer.kubeflow.org/trainjob", "batch/job"}));
  EXPECT_TRUE(c.Manages("batch/job"));
  EXPECT_FALSE(c.Manages("jobset.x-k8s.io/jobset"));
  EXPECT_EQ(c.JobWebhookOptions().frameworks,
            (std::set<std::string, std::less<>>{"batch/job", "trainer.kubeflow.org/trainjob"}));
  EXPECT_TRUE(c.JobWebhookOptions().manage_jobs_without_queue_name);
  EXPECT_EQ(c.ignored,
            (std::vector<std::string>{"integrations.frameworks: \"kubeflow.org/mpijob\" (berth has no such job kind)",
                                      "health (not applied by berth)", "namespace (not applied by berth)"}));
  // Backoff: base·2^(n−1), capped.
  EXPECT_EQ(c.wait_for_pods_ready.Backoff(1), seconds(10));
  EXPECT_EQ(c.wait_for_pods_ready.Backoff(3), seconds(40));
  EXPECT_EQ(c.wait_for_pods_ready.Backoff(5), seconds(100));
}

TEST(KueueConfiguration, StrictDecodingNamesEveryUnknownField) {
  auto cfg = ParseKueueConfiguration(R"(apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  enable: true
  requeuingStrategy:
    backoffLimit: 3
colour: blue
)",
                                     "kueue.yaml");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(cfg.status().code(), Code::kBadRequest);
  // `enable` exists only in v1beta1.
  EXPECT_EQ(cfg.status().message(),
            "kueue.yaml: strict decoding error: unknown field \"colour\", unknown field \"waitForPodsReady.enable\", "
            "unknown field \"waitForPodsReady.requeuingStrategy.backoffLimit\"");
}

TEST(KueueConfiguration, WrongTypesAndValues) {
  auto type = ParseKueueConfiguration(
      "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nwaitForPodsReady:\n  blockAdmission: yes\n");
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.status().message(),
            "json: cannot unmarshal string into Go struct field waitForPodsReady.blockAdmission of type bool");

  auto values = ParseKueueConfiguration(R"(apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 5x
  requeuingStrategy:
    timestamp: Admission
    backoffBaseSeconds: -1
integrations:
  frameworks: [batch/job, batch/job, example.com/thing]
)");
  ASSERT_FALSE(values.ok());
  const std::string& m = values.status().message();
  EXPECT_NE(m.find("waitForPodsReady.timeout: Invalid value: \"5x\": time: unknown unit \"x\" in duration \"5x\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("waitForPodsReady.requeuingStrategy.timestamp: Unsupported value: \"Admission\": supported "
                   "values: \"Creation\", \"Eviction\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("waitForPodsReady.requeuingStrategy.backoffBaseSeconds: Invalid value: -1: must be greater than "
                   "or equal to 0"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("integrations.frameworks[1]: Duplicate value: \"batch/job\""), std::string::npos) << m;
  EXPECT_NE(m.find("integrations.frameworks[2]: Unsupported value: \"example.com/thing\""), std::string::npos) << m;
}

TEST(KueueConfiguration, FairSharing) {
  using admission::FairSharingStrategy;
  // v1beta2: the section enables it; the strategies as listed.
  auto v2 = ParseKueueConfiguration(
      "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: "
      "[LessThanInitialShare]\n");
  ASSERT_TRUE(v2.ok()) << v2.status().message();
  EXPECT_TRUE(v2.value().fair_sharing.enable);
  EXPECT_EQ(v2.value().fair_sharing.preemption_strategies,
            std::vector<FairSharingStrategy>{FairSharingStrategy::kLessThanInitialShare});
  // v1beta2 without strategies: required (Kueue's validation, no default).
  auto v2_empty =
      ParseKueueConfiguration("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {}\n");
  ASSERT_FALSE(v2_empty.ok());
  EXPECT_EQ(v2_empty.status().message(), "fairSharing.preemptionStrategies: Required value: must be specified");
  // Only Kueue's three lists.
  auto v2_bad = ParseKueueConfiguration(
      "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n  preemptionStrategies: "
      "[LessThanInitialShare, LessThanOrEqualToFinalShare]\n");
  ASSERT_FALSE(v2_bad.ok());
  EXPECT_NE(v2_bad.status().message().find("fairSharing.preemptionStrategies: Unsupported value: "), std::string::npos)
      << v2_bad.status().message();
  EXPECT_NE(
      v2_bad.status().message().find("supported values: \"LessThanOrEqualToFinalShare\", \"LessThanInitialShare\", "
                                     "\"LessThanOrEqualToFinalShare,LessThanInitialShare\""),
      std::string::npos)
      << v2_bad.status().message();
  // v1beta1: enable false is off; enable true defaults both strategies.
  auto v1_off = ParseKueueConfiguration(
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing:\n  enable: false\n");
  ASSERT_TRUE(v1_off.ok()) << v1_off.status().message();
  EXPECT_FALSE(v1_off.value().fair_sharing.enable);
  auto v1_on = ParseKueueConfiguration(
      "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nfairSharing:\n  enable: true\n");
  ASSERT_TRUE(v1_on.ok()) << v1_on.status().message();
  EXPECT_TRUE(v1_on.value().fair_sharing.enable);
  EXPECT_EQ(v1_on.value().fair_sharing.preemption_strategies,
            (std::vector<FairSharingStrategy>{FairSharingStrategy::kLessThanOrEqualToFinalShare,
                                              FairSharingStrategy::kLessThanInitialShare}));
  // Without the section (and without --config): off.
  EXPECT_FALSE(KueueConfiguration::ServerDefault().fair_sharing.enable);
}

// Kueue's defaults.go (usageSamplingInterval 5m) and validation.go
// validateAdmissionFairSharing, plus berth's 1s floor on the sampling interval.
TEST(KueueConfiguration, AdmissionFairSharing) {
  const std::string head = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";
  EXPECT_FALSE(KueueConfiguration::ServerDefault().admission_fair_sharing.enabled);
  auto empty = ParseKueueConfiguration(head + "admissionFairSharing: {}\n");
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_TRUE(empty.value().admission_fair_sharing.enabled);
  EXPECT_EQ(empty.value().admission_fair_sharing.usage_half_life_time, Duration::zero());
  EXPECT_EQ(empty.value().admission_fair_sharing.usage_sampling_interval, std::chrono::minutes(5));
  auto full = ParseKueueConfiguration(head +
                                      "admissionFairSharing:\n  usageHalfLifeTime: 168h\n  usageSamplingInterval: 30s\n"
                                      "  resourceWeights: {cpu: 2.0, memory: 1}\n");
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full.value().admission_fair_sharing.usage_half_life_time, std::chrono::hours(168));
  EXPECT_EQ(full.value().admission_fair_sharing.usage_sampling_interval, std::chrono::seconds(30));
  EXPECT_EQ(full.value().admission_fair_sharing.resource_weights,
            (std::map<std::string, double>{{"cpu", 2.0}, {"memory", 1.0}}));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"usageHalfLifeTime: -1s",
       "admissionFairSharing.usageHalfLifeTime: Invalid value: \"-1s\": must be greater than or equal to 0"},
      {"usageSamplingInterval: -5m",
       "admissionFairSharing.usageSamplingInterval: Invalid value: \"-5m\": must be greater than 0"},
      {"usageSamplingInterval: 1ms",
       "admissionFairSharing.usageSamplingInterval: Invalid value: \"1ms\": must be at least 1s (berth's limit: "
       "every LocalQueue is sampled once per interval)"},
      {"usageSamplingInterval: soon", "admissionFairSharing.usageSamplingInterval: Invalid value: \"soon\""},
      {"resourceWeights: {cpu: -1}",
       "admissionFairSharing.resourceWeights[cpu]: Invalid value: -1: must be greater than or equal to 0"},
      {"resourceWeights: {cpu: lots}", "admissionFairSharing.resourceWeights[cpu]: Invalid value: \"lots\": must be a number"},
      {"resourceWeights: {cpu: .nan}", "admissionFairSharing.resourceWeights[cpu]: Invalid value: NaN: must be a finite number"},
      {"resourceWeights: {cpu: .inf}", "admissionFairSharing.resourceWeights[cpu]: Invalid value: +Inf: must be a finite number"},
      {"resourceWeights: {memory: 1e400}",
       "admissionFairSharing.resourceWeights[memory]: Invalid value: +Inf: must be a finite number"},
      // Beyond an int64 of nanoseconds: Go's overflow error, not a sign error.
      {"usageHalfLifeTime: 99999999999h",
       "admissionFairSharing.usageHalfLifeTime: Invalid value: \"99999999999h\": time: invalid duration \"99999999999h\""},
      {"usageSamplingInterval: 1e999999999s", "admissionFairSharing.usageSamplingInterval: Invalid value: \"1e999999999s\""},
  };
  for (const auto& [field, want] : bad) {
    auto cfg = ParseKueueConfiguration(head + "admissionFairSharing:\n  " + field + "\n");
    ASSERT_FALSE(cfg.ok()) << field;
    EXPECT_EQ(cfg.status().message().rfind(want, 0), 0u) << field << ": " << cfg.status().message();
  }
}

// Kueue's objectRetentionPolicies.workloads (configuration_types.go): afterFinished applied,
// afterDeactivatedByKueue read and listed as not applied; nothing deleted by default.
TEST(KueueConfiguration, WorkloadRetention) {
  const std::string head = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";
  EXPECT_FALSE(KueueConfiguration::ServerDefault().workload_retention_after_finished);
  auto cfg = ParseKueueConfiguration(head + "objectRetentionPolicies:\n  workloads: {afterFinished: 1h30m, "
                                            "afterDeactivatedByKueue: 10m}\n");
  ASSERT_TRUE(cfg.ok()) << cfg.status().message();
  EXPECT_EQ(cfg.value().workload_retention_after_finished, std::chrono::minutes(90));
  EXPECT_EQ(cfg.value().ignored,
            std::vector<std::string>{"objectRetentionPolicies.workloads.afterDeactivatedByKueue (not applied by berth)"});
  auto zero = ParseKueueConfiguration(head + "objectRetentionPolicies: {workloads: {afterFinished: 0s}}\n");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero.value().workload_retention_after_finished, Duration::zero());
  auto negative = ParseKueueConfiguration(head + "objectRetentionPolicies: {workloads: {afterFinished: -1s}}\n");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().message(),
            "objectRetentionPolicies.workloads.afterFinished: Invalid value: \"-1s\": must be greater than or equal to 0");
  auto unknown = ParseKueueConfiguration(head + "objectRetentionPolicies: {workloads: {afterFinishd: 1h}}\n");
  EXPECT_FALSE(unknown.ok());
}

TEST(KueueConfiguration, WrongKind) {
  auto cfg = ParseKueueConfiguration("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n");
  ASSERT_FALSE(cfg.ok());
  EXPECT_EQ(
      cfg.status().message().rfind("no kind \"ClusterQueue\" is registered for version \"kueue.x-k8s.io/v1beta2\"", 0),
      0u)
      << cfg.status().message();
}

}  // namespace
}  // namespace berth::controllers::kueue
