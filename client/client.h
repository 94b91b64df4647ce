// Client: the API client interface every controller, the CLI and the node
// agents use, as client-go's dynamic client (k8s.io/client-go/dynamic) does
// for unstructured objects. It is generic over kinds: a request names the
// resource by group, version and plural resource name (GroupVersionResource)
// plus a namespace (ResourceRef), and objects are api::Object JSON documents.
//
// Implementations:
//   - HttpClient (client/http_client.h): HTTP/1.1 against a remote API
//     server (another berth server, or a kube-apiserver with the CRDs).
//   - the in-process client of apiserver/ (written there), which calls the
//     API server's transport-independent request handling directly.
//   - FakeClient (client/testing/fake_client.h): a test double over a
//     store::MemoryStore.
// Nothing above this interface may assume which one it talks to.
//
// Requests and their kube-apiserver counterparts (paths as built by
// HttpClient; `{ns}` only for a namespaced ResourceRef):
//   Get           GET    .../namespaces/{ns}/{resource}/{name}
//   List          GET    .../{resource}?labelSelector&fieldSelector&limit&continue&resourceVersion
//   Create        POST   .../{resource}                         (201/200 -> object)
//   Update        PUT    .../{resource}/{name}                  (409 on a stale resourceVersion)
//   UpdateStatus  PUT    .../{resource}/{name}/status
//   Patch         PATCH  .../{resource}/{name}[/{subresource}]  Content-Type by PatchType
//   Delete        DELETE .../{resource}/{name}                  body: meta.k8s.io/v1 DeleteOptions
//   Watch         GET    .../{resource}?watch=true&resourceVersion&allowWatchBookmarks&timeoutSeconds
// where `...` is /api/v1 for the core group and /apis/{group}/{version}
// otherwise.
//
// Errors: every failure is a berth::Status whose code is decoded from the
// server's metav1.Status body (reason NotFound -> kNotFound, Conflict ->
// kConflict, AlreadyExists -> kAlreadyExists, Expired/Gone -> kGone,
// Invalid -> kInvalid with one StatusCause per details.causes entry, ...; see
// client/api_status.h). Transport failures (connection refused, reset,
// timeout) are kUnavailable / kTimeout with the transport's message.
//
// Thread-safety: every Client method may be called from many threads at once
// (controllers call one shared Client from all their workers). A WatchStream
// is used by one consumer thread, except Stop(), which any thread may call.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::client {

struct ResourceRef;

// An object as readers share it: immutable, never copied on the way (the
// in-process client hands over the API server's stored object itself).
using ObjectPtr = std::shared_ptr<const api::Object>;

// A resource type, e.g. {"kueue.x-k8s.io", "v1beta2", "clusterqueues"} or
// {"", "v1", "pods"} (core group). `resource` is the lower-case plural.
struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;

  // The same resource in namespace ns (client-go's Resource(gvr).Namespace(ns)).
  ResourceRef Namespace(std::string ns) const;
  // The store key of this resource type (the version is not part of it).
  api::GroupResource GroupResource() const { return {group, resource}; }
  // "clusterqueues.v1beta2.kueue.x-k8s.io", or "v1/pods" for the core group,
  // as schema.GroupVersionResource.String() prints it.
  std::string String() const;

  bool operator==(const GroupVersionResource&) const = default;
  auto operator<=>(const GroupVersionResource&) const = default;
};

// A resource type plus a namespace: "" means cluster-scoped resources, or,
// for List and Watch of a namespaced resource, all namespaces.
struct ResourceRef {
  GroupVersionResource gvr;
  std::string ns;

  ResourceRef() = default;
  ResourceRef(GroupVersionResource g, std::string n = "")  // NOLINT: implicit on purpose
      : gvr(std::move(g)), ns(std::move(n)) {}

  bool operator==(const ResourceRef&) const = default;
  auto operator<=>(const ResourceRef&) const = default;
};

inline ResourceRef GroupVersionResource::Namespace(std::string ns) const { return ResourceRef(*this, std::move(ns)); }

// ---------------------------------------------------------------------------
// Options, as metav1.GetOptions / ListOptions / CreateOptions / UpdateOptions /
// PatchOptions / DeleteOptions. Empty strings and nullopt mean "not sent".

struct GetOptions {
  // "" = the latest state (a quorum read); "0" = any state the server has cached.
  std::string resource_version;
};

struct ListOptions {
  std::string label_selector;  // labels.Parse syntax: "app=x,tier!=db,env in (a,b),!gpu"
  std::string field_selector;  // fields.ParseSelector syntax: "metadata.name=x,status.phase!=Failed"
  int64_t limit = 0;           // > 0: page size; the result then carries a continue token
  std::string continue_token;  // from a previous page of the same list
  std::string resource_version;  // "" = latest; "0" = any cached state; "N" = as of N
};

template <typename Item>
struct BasicObjectList {
  std::vector<Item> items;        // in the server's order ((namespace, name) for berth)
  std::string resource_version;  // the list's metadata.resourceVersion
  std::string continue_token;    // metadata.continue; "" on the last page
  std::optional<int64_t> remaining_item_count;
};
// List's answer: items the caller owns (copies).
using ObjectList = BasicObjectList<api::Object>;
// ListShared's answer: items shared and immutable, never null (see WatchEvent).
using SharedObjectList = BasicObjectList<ObjectPtr>;

// Common write options.
struct WriteOptions {
  bool dry_run = false;          // dryRun=All: validate and default, store nothing
  std::string field_manager;     // fieldManager (required by server-side apply)
  std::string field_validation;  // fieldValidation: "" (server default), Ignore, Warn, Strict
};
using CreateOptions = WriteOptions;
using UpdateOptions = WriteOptions;

// The PATCH Content-Types kube-apiserver accepts.
enum class PatchType {
  kJson,            // application/json-patch+json (RFC 6902), body is a JSON array
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
  kApply,           // application/apply-patch+yaml (server-side apply; field_manager required)
};
// The Content-Type for a patch type.
std::string_view PatchContentType(PatchType type);

struct PatchOptions : WriteOptions {
  // Server-side apply only: take ownership of fields other managers own
  // (force=true) instead of failing with a Conflict.
  std::optional<bool> force;
  // "" for the main resource, "status" for the status subresource.
  std::string subresource;
};

// metav1.DeletionPropagation.
enum class PropagationPolicy { kOrphan, kBackground, kForeground };
// "Orphan", "Background", "Foreground".
std::string_view PropagationPolicyName(PropagationPolicy policy);

struct Preconditions {
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
};

struct DeleteOptions {
  // Seconds before the object is removed (0 = now); unset = the kind's default
  // (a Pod's spec.terminationGracePeriodSeconds, 0 for other kinds).
  std::optional<int64_t> grace_period_seconds;
  // Unset = the kind's default (Background for most kinds).
  std::optional<PropagationPolicy> propagation_policy;
  Preconditions preconditions;  // failures are kConflict
  bool dry_run = false;
};
// The meta.k8s.io/v1 DeleteOptions document for a DELETE body, e.g.
// {"apiVersion":"v1","kind":"DeleteOptions","gracePeriodSeconds":0,
//  "preconditions":{"uid":"..."},"propagationPolicy":"Foreground"}.
api::Object DeleteOptionsToJson(const DeleteOptions& options);

struct WatchOptions {
  // Deliver changes after this resourceVersion. "" or "0": start with a
  // synthetic ADDED event per current object, then changes.
  std::string resource_version;
  std::string label_selector;
  std::string field_selector;
  // The server ends the watch (cleanly) after this many seconds; unset = the
  // server's default.
  std::optional<int64_t> timeout_seconds;
  // Ask for BOOKMARK events (progress notifications carrying only
  // metadata.resourceVersion); servers send them at their discretion.
  bool allow_watch_bookmarks = false;
};

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };
// "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR" as on the wire.
std::string_view WatchEventTypeName(WatchEventType type);
// Parses the wire name; nullopt for anything else.
std::optional<WatchEventType> ParseWatchEventType(std::string_view name);

// One watch event, as metav1.WatchEvent.
//   ADDED/MODIFIED: the object at the event's resourceVersion.
//   DELETED:        the last state of the object (resourceVersion = deletion).
//   BOOKMARK:       only apiVersion, kind and metadata.resourceVersion.
//   ERROR:          `object` is a metav1.Status document and `error` its
//                   decoded Status, e.g. kGone "too old resource version: 5 (120)"
//                   when the requested resourceVersion has been compacted. The
//                   stream normally ends after an ERROR event.
// `object` is never null in an event a WatchStream returns. It is shared and
// immutable: over the in-process client it is the API server's stored object
// itself (the same pointer its store, watch history and other watchers hold),
// so an informer caching it costs no second decoded copy; over HTTP it is the
// decoded line. A consumer that needs to change it copies it.
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  ObjectPtr object;
  Status error;  // OK unless type == kError
};

// A live watch, as client-go's watch.Interface.
class WatchStream {
 public:
  virtual ~WatchStream() = default;  // stops the watch

  // The next event; nullopt when none arrived within `timeout` (real time: a
  // thread wait, like a socket read timeout; zero = poll). Once the stream has
  // ended (server closed it, its timeoutSeconds elapsed, Stop() was called, or
  // the transport failed) and every received event was returned, returns a
  // non-OK Status: kUnavailable "watch closed" for a normal end, or the
  // transport error. Callers then re-watch from the last resourceVersion seen.
  virtual StatusOr<std::optional<WatchEvent>> Next(Duration timeout) = 0;

  // Ends the watch; a consumer blocked in Next returns promptly. Idempotent;
  // callable from any thread.
  virtual void Stop() = 0;
};

// The client interface. See the file comment for semantics and errors.
class Client {
 public:
  virtual ~Client() = default;

  virtual StatusOr<api::Object> Get(const ResourceRef& ref, const std::string& name,
                                    const GetOptions& options = {}) = 0;

  virtual StatusOr<ObjectList> List(const ResourceRef& ref, const ListOptions& options = {}) = 0;

  // List with the items shared instead of copied: over the in-process client
  // the API server's stored objects themselves (as WatchEvent::object), so an
  // informer's cache holds no second decoded copy of what the server holds.
  // Same request, errors and paging as List. Default: List, each item moved
  // into an ObjectPtr of its own.
  virtual StatusOr<SharedObjectList> ListShared(const ResourceRef& ref, const ListOptions& options = {});

  // Creates obj in ref.ns (obj's metadata.namespace may be empty; when set it
  // must equal ref.ns). Returns the object as stored.
  virtual StatusOr<api::Object> Create(const ResourceRef& ref, const api::Object& obj,
                                       const CreateOptions& options = {}) = 0;

  // Replaces the object named by obj's metadata.name. A non-empty
  // metadata.resourceVersion is a precondition (kConflict when stale).
  virtual StatusOr<api::Object> Update(const ResourceRef& ref, const api::Object& obj,
                                       const UpdateOptions& options = {}) = 0;

  // Replaces the status subresource of obj's object (spec changes ignored).
  virtual StatusOr<api::Object> UpdateStatus(const ResourceRef& ref, const api::Object& obj,
                                             const UpdateOptions& options = {}) = 0;

  // Patches `name` with `patch` (JSON text; YAML or JSON for kApply).
  virtual StatusOr<api::Object> Patch(const ResourceRef& ref, const std::string& name,
                                      PatchType type, std::string_view patch,
                                      const PatchOptions& options = {}) = 0;

  // POST pods/{pod}/binding with a core/v1 Binding to `node` (kube-apiserver's BindingREST):
  // in one write the pod gets spec.nodeName and condition PodScheduled=True. kConflict when
  // the pod is already bound, being deleted or still gated. `pods` is the pods resource in
  // the pod's namespace. The base implementation answers kMethodNotAllowed (a client that
  // cannot reach the subresource).
  virtual Status Bind(const ResourceRef& pods, const std::string& pod, const std::string& node,
                      const CreateOptions& options = {});

  // Deletes (or, with finalizers or a grace period, marks for deletion) `name`.
  virtual Status Delete(const ResourceRef& ref, const std::string& name,
                        const DeleteOptions& options = {}) = 0;

  // Starts a watch. Returns an error only when the request itself fails (bad
  // selector, transport); a resourceVersion that is too old is reported as
  // kube-apiserver does, by an ERROR event carrying a 410 Expired Status.
  virtual StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef& ref,
                                                       const WatchOptions& options = {}) = 0;
};

}  // namespace berth::client
