// Informer: a shared informer for one resource, as client-go's
// SharedIndexInformer (Reflector + DeltaFIFO + Indexer + processor), over the
// Client interface, so it runs unchanged against the in-process API server,
// a remote server over HTTP, or the FakeClient.
//
// What it does (client-go's reflector.go ListAndWatch):
//   1. LIST the resource (pages of options.page_size with continue tokens; if
//      a continue token expires with 410, one unpaginated LIST instead), then
//      replace the cache with the result and notify: OnAdd for new keys,
//      OnUpdate for keys whose resourceVersion changed, and OnDelete with
//      final_state_unknown = true for cached keys the list no longer has (the
//      object vanished while we were not watching: client-go's
//      DeletedFinalStateUnknown; the object passed is the last cached state).
//      Keys whose resourceVersion is unchanged are not notified (client-go
//      sends them as updates; berth leaves that to the resync period).
//   2. WATCH from the list's resourceVersion with allowWatchBookmarks and
//      timeoutSeconds = options.watch_timeout_seconds, applying every event
//      to the cache and notifying handlers. BOOKMARKs only advance the
//      resourceVersion.
//   3. When the watch ends (server timeout, connection closed, ...) WATCH
//      again from the last resourceVersion seen. When the watch answers 410
//      Gone (an ERROR event with reason Expired/Gone, or a kGone Status), go
//      back to 1 (relist).
//   Errors other than 410 (server unavailable, ...) are retried after a
//   backoff of options.min_backoff doubling to options.max_backoff (real
//   time: this is transport pacing, like client-go's backoff manager), reset
//   after a successful LIST or a watch that delivered events.
//
// Handlers: OnAdd / OnUpdate(old, new) / OnDelete are called one at a time, in
// the order the informer applied the changes: a watch event that finds nothing
// queued and no handler running is delivered on the reflector's thread as it is
// applied (no hand-off to another thread); the rest (the LIST's notifications,
// a late handler's replay, resyncs and what queued behind them) on the dispatch
// thread. The
// cache is updated before the notification is queued, so a handler may see a
// cache that is already ahead of the event it handles (as in client-go).
// A handler added after Start first receives OnAdd(is_initial_list = true)
// for every object cached at that moment (sorted by key).
//
// HasSynced: true once the first LIST is in the cache and its notifications
// have been delivered to every handler registered at that time.
//
// Resync: with options.resync_period > 0, every period of Clock time after
// sync the dispatch thread calls OnUpdate(obj, obj) for every cached object
// (sorted by key), as client-go's resync. The dispatch thread looks at the
// Clock at least every options.clock_poll_interval of real time, so a
// FakeClock Advance is noticed within that interval.
//
// Thread-safety: every method may be called from any thread. The Indexer
// returned by GetIndexer() is itself thread-safe. Handlers must not block for
// long: they delay every later notification and the reading of the watch (they
// normally only enqueue a key in a WorkQueue); nor may they Stop() their informer.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/indexer.h"
#include "core/clock.h"

namespace berth::client {

struct ResourceEventHandler {
  // is_initial_list: the object came from the first LIST (or, for a handler
  // added late, from the cache replay).
  std::function<void(const ObjectPtr& obj, bool is_initial_list)> on_add;
  std::function<void(const ObjectPtr& old_obj, const ObjectPtr& new_obj)> on_update;
  // final_state_unknown: the deletion was inferred from a relist; obj is the
  // last cached state, not the object's final state.
  std::function<void(const ObjectPtr& obj, bool final_state_unknown)> on_delete;
};

struct InformerOptions {
  std::string label_selector;
  std::string field_selector;
  Duration resync_period = Duration::zero();  // zero: no resync
  int64_t page_size = 500;                    // LIST limit; 0 = unpaginated
  int64_t watch_timeout_seconds = 300;        // client-go: 5 to 10 minutes
  // Real-time pacing (see the file comment).
  Duration clock_poll_interval = std::chrono::milliseconds(100);
  Duration min_backoff = std::chrono::milliseconds(100);
  Duration max_backoff = std::chrono::seconds(30);
};

class Informer {
 public:
  Informer(Client& client, ResourceRef ref, Clock& clock, InformerOptions options = {});
  ~Informer();  // Stop()
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  const ResourceRef& resource() const { return ref_; }

  // Adds a named index to the cache (see indexer.h). kAlreadyExists when taken.
  Status AddIndexer(const std::string& name, IndexFunc fn);
  void AddEventHandler(ResourceEventHandler handler);

  // Starts the reflector and dispatch threads. Idempotent.
  void Start();
  // Stops both threads (waits for a running handler to return). Idempotent;
  // the informer cannot be restarted.
  void Stop();

  bool HasSynced() const;
  // Blocks until HasSynced() or `timeout` of real time passed; returns HasSynced().
  bool WaitForCacheSync(Duration timeout);

  // The cache. Read-only for callers (the informer is its only writer).
  const Indexer& GetIndexer() const { return indexer_; }
  // The resourceVersion of the last LIST or event applied.
  std::string LastSyncResourceVersion() const;
  // How many LISTs were done (1 after the initial sync; more after 410s).
  int64_t ListCount() const { return list_count_.load(); }
  // True when every change applied to the cache has been delivered to the
  // handlers: no notification queued and none being delivered. Tests wait for
  // it (with the cache matching the server) before they look at what the
  // handlers fed.
  bool NotificationsDelivered() const;

 private:
  struct Notification {
    enum Kind { kAdd, kUpdate, kDelete, kSynced, kReplay } kind = kAdd;
    uint64_t seq = 0;   // handlers registered after seq do not receive it
    ObjectPtr old_obj;  // kUpdate
    ObjectPtr new_obj;  // kAdd, kUpdate, kDelete
    bool flag = false;  // kAdd: is_initial_list; kDelete: final_state_unknown
    std::vector<ObjectPtr> replay;  // kReplay: the cache when the handler was added
    std::shared_ptr<const ResourceEventHandler> target;  // kReplay: the late handler
  };
  struct HandlerEntry {
    std::shared_ptr<const ResourceEventHandler> handler;
    uint64_t first_seq = 0;
  };

  void RunReflector();
  void RunDispatcher();
  // One LIST and cache replacement; errors (kGone included) are returned.
  Status ListAndReplace();
  // One WATCH until it ends: OK for a clean end, kGone when a relist is
  // needed, other errors for a backoff. *made_progress: an event arrived.
  Status WatchOnce(bool* made_progress);
  // Applies a watch event to the cache; its notification (none for BOOKMARK/ERROR).
  std::optional<Notification> ApplyEventLocked(const WatchEvent& event);
  void EnqueueLocked(Notification n);
  // Runs `run` with the handlers registered now, l released and delivering_ set (the one
  // way handlers are called, so they never overlap).
  void RunHandlersUnlocked(std::unique_lock<std::mutex>& l,
                           const std::function<void(const std::vector<HandlerEntry>&)>& run);
  // Delivers n on this thread when nothing is queued and no handler runs (releasing l
  // meanwhile), else queues it for the dispatch thread.
  void DeliverOrEnqueueLocked(std::unique_lock<std::mutex>& l, Notification n);
  void BackoffWait(Duration* backoff);
  void Deliver(const Notification& n, const std::vector<HandlerEntry>& handlers);

  Client& client_;
  const ResourceRef ref_;
  Clock& clock_;
  const InformerOptions options_;
  Indexer indexer_;

  // mu_ guards everything below, and is held while the reflector updates the
  // indexer and queues the matching notification, so the two stay in step.
  mutable std::mutex mu_;
  std::condition_variable cv_;  // notifications, stop, sync
  std::deque<Notification> pending_;
  std::vector<HandlerEntry> handlers_;
  uint64_t next_seq_ = 0;
  std::string last_rv_;
  bool started_ = false;
  bool stopped_ = false;
  bool synced_ = false;
  bool listed_once_ = false;
  bool delivering_ = false;              // a handler runs (dispatch thread, or the reflector inline)
  bool awaiting_delivery_ = false;       // the dispatch thread waits for the reflector's delivery
  WatchStream* active_watch_ = nullptr;  // for Stop()
  std::atomic<int64_t> list_count_{0};

  std::thread reflector_;
  std::thread dispatcher_;
};

// One Informer per ResourceRef, shared by every controller that asks, as
// client-go's SharedInformerFactory. The options of the first ForResource
// call for a resource win. Thread-safety: every method may be called from any
// thread; Informer references stay valid until the factory is destroyed.
class SharedInformerFactory {
 public:
  SharedInformerFactory(Client& client, Clock& clock, InformerOptions default_options = {});
  ~SharedInformerFactory();  // Shutdown()

  Informer& ForResource(const ResourceRef& ref);
  Informer& ForResource(const ResourceRef& ref, const InformerOptions& options);

  // Starts every informer not started yet (call again after adding more).
  void Start();
  // Waits (real time) until every started informer has synced.
  bool WaitForCacheSync(Duration timeout);
  // The started informers not synced yet, as "group/version/resource" (for logs).
  std::vector<std::string> Unsynced();
  void Shutdown();

 private:
  Client& client_;
  Clock& clock_;
  const InformerOptions default_options_;
  std::mutex mu_;
  std::map<ResourceRef, std::unique_ptr<Informer>> informers_;
};

}  // namespace berth::client
