// The versioned object store with watch: the only storage interface the API
// server (and everything above it) uses. It is generic over kinds and
// schema-agnostic: it stores api::Object documents, already validated and
// defaulted by the api/ layer, in their storage version.
//
// Model (what Kubernetes' registry + etcd3 storage + watch cache do together)
// ---------------------------------------------------------------------------
// Keys. An object is keyed by (GroupResource, namespace, name); the namespace
//   is "" for cluster-scoped resources. Lists and watches filter by namespace,
//   where "" means every namespace (for a cluster-scoped resource: everything).
//   Lists are ordered by (namespace, name), byte-wise, always.
//
// Revisions. One global int64 revision counter, as etcd's: every create,
//   update and delete takes the next revision (1, 2, 3, ...); an object's
//   metadata.resourceVersion is the decimal revision of its last write, and a
//   list reports the revision it was read at. Clients treat both as opaque.
//
// Metadata the store owns (as the Kubernetes generic registry stamps it):
//   create: metadata.uid (NewUid, or the non-empty one the object carries:
//           the admission pipeline's), metadata.creationTimestamp (RFC 3339 from
//           the injected Clock), metadata.generation = 1, resourceVersion;
//           deletionTimestamp / deletionGracePeriodSeconds are dropped;
//           metadata.generateName with an empty name gets
//           name = generateName + RandomNameSuffix(), re-drawn on collision.
//   update: uid, creationTimestamp, deletionTimestamp and
//           deletionGracePeriodSeconds are kept from the stored object
//           (clients cannot change them); generation is kept, +1 when any
//           top-level field other than apiVersion, kind, metadata and status
//           changed (a spec change; status-only and metadata-only updates
//           keep it, as for CRDs with a status subresource). An update that
//           changes nothing (byte-equal apart from resourceVersion) is not
//           written and returns the stored object with its old revision, as
//           etcd3's GuaranteedUpdate does.
//
// Deletion (primitives only; pod grace policy and garbage collection belong to
//   the API server):
//   - Delete with no finalizers and grace 0 (the default) removes the object:
//     a DELETED event carrying its last state at the deletion revision.
//   - Delete with finalizers present, or with a grace period > 0, marks it:
//     metadata.deletionTimestamp = now + grace, deletionGracePeriodSeconds =
//     grace, one MODIFIED event; the object stays readable.
//   - Delete of an object already marked: with grace 0 and no finalizers it
//     is removed; otherwise a shorter grace period moves deletionTimestamp
//     earlier (never later), and grace 0 sets deletionGracePeriodSeconds to 0.
//   - "Grace has elapsed" is deletionGracePeriodSeconds == 0. An Update that
//     leaves an object with deletionTimestamp set, no finalizers and
//     deletionGracePeriodSeconds == 0 removes it (the last finalizer removed:
//     a DELETED event), as the registry's ShouldDeleteDuringUpdate. An object
//     marked with grace > 0 stays until someone deletes it with grace 0 (the
//     node agent, after the containers stopped, like the kubelet).
//
// Preconditions. Update uses the object's own metadata.resourceVersion as the
//   precondition when it is non-empty (a PUT); empty means unconditional.
//   Delete takes explicit uid / resourceVersion preconditions; Update an
//   optional uid precondition. Failures are Conflicts with Kubernetes' text.
//
// Watch. Watch(resource, {namespace, predicate, from}) delivers every change
//   with revision > from, in revision order: ADDED, MODIFIED, DELETED with
//   the object at that revision (DELETED: the last state, with the deletion
//   revision as resourceVersion). from = 0 means "from now". The store keeps
//   a bounded history of events per resource (StoreOptions::history_limit
//   events and kMaxWatchHistoryBytes in all, the busiest resource giving way
//   first: store/watch_hub.h); a from older
//   than the resource's history gives kGone "too old resource version: X (Y)"
//   where Y is the oldest revision one can still watch the resource from. The predicate is applied to
//   the old and the new object, as the apiserver's cacher does: a MODIFIED
//   that takes an object out of the selection is delivered as DELETED (old
//   content, event revision), into it as ADDED. Each watcher has a bounded
//   buffer; a writer never waits for a watcher: when a watcher falls
//   behind by more than its buffer it is closed with kGone so the client
//   relists and re-watches (the apiserver closes slow watchers too).
//
// Lists. List(resource, {namespace, predicate, limit, continue}) returns the
//   matching objects and the revision they were read at. With a limit, the
//   continue token (opaque, base64 of {"rv":R,"start":"ns/name"} as the
//   apiserver's) reads later pages at the first page's revision R, so the
//   pages form one consistent list; when R has left the event history the
//   store answers kGone with the apiserver's "The provided continue parameter
//   is too old ..." text (ContinueExpiredMessage()).
//
// Errors (Kubernetes' messages; <resource> is GroupResource::String(), e.g.
//   `clusterqueues.kueue.x-k8s.io` or `pods`):
//   kNotFound       `<resource> "<name>" not found`
//   kAlreadyExists  `<resource> "<name>" already exists`
//   kConflict       `Operation cannot be fulfilled on <resource> "<name>": the object has
//                   been modified; please apply your changes to the latest version and try again`
//                   or `...: Precondition failed: UID in precondition: A, UID in object meta: B`
//   kGone           watch/list/continue from a compacted revision (messages above)
//   kBadRequest     malformed continue token
//   kInvalid        no name and no generateName; a name or namespace with '/'
//   kUnknown        `etcdserver: request is too large` (HTTP 500, no reason, as
//                   kube-apiserver relays etcd's error): a create or update whose
//                   object, as compact JSON, is larger than
//                   StoreOptions::max_object_bytes (api/limits.h
//                   kMaxStoredObjectBytes, etcd's --max-request-bytes); nothing is
//                   written
//   kUnavailable    a durable backend failed to commit: `storage commit failed: <the
//                   backend's error>` (e.g. `sqlite: COMMIT: database or disk is
//                   full`; a commit that throws is such a failure too). Nothing of
//                   the failed batch is written, readable or published, and the
//                   writes queued behind it fail the same way (they were decided on
//                   it); the revision counter does not move. The store does not
//                   stay broken: the next write tries to commit again, so writes
//                   resume by themselves once the cause is gone (space freed).
//                   Health() reports the failure until a commit or probe succeeds.
//                   Also: the store was closed (watches).
//
// Storage health (Health()). kube-apiserver's /readyz has an `etcd` check
//   (staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go serves the checks;
//   staging/src/k8s.io/apiserver/pkg/storage/storagebackend/factory/etcd3.go
//   newETCD3Check builds the etcd one). Health() is that check for this store: Ok,
//   or kUnavailable with the last commit failure while the backend cannot write.
//   While unhealthy, each call probes the backend with a small write of its own,
//   so readiness returns when the backend can write again even without clients
//   writing.
//
// Expiry (StoreOptions::ttl). Objects of a resource with a TTL are removed that
//   long after their last write (create or update; each write restarts it), as
//   kube-apiserver attaches an etcd lease of --event-ttl to every Event write
//   (pkg/registry/core/event/storage/storage.go, TTLFunc) and etcd deletes the key
//   when the lease expires: a DELETED event with the last state at the removal
//   revision, finalizers and deletion grace notwithstanding. RemoveExpired()
//   carries out the removals that are due by the clock; the API server calls it
//   every kExpirySweepInterval. A store reopened from disk starts every TTL afresh at the
//   open, as etcd's lessor extends every lease when a member becomes leader
//   (server/lease/lessor.go Promote).
//
// Thread-safety: every Store and Watcher method may be called from any
// thread. Reads never see a write before it is acknowledged (durable, for a
// durable backend). A Watcher may outlive its Store (it is then closed).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/limits.h"
#include "api/object.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::store {

// The identity of one stored object.
struct ObjectKey {
  api::GroupResource resource;
  std::string ns;  // metadata.namespace; "" for cluster-scoped objects
  std::string name;

  bool operator==(const ObjectKey&) const = default;
  auto operator<=>(const ObjectKey&) const = default;
};

// Returns the key of obj stored under resource (its metadata.namespace/name).
ObjectKey KeyOf(const api::GroupResource& resource, const api::Object& obj);

// Stored objects are shared and immutable: lists and watch events hand out
// the same document to every reader without copying.
using ObjectPtr = std::shared_ptr<const api::Object>;

// A filter the API layer builds from label and field selectors. An empty
// function matches everything. Called with store locks held: it must be
// fast, must not call back into the store, and must be pure.
using Predicate = std::function<bool(const api::Object&)>;

// Preconditions on the stored object, as metav1.Preconditions.
struct Preconditions {
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
};

struct UpdateOptions {
  // Only the uid: the resourceVersion precondition of an update is the
  // object's own metadata.resourceVersion (empty: unconditional).
  std::optional<std::string> uid;
};

struct DeleteOptions {
  Preconditions preconditions;
  // Seconds until the object may be removed; 0 (or unset) removes it now
  // unless it has finalizers. Negative values are treated as 0 (the API
  // server applies the pod rules, e.g. negative -> 1, before calling).
  std::optional<int64_t> grace_period_seconds;
};

struct DeleteResult {
  // The object as the client sees it after the call: the last state (at the
  // deletion revision) when removed, the marked object otherwise.
  api::Object object;
  // True when the object was removed from the store; false when it stays,
  // marked with deletionTimestamp (finalizers or grace period pending).
  bool removed = false;
};

struct ListOptions {
  std::string ns;              // "" = all namespaces
  Predicate predicate;         // empty = everything
  int64_t limit = 0;           // > 0: at most this many items, then a continue token
  std::string continue_token;  // from a previous page of the same list
  // 0: read the latest state. > 0: read the state at exactly this revision
  // (kGone "The resourceVersion for the provided list is too old." when it
  // has left the history; kTimeout "Too large resource version" when it is in
  // the future). Ignored when continue_token is set (the token carries it).
  int64_t revision = 0;
  // The value label `key` must have for an object to pass `predicate`, when the
  // predicate pins it (a label selector's `key=value`), else nullopt. A store
  // with an index on one of the keys it is asked about (StoreOptions::
  // indexed_labels) visits only the objects carrying that label value, so the
  // cost of a list follows its answer, not every object of the resource; the
  // predicate is applied as without it. Unset: no label is pinned.
  std::function<std::optional<std::string>(std::string_view key)> required_label;
};

struct ListResult {
  std::vector<ObjectPtr> items;  // ordered by (namespace, name)
  int64_t revision = 0;          // the list's resourceVersion
  std::string continue_token;    // "" on the last page
  // Objects after this page when a continue token is handed out and there is
  // no predicate (the count is exact then), as ListMeta.remainingItemCount.
  std::optional<int64_t> remaining_item_count;
};

enum class EventType { kAdded, kModified, kDeleted };
// "ADDED", "MODIFIED", "DELETED" as in watch event JSON.
const char* EventTypeName(EventType type);

struct WatchEvent {
  EventType type = EventType::kAdded;
  ObjectPtr object;  // its metadata.resourceVersion is `revision`
  int64_t revision = 0;
};

struct WatchOptions {
  std::string ns;       // "" = all namespaces
  Predicate predicate;  // empty = everything; see Predicate
  // Deliver changes with revision > from_revision (0 included: every change
  // since the store began, kGone once history no longer holds them); unset =
  // from now (the current revision, see Watcher::StartRevision). A watch that
  // follows a list passes the list's revision, even 0 (an empty new store):
  // "from now" would lose the writes between the list and the watch.
  std::optional<int64_t> from_revision;
  // For event loops: called when events (or the close) become available after
  // the consumer found the buffer empty, from the writer's thread and never
  // with store locks held. It should only schedule a drain (TryNext until
  // empty); it may call Stop(). Not called after Stop() returns. Events
  // replayed from history are already buffered when Watch returns, without a
  // callback: drain once right after creating the watch.
  std::function<void()> notify;
  // Buffered events before the watcher is closed with kGone; 0 = the store's
  // StoreOptions::watcher_buffer_limit. The initial replay from history is
  // not limited by it.
  size_t buffer_limit = 0;
};

// A live watch. Destroying it stops it.
class Watcher {
 public:
  virtual ~Watcher() = default;

  // Returns the next event; nullopt when none arrived within `timeout` (real
  // time: this is a thread wait, like a socket timeout; 0 = poll). After the
  // watch is closed and its buffered events are drained, returns the closing
  // Status: kGone (fell behind: relist), kUnavailable (Stop() or store closed).
  virtual StatusOr<std::optional<WatchEvent>> Next(Duration timeout) = 0;
  StatusOr<std::optional<WatchEvent>> TryNext() { return Next(Duration::zero()); }

  // The revision the watch started after (from_revision, or the current
  // revision when it is unset).
  virtual int64_t StartRevision() const = 0;
  // For bookmarks: every matching event with revision <= the returned value
  // has already been returned by Next.
  virtual int64_t ProgressRevision() const = 0;
  // Closes the watch; later Next calls return kUnavailable. Idempotent.
  virtual void Stop() = 0;
};

struct StoreOptions {
  // Watch events kept, all resources together, for watches and consistent continue pages
  // (the busiest resource gives way first; upstream's watch cache holds 100 growing to
  // 100 * 1024 per resource while younger than 75 s).
  size_t history_limit = 10000;
  // Default per-watcher buffer (WatchOptions::buffer_limit).
  size_t watcher_buffer_limit = 10000;
  // The largest object a create or update may store, as compact JSON (0: no limit).
  size_t max_object_bytes = api::kMaxStoredObjectBytes;
  // Resources whose objects expire this long after their last write (see
  // "Expiry"); absent or <= 0: never. The server sets {"", "events"} from
  // --event-ttl (kDefaultEventTtl).
  std::map<api::GroupResource, Duration> ttl;
  // Label keys whose values are indexed for every resource (see
  // ListOptions::required_label): the ones controllers select their children
  // by, so that a controller's list of one job's pods does not evaluate its
  // selector on every pod ever created. kube-apiserver's watch cache indexes
  // pods by spec.nodeName the same way (pkg/registry/core/pod/storage); berth
  // indexes owner labels because its controllers list live from the store.
  std::vector<std::string> indexed_labels = {
      "batch.kubernetes.io/controller-uid",  // a Job's pods (the Job controller's selector)
      "jobset.sigs.k8s.io/jobset-name",      // a JobSet's Jobs
      "training.kubeflow.org/job-name",      // a PyTorchJob's pods and Services
  };
};

// kube-apiserver's --event-ttl default, 1h (cmd/kube-apiserver/app/options/options.go,
// EventTTL: 1 * time.Hour).
inline constexpr Duration kDefaultEventTtl = std::chrono::hours(1);
// The resource --event-ttl applies to: core/v1 Events (berth serves no events.k8s.io).
inline const api::GroupResource kEventsResource{"", "events"};
// At most this many expired objects are removed by one RemoveExpired call (one
// commit); the rest wait for the next call. Upstream: etcd's lessor revokes at most
// leaseRevokeRate / 2 = 500 expired leases per run of revokeExpiredLeases, every
// 500 ms (server/lease/lessor.go, leaseRevokeRate 1000 per second).
inline constexpr size_t kMaxExpiriesPerSweep = 500;
// How often the API server calls RemoveExpired: etcd's lessor runLoop interval, 500 ms.
inline constexpr Duration kExpirySweepInterval = std::chrono::milliseconds(500);

// The result of DeleteShared: DeleteResult with the stored object shared.
struct SharedDeleteResult {
  ObjectPtr object;  // never null on success; see DeleteResult::object
  bool removed = false;
};

// The store interface. Backends: MemoryStore (memory_store.h) and SqliteStore
// (sqlite_store.h), both built on CachedStore (cached_store.h).
//
// Shared and value variants. Every read/write that returns an object has two
// forms with the same semantics, errors and revisions:
//   - the *Shared form returns the stored, immutable document itself
//     (ObjectPtr: the same pointer later Gets, lists and watch events hand
//     out), without copying it. This is the form for hot paths (the API
//     server serializes the response straight from it).
//   - the value form (Get, Create, Update, Delete, GuaranteedUpdate) is a thin
//     wrapper returning a deep copy the caller may modify.
// A returned ObjectPtr stays valid (and unchanged) however the store changes
// later; it never reflects later writes.
class Store {
 public:
  virtual ~Store() = default;

  // The stored object, or kNotFound.
  virtual StatusOr<ObjectPtr> GetShared(const ObjectKey& key) = 0;
  StatusOr<api::Object> Get(const ObjectKey& key);

  virtual StatusOr<ListResult> List(const api::GroupResource& resource, const ListOptions& options) = 0;

  // Stores a new object (see "Metadata the store owns") and returns it as
  // stored. kAlreadyExists when the key is taken. obj is consumed (moved into
  // the store when the write succeeds).
  virtual StatusOr<ObjectPtr> CreateShared(const api::GroupResource& resource, api::Object obj) = 0;
  StatusOr<api::Object> Create(const api::GroupResource& resource, api::Object obj);

  // Replaces the stored object with obj (same namespace/name) and returns it
  // as stored (or, when this update finishes a deletion, the removed object at
  // its deletion revision; for an update that changes nothing, the stored
  // object at its old revision). kNotFound, kConflict. obj is consumed.
  virtual StatusOr<ObjectPtr> UpdateShared(const api::GroupResource& resource, api::Object obj,
                                           const UpdateOptions& options = {}) = 0;
  StatusOr<api::Object> Update(const api::GroupResource& resource, api::Object obj, const UpdateOptions& options = {});

  virtual StatusOr<SharedDeleteResult> DeleteShared(const ObjectKey& key, const DeleteOptions& options = {}) = 0;
  StatusOr<DeleteResult> Delete(const ObjectKey& key, const DeleteOptions& options = {});

  virtual StatusOr<std::unique_ptr<Watcher>> Watch(const api::GroupResource& resource, const WatchOptions& options) = 0;

  // The revision of the last acknowledged write (0 for an empty new store).
  virtual int64_t CurrentRevision() = 0;

  // Ok, or kUnavailable with the storage failure while the backend cannot
  // commit (see "Storage health"). May write (a probe) while unhealthy.
  virtual Status Health() = 0;

  // Removes every object whose TTL has elapsed by the clock (see "Expiry"), at
  // most kMaxExpiriesPerSweep per call, in one commit; returns how many it
  // removed, or the commit's kUnavailable (nothing removed).
  virtual StatusOr<size_t> RemoveExpired() = 0;

  // Read-modify-write with optimistic concurrency, as etcd3's
  // GuaranteedUpdate: reads the object, calls fn(current) for the desired
  // object and updates it at the revision that was read; on a Conflict from a
  // concurrent writer, re-reads and calls fn again. fn's error is returned
  // as is (fn may be called several times; it must not have side effects).
  // Returns kNotFound when the object does not exist, kConflict when `uid`
  // does not match. fn receives the stored object itself (no copy); it must
  // not keep the reference past its return.
  using UpdateFn = std::function<StatusOr<api::Object>(const api::Object&)>;
  StatusOr<ObjectPtr> GuaranteedUpdateShared(const ObjectKey& key, const UpdateFn& fn,
                                             const UpdateOptions& options = {});
  StatusOr<api::Object> GuaranteedUpdate(const ObjectKey& key, const UpdateFn& fn, const UpdateOptions& options = {});
};

// Kubernetes' error texts, shared by every backend.
Status NotFound(const ObjectKey& key);
Status AlreadyExists(const ObjectKey& key);
Status ConflictModified(const ObjectKey& key);
// "Precondition failed: UID in precondition: A, UID in object meta: B" (what = "UID"),
// or the ResourceVersion variant (what = "ResourceVersion").
Status ConflictPrecondition(const ObjectKey& key, const char* what, const std::string& wanted,
                            const std::string& actual);
// "too old resource version: X (Y)": watch from X while the oldest watchable revision is Y.
Status TooOldResourceVersion(int64_t requested, int64_t oldest);
// The apiserver's 410 text for a continue token whose revision was compacted.
const std::string& ContinueExpiredMessage();

}  // namespace berth::store
