#include "cli/diagnostics/lint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "cli/diagnostics/lint_input.h"
#include "cli/manifest.h"

namespace berth::cli::diagnostics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The file `name` of tests/e2e/testdata (through BERTH_SOURCE_DIR, set by berth_test); a
// failure when it cannot be read.
std::string Testdata(const std::string& name) {
  const char* root = std::getenv("BERTH_SOURCE_DIR");
  if (root == nullptr) {
    ADD_FAILURE() << "BERTH_SOURCE_DIR is not set (run through ctest)";
    return "";
  }
  std::ifstream in(std::string(root) + "/tests/e2e/testdata/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in || s.str().empty()) ADD_FAILURE() << "cannot read tests/e2e/testdata/" << name;
  return s.str();
}

// The seed-2 recommended setup (v1beta2): one pod class (value 0, Never), the workload
// classes and flavor (seed2-kueue-classes.yaml, which lint_e2e.sh applies too), ClusterQueue
// with workload preemption, LocalQueue.
std::string Base() {
  return R"(
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: pytorchjob-zero-priority}
value: 0
preemptionPolicy: Never
---
)" + Testdata("seed2-kueue-classes.yaml") +
         R"(---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: gpu-cluster-queue}
spec:
  namespaceSelector: {}
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: gpu-flavor
      resources:
      - {name: "nvidia.com/gpu", nominalQuota: 16}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: training-queue, namespace: training}
spec: {clusterQueue: gpu-cluster-queue}
)";
}

struct JobSpec {
  std::string name = "job";
  std::string labels = "kueue.x-k8s.io/queue-name: training-queue, kueue.x-k8s.io/priority-class: kueue-high";
  std::string annotations = "{}";
  std::string pod_class = "pytorchjob-zero-priority";  // "" = none written
  int workers = 8;
  int gpus = 1;
  std::string extra_pod_spec;  // e.g. "terminationGracePeriodSeconds: 10"
};

std::string PyTorchJob(const JobSpec& j) {
  auto replica = [&](const char* type, int n) {
    std::ostringstream s;
    s << "    " << type << ":\n      replicas: " << n << "\n      template:\n        spec:\n";
    if (!j.pod_class.empty()) s << "          priorityClassName: " << j.pod_class << "\n";
    if (!j.extra_pod_spec.empty()) s << "          " << j.extra_pod_spec << "\n";
    s << "          containers:\n          - name: pytorch\n            image: x\n"
      << "            resources: {limits: {nvidia.com/gpu: " << j.gpus << "}}\n";
    return s.str();
  };
  return "---\napiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: " + j.name +
         "\n  namespace: training\n  labels: {" + j.labels + "}\n  annotations: " + j.annotations +
         "\nspec:\n  pytorchReplicaSpecs:\n" + replica("Master", 1) + replica("Worker", j.workers);
}

std::vector<Finding> LintYaml(const std::string& yaml, ObjectsByResource live = {}) {
  auto manifests = ParseManifest(yaml, "test.yaml");
  EXPECT_TRUE(manifests.ok()) << manifests.status().message();
  if (!manifests.ok()) return {};
  auto input = BuildLintInput(std::move(live), *manifests, "default");
  EXPECT_TRUE(input.ok()) << input.status().message();
  if (!input.ok()) return {};
  return Lint(input->view, input->provenance);
}

std::vector<Finding> Only(const std::vector<Finding>& all, const std::string& rule) {
  std::vector<Finding> out;
  for (const Finding& f : all) {
    if (f.rule == rule) out.push_back(f);
  }
  return out;
}

std::vector<std::string> Rules(const std::vector<Finding>& all) {
  std::vector<std::string> out;
  for (const Finding& f : all) out.push_back(f.rule + " " + f.object.kind + " " + f.object.name);
  return out;
}

TEST(LintTest, RecommendedSetupIsClean) {
  JobSpec high{.name = "production-training"};
  JobSpec low{.name = "experiment-training",
              .labels = "kueue.x-k8s.io/queue-name: training-queue, kueue.x-k8s.io/priority-class: kueue-low",
              .workers = 4};
  EXPECT_THAT(LintYaml(Base() + PyTorchJob(high) + PyTorchJob(low)), IsEmpty());
}

// ---- rule 1 ------------------------------------------------------------------------------

// A scheduling.k8s.io PriorityClass `name` of `value`, then the lines `more`.
std::string PriorityClass(const std::string& name, int value, const std::string& more = "") {
  return "\n---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " + name +
         "}\nvalue: " + std::to_string(value) + "\n" + more;
}

const std::string kLowPreempting = PriorityClass("low-priority", 0);  // preemptionPolicy unset: PreemptLowerPriority

TEST(LintTest, PodPreemptionOnTrainingPods) {
  auto findings = LintYaml(Base() + kLowPreempting + PyTorchJob({.pod_class = "low-priority"}));
  auto f = Only(findings, "pod-preemption-on-training-pods");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kError);
  EXPECT_EQ(f[0].object.kind, "PyTorchJob");
  EXPECT_EQ(f[0].object.ns, "training");
  EXPECT_EQ(f[0].field, "spec.pytorchReplicaSpecs.Master.template.spec.priorityClassName");
  // Master 1 + Worker 8, 1 GPU each: a preempted worker leaves the other 8 pods with 8 GPUs.
  EXPECT_THAT(f[0].message, HasSubstr("one preempted worker pod leaves the other 8 pods of the gang holding 8 GPUs idle"));
  EXPECT_THAT(f[0].message, HasSubstr("preemptionPolicy PreemptLowerPriority"));
  EXPECT_THAT(f[0].fix, HasSubstr("preemptionPolicy: Never"));
}

TEST(LintTest, PodPreemptionNotReportedForNeverOrSinglePods) {
  EXPECT_THAT(Only(LintYaml(Base() + PyTorchJob({})), "pod-preemption-on-training-pods"), IsEmpty());
  // A single pod is not a gang.
  const std::string single = Base() + kLowPreempting + R"(
---
apiVersion: batch/v1
kind: Job
metadata: {name: one, namespace: training}
spec:
  template:
    spec:
      priorityClassName: low-priority
      restartPolicy: Never
      containers: [{name: c, image: x}]
)";
  EXPECT_THAT(Only(LintYaml(single), "pod-preemption-on-training-pods"), IsEmpty());
}

// ---- rule 2 ------------------------------------------------------------------------------

TEST(LintTest, GlobalDefaultPriorityClass) {
  const std::string def = PriorityClass("default-priority", 100, "globalDefault: true\n");
  auto f = Only(LintYaml(Base() + def + PyTorchJob({.pod_class = ""})), "global-default-priority-class");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].object.kind, "PriorityClass");
  EXPECT_EQ(f[0].object.name, "default-priority");
  EXPECT_EQ(f[0].field, "globalDefault");
  EXPECT_THAT(f[0].message, HasSubstr("PyTorchJob training/job"));
  EXPECT_THAT(f[0].message, HasSubstr("value 100"));
  // Negative: jobs that name their class, or a default with Never.
  EXPECT_THAT(Only(LintYaml(Base() + def + PyTorchJob({})), "global-default-priority-class"), IsEmpty());
  std::string never = def + "preemptionPolicy: Never\n";
  EXPECT_THAT(Only(LintYaml(Base() + never + PyTorchJob({.pod_class = ""})),
                   "global-default-priority-class"),
              IsEmpty());
}

// ---- rule 3 ------------------------------------------------------------------------------

const std::string kHighPreempting = PriorityClass("high-priority", 1000, "preemptionPolicy: PreemptLowerPriority\n");

TEST(LintTest, MixedPodPriorityClasses) {
  JobSpec high{.name = "high", .pod_class = "high-priority", .workers = 1};
  JobSpec low{.name = "low", .workers = 3, .gpus = 4};
  auto f = Only(LintYaml(Base() + kHighPreempting + PyTorchJob(high) + PyTorchJob(low)),
                "mixed-pod-priority-classes");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].object.name, "low");
  EXPECT_THAT(f[0].message, HasSubstr("PyTorchJob training/high with PriorityClass \"high-priority\" (value 1000"));
  // Master 1 + Worker 3 x 4 GPUs: one preempted worker leaves 12 GPUs on 3 pods.
  EXPECT_THAT(f[0].message, HasSubstr("one preempted worker pod leaves the other 3 pods of the gang holding 12 GPUs idle"));
}

TEST(LintTest, MixedPodPriorityClassesBareInferencePod) {
  const std::string pod = R"(
---
apiVersion: v1
kind: Pod
metadata: {name: high-priority-inference, namespace: training}
spec:
  priorityClassName: high-priority
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
)";
  auto f = Only(LintYaml(Base() + kHighPreempting + pod + PyTorchJob({})), "mixed-pod-priority-classes");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message, HasSubstr("Pod training/high-priority-inference"));
}

TEST(LintTest, LongListsAreCapped) {
  std::string pods;
  for (int i = 0; i < 7; ++i) {
    pods += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p" + std::to_string(i) +
            ", namespace: training}\nspec:\n  priorityClassName: high-priority\n  containers: [{name: c, image: x}]\n";
  }
  auto f = Only(LintYaml(Base() + kHighPreempting + pods + PyTorchJob({})), "mixed-pod-priority-classes");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message, HasSubstr("Pod training/p4 with"));
  EXPECT_THAT(f[0].message, ::testing::Not(HasSubstr("Pod training/p5")));
  EXPECT_THAT(f[0].message, HasSubstr("; and 2 more; one preempted worker pod"));
}

TEST(LintTest, MixedPodPriorityClassesNotOnDisjointNodes) {
  const std::string nodes = R"(
---
apiVersion: v1
kind: Node
metadata: {name: a, labels: {pool: a}}
status: {allocatable: {nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: b, labels: {pool: b}}
status: {allocatable: {nvidia.com/gpu: "8"}}
)";
  JobSpec high{.name = "high", .pod_class = "high-priority", .workers = 1, .extra_pod_spec = "nodeSelector: {pool: a}"};
  JobSpec low{.name = "low", .workers = 1, .extra_pod_spec = "nodeSelector: {pool: b}"};
  EXPECT_THAT(Only(LintYaml(Base() + kHighPreempting + nodes + PyTorchJob(high) + PyTorchJob(low)),
                   "mixed-pod-priority-classes"),
              IsEmpty());
  // Same pool: reported.
  low.extra_pod_spec = "nodeSelector: {pool: a}";
  EXPECT_EQ(Only(LintYaml(Base() + kHighPreempting + nodes + PyTorchJob(high) + PyTorchJob(low)),
                 "mixed-pod-priority-classes")
                .size(),
            1u);
}

// ---- rule 4 ------------------------------------------------------------------------------

TEST(LintTest, PriorityOrderMismatch) {
  const std::string classes = PriorityClass("pod-high", 1000, "preemptionPolicy: Never\n");
  JobSpec a{.name = "kueue-first"};  // kueue-high, pod class 0
  JobSpec b{.name = "pods-first",
            .labels = "kueue.x-k8s.io/queue-name: training-queue, kueue.x-k8s.io/priority-class: kueue-low",
            .pod_class = "pod-high"};
  auto f = Only(LintYaml(Base() + classes + PyTorchJob(a) + PyTorchJob(b)), "priority-order-mismatch");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].object.name, "kueue-first");
  EXPECT_THAT(f[0].message, HasSubstr("Kueue admits this job (workload priority 100 from WorkloadPriorityClass "
                                      "\"kueue-high\", pods with PriorityClass \"pytorchjob-zero-priority\" (value 0"));
  EXPECT_THAT(f[0].message, HasSubstr("before PyTorchJob training/pods-first (workload priority 0 from "
                                      "WorkloadPriorityClass \"kueue-low\", PriorityClass \"pod-high\" (value 1000"));
  // Negative: the same pod class for both.
  b.pod_class = "pytorchjob-zero-priority";
  EXPECT_THAT(Only(LintYaml(Base() + classes + PyTorchJob(a) + PyTorchJob(b)), "priority-order-mismatch"),
              IsEmpty());
}

// ---- rule 5 ------------------------------------------------------------------------------

constexpr char kTwoGpuNodes[] = R"(
---
apiVersion: v1
kind: Node
metadata: {name: node-0}
status: {allocatable: {cpu: "8", nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: "8", nvidia.com/gpu: "8"}}
)";

TEST(LintTest, QuotaExceedsNodeAllocatable) {
  std::string base = Base();
  std::string over = base;
  over.replace(over.find("nominalQuota: 16"), 16, "nominalQuota: 20");
  auto f = Only(LintYaml(over + kTwoGpuNodes), "quota-exceeds-node-allocatable");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].object.name, "gpu-cluster-queue");
  EXPECT_EQ(f[0].field, "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota");
  EXPECT_THAT(f[0].message, HasSubstr("nominalQuota 20 nvidia.com/gpu of flavor \"gpu-flavor\" is above the 16"));
  EXPECT_THAT(f[0].message, HasSubstr("(node-0, node-1)"));
  EXPECT_THAT(f[0].message, HasSubstr("4 GPUs of quota"));
  EXPECT_THAT(f[0].fix, HasSubstr("at most 16"));
  // Negative: equal to the nodes, and unknown nodes.
  EXPECT_THAT(Only(LintYaml(base + kTwoGpuNodes), "quota-exceeds-node-allocatable"), IsEmpty());
  EXPECT_THAT(Only(LintYaml(over), "quota-exceeds-node-allocatable"), IsEmpty());
}

// ---- rule 6 ------------------------------------------------------------------------------

TEST(LintTest, MissingResourceFlavor) {
  std::string typo = Base();
  typo.replace(typo.find("- name: gpu-flavor"), 18, "- name: gpu-flavour");
  auto f = Only(LintYaml(typo), "missing-resource-flavor");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field, "spec.resourceGroups[0].flavors[0].name");
  EXPECT_THAT(f[0].message, HasSubstr("ResourceFlavor \"gpu-flavour\" does not exist (did you mean \"gpu-flavor\"?)"));
  EXPECT_THAT(f[0].message, HasSubstr("inactive"));
  std::string far = Base();
  far.replace(far.find("- name: gpu-flavor"), 18, "- name: a100");
  f = Only(LintYaml(far), "missing-resource-flavor");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message, ::testing::Not(HasSubstr("did you mean")));
  EXPECT_THAT(Only(LintYaml(Base()), "missing-resource-flavor"), IsEmpty());
}

// ---- rule 7 ------------------------------------------------------------------------------

// The queue-name-label finding of the recommended setup plus `job`: there must be exactly
// one, on `field`, its message containing `message`.
Finding QueueNameFinding(const JobSpec& job, const std::string& field, const std::string& message) {
  auto f = Only(LintYaml(Base() + PyTorchJob(job)), "queue-name-label");
  EXPECT_EQ(f.size(), 1u);
  if (f.size() != 1) return {};
  EXPECT_EQ(f[0].field, field);
  EXPECT_THAT(f[0].message, HasSubstr(message));
  return f[0];
}

TEST(LintTest, QueueNameAsAnnotation) {
  QueueNameFinding({.labels = "", .annotations = "{kueue.x-k8s.io/queue-name: training-queue}"},
                   "metadata.annotations[kueue.x-k8s.io/queue-name]", "Kueue reads only the label");
}

TEST(LintTest, QueueNameMisspelledKey) {
  QueueNameFinding({.labels = "kueue.x-k8s.io/queuename: training-queue"}, "metadata.labels[kueue.x-k8s.io/queuename]",
                   "did you mean \"kueue.x-k8s.io/queue-name\"");
}

TEST(LintTest, QueueNameMissingLocalQueue) {
  const Finding f = QueueNameFinding({.labels = "kueue.x-k8s.io/queue-name: training-queu"},
                                     "metadata.labels[kueue.x-k8s.io/queue-name]",
                                     "LocalQueue \"training-queu\" does not exist in namespace \"training\" "
                                     "(did you mean \"training-queue\"?)");
  EXPECT_EQ(f.fix, "set kueue.x-k8s.io/queue-name: training-queue");
  EXPECT_THAT(Only(LintYaml(Base() + PyTorchJob({})), "queue-name-label"), IsEmpty());
}

// Files only, without any LocalQueue / ResourceFlavor: a dangling reference cannot be judged.
TEST(LintTest, ReferenceToAKindNotInTheInputIsInfo) {
  auto all = LintYaml(PyTorchJob({.labels = "kueue.x-k8s.io/queue-name: lq-team-a"}));
  EXPECT_THAT(Only(all, "queue-name-label"), IsEmpty());
  auto f = Only(all, "unresolved-reference");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kInfo);
  EXPECT_EQ(f[0].field, "metadata.labels[kueue.x-k8s.io/queue-name]");
  EXPECT_THAT(f[0].message, HasSubstr("LocalQueue \"training/lq-team-a\" is not in the input"));
  EXPECT_THAT(f[0].fix, HasSubstr("--live"));
  EXPECT_FALSE(HasErrors(all));

  // A lone ClusterQueue: its flavor is not judged either.
  std::string cq = Base();
  cq = cq.substr(cq.find("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue"));
  cq = cq.substr(0, cq.find("---"));
  auto lone = LintYaml(cq);
  EXPECT_THAT(Only(lone, "missing-resource-flavor"), IsEmpty());
  ASSERT_EQ(Only(lone, "unresolved-reference").size(), 1u);
  EXPECT_THAT(Only(lone, "unresolved-reference")[0].message, HasSubstr("ResourceFlavor \"gpu-flavor\""));

  // With the kind listed from a server (--live: the list is present, even empty), it is an error again.
  ObjectsByResource live;
  live[resources::kLocalQueues.GroupResource()] = {};
  live[resources::kResourceFlavors.GroupResource()] = {};
  EXPECT_EQ(Only(LintYaml(PyTorchJob({.labels = "kueue.x-k8s.io/queue-name: lq-team-a"}), live), "queue-name-label")
                .size(),
            1u);
  EXPECT_EQ(Only(LintYaml(cq, live), "missing-resource-flavor").size(), 1u);
}

// A flavor whose nodeLabels match no node: not "at most 0", but "selects no node".
TEST(LintTest, FlavorSelectingNoNode) {
  std::string base = Base();
  base.replace(base.find("metadata: {name: gpu-flavor}"), 28, "metadata: {name: gpu-flavor}\nspec: {nodeLabels: {pool: a100}}");
  auto f = Only(LintYaml(base + kTwoGpuNodes), "quota-exceeds-node-allocatable");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field, "spec.resourceGroups[0].flavors[0].name");
  EXPECT_THAT(f[0].message, HasSubstr("ResourceFlavor \"gpu-flavor\" selects no node"));
  EXPECT_THAT(f[0].message, ::testing::Not(HasSubstr("above the 0")));
  EXPECT_THAT(f[0].fix, HasSubstr("correct the ResourceFlavor's spec.nodeLabels"));
  EXPECT_THAT(f[0].fix, ::testing::Not(HasSubstr("at most 0")));
}

// ---- rule 8 ------------------------------------------------------------------------------

TEST(LintTest, KueueV1beta1) {
  const std::string wpc = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: old}
value: 5
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: lossy}
spec:
  cohort: team
  flavorFungibility: {whenCanBorrow: Borrow}
)";
  auto f = Only(LintYaml(wpc), "kueue-v1beta1");
  ASSERT_EQ(f.size(), 2u);
  // Sorted: warning (lossy ClusterQueue) before info.
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].object.name, "lossy");
  EXPECT_EQ(f[0].object.api_version, "kueue.x-k8s.io/v1beta1");
  EXPECT_THAT(f[0].message, HasSubstr("in v1beta2 spec.cohort is spec.cohortName, flavorFungibility.whenCanBorrow "
                                      "Borrow is MayStopSearch"));
  EXPECT_THAT(f[0].message, HasSubstr("converting this object loses spec.flavorFungibility.whenCanBorrow"));
  EXPECT_THAT(f[0].message, ::testing::Not(HasSubstr("spec.cohort,")));  // cohort round-trips
  EXPECT_EQ(f[1].severity, Severity::kInfo);
  EXPECT_EQ(f[1].object.name, "old");
  EXPECT_THAT(f[1].message, HasSubstr("only apiVersion changes"));
  EXPECT_THAT(Only(LintYaml(Base()), "kueue-v1beta1"), IsEmpty());
}

// ---- rule 9 ------------------------------------------------------------------------------

TEST(LintTest, WithinClusterQueueNever) {
  JobSpec low{.name = "low",
              .labels = "kueue.x-k8s.io/queue-name: training-queue, kueue.x-k8s.io/priority-class: kueue-low"};
  std::string never = Base();
  never.replace(never.find("withinClusterQueue: LowerPriority"), 33, "withinClusterQueue: Never");
  auto f = Only(LintYaml(never + PyTorchJob({.name = "high"}) + PyTorchJob(low)), "within-cluster-queue-never");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].field, "spec.preemption.withinClusterQueue");
  EXPECT_THAT(f[0].message, HasSubstr("PyTorchJob training/high (WorkloadPriorityClass \"kueue-high\") priority 100, "
                                      "PyTorchJob training/low (WorkloadPriorityClass \"kueue-low\") priority 0"));
  // Unset is Never too.
  std::string unset = Base();
  unset.replace(unset.find("preemption: {withinClusterQueue: LowerPriority}"), 47, "");
  f = Only(LintYaml(unset + PyTorchJob({.name = "high"}) + PyTorchJob(low)), "within-cluster-queue-never");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_THAT(f[0].message, HasSubstr("the default when unset"));
  // Negative: one priority, or LowerPriority.
  EXPECT_THAT(Only(LintYaml(never + PyTorchJob({.name = "a"}) + PyTorchJob({.name = "b"})),
                   "within-cluster-queue-never"),
              IsEmpty());
  EXPECT_THAT(Only(LintYaml(Base() + PyTorchJob({.name = "high"}) + PyTorchJob(low)),
                   "within-cluster-queue-never"),
              IsEmpty());
}

// ---- rule 10 -----------------------------------------------------------------------------

TEST(LintTest, GracePeriodShorterThanCheckpoint) {
  auto f = Only(LintYaml(Base() + PyTorchJob({.annotations = "{berth.dev/checkpoint-seconds: \"60\"}",
                                                           .extra_pod_spec = "terminationGracePeriodSeconds: 10"})),
                "grace-period-shorter-than-checkpoint");
  ASSERT_EQ(f.size(), 2u);  // Master and Worker templates
  EXPECT_EQ(f[0].field, "spec.pytorchReplicaSpecs.Master.template.spec.terminationGracePeriodSeconds");
  EXPECT_EQ(f[1].field, "spec.pytorchReplicaSpecs.Worker.template.spec.terminationGracePeriodSeconds");
  EXPECT_THAT(f[1].message, HasSubstr("SIGKILL 10 s after SIGTERM"));
  EXPECT_THAT(f[1].message, HasSubstr("declares 60 s"));
  EXPECT_THAT(f[1].fix, HasSubstr("terminationGracePeriodSeconds: 60"));
  // Unset: the default 30 s.
  f = Only(LintYaml(Base() + PyTorchJob({.annotations = "{berth.dev/checkpoint-seconds: \"45\"}"})),
           "grace-period-shorter-than-checkpoint");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_THAT(f[0].message, HasSubstr("the default 30"));
  // Negative: long enough, or no annotation.
  EXPECT_THAT(Only(LintYaml(Base() + PyTorchJob({.annotations = "{berth.dev/checkpoint-seconds: \"60\"}",
                                                               .extra_pod_spec = "terminationGracePeriodSeconds: 60"})),
                   "grace-period-shorter-than-checkpoint"),
              IsEmpty());
  // Malformed: a warning.
  f = Only(LintYaml(Base() + PyTorchJob({.annotations = "{berth.dev/checkpoint-seconds: 1m}"})),
           "grace-period-shorter-than-checkpoint");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
}

// ---- TrainJob: templates from the runtime --------------------------------------------------

TEST(LintTest, TrainJobPodClassFromRuntime) {
  const std::string yaml = Base() + kLowPreempting + R"(
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch}
spec:
  mlPolicy: {numNodes: 1, torch: {numProcPerNode: auto}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec:
            template:
              spec:
                priorityClassName: low-priority
                containers: [{name: node, image: x}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: training, labels: {kueue.x-k8s.io/queue-name: training-queue}}
spec:
  runtimeRef: {name: torch}
  trainer:
    numNodes: 4
    resourcesPerNode: {requests: {nvidia.com/gpu: 2}}
)";
  auto f = Only(LintYaml(yaml), "pod-preemption-on-training-pods");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].object.kind, "TrainJob");
  EXPECT_EQ(f[0].field, "spec.runtimeRef");
  EXPECT_THAT(f[0].message, HasSubstr("in ClusterTrainingRuntime torch spec.template.spec.replicatedJobs[0]"));
  EXPECT_THAT(f[0].message, HasSubstr("one preempted node pod leaves the other 3 pods of the gang holding 6 GPUs idle"));
}

// ---- input: live objects, merge, lines -----------------------------------------------------

TEST(LintTest, FilesOverrideLiveObjects) {
  api::Object live_pc = {{"apiVersion", "scheduling.k8s.io/v1"},
                         {"kind", "PriorityClass"},
                         {"metadata", {{"name", "pytorchjob-zero-priority"}}},
                         {"value", 0}};  // live: PreemptLowerPriority
  ObjectsByResource live{{api::GroupResource{"scheduling.k8s.io", "priorityclasses"}, {live_pc}}};
  // Only the job from files: the live class makes it preempting.
  auto f = LintYaml(PyTorchJob({.labels = ""}), live);
  EXPECT_THAT(Rules(f), ElementsAre("pod-preemption-on-training-pods PyTorchJob job"));
  EXPECT_EQ(f[0].object.source, "test.yaml");
  // The file's class (Never) replaces the live one.
  EXPECT_THAT(LintYaml(Base() + PyTorchJob({}), live), IsEmpty());
}

TEST(LintTest, SourceLines) {
  const std::string path = ::testing::TempDir() + "/lint_lines.yaml";
  {
    std::ofstream out(path);
    out << "# comment\n---\n" << Base().substr(1) << kLowPreempting << PyTorchJob({.pod_class = "low-priority"});
  }
  std::istringstream no_stdin;
  auto manifests = ReadManifests({path}, no_stdin);
  ASSERT_TRUE(manifests.ok());
  auto input = BuildLintInput({}, *manifests, "default");
  ASSERT_TRUE(input.ok());
  auto f = Only(Lint(input->view, input->provenance), "pod-preemption-on-training-pods");
  ASSERT_EQ(f.size(), 1u);
  // Find the line of the Master's priorityClassName in the file.
  std::ifstream in(path);
  std::string line;
  int n = 0, want = 0;
  bool in_master = false;
  while (std::getline(in, line)) {
    ++n;
    if (line.find("Master:") != std::string::npos) in_master = true;
    if (in_master && want == 0 && line.find("priorityClassName") != std::string::npos) want = n;
  }
  EXPECT_EQ(f[0].object.source, path);
  EXPECT_EQ(f[0].object.line, want);
}

TEST(LintTest, Output) {
  auto findings = LintYaml(Base() + kLowPreempting + PyTorchJob({.pod_class = "low-priority"}));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_TRUE(HasErrors(findings));
  api::Object json = FindingsToJson(findings);
  ASSERT_TRUE(json.is_array());
  EXPECT_EQ(json[0]["rule"], "pod-preemption-on-training-pods");
  EXPECT_EQ(json[0]["severity"], "error");
  EXPECT_EQ(json[0]["object"]["kind"], "PyTorchJob");
  EXPECT_EQ(json[0]["object"]["namespace"], "training");
  EXPECT_EQ(json[0]["object"]["apiVersion"], "kubeflow.org/v1");
  EXPECT_EQ(json[0]["field"], "spec.pytorchReplicaSpecs.Master.template.spec.priorityClassName");
  std::string text = FindingsToText(findings);
  EXPECT_THAT(text, HasSubstr("error: pod-preemption-on-training-pods: PyTorchJob training/job (test.yaml)\n"));
  EXPECT_THAT(text, HasSubstr("\n1 error, 0 warnings, 0 infos\n"));
  EXPECT_EQ(FindingsToText({}), "No findings.\n");
  EXPECT_FALSE(HasErrors({}));
}

TEST(LintTest, EditDistance) {
  EXPECT_EQ(EditDistance("gpu-flavor", "gpu-flavour"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kueue.x-k8s.io/queuename", "kueue.x-k8s.io/queue-name"), 1u);
}

// ---- the examples of the repository --------------------------------------------------------

std::vector<Finding> LintPaths(const std::vector<std::string>& rel) {
  const char* root = std::getenv("BERTH_SOURCE_DIR");
  std::vector<std::string> paths;
  for (const std::string& r : rel) paths.push_back(std::string(root ? root : ".") + "/" + r);
  std::istringstream no_stdin;
  auto manifests = ReadManifests(paths, no_stdin);
  EXPECT_TRUE(manifests.ok()) << manifests.status().message();
  if (!manifests.ok()) return {};
  auto input = BuildLintInput({}, *manifests, "default");
  EXPECT_TRUE(input.ok());
  return input.ok() ? Lint(input->view, input->provenance) : std::vector<Finding>{};
}

TEST(LintExamplesTest, TrainerKueueIsClean) {
  EXPECT_THAT(LintPaths({"examples/trainer-kueue", "examples/trainer-kueue/jobs"}), IsEmpty());
}

TEST(LintExamplesTest, PriorityPitfallsRecommendedHasOnlyV1beta1Notes) {
  auto findings = LintPaths({"examples/priority-pitfalls", "examples/priority-pitfalls/jobs"});
  EXPECT_FALSE(HasErrors(findings));
  // The seed writes Kueue v1beta1: one info per Kueue object, nothing else.
  EXPECT_THAT(Rules(findings),
              ElementsAre("kueue-v1beta1 ClusterQueue gpu-cluster-queue", "kueue-v1beta1 LocalQueue training-queue",
                          "kueue-v1beta1 ResourceFlavor gpu-flavor", "kueue-v1beta1 WorkloadPriorityClass kueue-high",
                          "kueue-v1beta1 WorkloadPriorityClass kueue-low",
                          "kueue-v1beta1 WorkloadPriorityClass kueue-medium"));
  for (const Finding& f : findings) EXPECT_EQ(f.severity, Severity::kInfo) << f.object.name;
}

TEST(LintExamplesTest, PriorityPitfallsTrap) {
  auto findings = LintPaths({"examples/priority-pitfalls", "examples/priority-pitfalls/pitfall"});
  std::vector<Finding> errors;
  for (const Finding& f : findings) {
    if (f.severity == Severity::kError) errors.push_back(f);
  }
  EXPECT_THAT(Rules(errors), ElementsAre("mixed-pod-priority-classes PyTorchJob low-priority-train",
                                         "pod-preemption-on-training-pods PyTorchJob high-priority-train",
                                         "pod-preemption-on-training-pods PyTorchJob low-priority-train"));
  // low-priority-train: Master 1 + Worker 3 x 4 GPUs (limits only, as the seed writes them).
  EXPECT_THAT(errors[0].message, HasSubstr("PyTorchJob training/high-priority-train with PriorityClass "
                                           "\"high-priority\" (value 1000, preemptionPolicy PreemptLowerPriority)"));
  EXPECT_THAT(errors[0].message, HasSubstr("one preempted worker pod leaves the other 3 pods of the gang holding 12 GPUs idle"));
  EXPECT_THAT(errors[0].object.source, HasSubstr("pitfall/low-priority-train.yaml"));
  EXPECT_GT(errors[0].object.line, 0);
}

}  // namespace
}  // namespace berth::cli::diagnostics
