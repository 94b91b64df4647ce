#include "placement/model.h"

#include <gtest/gtest.h>

#include "placement/testing/builders.h"

namespace berth::placement {
namespace {

using testing::At;
using testing::NodeBuilder;
using testing::PodBuilder;
using testing::Q;

TEST(ResourceListTest, KeepsNamesSortedAndSumsAndMaxes) {
  ResourceList a = ResourceList::MustParse({{"memory", "1Gi"}, {"cpu", "500m"}});
  EXPECT_EQ(a.items()[0].first, "cpu");
  EXPECT_EQ(a.items()[1].first, "memory");
  a.AddAll(ResourceList::MustParse({{"cpu", "1500m"}, {"nvidia.com/gpu", "1"}}));
  EXPECT_EQ(a.Get("cpu"), Q("2"));
  EXPECT_EQ(a.Get("nvidia.com/gpu"), Q("1"));
  EXPECT_EQ(a.Get("absent"), Q("0"));
  a.MaxWith(ResourceList::MustParse({{"cpu", "1"}, {"memory", "2Gi"}}));
  EXPECT_EQ(a, ResourceList::MustParse({{"cpu", "2"}, {"memory", "2Gi"}, {"nvidia.com/gpu", "1"}}));
}

// The same formula as admission/ (core/pod_requests.h): requests, limits
// only as defaults, init containers as a max, sidecars added, overhead added.
TEST(PodRequestsTest, FollowsKubeSchedulerPodRequests) {
  PodResources pod;
  pod.init_containers.push_back({ResourceList::MustParse({{"cpu", "100m"}}), {}, true});
  pod.init_containers.push_back({ResourceList::MustParse({{"cpu", "200m"}}), {}, false});
  pod.containers.push_back({ResourceList::MustParse({{"cpu", "100m"}}),
                            ResourceList::MustParse({{"cpu", "4"}, {"memory", "1Gi"}}), false});
  pod.overhead = ResourceList::MustParse({{"cpu", "10m"}});
  // cpu: max(100m app + 100m sidecar, 200m init + 100m sidecar) + 10m = 310m;
  // memory: the limit stands in for the missing request.
  EXPECT_EQ(PodRequests(pod), ResourceList::MustParse({{"cpu", "310m"}, {"memory", "1Gi"}}));

  PodResources inits;
  inits.init_containers.push_back({ResourceList::MustParse({{"cpu", "3"}}), {}, false});
  inits.containers.push_back({ResourceList::MustParse({{"cpu", "1"}}), {}, false});
  inits.containers.push_back({ResourceList::MustParse({{"cpu", "1"}}), {}, false});
  EXPECT_EQ(PodRequests(inits), ResourceList::MustParse({{"cpu", "3"}}));
}

struct TolerationCase {
  const char* name;
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

TEST(TolerationTest, ToleratesTaintTable) {
  using Op = Toleration::Operator;
  const Taint gpu{"node-role", "gpu", TaintEffect::kNoSchedule};
  const std::vector<TolerationCase> cases = {
      {"equal key value effect", {"node-role", Op::kEqual, "gpu", TaintEffect::kNoSchedule}, gpu, true},
      {"equal wrong value", {"node-role", Op::kEqual, "cpu", TaintEffect::kNoSchedule}, gpu, false},
      {"equal any effect", {"node-role", Op::kEqual, "gpu", std::nullopt}, gpu, true},
      {"wrong effect", {"node-role", Op::kEqual, "gpu", TaintEffect::kNoExecute}, gpu, false},
      {"exists ignores value", {"node-role", Op::kExists, "", std::nullopt}, gpu, true},
      {"exists other key", {"other", Op::kExists, "", std::nullopt}, gpu, false},
      {"empty key exists tolerates all", {"", Op::kExists, "", std::nullopt}, gpu, true},
      {"empty key exists, effect must match",
       {"", Op::kExists, "", TaintEffect::kPreferNoSchedule}, gpu, false},
      {"empty value equals empty value",
       {"node-role.kubernetes.io/control-plane", Op::kEqual, "", std::nullopt},
       {"node-role.kubernetes.io/control-plane", "", TaintEffect::kNoSchedule}, true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.toleration.Tolerates(c.taint), c.tolerates) << c.name;
  }
}

struct TermCase {
  const char* name;
  NodeSelectorTerm term;
  bool matches;
};

TEST(NodeSelectorTermTest, OperatorsAndFieldsTable) {
  using Op = NodeSelectorRequirement::Operator;
  Node node = NodeBuilder("gpu-1").Label("zone", "a").Label("gpus", "8").Build();
  const std::vector<TermCase> cases = {
      {"In match", {{{"zone", Op::kIn, {"b", "a"}}}, {}}, true},
      {"In miss", {{{"zone", Op::kIn, {"b"}}}, {}}, false},
      {"In absent key", {{{"rack", Op::kIn, {"a"}}}, {}}, false},
      {"NotIn other value", {{{"zone", Op::kNotIn, {"b"}}}, {}}, true},
      {"NotIn same value", {{{"zone", Op::kNotIn, {"a"}}}, {}}, false},
      {"NotIn absent key matches", {{{"rack", Op::kNotIn, {"a"}}}, {}}, true},
      {"Exists", {{{"zone", Op::kExists, {}}}, {}}, true},
      {"Exists absent", {{{"rack", Op::kExists, {}}}, {}}, false},
      {"DoesNotExist absent", {{{"rack", Op::kDoesNotExist, {}}}, {}}, true},
      {"DoesNotExist present", {{{"zone", Op::kDoesNotExist, {}}}, {}}, false},
      {"Gt numeric", {{{"gpus", Op::kGt, {"4"}}}, {}}, true},
      {"Gt equal is false", {{{"gpus", Op::kGt, {"8"}}}, {}}, false},
      {"Lt numeric", {{{"gpus", Op::kLt, {"10"}}}, {}}, true},
      {"Gt non-numeric label", {{{"zone", Op::kGt, {"1"}}}, {}}, false},
      {"Gt invalid value", {{{"gpus", Op::kGt, {"x"}}}, {}}, false},
      {"Gt two values invalid", {{{"gpus", Op::kGt, {"1", "2"}}}, {}}, false},
      {"In without values invalid", {{{"zone", Op::kIn, {}}}, {}}, false},
      {"expressions are ANDed",
       {{{"zone", Op::kIn, {"a"}}, {"gpus", Op::kLt, {"2"}}}, {}}, false},
      {"matchFields metadata.name In", {{}, {{"metadata.name", Op::kIn, {"gpu-1"}}}}, true},
      {"matchFields metadata.name NotIn", {{}, {{"metadata.name", Op::kNotIn, {"gpu-1"}}}}, false},
      {"matchFields other key invalid", {{}, {{"metadata.uid", Op::kIn, {"gpu-1"}}}}, false},
      {"empty term matches nothing", {{}, {}}, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(MatchesNodeSelectorTerm(c.term, node), c.matches) << c.name;
  }
  // Terms are ORed; an invalid term does not stop the others.
  std::vector<NodeSelectorTerm> terms = {{{{"gpus", Op::kGt, {"x"}}}, {}},
                                         {{{"zone", Op::kIn, {"a"}}}, {}}};
  EXPECT_TRUE(MatchesNodeSelectorTerms(terms, node));
  EXPECT_FALSE(MatchesNodeSelectorTerms({}, node));
}

TEST(PreemptionPolicyTest, NamesRoundTrip) {
  EXPECT_EQ(PreemptionPolicyName(PreemptionPolicy::kNever), "Never");
  EXPECT_EQ(ParsePreemptionPolicy("PreemptLowerPriority"), PreemptionPolicy::kPreemptLowerPriority);
  EXPECT_EQ(ParsePreemptionPolicy("never"), std::nullopt);
}

TEST(MoreImportantPodTest, PriorityThenEarlierStartThenKey) {
  Pod high = PodBuilder("a").Priority(10).Started(At(100)).Build();
  Pod low_old = PodBuilder("b").Priority(1).Started(At(0)).Build();
  Pod low_new = PodBuilder("c").Priority(1).Started(At(50)).Build();
  Pod low_unstarted = PodBuilder("d").Priority(1).Build();
  EXPECT_TRUE(MoreImportantPod(high, low_old));
  EXPECT_TRUE(MoreImportantPod(low_old, low_new));
  EXPECT_FALSE(MoreImportantPod(low_new, low_old));
  EXPECT_TRUE(MoreImportantPod(low_new, low_unstarted));  // not started counts as now
  Pod twin = PodBuilder("e").Priority(1).Started(At(50)).Build();
  EXPECT_TRUE(MoreImportantPod(low_new, twin));  // same priority and start: by key
  EXPECT_FALSE(MoreImportantPod(twin, low_new));
}

}  // namespace
}  // namespace berth::placement
