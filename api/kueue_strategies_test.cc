#include "api/kueue_strategies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::api {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

class KueueStrategiesTest : public ::testing::Test {
 protected:
  KueueStrategiesTest() { RegisterKueueStrategies(&registry_); }

  const Strategy& For(std::string_view kind) {
    const Strategy* s = registry_.Find(kKueueGroupName, kind);
    EXPECT_NE(s, nullptr) << kind;
    return *s;
  }
  // "field: body" of every error, in order.
  static std::vector<std::string> Errors(const FieldErrorList& errs) {
    std::vector<std::string> out;
    for (const FieldError& e : errs) out.push_back(e.Error());
    return out;
  }
  std::vector<std::string> Create(std::string_view kind, const json& obj) {
    return Errors(For(kind).ValidateCreate(obj));
  }
  std::vector<std::string> Update(std::string_view kind, const json& obj, const json& old) {
    return Errors(For(kind).ValidateUpdate(obj, old));
  }

  StrategyRegistry registry_;
};

json ClusterQueue(const char* spec) {
  return json{{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "ClusterQueue"},
              {"metadata", {{"name", "cq"}}}, {"spec", json::parse(spec)}};
}

TEST_F(KueueStrategiesTest, WorkloadPriorityClassHasNoStrategy) {
  EXPECT_EQ(registry_.Find(kKueueGroupName, "WorkloadPriorityClass"), nullptr);
}

TEST_F(KueueStrategiesTest, ClusterQueueCreateAddsResourceInUseFinalizerOnce) {
  json cq = ClusterQueue("{}");
  For("ClusterQueue").PrepareForCreate(&cq);
  For("ClusterQueue").PrepareForCreate(&cq);
  EXPECT_EQ(cq["metadata"]["finalizers"], json::array({"kueue.x-k8s.io/resource-in-use"}));
  json rf = {{"metadata", {{"name", "rf"}, {"finalizers", {"other"}}}}};
  For("ResourceFlavor").PrepareForCreate(&rf);
  EXPECT_EQ(rf["metadata"]["finalizers"], json::array({"other", "kueue.x-k8s.io/resource-in-use"}));
}

TEST_F(KueueStrategiesTest, ClusterQueueSeedManifestIsValid) {
  json cq = ClusterQueue(R"({"namespaceSelector":{},"queueingStrategy":"BestEffortFIFO",
      "flavorFungibility":{"whenCanBorrow":"MayStopSearch","whenCanPreempt":"TryNextFlavor"},
      "preemption":{"withinClusterQueue":"LowerPriority","reclaimWithinCohort":"Never","borrowWithinCohort":{"policy":"Never"}},
      "resourceGroups":[{"coveredResources":["cpu","memory"],"flavors":[{"name":"default-flavor",
         "resources":[{"name":"cpu","nominalQuota":"5"},{"name":"memory","nominalQuota":"8Gi"}]}]}]})");
  EXPECT_THAT(Create("ClusterQueue", cq), IsEmpty());
}

TEST_F(KueueStrategiesTest, ClusterQueueBorrowingLimitWithoutCohortIsACelError) {
  json cq = ClusterQueue(R"({"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f",
      "resources":[{"name":"cpu","nominalQuota":"-1","borrowingLimit":"1"}]}]}]})");
  // The CEL rule fails, so the webhook (which would also flag the negative quota) does not run.
  EXPECT_THAT(Create("ClusterQueue", cq),
              ElementsAre("spec: Invalid value: \"object\": borrowingLimit must be nil when cohort is empty"));
  cq["spec"]["cohortName"] = "team";
  EXPECT_THAT(Create("ClusterQueue", cq),
              ElementsAre("spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"-1\": "
                          "must be greater than or equal to 0"));
}

TEST_F(KueueStrategiesTest, ClusterQueueLendingLimitRules) {
  json cq = ClusterQueue(R"({"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f",
      "resources":[{"name":"cpu","nominalQuota":"4","lendingLimit":"5"}]}]}]})");
  EXPECT_THAT(Create("ClusterQueue", cq),
              ElementsAre("spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: \"5\": "
                          "must be nil when cohort is empty",
                          "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: \"5\": "
                          "must be less than or equal to the nominalQuota"));
  cq["spec"]["cohortName"] = "team";
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["lendingLimit"] = "4000m";
  cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = "-2";
  EXPECT_THAT(Create("ClusterQueue", cq),
              ElementsAre("spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Invalid value: \"-2\": "
                          "must be greater than or equal to 0"));
}

TEST_F(KueueStrategiesTest, ClusterQueueResourceGroupShape) {
  json cq = ClusterQueue(R"({"resourceGroups":[
      {"coveredResources":["cpu","memory"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":1}]}]}]})");
  EXPECT_THAT(Create("ClusterQueue", cq),
              ElementsAre("spec.resourceGroups[0]: Invalid value: \"object\": flavors must have the same number "
                          "of resources as the coveredResources"));
  cq = ClusterQueue(R"({"resourceGroups":[
      {"coveredResources":["cpu","memory"],"flavors":[{"name":"f","resources":[
          {"name":"memory","nominalQuota":1},{"name":"cpu","nominalQuota":1}]}]},
      {"coveredResources":["cpu","Bad Name"],"flavors":[{"name":"f","resources":[
          {"name":"cpu","nominalQuota":1},{"name":"Bad Name","nominalQuota":1}]}]}]})");
  EXPECT_THAT(
      Create("ClusterQueue", cq),
      ElementsAre(
          "spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value: \"memory\": must match the name in coveredResources",
          "spec.resourceGroups[0].flavors[0].resources[1].name: Invalid value: \"cpu\": must match the name in coveredResources",
          "spec.resourceGroups[1].coveredResources[0]: Duplicate value: \"cpu\"",
          ::testing::StartsWith("spec.resourceGroups[1].coveredResources[1]: Invalid value: \"Bad Name\": name part must consist of"),
          "spec.resourceGroups[1].flavors[0].name: Duplicate value: \"f\""));
}

TEST_F(KueueStrategiesTest, ClusterQueueFungibilityAndPreemptionCelRules) {
  json cq = ClusterQueue(R"({"flavorFungibility":{"whenCanBorrow":"MayStopSearch","whenCanPreempt":"TryNextFlavor",
      "preference":"BorrowingOverPreemption"},
      "preemption":{"reclaimWithinCohort":"Never","borrowWithinCohort":{"policy":"LowerPriority"}}})");
  EXPECT_THAT(Create("ClusterQueue", cq),
              ElementsAre("spec.flavorFungibility: Invalid value: \"object\": preference can only be set when both "
                          "whenCanBorrow and whenCanPreempt are TryNextFlavor",
                          "spec.preemption: Invalid value: \"object\": reclaimWithinCohort=Never and "
                          "borrowWithinCohort.Policy!=Never"));
  cq["spec"]["flavorFungibility"]["whenCanBorrow"] = "TryNextFlavor";
  cq["spec"]["preemption"]["reclaimWithinCohort"] = "LowerPriority";
  EXPECT_THAT(Create("ClusterQueue", cq), IsEmpty());
}

TEST_F(KueueStrategiesTest, ClusterQueueSelectorFairSharingAndOnFlavors) {
  json cq = ClusterQueue(R"({
      "namespaceSelector":{"matchExpressions":[{"key":"team","operator":"In"},{"key":"x","operator":"Near","values":["a"]}]},
      "fairSharing":{"weight":"-1"},
      "admissionChecksStrategy":{"admissionChecks":[{"name":"prov","onFlavors":["on-demand","gone"]}]},
      "resourceGroups":[{"coveredResources":["cpu"],"flavors":[
          {"name":"spot","resources":[{"name":"cpu","nominalQuota":1}]},
          {"name":"on-demand","resources":[{"name":"cpu","nominalQuota":1}]}]}]})");
  EXPECT_THAT(Create("ClusterQueue", cq),
              ElementsAre("spec.namespaceSelector.matchExpressions[0].values: Required value: must be specified when "
                          "`operator` is 'In' or 'NotIn'",
                          "spec.namespaceSelector.matchExpressions[1].operator: Invalid value: \"Near\": not a valid "
                          "selector operator",
                          "spec.fairSharing: Invalid value: \"-1\": must be greater than or equal to 0",
                          "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]: Unsupported value: \"gone\": "
                          "supported values: \"spot\", \"on-demand\""));
  // An update that leaves the check and the flavors alone does not re-check onFlavors.
  json fixed = cq;
  fixed["spec"].erase("namespaceSelector");
  fixed["spec"].erase("fairSharing");
  fixed["spec"]["queueingStrategy"] = "StrictFIFO";
  EXPECT_THAT(Update("ClusterQueue", fixed, cq), IsEmpty());
  json changed = fixed;
  changed["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["onFlavors"] = {"gone"};
  EXPECT_THAT(Update("ClusterQueue", changed, cq),
              ElementsAre("spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: Unsupported value: \"gone\": "
                          "supported values: \"spot\", \"on-demand\""));
}

TEST_F(KueueStrategiesTest, ClusterQueueConcurrentAdmissionPolicyIsImmutable) {
  json old = ClusterQueue(R"({"concurrentAdmissionPolicy":{"migration":{"mode":"TryPreferredFlavors"}}})");
  json cq = ClusterQueue(R"({"concurrentAdmissionPolicy":{"migration":{"mode":"RetainFirstAdmission"}}})");
  EXPECT_THAT(Update("ClusterQueue", cq, old),
              ElementsAre("spec.concurrentAdmissionPolicy: Invalid value: {\"migration\":{\"mode\":"
                          "\"RetainFirstAdmission\"}}: field is immutable"));
}

TEST_F(KueueStrategiesTest, ClusterQueueTotals) {
  json flavors = json::array();
  for (int i = 0; i < 257; ++i) {
    flavors.push_back({{"name", "f" + std::to_string(i)}, {"resources", {{{"name", "cpu"}, {"nominalQuota", 1}}}}});
  }
  json cq = ClusterQueue("{}");
  cq["spec"]["resourceGroups"] = {{{"coveredResources", {"cpu"}}, {"flavors", flavors}}};
  EXPECT_THAT(Create("ClusterQueue", cq),
              ElementsAre("spec.resourceGroups: Invalid value: 257: total number of flavors across all "
                          "resourceGroups must be ≤ 256, got 257"));
}

TEST_F(KueueStrategiesTest, CohortLimitsNeedAParentAndLendingMayExceedNominal) {
  json co = {{"metadata", {{"name", "co"}}},
             {"spec", json::parse(R"({"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f",
                 "resources":[{"name":"cpu","nominalQuota":"1","borrowingLimit":"2","lendingLimit":"3"}]}]}]})")}};
  EXPECT_THAT(Create("Cohort", co),
              ElementsAre("spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Invalid value: \"2\": "
                          "must be nil when parent is empty",
                          "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: \"3\": "
                          "must be nil when parent is empty"));
  co["spec"]["parentName"] = "root";
  EXPECT_THAT(Create("Cohort", co), IsEmpty());
  co["spec"]["resourceGroups"][0]["flavors"][0]["resources"].push_back({{"name", "memory"}, {"nominalQuota", "1"}});
  EXPECT_THAT(Update("Cohort", co, co),
              ElementsAre("spec.resourceGroups[0]: Invalid value: \"object\": flavors must have the same number of "
                          "resources as the coveredResources"));
}

TEST_F(KueueStrategiesTest, LocalQueueClusterQueueIsImmutable) {
  json old = {{"metadata", {{"name", "lq"}, {"namespace", "a"}}}, {"spec", {{"clusterQueue", "a"}}}};
  json lq = old;
  EXPECT_THAT(Update("LocalQueue", lq, old), IsEmpty());
  lq["spec"]["clusterQueue"] = "b";
  EXPECT_THAT(Update("LocalQueue", lq, old),
              ElementsAre("spec.clusterQueue: Invalid value: \"string\": field is immutable"));
  // Setting it for the first time is a change CEL's transition rule does not see.
  json unset = {{"metadata", {{"name", "lq"}}}, {"spec", json::object()}};
  EXPECT_THAT(Update("LocalQueue", lq, unset), IsEmpty());
}

TEST_F(KueueStrategiesTest, ResourceFlavorTaintsAndLabels) {
  json rf = {{"metadata", {{"name", "spot"}}},
             {"spec", json::parse(R"({"nodeLabels":{"instance-type":"spot","bad key!":"x"},
                 "nodeTaints":[{"key":"spot","value":"true","effect":"NoSchedule"},
                               {"key":"spot","value":"false","effect":"NoSchedule"},
                               {"key":"spot","value":"true","effect":"NoExecute"}]})")}};
  auto errs = Create("ResourceFlavor", rf);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_THAT(errs[0], ::testing::StartsWith("spec.nodeLabels: Invalid value: \"bad key!\": name part must consist of"));
  EXPECT_EQ(errs[1],
            "spec.nodeTaints[1]: Duplicate value: {\"effect\":\"NoSchedule\",\"key\":\"spot\",\"value\":\"false\"}: "
            "taints must be unique by key and effect pair");
}

TEST_F(KueueStrategiesTest, ResourceFlavorTolerationCelRules) {
  json rf = {{"metadata", {{"name", "spot"}}},
             {"spec", json::parse(R"({"tolerations":[{"operator":"Equal","value":"x"},
                 {"key":"k","operator":"Exists","value":"v","effect":"NoSchedule","tolerationSeconds":5}]})")}};
  EXPECT_THAT(Create("ResourceFlavor", rf),
              ElementsAre("spec.tolerations: Invalid value: \"array\": operator must be Exists when 'key' is empty, "
                          "which means 'match all values and all keys'",
                          "spec.tolerations: Invalid value: \"array\": effect must be 'NoExecute' when "
                          "'tolerationSeconds' is set",
                          "spec.tolerations: Invalid value: \"array\": a value must be empty when 'operator' is 'Exists'"));
}

TEST_F(KueueStrategiesTest, ResourceFlavorTopologyName) {
  json rf = {{"metadata", {{"name", "tas"}}}, {"spec", {{"topologyName", "default"}}}};
  EXPECT_THAT(Create("ResourceFlavor", rf),
              ElementsAre("spec: Invalid value: \"object\": at least one nodeLabel is required when topology is set"));
  rf["spec"]["nodeLabels"] = {{"pool", "a"}};
  EXPECT_THAT(Create("ResourceFlavor", rf), IsEmpty());
  json renamed = rf;
  renamed["spec"]["topologyName"] = "other";
  EXPECT_THAT(Update("ResourceFlavor", renamed, rf),
              ElementsAre("spec: Invalid value: \"object\": topologyName is immutable when topologyName is set"));
  json plain = {{"metadata", {{"name", "tas"}}}, {"spec", {{"nodeLabels", {{"pool", "a"}}}}}};
  EXPECT_THAT(Update("ResourceFlavor", rf, plain), IsEmpty());
}

json Workload(const char* spec, const char* status = "{}") {
  return json{{"apiVersion", "kueue.x-k8s.io/v1beta2"}, {"kind", "Workload"},
              {"metadata", {{"name", "wl"}, {"namespace", "team-a"}}},
              {"spec", json::parse(spec)}, {"status", json::parse(status)}};
}

constexpr const char* kReservedStatus = R"({
    "conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"m","lastTransitionTime":"2025-01-01T00:00:00Z"}],
    "admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main","count":2,"flavors":{"cpu":"default"},"resourceUsage":{"cpu":"2"}}]}})";
constexpr const char* kOnePodSet =
    R"({"queueName":"lq","podSets":[{"name":"main","count":2,"template":{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}}]})";

TEST_F(KueueStrategiesTest, WorkloadReservedPodsKeyAndNegativeRequests) {
  json wl = Workload(R"({"podSets":[{"name":"main","count":1,"template":{"spec":{
      "initContainers":[{"name":"i","resources":{"limits":{"pods":"1"}}}],
      "containers":[{"name":"c","resources":{"requests":{"cpu":"-1"}}}],
      "resources":{"requests":{"pods":"2"}}}}}]})");
  EXPECT_THAT(Create("Workload", wl),
              ElementsAre("spec.podSets[0].template.spec.initContainers[0].resources.limits[pods]: Invalid value: "
                          "\"pods\": the key is reserved for internal kueue use",
                          "spec.podSets[0].template.spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": "
                          "must be greater than or equal to 0",
                          "spec.podSets[0].template.spec.resources.requests[pods]: Invalid value: \"pods\": the key is "
                          "reserved for internal kueue use"));
}

TEST_F(KueueStrategiesTest, WorkloadMinCountRules) {
  json wl = Workload(R"({"podSets":[{"name":"a","count":2,"minCount":3,"template":{}},
                                    {"name":"b","count":4,"minCount":1,"template":{}}]})");
  EXPECT_THAT(Create("Workload", wl),
              ElementsAre("spec.podSets[0]: Invalid value: \"object\": minCount should be positive and less or equal "
                          "to count"));
  wl["spec"]["podSets"][0]["minCount"] = 1;
  EXPECT_THAT(Create("Workload", wl),
              ElementsAre("spec.podSets: Invalid value: 2: at most one podSet can use minCount"));
}

TEST_F(KueueStrategiesTest, WorkloadPriorityClassRefRules) {
  json wl = Workload(R"({"priorityClassRef":{"group":"scheduling.k8s.io","kind":"WorkloadPriorityClass","name":"x"},
                         "podSets":[{"name":"main","count":1,"template":{}}]})");
  EXPECT_THAT(Create("Workload", wl),
              ElementsAre("spec.priorityClassRef: Invalid value: \"object\": only the PriorityClass kind is allowed "
                          "for the scheduling.k8s.io group",
                          "spec: Invalid value: \"object\": priority should not be nil when priorityClassRef is set"));
  wl["spec"]["priorityClassRef"] = {{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", "high"}};
  wl["spec"]["priority"] = 1000;
  EXPECT_THAT(Create("Workload", wl), IsEmpty());
}

TEST_F(KueueStrategiesTest, WorkloadAdmissionChecksWhileReserved) {
  json wl = Workload(kOnePodSet, kReservedStatus);
  EXPECT_THAT(Create("Workload", wl), IsEmpty());
  json bad = wl;
  bad["status"]["admission"]["podSetAssignments"][0]["name"] = "other";
  // CPU counts in milli-units (3 cpu over 2 pods is 1500m each); other resources in units.
  bad["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"] = "3";
  bad["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["memory"] = "3";
  EXPECT_THAT(Create("Workload", bad),
              ElementsAre("status.admission.podSetAssignments[0].name: Not found: \"other\"",
                          "status.admission.podSetAssignments[0].resourceUsage[memory]: Invalid value: \"3\": is not a "
                          "multiple of 2"));
  json missing = wl;
  missing["status"].erase("admission");
  EXPECT_THAT(Create("Workload", missing),
              ElementsAre("status.admission: Required value: must be set while the QuotaReserved condition is true"));
  json mismatch = wl;
  mismatch["spec"]["podSets"].push_back({{"name", "extra"}, {"count", 1}, {"template", json::object()}});
  EXPECT_THAT(Create("Workload", mismatch),
              ElementsAre(": Invalid value: \"object\": podSetAssignments must have the same number of podSets as the spec"));
}

TEST_F(KueueStrategiesTest, WorkloadReclaimablePods) {
  json wl = Workload(kOnePodSet, R"({"reclaimablePods":[{"name":"main","count":3},{"name":"ghost","count":1}]})");
  EXPECT_THAT(Create("Workload", wl),
              ElementsAre("status.reclaimablePods[main].count: Invalid value: 3: should be less or equal to 2",
                          "status.reclaimablePods[ghost].name: Unsupported value: \"ghost\": supported values: \"main\""));
  json old = Workload(kOnePodSet, kReservedStatus);
  old["status"]["reclaimablePods"] = {{{"name", "main"}, {"count", 1}}};
  json now = old;
  now["status"]["reclaimablePods"][0]["count"] = 0;
  EXPECT_THAT(Errors(For("Workload").ValidateStatusUpdate(now, old)),
              ElementsAre("status.reclaimablePods[main].count: Invalid value: 0: cannot be less than 1"));
  now["status"].erase("reclaimablePods");
  EXPECT_THAT(Errors(For("Workload").ValidateStatusUpdate(now, old)),
              ElementsAre("status.reclaimablePods[main]: Required value: cannot be removed"));
}

TEST_F(KueueStrategiesTest, WorkloadPodSetsAndAdmissionImmutableWhileReserved) {
  json old = Workload(kOnePodSet, kReservedStatus);
  json wl = old;
  wl["spec"]["podSets"][0]["count"] = 3;
  wl["status"]["admission"]["podSetAssignments"][0]["count"] = 4;
  wl["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]["cpu"] = "4";
  auto errs = Update("Workload", wl, old);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_THAT(errs[0], ::testing::StartsWith("spec.podSets[0]: Invalid value: {\"count\":3,"));
  EXPECT_THAT(errs[0], ::testing::EndsWith(": field is immutable"));
  EXPECT_THAT(errs[1], ::testing::StartsWith("status.admission: Invalid value: {\"clusterQueue\":\"cq\""));
  // Not reserved before: podSets may change; a topology assignment may be filled in later.
  json pending = Workload(kOnePodSet);
  json grown = pending;
  grown["spec"]["podSets"][0]["count"] = 5;
  EXPECT_THAT(Update("Workload", grown, pending), IsEmpty());
  json tas = old;
  tas["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"] = {{"levels", {"h"}}, {"slices", json::array()}};
  EXPECT_THAT(Update("Workload", tas, old), IsEmpty());
}

TEST_F(KueueStrategiesTest, WorkloadQueueNameAndPriorityClassRefFixedWhileReserved) {
  json old = Workload(kOnePodSet, kReservedStatus);
  old["spec"]["priority"] = 1;
  old["spec"]["priorityClassRef"] = {{"group", "scheduling.k8s.io"}, {"kind", "PriorityClass"}, {"name", "a"}};
  json wl = old;
  wl["spec"]["queueName"] = "other";
  wl["spec"]["priorityClassRef"]["name"] = "b";
  EXPECT_THAT(Update("Workload", wl, old),
              ElementsAre(": Invalid value: \"object\": priorityClassRef.name is immutable for "
                          "scheduling.k8s.io/priorityclass while workload quota reserved",
                          ": Invalid value: \"object\": queueName is immutable while workload quota reserved"));
  // A WorkloadPriorityClass name may change (its priority is re-evaluated).
  old["spec"]["priorityClassRef"] = {{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", "a"}};
  wl = old;
  wl["spec"]["priorityClassRef"]["name"] = "b";
  EXPECT_THAT(Update("Workload", wl, old), IsEmpty());
  wl["spec"].erase("priorityClassRef");
  EXPECT_THAT(Update("Workload", wl, old),
              ElementsAre(": Invalid value: \"object\": priorityClassRef is immutable while workload quota reserved"));
}

TEST_F(KueueStrategiesTest, WorkloadClusterNameRules) {
  json old = Workload(kOnePodSet, R"({"nominatedClusterNames":["w1","w2"]})");
  json wl = Workload(kOnePodSet, R"({"clusterName":"w3"})");
  EXPECT_THAT(Errors(For("Workload").ValidateStatusUpdate(wl, old)),
              ElementsAre("status.clusterName: Invalid value: \"w3\": when setting clusterName it must be one of the "
                          "nominatedClusterNames"));
  wl["status"]["clusterName"] = "w2";
  EXPECT_THAT(Errors(For("Workload").ValidateStatusUpdate(wl, old)), IsEmpty());
  json both = Workload(kOnePodSet, R"({"clusterName":"w2","nominatedClusterNames":["w1"]})");
  EXPECT_THAT(Create("Workload", both),
              ElementsAre("status: Invalid value: \"object\": clusterName and nominatedClusterNames are mutually exclusive"));
  json moved = wl;
  moved["status"]["clusterName"] = "w1";
  EXPECT_THAT(Errors(For("Workload").ValidateStatusUpdate(moved, wl)),
              ElementsAre("status: Invalid value: \"object\": clusterName is immutable once set"));
}

TEST_F(KueueStrategiesTest, WorkloadPodSetUpdatesNameKnownPodSets) {
  json wl = Workload(kOnePodSet, R"({"admissionChecks":[{"name":"prov","state":"Ready","message":"",
      "lastTransitionTime":"2025-01-01T00:00:00Z","podSetUpdates":[{"name":"nope","nodeSelector":{"a":"b"}}]}]})");
  EXPECT_THAT(Create("Workload", wl),
              ElementsAre("status.admissionChecks[0].podSetUpdates[0].name: Unsupported value: \"nope\": supported "
                          "values: \"main\""));
  json fixed = wl;
  fixed["status"]["admissionChecks"][0]["podSetUpdates"][0]["name"] = "main";
  json changed = fixed;
  changed["status"]["admissionChecks"][0]["podSetUpdates"][0]["nodeSelector"]["a"] = "c";
  EXPECT_THAT(Errors(For("Workload").ValidateStatusUpdate(changed, fixed)),
              ElementsAre("status.admissionChecks[0].podSetUpdates: Invalid value: "
                          "[{\"name\":\"main\",\"nodeSelector\":{\"a\":\"c\"}}]: field is immutable"));
}

}  // namespace
}  // namespace berth::api
