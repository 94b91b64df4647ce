#include "store/object_meta.h"

#include "core/status.h"

#include <gtest/gtest.h>

namespace berth::store {
namespace {

api::Object Obj(nlohmann::json meta, nlohmann::json spec = {{"a", 1}}) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(meta)}, {"spec", std::move(spec)}};
}

Time At(int seconds) {
  Time t;
  BERTH_CHECK(ParseRfc3339("2026-01-01T00:00:00Z", &t));
  return t + std::chrono::seconds(seconds);
}

TEST(SpecChangedTest, IgnoresMetadataStatusApiVersionKind) {
  api::Object a = Obj({{"name", "x"}});
  api::Object b = a;
  b["metadata"]["labels"] = {{"k", "v"}};
  b["status"] = {{"phase", "Running"}};
  b["apiVersion"] = "v2";
  EXPECT_FALSE(SpecChanged(a, b));
  b["spec"]["a"] = 2;
  EXPECT_TRUE(SpecChanged(a, b));
  api::Object c = a;
  c["data"] = {{"k", "v"}};  // a new top-level field
  EXPECT_TRUE(SpecChanged(a, c));
  EXPECT_TRUE(SpecChanged(c, a));
  api::Object d = a;
  d.erase("spec");
  EXPECT_TRUE(SpecChanged(a, d));

  EXPECT_TRUE(SameOutsideSpec(a, c));
  EXPECT_FALSE(SameOutsideSpec(a, b));
  api::Object e = a;
  e["status"] = nullptr;  // present (null) vs missing
  EXPECT_FALSE(SameOutsideSpec(a, e));
}

TEST(PlanDeleteTest, Table) {
  struct Case {
    const char* name;
    nlohmann::json meta;
    std::optional<int64_t> grace;
    DeletePlan::Action action;
    const char* deletion_timestamp;  // for kMark
    int64_t grace_seconds;           // for kMark
  };
  const std::vector<Case> cases = {
      {"plain, no grace", {{"name", "x"}}, std::nullopt, DeletePlan::Action::kRemove, "", 0},
      {"negative grace is 0", {{"name", "x"}}, -5, DeletePlan::Action::kRemove, "", 0},
      {"grace marks", {{"name", "x"}}, 30, DeletePlan::Action::kMark, "2026-01-01T00:00:40Z", 30},
      {"finalizers mark now", {{"finalizers", {"f"}}}, std::nullopt, DeletePlan::Action::kMark,
       "2026-01-01T00:00:10Z", 0},
      {"empty finalizers remove", {{"finalizers", nlohmann::json::array()}}, 0,
       DeletePlan::Action::kRemove, "", 0},
      {"marked, finalizers, again", {{"finalizers", {"f"}}, {"deletionTimestamp", "2026-01-01T00:00:00Z"},
       {"deletionGracePeriodSeconds", 0}}, std::nullopt, DeletePlan::Action::kNothing, "", 0},
      {"marked with grace, longer grace", {{"deletionTimestamp", "2026-01-01T00:00:30Z"},
       {"deletionGracePeriodSeconds", 30}}, 60, DeletePlan::Action::kNothing, "", 0},
      {"marked with grace, shorter grace", {{"deletionTimestamp", "2026-01-01T00:00:30Z"},
       {"deletionGracePeriodSeconds", 30}}, 5, DeletePlan::Action::kMark, "2026-01-01T00:00:15Z", 5},
      {"marked with grace, shorter grace but later deadline keeps the deadline",
       {{"deletionTimestamp", "2026-01-01T00:00:12Z"}, {"deletionGracePeriodSeconds", 30}}, 5,
       DeletePlan::Action::kMark, "2026-01-01T00:00:12Z", 5},
      {"marked with grace, grace 0 removes", {{"deletionTimestamp", "2026-01-01T00:00:30Z"},
       {"deletionGracePeriodSeconds", 30}}, 0, DeletePlan::Action::kRemove, "", 0},
      {"marked with grace and finalizers, grace 0", {{"finalizers", {"f"}},
       {"deletionTimestamp", "2026-01-01T00:00:30Z"}, {"deletionGracePeriodSeconds", 30}}, 0,
       DeletePlan::Action::kMark, "2026-01-01T00:00:10Z", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    DeletePlan plan = PlanDelete(Obj(c.meta), c.grace, At(10));
    EXPECT_EQ(plan.action, c.action);
    if (c.action == DeletePlan::Action::kMark) {
      EXPECT_EQ(plan.marked["metadata"]["deletionTimestamp"], c.deletion_timestamp);
      EXPECT_EQ(plan.marked["metadata"]["deletionGracePeriodSeconds"], c.grace_seconds);
      EXPECT_EQ(plan.marked["spec"], Obj(c.meta)["spec"]);
    }
  }
}

TEST(ShouldRemoveOnUpdateTest, NeedsMarkNoFinalizersAndElapsedGrace) {
  api::Object marked = Obj({{"deletionTimestamp", "2026-01-01T00:00:00Z"}, {"deletionGracePeriodSeconds", 0},
                            {"finalizers", {"f"}}});
  api::Object cleared = marked;
  cleared["metadata"]["finalizers"] = nlohmann::json::array();
  EXPECT_TRUE(ShouldRemoveOnUpdate(marked, cleared));
  EXPECT_FALSE(ShouldRemoveOnUpdate(marked, marked));
  api::Object graceful = marked;
  graceful["metadata"]["deletionGracePeriodSeconds"] = 30;
  EXPECT_FALSE(ShouldRemoveOnUpdate(graceful, cleared));
  EXPECT_FALSE(ShouldRemoveOnUpdate(Obj({{"finalizers", {"f"}}}), Obj({{"name", "x"}})));
}

TEST(StampTest, CreateAndUpdate) {
  api::Object o = Obj({{"name", "x"}, {"resourceVersion", "5"}, {"deletionGracePeriodSeconds", 3}});
  StampCreate(o, At(61));
  EXPECT_EQ(o["metadata"]["creationTimestamp"], "2026-01-01T00:01:01Z");
  EXPECT_EQ(o["metadata"]["generation"], 1);
  EXPECT_FALSE(o["metadata"].contains("resourceVersion"));
  EXPECT_FALSE(o["metadata"].contains("deletionGracePeriodSeconds"));
  SetResourceVersion(o, 12);
  EXPECT_EQ(o["metadata"]["resourceVersion"], "12");

  api::Object next = Obj({{"name", "x"}, {"uid", "forged"}, {"deletionTimestamp", "2030-01-01T00:00:00Z"}},
                         {{"a", 2}});
  EXPECT_TRUE(StampUpdate(o, next));
  EXPECT_EQ(next["metadata"]["uid"], o["metadata"]["uid"]);
  EXPECT_FALSE(next["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(next["metadata"]["generation"], 2);
  EXPECT_EQ(next["metadata"]["resourceVersion"], "12");
}

}  // namespace
}  // namespace berth::store
