#include "api/conversion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::api {
namespace {

using nlohmann::json;

Object MustConvert(const Object& obj, std::string_view target) {
  auto out = ConvertObject(obj, target);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : Object();
}

TEST(ConvertObjectTest, SameVersionIsIdentity) {
  Object cq = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
      "metadata":{"name":"cq"},"spec":{"cohort":"team","admissionChecks":["a"]}})");
  EXPECT_EQ(MustConvert(cq, "kueue.x-k8s.io/v1beta1"), cq);
}

TEST(ConvertObjectTest, KindWithoutConverterOnlyRewritesApiVersion) {
  Object wpc = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"WorkloadPriorityClass",
      "metadata":{"name":"high"},"value":100,"description":"prod"})");
  Object expected = wpc;
  expected["apiVersion"] = "kueue.x-k8s.io/v1beta2";
  EXPECT_EQ(MustConvert(wpc, "kueue.x-k8s.io/v1beta2"), expected);
}

TEST(ConvertObjectTest, RejectsOtherGroupsAndMalformedObjects) {
  Object cq = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue"})");
  auto other = ConvertObject(cq, "batch/v1");
  EXPECT_EQ(other.status().code(), Code::kBadRequest);
  EXPECT_EQ(ConvertObject(json::parse(R"({"kind":"ClusterQueue"})"), "kueue.x-k8s.io/v1beta2").status().code(),
            Code::kBadRequest);
  EXPECT_EQ(ConvertObject(json::array(), "kueue.x-k8s.io/v1beta2").status().code(), Code::kBadRequest);
}

TEST(ConvertObjectTest, ClusterQueueToV1beta2) {
  Object v1 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
      "metadata":{"name":"cq"},
      "spec":{"cohort":"team","admissionChecks":["prov","multikueue"],
              "admissionChecksStrategy":{"admissionChecks":[{"name":"ignored"}]},
              "flavorFungibility":{"whenCanBorrow":"Borrow","whenCanPreempt":"Preempt"},
              "resourceGroups":[{"coveredResources":["cpu"],
                 "flavors":[{"name":"default","resources":[{"name":"cpu","nominalQuota":"5"}]}]}]},
      "status":{"pendingWorkloads":3,"pendingWorkloadsStatus":{"lastChangeTime":"2025-01-01T00:00:00Z"},
                "fairSharing":{"weightedShare":7,"admissionFairSharingStatus":{"consumedResources":{},
                               "lastUpdate":"2025-01-01T00:00:00Z"}}}})");
  Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(v2, json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue",
      "metadata":{"name":"cq"},
      "spec":{"cohortName":"team",
              "admissionChecksStrategy":{"admissionChecks":[{"name":"prov"},{"name":"multikueue"}]},
              "flavorFungibility":{"whenCanBorrow":"MayStopSearch","whenCanPreempt":"MayStopSearch"},
              "resourceGroups":[{"coveredResources":["cpu"],
                 "flavors":[{"name":"default","resources":[{"name":"cpu","nominalQuota":"5"}]}]}]},
      "status":{"pendingWorkloads":3,"fairSharing":{"weightedShare":7}}})"));
}

TEST(ConvertObjectTest, ClusterQueueEmptyCohortAndEmptyAdmissionChecks) {
  Object v1 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
      "spec":{"cohort":"","admissionChecks":[],
              "admissionChecksStrategy":{"admissionChecks":[{"name":"kept","onFlavors":["a"]}]},
              "flavorFungibility":{"whenCanBorrow":"TryNextFlavor","whenCanPreempt":"MayStopSearch"}}})");
  Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(v2["spec"], json::parse(R"({
      "admissionChecksStrategy":{"admissionChecks":[{"name":"kept","onFlavors":["a"]}]},
      "flavorFungibility":{"whenCanBorrow":"TryNextFlavor","whenCanPreempt":"MayStopSearch"}})"));
}

TEST(ConvertObjectTest, ClusterQueueToV1beta1DropsV1beta2OnlyFields) {
  Object v2 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue",
      "spec":{"cohortName":"team","concurrentAdmissionPolicy":{"migration":{"mode":"TryPreferredFlavors"}},
              "queueingStrategy":"StrictFIFO"}})");
  EXPECT_EQ(MustConvert(v2, "kueue.x-k8s.io/v1beta1"), json::parse(R"({
      "apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
      "spec":{"cohort":"team","queueingStrategy":"StrictFIFO"}})"));
}

TEST(ConvertObjectTest, LocalQueueStatusRenamesAndDropsFlavors) {
  Object v1 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue",
      "spec":{"clusterQueue":"cq"},
      "status":{"flavorUsage":[{"name":"default","resources":[{"name":"cpu","total":"2"}]}],
                "flavors":[{"name":"default","resources":["cpu"]}],
                "flavorsReservation":[{"name":"default","resources":[{"name":"cpu","total":"3"}]}]}})");
  Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(v2["status"], json::parse(R"({
      "flavorsUsage":[{"name":"default","resources":[{"name":"cpu","total":"2"}]}],
      "flavorsReservation":[{"name":"default","resources":[{"name":"cpu","total":"3"}]}]})"));
  Object back = MustConvert(v2, "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(back["status"]["flavorUsage"], v1["status"]["flavorUsage"]);
  EXPECT_FALSE(back["status"].contains("flavors"));
  EXPECT_FALSE(back["status"].contains("flavorsUsage"));
}

TEST(ConvertObjectTest, CohortDropsAdmissionFairSharingStatus) {
  Object v1 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Cohort",
      "spec":{"parentName":"root"},
      "status":{"fairSharing":{"weightedShare":3,"admissionFairSharingStatus":{"consumedResources":{"cpu":"1"},
                "lastUpdate":"2025-01-01T00:00:00Z"}}}})");
  Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(v2["status"], json::parse(R"({"fairSharing":{"weightedShare":3}})"));
  EXPECT_EQ(v2["spec"], v1["spec"]);
}

TEST(ConvertObjectTest, WorkloadPriorityClassSourceToRef) {
  struct Case {
    const char* source;
    json ref;  // null: no ref
  } cases[] = {
      {"kueue.x-k8s.io/workloadpriorityclass",
       {{"group", "kueue.x-k8s.io"}, {"kind", "WorkloadPriorityClass"}, {"name", "kueue-high"}}},
      {"scheduling.k8s.io/priorityclass",
       {{"group", "scheduling.k8s.io"}, {"kind", "PriorityClass"}, {"name", "kueue-high"}}},
      {"", nullptr},
  };
  for (const Case& c : cases) {
    Object v1 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload",
        "spec":{"queueName":"training-queue","priority":100,"priorityClassName":"kueue-high",
                "podSets":[{"name":"master","count":1}]}})");
    v1["spec"]["priorityClassSource"] = c.source;
    Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
    SCOPED_TRACE(c.source);
    EXPECT_FALSE(v2["spec"].contains("priorityClassName"));
    EXPECT_FALSE(v2["spec"].contains("priorityClassSource"));
    if (c.ref.is_null()) {
      EXPECT_FALSE(v2["spec"].contains("priorityClassRef"));
    } else {
      EXPECT_EQ(v2["spec"]["priorityClassRef"], c.ref);
    }
    EXPECT_EQ(v2["spec"]["priority"], 100);
  }
}

TEST(ConvertObjectTest, WorkloadRefToV1beta1) {
  Object v2 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",
      "spec":{"priority":5,"priorityClassRef":{"group":"scheduling.k8s.io","kind":"PriorityClass","name":"pc"},
              "preemptionGates":[{"name":"g"}],
              "podSets":[{"name":"main","count":2,"topologyRequest":{"required":"rack",
                 "podsetSliceRequiredTopologyConstraints":[{"size":2,"topology":"rack"}]}}]},
      "status":{"accumulatedPastExecutionTimeSeconds":60,
                "preemptionGates":[{"name":"g","position":"Open","lastTransitionTime":"2025-01-01T00:00:00Z"}]}})");
  EXPECT_EQ(MustConvert(v2, "kueue.x-k8s.io/v1beta1"), json::parse(R"({
      "apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload",
      "spec":{"priority":5,"priorityClassName":"pc","priorityClassSource":"scheduling.k8s.io/priorityclass",
              "podSets":[{"name":"main","count":2,"topologyRequest":{"required":"rack"}}]},
      "status":{"accumulatedPastExexcutionTimeSeconds":60}})"));

  // A ref whose group and kind do not pair is dropped (upstream's switch has no case).
  Object odd = v2;
  odd["spec"]["priorityClassRef"]["kind"] = "WorkloadPriorityClass";
  Object v1 = MustConvert(odd, "kueue.x-k8s.io/v1beta1");
  EXPECT_FALSE(v1["spec"].contains("priorityClassName"));
  EXPECT_FALSE(v1["spec"].contains("priorityClassRef"));
}

TEST(ConvertObjectTest, TopologyAssignmentDomainsToCompactSlices) {
  Object v1 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload",
      "spec":{"podSets":[{"name":"main","count":4}]},
      "status":{"admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"main","count":4,
        "topologyAssignment":{"levels":["block","kubernetes.io/hostname"],"domains":[
          {"values":["b1","node-1.zone"],"count":1},
          {"values":["b1","node-2.zone"],"count":2},
          {"values":["b1","node-10.zone"],"count":1}]}}]}}})");
  Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
  const Object& ta = v2["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"];
  EXPECT_EQ(ta, json::parse(R"({"levels":["block","kubernetes.io/hostname"],"slices":[{
      "domainCount":3,
      "valuesPerLevel":[{"universal":"b1"},
                        {"individual":{"prefix":"node-","suffix":".zone","roots":["1","2","10"]}}],
      "podCounts":{"individual":[1,2,1]}}]})"));
  // And back: the same domains, in order.
  EXPECT_EQ(MustConvert(v2, "kueue.x-k8s.io/v1beta1"), v1);
}

TEST(ConvertObjectTest, TopologyAssignmentPrefixAndSuffixDoNotOverlap) {
  // "ababa" and "aba": the common prefix "aba" and suffix "aba" overlap in "aba".
  Object v1 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload",
      "status":{"admission":{"podSetAssignments":[{"name":"main",
        "topologyAssignment":{"levels":["h"],"domains":[{"values":["ababa"],"count":2},{"values":["aba"],"count":2}]}}]}}})");
  Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
  const Object& slice = v2["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]["slices"][0];
  EXPECT_EQ(slice["podCounts"], json::parse(R"({"universal":2})"));
  const Object& ind = slice["valuesPerLevel"][0]["individual"];
  std::string prefix = ind.value("prefix", "");
  std::string suffix = ind.value("suffix", "");
  EXPECT_LE(prefix.size() + suffix.size(), 3u);
  EXPECT_EQ(prefix + ind["roots"][0].get<std::string>() + suffix, "ababa");
  EXPECT_EQ(prefix + ind["roots"][1].get<std::string>() + suffix, "aba");
  EXPECT_EQ(MustConvert(v2, "kueue.x-k8s.io/v1beta1"), v1);
}

TEST(ConvertObjectTest, TopologyAssignmentSeveralSlicesToDomains) {
  Object v2 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload",
      "status":{"admission":{"podSetAssignments":[{"name":"main","topologyAssignment":{"levels":["h"],"slices":[
        {"domainCount":2,"valuesPerLevel":[{"individual":{"prefix":"x-","roots":["a","b"]}}],"podCounts":{"universal":3}},
        {"domainCount":1,"valuesPerLevel":[{"universal":"y"}],"podCounts":{"individual":[5]}}]}}]}}})");
  Object v1 = MustConvert(v2, "kueue.x-k8s.io/v1beta1");
  EXPECT_EQ(v1["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"], json::parse(R"({
      "levels":["h"],"domains":[{"values":["x-a"],"count":3},{"values":["x-b"],"count":3},
                                {"values":["y"],"count":5}]})"));
}

// v1beta2 -> v1beta1 -> v1beta2 keeps every field both versions have.
TEST(ConvertObjectTest, RoundTripsFromV1beta2AreLossless) {
  const char* objects[] = {
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"cq","finalizers":["kueue.x-k8s.io/resource-in-use"]},
          "spec":{"cohortName":"team","namespaceSelector":{},"queueingStrategy":"BestEffortFIFO","stopPolicy":"None",
                  "admissionChecksStrategy":{"admissionChecks":[{"name":"c","onFlavors":["default"]}]},
                  "flavorFungibility":{"whenCanBorrow":"TryNextFlavor","whenCanPreempt":"TryNextFlavor","preference":"PreemptionOverBorrowing"},
                  "preemption":{"withinClusterQueue":"LowerPriority","reclaimWithinCohort":"Any","borrowWithinCohort":{"policy":"LowerPriority","maxPriorityThreshold":10}},
                  "resourceGroups":[{"coveredResources":["cpu","memory"],"flavors":[{"name":"default","resources":[
                      {"name":"cpu","nominalQuota":"5","borrowingLimit":"1","lendingLimit":"2"},{"name":"memory","nominalQuota":"8Gi"}]}]}]},
          "status":{"pendingWorkloads":1,"admittedWorkloads":2,"fairSharing":{"weightedShare":4},
                    "conditions":[{"type":"Active","status":"True","reason":"Ready","message":"Can admit new workloads","lastTransitionTime":"2025-01-01T00:00:00Z"}]}})",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"LocalQueue","metadata":{"name":"lq","namespace":"team-a"},
          "spec":{"clusterQueue":"cq","stopPolicy":"Hold","fairSharing":{"weight":"2"}},
          "status":{"flavorsUsage":[{"name":"default","resources":[{"name":"cpu","total":"1"}]}],
                    "fairSharing":{"weightedShare":1,"admissionFairSharingStatus":{"consumedResources":{"cpu":"1"},"lastUpdate":"2025-01-01T00:00:00Z"}}}})",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"wl","namespace":"team-a"},
          "spec":{"queueName":"lq","priority":1000,"active":true,
                  "priorityClassRef":{"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"high"},
                  "podSets":[{"name":"node","count":2,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}]},
          "status":{"accumulatedPastExecutionTimeSeconds":5,
                    "admission":{"clusterQueue":"cq","podSetAssignments":[{"name":"node","count":2,"flavors":{"cpu":"default"},"resourceUsage":{"cpu":"2"},
                       "topologyAssignment":{"levels":["h"],"slices":[{"domainCount":2,"valuesPerLevel":[{"individual":{"prefix":"n","roots":["1","2"]}}],"podCounts":{"universal":1}}]}}]}}})",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Cohort","metadata":{"name":"co"},
          "spec":{"parentName":"root","resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":1}]}]}]},
          "status":{"fairSharing":{"weightedShare":0}}})",
  };
  for (const char* text : objects) {
    Object v2 = json::parse(text);
    SCOPED_TRACE(v2["kind"].get<std::string>());
    Object v1 = MustConvert(v2, "kueue.x-k8s.io/v1beta1");
    EXPECT_EQ(v1["apiVersion"], "kueue.x-k8s.io/v1beta1");
    EXPECT_EQ(MustConvert(v1, "kueue.x-k8s.io/v1beta2"), v2);
  }
}

// v1beta1 -> v1beta2 -> v1beta1 is lossless when no deprecated v1beta1-only form is used.
TEST(ConvertObjectTest, RoundTripsFromV1beta1AreLosslessWithoutDeprecatedForms) {
  const char* objects[] = {
      R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"gpu-cluster-queue"},
          "spec":{"cohort":"c","preemption":{"withinClusterQueue":"LowerPriority","reclaimWithinCohort":"Any","borrowWithinCohort":{"policy":"LowerPriority"}},
                  "admissionChecksStrategy":{"admissionChecks":[{"name":"x"}]},
                  "resourceGroups":[{"coveredResources":["nvidia.com/gpu"],"flavors":[{"name":"gpu-flavor","resources":[{"name":"nvidia.com/gpu","nominalQuota":32}]}]}]}})",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"Workload","metadata":{"name":"w","namespace":"default"},
          "spec":{"queueName":"training-queue","priority":100,"priorityClassName":"kueue-high",
                  "priorityClassSource":"kueue.x-k8s.io/workloadpriorityclass",
                  "podSets":[{"count":1,"name":"master"},{"count":8,"name":"worker"}]},
          "status":{"accumulatedPastExexcutionTimeSeconds":3}})",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"LocalQueue","metadata":{"name":"training-queue","namespace":"training"},
          "spec":{"clusterQueue":"gpu-cluster-queue"},"status":{"flavorUsage":[]}})",
  };
  for (const char* text : objects) {
    Object v1 = json::parse(text);
    SCOPED_TRACE(v1["kind"].get<std::string>());
    Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
    EXPECT_EQ(v2["apiVersion"], "kueue.x-k8s.io/v1beta2");
    EXPECT_EQ(MustConvert(v2, "kueue.x-k8s.io/v1beta1"), v1);
  }
}

TEST(ConvertObjectTest, MalformedValuesAreCarriedForValidation) {
  Object v1 = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue",
      "spec":{"cohort":5,"flavorFungibility":"bad"}})");
  Object v2 = MustConvert(v1, "kueue.x-k8s.io/v1beta2");
  EXPECT_EQ(v2["spec"], json::parse(R"({"cohortName":5,"flavorFungibility":"bad"})"));
}

// kubernetes pkg/apis/events/v1/conversion.go: one stored Event, two views.
constexpr char kCoreEvent[] = R"({"apiVersion":"v1","kind":"Event",
    "metadata":{"name":"p.1","namespace":"team"},
    "involvedObject":{"apiVersion":"v1","kind":"Pod","name":"p","namespace":"team","uid":"u",
                      "fieldPath":"spec.containers{main}"},
    "reason":"BackOff","message":"Back-off restarting failed container main","type":"Warning",
    "source":{"component":"kubelet","host":"node-0"},"reportingComponent":"kubelet",
    "reportingInstance":"node-0","firstTimestamp":"2026-01-01T00:00:00Z",
    "lastTimestamp":"2026-01-01T00:01:00Z","count":4,"action":"Restart",
    "related":{"kind":"Node","name":"node-0"},"eventTime":null,
    "series":{"count":2,"lastObservedTime":"2026-01-01T00:01:00.000000Z"}})";

TEST(ConvertObjectTest, CoreEventToEventsV1RenamesTheFieldsUpstreamRenames) {
  Object ev = MustConvert(json::parse(kCoreEvent), "events.k8s.io/v1");
  EXPECT_EQ(ev["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ(ev["regarding"]["fieldPath"], "spec.containers{main}");
  EXPECT_EQ(ev["note"], "Back-off restarting failed container main");
  EXPECT_EQ(ev["deprecatedSource"], (json{{"component", "kubelet"}, {"host", "node-0"}}));
  EXPECT_EQ(ev["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(ev["deprecatedLastTimestamp"], "2026-01-01T00:01:00Z");
  EXPECT_EQ(ev["deprecatedCount"], 4);
  EXPECT_EQ(ev["reportingController"], "kubelet");
  // Same names in both versions.
  EXPECT_EQ(ev["reportingInstance"], "node-0");
  EXPECT_EQ(ev["action"], "Restart");
  EXPECT_EQ(ev["related"]["name"], "node-0");
  EXPECT_EQ(ev["series"]["count"], 2);
  EXPECT_EQ(ev["reason"], "BackOff");
  EXPECT_EQ(ev["type"], "Warning");
  for (const char* gone :
       {"involvedObject", "message", "source", "firstTimestamp", "lastTimestamp", "count", "reportingComponent"}) {
    EXPECT_FALSE(ev.contains(gone)) << gone;
  }
}

TEST(ConvertObjectTest, EventsRoundTripBetweenTheGroupsLosslessly) {
  const Object core = json::parse(kCoreEvent);
  const Object events = MustConvert(core, "events.k8s.io/v1");
  EXPECT_EQ(MustConvert(events, "v1"), core);
  EXPECT_EQ(MustConvert(MustConvert(events, "v1"), "events.k8s.io/v1"), events);
  // Other kinds still cannot change groups.
  EXPECT_EQ(ConvertObject(json{{"apiVersion", "v1"}, {"kind", "Pod"}}, "events.k8s.io/v1").status().code(),
            Code::kBadRequest);
}

}  // namespace
}  // namespace berth::api
