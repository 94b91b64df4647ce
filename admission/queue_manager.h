// Pending workloads, one queue per ClusterQueue.
//
// Follows Kueue's queue manager (pkg/cache/queue/manager.go,
// cluster_queue.go):
//   1. Each ClusterQueue keeps a heap of pending ("active") workloads and an
//      inadmissible set. Heap order: the sticky preemptor of a BestEffortFIFO
//      queue first, then higher priority, then earlier queue-order timestamp,
//      then uid (unique tie-break).
//   2. Heads() pops exactly one workload from every active ClusterQueue
//      (inactive queues are skipped), in ClusterQueue name order. A popped
//      head is in flight (Kueue's PendingWorkloads.inflight) until it is
//      requeued, leaves the queue, or the next Heads() forgets it (it was
//      admitted): it still counts as pending and active (ActiveCount,
//      LocalQueuePending, Pending), so a cycle computed without the caller's
//      lock hides no head from the queues' status. An update while in flight
//      replaces the head's copy without queueing it (Kueue's PushOrUpdate
//      skips the inflight workload); RequeueWorkload places that newest copy.
//      An update that makes it unqueueable, a move to another ClusterQueue or
//      a delete ends the flight: the head is not requeued. An admitted head's
//      flight is ended by the caller (EndFlight, which says whether an update
//      reached it meanwhile, to be read again) or by the next Heads(), which
//      drops such an update with it, as Kueue's next Pop does.
//   3. RequeueWorkload() puts a head that was not admitted back. StrictFIFO:
//      immediately into the heap (so it keeps blocking newer workloads),
//      except a namespace mismatch. BestEffortFIFO: immediately only after a
//      failure following nomination, a pending preemption or a failed
//      preemption; otherwise into the inadmissible set so the next workload
//      becomes head — unless an inadmissible-requeue event arrived since the
//      pop, in which case it goes back to the heap. A pending preemption makes
//      the workload the sticky head of a BestEffortFIFO queue until it leaves
//      the queue (admitted, finished, inactive, deleted, moved to another
//      ClusterQueue) or another pending preemption replaces it; an update in
//      place (AddOrUpdateWorkload) keeps it, so no other workload of the
//      queue preempts while its victims terminate (Kueue's preemptorWorkload,
//      cleared only by ClusterQueue.delete).
//   4. QueueInadmissibleWorkloads() moves inadmissible workloads back to the
//      heap after something may have freed capacity; for a ClusterQueue in a
//      cohort, every ClusterQueue under the same root cohort is requeued.
//   5. A workload whose requeueAt (backoff) is in the future stays
//      inadmissible.
//   6. Scheduling equivalence (Kueue SchedulingEquivalenceHashing, beta on):
//      when a BestEffortFIFO head is set aside because it does not fit (NoFit
//      or no preemption candidates), every pending workload of the same shape
//      (priority, podSet names, counts, requests, selectors, tolerations) is
//      set aside with it until the next inadmissible-requeue event. A new
//      arrival of that shape still goes to the heap (Kueue's PushOrUpdate), so
//      it is tried once and gets its own verdict (QuotaReserved=False).
//      Kueue scans its heap for the shape and moves each match; here the pending
//      workloads of a shape are kept together (ShapeClass), so setting a shape aside
//      and step 4 move whole classes: a finished workload in a ClusterQueue with
//      thousands of equal workloads pending costs no scan of them (issue 18). The
//      caller still gets the set-aside workloads listed (`set_aside`), one pointer each.
//   7. Admission Fair Sharing (admission_fair_sharing.h; Kueue's
//      queueOrderingFunc): in a ClusterQueue set with SetAdmissionFairSharing,
//      the heap orders first by the usage of the workload's LocalQueue
//      (SetLocalQueueUsage; 0 until set), lower first, then as in step 1.
//   8. Finished, inactive (spec.active=false) and quota-holding workloads are
//      never (re)inserted, on every path (kubernetes-sigs/kueue#1654, #6711).
// Time is passed in by the caller.
//
// Thread-safety: none. This is a plain data structure; the controller owns
// the lock.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "admission/model.h"

namespace berth::admission {

// Why a head is requeued (Kueue RequeueReason).
enum class RequeueReason {
  kGeneric,
  kFailedAfterNomination,
  kNamespaceMismatch,
  kPendingPreemption,
  kPreemptionFailed,
  kNoFit,
  kPreemptionNoCandidates,
};

class QueueManager {
 public:
  // Creates or updates the queue of a ClusterQueue. `root_cohort` is the name
  // of the root of its cohort tree ("" without a cohort).
  void AddOrUpdateClusterQueue(const std::string& name, QueueingStrategy strategy, const std::string& root_cohort,
                               bool active);
  // Drops the queue and its pending workloads.
  void DeleteClusterQueue(const std::string& name);

  // Step 7: whether the ClusterQueue (already added) orders by LocalQueue
  // usage first (spec.admissionScope.admissionMode
  // UsageBasedAdmissionFairSharing with the Configuration's
  // admissionFairSharing). Off for a new ClusterQueue.
  void SetAdmissionFairSharing(const std::string& cluster_queue, bool enabled);
  // Step 7: the usage (LocalQueueUsage) of LocalQueue `local_queue`
  // ("namespace/name"); its pending workloads are reordered.
  void SetLocalQueueUsage(const std::string& local_queue, double usage);
  void ForgetLocalQueueUsage(const std::string& local_queue);
  // Step 7: the usage a workload of `cluster_queue` is ordered by (0 for a LocalQueue not
  // set yet); nullopt when the ClusterQueue does not use Admission Fair Sharing.
  std::optional<double> LocalQueueUsage(const std::string& cluster_queue, const Workload& wl) const;

  // Adds a pending workload or updates it in place (priority, timestamp...);
  // an inadmissible one stays inadmissible unless it moved to another
  // ClusterQueue, where it goes to the heap. A sticky preemptor updated in
  // its ClusterQueue stays sticky.
  // Returns false, and forgets the workload, when it must not be queued:
  // finished, inactive, holding quota, or its ClusterQueue is unknown.
  bool AddOrUpdateWorkload(const Workload& wl, Time now);
  bool DeleteWorkload(const std::string& uid);

  // One head per active ClusterQueue (step 2): copies of the heads, which
  // are in flight until requeued; the heads of the previous call that are
  // still in flight are forgotten first.
  std::vector<Workload> Heads();
  // The newest copy of the in-flight head `uid` (step 2): the popped one, or
  // the last update; nullptr when `uid` is not in flight (never popped,
  // requeued, or it left the queue while in flight). Valid until the next
  // call that changes the QueueManager.
  const Workload* InFlight(const std::string& uid) const;
  // Ends the flight of `uid`, if it is in flight, without requeueing it (it
  // was admitted). Returns true when an update reached it while in flight
  // (AddOrUpdateWorkload): the caller reads that workload again, since the
  // update was absorbed by the flight.
  bool EndFlight(const std::string& uid);
  // Puts every in-flight head back as if it had not been popped, in its heap
  // (in the inadmissible set while its requeueAt is after `now`): for a copy
  // that replays the queues (the start-time estimator) while the original's
  // cycle runs, and for a cycle that failed before it could requeue them.
  void ReturnInFlightHeads(Time now);

  // The verdict a head was given (its QuotaReserved=False reason and message).
  struct Verdict {
    std::string reason;
    std::string message;
  };
  // Step 3, for a head popped by Heads(): its newest copy (InFlight) is
  // placed. Returns true when the workload was (re)inserted; false when
  // `popped.uid` is not in flight (it left the queue meanwhile, or was
  // requeued already), changing nothing. `set_aside`
  // (optional) receives the pending workloads of the same shape moved to the
  // inadmissible set with it (step 6): pointers into the queue, valid until
  // the next call that changes the QueueManager. With `verdict`, only those
  // whose pending_reason/pending_message differ from it are listed (the ones
  // whose status needs writing); when every one shows it, none is visited.
  bool RequeueWorkload(const Workload& popped, RequeueReason reason, Time now,
                       std::vector<const Workload*>* set_aside = nullptr, const Verdict* verdict = nullptr);

  // Step 4 for the given ClusterQueues.
  void QueueInadmissibleWorkloads(const std::vector<std::string>& cluster_queues, Time now);
  // Step 4 for every ClusterQueue.
  void QueueAllInadmissibleWorkloads(Time now);

  // Introspection (visibility API): pending workloads of a ClusterQueue in
  // queue order (in flight, heap and inadmissible, by the same comparator;
  // the sticky preemptor first).
  std::vector<const Workload*> Pending(const std::string& cluster_queue) const;
  // The inadmissible workloads of a ClusterQueue, in queue order (no copy of
  // the queue: what the controller scans for scheduling equivalence).
  std::vector<const Workload*> Inadmissible(const std::string& cluster_queue) const;
  bool HasClusterQueue(const std::string& cluster_queue) const { return queues_.count(cluster_queue) > 0; }
  // The heap's workloads and the in-flight head (Kueue's pending active count).
  size_t ActiveCount(const std::string& cluster_queue) const;
  size_t InadmissibleCount(const std::string& cluster_queue) const;
  bool Contains(const std::string& uid) const { return where_.count(uid) > 0; }
  bool IsInadmissible(const std::string& uid) const;
  // The queued workloads of LocalQueue `local_queue` ("namespace/name"): in the heaps and
  // in flight (active) and in the inadmissible sets, as Kueue's
  // kueue_local_queue_pending_workloads reports them. O(1): kept up to date
  // by every move, so a LocalQueue's status and metrics cost nothing per pending workload.
  struct PendingCounts {
    size_t active = 0;
    size_t inadmissible = 0;
    bool operator==(const PendingCounts&) const = default;
  };
  PendingCounts LocalQueuePending(const std::string& local_queue) const;

 private:
  // Heap/inadmissible entry. Ordered by (lq_usage, priority, timestamp, uid)
  // only; shape and requeue_at ride along so scans need no lookups. lq_usage
  // is 0 unless the ClusterQueue uses Admission Fair Sharing.
  struct Key {
    double lq_usage;
    int32_t priority;
    Time timestamp;
    std::string uid;
    uint64_t shape = 0;  // hash of Shape()
    Time requeue_at{};   // Time{} when no backoff
    // Set in the keys the sets hold (StoredKey), not in keys made for a lookup (KeyOf);
    // neither takes part in the order.
    uint32_t local_queue = 0;  // index into lq_pending_ (LocalQueueId)
    // The queued workload itself, an element of Queue::workloads (whose nodes stay put),
    // so that scans need no lookup by uid. Mutable: a copied Queue re-points it.
    mutable const Workload* workload = nullptr;
  };
  struct KeyOrder {
    bool operator()(const Key& a, const Key& b) const;
  };
  // The pending workloads of one scheduling-equivalence shape (step 6) in a ClusterQueue:
  // `active` are in the heap, `aside` were set aside with a head of this shape and count as
  // inadmissible. A set-aside or a requeue moves a whole class at once: the smaller set's
  // nodes into the larger (the sets swap first when needed), so neither costs the queue's
  // length. The per-LocalQueue counts of each set move the LocalQueue counts in bulk.
  struct Members {
    std::set<Key, KeyOrder> keys;
    std::map<uint32_t, size_t> by_local_queue;  // LocalQueueId -> keys
    std::map<std::string, size_t> by_verdict;   // VerdictOf(workload) -> keys
  };
  struct ShapeClass {
    Members active;
    Members aside;
  };
  // Orders the heap by each class's best active key (pointers into ShapeClass::active).
  struct TopOrder {
    bool operator()(const Key* a, const Key* b) const { return KeyOrder()(*a, *b); }
  };
  struct QueueState {
    QueueingStrategy strategy = QueueingStrategy::kBestEffortFIFO;
    std::string root_cohort;
    bool active = true;
    // The heap: the best active key of every class that has one, so the head is
    // heap.begin() (O(log shapes) to keep when a class's best changes).
    std::set<const Key*, TopOrder> heap;
    std::map<uint64_t, ShapeClass> classes;  // by shape; a class empty in both sets is erased
    std::set<uint64_t> aside_shapes;         // the classes whose `aside` is not empty
    // Inadmissible one by one: heads requeued as inadmissible, workloads in backoff,
    // and inadmissible workloads updated in place.
    std::set<Key, KeyOrder> inadmissible;
    size_t active_count = 0;  // keys in the classes' `active` sets
    size_t aside_count = 0;   // keys in the classes' `aside` sets
    std::map<std::string, Workload> workloads;  // every queued and in-flight workload, by uid
    // The head popped by the last Heads() while it is in flight (step 2): in `workloads`
    // and where_, in no set; counted as active in lq_pending_, not in active_count.
    std::string in_flight;
    bool in_flight_updated = false;  // an update reached the in-flight head
    std::string sticky;  // sticky preemptor uid
    int64_t pop_cycle = 0;
    int64_t queue_inadmissible_cycle = -1;
    bool admission_fair_sharing = false;  // step 7
  };
  // A copy's keys point at the copy's own workloads (Key::workload) and its heap at the
  // copy's own keys; a move keeps the set and map nodes, and with them the pointers.
  struct Queue : QueueState {
    Queue() = default;
    Queue(const Queue& other) : QueueState(other) { Repoint(); }
    Queue& operator=(const Queue& other) {
      QueueState::operator=(other);
      Repoint();
      return *this;
    }
    Queue(Queue&&) = default;
    Queue& operator=(Queue&&) = default;
    void Repoint();
  };

  // The key of `wl` for a lookup in a set (by the order's fields only).
  Key KeyOf(const Queue& q, const Workload& wl) const;
  // The key a set holds for `stored`, which must be the element of q.workloads.
  Key StoredKey(const Queue& q, const Workload& stored) const;
  // Step 7: the usage set for the workload's LocalQueue, 0 when none was.
  double UsageOf(const Workload& wl) const;
  // Re-sorts the workloads of `local_queue` ("" = all) in `queues` around
  // `change`, which alters what KeyOf returns for them.
  void Rekey(const std::vector<Queue*>& queues, const std::string& local_queue, const std::function<void()>& change);
  std::vector<Queue*> FairSharingQueues();
  static bool Queueable(const Workload& wl);
  // Scheduling-equivalence key of a workload (step 6).
  static std::string Shape(const Workload& wl);
  // Where a stored key is: in its class's `active` (the heap) or `aside`, or in the
  // one-by-one inadmissible set.
  enum class Place { kActive, kAside, kInadmissible };
  void Insert(Queue& q, const Workload& wl, Place place);
  void Remove(Queue& q, const std::string& uid);
  // Step 2: counts q's in-flight head in lq_pending_ (delta +1) or stops counting it (-1).
  void CountInFlight(const Queue& q, int delta);
  // Ends q's flight, if any: the head leaves `workloads`, where_ and the sticky slot.
  void ForgetInFlight(Queue& q);
  // The index of the workload's LocalQueue in lq_pending_, assigned on first sight (ids
  // are never reused; one per LocalQueue a queued workload ever named).
  uint32_t LocalQueueId(const Workload& wl) const;
  // Moves of one key between "nowhere", the heap and the inadmissible set, for lq_pending_.
  enum class Where { kNone, kHeap, kInadmissible };
  void Moved(const Key& k, Where from, Where to);
  // Inserts the stored key `k` at `place` (counts, LocalQueue counts and heap kept).
  void Put(Queue& q, const Key& k, Place place);
  // Removes the key equal to `k` from wherever it is; returns where it was, or nullopt.
  std::optional<Place> Take(Queue& q, const Key& k);
  // Where the key equal to `k` is, or nullopt when it is not queued.
  static std::optional<Place> PlaceOf(const Queue& q, const Key& k);
  // The heap entry of `shape`'s class is dropped / re-added around a change of its
  // `active` set.
  static void DropTop(Queue& q, uint64_t shape);
  static void AddTop(Queue& q, uint64_t shape);
  static void EraseIfEmpty(Queue& q, uint64_t shape);
  // Step 6: every active workload of `shape` is set aside; those not showing `verdict`
  // (all without one) are appended to *set_aside when given.
  void SetAside(Queue& q, uint64_t shape, std::vector<const Workload*>* set_aside, const Verdict* verdict);
  // Moves a class's whole `active` set into its `aside` set (to_aside) or back, with the
  // counts, the LocalQueue counts and the heap (not aside_shapes: the callers keep it).
  void MoveClass(Queue& q, uint64_t shape, bool to_aside);
  static std::string VerdictOf(const std::string& reason, const std::string& message);
  static void Count(Members& m, const Key& k, int delta);
  void MoveInadmissible(Queue& q, Time now);

  std::map<std::string, Queue> queues_;
  std::map<std::string, std::string> where_;  // uid -> ClusterQueue
  std::map<std::string, double> lq_usage_;    // LocalQueue "ns/name" -> AFS usage
  mutable std::unordered_map<std::string, uint32_t> lq_ids_;  // LocalQueue "ns/name" -> index
  mutable std::vector<PendingCounts> lq_pending_;             // by LocalQueueId
};

}  // namespace berth::admission
