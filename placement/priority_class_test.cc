// PriorityClass resolution as the Priority admission plugin (seed trap 3,
// reported-failures C09).
#include "placement/priority_class.h"

#include <gtest/gtest.h>

namespace berth::placement {
namespace {

constexpr auto kNever = PreemptionPolicy::kNever;
constexpr auto kLower = PreemptionPolicy::kPreemptLowerPriority;

std::vector<PriorityClass> SeedClasses() {
  return {
      {"pytorchjob-zero-priority", 0, false, kNever},
      {"high-priority", 1000, false, kLower},
  };
}

TEST(PriorityClassTest, NamedClassSetsValueAndPolicy) {
  auto r = ResolvePodPriority(SeedClasses(), "w0", {"pytorchjob-zero-priority", {}, {}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, (ResolvedPriority{"pytorchjob-zero-priority", 0, kNever}));
  r = ResolvePodPriority(SeedClasses(), "hp", {"high-priority", {}, {}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ResolvedPriority{"high-priority", 1000, kLower}));
}

TEST(PriorityClassTest, UnknownClassIsForbidden) {
  auto r = ResolvePodPriority(SeedClasses(), "w0", {"no-such", {}, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kForbidden);
  EXPECT_EQ(r.status().message(),
            "pods \"w0\" is forbidden: no PriorityClass with name no-such was found");
}

TEST(PriorityClassTest, NoNameAndNoDefaultIsZeroPreemptLowerPriority) {
  auto r = ResolvePodPriority(SeedClasses(), "p", {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ResolvedPriority{"", 0, kLower}));
}

// Seed trap 3: a globalDefault class silently applies to pods naming no class.
TEST(PriorityClassTest, GlobalDefaultAppliesWhenNoNameGiven) {
  auto classes = SeedClasses();
  classes.push_back({"default-priority", 100, true, kLower});
  auto r = ResolvePodPriority(classes, "worker", {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ResolvedPriority{"default-priority", 100, kLower}));
  // A pod naming its class is unaffected by the default.
  r = ResolvePodPriority(classes, "worker", {"pytorchjob-zero-priority", {}, {}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->priority, 0);
  EXPECT_EQ(r->preemption_policy, kNever);
}

TEST(PriorityClassTest, SeveralDefaultsTakeTheLowestValueThenName) {
  std::vector<PriorityClass> classes = {
      {"b-default", 50, true, kLower}, {"a-default", 50, true, kNever}, {"big", 900, true, kLower}};
  ASSERT_NE(DefaultPriorityClass(classes), nullptr);
  EXPECT_EQ(DefaultPriorityClass(classes)->name, "a-default");
  auto r = ResolvePodPriority(classes, "p", {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (ResolvedPriority{"a-default", 50, kNever}));
}

TEST(PriorityClassTest, SystemClassesAlwaysExist) {
  auto r = ResolvePodPriority({}, "dns", {"system-cluster-critical", {}, {}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->priority, 2000000000);
  r = ResolvePodPriority({}, "agent", {"system-node-critical", {}, {}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->priority, 2000001000);
  EXPECT_EQ(r->preemption_policy, kLower);
}

TEST(PriorityClassTest, ClientPriorityMustMatchTheClass) {
  auto r = ResolvePodPriority(SeedClasses(), "hp", {"high-priority", 1000, {}});
  EXPECT_TRUE(r.ok());
  r = ResolvePodPriority(SeedClasses(), "hp", {"high-priority", 5, {}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kForbidden);
  EXPECT_EQ(r.status().message(),
            "pods \"hp\" is forbidden: the integer value of priority (5) must not be provided in "
            "pod spec; priority admission controller computed 1000 from the given PriorityClass "
            "name");
}

TEST(PriorityClassTest, ClientPolicyMustMatchTheClass) {
  auto r = ResolvePodPriority(SeedClasses(), "w", {"pytorchjob-zero-priority", {}, kLower});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "pods \"w\" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) "
            "must not be provided in pod spec; priority admission controller computed Never from "
            "the given PriorityClass name");
  r = ResolvePodPriority(SeedClasses(), "w", {"pytorchjob-zero-priority", {}, kNever});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->preemption_policy, kNever);
}

// C09: the class's Never is copied onto the pod; PreemptLowerPriority is only
// the answer when neither the class nor the pod carries a policy.
TEST(PriorityClassTest, C09PolicyIsNeverLostOnTheWayToThePod) {
  std::vector<PriorityClass> classes = {
      {"gpu-high", 1000, false, kNever},
      {"legacy", 1000, false, std::nullopt},  // stored without the field
  };
  auto r = ResolvePodPriority(classes, "seventh", {"gpu-high", {}, {}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->preemption_policy, kNever);
  r = ResolvePodPriority(classes, "p", {"legacy", {}, kNever});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->preemption_policy, kNever);  // the pod's own value survives
  r = ResolvePodPriority(classes, "p", {"legacy", {}, {}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->preemption_policy, kLower);  // genuinely absent
}

}  // namespace
}  // namespace berth::placement
