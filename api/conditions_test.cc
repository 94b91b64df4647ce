#include "api/conditions.h"

#include <gtest/gtest.h>

namespace berth::api {
namespace {

Time At(int seconds) { return Time() + std::chrono::seconds(1700000000 + seconds); }

TEST(ConditionsTest, SetAppendsThenChangesTransitionTimeOnlyOnAStatusChange) {
  Object wl = {{"metadata", {{"name", "w"}, {"generation", 3}}}};
  EXPECT_TRUE(SetCondition(&wl, {"QuotaReserved", "False", "Pending", "waiting"}, At(0)));
  const Object* c = FindCondition(wl, "QuotaReserved");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["lastTransitionTime"], FormatRfc3339(At(0)));
  EXPECT_EQ((*c)["observedGeneration"], 3);
  EXPECT_FALSE(IsConditionTrue(wl, "QuotaReserved"));

  // Same status, new message: reason and message change, the transition time does not.
  EXPECT_TRUE(SetCondition(&wl, {"QuotaReserved", "False", "Pending", "still waiting"}, At(5)));
  EXPECT_EQ(ConditionField(wl, "QuotaReserved", "message"), "still waiting");
  EXPECT_EQ(ConditionTransitionTime(wl, "QuotaReserved"), At(0));
  // Nothing new: no change reported.
  EXPECT_FALSE(SetCondition(&wl, {"QuotaReserved", "False", "Pending", "still waiting"}, At(9)));
  EXPECT_TRUE(ConditionHolds(wl, {"QuotaReserved", "False", "Pending", "still waiting"}));
  EXPECT_FALSE(ConditionHolds(wl, {"QuotaReserved", "True", "QuotaReserved", ""}));

  EXPECT_TRUE(SetCondition(&wl, {"QuotaReserved", "True", "QuotaReserved", "admitted"}, At(10)));
  EXPECT_TRUE(IsConditionTrue(wl, "QuotaReserved"));
  EXPECT_EQ(ConditionTransitionTime(wl, "QuotaReserved"), At(10));

  // A new generation makes a held condition stale.
  wl["metadata"]["generation"] = 4;
  EXPECT_FALSE(ConditionHolds(wl, {"QuotaReserved", "True", "QuotaReserved", "admitted"}));
}

// batch/v1 JobCondition and core/v1 PodCondition have no observedGeneration: the API
// server prunes it, so setting it would make every pass see a change and write again.
TEST(ConditionsTest, ConditionsWithoutObservedGenerationDoNotRecordIt) {
  Object job = {{"metadata", {{"name", "j"}, {"generation", 2}}}};
  const Condition complete{"Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods"};
  EXPECT_TRUE(SetCondition(&job, complete, At(0), ConditionKind::kNoObservedGeneration));
  const Object* c = FindCondition(job, "Complete");
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(c->contains("observedGeneration")) << c->dump();
  // What the API server stores is what was set: setting it again changes nothing.
  const Object stored = job;
  EXPECT_FALSE(SetCondition(&job, complete, At(9), ConditionKind::kNoObservedGeneration));
  EXPECT_EQ(job, stored);
  EXPECT_TRUE(ConditionHolds(stored, complete, ConditionKind::kNoObservedGeneration));
  // A metav1.Condition reader of the same object wants the generation recorded.
  EXPECT_FALSE(ConditionHolds(stored, complete));
}

TEST(ConditionsTest, AbsentAndMalformedConditionsReadAsAbsent) {
  const Object none = {{"status", {{"conditions", "not a list"}}}};
  EXPECT_EQ(FindCondition(none, "Ready"), nullptr);
  EXPECT_FALSE(IsConditionTrue(none, "Ready"));
  EXPECT_EQ(ConditionField(none, "Ready", "reason"), "");
  EXPECT_EQ(ConditionTransitionTime(none, "Ready"), std::nullopt);
  const Object bad_time = Object::parse(R"({"status": {"conditions": [
      {"type": "Ready", "status": "True", "lastTransitionTime": "yesterday"}]}})");
  EXPECT_TRUE(IsConditionTrue(bad_time, "Ready"));
  EXPECT_EQ(ConditionTransitionTime(bad_time, "Ready"), std::nullopt);
}

TEST(ConditionsTest, RemoveDeletesOnlyThatType) {
  Object obj;
  SetCondition(&obj, {"A", "True", "r", "m"}, At(0));
  SetCondition(&obj, {"B", "False", "r", "m"}, At(0));
  EXPECT_TRUE(RemoveCondition(&obj, "A"));
  EXPECT_FALSE(RemoveCondition(&obj, "A"));
  EXPECT_EQ(FindCondition(obj, "A"), nullptr);
  EXPECT_NE(FindCondition(obj, "B"), nullptr);
}

}  // namespace
}  // namespace berth::api
