// GarbageCollector: cascading deletion through metadata.ownerReferences and
// namespace deletion, as kube-controller-manager's garbagecollector and
// namespace controllers do it.
//
// Where it lives and why: it is part of the API server (apiserver/) and reads
// and writes only through the store/ interface (List, Watch, Get,
// GuaranteedUpdate) plus the Deleter the REST DELETE handler uses
// (deletion.h). Upstream runs it in the controller manager against the API;
// in berth the server is one binary and every kind is generic JSON, so the
// collector is the API server's own background task: it starts and stops with
// the server, needs no client, no informers and no per-kind code, and a
// cascaded deletion is exactly the deletion a client would have asked for.
// It does not depend on controllers/ (which sits below apiserver/ and talks to
// the API through client/).
//
// What it does (upstream's semantics; the object graph is keyed by uid):
//   - Background: when an owner is gone, each dependent whose owners are all
//     gone (a Get by the ownerReference's kind and name finds nothing, or an
//     object with another uid) is deleted with the Background policy; a
//     dependent that still has a live owner only loses the dangling
//     ownerReferences.
//   - Foreground: an owner being deleted with the finalizer
//     "foregroundDeletion" has its dependents deleted (each with the
//     Foreground policy, so the cascade goes depth first); the finalizer is
//     removed, and the owner goes away, once no dependent is left. (Upstream
//     waits only for dependents with blockOwnerDeletion=true; berth waits for
//     all of them.)
//   - Orphan: an owner being deleted with the finalizer "orphan" has its uid
//     removed from its dependents' ownerReferences, then the finalizer.
//   - Namespaces: a Namespace being deleted with the finalizer "kubernetes"
//     has every object in it deleted (default policy; Pods with their grace
//     period, so they wait for their node agent); the finalizer is removed
//     once the namespace is empty.
//   - Events (core/v1, and so events.k8s.io/v1, a view of them) are ignored
//     (deletion.h GarbageCollectorIgnores, which also keeps the Deleter from giving
//     them orphan/foreground finalizers nobody would remove), as
//     upstream's DefaultIgnoredResources (pkg/controller/garbagecollector/
//     garbagecollector.go): not watched, not in the graph, never collected through
//     ownerReferences. A namespace's deletion still deletes them; one held by its
//     finalizers is looked at again on Recheck().
//
// Model: one watch per resource of the registry but Events (from the revision of
// an initial list), a uid-keyed index of owners and dependents, and a queue of
// work items (deduplicated). A worker thread drains the watches that signalled
// events since their last drain, and work items; tests call Sync() instead, which does the same on the caller's
// thread until nothing is left, so no test depends on timing. A watch the
// store closes (fell behind) is re-listed and re-opened. A failed action is
// retried (kRetries times, then logged and dropped until the object changes).
//
// Thread-safety: Start/Stop/Sync from one controlling thread; never Sync while
// the worker thread runs.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/registry.h"
#include "apiserver/deletion.h"
#include "store/store.h"

namespace berth::apiserver {

class GarbageCollector {
 public:
  GarbageCollector(const api::Registry& registry, store::Store& store);
  ~GarbageCollector();  // Stop()s.
  GarbageCollector(const GarbageCollector&) = delete;
  GarbageCollector& operator=(const GarbageCollector&) = delete;

  // Lists every resource and opens the watches (without a thread).
  Status Open();
  // Open()s if needed and starts the worker thread.
  Status Start();
  // Stops the worker thread and the watches. Idempotent.
  void Stop();
  // Processes watch events and work items on this thread until there are
  // none (for tests). Returns the number of actions taken.
  int Sync();

  // What the collector holds, for leak checks: graph nodes are the stored objects it
  // watches; the rest go with the objects they are about. From the thread that runs Sync.
  struct Held {
    size_t nodes = 0;                   // objects in the graph
    size_t owners_with_dependents = 0;  // owner uids with dependents
    size_t failures = 0;                // work items that failed and wait for a retry
    size_t terminating_namespaces = 0;
    size_t awaiting_unwatched = 0;  // terminating namespaces held by ignored objects
    bool operator==(const Held&) const = default;
  };
  Held HeldPerObject() const;
  // Has the namespaces whose deletion waits for objects of an ignored resource (an
  // Event with finalizers) looked at again: no watch says when those go. The API
  // server calls it on its housekeeping tick. Any thread.
  void Recheck();

 private:
  struct Owner {
    std::string uid, api_version, kind, name;
  };
  struct Node {
    store::ObjectKey key;
    std::vector<Owner> owners;
  };
  enum class WorkType { kAttemptToDelete, kProcessDeleting };
  struct WorkItem {
    WorkType type;
    std::string uid;
    auto operator<=>(const WorkItem&) const = default;
  };
  struct ResourceWatch;

  Status ListAndWatch(ResourceWatch* rw);
  // Drains the watches that signalled into the index; true if anything happened.
  bool DrainEvents();
  void Observe(const api::GroupResource& resource, const api::Object& obj);
  void Forget(const api::Object& obj);
  void Enqueue(WorkType type, const std::string& uid);
  // Runs one work item; true if it took an action (a write).
  bool Process(const WorkItem& item);
  StatusOr<bool> AttemptToDelete(const Node& node);
  StatusOr<bool> ProcessDeleting(const Node& node);
  StatusOr<bool> ProcessNamespace(const api::Object& ns);
  // The owner object of a reference from `dependent_ns`, or nullopt when absent;
  // kNotFound-free errors (unknown kind) come back as errors.
  StatusOr<std::optional<api::Object>> GetOwner(const std::string& dependent_ns, const Owner& owner);
  StatusOr<bool> RemoveFinalizer(const store::ObjectKey& key, const std::string& uid, std::string_view finalizer);
  void Loop();
  void Notify();

  const api::Registry& registry_;
  store::Store& store_;
  Deleter deleter_;
  std::vector<std::unique_ptr<ResourceWatch>> watches_;
  // Index (owned by whoever runs Sync/Loop).
  std::map<std::string, Node> nodes_;                              // uid -> node
  std::map<std::string, std::set<std::string>> dependents_;       // owner uid -> dependent uids
  std::set<std::string> terminating_namespaces_;                  // uids
  std::set<std::string> awaiting_unwatched_;                      // terminating namespace uids held by ignored objects
  std::deque<WorkItem> queue_;
  std::set<WorkItem> queued_;
  std::map<WorkItem, int> failures_;
  bool opened_ = false;

  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ = false;
  bool stopping_ = false;
  std::atomic<bool> recheck_{false};       // Recheck() called since the last Sync
  std::atomic<bool> awaiting_any_{false};  // !awaiting_unwatched_.empty(), for Recheck()
  std::thread thread_;
};

}  // namespace berth::apiserver
