#include "api/pod_validation.h"

#include <functional>
#include <gtest/gtest.h>
#include <string>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/limits.h"
#include "api/registry.h"
#include "api/strategy.h"

namespace berth::api {
namespace {

using nlohmann::json;

constexpr const char* kDns1123LabelMessage =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

std::vector<std::string> Errors(const json& spec) {
  std::vector<std::string> out;
  for (const FieldError& e : ValidatePodSpec(spec, FieldPath("spec"))) out.push_back(e.Error());
  return out;
}

StatusOr<AdmittedWrite> Create(json obj) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  WriteRequest wr;
  wr.object = std::move(obj);
  return pipeline.Admit(std::move(wr));
}

TEST(PodValidationTest, ValidSpecHasNoErrors) {
  EXPECT_TRUE(Errors(json::parse(R"({
    "volumes":[{"name":"data","emptyDir":{}}],
    "initContainers":[{"name":"init","image":"x","env":[{"name":"MY_ENV.name-1","value":"v"}]}],
    "containers":[{"name":"main","image":"x","env":[{"name":"A","value":"1"},{"name":"weird name!","value":"1"}],
                   "resources":{"requests":{"cpu":"500m","memory":"1Gi","nvidia.com/gpu":2},
                                "limits":{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"2"}}}]})"))
                  .empty());
}

// ValidatePodCreate: nodeName and schedulingGates together are refused (a bound pod cannot
// wait for its gates); either alone is fine.
TEST(PodValidationTest, ABoundPodCannotHaveSchedulingGates) {
  auto pod = [](bool node, bool gates) {
    json p = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
                             "spec":{"containers":[{"name":"c","image":"x"}]}})");
    if (node) p["spec"]["nodeName"] = "node-0";
    if (gates) p["spec"]["schedulingGates"] = json::parse(R"([{"name":"example.com/wait"}])");
    return p;
  };
  auto both = Create(pod(true, true));
  ASSERT_FALSE(both.ok());
  ASSERT_EQ(both.status().causes().size(), 1u) << both.status().ToString();
  EXPECT_EQ(both.status().causes()[0].field + ": " + both.status().causes()[0].message,
            "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared");
  EXPECT_TRUE(Create(pod(true, false)).ok());
  EXPECT_TRUE(Create(pod(false, true)).ok());
}

// The container name that let the node agent write outside the pod directory, and every
// other name a path could be built from.
TEST(PodValidationTest, ContainerAndVolumeNamesAreDns1123Labels) {
  EXPECT_EQ(Errors(json::parse(R"({"containers":[{"name":"../../../../tmp/x","image":"x"}]})")),
            std::vector<std::string>{std::string("spec.containers[0].name: Invalid value: \"../../../../tmp/x\": ") +
                                     kDns1123LabelMessage});
  EXPECT_EQ(Errors(json::parse(R"({"containers":[{"name":"c","image":"x"}],
                                   "initContainers":[{"name":"Init_1","image":"x"}]})")),
            std::vector<std::string>{std::string("spec.initContainers[0].name: Invalid value: \"Init_1\": ") +
                                     kDns1123LabelMessage});
  EXPECT_EQ(
      Errors(json::parse(R"({"containers":[{"name":"a.b","image":"x"}],"volumes":[{"name":"../v","emptyDir":{}}]})")),
      (std::vector<std::string>{std::string("spec.volumes[0].name: Invalid value: \"../v\": ") + kDns1123LabelMessage,
                                "spec.containers[0].name: Invalid value: \"a.b\": must not contain dots"}));
  EXPECT_EQ(Errors(json::parse(R"({"containers":[{"name":")" + std::string(64, 'a') + R"(","image":"x"}]})")),
            std::vector<std::string>{"spec.containers[0].name: Invalid value: \"" + std::string(64, 'a') +
                                     "\": must be no more than 63 characters"});
  EXPECT_EQ(
      Errors(json::parse(R"({"containers":[{"name":"","image":"x"}],"volumes":[{"name":"","emptyDir":{}}]})")),
      (std::vector<std::string>{"spec.volumes[0].name: Required value", "spec.containers[0].name: Required value"}));
  EXPECT_EQ(Errors(json::parse(R"({"containers":[]})")), std::vector<std::string>{"spec.containers: Required value"});
}

// Names are unique across containers and init containers (duplicates within one list
// are the schema's, see PodsAreValidatedAtAdmission).
TEST(PodValidationTest, InitContainerMayNotReuseAContainerName) {
  EXPECT_EQ(Errors(json::parse(R"({"containers":[{"name":"main","image":"x"}],
                                   "initContainers":[{"name":"setup","image":"x"},{"name":"main","image":"x"}]})")),
            std::vector<std::string>{"spec.initContainers[1].name: Duplicate value: \"main\""});
}

TEST(PodValidationTest, EnvNamesArePrintableAsciiWithoutEquals) {
  const std::string msg =
      "a valid environment variable name must consist only of printable ASCII characters other than '='";
  EXPECT_EQ(Errors(json::parse(R"({"containers":[{"name":"c","image":"x",
      "env":[{"name":"A=B","value":"1"},{"name":"","value":"1"},{"name":"tab\there"},{"name":"ünï"}]}]})")),
            (std::vector<std::string>{"spec.containers[0].env[0].name: Invalid value: \"A=B\": " + msg,
                                      "spec.containers[0].env[1].name: Required value",
                                      "spec.containers[0].env[2].name: Invalid value: \"tab\\there\": " + msg,
                                      "spec.containers[0].env[3].name: Invalid value: \"ünï\": " + msg}));
}

// validateVolumeMounts / validateLocalDescendingPath: a subPath or subPathExpr stays
// inside its volume. Upstream names the list, not the mount, for these two.
TEST(PodValidationTest, SubPathsAreRelativeWithoutDotDot) {
  const json spec = json::parse(R"e({
    "volumes":[{"name":"data","emptyDir":{}}],
    "containers":[{"name":"c","image":"x","volumeMounts":[
      {"name":"data","mountPath":"/a","subPath":"ok/..x/y.."},
      {"name":"data","mountPath":"/b","subPath":"x/../../y"},
      {"name":"data","mountPath":"/c","subPath":"/etc"},
      {"name":"data","mountPath":"/d","subPathExpr":"/../$(POD)"},
      {"name":"data","mountPath":"/e","subPath":"a","subPathExpr":".."}]}]})e");
  const std::string at = "spec.containers[0].volumeMounts";
  EXPECT_EQ(Errors(spec),
            (std::vector<std::string>{
                at + R"e(.subPath: Invalid value: "x/../../y": must not contain '..')e",
                at + R"e(.subPath: Invalid value: "/etc": must be a relative path)e",
                at + R"e(.subPathExpr: Invalid value: "/../$(POD)": must be a relative path)e",
                at + R"e(.subPathExpr: Invalid value: "/../$(POD)": must not contain '..')e",
                at + R"e([4].subPathExpr: Invalid value: "..": subPathExpr and subPath are mutually exclusive)e",
                at + R"e(.subPathExpr: Invalid value: "..": must not contain '..')e",
            }));
}

// Secret, ConfigMap, downwardAPI and projected items land at items[].path under the
// mount: relative, no '..' element, not starting with '..', required (validateKeyToPath).
TEST(PodValidationTest, VolumeItemPathsStayInsideTheVolume) {
  const json spec = json::parse(R"e({
    "volumes":[
      {"name":"s","secret":{"secretName":"x","items":[{"key":"a","path":"ok/a"},
                                                      {"key":"b","path":"a/../../../../tmp/pwned"}]}},
      {"name":"c","configMap":{"name":"x","items":[{"key":"a","path":"/etc/passwd"},{"key":"b"}]}},
      {"name":"p","projected":{"sources":[{"downwardAPI":{"items":[{"path":"..data",
                                                                     "fieldRef":{"fieldPath":"metadata.name"}}]}}]}}],
    "containers":[{"name":"c","image":"x"}]})e");
  EXPECT_EQ(
      Errors(spec),
      (std::vector<std::string>{
          R"e(spec.volumes[0].secret.items[1].path: Invalid value: "a/../../../../tmp/pwned": must not contain '..')e",
          R"e(spec.volumes[1].configMap.items[0].path: Invalid value: "/etc/passwd": must be a relative path)e",
          R"e(spec.volumes[1].configMap.items[1].path: Required value)e",
          // validateDownwardAPIVolumeFile reports at the source, without the item's index.
          R"e(spec.volumes[2].projected.sources[0].downwardAPI.path: Invalid value: "..data": must not start with '..')e",
      }));
}

// validateEmptyDirVolumeSource: a negative sizeLimit, disk or memory, is refused; zero and
// positive ones are not.
TEST(PodValidationTest, AnEmptyDirSizeLimitIsNotNegative) {
  const json spec = json::parse(R"e({
    "volumes":[{"name":"a","emptyDir":{"sizeLimit":"-1"}},
               {"name":"b","emptyDir":{"medium":"Memory","sizeLimit":"-1Gi"}},
               {"name":"c","emptyDir":{"sizeLimit":"0"}},
               {"name":"d","emptyDir":{"sizeLimit":"1Gi"}}],
    "containers":[{"name":"c","image":"x"}]})e");
  EXPECT_EQ(Errors(spec),
            (std::vector<std::string>{
                "spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity",
                "spec.volumes[1].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity",
            }));
}

// ValidateVolumes / validateVolumeSource: one source per volume, the rules of the sources the
// node agent implements, and a bounded number of volumes.
TEST(PodValidationTest, VolumeSourcesAsValidateVolumeSource) {
  const json spec = json::parse(R"e({
    "volumes":[
      {"name":"none"},
      {"name":"two","emptyDir":{},"hostPath":{"path":"/data"},"configMap":{"name":"c"}},
      {"name":"h1","hostPath":{"path":""}},
      {"name":"h2","hostPath":{"path":"/data/../etc","type":"Dir"}},
      {"name":"s","secret":{"secretName":"","defaultMode":4095,"items":[{"key":"","path":"k","mode":-1}]}},
      {"name":"c","configMap":{"name":"","defaultMode":511}},
      {"name":"d","downwardAPI":{"items":[{"path":"p","fieldRef":{"fieldPath":"metadata.name"},
                                           "resourceFieldRef":{"resource":"limits.cpu"}},{"path":"q"}]}},
      {"name":"p","projected":{"defaultMode":1000,"sources":[
        {"serviceAccountToken":{"path":"token","expirationSeconds":60}},
        {"serviceAccountToken":{"path":"","expirationSeconds":8589934593}},
        {"configMap":{"name":"a","items":[{"key":"k","path":"x"},{"key":"j","path":"x"}]},"secret":{"name":""}}]}}],
    "containers":[{"name":"c","image":"x"}]})e");
  const std::string modes = "must be a number between 0 and 0777 (octal), both inclusive";
  EXPECT_EQ(Errors(spec),
            (std::vector<std::string>{
                "spec.volumes[0]: Required value: must specify a volume type",
                "spec.volumes[1].hostPath: Forbidden: may not specify more than 1 volume type",
                "spec.volumes[1].configMap: Forbidden: may not specify more than 1 volume type",
                "spec.volumes[2].hostPath.path: Required value",
                R"e(spec.volumes[3].hostPath.path: Invalid value: "/data/../etc": must not contain '..')e",
                R"e(spec.volumes[3].hostPath.type: Unsupported value: "Dir": supported values: "", "BlockDevice", )e"
                R"e("CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket")e",
                "spec.volumes[4].secret.secretName: Required value",
                "spec.volumes[4].secret.defaultMode: Invalid value: 4095: " + modes,
                "spec.volumes[4].secret.items[0].key: Required value",
                "spec.volumes[4].secret.items[0].mode: Invalid value: -1: " + modes,
                "spec.volumes[5].configMap.name: Required value",
                R"e(spec.volumes[6].downwardAPI: Invalid value: "resource": fieldRef and resourceFieldRef can not be )e"
                R"e(specified simultaneously)e",
                "spec.volumes[6].downwardAPI: Required value: one of fieldRef and resourceFieldRef is required",
                "spec.volumes[7].projected.defaultMode: Invalid value: 1000: " + modes,
                "spec.volumes[7].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may "
                "not specify a duration less than 10 minutes",
                "spec.volumes[7].projected.sources[1].serviceAccountToken.expirationSeconds: Invalid value: "
                "8589934593: may not specify a duration larger than 2^32 seconds",
                "spec.volumes[7].projected.path: Required value",
                "spec.volumes[7].projected.sources[2].secret.name: Required value",
                R"e(spec.volumes[7].projected: Invalid value: "a": conflicting duplicate paths)e",
                "spec.volumes[7].projected.sources[2]: Forbidden: may not specify more than 1 volume type",
            }));
  json many = json::parse(R"({"containers":[{"name":"c","image":"x"}],"volumes":[]})");
  for (size_t i = 0; i <= kMaxPodVolumes; ++i) {
    many["volumes"].push_back({{"name", "v" + std::to_string(i)}, {"emptyDir", json::object()}});
  }
  EXPECT_EQ(Errors(many), std::vector<std::string>{"spec.volumes: Too many: 257: must have at most 256 items"});
}

// ValidateVolumeMounts: a mount names a volume that validated, has a mountPath, and no two
// mounts of a container share one.
TEST(PodValidationTest, VolumeMountsNameAVolumeAndAUniqueMountPath) {
  const json spec = json::parse(R"e({
    "volumes":[{"name":"data","emptyDir":{}},{"name":"bad"}],
    "containers":[{"name":"c","image":"x","volumeMounts":[
      {"name":"data","mountPath":"/data"},
      {"name":"data","mountPath":"/data"},
      {"name":"","mountPath":"/x"},
      {"name":"bad","mountPath":""},
      {"name":"other","mountPath":"/y"}]}]})e");
  const std::string at = "spec.containers[0].volumeMounts";
  EXPECT_EQ(Errors(spec), (std::vector<std::string>{
                              "spec.volumes[1]: Required value: must specify a volume type",
                              at + R"e([1].mountPath: Invalid value: "/data": must be unique)e",
                              at + "[2].name: Required value",
                              at + R"e([2].name: Not found: "")e",
                              at + R"e([3].name: Not found: "bad")e",
                              at + "[3].mountPath: Required value",
                              at + R"e([4].name: Not found: "other")e",
                          }));
}

TEST(PodValidationTest, ResourcesAsValidateResourceRequirements) {
  auto resources = [](const char* r) {
    return Errors(json::parse(std::string(R"({"containers":[{"name":"c","image":"x","resources":)") + r + "}]}"));
  };
  const std::string at = "spec.containers[0].resources.";
  EXPECT_EQ(resources(R"({"requests":{"cpu":"-1"}})"),
            std::vector<std::string>{at + "requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"});
  EXPECT_EQ(
      resources(R"({"requests":{"cpu":"2"},"limits":{"cpu":"1"}})"),
      std::vector<std::string>{at + "requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1"});
  EXPECT_EQ(resources(R"({"requests":{"memory":"2Gi"},"limits":{"memory":"1Gi"}})"),
            std::vector<std::string>{
                at + "requests: Invalid value: \"2Gi\": must be less than or equal to memory limit of 1Gi"});
  // Extended resources: whole numbers, request = limit, a limit when requested.
  EXPECT_EQ(resources(R"({"limits":{"nvidia.com/gpu":"500m"}})"),
            std::vector<std::string>{at + "limits[nvidia.com/gpu]: Invalid value: \"500m\": must be an integer"});
  EXPECT_EQ(
      resources(R"({"requests":{"nvidia.com/gpu":1},"limits":{"nvidia.com/gpu":2}})"),
      std::vector<std::string>{at + "requests: Invalid value: \"1\": must be equal to nvidia.com/gpu limit of 2"});
  EXPECT_EQ(
      resources(R"({"requests":{"nvidia.com/gpu":1}})"),
      std::vector<std::string>{at + "limits: Required value: Limit must be set for non overcommitable resources"});
  EXPECT_EQ(resources(R"({"requests":{"example.com/dev":"-1"},"limits":{"example.com/dev":"-1"}})"),
            (std::vector<std::string>{
                at + "limits[example.com/dev]: Invalid value: \"-1\": must be greater than or equal to 0",
                at + "requests[example.com/dev]: Invalid value: \"-1\": must be greater than or equal to 0"}));
  // Native resources overcommit: a request below its limit is fine.
  EXPECT_TRUE(resources(R"({"requests":{"cpu":"100m"},"limits":{"cpu":"1"}})").empty());
}

// Through admission: the 422 as kubectl prints it, for a Pod and for every pod template
// berth stores.
TEST(PodValidationTest, PodsAndEveryPodTemplateAreValidatedAtAdmission) {
  const std::string bad = R"([{"name":"../../../../tmp/x","image":"x"}])";
  const std::string detail = std::string(": Invalid value: \"../../../../tmp/x\": ") + kDns1123LabelMessage;
  struct Case {
    std::string object;
    std::string want;
  };
  const Case cases[] = {
      {R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
           "spec":{"containers":)" +
           bad + "}}",
       "Pod \"p\" is invalid: spec.containers[0].name" + detail},
      {R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default","uid":"u"},
           "spec":{"template":{"spec":{"restartPolicy":"Never","containers":)" +
           bad + "}}}}",
       "Job.batch \"j\" is invalid: spec.template.spec.containers[0].name" + detail},
      {R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"js","namespace":"default"},
           "spec":{"replicatedJobs":[{"name":"w","template":{"spec":{"template":{"spec":{"containers":)" +
           bad + "}}}}}]}}",
       "JobSet.jobset.x-k8s.io \"js\" is invalid: "
       "spec.replicatedJobs[0].template.spec.template.spec.containers[0].name" +
           detail},
      {R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"pt","namespace":"default"},
           "spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"spec":{"containers":)" +
           bad + "}}}}}}",
       "PyTorchJob.kubeflow.org \"pt\" is invalid: spec.pytorchReplicaSpecs[Master].template.spec.containers[0].name" +
           detail},
      {R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"ClusterTrainingRuntime","metadata":{"name":"rt"},
           "spec":{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"spec":
           {"containers":)" +
           bad + "}}}}}]}}}}",
       "ClusterTrainingRuntime.trainer.kubeflow.org \"rt\" is invalid: "
       "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers[0].name" +
           detail},
  };
  for (const Case& c : cases) {
    auto admitted = Create(json::parse(c.object));
    ASSERT_FALSE(admitted.ok()) << c.want;
    EXPECT_EQ(admitted.status().code(), Code::kInvalid);
    EXPECT_EQ(admitted.status().message(), c.want);
  }
  // Two containers of one name: the schema's list-map Duplicate.
  auto dup = Create(json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
      "spec":{"containers":[{"name":"c","image":"x"},{"name":"c","image":"y"}]}})"));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(), "Pod \"p\" is invalid: spec.containers[1]: Duplicate value: {\"name\":\"c\"}");
}

// Every pod template's labels and annotations are validated where it is written, as
// upstream's ValidatePodTemplateSpec does (at <template>.labels): a template whose pods
// could never be created (their labels are the template's) is refused at once rather than
// retried forever by its controller. A Job's generated job-name labels carry its name, so
// a Job named with 64 characters is refused too.
TEST(PodValidationTest, EveryPodTemplatesLabelsAndAnnotationsAreValidatedAtAdmission) {
  const std::string long_value(64, 'a');
  const std::string labels = R"({"labels":{"team":")" + long_value + R"("}})";
  const std::string too_long = ".labels: Invalid value: \"" + long_value + "\": must be no more than 63 characters";
  struct Case {
    std::string object;
    std::string want;
  };
  const Case cases[] = {
      {R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default"},
           "spec":{"template":{"metadata":)" +
           labels + R"(,"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}}})",
       // SetDefaults_Job gives the Job its template's labels: both are reported, as upstream.
       "Job.batch \"j\" is invalid: [metadata" + too_long + ", spec.template" + too_long + "]"},
      {R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"js","namespace":"default"},
           "spec":{"replicatedJobs":[{"name":"w","template":{"spec":{"template":{"metadata":)" +
           labels + R"(,"spec":{"containers":[{"name":"c","image":"x"}]}}}}}]}})",
       "JobSet.jobset.x-k8s.io \"js\" is invalid: spec.replicatedJobs[0].template.spec.template" + too_long},
      {R"({"apiVersion":"kubeflow.org/v1","kind":"PyTorchJob","metadata":{"name":"pt","namespace":"default"},
           "spec":{"pytorchReplicaSpecs":{"Master":{"replicas":1,"template":{"metadata":)" +
           labels + R"(,"spec":{"containers":[{"name":"c","image":"x"}]}}}}}})",
       "PyTorchJob.kubeflow.org \"pt\" is invalid: spec.pytorchReplicaSpecs[Master].template" + too_long},
      {R"({"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"ClusterTrainingRuntime","metadata":{"name":"rt"},
           "spec":{"template":{"spec":{"replicatedJobs":[{"name":"node","template":{"spec":{"template":{"metadata":)" +
           labels + R"(,"spec":{"containers":[{"name":"c","image":"x"}]}}}}}]}}}})",
       "ClusterTrainingRuntime.trainer.kubeflow.org \"rt\" is invalid: "
       "spec.template.spec.replicatedJobs[0].template.spec.template" +
           too_long},
  };
  for (const Case& c : cases) {
    auto admitted = Create(json::parse(c.object));
    ASSERT_FALSE(admitted.ok()) << c.want;
    EXPECT_EQ(admitted.status().code(), Code::kInvalid);
    EXPECT_EQ(admitted.status().message(), c.want);
  }
  // Annotations: the same path rule (a key that is not a qualified name).
  auto annotated =
      Create(json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default"},
      "spec":{"template":{"metadata":{"annotations":{"bad key!":"v"}},
      "spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}}})"));
  ASSERT_FALSE(annotated.ok());
  ASSERT_FALSE(annotated.status().causes().empty());
  EXPECT_EQ(annotated.status().causes().front().field, "spec.template.annotations");
  // A Job named with 64 characters: both generated job-name labels are refused.
  auto named = Create(json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" + long_value +
                                  R"(","namespace":"default"},"spec":{"template":{"spec":{"restartPolicy":"Never",
      "containers":[{"name":"c","image":"x"}]}}}})"));
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().code(), Code::kInvalid);
  ASSERT_EQ(named.status().causes().size(), 2u) << named.status().message();
  for (const auto& cause : named.status().causes()) {
    EXPECT_EQ(cause.field, "spec.template.labels");
    EXPECT_EQ(cause.message, "Invalid value: \"" + long_value + "\": must be no more than 63 characters");
  }
  // 63 characters are fine.
  EXPECT_TRUE(Create(json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" +
                                 std::string(63, 'a') + R"(","namespace":"default"},"spec":{"template":{"spec":
      {"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}}})"))
                  .ok());
}

// A pod or pod template without a spec has no containers: validateContainers' Required,
// as for an empty list (found by the admission fuzzer: such a Job was admitted, and then
// refused as an unchanged update).
TEST(PodValidationTest, APodSpecThatIsMissingHasNoContainers) {
  struct Case {
    std::string object;
    std::string want;
  };
  const Case cases[] = {
      {R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"}})",
       "Pod \"p\" is invalid: spec.containers: Required value"},
      {R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default","uid":"u"},
           "spec":{"suspend":true,"template":{"metadata":{"labels":null}}}})",
       "Job.batch \"j\" is invalid: [spec.template.spec.containers: Required value, "
       "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"]"},
      {R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet","metadata":{"name":"js","namespace":"default"},
           "spec":{"replicatedJobs":[{"name":"w","template":{"spec":{"template":{}}}}]}})",
       "JobSet.jobset.x-k8s.io \"js\" is invalid: spec.replicatedJobs[0].template.spec.template.spec.containers: "
       "Required value"},
  };
  for (const Case& c : cases) {
    auto admitted = Create(json::parse(c.object));
    ASSERT_FALSE(admitted.ok()) << c.want;
    EXPECT_EQ(admitted.status().code(), Code::kInvalid);
    EXPECT_EQ(admitted.status().message(), c.want);
  }
}

// ValidatePodUpdate: a pod's spec may change only where upstream allows it (an attacker
// lowered a running pod's CPU request to fit a second pod on its node, moved its
// nodeName, and removed its restartPolicy with a $retainKeys patch).
TEST(PodValidationTest, APodsSpecChangesOnlyWhereUpstreamAllows) {
  AdmissionPipeline pipeline(Registry::Default(), StrategyRegistry::Default());
  auto create = [&](const json& spec) {
    WriteRequest wr;
    wr.object = {
        {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}, {"namespace", "default"}}}, {"spec", spec}};
    auto admitted = pipeline.Admit(std::move(wr));
    EXPECT_TRUE(admitted.ok()) << admitted.status().ToString();
    return admitted->object;
  };
  const json unbound = json::parse(R"({"restartPolicy":"Never","activeDeadlineSeconds":100,
      "tolerations":[{"key":"a","operator":"Exists"}],
      "containers":[{"name":"c","image":"x","command":["sleep","1"],"resources":{"requests":{"cpu":"1500m"}}}]})");
  json bound_spec = unbound;
  bound_spec["nodeName"] = "node-0";
  const json pending = create(unbound), running = create(bound_spec);
  auto update = [&](const json& old, const std::function<void(json*)>& change) -> std::string {
    WriteRequest wr;
    wr.operation = Operation::kUpdate;
    wr.object = old;
    change(&wr.object);
    wr.old = &old;
    auto admitted = pipeline.Admit(std::move(wr));
    return admitted.ok() ? "" : admitted.status().message();
  };
  const std::string forbidden =
      "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than "
      "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
      "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
      "was previously negative)\nchanged: ";
  // Allowed.
  EXPECT_EQ(update(running, [](json* p) { (*p)["spec"]["containers"][0]["image"] = "y"; }), "");
  EXPECT_EQ(update(running, [](json* p) { (*p)["spec"]["activeDeadlineSeconds"] = 50; }), "");
  EXPECT_EQ(update(running, [](json* p) { (*p)["spec"]["tolerations"].push_back({{"key", "b"}}); }), "");
  EXPECT_EQ(update(pending, [](json* p) { (*p)["spec"]["nodeName"] = "node-1"; }), "");  // binding
  EXPECT_EQ(update(running, [](json* p) { (*p)["metadata"]["labels"] = {{"a", "b"}}; }), "");
  // Refused, naming what changed.
  EXPECT_EQ(update(running, [](json* p) { (*p)["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "10m"; }),
            forbidden + "spec.containers[0].resources.requests.cpu");
  EXPECT_EQ(update(running, [](json* p) { (*p)["spec"]["nodeName"] = "node-7"; }), forbidden + "spec.nodeName");
  EXPECT_EQ(update(running,
                   [](json* p) {
                     (*p)["spec"]["hostname"] = "evil";
                     (*p)["spec"]["containers"][0]["command"] = {"sh", "-c", "echo changed"};
                   }),
            forbidden + "spec.containers[0].command spec.hostname");
  EXPECT_EQ(update(running, [](json* p) { (*p)["spec"].erase("restartPolicy"); }), forbidden + "spec.restartPolicy");
  EXPECT_EQ(update(running, [](json* p) { (*p)["spec"]["activeDeadlineSeconds"] = 200; }),
            forbidden + "spec.activeDeadlineSeconds");
  EXPECT_EQ(update(running, [](json* p) { (*p)["spec"]["tolerations"] = json::array(); }),
            forbidden + "spec.tolerations");
}

// JobSet's onJobFailureMessagePatterns compile with Go's regexp syntax, or the JobSet is
// refused (upstream skips such a pattern when it matches, so the rule never applies).
TEST(PodValidationTest, JobSetMessagePatternsMustCompile) {
  auto jobset = [](const char* patterns) {
    return json::parse(std::string(R"({"apiVersion":"jobset.x-k8s.io/v1alpha2","kind":"JobSet",
        "metadata":{"name":"js","namespace":"default"},
        "spec":{"failurePolicy":{"maxRestarts":1,"rules":[{"name":"r","action":"FailJobSet",
                "onJobFailureMessagePatterns":)") +
                       patterns + R"(}]},
                "replicatedJobs":[{"name":"w","template":{"spec":{"template":{"spec":
                  {"containers":[{"name":"c","image":"x"}]}}}}}]}})");
  };
  EXPECT_TRUE(Create(jobset(R"(["matching FailJob rule at index 0$", "(?i)node .* not ready"])")).ok());
  auto bad = Create(jobset(R"js(["ok", "(unclosed", "a**", "(?<=lookbehind)"])js"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "JobSet.jobset.x-k8s.io \"js\" is invalid: ["
            "spec.failurePolicy.rules[0].onJobFailureMessagePatterns[1]: Invalid value: \"(unclosed\": "
            "error parsing regexp: missing closing ): `(unclosed`, "
            "spec.failurePolicy.rules[0].onJobFailureMessagePatterns[2]: Invalid value: \"a**\": "
            "error parsing regexp: invalid nested repetition operator: `**`, "
            "spec.failurePolicy.rules[0].onJobFailureMessagePatterns[3]: Invalid value: \"(?<=lookbehind)\": "
            "error parsing regexp: invalid or unsupported Perl syntax: `(?<`]");
}

// ValidatePodSecurityContext / ValidateSecurityContext: every id in [0, 2147483647], pod
// and container level, at its field path.
TEST(PodValidationTest, SecurityContextIdsAreBetweenZeroAndMaxInt32) {
  EXPECT_EQ(Errors(json::parse(R"({"securityContext":{"runAsUser":-1,"runAsGroup":2147483648,"fsGroup":-5,
                                     "supplementalGroups":[0,2147483647,4294967295]},
                                   "containers":[{"name":"c","image":"x",
                                     "securityContext":{"runAsUser":2147483648,"runAsGroup":-1}}]})")),
            (std::vector<std::string>{
                "spec.containers[0].securityContext.runAsUser: Invalid value: 2147483648: must be between 0 and "
                "2147483647, inclusive",
                "spec.containers[0].securityContext.runAsGroup: Invalid value: -1: must be between 0 and 2147483647, "
                "inclusive",
                "spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive",
                "spec.securityContext.runAsGroup: Invalid value: 2147483648: must be between 0 and 2147483647, "
                "inclusive",
                "spec.securityContext.fsGroup: Invalid value: -5: must be between 0 and 2147483647, inclusive",
                "spec.securityContext.supplementalGroups[2]: Invalid value: 4294967295: must be between 0 and "
                "2147483647, inclusive"}));
  EXPECT_TRUE(Errors(json::parse(R"({"securityContext":{"runAsUser":0,"runAsGroup":2147483647,"fsGroup":1,
                                       "supplementalGroups":[42]},
                                     "initContainers":[{"name":"i","image":"x","securityContext":{"runAsUser":7}}],
                                     "containers":[{"name":"c","image":"x"}]})"))
                  .empty());
  auto admitted = Create(json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
      "spec":{"containers":[{"name":"c","image":"x","securityContext":{"runAsUser":-1}}]}})"));
  ASSERT_FALSE(admitted.ok());
  EXPECT_EQ(admitted.status().code(), Code::kInvalid);
  EXPECT_EQ(admitted.status().message(),
            "Pod \"p\" is invalid: spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 "
            "and 2147483647, inclusive");
}

// A spec whose container `c` (in `list`: "containers", or "initContainers" as a sidecar,
// restartPolicy Always, beside a regular container) has `field` set to `value`.
json WithContainerField(const std::string& list, const std::string& field, const json& value) {
  json spec = json::parse(R"({"containers":[{"name":"main","image":"x"}]})");
  json c = {{"name", "c"}, {"image", "x"}, {field, value}};
  if (list == "initContainers") {
    c["restartPolicy"] = "Always";
    spec["initContainers"] = json::array({c});
  } else {
    spec["containers"][0] = c;
  }
  return spec;
}

// validateLifecycle / validateHandler: each hook names exactly one of exec, httpGet,
// tcpSocket and sleep, in containers and sidecars, at upstream's paths.
TEST(PodValidationTest, LifecycleHooksHaveExactlyOneHandler) {
  for (const std::string list : {"containers", "initContainers"}) {
    for (const std::string hook : {"postStart", "preStop"}) {
      const std::string at = "spec." + list + "[0].lifecycle." + hook;
      auto errors = [&](const char* handler) {
        return Errors(WithContainerField(list, "lifecycle", {{hook, json::parse(handler)}}));
      };
      EXPECT_EQ(errors("{}"), std::vector<std::string>{at + ": Required value: must specify a handler type"});
      EXPECT_TRUE(errors(R"({"exec":{"command":["true"]}})").empty()) << at;
      EXPECT_TRUE(errors(R"({"httpGet":{"port":8080,"path":"/quit"}})").empty()) << at;
      EXPECT_TRUE(errors(R"({"tcpSocket":{"port":"http-alt"}})").empty()) << at;
      EXPECT_TRUE(errors(R"({"sleep":{"seconds":5}})").empty()) << at;
      EXPECT_EQ(errors(R"({"sleep":{"seconds":5},"exec":{"command":["true"]}})"),
                std::vector<std::string>{at + ".sleep: Forbidden: may not specify more than 1 handler type"});
      EXPECT_EQ(errors(R"({"tcpSocket":{"port":80},"httpGet":{"port":80},"exec":{"command":["true"]}})"),
                (std::vector<std::string>{at + ".httpGet: Forbidden: may not specify more than 1 handler type",
                                          at + ".tcpSocket: Forbidden: may not specify more than 1 handler type"}));
      // A probe's grpc is no lifecycle handler (LifecycleHandler has none).
      EXPECT_EQ(errors(R"({"grpc":{"port":9000}})"),
                std::vector<std::string>{at + ": Required value: must specify a handler type"});
    }
  }
  // The first handler's own rules: exec.command, the port (number or IANA_SVC_NAME), the
  // httpGet scheme and header names.
  auto pre_stop = [](const char* handler) {
    return Errors(WithContainerField("containers", "lifecycle", {{"preStop", json::parse(handler)}}));
  };
  const std::string at = "spec.containers[0].lifecycle.preStop";
  EXPECT_EQ(pre_stop(R"({"exec":{}})"), std::vector<std::string>{at + ".exec.command: Required value"});
  EXPECT_EQ(pre_stop(R"({"exec":{"command":[]}})"), std::vector<std::string>{at + ".exec.command: Required value"});
  EXPECT_EQ(pre_stop(R"({"tcpSocket":{"port":0}})"),
            std::vector<std::string>{at + ".tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive"});
  EXPECT_EQ(pre_stop(R"({"tcpSocket":{}})"),
            std::vector<std::string>{at + ".tcpSocket.port: Invalid value: 0: must be between 1 and 65535, inclusive"});
  EXPECT_TRUE(pre_stop(R"({"tcpSocket":{"port":65535}})").empty());
  EXPECT_EQ(
      pre_stop(R"({"httpGet":{"port":65536}})"),
      std::vector<std::string>{at + ".httpGet.port: Invalid value: 65536: must be between 1 and 65535, inclusive"});
  EXPECT_EQ(
      pre_stop(R"({"httpGet":{"port":"8080"}})"),
      std::vector<std::string>{at + ".httpGet.port: Invalid value: \"8080\": must contain at least one letter (a-z)"});
  EXPECT_EQ(pre_stop(R"({"tcpSocket":{"port":"-Web--server-port-"}})"),
            (std::vector<std::string>{
                at + ".tcpSocket.port: Invalid value: \"-Web--server-port-\": must be no more than 15 characters",
                at + ".tcpSocket.port: Invalid value: \"-Web--server-port-\": must contain only alpha-numeric "
                     "characters (a-z, 0-9), and hyphens (-)",
                at + ".tcpSocket.port: Invalid value: \"-Web--server-port-\": must not contain consecutive hyphens",
                at + ".tcpSocket.port: Invalid value: \"-Web--server-port-\": must not begin or end with a hyphen"}));
  EXPECT_EQ(pre_stop(R"({"httpGet":{"port":80,"scheme":"FTP","httpHeaders":[{"name":"X-Ok","value":"1"},
                                                                          {"name":"Bad Header","value":"2"}]}})"),
            (std::vector<std::string>{
                at + ".httpGet.scheme: Unsupported value: \"FTP\": supported values: \"HTTP\", \"HTTPS\"",
                at + ".httpGet.httpHeaders: Invalid value: \"Bad Header\": a valid HTTP header must consist of "
                     "alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is "
                     "'[-A-Za-z0-9]+')"}));
  EXPECT_TRUE(pre_stop(R"({"httpGet":{"port":80,"scheme":"HTTPS","path":"/stop"}})").empty());
  // An empty lifecycle, or a hook that is null, has nothing to check.
  EXPECT_TRUE(Errors(WithContainerField("containers", "lifecycle", json::object())).empty());
  EXPECT_TRUE(Errors(WithContainerField("containers", "lifecycle", {{"preStop", nullptr}})).empty());
}

// validateSleepAction (PodLifecycleSleepActionAllowZero off, as in 1.32): 0 < seconds <=
// terminationGracePeriodSeconds, 30 when the spec has none, at the sleep action's path.
TEST(PodValidationTest, SleepHooksLastAtMostTheGracePeriod) {
  auto errors = [](const json& seconds, const json& grace) {
    json spec = WithContainerField("containers", "lifecycle", {{"preStop", {{"sleep", {{"seconds", seconds}}}}}});
    if (!grace.is_null()) spec["terminationGracePeriodSeconds"] = grace;
    return Errors(spec);
  };
  auto refused = [](const std::string& seconds, const std::string& grace) {
    return std::vector<std::string>{"spec.containers[0].lifecycle.preStop.sleep: Invalid value: " + seconds +
                                    ": must be greater than 0 and less than terminationGracePeriodSeconds (" + grace +
                                    "). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."};
  };
  // No terminationGracePeriodSeconds: upstream's default, 30.
  EXPECT_EQ(errors(0, nullptr), refused("0", "30"));
  EXPECT_TRUE(errors(1, nullptr).empty());
  EXPECT_TRUE(errors(30, nullptr).empty());
  EXPECT_EQ(errors(31, nullptr), refused("31", "30"));
  EXPECT_EQ(errors(100, nullptr), refused("100", "30"));
  EXPECT_EQ(errors(-1, nullptr), refused("-1", "30"));
  // The pod's own grace period.
  EXPECT_EQ(errors(0, 120), refused("0", "120"));
  EXPECT_TRUE(errors(1, 120).empty());
  EXPECT_TRUE(errors(120, 120).empty());
  EXPECT_EQ(errors(121, 120), refused("121", "120"));
  EXPECT_EQ(errors(1, 0), refused("1", "0"));
  // No seconds at all is Go's zero value.
  EXPECT_EQ(Errors(WithContainerField("containers", "lifecycle", {{"postStart", {{"sleep", json::object()}}}})),
            std::vector<std::string>{"spec.containers[0].lifecycle.postStart.sleep: Invalid value: 0: must be greater "
                                     "than 0 and less than terminationGracePeriodSeconds (30). Enable "
                                     "AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."});
  // A sidecar's sleep has the same bound.
  json sidecar = WithContainerField("initContainers", "lifecycle", {{"preStop", {{"sleep", {{"seconds", 11}}}}}});
  sidecar["terminationGracePeriodSeconds"] = 10;
  EXPECT_EQ(Errors(sidecar),
            std::vector<std::string>{"spec.initContainers[0].lifecycle.preStop.sleep: Invalid value: 11: must be "
                                     "greater than 0 and less than terminationGracePeriodSeconds (10). Enable "
                                     "AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."});
}

// validateProbe: one handler among exec, httpGet, tcpSocket and grpc, for each probe kind in
// containers and sidecars.
TEST(PodValidationTest, ProbesHaveExactlyOneHandler) {
  for (const std::string list : {"containers", "initContainers"}) {
    for (const std::string probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
      const std::string at = "spec." + list + "[0]." + probe;
      auto errors = [&](const char* p) { return Errors(WithContainerField(list, probe, json::parse(p))); };
      EXPECT_EQ(errors(R"({"periodSeconds":5})"),
                std::vector<std::string>{at + ": Required value: must specify a handler type"});
      EXPECT_TRUE(errors(R"({"exec":{"command":["true"]},"periodSeconds":5})").empty()) << at;
      EXPECT_TRUE(errors(R"({"httpGet":{"port":"http"}})").empty()) << at;
      EXPECT_TRUE(errors(R"({"tcpSocket":{"port":8080}})").empty()) << at;
      EXPECT_TRUE(errors(R"({"grpc":{"port":9000}})").empty()) << at;
      EXPECT_EQ(errors(R"({"exec":{"command":["true"]},"grpc":{"port":9000}})"),
                std::vector<std::string>{at + ".grpc: Forbidden: may not specify more than 1 handler type"});
      EXPECT_EQ(errors(R"({"httpGet":{"port":80},"tcpSocket":{"port":80}})"),
                std::vector<std::string>{at + ".tcpSocket: Forbidden: may not specify more than 1 handler type"});
      // A lifecycle hook's sleep is no probe handler (ProbeHandler has none).
      EXPECT_EQ(errors(R"({"sleep":{"seconds":1}})"),
                std::vector<std::string>{at + ": Required value: must specify a handler type"});
    }
  }
  auto liveness = [](const char* p) {
    return Errors(WithContainerField("containers", "livenessProbe", json::parse(p)));
  };
  EXPECT_EQ(
      liveness(R"({"grpc":{"port":0}})"),
      std::vector<std::string>{
          "spec.containers[0].livenessProbe.grpc.port: Invalid value: 0: must be between 1 and 65535, inclusive"});
  EXPECT_EQ(liveness(R"({"exec":{"command":[]}})"),
            std::vector<std::string>{"spec.containers[0].livenessProbe.exec.command: Required value"});
}

// validateProbe's bounds and the per-kind rules (validateLivenessProbe,
// validateReadinessProbe, validateStartupProbe).
TEST(PodValidationTest, ProbeTimingsAsValidateProbe) {
  auto errors = [](const std::string& probe, const char* fields) {
    json p = json::parse(fields);
    p["tcpSocket"] = {{"port", 80}};
    return Errors(WithContainerField("containers", probe, p));
  };
  for (const std::string probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    const std::string at = "spec.containers[0]." + probe;
    EXPECT_EQ(
        errors(probe, R"({"initialDelaySeconds":-1,"timeoutSeconds":-2,"periodSeconds":-3,
                                "failureThreshold":-4})"),
        (std::vector<std::string>{at + ".initialDelaySeconds: Invalid value: -1: must be greater than or equal to 0",
                                  at + ".timeoutSeconds: Invalid value: -2: must be greater than or equal to 0",
                                  at + ".periodSeconds: Invalid value: -3: must be greater than or equal to 0",
                                  at + ".failureThreshold: Invalid value: -4: must be greater than or equal to 0"}));
    // 0 is upstream's "unset": defaulted before validation.
    EXPECT_TRUE(errors(probe, R"({"initialDelaySeconds":0,"timeoutSeconds":0,"periodSeconds":0,
                                  "successThreshold":0,"failureThreshold":0})")
                    .empty())
        << at;
    EXPECT_TRUE(errors(probe, R"({"initialDelaySeconds":10,"timeoutSeconds":1,"periodSeconds":10,
                                  "successThreshold":1,"failureThreshold":3})")
                    .empty())
        << at;
  }
  // successThreshold: any non-negative value for readiness, only 1 for liveness and startup.
  EXPECT_TRUE(errors("readinessProbe", R"({"successThreshold":3})").empty());
  EXPECT_EQ(errors("readinessProbe", R"({"successThreshold":-1})"),
            std::vector<std::string>{
                "spec.containers[0].readinessProbe.successThreshold: Invalid value: -1: must be greater than or "
                "equal to 0"});
  for (const std::string probe : {"livenessProbe", "startupProbe"}) {
    const std::string at = "spec.containers[0]." + probe + ".successThreshold: Invalid value: ";
    EXPECT_EQ(errors(probe, R"({"successThreshold":2})"), std::vector<std::string>{at + "2: must be 1"});
    EXPECT_EQ(errors(probe, R"({"successThreshold":-1})"),
              (std::vector<std::string>{at + "-1: must be greater than or equal to 0", at + "-1: must be 1"}));
  }
  // A probe's own terminationGracePeriodSeconds: positive, and never on a readiness probe.
  for (const std::string probe : {"livenessProbe", "startupProbe"}) {
    const std::string at = "spec.containers[0]." + probe + ".terminationGracePeriodSeconds: Invalid value: ";
    EXPECT_EQ(errors(probe, R"({"terminationGracePeriodSeconds":0})"),
              std::vector<std::string>{at + "0: must be greater than 0"});
    EXPECT_EQ(errors(probe, R"({"terminationGracePeriodSeconds":-5})"),
              std::vector<std::string>{at + "-5: must be greater than 0"});
    EXPECT_TRUE(errors(probe, R"({"terminationGracePeriodSeconds":1})").empty());
  }
  EXPECT_EQ(errors("readinessProbe", R"({"terminationGracePeriodSeconds":10})"),
            std::vector<std::string>{"spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: "
                                     "10: must not be set for readinessProbes"});
  EXPECT_EQ(errors("readinessProbe", R"({"terminationGracePeriodSeconds":0})"),
            (std::vector<std::string>{
                "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater "
                "than 0",
                "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 0: must not be set "
                "for readinessProbes"}));
}

// validateInitContainers: an init container that is not a sidecar (restartPolicy Always)
// may have no lifecycle hooks or probes, valid or not.
TEST(PodValidationTest, InitContainersWithoutRestartPolicyAlwaysHaveNoHooksOrProbes) {
  json spec = json::parse(R"({"containers":[{"name":"main","image":"x"}],
      "initContainers":[{"name":"i","image":"x",
        "lifecycle":{"preStop":{"sleep":{"seconds":1}}},
        "livenessProbe":{"exec":{"command":["true"]}},
        "readinessProbe":{},
        "startupProbe":{"tcpSocket":{"port":80}}}]})");
  const std::string forbidden = ": Forbidden: may not be set for init containers without restartPolicy=Always";
  const std::vector<std::string> want = {
      "spec.initContainers[0].lifecycle" + forbidden, "spec.initContainers[0].livenessProbe" + forbidden,
      "spec.initContainers[0].readinessProbe" + forbidden, "spec.initContainers[0].startupProbe" + forbidden};
  EXPECT_EQ(Errors(spec), want);
  // Another policy is refused (validateInitContainerRestartPolicy) and is no sidecar.
  spec["initContainers"][0]["restartPolicy"] = "Never";
  std::vector<std::string> with_policy = {
      "spec.initContainers[0].restartPolicy: Unsupported value: \"Never\": supported values: \"Always\""};
  with_policy.insert(with_policy.end(), want.begin(), want.end());
  EXPECT_EQ(Errors(spec), with_policy);
  // As a sidecar the same fields are validated: only the empty readiness probe is wrong.
  spec["initContainers"][0]["restartPolicy"] = "Always";
  EXPECT_EQ(Errors(spec), std::vector<std::string>{
                              "spec.initContainers[0].readinessProbe: Required value: must specify a handler type"});
  spec["initContainers"][0].erase("readinessProbe");
  EXPECT_TRUE(Errors(spec).empty());
  // Without hooks or probes an init container needs no restartPolicy.
  EXPECT_TRUE(Errors(json::parse(R"({"containers":[{"name":"main","image":"x"}],
                                     "initContainers":[{"name":"i","image":"x"}]})"))
                  .empty());
}

// ValidatePodSpec: activeDeadlineSeconds in [1, math.MaxInt32], for a pod and a pod template
// (a Job's own spec.activeDeadlineSeconds keeps its rule).
TEST(PodValidationTest, ActiveDeadlineSecondsIsBetweenOneAndMaxInt32) {
  auto errors = [](const json& deadline) {
    json spec = json::parse(R"({"containers":[{"name":"c","image":"x"}]})");
    spec["activeDeadlineSeconds"] = deadline;
    return Errors(spec);
  };
  const std::string msg = ": must be between 1 and 2147483647, inclusive";
  EXPECT_EQ(errors(0), std::vector<std::string>{"spec.activeDeadlineSeconds: Invalid value: 0" + msg});
  EXPECT_EQ(errors(-7), std::vector<std::string>{"spec.activeDeadlineSeconds: Invalid value: -7" + msg});
  EXPECT_TRUE(errors(1).empty());
  EXPECT_TRUE(errors(2147483647).empty());
  EXPECT_EQ(errors(2147483648LL),
            std::vector<std::string>{"spec.activeDeadlineSeconds: Invalid value: 2147483648" + msg});
  EXPECT_TRUE(errors(nullptr).empty());

  auto pod = Create(json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
      "spec":{"activeDeadlineSeconds":0,"containers":[{"name":"c","image":"x"}]}})"));
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), Code::kInvalid);
  EXPECT_EQ(pod.status().message(), "Pod \"p\" is invalid: spec.activeDeadlineSeconds: Invalid value: 0" + msg);
  auto job = [](int64_t job_deadline, int64_t pod_deadline) {
    json j = json::parse(R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"default",
        "uid":"u"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"x"}]}}}})");
    j["spec"]["activeDeadlineSeconds"] = job_deadline;
    j["spec"]["template"]["spec"]["activeDeadlineSeconds"] = pod_deadline;
    return Create(j);
  };
  auto bad_template = job(60, 2147483648LL);
  ASSERT_FALSE(bad_template.ok());
  EXPECT_EQ(bad_template.status().message(),
            "Job.batch \"j\" is invalid: spec.template.spec.activeDeadlineSeconds: Invalid value: 2147483648" + msg);
  EXPECT_TRUE(job(2147483648LL, 60).ok()) << job(2147483648LL, 60).status().ToString();
}

// Through admission: a sleep hook beyond the default grace period, as kubectl shows it.
TEST(PodValidationTest, ASleepHookBeyondTheGracePeriodIsRefusedAtAdmission) {
  auto admitted = Create(json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
      "spec":{"containers":[{"name":"c","image":"x","lifecycle":{"preStop":{"sleep":{"seconds":100}}}}]}})"));
  ASSERT_FALSE(admitted.ok());
  EXPECT_EQ(admitted.status().code(), Code::kInvalid);
  EXPECT_EQ(admitted.status().message(),
            "Pod \"p\" is invalid: spec.containers[0].lifecycle.preStop.sleep: Invalid value: 100: must be greater "
            "than 0 and less than terminationGracePeriodSeconds (30). Enable AllowPodLifecycleSleepActionZeroValue "
            "feature gate for zero sleep.");
}

}  // namespace
}  // namespace berth::api
