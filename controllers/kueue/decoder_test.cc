#include "controllers/kueue/decoder.h"

#include <gtest/gtest.h>

namespace berth::controllers::kueue {
namespace {

using admission::ResourceNames;

TEST(DecoderTest, ClusterQueueQuotasAndPolicies) {
  ResourceNames names;
  api::Object cq = api::Object::parse(R"({
    "metadata": {"name": "team-a"},
    "spec": {"cohortName": "all", "queueingStrategy": "StrictFIFO",
      "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any",
                     "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100}},
      "stopPolicy": "HoldAndDrain",
      "resourceGroups": [{"coveredResources": ["cpu", "memory"],
        "flavors": [{"name": "default", "resources": [
          {"name": "cpu", "nominalQuota": "5", "borrowingLimit": "500m"},
          {"name": "memory", "nominalQuota": "36Gi", "lendingLimit": 1024}]}]}]}})");
  admission::ClusterQueue out = DecodeClusterQueue(cq, names);
  EXPECT_EQ(out.name, "team-a");
  EXPECT_EQ(out.cohort, "all");
  EXPECT_EQ(out.queueing_strategy, admission::QueueingStrategy::kStrictFIFO);
  EXPECT_EQ(out.preemption.within_cluster_queue, admission::PreemptionPolicy::kLowerPriority);
  EXPECT_EQ(out.preemption.reclaim_within_cohort, admission::PreemptionPolicy::kAny);
  EXPECT_EQ(out.preemption.borrow_within_cohort.policy, admission::BorrowWithinCohort::Policy::kLowerPriority);
  EXPECT_EQ(out.preemption.borrow_within_cohort.max_priority_threshold, 100);
  EXPECT_EQ(out.stop_policy, admission::StopPolicy::kHoldAndDrain);
  ASSERT_EQ(out.resource_groups.size(), 1u);
  const auto& g = out.resource_groups[0];
  ASSERT_EQ(g.covered_resources.size(), 2u);
  EXPECT_EQ(names.Name(g.covered_resources[1]), "memory");
  ASSERT_EQ(g.flavors.size(), 1u);
  EXPECT_EQ(g.flavors[0].resources[0].nominal, 5000);
  EXPECT_EQ(g.flavors[0].resources[0].borrowing_limit, 500);
  EXPECT_FALSE(g.flavors[0].resources[0].lending_limit.has_value());
  EXPECT_EQ(g.flavors[0].resources[1].nominal, 36LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(g.flavors[0].resources[1].lending_limit, 1024 * 1000);
}

// spec.fairSharing.weight: a Quantity (default 1; "0" borrows last).
TEST(DecoderTest, FairSharingWeightOfClusterQueuesAndCohorts) {
  ResourceNames names;
  EXPECT_EQ(DecodeClusterQueue(api::Object::parse(R"({"metadata": {"name": "a"}, "spec": {}})"), names).fair_weight,
            1.0);
  EXPECT_EQ(DecodeClusterQueue(
                api::Object::parse(R"({"metadata": {"name": "a"}, "spec": {"fairSharing": {"weight": "2"}}})"), names)
                .fair_weight,
            2.0);
  EXPECT_EQ(DecodeClusterQueue(
                api::Object::parse(R"({"metadata": {"name": "a"}, "spec": {"fairSharing": {"weight": "0"}}})"), names)
                .fair_weight,
            0.0);
  EXPECT_EQ(
      DecodeCohort(api::Object::parse(R"({"metadata": {"name": "c"}, "spec": {"fairSharing": {"weight": "500m"}}})"),
                   names)
          .fair_weight,
      0.5);
  // Below the Quantity's milli unit the weight is not rounded to 0 (which
  // would mean "borrows last").
  EXPECT_EQ(
      DecodeClusterQueue(
          api::Object::parse(R"({"metadata": {"name": "a"}, "spec": {"fairSharing": {"weight": "1e-6"}}})"), names)
          .fair_weight,
      1e-6);
  EXPECT_EQ(DecodeCohort(api::Object::parse(R"({"metadata": {"name": "c"}, "spec": {"parentName": "root"}})"), names)
                .fair_weight,
            1.0);
}

TEST(DecoderTest, PodSetCountsRequestsNotLimitsWithInitAndSidecar) {
  ResourceNames names;
  // Sidecar 100m, then an init container 200m, then an app container 100m
  // with only a limit on memory: cpu 300m (the worked example of kubernetes/website#57244),
  // memory = limit.
  api::Object tmpl = api::Object::parse(R"({"spec": {
    "initContainers": [{"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},
                       {"name": "init", "resources": {"requests": {"cpu": "200m"}}}],
    "containers": [{"name": "app", "resources": {"requests": {"cpu": "100m"}, "limits": {"cpu": "2", "memory": "1Gi"}}}],
    "nodeSelector": {"zone": "a"},
    "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}]}})");
  admission::PodSet ps = DecodePodSet("main", 3, tmpl, names);
  EXPECT_EQ(ps.count, 3);
  EXPECT_EQ(ps.requests.Get(names.Find("cpu")), 300);
  EXPECT_EQ(ps.requests.Get(names.Find("memory")), 1024LL * 1024 * 1024 * 1000);
  EXPECT_EQ(ps.node_selector.at("zone"), "a");
  ASSERT_EQ(ps.tolerations.size(), 1u);
  EXPECT_EQ(ps.tolerations[0].op, scheduling::Toleration::Operator::kExists);
}

// Kueue's resources.ResourceValue: per pod, cpu keeps its milli-units and every other
// resource is rounded up to whole units (so count x request is what the Workload's
// admission check accepts: "1500m" bytes x 2 pods is 4 bytes, not 3).
TEST(DecoderTest, PodSetRequestsRoundNonCpuResourcesUpToWholeUnitsPerPod) {
  ResourceNames names;
  api::Object tmpl = api::Object::parse(R"({"spec": {"containers": [{"name": "app", "resources": {"requests":
    {"cpu": "1500m", "memory": "1500m", "example.com/dev": "2", "ephemeral-storage": "1m"}}}]}})");
  admission::PodSet ps = DecodePodSet("main", 2, tmpl, names);
  EXPECT_EQ(ps.requests.Get(names.Find("cpu")), 1500);
  EXPECT_EQ(ps.requests.Get(names.Find("memory")), 2000);
  EXPECT_EQ(ps.requests.Get(names.Find("example.com/dev")), 2000);
  EXPECT_EQ(ps.requests.Get(names.Find("ephemeral-storage")), 1000);
}

TEST(DecoderTest, AdmissionRoundTripAndWorkloadState) {
  ResourceNames names;
  admission::Admission adm;
  adm.cluster_queue = "cq";
  admission::PodSetAssignment psa;
  psa.name = "main";
  psa.count = 2;
  psa.flavors = {{names.Intern("cpu"), "default"}};
  psa.resource_usage.Set(names.Intern("cpu"), 8000);
  adm.pod_sets.push_back(psa);
  api::Object json = EncodeAdmission(adm, names);
  EXPECT_EQ(json["podSetAssignments"][0]["resourceUsage"]["cpu"], "8");
  EXPECT_EQ(json["podSetAssignments"][0]["flavors"]["cpu"], "default");

  api::Object wl = {{"metadata", {{"name", "w"}, {"namespace", "ns"}, {"uid", "u1"},
                                  {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
                    {"spec", {{"priority", 7}, {"podSets", api::Object::array()}}},
                    {"status", {{"admission", json},
                                {"conditions", api::Object::parse(R"([
      {"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2026-01-01T00:00:05Z"},
      {"type": "Evicted", "status": "True"},
      {"type": "Preempted", "status": "True", "message": "Preempted to accommodate a workload (UID: hi-1, JobUID: j) due to prioritization in the ClusterQueue"}])")}}}};
  admission::Workload w = DecodeWorkload(wl, names);
  EXPECT_EQ(w.priority, 7);
  EXPECT_EQ(w.state, admission::AdmissionState::kEvicting);
  EXPECT_EQ(w.cluster_queue, "cq");
  EXPECT_EQ(w.evicted_for, "hi-1");
  ASSERT_TRUE(w.admission.has_value());
  EXPECT_EQ(*w.admission, adm);
}

}  // namespace
}  // namespace berth::controllers::kueue
