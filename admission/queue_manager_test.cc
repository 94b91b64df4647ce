// Pending queues (Kueue's pkg/cache/queue/cluster_queue.go) and no ghost admissions
// (kubernetes-sigs/kueue#1654, #6711).
#include "admission/queue_manager.h"

#include <gtest/gtest.h>

#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::T;
using testing::WorkloadBuilder;

class QueueManagerTest : public ::testing::Test {
 protected:
  ResourceNames names;
  QueueManager q;
  Workload W(const std::string& name, const std::string& cq, int prio = 0, double created = 0) {
    return WorkloadBuilder(names, name).Queue(cq).Priority(prio).Created(T(created)).Request("cpu", "1").Obj();
  }
  std::vector<std::string> Order(const std::string& cq) {
    std::vector<std::string> out;
    for (const Workload* w : q.Pending(cq)) out.push_back(w->name);
    return out;
  }
};

TEST_F(QueueManagerTest, OrderIsPriorityThenTimestampThenUid) {
  q.AddOrUpdateClusterQueue("cq", QueueingStrategy::kBestEffortFIFO, "", true);
  q.AddOrUpdateWorkload(W("old-low", "cq", 0, 1), T());
  q.AddOrUpdateWorkload(W("new-high", "cq", 10, 5), T());
  q.AddOrUpdateWorkload(W("b-tie", "cq", 0, 3), T());
  q.AddOrUpdateWorkload(W("a-tie", "cq", 0, 3), T());
  EXPECT_EQ(Order("cq"), (std::vector<std::string>{"new-high", "old-low", "a-tie", "b-tie"}));
  auto heads = q.Heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].name, "new-high");
}

TEST_F(QueueManagerTest, OneHeadPerActiveClusterQueue) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  q.AddOrUpdateClusterQueue("b", QueueingStrategy::kStrictFIFO, "", true);
  q.AddOrUpdateClusterQueue("off", QueueingStrategy::kStrictFIFO, "", false);
  for (auto cq : {"a", "b", "off"}) {
    q.AddOrUpdateWorkload(W(std::string(cq) + "1", cq), T());
    q.AddOrUpdateWorkload(W(std::string(cq) + "2", cq, 0, 1), T());
  }
  auto heads = q.Heads();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_EQ(heads[0].name, "a1");
  EXPECT_EQ(heads[1].name, "b1");
  EXPECT_EQ(q.ActiveCount("off"), 2u);
}

TEST_F(QueueManagerTest, StrictFifoRequeuesImmediatelyAndBlocks) {
  q.AddOrUpdateClusterQueue("cq", QueueingStrategy::kStrictFIFO, "", true);
  q.AddOrUpdateWorkload(W("first", "cq", 0, 0), T());
  q.AddOrUpdateWorkload(W("second", "cq", 0, 1), T());
  auto heads = q.Heads();
  ASSERT_TRUE(q.RequeueWorkload(heads[0], RequeueReason::kNoFit, T()));
  EXPECT_FALSE(q.IsInadmissible(heads[0].uid));
  EXPECT_EQ(q.Heads()[0].name, "first");  // still blocks "second"
}

TEST_F(QueueManagerTest, StrictFifoNamespaceMismatchGoesInadmissible) {
  q.AddOrUpdateClusterQueue("cq", QueueingStrategy::kStrictFIFO, "", true);
  q.AddOrUpdateWorkload(W("first", "cq"), T());
  auto heads = q.Heads();
  q.RequeueWorkload(heads[0], RequeueReason::kNamespaceMismatch, T());
  EXPECT_TRUE(q.IsInadmissible(heads[0].uid));
}

TEST_F(QueueManagerTest, BestEffortFifoMovesNoFitAsideAndRequeuesOnEvents) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "co", true);
  q.AddOrUpdateClusterQueue("b", QueueingStrategy::kBestEffortFIFO, "co", true);
  q.AddOrUpdateClusterQueue("lonely", QueueingStrategy::kBestEffortFIFO, "", true);
  q.AddOrUpdateWorkload(W("big", "a", 0, 0), T());
  q.AddOrUpdateWorkload(WorkloadBuilder(names, "small").Queue("a").Created(T(1)).Request("cpu", "500m").Obj(), T());
  q.AddOrUpdateWorkload(W("other", "b"), T());
  q.AddOrUpdateWorkload(W("alone", "lonely"), T());
  auto heads = q.Heads();
  for (const auto& h : heads) q.RequeueWorkload(h, RequeueReason::kNoFit, T());
  EXPECT_TRUE(q.IsInadmissible("default/big"));
  EXPECT_TRUE(q.IsInadmissible("default/other"));
  ASSERT_EQ(q.Inadmissible("a").size(), 1u);  // "small" is still active
  EXPECT_EQ(q.Inadmissible("a")[0]->name, "big");
  EXPECT_TRUE(q.Inadmissible("nope").empty());
  EXPECT_EQ(q.Heads()[0].name, "small");  // the next workload became head
  // A change in queue "b" requeues the whole root cohort "co", not "lonely".
  q.QueueInadmissibleWorkloads({"b"}, T());
  EXPECT_FALSE(q.IsInadmissible("default/big"));
  EXPECT_FALSE(q.IsInadmissible("default/other"));
  EXPECT_TRUE(q.IsInadmissible("default/alone"));
}

TEST_F(QueueManagerTest, EventDuringCycleSendsFailedHeadBackToHeap) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  q.AddOrUpdateWorkload(W("w", "a"), T());
  auto heads = q.Heads();
  q.QueueInadmissibleWorkloads({"a"}, T());  // capacity freed while in flight
  q.RequeueWorkload(heads[0], RequeueReason::kNoFit, T());
  EXPECT_FALSE(q.IsInadmissible("default/w"));
  EXPECT_EQ(q.ActiveCount("a"), 1u);
}

TEST_F(QueueManagerTest, PendingPreemptionIsImmediateAndSticky) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  q.AddOrUpdateWorkload(W("preemptor", "a", 1), T());
  auto heads = q.Heads();
  q.AddOrUpdateWorkload(W("higher", "a", 5), T());  // arrives meanwhile
  q.RequeueWorkload(heads[0], RequeueReason::kPendingPreemption, T());
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"preemptor", "higher"}));
  EXPECT_EQ(q.Heads()[0].name, "preemptor");
}

// The preemptor's own status write (its pending verdict) or any other update
// re-adds it: it stays the sticky head, as Kueue's PushOrUpdate keeps
// preemptorWorkload. Admission (not queueable) or a move ends it.
TEST_F(QueueManagerTest, AnUpdateKeepsThePreemptorSticky) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  q.AddOrUpdateClusterQueue("b", QueueingStrategy::kBestEffortFIFO, "", true);
  Workload preemptor = W("preemptor", "a", 1);
  q.AddOrUpdateWorkload(preemptor, T());
  auto heads = q.Heads();
  q.RequeueWorkload(heads[0], RequeueReason::kPendingPreemption, T());
  q.AddOrUpdateWorkload(W("higher", "a", 5), T());
  preemptor.pending_message = "Pending the preemption of 1 workload(s)";
  q.AddOrUpdateWorkload(preemptor, T());
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"preemptor", "higher"}));
  EXPECT_EQ(q.Heads()[0].name, "preemptor");
  q.RequeueWorkload(preemptor, RequeueReason::kPendingPreemption, T());

  // Admitted: it leaves the queue and the next one is head.
  Workload admitted = preemptor;
  admitted.state = AdmissionState::kAdmitted;
  EXPECT_FALSE(q.AddOrUpdateWorkload(admitted, T()));
  q.AddOrUpdateWorkload(preemptor, T());  // requeued later (evicted): no longer sticky
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"higher", "preemptor"}));

  // Moved to another ClusterQueue: not sticky there, nor in its old queue.
  heads = q.Heads();
  ASSERT_EQ(heads[0].name, "higher");
  q.RequeueWorkload(heads[0], RequeueReason::kPendingPreemption, T());
  Workload moved = heads[0];
  moved.cluster_queue = "b";
  q.AddOrUpdateWorkload(moved, T());
  q.AddOrUpdateWorkload(W("first", "b", 9), T());
  EXPECT_EQ(Order("b"), (std::vector<std::string>{"first", "higher"}));
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"preemptor"}));
}

TEST_F(QueueManagerTest, BackoffKeepsWorkloadInadmissibleUntilRequeueAt) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  Workload w = WorkloadBuilder(names, "w").Queue("a").RequeueAt(T(60)).Request("cpu", "1").Obj();
  q.AddOrUpdateWorkload(w, T(0));
  EXPECT_TRUE(q.IsInadmissible("default/w"));
  q.QueueInadmissibleWorkloads({"a"}, T(30));
  EXPECT_TRUE(q.IsInadmissible("default/w"));
  q.QueueInadmissibleWorkloads({"a"}, T(60));
  EXPECT_FALSE(q.IsInadmissible("default/w"));
}

// SchedulingEquivalenceHashing: a NoFit head takes its equal-shape
// followers aside until the next event; a later arrival of that shape is
// tried once (it goes to the heap, as Kueue's PushOrUpdate), an update of a
// set-aside one keeps it aside.
TEST_F(QueueManagerTest, EqualShapeWorkloadsAreSetAsideTogether) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  q.AddOrUpdateWorkload(W("first", "a", 0, 0), T());
  q.AddOrUpdateWorkload(W("same-shape", "a", 0, 1), T());
  q.AddOrUpdateWorkload(W("higher-priority", "a", 1, 2), T());
  auto heads = q.Heads();
  ASSERT_EQ(heads[0].name, "higher-priority");
  q.RequeueWorkload(heads[0], RequeueReason::kGeneric, T());  // back to heap? no: BestEffortFIFO generic -> aside
  heads = q.Heads();
  ASSERT_EQ(heads[0].name, "first");
  std::vector<const Workload*> set_aside;
  q.RequeueWorkload(heads[0], RequeueReason::kNoFit, T(), &set_aside);
  ASSERT_EQ(set_aside.size(), 1u);  // not the head itself, not other shapes
  EXPECT_EQ(set_aside[0]->Key(), "default/same-shape");
  EXPECT_TRUE(q.IsInadmissible("default/same-shape"));
  EXPECT_TRUE(q.Heads().empty());
  q.AddOrUpdateWorkload(W("same-shape", "a", 0, 1), T());
  EXPECT_TRUE(q.IsInadmissible("default/same-shape"));
  q.AddOrUpdateWorkload(W("late-same-shape", "a", 0, 5), T());
  EXPECT_FALSE(q.IsInadmissible("default/late-same-shape"));
  heads = q.Heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(heads[0].name, "late-same-shape");
  q.RequeueWorkload(heads[0], RequeueReason::kNoFit, T());
  EXPECT_TRUE(q.IsInadmissible("default/late-same-shape"));
  q.AddOrUpdateWorkload(W("different", "a", 7, 5), T());
  EXPECT_FALSE(q.IsInadmissible("default/different"));
  q.QueueAllInadmissibleWorkloads(T());
  EXPECT_EQ(q.ActiveCount("a"), 5u);
  EXPECT_EQ(q.InadmissibleCount("a"), 0u);
}

// kubernetes-sigs/kueue#1654, #6711: every insertion path skips finished, inactive and
// quota-holding workloads.
TEST_F(QueueManagerTest, NeverQueuesFinishedInactiveOrAdmittedWorkloads) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  Workload finished = WorkloadBuilder(names, "finished").Queue("a").Finished().Request("cpu", "1").Obj();
  Workload inactive = WorkloadBuilder(names, "inactive").Queue("a").Inactive().Request("cpu", "1").Obj();
  Workload admitted = WorkloadBuilder(names, "admitted").Request("cpu", "1").Admitted("a", "f").Obj();
  Workload unknown_cq = WorkloadBuilder(names, "lost").Queue("nope").Request("cpu", "1").Obj();
  for (const auto& w : {finished, inactive, admitted, unknown_cq}) {
    EXPECT_FALSE(q.AddOrUpdateWorkload(w, T())) << w.name;
    EXPECT_FALSE(q.RequeueWorkload(w, RequeueReason::kPendingPreemption, T())) << w.name;
    EXPECT_FALSE(q.Contains(w.uid)) << w.name;
  }
  // A queued workload that becomes inactive or finishes is dropped by update.
  Workload w = WorkloadBuilder(names, "w").Queue("a").Request("cpu", "1").Obj();
  ASSERT_TRUE(q.AddOrUpdateWorkload(w, T()));
  w.active = false;
  EXPECT_FALSE(q.AddOrUpdateWorkload(w, T()));
  EXPECT_FALSE(q.Contains(w.uid));
  EXPECT_TRUE(q.Heads().empty());
}

// kubernetes-sigs/kueue#8322: priority is live: an update re-sorts the queue.
TEST_F(QueueManagerTest, PriorityUpdateReordersQueue) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  q.AddOrUpdateWorkload(W("job-1", "a", 1000, 0), T());
  q.AddOrUpdateWorkload(W("job-2", "a", 2000, 1), T());
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"job-2", "job-1"}));
  q.AddOrUpdateWorkload(W("job-1", "a", 3000, 0), T());
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"job-1", "job-2"}));
  // An update keeps an inadmissible workload inadmissible.
  auto heads = q.Heads();
  q.RequeueWorkload(heads[0], RequeueReason::kNoFit, T());
  q.AddOrUpdateWorkload(W("job-1", "a", 3001, 0), T());
  EXPECT_TRUE(q.IsInadmissible("default/job-1"));
  EXPECT_TRUE(q.DeleteWorkload("default/job-1"));
  EXPECT_FALSE(q.Contains("default/job-1"));
}

}  // namespace
}  // namespace berth::admission
