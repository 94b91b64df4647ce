// The Priority admission plugin and the PriorityClass rules through the
// admission pipeline, with the cluster state given as a StaticObjectLookup
// (upstream: plugin/pkg/admission/priority, pkg/apis/scheduling/validation).
#include "api/priority_admission.h"

#include <gtest/gtest.h>

#include "api/admission_pipeline.h"
#include "api/registry.h"

namespace berth::api {
namespace {

using nlohmann::json;

json PriorityClass(const std::string& name, int64_t value, bool global_default = false,
                   const std::string& policy = "PreemptLowerPriority") {
  return json{{"apiVersion", "scheduling.k8s.io/v1"},
              {"kind", "PriorityClass"},
              {"metadata", {{"name", name}}},
              {"value", value},
              {"globalDefault", global_default},
              {"preemptionPolicy", policy}};
}

json Pod(const std::string& name, json spec_extra = json::object()) {
  json spec = {{"containers", json::array({{{"name", "c"}, {"image", "busybox"}}})}};
  spec.update(spec_extra);
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", spec}};
}

class PriorityAdmissionTest : public ::testing::Test {
 protected:
  // The seed's classes plus the system ones the API server creates.
  void SetUp() override {
    for (auto& pc : SystemPriorityClasses()) lookup_.Add(kPriorityClassesResource, pc);
    lookup_.Add(kPriorityClassesResource, PriorityClass("pytorchjob-zero-priority", 0, false, "Never"));
    lookup_.Add(kPriorityClassesResource, PriorityClass("high-priority", 1000));
  }
  StatusOr<AdmittedWrite> Admit(json obj, Operation op = Operation::kCreate, const json* old = nullptr) {
    WriteRequest wr;
    wr.operation = op;
    wr.object = std::move(obj);
    wr.old = old;
    wr.lookup = &lookup_;
    return pipeline_.Admit(std::move(wr));
  }

  AdmissionPipeline pipeline_{Registry::Default(), StrategyRegistry::Default()};
  StaticObjectLookup lookup_;
};

TEST_F(PriorityAdmissionTest, NamedClassSetsPriorityAndPolicy) {
  auto a = Admit(Pod("w0", {{"priorityClassName", "pytorchjob-zero-priority"}}));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->object["spec"]["priority"], 0);
  EXPECT_EQ(a->object["spec"]["preemptionPolicy"], "Never");
  a = Admit(Pod("hp", {{"priorityClassName", "high-priority"}}));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->object["spec"]["priority"], 1000);
  EXPECT_EQ(a->object["spec"]["preemptionPolicy"], "PreemptLowerPriority");
}

TEST_F(PriorityAdmissionTest, SystemClassesResolve) {
  auto a = Admit(Pod("dns", {{"priorityClassName", "system-cluster-critical"}}));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->object["spec"]["priority"], 2000000000);
  a = Admit(Pod("agent", {{"priorityClassName", "system-node-critical"}}));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->object["spec"]["priority"], 2000001000);
}

TEST_F(PriorityAdmissionTest, UnknownClassIsForbidden) {
  auto a = Admit(Pod("w0", {{"priorityClassName", "foo"}}));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kForbidden);
  EXPECT_EQ(a.status().message(), "pods \"w0\" is forbidden: no PriorityClass with name foo was found");
}

TEST_F(PriorityAdmissionTest, NoClassNoDefaultIsZeroWithoutPolicy) {
  auto a = Admit(Pod("p"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->object["spec"]["priority"], 0);
  EXPECT_FALSE(a->object["spec"].contains("priorityClassName"));
  EXPECT_FALSE(a->object["spec"].contains("preemptionPolicy"));
}

// The globalDefault trap: the class silently applies to a pod naming none.
TEST_F(PriorityAdmissionTest, GlobalDefaultAppliesToPodsNamingNoClass) {
  lookup_.Add(kPriorityClassesResource, PriorityClass("default-priority", 100, true));
  auto a = Admit(Pod("monitoring"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->object["spec"]["priorityClassName"], "default-priority");
  EXPECT_EQ(a->object["spec"]["priority"], 100);
  EXPECT_EQ(a->object["spec"]["preemptionPolicy"], "PreemptLowerPriority");
  // A pod naming its class is unaffected.
  a = Admit(Pod("w0", {{"priorityClassName", "pytorchjob-zero-priority"}}));
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->object["spec"]["priority"], 0);
}

// Two defaults (a race upstream allows): the lowest value wins.
TEST_F(PriorityAdmissionTest, SeveralDefaultsLowestValueWins) {
  lookup_.Add(kPriorityClassesResource, PriorityClass("default-high", 500, true));
  lookup_.Add(kPriorityClassesResource, PriorityClass("default-low", 50, true, "Never"));
  auto a = Admit(Pod("p"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->object["spec"]["priorityClassName"], "default-low");
  EXPECT_EQ(a->object["spec"]["priority"], 50);
  EXPECT_EQ(a->object["spec"]["preemptionPolicy"], "Never");
}

TEST_F(PriorityAdmissionTest, ClientValuesThatDisagreeAreForbidden) {
  auto a = Admit(Pod("w0", {{"priorityClassName", "high-priority"}, {"priority", 5}}));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kForbidden);
  EXPECT_EQ(a.status().message(),
            "pods \"w0\" is forbidden: the integer value of priority (5) must not be provided in pod spec; "
            "priority admission controller computed 1000 from the given PriorityClass name");
  a = Admit(Pod("w0", {{"priorityClassName", "pytorchjob-zero-priority"}, {"preemptionPolicy", "PreemptLowerPriority"}}));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(),
            "pods \"w0\" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be "
            "provided in pod spec; priority admission controller computed Never from the given PriorityClass name");
  // Without a class, a client priority other than 0 is refused too.
  a = Admit(Pod("p", {{"priority", 7}}));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kForbidden);
  // Values that agree are accepted.
  a = Admit(Pod("w0", {{"priorityClassName", "high-priority"}, {"priority", 1000}}));
  EXPECT_TRUE(a.ok()) << a.status();
}

TEST_F(PriorityAdmissionTest, UpdateKeepsThePriorityOfTheStoredPod) {
  auto created = Admit(Pod("w0", {{"priorityClassName", "pytorchjob-zero-priority"}}));
  ASSERT_TRUE(created.ok());
  json old = created->object;
  json next = old;
  next["spec"].erase("priority");
  next["spec"].erase("preemptionPolicy");
  next["metadata"]["labels"] = {{"a", "b"}};
  auto updated = Admit(next, Operation::kUpdate, &old);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->object["spec"]["priority"], 0);
  EXPECT_EQ(updated->object["spec"]["preemptionPolicy"], "Never");
}

// Offline admission (no lookup) leaves the pod as sent.
TEST_F(PriorityAdmissionTest, WithoutLookupThePluginDoesNotRun) {
  WriteRequest wr;
  wr.object = Pod("w0", {{"priorityClassName", "foo"}});
  auto a = pipeline_.Admit(std::move(wr));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->object["spec"].contains("priority"));
}

TEST_F(PriorityAdmissionTest, PriorityClassValueRange) {
  auto a = Admit(PriorityClass("too-high", 1000000001));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kInvalid);
  EXPECT_EQ(a.status().message(),
            "PriorityClass.scheduling.k8s.io \"too-high\" is invalid: value: Forbidden: maximum allowed value of a "
            "user defined priority is 1000000000");
  EXPECT_TRUE(Admit(PriorityClass("max", 1000000000)).ok());
  EXPECT_TRUE(Admit(PriorityClass("negative", -5)).ok());
  a = Admit(PriorityClass("system-foo", 10));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(),
            "PriorityClass.scheduling.k8s.io \"system-foo\" is invalid: metadata.name: Forbidden: priority class "
            "names with 'system-' prefix are reserved for system use only. error: system-foo is not a known system "
            "priority class");
  a = Admit(PriorityClass("system-node-critical", 5));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("error: value of system-node-critical PriorityClass must be 2000001000"),
            std::string::npos)
      << a.status();
  for (auto& pc : SystemPriorityClasses()) EXPECT_TRUE(Admit(pc).ok()) << Name(pc);
}

TEST_F(PriorityAdmissionTest, OnlyOneGlobalDefault) {
  lookup_.Add(kPriorityClassesResource, PriorityClass("first", 10, true));
  auto a = Admit(PriorityClass("second", 20, true));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kForbidden);
  EXPECT_EQ(a.status().message(),
            "priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass first is already marked as "
            "default. Only one default can exist");
  EXPECT_TRUE(Admit(PriorityClass("second", 20, false)).ok());
  // Updating the default itself is allowed; marking another one is not.
  json first = PriorityClass("first", 10, true);
  first["metadata"]["uid"] = "u1";
  json first_next = first;
  first_next["description"] = "d";
  EXPECT_TRUE(Admit(first_next, Operation::kUpdate, &first).ok());
  json high = PriorityClass("high-priority", 1000);
  json high_next = PriorityClass("high-priority", 1000, true);
  a = Admit(high_next, Operation::kUpdate, &high);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Code::kForbidden);
}

TEST_F(PriorityAdmissionTest, ValueAndPolicyImmutable) {
  json old = PriorityClass("high-priority", 1000);
  auto a = Admit(PriorityClass("high-priority", 2000), Operation::kUpdate, &old);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(),
            "PriorityClass.scheduling.k8s.io \"high-priority\" is invalid: value: Forbidden: may not be changed in an "
            "update.");
  a = Admit(PriorityClass("high-priority", 1000, false, "Never"), Operation::kUpdate, &old);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(),
            "PriorityClass.scheduling.k8s.io \"high-priority\" is invalid: preemptionPolicy: Invalid value: \"Never\": "
            "field is immutable");
  json described = old;
  described["description"] = "for production";
  EXPECT_TRUE(Admit(described, Operation::kUpdate, &old).ok());
}

}  // namespace
}  // namespace berth::api
