// Pending queues (Kueue's pkg/cache/queue/cluster_queue.go) and no ghost admissions
// (kubernetes-sigs/kueue#1654, #6711).
#include "admission/queue_manager.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <algorithm>

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

// Step 2 (Kueue's PendingWorkloads.inflight): a popped head is still pending for every
// count and listing until the cycle requeues it; an update meanwhile replaces the copy the
// requeue places, and a delete or an unqueueable update means it is not requeued.
TEST_F(QueueManagerTest, AHeadInFlightIsStillPendingAndTheRequeuePlacesItsNewestCopy) {
  q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "", true);
  const std::string lq = "default/";  // the builder sets no spec.queueName
  q.AddOrUpdateWorkload(W("head", "a", 5), T());
  q.AddOrUpdateWorkload(W("next", "a", 1), T());
  std::vector<Workload> heads = q.Heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(q.ActiveCount("a"), 2u);
  EXPECT_EQ(q.LocalQueuePending(lq).active, 2u) << "the LocalQueue's count keeps the head";
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"head", "next"}));
  ASSERT_NE(q.InFlight(heads[0].uid), nullptr);

  // Updated in flight: not queued a second time; the requeue places the update.
  Workload lowered = heads[0];
  lowered.priority = 0;
  EXPECT_TRUE(q.AddOrUpdateWorkload(lowered, T()));
  EXPECT_EQ(q.ActiveCount("a"), 2u);
  EXPECT_EQ(q.InFlight(heads[0].uid)->priority, 0);
  EXPECT_TRUE(q.RequeueWorkload(heads[0], RequeueReason::kFailedAfterNomination, T()));
  EXPECT_EQ(q.InFlight(heads[0].uid), nullptr);
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"next", "head"})) << "placed with priority 0, not 5";
  EXPECT_FALSE(q.RequeueWorkload(heads[0], RequeueReason::kFailedAfterNomination, T())) << "requeued twice";
  EXPECT_EQ(q.ActiveCount("a"), 2u);

  // Deleted in flight: gone from every count, and its requeue adds no ghost.
  heads = q.Heads();
  ASSERT_EQ(heads[0].name, "next");
  EXPECT_TRUE(q.DeleteWorkload(heads[0].uid));
  EXPECT_EQ(q.ActiveCount("a"), 1u);
  EXPECT_EQ(q.LocalQueuePending(lq).active, 1u);
  EXPECT_FALSE(q.RequeueWorkload(heads[0], RequeueReason::kGeneric, T()));
  EXPECT_EQ(Order("a"), (std::vector<std::string>{"head"}));

  // Deactivated in flight: likewise.
  heads = q.Heads();
  Workload inactive = heads[0];
  inactive.active = false;
  EXPECT_FALSE(q.AddOrUpdateWorkload(inactive, T()));
  EXPECT_FALSE(q.RequeueWorkload(heads[0], RequeueReason::kGeneric, T()));
  EXPECT_EQ(q.ActiveCount("a"), 0u);
  EXPECT_EQ(q.LocalQueuePending(lq).active, 0u);

  // Admitted: EndFlight ends the flight, and says whether an update was absorbed by it.
  q.AddOrUpdateWorkload(W("quiet", "a"), T());
  heads = q.Heads();
  EXPECT_FALSE(q.EndFlight(heads[0].uid)) << "no update reached it";
  EXPECT_FALSE(q.Contains(heads[0].uid));
  q.AddOrUpdateWorkload(W("updated", "a"), T());
  heads = q.Heads();
  EXPECT_TRUE(q.AddOrUpdateWorkload(heads[0], T()));
  EXPECT_TRUE(q.EndFlight(heads[0].uid)) << "the update it absorbed must be read again";
  EXPECT_EQ(q.ActiveCount("a"), 0u);
  EXPECT_FALSE(q.EndFlight(heads[0].uid)) << "no longer in flight";

  // Not requeued (admitted): the next Heads() forgets it.
  q.AddOrUpdateWorkload(W("admitted", "a"), T());
  heads = q.Heads();
  EXPECT_EQ(q.ActiveCount("a"), 1u);
  EXPECT_TRUE(q.Heads().empty());
  EXPECT_EQ(q.ActiveCount("a"), 0u);
  EXPECT_FALSE(q.Contains(heads[0].uid));
  EXPECT_EQ(q.LocalQueuePending(lq).active, 0u);
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

// LocalQueuePending is kept by every move, so it must equal a recount of the queues
// (Pending minus Inadmissible, by LocalQueue) after any sequence of operations: adds,
// updates (also to another ClusterQueue, with a backoff, with another priority), deletes,
// heads requeued for every reason (set-aside included), inadmissible requeues, Admission
// Fair Sharing rekeys and a ClusterQueue deleted and re-added.
TEST_F(QueueManagerTest, LocalQueuePendingCountsEqualARecountAfterAnyOperations) {
  const std::vector<std::string> cqs = {"a", "b", "strict"};
  const std::vector<std::pair<std::string, std::string>> lqs = {{"ns1", "q1"}, {"ns1", "q2"}, {"ns2", "q1"}};
  const std::vector<RequeueReason> reasons = {
      RequeueReason::kGeneric,        RequeueReason::kFailedAfterNomination, RequeueReason::kNamespaceMismatch,
      RequeueReason::kPendingPreemption, RequeueReason::kPreemptionFailed,  RequeueReason::kNoFit,
      RequeueReason::kPreemptionNoCandidates};
  auto add_queues = [&] {
    q.AddOrUpdateClusterQueue("a", QueueingStrategy::kBestEffortFIFO, "root", true);
    q.AddOrUpdateClusterQueue("b", QueueingStrategy::kBestEffortFIFO, "root", true);
    q.AddOrUpdateClusterQueue("strict", QueueingStrategy::kStrictFIFO, "", true);
  };
  add_queues();
  std::mt19937 rng(18);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto workload = [&](int i) {
    const auto& [ns, lq] = lqs[pick(lqs.size())];
    WorkloadBuilder b(names, "w" + std::to_string(i), ns);
    b.LocalQueue(ns, lq).Queue(cqs[pick(cqs.size())]).Priority(static_cast<int32_t>(pick(3))).Created(T(pick(5)));
    b.Request("cpu", pick(2) ? "1" : "2");  // two shapes, for set-aside
    if (pick(8) == 0) b.RequeueAt(T(pick(20)));
    return b.Obj();
  };
  auto recount = [&](const std::string& local_queue) {
    QueueManager::PendingCounts c;
    for (const std::string& cq : cqs) {
      for (const Workload* w : q.Pending(cq)) {
        if (w->namespace_name + "/" + w->queue_name == local_queue) ++c.active;
      }
      for (const Workload* w : q.Inadmissible(cq)) {
        if (w->namespace_name + "/" + w->queue_name == local_queue) {
          --c.active;
          ++c.inadmissible;
        }
      }
    }
    return c;
  };
  size_t checked_nonzero = 0;
  for (int step = 0; step < 3000; ++step) {
    const Time now = T(step / 100.0);
    switch (pick(10)) {
      case 0:
      case 1:
      case 2:
        q.AddOrUpdateWorkload(workload(static_cast<int>(pick(60))), now);
        break;
      case 3: {
        const auto& [ns, lq] = lqs[pick(lqs.size())];
        q.DeleteWorkload(ns + "/w" + std::to_string(pick(60)));
        break;
      }
      case 4:
      case 5: {
        for (const Workload& head : q.Heads()) {
          if (pick(4) == 0) continue;  // admitted: gone from the queues
          std::vector<const Workload*> set_aside;
          q.RequeueWorkload(head, reasons[pick(reasons.size())], now, &set_aside);
        }
        break;
      }
      case 6:
        if (pick(2)) {
          q.QueueAllInadmissibleWorkloads(now);
        } else {
          q.QueueInadmissibleWorkloads({cqs[pick(cqs.size())]}, now);
        }
        break;
      case 7: {
        q.SetAdmissionFairSharing(cqs[pick(2)], pick(2) == 0);
        const auto& [ns, lq] = lqs[pick(lqs.size())];
        q.SetLocalQueueUsage(ns + "/" + lq, static_cast<double>(pick(4)));
        break;
      }
      case 8:
        if (pick(10) == 0) {
          q.DeleteClusterQueue(cqs[pick(cqs.size())]);
          add_queues();
        }
        break;
      case 9: {
        // A copy (what the start-time estimator replays on) stands on its own: the
        // original and the copy it was made from are gone before the queues are read.
        auto copy = std::make_unique<QueueManager>(q);
        q = QueueManager();
        QueueManager second = *copy;
        copy.reset();
        q = second;
        break;
      }
    }
    for (const auto& [ns, lq] : lqs) {
      const QueueManager::PendingCounts want = recount(ns + "/" + lq);
      const QueueManager::PendingCounts got = q.LocalQueuePending(ns + "/" + lq);
      ASSERT_EQ(got.active, want.active) << "step " << step << " " << ns << "/" << lq;
      ASSERT_EQ(got.inadmissible, want.inadmissible) << "step " << step << " " << ns << "/" << lq;
      if (want.active > 0 && want.inadmissible > 0) ++checked_nonzero;
    }
  }
  EXPECT_GT(checked_nonzero, 100u);
  // A copy's set-aside workloads are the copy's own, not the original's.
  QueueManager copy = q;
  for (const std::string& cq : cqs) {
    for (const Workload* w : copy.Pending(cq)) {
      for (const Workload* o : q.Pending(cq)) EXPECT_NE(w, o);
    }
  }  // the sequence reached states with both kinds pending
  EXPECT_EQ(q.LocalQueuePending("ns9/none"), QueueManager::PendingCounts{});
}

// The rules of queue_manager.h, written as plainly as possible: every pending workload of a
// ClusterQueue is an entry marked active or inadmissible, and every operation scans them
// all. QueueManager keeps the same state in sets and shape classes; after any sequence of
// operations both must give the same heads, set-aside workloads, answers and orders.
class RulesModel {
 public:
  struct Entry {
    Workload wl;
    bool inadmissible;
    bool in_flight = false;  // popped by the last Heads(), not requeued
  };
  struct CQ {
    QueueingStrategy strategy;
    std::string root;
    bool active;
    bool afs = false;
    std::map<std::string, Entry> entries;  // by uid
    std::string sticky;
    int64_t pop_cycle = 0;
    int64_t queue_inadmissible_cycle = -1;
  };
  std::map<std::string, CQ> cqs;
  std::map<std::string, double> usage;  // LocalQueue "ns/name" -> AFS usage

  static std::string ShapeOf(const Workload& w) {
    std::string s = std::to_string(w.priority);
    for (const PodSet& ps : w.pod_sets) {
      s += "|" + ps.name + "#" + std::to_string(ps.count);
      for (const auto& [r, a] : ps.requests.items()) s += "," + std::to_string(r) + "=" + std::to_string(a);
    }
    return s;
  }
  bool Before(const CQ& q, const Workload& a, const Workload& b) const {
    auto u = [&](const Workload& w) {
      auto it = usage.find(w.namespace_name + "/" + w.queue_name);
      return q.afs && it != usage.end() ? it->second : 0.0;
    };
    if (u(a) != u(b)) return u(a) < u(b);
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.queue_order_timestamp != b.queue_order_timestamp) return a.queue_order_timestamp < b.queue_order_timestamp;
    return a.uid < b.uid;
  }
  CQ* Holder(const std::string& uid) {
    for (auto& [name, q] : cqs) {
      if (q.entries.count(uid)) return &q;
    }
    return nullptr;
  }
  void AddQueue(const std::string& name, QueueingStrategy s, const std::string& root, bool active) {
    CQ& q = cqs[name];
    q.strategy = s;
    q.root = root;
    q.active = active;
  }
  bool AddOrUpdate(const Workload& wl, Time now) {
    bool was_inadmissible = false, was_sticky = false;
    if (CQ* old = Holder(wl.uid); old && old->entries.at(wl.uid).in_flight && !wl.finished &&
                                  cqs.count(wl.cluster_queue) && old == &cqs.at(wl.cluster_queue)) {
      old->entries.at(wl.uid).wl = wl;  // the cycle that popped it places this copy
      return true;
    }
    if (CQ* old = Holder(wl.uid)) {
      auto target = cqs.find(wl.cluster_queue);
      const bool same = target != cqs.end() && old == &target->second;
      was_inadmissible = same && old->entries.at(wl.uid).inadmissible;
      was_sticky = same && old->sticky == wl.uid;
      old->entries.erase(wl.uid);
      if (old->sticky == wl.uid) old->sticky.clear();
    }
    auto q = cqs.find(wl.cluster_queue);
    if (q == cqs.end() || wl.finished) return false;
    const bool backoff = wl.requeue_at && *wl.requeue_at > now;
    q->second.entries[wl.uid] = {wl, was_inadmissible || backoff};
    if (was_sticky) q->second.sticky = wl.uid;
    return true;
  }
  bool Delete(const std::string& uid) {
    CQ* q = Holder(uid);
    if (!q) return false;
    q->entries.erase(uid);
    if (q->sticky == uid) q->sticky.clear();
    return true;
  }
  std::vector<std::string> Heads() {
    std::vector<std::string> out;
    for (auto& [name, q] : cqs) {
      // The previous head still in flight was admitted: it leaves, and is sticky no more.
      std::erase_if(q.entries, [&](const auto& kv) {
        if (kv.second.in_flight && q.sticky == kv.first) q.sticky.clear();
        return kv.second.in_flight;
      });
      Entry* best = nullptr;
      for (auto& [uid, e] : q.entries) {
        if (!e.inadmissible && (!best || Before(q, e.wl, best->wl))) best = &e;
      }
      if (!q.active || !best) continue;
      if (auto s = q.entries.find(q.sticky); s != q.entries.end() && !s->second.inadmissible) best = &s->second;
      out.push_back(best->wl.uid);
      best->in_flight = true;
      ++q.pop_cycle;
    }
    return out;
  }
  bool Requeue(const Workload& popped, RequeueReason reason, Time now, std::set<std::string>* set_aside,
               const QueueManager::Verdict* verdict) {
    CQ* holder = Holder(popped.uid);
    if (!holder || !holder->entries.at(popped.uid).in_flight) return false;
    CQ& q = *holder;
    const Workload wl = q.entries.at(popped.uid).wl;  // the newest copy
    q.entries.erase(popped.uid);
    const bool strict = q.strategy == QueueingStrategy::kStrictFIFO;
    const bool immediate = strict ? reason != RequeueReason::kNamespaceMismatch
                                  : reason == RequeueReason::kFailedAfterNomination ||
                                        reason == RequeueReason::kPendingPreemption ||
                                        reason == RequeueReason::kPreemptionFailed;
    if (reason == RequeueReason::kPendingPreemption && !strict) q.sticky = wl.uid;
    const bool expired = !wl.requeue_at || *wl.requeue_at <= now;
    if (expired && (immediate || q.queue_inadmissible_cycle >= q.pop_cycle)) {
      q.entries[wl.uid] = {wl, false};
      return true;
    }
    q.entries[wl.uid] = {wl, true};
    if (!strict && (reason == RequeueReason::kNoFit || reason == RequeueReason::kPreemptionNoCandidates)) {
      for (auto& [uid, e] : q.entries) {
        if (!e.inadmissible && ShapeOf(e.wl) == ShapeOf(wl)) {
          e.inadmissible = true;
          if (!verdict || e.wl.pending_reason != verdict->reason || e.wl.pending_message != verdict->message) {
            set_aside->insert(uid);
          }
        }
      }
    }
    return true;
  }
  void Move(CQ& q, Time now) {
    q.queue_inadmissible_cycle = q.pop_cycle;
    for (auto& [uid, e] : q.entries) {
      if (!e.wl.requeue_at || *e.wl.requeue_at <= now) e.inadmissible = false;
    }
  }
  void QueueInadmissible(const std::vector<std::string>& names, Time now) {
    std::set<std::string> roots, known;
    for (const auto& n : names) {
      if (!cqs.count(n)) continue;
      known.insert(n);
      if (!cqs[n].root.empty()) roots.insert(cqs[n].root);
    }
    for (auto& [name, q] : cqs) {
      if (known.count(name) || (!q.root.empty() && roots.count(q.root))) Move(q, now);
    }
  }
  // Pending (all, or only the inadmissible ones) in queue order; the sticky one first.
  std::vector<std::string> Order(const std::string& cq, bool inadmissible_only) const {
    auto it = cqs.find(cq);
    if (it == cqs.end()) return {};
    const CQ& q = it->second;
    std::vector<const Workload*> ws;
    for (const auto& [uid, e] : q.entries) {
      if (!inadmissible_only || e.inadmissible) ws.push_back(&e.wl);
    }
    std::sort(ws.begin(), ws.end(), [&](const Workload* a, const Workload* b) { return Before(q, *a, *b); });
    if (!inadmissible_only) {
      std::stable_partition(ws.begin(), ws.end(), [&](const Workload* w) { return w->uid == q.sticky; });
    }
    std::vector<std::string> out;
    for (const Workload* w : ws) out.push_back(w->uid);
    return out;
  }
};

std::vector<std::string> Uids(const std::vector<const Workload*>& ws) {
  std::vector<std::string> out;
  for (const Workload* w : ws) out.push_back(w->uid);
  return out;
}

TEST_F(QueueManagerTest, AgreesWithTheRulesWrittenAsScansAfterAnyOperations) {
  const std::vector<std::string> cqs = {"a", "b", "c", "strict"};
  const std::vector<std::pair<std::string, std::string>> lqs = {{"ns1", "q1"}, {"ns1", "q2"}, {"ns2", "q1"}};
  const std::vector<RequeueReason> reasons = {
      RequeueReason::kGeneric,           RequeueReason::kFailedAfterNomination, RequeueReason::kNamespaceMismatch,
      RequeueReason::kPendingPreemption, RequeueReason::kPreemptionFailed,      RequeueReason::kNoFit,
      RequeueReason::kNoFit,             RequeueReason::kPreemptionNoCandidates};
  RulesModel model;
  auto add_queue = [&](const std::string& name) {
    const QueueingStrategy s = name == "strict" ? QueueingStrategy::kStrictFIFO : QueueingStrategy::kBestEffortFIFO;
    const std::string root = name == "c" ? "" : name == "strict" ? "" : "root";
    q.AddOrUpdateClusterQueue(name, s, root, true);
    model.AddQueue(name, s, root, true);
  };
  for (const auto& cq : cqs) add_queue(cq);
  std::mt19937 rng(1804);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto workload = [&](int i, Time now) {
    // The namespace is the workload's own; its LocalQueue may change between updates.
    const std::string ns = i % 2 ? "ns1" : "ns2";
    const std::string lq = ns == "ns1" && pick(2) ? "q2" : "q1";
    WorkloadBuilder b(names, "w" + std::to_string(i), ns);
    // Few priorities, timestamps and requests: many ties and few shapes, so classes are large.
    b.LocalQueue(ns, lq).Queue(cqs[pick(cqs.size())]).Priority(static_cast<int32_t>(pick(2))).Created(T(pick(3)));
    b.Request("cpu", pick(3) ? "1" : "2");
    if (pick(6) == 0) b.RequeueAt(now + std::chrono::milliseconds(static_cast<int64_t>(pick(3000))));
    Workload w = b.Obj();
    if (pick(25) == 0) w.finished = true;  // no longer queued, on every path
    // The verdict it shows: mostly the one heads are given, so most set-asides need no write.
    if (pick(4) != 0) {
      w.pending_reason = "Pending";
      w.pending_message = pick(3) ? "1 more needed" : "2 more needed";
    }
    return w;
  };
  const std::vector<QueueManager::Verdict> verdicts = {{"Pending", "1 more needed"}, {"Pending", "2 more needed"}};
  std::map<std::string, Workload> known;  // every workload ever made, by uid
  size_t set_aside_seen = 0, heads_seen = 0, changed_in_flight = 0, returned_in_flight = 0;
  for (int step = 0; step < 5000; ++step) {
    const Time now = T(step / 100.0);
    const size_t op = pick(12);
    if (op <= 2) {
      Workload w = workload(static_cast<int>(pick(90)), now);
      known[w.uid] = w;
      ASSERT_EQ(q.AddOrUpdateWorkload(w, now), model.AddOrUpdate(w, now))
          << "step " << step << " " << w.uid << " to " << w.cluster_queue << " known "
          << q.HasClusterQueue(w.cluster_queue) << " finished " << w.finished;
    } else if (op == 3) {
      const std::string uid = lqs[pick(lqs.size())].first + "/w" + std::to_string(pick(90));
      ASSERT_EQ(q.DeleteWorkload(uid), model.Delete(uid)) << "step " << step;
    } else if (op <= 6) {
      std::vector<Workload> heads = q.Heads();
      std::vector<std::string> got;
      for (const Workload& h : heads) got.push_back(h.uid);
      ASSERT_EQ(got, model.Heads()) << "step " << step;
      heads_seen += heads.size();
      for (const Workload& head : heads) {
        if (pick(5) == 0) continue;  // admitted: gone from the queues
        if (pick(8) == 0) {
          // Updated or deleted while in flight: the requeue that follows must not add it twice.
          ++changed_in_flight;
          if (pick(2)) {
            Workload w = head;
            w.priority = static_cast<int32_t>(pick(2));
            ASSERT_EQ(q.AddOrUpdateWorkload(w, now), model.AddOrUpdate(w, now)) << "step " << step;
          } else {
            ASSERT_EQ(q.DeleteWorkload(head.uid), model.Delete(head.uid)) << "step " << step;
          }
        }
        const RequeueReason reason = reasons[pick(reasons.size())];
        std::vector<const Workload*> aside;
        const size_t v = pick(4);  // the usual verdict, the other, or none (all listed)
        const QueueManager::Verdict* verdict = v == 3 ? nullptr : &verdicts[v == 2 ? 1 : 0];
        const bool got_requeued = q.RequeueWorkload(head, reason, now, &aside, verdict);
        std::set<std::string> want_aside;
        ASSERT_EQ(got_requeued, model.Requeue(head, reason, now, &want_aside, verdict)) << "step " << step;
        std::set<std::string> got_aside;
        for (const Workload* w : aside) got_aside.insert(w->uid);
        ASSERT_EQ(got_aside, want_aside) << "step " << step;
        set_aside_seen += got_aside.size();
      }
    } else if (op <= 8) {
      if (pick(2)) {
        q.QueueAllInadmissibleWorkloads(now);
        model.QueueInadmissible(cqs, now);
      } else {
        const std::string cq = cqs[pick(cqs.size())];
        q.QueueInadmissibleWorkloads({cq}, now);
        model.QueueInadmissible({cq}, now);
      }
    } else if (op == 9) {
      const std::string cq = cqs[pick(2)];
      const bool afs = pick(2) == 0;
      q.SetAdmissionFairSharing(cq, afs);
      if (auto m = model.cqs.find(cq); m != model.cqs.end()) m->second.afs = afs;  // unknown: nothing
      const auto& [ns, lq] = lqs[pick(lqs.size())];
      const double usage = static_cast<double>(pick(3));
      q.SetLocalQueueUsage(ns + "/" + lq, usage);
      model.usage[ns + "/" + lq] = usage;
    } else if (op == 10) {
      const std::string cq = cqs[pick(cqs.size())];
      const size_t change = pick(20);
      if (change == 0) {
        q.DeleteClusterQueue(cq);
        model.cqs.erase(cq);
        if (pick(2)) add_queue(cq);  // or left unknown until a later change re-adds it
      } else if (change <= 3) {
        // Strategy, cohort and activity change in place; the pending workloads stay.
        const QueueingStrategy s = pick(2) ? QueueingStrategy::kStrictFIFO : QueueingStrategy::kBestEffortFIFO;
        const std::string root = pick(2) ? "root" : "";
        const bool active = pick(4) != 0;
        q.AddOrUpdateClusterQueue(cq, s, root, active);
        model.AddQueue(cq, s, root, active);
      } else if (change == 4) {
        const auto& [ns, lq] = lqs[pick(lqs.size())];
        q.ForgetLocalQueueUsage(ns + "/" + lq);
        model.usage.erase(ns + "/" + lq);
      }
    } else {
      auto copy = std::make_unique<QueueManager>(q);
      q = QueueManager();
      q = *copy;
      copy.reset();
      if (pick(2)) {
        // What the start-time estimator does to its copy: the heads in flight are pending again.
        q.ReturnInFlightHeads(now);
        for (auto& [name, mq] : model.cqs) {
          for (auto& [uid, e] : mq.entries) {
            if (!e.in_flight) continue;
            ++returned_in_flight;
            e.in_flight = false;
            e.inadmissible = e.wl.requeue_at && *e.wl.requeue_at > now;  // still in backoff
          }
        }
      }
    }
    for (const auto& cq : cqs) {
      ASSERT_EQ(Uids(q.Pending(cq)), model.Order(cq, false)) << "step " << step << " " << cq;
      ASSERT_EQ(Uids(q.Inadmissible(cq)), model.Order(cq, true)) << "step " << step << " " << cq;
      const size_t inadmissible = model.Order(cq, true).size();
      ASSERT_EQ(q.InadmissibleCount(cq), inadmissible) << "step " << step << " " << cq;
      ASSERT_EQ(q.ActiveCount(cq), model.Order(cq, false).size() - inadmissible) << "step " << step << " " << cq;
    }
    for (const auto& [ns, lq] : lqs) {
      QueueManager::PendingCounts want;
      for (const auto& [name, mq] : model.cqs) {
        for (const auto& [uid, e] : mq.entries) {
          if (e.wl.namespace_name == ns && e.wl.queue_name == lq) ++(e.inadmissible ? want.inadmissible : want.active);
        }
      }
      ASSERT_EQ(q.LocalQueuePending(ns + "/" + lq), want) << "step " << step << " " << ns << "/" << lq;
    }
    for (const auto& [uid, w] : known) {
      RulesModel::CQ* holder = model.Holder(uid);
      ASSERT_EQ(q.Contains(uid), holder != nullptr) << "step " << step << " " << uid;
      ASSERT_EQ(q.IsInadmissible(uid), holder && holder->entries.at(uid).inadmissible) << "step " << step << " " << uid;
      const bool in_flight = holder && holder->entries.at(uid).in_flight;
      ASSERT_EQ(q.InFlight(uid) != nullptr, in_flight) << "step " << step << " " << uid;
      if (in_flight) {
        ASSERT_EQ(q.InFlight(uid)->priority, holder->entries.at(uid).wl.priority) << "step " << step << " " << uid;
      }
    }
  }
  // The sequence exercised what it is for.
  EXPECT_GT(heads_seen, 1000u);
  EXPECT_GT(set_aside_seen, 200u);
  EXPECT_GT(changed_in_flight, 50u);
  EXPECT_GT(returned_in_flight, 20u);
}

}  // namespace
}  // namespace berth::admission
