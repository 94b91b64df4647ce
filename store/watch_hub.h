// WatchHub: the bounded event history and the set of live watchers of one
// store, shared by every backend (the apiserver's watch cache + cacher).
//
// The store appends each acknowledged write as one HistoryEvent, in revision
// order, under its own write lock; the hub offers it to the watchers of that
// resource (namespace filter, then the predicate on old and new object, see
// store.h "Watch") and keeps it for later watches and for consistent list
// pages (EventsSince).
//
// The history is kept per resource (group/resource), as kube-apiserver keeps a
// watch cache per resource, within limits shared by all: at most
// `history_limit` events and the byte limit (kMaxWatchHistoryBytes; each event
// counted at the approximate size of its object as compact JSON,
// ApproxJsonBytes). Past the event limit the oldest event of the resource
// holding the most events is dropped, past the byte limit that of the resource
// holding the most bytes: a burst of writes to one kind (Events, say, 15 per
// Job) pushes out its own history before a quieter kind's. Dropped events are
// "compacted": CompactedRevision(resource) is then the newest revision dropped
// from that resource's history, and a watch or list of the resource from a
// revision below it gets kGone (410 Expired at the API). Each resource's
// newest event is always kept.
//
// Locking: one hub mutex guards the history and the watcher set; each watcher
// has its own mutex for its buffer. Lock order: store -> hub -> watcher.
// Notify callbacks run only from RunNotifications, which the caller invokes
// after releasing its locks.
//
// Thread-safety: all methods are thread-safe. The hub is held by shared_ptr
// so that watchers may outlive the store.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "store/store.h"

namespace berth::store {

// The most bytes of objects the history keeps (ApproxJsonBytes of each event's
// object). Upstream bounds its watch cache in events, not bytes: 100 events
// growing to 100 * 1024 while they are younger than 75 s (defaultLowerBoundCapacity,
// defaultUpperBoundCapacity, DefaultEventFreshDuration in
// staging/src/k8s.io/apiserver/pkg/storage/cacher/watch_cache.go), and etcd
// compacts its history every 5 minutes (--etcd-compaction-interval) within a
// 2 GiB backend (--quota-backend-bytes). berth keeps its history in memory, so
// 10,000 events of objects up to 1.5 MiB could hold 15 GB: the bytes are bounded
// too, at 64 MiB of JSON (a few times that in memory as decoded trees).
inline constexpr size_t kMaxWatchHistoryBytes = 64 * 1024 * 1024;

// The size of `obj` as compact JSON, approximately (numbers count 8 bytes,
// string escapes are not counted). Iterative: any depth. Linear in the nodes.
size_t ApproxJsonBytes(const api::Object& obj);

// One acknowledged write.
struct HistoryEvent {
  int64_t revision = 0;
  EventType type = EventType::kAdded;
  ObjectKey key;
  // kAdded/kModified: the new object. kDeleted: the last state with
  // resourceVersion = revision.
  ObjectPtr object;
  // The object before this write (null for kAdded), as stored.
  ObjectPtr prev;
  // `prev` with resourceVersion = revision, built on first need (a MODIFIED
  // that leaves a watcher's selection). Guarded by the hub mutex.
  mutable ObjectPtr prev_at_revision;
  // ApproxJsonBytes(*object), set by Publish.
  size_t bytes = 0;
};

class HubWatcher;

class WatchHub : public std::enable_shared_from_this<WatchHub> {
 public:
  // Watchers whose notify callback must run once the caller's locks are released.
  using Notifications = std::vector<std::shared_ptr<HubWatcher>>;

  // history_limit: events kept, history_bytes_limit: bytes of objects kept, all
  // resources together (each resource keeps at least its newest event).
  WatchHub(size_t history_limit, size_t watcher_buffer_limit, int64_t start_revision,
           size_t history_bytes_limit = kMaxWatchHistoryBytes);

  // What Publish leaves for the caller to do once its locks are released:
  // run the notifications, and let the events that left the history die
  // (freeing large JSON trees is the costliest part of a write; keep it out
  // of the critical section).
  struct Published {
    Notifications notifications;
    std::vector<HistoryEvent> evicted;
  };

  // Appends events (ascending revisions, all above every earlier one) and
  // offers them to the watchers. `current_revision` is the store's revision
  // after these events.
  Published Publish(std::vector<HistoryEvent> events, int64_t current_revision);

  // Registers a watcher of `resource` that first replays the kept events with
  // revision > from (from = 0: current_revision). kGone when from is older
  // than the history.
  StatusOr<std::unique_ptr<Watcher>> AddWatcher(const api::GroupResource& resource, const WatchOptions& options,
                                                int64_t current_revision);

  // Calls fn for every kept event of `resource` (in namespace ns, "" = all)
  // with revision > after, newest first. kGone (TooOldResourceVersion) when
  // after < CompactedRevision(resource).
  Status EventsSince(const api::GroupResource& resource, const std::string& ns, int64_t after,
                     const std::function<void(const HistoryEvent&)>& fn) const;

  // The newest revision dropped from `resource`'s history (the hub's start
  // revision while none was).
  int64_t CompactedRevision(const api::GroupResource& resource) const;
  // Events and bytes (ApproxJsonBytes) the history holds now, all resources together.
  size_t HistorySize() const;
  size_t HistoryBytes() const;

  // Closes every watcher with `status` (store shutdown).
  Notifications CloseAll(const Status& status);

  static void RunNotifications(const Notifications& notifications);

 private:
  friend class HubWatcher;
  void Remove(HubWatcher* watcher);
  // The revision every watcher has been offered every event up to.
  int64_t PublishedRevision() const { return published_revision_.load(std::memory_order_acquire); }

  const size_t history_limit_;
  const size_t watcher_buffer_limit_;
  const size_t history_bytes_limit_;
  // One resource's kept events.
  struct ResourceHistory {
    std::deque<HistoryEvent> events;  // ascending revisions
    size_t bytes = 0;                 // sum of events[i].bytes
    int64_t compacted;                // newest revision no longer in events
  };
  // Drops the oldest event of `history` into `evicted`.
  void EvictOldestLocked(ResourceHistory& history, std::vector<HistoryEvent>& evicted);
  // The history of `resource`, or null when none was ever kept.
  const ResourceHistory* FindLocked(const api::GroupResource& resource) const;
  // The newest revision dropped from `history` (the hub's start revision for none).
  int64_t CompactedLocked(const ResourceHistory* history) const;

  const int64_t start_revision_;
  mutable std::mutex mu_;
  std::map<api::GroupResource, ResourceHistory> histories_;
  size_t history_size_ = 0;   // events in all histories_
  size_t history_bytes_ = 0;  // bytes in all histories_
  std::map<api::GroupResource, std::vector<std::shared_ptr<HubWatcher>>> watchers_;
  std::atomic<int64_t> published_revision_;
};

// The hub's side of one watch: filter, bounded buffer, close status and
// notify callback. Consumers hold it through the Watcher that AddWatcher
// returns (which stops it when destroyed).
class HubWatcher {
 public:
  HubWatcher(std::shared_ptr<WatchHub> hub, api::GroupResource resource, const WatchOptions& options,
             size_t buffer_limit, int64_t start_revision);

  StatusOr<std::optional<WatchEvent>> Next(Duration timeout);
  int64_t StartRevision() const { return start_revision_; }
  int64_t ProgressRevision() const;
  void Stop();

 private:
  friend class WatchHub;
  enum class OfferResult { kQuiet, kNotify, kClosed };
  // Converts ev for this watcher (namespace, predicate transitions) and
  // buffers it. Called with the hub mutex held. Replayed events are not
  // limited by the buffer; a live event that finds it full closes the watch.
  OfferResult Offer(const HistoryEvent& ev, bool replay);
  // Closes with status (buffered events are dropped unless keep_buffer);
  // returns true when it was open.
  bool Close(const Status& status, bool keep_buffer);
  void Notify();
  bool Matches(const api::Object& obj) const;

  std::shared_ptr<WatchHub> hub_;
  const api::GroupResource resource_;
  const std::string ns_;
  const Predicate predicate_;
  const std::function<void()> notify_;
  const size_t buffer_limit_;
  const int64_t start_revision_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<WatchEvent> buffer_;
  Status closed_;  // the status Next returns once closed and drained
  bool is_closed_ = false;

  std::recursive_mutex notify_mu_;  // held while notify_ runs; Stop waits on it
  bool notify_enabled_ = true;      // guarded by notify_mu_
};

}  // namespace berth::store
