#include "placement/model.h"

#include <gtest/gtest.h>

#include "placement/testing/builders.h"

namespace berth::placement {
namespace {

using testing::At;
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
