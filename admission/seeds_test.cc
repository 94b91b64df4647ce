// Queueing scenarios of examples/trainer-kueue/'s kind, on a 5-cpu ClusterQueue (the
// example's has 2), driven cycle by cycle through queues + snapshot as the
// controller will: three 4-cpu jobs vs a 5-cpu quota; a 2 × 4-cpu gang vs 5;
// a high-priority job evicting a running low one as a whole, which is
// requeued and re-admitted after the high one finishes.
#include <gtest/gtest.h>

#include "admission/scheduler.h"
#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::ClusterQueueBuilder;
using testing::FlavorBuilder;
using testing::Harness;
using testing::Q;
using testing::T;
using testing::WorkloadBuilder;
using FQ = testing::FlavorQuotasBuilder;

void TeamA(Harness& h, PreemptionPolicy within = PreemptionPolicy::kNever) {
  h.flavors = {FlavorBuilder("default-flavor").Obj()};
  h.cluster_queues = {ClusterQueueBuilder(h.names, "cq-team-a")
                          .WithinClusterQueue(within)
                          .Group({FQ("default-flavor").Resource("cpu", "5").Resource("memory", "20Gi")})
                          .Obj()};
  h.Build();
}

Workload Job(Harness& h, const std::string& name, int nodes, int prio = 0, double created = 0) {
  return WorkloadBuilder(h.names, name, "team-a")
      .Queue("cq-team-a")
      .Priority(prio)
      .Created(T(created))
      .Count(nodes)
      .Request("cpu", "4")
      .Request("memory", "8Gi")
      .Obj();
}

// The controller's reaction to "all pods of a workload finished/terminated":
// release quota and requeue what may now fit.
void Release(Harness& h, const std::string& uid) {
  ASSERT_TRUE(h.snapshot->RemoveWorkload(uid));
  h.queues.QueueInadmissibleWorkloads({"cq-team-a"}, h.now);
}

TEST(SeedsTest, ThreeFourCpuJobsAgainstFiveCpuQuota) {
  Harness h;
  TeamA(h);
  for (int i = 0; i < 3; ++i) h.Submit(Job(h, "job-" + std::string(1, char('a' + i)), 1, 0, i));
  CycleResult r = h.Cycle();
  EXPECT_EQ(r.Find("team-a/job-a")->outcome, EntryOutcome::kAdmitted);
  r = h.Cycle();  // job-b is head now: it does not fit
  const EntryResult* b = r.Find("team-a/job-b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->outcome, EntryOutcome::kPending);
  EXPECT_EQ(b->message,
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 3 "
            "more needed");
  // job-c has the same shape: it is set aside with job-b (equivalence).
  EXPECT_EQ(h.queues.InadmissibleCount("cq-team-a"), 2u);  // both wait, no pods
  EXPECT_TRUE(h.Cycle().entries.empty());                  // nothing to try until something changes

  Release(h, "team-a/job-a");  // job-a finished
  r = h.Cycle();
  EXPECT_EQ(r.Find("team-a/job-b")->outcome, EntryOutcome::kAdmitted);  // FIFO: b before c
  EXPECT_EQ(h.UsageOf("cq-team-a", "default-flavor", "cpu"), Q("4"));
  r = h.Cycle();
  EXPECT_EQ(r.Find("team-a/job-c")->outcome, EntryOutcome::kPending);
}

TEST(SeedsTest, TwoNodeGangOfFourCpuWaitsOnFiveCpuQuota) {
  Harness h;
  TeamA(h);
  h.Submit(Job(h, "trainjob", 2));
  CycleResult r = h.Cycle();
  const EntryResult* e = r.Find("team-a/trainjob");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->outcome, EntryOutcome::kPending);
  EXPECT_EQ(e->reason, "ExceedsMaxQuota");
  EXPECT_EQ(e->message,
            "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor default-flavor, previously "
            "considered podsets requests (0) + current podset request (8) > maximum capacity (5)");
  EXPECT_EQ(h.UsageOf("cq-team-a", "default-flavor", "cpu"), 0);  // nothing partially admitted
}

TEST(SeedsTest, HighPriorityEvictsLowWholeAndLowReturnsAfterwards) {
  Harness h;
  TeamA(h, PreemptionPolicy::kLowerPriority);
  h.Submit(Job(h, "low", 1, 100, 0));
  ASSERT_EQ(h.Cycle().Find("team-a/low")->outcome, EntryOutcome::kAdmitted);

  h.now = T(200);
  h.Submit(Job(h, "high", 1, 1000, 150));
  CycleResult r = h.Cycle();
  const EntryResult* high = r.Find("team-a/high");
  ASSERT_EQ(high->outcome, EntryOutcome::kPreempting);
  ASSERT_EQ(high->preempted.size(), 1u);
  EXPECT_EQ(high->preempted[0].uid, "team-a/low");  // the whole workload, all its pods
  EXPECT_EQ(high->preempted[0].reason, "InClusterQueue");
  EXPECT_EQ(high->message,
            "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 3 "
            "more needed. Pending the preemption of 1 workload(s)");

  // low's pods are still terminating: its quota is held, high waits without
  // choosing new victims and is not admitted (no double booking).
  r = h.Cycle();
  high = r.Find("team-a/high");
  EXPECT_EQ(high->outcome, EntryOutcome::kPreempting);
  EXPECT_TRUE(high->preempted.empty());
  EXPECT_EQ(high->pending_preemptions, 1);
  EXPECT_EQ(high->reason, "WaitingForPreemptedWorkloads");
  EXPECT_EQ(h.UsageOf("cq-team-a", "default-flavor", "cpu"), Q("4"));

  // Every pod of low terminated: the controller releases its quota and puts it
  // back in the queue (Requeued, reason Preempted).
  Release(h, "team-a/low");
  h.Submit(Job(h, "low", 1, 100, 0));
  r = h.Cycle();
  EXPECT_EQ(r.Find("team-a/high")->outcome, EntryOutcome::kAdmitted);
  r = h.Cycle();
  EXPECT_EQ(r.Find("team-a/low")->outcome, EntryOutcome::kPending);  // high holds the quota

  Release(h, "team-a/high");  // high finished
  r = h.Cycle();
  EXPECT_EQ(r.Find("team-a/low")->outcome, EntryOutcome::kAdmitted);
}

// No preempt/re-admit loop: while victims evict for a preemptor, another
// workload of the cohort cannot take the capacity they will free.
TEST(SeedsTest, CapacityFreedByPreemptionIsReservedForThePreemptor) {
  Harness h;
  h.flavors = {FlavorBuilder("f").Obj()};
  h.cluster_queues = {ClusterQueueBuilder(h.names, "a")
                          .Cohort("co")
                          .WithinClusterQueue(PreemptionPolicy::kLowerPriority)
                          .Group({FQ("f").Resource("cpu", "4")})
                          .Obj(),
                      ClusterQueueBuilder(h.names, "b").Cohort("co").Group({FQ("f").Resource("cpu", "0")}).Obj()};
  h.Build({WorkloadBuilder(h.names, "victim").Priority(0).Request("cpu", "4").Admitted("a", "f").Obj()});
  h.Submit(WorkloadBuilder(h.names, "preemptor").Queue("a").Priority(10).Request("cpu", "3").Obj());
  CycleResult r = h.Cycle();
  ASSERT_EQ(r.Find("default/preemptor")->outcome, EntryOutcome::kPreempting);
  // A borrower in b wants 1 cpu: the victim still holds 4, so nothing is free.
  h.Submit(WorkloadBuilder(h.names, "borrower").Queue("b").Request("cpu", "1").Obj());
  r = h.Cycle();
  EXPECT_EQ(r.Find("default/preemptor")->outcome, EntryOutcome::kPreempting);
  EXPECT_NE(r.Find("default/borrower")->outcome, EntryOutcome::kAdmitted);
  // The victim is gone: the preemptor gets its 3 and the borrower the 1 left.
  Release(h, "default/victim");
  h.queues.QueueInadmissibleWorkloads({"b"}, h.now);
  r = h.Cycle();
  EXPECT_EQ(r.Find("default/preemptor")->outcome, EntryOutcome::kAdmitted);
  EXPECT_EQ(r.Find("default/borrower")->outcome, EntryOutcome::kAdmitted);
}

}  // namespace
}  // namespace berth::admission
