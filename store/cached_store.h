// CachedStore: the one Store implementation every local backend shares. It
// keeps the current objects in memory (ordered maps per resource), applies
// the metadata rules (object_meta.h), serves Get/List/Watch from memory and
// the watch history (watch_hub.h), and hands each batch of writes to an
// optional Persistence before making it visible. MemoryStore is CachedStore
// without Persistence; SqliteStore is CachedStore over SQLite.
//
// Write path (group commit). A writer takes the store mutex, checks its
// preconditions against the newest state (including writes still being
// committed), takes the next revision and queues its write. Without
// Persistence the write is applied at once. With Persistence the first queued
// writer that finds no commit in flight becomes the leader: it takes every
// queued write, releases the mutex, commits them in one Persistence::Commit
// (one transaction, one fsync), then applies them to the readable state,
// publishes the events and wakes the others; writers that queued meanwhile
// form the next batch (so with N closed-loop writers and a slow fsync, batches
// alternate at about N/2 writes each). A writer returns only after its write is committed, so
// reads (which see only committed state) never see an unacknowledged write.
// When a Commit fails (returns an error or throws), that batch and every write
// queued behind it (decided on top of it) fail with kUnavailable: none of them
// becomes readable or emits an event, the revisions they took are handed out
// again, and the commit slot is free for the next writer, which tries again.
// A Persistence must leave its durable state as it was when Commit fails (all
// or nothing), so the readable state, the watch history and the revision
// counter always equal what is durable. Health() keeps the failure until a
// commit succeeds; while it is set, Health() probes the Persistence.
//
// Expiry (StoreOptions::ttl): an ordered index (expiry time -> key) of the
// committed objects of TTL resources, kept with every applied write, so
// RemoveExpired costs O(log n) per expired object and nothing for the others.
//
// List at an older revision (continue pages, ListOptions::revision) rebuilds
// the state at that revision from the current objects and the event history
// (each later event undone, newest first); hence kGone once the history no
// longer reaches back that far.
//
// Thread-safety: fully thread-safe (see store.h).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "store/store.h"
#include "store/watch_hub.h"

namespace berth::store {

// Durable backing of a CachedStore.
class Persistence {
 public:
  // One write: the object as stored at `revision`, or null for a removal.
  struct Mutation {
    const ObjectKey* key;
    int64_t revision;
    const api::Object* object;
  };
  virtual ~Persistence() = default;
  // Makes the batch (ascending revisions) and the new revision counter
  // (the last mutation's revision) durable, atomically: all or nothing.
  // Called by one thread at a time, without store locks.
  virtual Status Commit(const std::vector<Mutation>& batch) = 0;
  // Checks that a write can be made durable now (a small write of the
  // backend's own that changes no object), for Store::Health while a commit
  // has failed. Same calling rules as Commit.
  virtual Status Probe() = 0;
};

// The contents a CachedStore starts from (what a backend recovered).
struct RecoveredState {
  int64_t revision = 0;
  std::vector<std::pair<ObjectKey, ObjectPtr>> objects;
};

class CachedStore : public Store {
 public:
  // persistence may be null (memory only). The event history starts empty,
  // so watches from before initial.revision get kGone.
  CachedStore(Clock& clock, const StoreOptions& options, std::unique_ptr<Persistence> persistence,
              RecoveredState initial);
  ~CachedStore() override;

  CachedStore(const CachedStore&) = delete;
  CachedStore& operator=(const CachedStore&) = delete;

  StatusOr<ObjectPtr> GetShared(const ObjectKey& key) override;
  StatusOr<ListResult> List(const api::GroupResource& resource, const ListOptions& options) override;
  StatusOr<ObjectPtr> CreateShared(const api::GroupResource& resource, api::Object obj) override;
  StatusOr<ObjectPtr> UpdateShared(const api::GroupResource& resource, api::Object obj,
                                   const UpdateOptions& options) override;
  StatusOr<SharedDeleteResult> DeleteShared(const ObjectKey& key, const DeleteOptions& options) override;
  StatusOr<std::unique_ptr<Watcher>> Watch(const api::GroupResource& resource, const WatchOptions& options) override;
  int64_t CurrentRevision() override;
  Status Health() override;
  StatusOr<size_t> RemoveExpired() override;

 private:
  // (namespace, name) -> object; std::map keeps the list order.
  using NameKey = std::pair<std::string, std::string>;
  using ResourceMap = std::map<NameKey, ObjectPtr>;

  // The outcome a write decided on, from the current object.
  struct Change {
    enum class Kind { kNone, kPut, kRemove };
    Kind kind = Kind::kNone;
    api::Object object;  // kPut: the new object (resourceVersion set by Write)
  };
  using Decide = std::function<StatusOr<Change>(const api::Object* current)>;
  struct Written {
    ObjectPtr object;  // as stored, or the removed object at the deletion revision
    bool removed = false;
  };

  // kUnknown "etcdserver: request is too large" when obj is larger than
  // StoreOptions::max_object_bytes (store.h).
  Status CheckObjectSize(const api::Object& obj) const;
  // Runs decide against the newest state of key under the write lock, then
  // records and (durably) commits the change.
  StatusOr<Written> Write(const ObjectKey& key, const Decide& decide);
  // Group commit: returns once `revision`, queued in `epoch`, is committed
  // (leading a commit when none is in flight), or the failure of its commit.
  Status WaitCommittedLocked(std::unique_lock<std::mutex>& lock, int64_t revision, uint64_t epoch);
  // Persistence::Commit of batch, an exception turned into a Status.
  Status CommitBatch(const std::vector<HistoryEvent>& batch);
  // Applies committed events to the readable state and the expiry index and
  // publishes them.
  WatchHub::Published ApplyLocked(std::vector<HistoryEvent> events) noexcept;
  // Re-indexes key's expiry after a write (`removed`: no entry).
  void IndexExpiryLocked(const ObjectKey& key, bool removed, Time now);
  // Moves key in label_index_ from the indexed label values of `before` to those
  // of `after` (either may be null).
  void IndexLabelsLocked(const ObjectKey& key, const api::Object* before, const api::Object* after);
  // How many objects of `resource` (in namespace `ns`; "" = all) existed at the
  // revision whose differences from now `overlay` holds (key -> object then, null:
  // absent then).
  int64_t ScopeSizeLocked(const api::GroupResource& resource, const std::string& ns,
                          const std::map<NameKey, ObjectPtr>& overlay) const;
  // The objects of `current` whose label `key` is `value`, from label_index_.
  ResourceMap LabelledLocked(const api::GroupResource& resource, const ResourceMap& current, const std::string& key,
                             const std::string& value) const;
  // The newest version of key, including queued writes; sets *pending_revision
  // to the revision of a queued write it came from (0 if committed).
  const ObjectPtr* LookupLocked(const ObjectKey& key, int64_t* pending_revision) const;
  const ObjectPtr* CommittedLocked(const ObjectKey& key) const;

  Clock& clock_;
  const size_t max_object_bytes_;
  const std::unique_ptr<Persistence> persistence_;
  const std::shared_ptr<WatchHub> hub_;

  mutable std::mutex mu_;
  std::condition_variable committed_cv_;
  std::map<api::GroupResource, ResourceMap> objects_;  // committed, readable state
  // StoreOptions::indexed_labels, and for each (resource, label key, value) the
  // committed objects carrying it.
  const std::vector<std::string> indexed_labels_;
  // Committed objects per resource and namespace (ScopeSizeLocked).
  std::map<api::GroupResource, std::map<std::string, int64_t>> ns_counts_;
  std::map<std::tuple<api::GroupResource, std::string, std::string>, std::set<NameKey>> label_index_;
  int64_t committed_revision_ = 0;  // last readable revision
  int64_t assigned_revision_ = 0;   // last revision handed to a writer
  // Writes queued or being committed (durable backends only): key -> {revision, object or null}.
  std::map<ObjectKey, std::pair<int64_t, ObjectPtr>> pending_;
  std::vector<HistoryEvent> queue_;  // queued, not yet taken by a leader
  bool committing_ = false;          // a Commit or Probe is running (without mu_)
  // Bumped by every failed commit: a write queued in an older epoch failed
  // with epoch_failure_.
  uint64_t epoch_ = 0;
  Status epoch_failure_;
  Status health_;  // the last commit failure; Ok after a successful commit or probe

  // Expiry: resource -> TTL, and the index of committed objects by expiry.
  const std::map<api::GroupResource, Duration> ttl_;
  std::set<std::pair<Time, ObjectKey>> expiry_order_;
  std::map<ObjectKey, Time> expiry_of_;
};

}  // namespace berth::store
