// Quota tree arithmetic (Kueue's pkg/cache/scheduler/resource_node.go) and what-if changes
// with undo.
#include "admission/snapshot.h"

#include <gtest/gtest.h>

#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::ClusterQueueBuilder;
using testing::CohortBuilder;
using testing::FlavorBuilder;
using testing::Q;
using testing::WorkloadBuilder;
using FQ = testing::FlavorQuotasBuilder;

class SnapshotTest : public ::testing::Test {
 protected:
  ResourceNames names;
  int Fr(const Snapshot& s, const std::string& flavor, const std::string& res) {
    return s.FindFr(s.FlavorIndex(flavor), names.Find(res));
  }
};

// A snapshot that owns its names reads them from its own copy (shared with
// its copies): names interned later in the table it was built with, which may
// reallocate it under a reader on another thread, do not reach it.
TEST_F(SnapshotTest, ASnapshotThatOwnsItsNamesNoLongerReadsTheTableItWasBuiltWith) {
  Snapshot s(names, {FlavorBuilder("default").Obj()},
             {ClusterQueueBuilder(names, "a").Group({FQ("default").Resource("cpu", "3")}).Obj()}, {});
  EXPECT_EQ(&s.names(), &names);
  s.OwnNames();
  EXPECT_NE(&s.names(), &names);
  const ResourceId cpu = names.Find("cpu");
  ASSERT_GE(cpu, 0);
  EXPECT_EQ(s.names().Name(cpu), "cpu");
  for (int i = 0; i < 1000; ++i) names.Intern("example.com/r" + std::to_string(i));  // reallocates
  EXPECT_EQ(s.names().Find("example.com/r0"), -1);
  EXPECT_EQ(s.names().Name(cpu), "cpu");
  const Snapshot copy = s;
  EXPECT_EQ(&copy.names(), &s.names()) << "copies share the owned table";
}

TEST_F(SnapshotTest, LendingLimitsShapeSubtreeQuotaAndAvailable) {
  // lend-a: cpu 3 LL 2 (keeps 1), lend-b: cpu 2 LL 2 (keeps 0).
  Snapshot s(names, {FlavorBuilder("default").Obj()},
             {ClusterQueueBuilder(names, "lend-a").Cohort("lend").Group({FQ("default").Resource("cpu", "3", {}, "2")}).Obj(),
              ClusterQueueBuilder(names, "lend-b").Cohort("lend").Group({FQ("default").Resource("cpu", "2", {}, "2")}).Obj()},
             {});
  int a = s.ClusterQueueIndex("lend-a"), b = s.ClusterQueueIndex("lend-b");
  int fr = Fr(s, "default", "cpu");
  int cohort = s.Parent(a);
  EXPECT_EQ(s.NodeName(cohort), "lend");
  EXPECT_EQ(s.LocalQuota(a, fr), Q("1"));
  EXPECT_EQ(s.SubtreeQuota(cohort, fr), Q("4"));
  EXPECT_EQ(s.Available(a, fr), Q("5"));
  EXPECT_EQ(s.Available(b, fr), Q("4"));
  EXPECT_EQ(s.PotentialAvailable(b, fr), Q("4"));

  ASSERT_TRUE(s.AddWorkload(WorkloadBuilder(names, "x").Request("cpu", "2").Admitted("lend-b", "default").Obj()).ok());
  EXPECT_EQ(s.Usage(cohort, fr), Q("2"));  // nothing kept locally by lend-b
  EXPECT_EQ(s.Available(b, fr), Q("2"));
  EXPECT_EQ(s.Available(a, fr), Q("3"));  // 1 local + 2 left in the cohort
  EXPECT_TRUE(s.Borrowing(b, fr) == false);

  ASSERT_TRUE(s.AddWorkload(WorkloadBuilder(names, "y").Request("cpu", "1").Admitted("lend-a", "default").Obj()).ok());
  EXPECT_EQ(s.Usage(cohort, fr), Q("2"));  // lend-a's 1 stays in its local quota
  EXPECT_EQ(s.Available(b, fr), Q("2"));
}

TEST_F(SnapshotTest, BorrowingLimitCapsAvailable) {
  Snapshot s(names, {FlavorBuilder("f").Obj()},
             {ClusterQueueBuilder(names, "a").Cohort("c").Group({FQ("f").Resource("cpu", "5", "2")}).Obj(),
              ClusterQueueBuilder(names, "b").Cohort("c").Group({FQ("f").Resource("cpu", "10")}).Obj()},
             {});
  int a = s.ClusterQueueIndex("a");
  int fr = Fr(s, "f", "cpu");
  EXPECT_EQ(s.Available(a, fr), Q("7"));
  EXPECT_EQ(s.PotentialAvailable(a, fr), Q("7"));
  ASSERT_TRUE(s.AddWorkload(WorkloadBuilder(names, "x").Request("cpu", "6").Admitted("a", "f").Obj()).ok());
  EXPECT_EQ(s.Available(a, fr), Q("1"));
  EXPECT_TRUE(s.Borrowing(a, fr));
  EXPECT_EQ(s.BorrowingLevel(a, fr, Q("1")), (std::pair<int, bool>{1, false}));
  EXPECT_EQ(s.BorrowingLevel(s.ClusterQueueIndex("b"), fr, Q("1")), (std::pair<int, bool>{0, true}));
}

TEST_F(SnapshotTest, HierarchicalCohortsWithOwnQuota) {
  Snapshot s(names, {FlavorBuilder("f").Obj()},
             {ClusterQueueBuilder(names, "guaranteed").Cohort("g").Group({FQ("f").Resource("cpu", "0")}).Obj(),
              ClusterQueueBuilder(names, "best-effort").Cohort("root").Group({FQ("f").Resource("cpu", "0")}).Obj()},
             {CohortBuilder(names, "root").Obj(),
              CohortBuilder(names, "g").Parent("root").Group({FQ("f").Resource("cpu", "4")}).Obj()});
  int g = s.ClusterQueueIndex("guaranteed"), be = s.ClusterQueueIndex("best-effort");
  int fr = Fr(s, "f", "cpu");
  EXPECT_EQ(s.Path(g), "/root/g/guaranteed");
  EXPECT_EQ(s.Available(g, fr), Q("4"));
  EXPECT_EQ(s.Available(be, fr), Q("4"));
  EXPECT_EQ(s.BorrowingLevel(g, fr, Q("4")).first, 1);
  EXPECT_EQ(s.BorrowingLevel(be, fr, Q("4")).first, 2);
}

TEST_F(SnapshotTest, SimulationsUndoExactly) {
  Snapshot s(names, {FlavorBuilder("f").Obj()},
             {ClusterQueueBuilder(names, "a").Cohort("c").Group({FQ("f").Resource("cpu", "4", {}, "1")}).Obj(),
              ClusterQueueBuilder(names, "b").Cohort("c").Group({FQ("f").Resource("cpu", "4")}).Obj()},
             {});
  ASSERT_TRUE(s.AddWorkload(WorkloadBuilder(names, "x").Request("cpu", "5").Admitted("a", "f").Obj()).ok());
  ASSERT_TRUE(s.AddWorkload(WorkloadBuilder(names, "y").Request("cpu", "2").Admitted("b", "f").Obj()).ok());
  int a = s.ClusterQueueIndex("a"), b = s.ClusterQueueIndex("b");
  int fr = Fr(s, "f", "cpu");
  int cohort = s.Parent(a);
  const Amount ua = s.Usage(a, fr), ub = s.Usage(b, fr), uc = s.Usage(cohort, fr);
  {
    UndoGuard g1 = s.SimulateWorkloadRemoval({s.FindWorkload("default/x")});
    EXPECT_EQ(s.Usage(a, fr), 0);
    EXPECT_TRUE(s.FindWorkload("default/x")->removed);
    UndoGuard g2 = s.SimulateUsageAddition(b, {{fr, Q("3")}});
    EXPECT_EQ(s.Usage(b, fr), Q("5"));
  }
  EXPECT_EQ(s.Usage(a, fr), ua);
  EXPECT_EQ(s.Usage(b, fr), ub);
  EXPECT_EQ(s.Usage(cohort, fr), uc);
  EXPECT_FALSE(s.FindWorkload("default/x")->removed);
  // A copy is independent.
  Snapshot copy = s;
  ASSERT_TRUE(copy.RemoveWorkload("default/x"));
  EXPECT_EQ(s.Usage(a, fr), ua);
  EXPECT_EQ(copy.Usage(a, fr), 0);
  EXPECT_EQ(copy.Workloads(a).size(), 0u);
  EXPECT_EQ(s.Workloads(a).size(), 1u);
}

TEST_F(SnapshotTest, CohortCycleDisablesMembersAndStopPolicyDeactivates) {
  Snapshot s(names, {FlavorBuilder("f").Obj()},
             {ClusterQueueBuilder(names, "in-cycle").Cohort("x").Group({FQ("f").Resource("cpu", "1")}).Obj(),
              ClusterQueueBuilder(names, "below-cycle").Cohort("z").Group({FQ("f").Resource("cpu", "1")}).Obj(),
              ClusterQueueBuilder(names, "stopped").Stop().Group({FQ("f").Resource("cpu", "1")}).Obj(),
              ClusterQueueBuilder(names, "fine").Cohort("w").Group({FQ("f").Resource("cpu", "1")}).Obj()},
             {CohortBuilder(names, "x").Parent("y").Obj(), CohortBuilder(names, "y").Parent("x").Obj(),
              CohortBuilder(names, "z").Parent("x").Obj()});
  EXPECT_FALSE(s.Active(s.ClusterQueueIndex("in-cycle")));
  EXPECT_FALSE(s.Active(s.ClusterQueueIndex("below-cycle")));
  EXPECT_FALSE(s.HasParent(s.ClusterQueueIndex("in-cycle")));
  int stopped = s.ClusterQueueIndex("stopped");
  EXPECT_FALSE(s.Active(stopped));
  EXPECT_EQ(s.ActiveReason(stopped), "Stopped");
  EXPECT_EQ(s.ActiveMessage(stopped), "Can't admit new workloads: is stopped.");
  EXPECT_TRUE(s.Active(s.ClusterQueueIndex("fine")));  // implicit cohort "w"
  EXPECT_EQ(s.ActiveReason(s.ClusterQueueIndex("fine")), "Ready");
}

// headlamp-k8s/plugins#1191: an inactive ClusterQueue (missing flavor, FlavorNotFound as
// Kueue's pkg/cache/scheduler/clusterqueue.go writes it) becomes active once the flavor
// exists.
TEST_F(SnapshotTest, MissingFlavorMakesQueueInactiveUntilItExists) {
  auto cq = ClusterQueueBuilder(names, "team-a")
                .Group({FQ("default").Resource("cpu", "1"), FQ("spot").Resource("cpu", "1")})
                .Obj();
  Snapshot before(names, {FlavorBuilder("default-flavor").Obj(), FlavorBuilder("spot-flavor").Obj()}, {cq}, {});
  int q = before.ClusterQueueIndex("team-a");
  EXPECT_FALSE(before.Active(q));
  EXPECT_EQ(before.ActiveReason(q), "FlavorNotFound");
  EXPECT_EQ(before.ActiveMessage(q), "Can't admit new workloads: references missing ResourceFlavor(s): [default,spot].");
  Snapshot after(names, {FlavorBuilder("default").Obj(), FlavorBuilder("spot").Obj()}, {cq}, {});
  EXPECT_TRUE(after.Active(after.ClusterQueueIndex("team-a")));
}

// kubernetes/kubernetes#139677: quantities are compared exactly; "1" is one unit, never a guessed
// scale, even next to "20096Mi" in the same cohort.
TEST_F(SnapshotTest, QuantitiesAreExactAcrossCohortMembers) {
  Snapshot s(names, {FlavorBuilder("f").Obj()},
             {ClusterQueueBuilder(names, "cq1").Cohort("c").Group({FQ("f").Resource("gpu.memory", "20096Mi")}).Obj(),
              ClusterQueueBuilder(names, "cq2").Cohort("c").Group({FQ("f").Resource("gpu.memory", "1")}).Obj()},
             {});
  int fr = Fr(s, "f", "gpu.memory");
  EXPECT_EQ(s.Nominal(s.ClusterQueueIndex("cq2"), fr), 1000);  // one byte, in milli-units
  EXPECT_EQ(s.Available(s.ClusterQueueIndex("cq2"), fr), Q("20096Mi") + Q("1"));
  EXPECT_TRUE(s.BorrowingWith(s.ClusterQueueIndex("cq2"), fr, Q("2")));
}

TEST_F(SnapshotTest, AddWorkloadErrors) {
  Snapshot s(names, {FlavorBuilder("f").Obj()}, {ClusterQueueBuilder(names, "a").Group({FQ("f").Resource("cpu", "1")}).Obj()}, {});
  Workload pending = WorkloadBuilder(names, "p").Request("cpu", "1").Obj();
  EXPECT_EQ(s.AddWorkload(pending).code(), Code::kInvalid);
  Workload unknown = WorkloadBuilder(names, "u").Request("cpu", "1").Admitted("nope", "f").Obj();
  EXPECT_EQ(s.AddWorkload(unknown).code(), Code::kInvalid);
  Workload ok = WorkloadBuilder(names, "ok").Request("cpu", "1").Admitted("a", "f").Obj();
  EXPECT_TRUE(s.AddWorkload(ok).ok());
  EXPECT_EQ(s.AddWorkload(ok).code(), Code::kAlreadyExists);
  EXPECT_TRUE(s.RemoveWorkload("default/ok"));
  EXPECT_FALSE(s.RemoveWorkload("default/ok"));
}

}  // namespace
}  // namespace berth::admission
