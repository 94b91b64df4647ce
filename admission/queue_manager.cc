#include "admission/queue_manager.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace berth::admission {

bool QueueManager::KeyOrder::operator()(const Key& a, const Key& b) const {
  if (a.lq_usage != b.lq_usage) return a.lq_usage < b.lq_usage;
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.timestamp != b.timestamp) return a.timestamp < b.timestamp;
  return a.uid < b.uid;
}

bool QueueManager::Queueable(const Workload& wl) {
  return !wl.finished && wl.active && wl.state == AdmissionState::kPending && !wl.admission.has_value();
}

std::string QueueManager::Shape(const Workload& wl) {
  std::string s = std::to_string(wl.priority);
  for (const auto& ps : wl.pod_sets) {
    s += "|" + ps.name + "#" + std::to_string(ps.count - ps.reclaimable);
    for (const auto& [r, a] : ps.requests.items()) s += "," + std::to_string(r) + "=" + std::to_string(a);
    for (const auto& [k, v] : ps.node_selector) s += ";ns:" + k + "=" + v;
    for (const auto& t : ps.required_affinity_terms) {
      s += ";term";
      for (const auto& e : t.match_expressions) {
        s += ":" + e.key + "/" + std::to_string(static_cast<int>(e.op));
        for (const auto& v : e.values) s += "/" + v;
      }
    }
    for (const auto& t : ps.tolerations) {
      s += ";tol:" + t.key + "/" + std::to_string(static_cast<int>(t.op)) + "/" + t.value + "/" +
           (t.effect ? std::to_string(static_cast<int>(*t.effect)) : "*");
    }
  }
  return s;
}

double QueueManager::UsageOf(const Workload& wl) const {
  auto u = lq_usage_.find(wl.namespace_name + "/" + wl.queue_name);
  return u == lq_usage_.end() ? 0.0 : u->second;
}

std::optional<double> QueueManager::LocalQueueUsage(const std::string& cluster_queue, const Workload& wl) const {
  auto q = queues_.find(cluster_queue);
  if (q == queues_.end() || !q->second.admission_fair_sharing) return std::nullopt;
  return UsageOf(wl);
}

void QueueManager::Queue::Repoint() {
  auto repoint = [this](const std::set<Key, KeyOrder>& set) {
    for (const Key& k : set) k.workload = &workloads.at(k.uid);
  };
  repoint(inadmissible);
  heap.clear();
  for (const auto& [shape, c] : classes) {
    repoint(c.active.keys);
    repoint(c.aside.keys);
    if (!c.active.keys.empty()) heap.insert(&*c.active.keys.begin());
  }
}

std::string QueueManager::VerdictOf(const std::string& reason, const std::string& message) {
  return reason + '\n' + message;
}

void QueueManager::Count(Members& m, const Key& k, int delta) {
  auto bump = [delta](auto& counts, const auto& key) {
    auto [it, added] = counts.try_emplace(key, 0);
    it->second += delta;
    if (it->second == 0) counts.erase(it);
  };
  bump(m.by_local_queue, k.local_queue);
  bump(m.by_verdict, VerdictOf(k.workload->pending_reason, k.workload->pending_message));
}

void QueueManager::DropTop(Queue& q, uint64_t shape) {
  auto c = q.classes.find(shape);
  if (c != q.classes.end() && !c->second.active.keys.empty()) q.heap.erase(&*c->second.active.keys.begin());
}

void QueueManager::AddTop(Queue& q, uint64_t shape) {
  auto c = q.classes.find(shape);
  if (c != q.classes.end() && !c->second.active.keys.empty()) q.heap.insert(&*c->second.active.keys.begin());
}

void QueueManager::EraseIfEmpty(Queue& q, uint64_t shape) {
  auto c = q.classes.find(shape);
  if (c != q.classes.end() && c->second.active.keys.empty() && c->second.aside.keys.empty()) q.classes.erase(c);
}

void QueueManager::Put(Queue& q, const Key& k, Place place) {
  if (place == Place::kInadmissible) {
    if (q.inadmissible.insert(k).second) Moved(k, Where::kNone, Where::kInadmissible);
    return;
  }
  ShapeClass& c = q.classes[k.shape];
  if (place == Place::kAside) {
    if (!c.aside.keys.insert(k).second) return;
    Count(c.aside, k, 1);
    ++q.aside_count;
    q.aside_shapes.insert(k.shape);
    Moved(k, Where::kNone, Where::kInadmissible);
    return;
  }
  DropTop(q, k.shape);
  if (c.active.keys.insert(k).second) {
    Count(c.active, k, 1);
    ++q.active_count;
    Moved(k, Where::kNone, Where::kHeap);
  }
  AddTop(q, k.shape);
}

std::optional<QueueManager::Place> QueueManager::Take(Queue& q, const Key& k) {
  if (auto it = q.inadmissible.find(k); it != q.inadmissible.end()) {
    Moved(*it, Where::kInadmissible, Where::kNone);
    q.inadmissible.erase(it);
    return Place::kInadmissible;
  }
  auto c = q.classes.find(k.shape);
  if (c == q.classes.end()) return std::nullopt;
  if (auto it = c->second.aside.keys.find(k); it != c->second.aside.keys.end()) {
    Moved(*it, Where::kInadmissible, Where::kNone);
    Count(c->second.aside, *it, -1);
    --q.aside_count;
    c->second.aside.keys.erase(it);
    if (c->second.aside.keys.empty()) q.aside_shapes.erase(k.shape);
    EraseIfEmpty(q, k.shape);
    return Place::kAside;
  }
  auto it = c->second.active.keys.find(k);
  if (it == c->second.active.keys.end()) return std::nullopt;
  DropTop(q, k.shape);
  Moved(*it, Where::kHeap, Where::kNone);
  Count(c->second.active, *it, -1);
  --q.active_count;
  c->second.active.keys.erase(it);
  AddTop(q, k.shape);
  EraseIfEmpty(q, k.shape);
  return Place::kActive;
}

std::optional<QueueManager::Place> QueueManager::PlaceOf(const Queue& q, const Key& k) {
  if (q.inadmissible.count(k) > 0) return Place::kInadmissible;
  auto c = q.classes.find(k.shape);
  if (c == q.classes.end()) return std::nullopt;
  if (c->second.aside.keys.count(k) > 0) return Place::kAside;
  if (c->second.active.keys.count(k) > 0) return Place::kActive;
  return std::nullopt;
}

// Moves every key of `from` into `to`, counts included: the smaller set's nodes go into
// the larger, so a class moves in O(smaller × log).
namespace {
template <typename Members>
void MergeInto(Members& from, Members& to) {
  if (from.keys.size() > to.keys.size()) std::swap(from, to);
  for (const auto& [lq, n] : from.by_local_queue) to.by_local_queue[lq] += n;
  for (const auto& [verdict, n] : from.by_verdict) to.by_verdict[verdict] += n;
  from.by_local_queue.clear();
  from.by_verdict.clear();
  to.keys.merge(from.keys);
}
}  // namespace

void QueueManager::MoveClass(Queue& q, uint64_t shape, bool to_aside) {
  ShapeClass& c = q.classes.at(shape);
  Members& from = to_aside ? c.active : c.aside;
  Members& to = to_aside ? c.aside : c.active;
  for (const auto& [lq, n] : from.by_local_queue) {
    PendingCounts& counts = lq_pending_.at(lq);
    (to_aside ? counts.active : counts.inadmissible) -= n;
    (to_aside ? counts.inadmissible : counts.active) += n;
  }
  const size_t n = from.keys.size();
  (to_aside ? q.active_count : q.aside_count) -= n;
  (to_aside ? q.aside_count : q.active_count) += n;
  DropTop(q, shape);
  MergeInto(from, to);
  AddTop(q, shape);
}

void QueueManager::SetAside(Queue& q, uint64_t shape, std::vector<const Workload*>* set_aside,
                            const Verdict* verdict) {
  auto it = q.classes.find(shape);
  if (it == q.classes.end() || it->second.active.keys.empty()) return;
  ShapeClass& c = it->second;
  if (set_aside != nullptr) {
    // The members already showing the verdict are counted, so when all do none is visited.
    const std::string shown = verdict ? VerdictOf(verdict->reason, verdict->message) : std::string();
    auto same = verdict ? c.active.by_verdict.find(shown) : c.active.by_verdict.end();
    if (same == c.active.by_verdict.end() || same->second < c.active.keys.size()) {
      for (const Key& k : c.active.keys) {
        if (!verdict || k.workload->pending_reason != verdict->reason ||
            k.workload->pending_message != verdict->message) {
          set_aside->push_back(k.workload);
        }
      }
    }
  }
  MoveClass(q, shape, /*to_aside=*/true);
  q.aside_shapes.insert(shape);
}

QueueManager::Key QueueManager::KeyOf(const Queue& q, const Workload& wl) const {
  return {q.admission_fair_sharing ? UsageOf(wl) : 0.0, wl.priority, wl.queue_order_timestamp, wl.uid, std::hash<std::string>()(Shape(wl)),
          wl.requeue_at.value_or(Time{})};
}

QueueManager::Key QueueManager::StoredKey(const Queue& q, const Workload& stored) const {
  Key k = KeyOf(q, stored);
  k.local_queue = LocalQueueId(stored);
  k.workload = &stored;
  return k;
}

uint32_t QueueManager::LocalQueueId(const Workload& wl) const {
  auto [it, added] = lq_ids_.try_emplace(wl.namespace_name + "/" + wl.queue_name, static_cast<uint32_t>(lq_pending_.size()));
  if (added) lq_pending_.emplace_back();
  return it->second;
}

void QueueManager::Moved(const Key& k, Where from, Where to) {
  PendingCounts& c = lq_pending_.at(k.local_queue);
  if (from == Where::kHeap) --c.active;
  if (from == Where::kInadmissible) --c.inadmissible;
  if (to == Where::kHeap) ++c.active;
  if (to == Where::kInadmissible) ++c.inadmissible;
}

QueueManager::PendingCounts QueueManager::LocalQueuePending(const std::string& local_queue) const {
  auto it = lq_ids_.find(local_queue);
  return it == lq_ids_.end() ? PendingCounts{} : lq_pending_[it->second];
}

void QueueManager::Rekey(const std::vector<Queue*>& queues, const std::string& local_queue,
                         const std::function<void()>& change) {
  struct Moved {
    Queue* q;
    std::string uid;
    Place place;
  };
  std::vector<Moved> moved;
  for (Queue* q : queues) {
    for (const auto& [uid, wl] : q->workloads) {
      if (!local_queue.empty() && wl.namespace_name + "/" + wl.queue_name != local_queue) continue;
      if (std::optional<Place> place = Take(*q, KeyOf(*q, wl))) moved.push_back({q, uid, *place});
    }
  }
  change();
  for (const Moved& m : moved) Put(*m.q, StoredKey(*m.q, m.q->workloads.at(m.uid)), m.place);
}

std::vector<QueueManager::Queue*> QueueManager::FairSharingQueues() {
  std::vector<Queue*> out;
  for (auto& [name, q] : queues_) {
    if (q.admission_fair_sharing) out.push_back(&q);
  }
  return out;
}

void QueueManager::SetAdmissionFairSharing(const std::string& cluster_queue, bool enabled) {
  auto q = queues_.find(cluster_queue);
  if (q == queues_.end() || q->second.admission_fair_sharing == enabled) return;
  Rekey({&q->second}, "", [&] { q->second.admission_fair_sharing = enabled; });
}

void QueueManager::SetLocalQueueUsage(const std::string& local_queue, double usage) {
  if (std::isnan(usage)) usage = std::numeric_limits<double>::infinity();  // a NaN key breaks the heap's order
  if (auto old = lq_usage_.find(local_queue); old != lq_usage_.end() && old->second == usage) return;
  Rekey(FairSharingQueues(), local_queue, [&] { lq_usage_[local_queue] = usage; });
}

void QueueManager::ForgetLocalQueueUsage(const std::string& local_queue) {
  if (lq_usage_.count(local_queue) == 0) return;
  Rekey(FairSharingQueues(), local_queue, [&] { lq_usage_.erase(local_queue); });
}

void QueueManager::Insert(Queue& q, const Workload& wl, Place place) {
  auto [stored, added] = q.workloads.insert_or_assign(wl.uid, wl);
  where_[wl.uid] = wl.cluster_queue;
  Put(q, StoredKey(q, stored->second), place);
}

void QueueManager::AddOrUpdateClusterQueue(const std::string& name, QueueingStrategy strategy,
                                           const std::string& root_cohort, bool active) {
  Queue& q = queues_[name];
  q.strategy = strategy;
  q.root_cohort = root_cohort;
  q.active = active;
}

void QueueManager::DeleteClusterQueue(const std::string& name) {
  auto it = queues_.find(name);
  if (it == queues_.end()) return;
  CountInFlight(it->second, -1);
  for (const auto& [uid, wl] : it->second.workloads) where_.erase(uid);
  for (const auto& [shape, c] : it->second.classes) {
    for (const Key& k : c.active.keys) Moved(k, Where::kHeap, Where::kNone);
    for (const Key& k : c.aside.keys) Moved(k, Where::kInadmissible, Where::kNone);
  }
  for (const Key& k : it->second.inadmissible) Moved(k, Where::kInadmissible, Where::kNone);
  queues_.erase(it);
}

void QueueManager::CountInFlight(const Queue& q, int delta) {
  if (q.in_flight.empty()) return;
  const Key k = StoredKey(q, q.workloads.at(q.in_flight));
  if (delta > 0) {
    Moved(k, Where::kNone, Where::kHeap);
  } else {
    Moved(k, Where::kHeap, Where::kNone);
  }
}

void QueueManager::ForgetInFlight(Queue& q) {
  if (q.in_flight.empty()) return;
  CountInFlight(q, -1);
  q.workloads.erase(q.in_flight);
  where_.erase(q.in_flight);
  if (q.sticky == q.in_flight) q.sticky.clear();
  q.in_flight.clear();
}

void QueueManager::Remove(Queue& q, const std::string& uid) {
  auto it = q.workloads.find(uid);
  if (it == q.workloads.end()) return;
  if (q.in_flight == uid) {
    CountInFlight(q, -1);
    q.in_flight.clear();
  }
  Take(q, KeyOf(q, it->second));
  q.workloads.erase(it);
  if (q.sticky == uid) q.sticky.clear();
  where_.erase(uid);
}

bool QueueManager::AddOrUpdateWorkload(const Workload& wl, Time now) {
  auto w = where_.find(wl.uid);
  if (w != where_.end() && w->second == wl.cluster_queue && Queueable(wl)) {
    Queue& q = queues_.at(w->second);
    if (q.in_flight == wl.uid) {
      // Step 2: the cycle that popped it places this copy (RequeueWorkload).
      CountInFlight(q, -1);
      q.workloads.at(wl.uid) = wl;
      CountInFlight(q, 1);
      q.in_flight_updated = true;
      return true;
    }
  }
  std::optional<Place> was;  // where it was in the same ClusterQueue
  bool was_sticky = false;
  if (w != where_.end()) {
    Queue& old = queues_.at(w->second);
    // A workload moved to another ClusterQueue is tried there (Kueue's
    // Manager.UpdateWorkload re-adds it as new).
    const bool same_queue = w->second == wl.cluster_queue;
    if (same_queue) was = PlaceOf(old, KeyOf(old, old.workloads.at(wl.uid)));
    was_sticky = same_queue && old.sticky == wl.uid;
    Remove(old, wl.uid);
  }
  auto q = queues_.find(wl.cluster_queue);
  if (!Queueable(wl) || q == queues_.end()) return false;
  bool backoff = wl.requeue_at.has_value() && *wl.requeue_at > now;
  // An inadmissible workload updated in place stays where it was: a set-aside one
  // (its status written with the verdict, a resync) with its shape's set-aside class,
  // so the class still moves as one. A backoff puts it in the one-by-one set, which
  // MoveInadmissible checks.
  Insert(q->second, wl, backoff ? Place::kInadmissible : was.value_or(Place::kActive));
  // An update in place keeps a waiting preemptor the sticky head (Kueue's
  // ClusterQueue.PushOrUpdate leaves preemptorWorkload set; only a delete clears it).
  if (was_sticky) q->second.sticky = wl.uid;
  return true;
}

bool QueueManager::DeleteWorkload(const std::string& uid) {
  auto w = where_.find(uid);
  if (w == where_.end()) return false;
  Remove(queues_.at(w->second), uid);
  return true;
}

std::vector<Workload> QueueManager::Heads() {
  std::vector<Workload> heads;
  for (auto& [name, q] : queues_) {
    ForgetInFlight(q);  // not requeued: admitted
    if (!q.active || q.heap.empty()) continue;
    Key head = **q.heap.begin();
    if (!q.sticky.empty()) {
      auto s = q.workloads.find(q.sticky);
      if (s != q.workloads.end()) {
        const Key k = KeyOf(q, s->second);
        if (PlaceOf(q, k) == Place::kActive) head = k;
      }
    }
    Take(q, head);
    q.in_flight = head.uid;
    q.in_flight_updated = false;
    CountInFlight(q, 1);
    ++q.pop_cycle;
    heads.push_back(q.workloads.at(head.uid));
  }
  return heads;
}

const Workload* QueueManager::InFlight(const std::string& uid) const {
  auto w = where_.find(uid);
  if (w == where_.end()) return nullptr;
  const Queue& q = queues_.at(w->second);
  return q.in_flight == uid ? &q.workloads.at(uid) : nullptr;
}

bool QueueManager::EndFlight(const std::string& uid) {
  auto w = where_.find(uid);
  if (w == where_.end()) return false;
  Queue& q = queues_.at(w->second);
  if (q.in_flight != uid) return false;
  const bool updated = q.in_flight_updated;
  ForgetInFlight(q);
  return updated;
}

void QueueManager::ReturnInFlightHeads(Time now) {
  for (auto& [name, q] : queues_) {
    if (q.in_flight.empty()) continue;
    CountInFlight(q, -1);
    const Workload& head = q.workloads.at(q.in_flight);
    q.in_flight.clear();
    const bool backoff = head.requeue_at.has_value() && *head.requeue_at > now;
    Put(q, StoredKey(q, head), backoff ? Place::kInadmissible : Place::kActive);
  }
}

bool QueueManager::RequeueWorkload(const Workload& popped, RequeueReason reason, Time now,
                                   std::vector<const Workload*>* set_aside, const Verdict* verdict) {
  auto w = where_.find(popped.uid);
  if (w == where_.end()) return false;
  Queue& queue = queues_.at(w->second);
  if (queue.in_flight != popped.uid) return false;
  // The flight ends; the sticky slot stays (Kueue clears its preemptor only on delete).
  CountInFlight(queue, -1);
  queue.in_flight.clear();
  where_.erase(w);
  const Workload wl = std::move(queue.workloads.extract(popped.uid).mapped());
  if (!Queueable(wl)) return false;
  bool immediate;
  if (queue.strategy == QueueingStrategy::kStrictFIFO) {
    immediate = reason != RequeueReason::kNamespaceMismatch;
  } else {
    immediate = reason == RequeueReason::kFailedAfterNomination || reason == RequeueReason::kPendingPreemption ||
                reason == RequeueReason::kPreemptionFailed;
  }
  if (reason == RequeueReason::kPendingPreemption && queue.strategy == QueueingStrategy::kBestEffortFIFO) {
    queue.sticky = wl.uid;
  }
  bool backoff_expired = !wl.requeue_at.has_value() || *wl.requeue_at <= now;
  if (backoff_expired && (immediate || queue.queue_inadmissible_cycle >= queue.pop_cycle)) {
    Insert(queue, wl, Place::kActive);
    return true;
  }
  Insert(queue, wl, Place::kInadmissible);
  if (queue.strategy == QueueingStrategy::kBestEffortFIFO &&
      (reason == RequeueReason::kNoFit || reason == RequeueReason::kPreemptionNoCandidates)) {
    SetAside(queue, KeyOf(queue, wl).shape, set_aside, verdict);
  }
  return true;
}

void QueueManager::MoveInadmissible(Queue& q, Time now) {
  q.queue_inadmissible_cycle = q.pop_cycle;
  // Whole classes first: their keys are in the heap's order already (no backoff: they were
  // active when set aside).
  for (uint64_t shape : q.aside_shapes) MoveClass(q, shape, /*to_aside=*/false);
  q.aside_shapes.clear();
  for (auto it = q.inadmissible.begin(); it != q.inadmissible.end();) {
    if (it->requeue_at > now) {
      ++it;
      continue;
    }
    const Key k = *it;
    Moved(k, Where::kInadmissible, Where::kNone);
    it = q.inadmissible.erase(it);
    Put(q, k, Place::kActive);
  }
}

void QueueManager::QueueInadmissibleWorkloads(const std::vector<std::string>& cluster_queues, Time now) {
  std::set<std::string> roots;
  std::set<std::string> names;
  for (const auto& name : cluster_queues) {
    auto q = queues_.find(name);
    if (q == queues_.end()) continue;
    names.insert(name);
    if (!q->second.root_cohort.empty()) roots.insert(q->second.root_cohort);
  }
  for (auto& [name, q] : queues_) {
    if (names.count(name) || (!q.root_cohort.empty() && roots.count(q.root_cohort))) MoveInadmissible(q, now);
  }
}

void QueueManager::QueueAllInadmissibleWorkloads(Time now) {
  for (auto& [name, q] : queues_) MoveInadmissible(q, now);
}

std::vector<const Workload*> QueueManager::Pending(const std::string& cluster_queue) const {
  std::vector<const Workload*> out;
  auto q = queues_.find(cluster_queue);
  if (q == queues_.end()) return out;
  std::vector<Key> keys(q->second.inadmissible.begin(), q->second.inadmissible.end());
  if (const std::string& uid = q->second.in_flight; !uid.empty()) {
    keys.push_back(StoredKey(q->second, q->second.workloads.at(uid)));
  }
  for (const auto& [shape, c] : q->second.classes) {
    keys.insert(keys.end(), c.active.keys.begin(), c.active.keys.end());
    keys.insert(keys.end(), c.aside.keys.begin(), c.aside.keys.end());
  }
  std::stable_sort(keys.begin(), keys.end(), KeyOrder());
  const std::string& sticky = q->second.sticky;
  if (!sticky.empty()) {
    std::stable_partition(keys.begin(), keys.end(), [&](const Key& k) { return k.uid == sticky; });
  }
  for (const auto& k : keys) out.push_back(k.workload);
  return out;
}

std::vector<const Workload*> QueueManager::Inadmissible(const std::string& cluster_queue) const {
  std::vector<const Workload*> out;
  auto q = queues_.find(cluster_queue);
  if (q == queues_.end()) return out;
  std::vector<const Key*> keys;
  keys.reserve(q->second.inadmissible.size() + q->second.aside_count);
  for (const Key& k : q->second.inadmissible) keys.push_back(&k);
  for (uint64_t shape : q->second.aside_shapes) {
    for (const Key& k : q->second.classes.at(shape).aside.keys) keys.push_back(&k);
  }
  std::sort(keys.begin(), keys.end(), TopOrder());
  out.reserve(keys.size());
  for (const Key* k : keys) out.push_back(k->workload);
  return out;
}

size_t QueueManager::ActiveCount(const std::string& cluster_queue) const {
  auto q = queues_.find(cluster_queue);
  return q == queues_.end() ? 0 : q->second.active_count + (q->second.in_flight.empty() ? 0 : 1);
}

size_t QueueManager::InadmissibleCount(const std::string& cluster_queue) const {
  auto q = queues_.find(cluster_queue);
  return q == queues_.end() ? 0 : q->second.inadmissible.size() + q->second.aside_count;
}

bool QueueManager::IsInadmissible(const std::string& uid) const {
  auto w = where_.find(uid);
  if (w == where_.end()) return false;
  const Queue& q = queues_.at(w->second);
  const std::optional<Place> place = PlaceOf(q, KeyOf(q, q.workloads.at(uid)));
  return place.has_value() && *place != Place::kActive;
}

}  // namespace berth::admission
