// SeedManifests: every manifest of ../shared/seeds/*.txt (found through
// BERTH_SOURCE_DIR, set by berth_test) goes through the full write pipeline
// (YAML decoding, then api::AdmissionPipeline as a create with fieldValidation=Strict,
// as `kubectl apply` sends it) and must have the outcome the table below records.
//
// The table lists every extracted manifest by (seed file, line) exactly once:
//   kComplete  a whole manifest of a kind berth serves: it must be accepted.
//   kExcerpt   an intentional fragment of the prose (the column says why); `error` is the
//              substring the pipeline's error must contain, or "" when berth accepts the
//              excerpt as written (the schema cannot see what the prose left out).
//   kNotServed a kind berth does not serve (Volcano, admissionregistration): the error
//              must be kubectl's `no matches for kind "<Kind>" in version "<apiVersion>"`.
// A change in extraction (a manifest more or less) or in an outcome fails the test, so
// it is noticed and the table is updated deliberately.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"
#include "tests/seeds/seed_manifests.h"

namespace berth::seeds {
namespace {

using ::testing::HasSubstr;

constexpr char kIntro[] = "kubeflow-trainer-kueue-intro.ja.txt";
constexpr char kPitfalls[] = "kueue-priorityclass-pitfalls.ja.txt";

enum class Category { kComplete, kExcerpt, kNotServed };

struct Expectation {
  const char* file;
  int line;
  const char* kind;    // the document's kind ("" when it has none), checked too
  Category category;
  std::string error;   // substring of the error; "" = accepted
  const char* why;     // for excerpts and kinds not served
};

constexpr Category kComplete = Category::kComplete;
constexpr Category kExcerpt = Category::kExcerpt;

// A kind berth does not serve: the error is kubectl's
// `no matches for kind "<kind>" in version "<api_version>"`.
Expectation NotServed(const char* file, int line, const char* kind, const std::string& api_version, const char* why) {
  return {file, line, kind, Category::kNotServed,
          "no matches for kind \"" + std::string(kind) + "\" in version \"" + api_version + "\"", why};
}

// Errors several excerpts share.
constexpr char kNoName[] = "metadata.name: Required value";
constexpr char kNoMasterContainers[] = "spec.pytorchReplicaSpecs.Master.template.spec.containers: Required value";
constexpr char kNoWorkerContainers[] = "spec.pytorchReplicaSpecs.Worker.template.spec.containers: Required value";
constexpr char kVolcano[] = "scheduling.volcano.sh/v1beta1";
// The training operator's webhook on a replica without a pod template.
constexpr char kNoReplicaTemplate[] =
    "spec.pytorchReplicaSpecs[Master].template.spec.containers: Required value: must be specified";

// clang-format off
const Expectation kTable[] = {
  // --- kubeflow-trainer-kueue-intro.ja.txt: appendix A, applied in order.
  {kIntro, 267, "Namespace", kComplete, "", ""},
  {kIntro, 272, "ResourceFlavor", kComplete, "", ""},
  {kIntro, 279, "ClusterQueue", kComplete, "", ""},
  {kIntro, 297, "LocalQueue", kComplete, "", ""},
  {kIntro, 309, "WorkloadPriorityClass", kComplete, "", ""},
  {kIntro, 316, "WorkloadPriorityClass", kComplete, "", ""},
  {kIntro, 325, "ClusterTrainingRuntime", kComplete, "", ""},  // v2.1 numProcPerNode: auto
  {kIntro, 356, "TrainJob", kComplete, "", ""},

  // --- kueue-priorityclass-pitfalls.ja.txt
  {kPitfalls, 97, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 116, "ClusterQueue", kExcerpt, "spec.resourceGroups[0].flavors: Required value",
   "only the preemption part: the resource group has coveredResources but no flavors"},
  {kPitfalls, 134, "PyTorchJob", kExcerpt, kNoMasterContainers,
   "only labels and priorityClassName: the pod templates have no containers"},
  {kPitfalls, 204, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 261, "WorkloadPriorityClass", kComplete, "", ""},
  {kPitfalls, 270, "PyTorchJob", kExcerpt, kNoReplicaTemplate,
   "replica counts only, no pod templates: refused as the training operator's webhook refuses it"},
  {kPitfalls, 344, "PyTorchJob", kExcerpt, kNoReplicaTemplate,
   "same excerpt as line 270, next to the Workload it turns into"},
  {kPitfalls, 359, "Workload", kExcerpt, "spec.podSets[0].template: Required value",
   "sample of the Workload Kueue generates: podSets without pod templates"},
  {kPitfalls, 414, "Pod", kExcerpt, kNoName, "sample of a created pod's priority fields: no name, no containers"},
  {kPitfalls, 429, "PyTorchJob", kExcerpt, kNoName, "pod spec excerpt: no metadata"},
  {kPitfalls, 445, "Pod", kExcerpt, "",
   "sample of a created pod: container without image (Pod validation in code would require "
   "one) and spec.priority as the server sets it; the schema accepts it"},
  {kPitfalls, 506, "Pod", kExcerpt, "spec.containers: Required value",
   "system pod excerpt: priorityClassName only, no containers"},
  {kPitfalls, 577, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 636, "ClusterQueue", kComplete, "", ""},
  {kPitfalls, 669, "PriorityClass", kExcerpt,
   "metadata.name: Invalid value: \"pytorchjob-zero-priority",
   "trap: a full-width space before '#' is not YAML whitespace, so the comment becomes "
   "part of metadata.name"},
  {kPitfalls, 683, "ClusterQueue", kComplete, "", ""},
  {kPitfalls, 879, "PyTorchJob", kComplete, "", ""},
  {kPitfalls, 941, "Pod", kComplete, "", ""},
  {kPitfalls, 1032, "PyTorchJob", kExcerpt, "",
   "applied with kubectl in the prose but its containers have no image (the training "
   "operator's webhook would reject it); the schema accepts it"},
  {kPitfalls, 1171, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 1183, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 1329, "PyTorchJob", kExcerpt, "",
   "Worker only, container without image (a comment stands for the rest); the schema "
   "accepts it"},
  {kPitfalls, 1466, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 1509, "PyTorchJob", kComplete, "", ""},
  {kPitfalls, 1605, "Pod", kComplete, "", ""},
  {kPitfalls, 1721, "PyTorchJob", kExcerpt, kNoWorkerContainers, "\"# ...\" stands for the containers"},
  {kPitfalls, 1786, "PyTorchJob", kExcerpt, kNoName, "labels and priorityClassName only: no name, no containers"},
  {kPitfalls, 1809, "PyTorchJob", kExcerpt, kNoWorkerContainers, "\"# ...\" stands for the containers"},
  {kPitfalls, 1872, "PyTorchJob", kExcerpt, kNoName, "no metadata; the point is the missing priorityClassName"},
  {kPitfalls, 1903, "PyTorchJob", kExcerpt, kNoName, "priorityClassName only: no metadata, no containers"},
  NotServed(kPitfalls, 1938, "ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1",
            "admission webhooks are not part of berth (kind-specific rules are built in)"),
  {kPitfalls, 1999, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 2022, "WorkloadPriorityClass", kComplete, "", ""},
  {kPitfalls, 2030, "WorkloadPriorityClass", kComplete, "", ""},
  {kPitfalls, 2038, "WorkloadPriorityClass", kComplete, "", ""},
  {kPitfalls, 2050, "ClusterQueue", kComplete, "", ""},
  {kPitfalls, 2077, "LocalQueue", kComplete, "", ""},
  {kPitfalls, 2090, "PyTorchJob", kComplete, "", ""},
  {kPitfalls, 2142, "PyTorchJob", kExcerpt, kNoMasterContainers,
   "\"# ... (以下同様)\" stands for the containers"},
  {kPitfalls, 2194, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 2203, "WorkloadPriorityClass", kComplete, "", ""},
  {kPitfalls, 2211, "ClusterQueue", kExcerpt, kNoName, "summary excerpt: no metadata, preemption only"},
  {kPitfalls, 2219, "PyTorchJob", kExcerpt, kNoName, "summary excerpt: no name, replica key written \"Master/Worker\""},
  {kPitfalls, 2376, "PyTorchJob", kExcerpt, "spec.pytorchReplicaSpecs: Required value",
   "runPolicy excerpt: pytorchReplicaSpecs is only a comment (null)"},
  {kPitfalls, 2414, "ClusterQueue", kComplete, "", ""},
  {kPitfalls, 2431, "ClusterQueue", kComplete, "", ""},
  {kPitfalls, 2630, "WorkloadPriorityClass", kComplete, "", ""},
  {kPitfalls, 2637, "", kExcerpt, "Object 'Kind' is missing", "second document of a comparison: only metadata.labels of a job"},
  {kPitfalls, 2644, "PriorityClass", kComplete, "", ""},
  {kPitfalls, 2652, "", kExcerpt, "Object 'Kind' is missing", "second document of a comparison: only a pod template spec"},
  NotServed(kPitfalls, 2670, "PodGroup", kVolcano, "Volcano is an alternative scheduler, not served by berth"),
  NotServed(kPitfalls, 2694, "Queue", kVolcano, "Volcano queue"),
  NotServed(kPitfalls, 2725, "Queue", kVolcano, "Volcano queue"),
  NotServed(kPitfalls, 2735, "Queue", kVolcano, "Volcano queue"),
  {kPitfalls, 2747, "PyTorchJob", kComplete, "", ""},
};
// clang-format on

// The number of manifests the extraction finds in each seed; a change means the
// extraction rules or the seeds changed.
const std::map<std::string, size_t> kExpectedCounts = {{kIntro, 8}, {kPitfalls, 55}};

std::filesystem::path SeedsDir() {
  const char* source = std::getenv("BERTH_SOURCE_DIR");
  if (source == nullptr) return {};
  return std::filesystem::path(source) / ".." / "shared" / "seeds";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<SeedManifest> AllSeedManifests() {
  std::vector<SeedManifest> all;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(SeedsDir())) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    auto ms = ExtractManifests(path.filename().string(), ReadFile(path));
    all.insert(all.end(), ms.begin(), ms.end());
  }
  return all;
}

// The outcome of one manifest: "" when accepted, else the error message (with the
// field causes appended, one per line, so excerpt errors can be matched on any cause).
std::string Outcome(const api::AdmissionPipeline& pipeline, const SeedManifest& m) {
  auto obj = api::ParseYaml(m.text, m.file);
  if (!obj.ok()) return obj.status().ToString();
  // kubectl apply fills in the namespace of the current context ("default") for a
  // namespaced kind written without one; the API server takes it from the URL.
  auto definition = pipeline.registry().ForKind(obj->value("apiVersion", ""), obj->value("kind", ""));
  if (definition.ok() && (*definition)->namespaced() && api::Namespace(*obj).empty()) {
    (*obj)["metadata"]["namespace"] = "default";
  }
  api::WriteRequest request;
  request.operation = api::Operation::kCreate;
  request.object = std::move(*obj);
  request.field_validation = api::FieldValidation::kStrict;
  auto admitted = pipeline.Admit(std::move(request));
  if (admitted.ok()) return "";
  std::string out = admitted.status().message();
  for (const StatusCause& cause : admitted.status().causes()) {
    out += "\n" + cause.field + ": " + cause.message;
  }
  return out;
}

TEST(SeedManifests, SeedsArePresent) {
  ASSERT_NE(std::getenv("BERTH_SOURCE_DIR"), nullptr) << "run through ctest (berth_test sets it)";
  ASSERT_TRUE(std::filesystem::is_directory(SeedsDir())) << SeedsDir();
  for (const auto& [file, count] : kExpectedCounts) {
    EXPECT_TRUE(std::filesystem::is_regular_file(SeedsDir() / file)) << file;
  }
}

TEST(SeedManifests, ExtractionFindsTheExpectedManifests) {
  ASSERT_TRUE(std::filesystem::is_directory(SeedsDir())) << SeedsDir();
  std::map<std::string, size_t> counts;
  for (const SeedManifest& m : AllSeedManifests()) ++counts[m.file];
  EXPECT_EQ(counts, kExpectedCounts);

  // The table and the extraction list the same (file, line) pairs, in the same order.
  std::vector<std::pair<std::string, int>> extracted, listed;
  for (const SeedManifest& m : AllSeedManifests()) extracted.emplace_back(m.file, m.line);
  for (const Expectation& e : kTable) listed.emplace_back(e.file, e.line);
  EXPECT_EQ(extracted, listed);
}

TEST(SeedManifests, EveryManifestHasItsRecordedOutcome) {
  ASSERT_TRUE(std::filesystem::is_directory(SeedsDir())) << SeedsDir();
  const api::AdmissionPipeline pipeline(api::Registry::Default(), api::StrategyRegistry::Default(),
                                        api::Convert);
  std::map<std::pair<std::string, int>, const Expectation*> table;
  for (const Expectation& e : kTable) table[{e.file, e.line}] = &e;

  for (const SeedManifest& m : AllSeedManifests()) {
    SCOPED_TRACE(m.file + ":" + std::to_string(m.line) + "\n" + m.text);
    auto it = table.find({m.file, m.line});
    ASSERT_NE(it, table.end()) << "manifest missing from the table";
    const Expectation& e = *it->second;

    auto obj = api::ParseYaml(m.text, m.file);
    ASSERT_TRUE(obj.ok()) << obj.status().ToString();
    EXPECT_EQ(obj->value("kind", ""), e.kind);

    const std::string outcome = Outcome(pipeline, m);
    switch (e.category) {
      case Category::kComplete:
        EXPECT_EQ(outcome, "") << "a complete manifest of a served kind must be accepted";
        EXPECT_EQ(e.error, "");
        break;
      case Category::kExcerpt:
        EXPECT_STRNE(e.why, "") << "say why it is an excerpt";
        if (e.error.empty()) {
          EXPECT_EQ(outcome, "") << "recorded as accepted";
        } else {
          EXPECT_THAT(outcome, HasSubstr(e.error));
        }
        break;
      case Category::kNotServed:
        EXPECT_STRNE(e.why, "");
        EXPECT_THAT(outcome, HasSubstr("no matches for kind"));
        EXPECT_THAT(outcome, HasSubstr(e.error));
        break;
    }
  }
}

}  // namespace
}  // namespace berth::seeds
