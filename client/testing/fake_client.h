// FakeClient: a test double of client::Client over a store::MemoryStore, for
// unit tests of informers and controllers. It is deliberately simple: it
// applies no schema, validation, defaulting, admission, table conversion,
// garbage collection or pod grace rules, and stores every object as given
// (the version in the GroupVersionResource is ignored; objects are keyed by
// group/resource). What it does do, it does with the store's semantics:
// resourceVersions, uid/creationTimestamp/generation, Conflicts on a stale
// resourceVersion, preconditions, finalizers and graceful marking on delete,
// continue tokens, and watches with a bounded history (410 Gone when a watch
// starts from a compacted resourceVersion, delivered as an ERROR event as
// kube-apiserver does).
//
// Differences from a real server, on purpose:
//   - Label and field selectors are evaluated with api/selectors.h, but any
//     field path is accepted (a server allows only each kind's selectable
//     fields).
//   - Patch supports kMerge and kJson (api/patch.h); kStrategicMerge and
//     kApply are kUnsupportedMedia. dry_run is ignored. Update writes the whole object
//     (no status subresource split); UpdateStatus copies only .status onto
//     the stored object (with the given resourceVersion as precondition).
//   - Watch timeout_seconds and allow_watch_bookmarks are ignored (no
//     bookmarks are sent).
//
// Test hooks: CloseWatches() ends every open watch as a server would after
// timeoutSeconds; ActiveWatches() counts the watch streams opened since the
// last CloseWatches() that are still alive; InjectError(verb, status) makes the next call of that verb
// fail once; CallCount(verb) counts calls ("get", "list", "create", "update",
// "updatestatus", "patch", "delete", "watch", "bind"; "updatestatus <namespace>/<name>" counts
// the status writes tried on one object, conflicts included); AfterUpdateStatus(fn) calls fn with each
// object an UpdateStatus stored, on the caller's thread, before the call returns (no lock
// held: fn may call the client), so a test can act at the exact moment a write lands;
// BeforeWrite(fn) calls fn at the start of every create, update, updatestatus, patch and
// delete (no lock held: fn may block to hold the caller up); BeforeWatchEvent(fn) calls fn with
// every event a watch stream is about to return, on the watcher's thread (no lock held: fn may
// block to hold that watcher, an informer say, behind the store).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/client.h"
#include "store/memory_store.h"

namespace berth::client::testing {

class FakeClient final : public Client {
 public:
  explicit FakeClient(Clock& clock, const store::StoreOptions& options = {});
  ~FakeClient() override;

  StatusOr<api::Object> Get(const ResourceRef& ref, const std::string& name,
                            const GetOptions& options = {}) override;
  StatusOr<ObjectList> List(const ResourceRef& ref, const ListOptions& options = {}) override;
  StatusOr<api::Object> Create(const ResourceRef& ref, const api::Object& obj,
                               const CreateOptions& options = {}) override;
  StatusOr<api::Object> Update(const ResourceRef& ref, const api::Object& obj,
                               const UpdateOptions& options = {}) override;
  StatusOr<api::Object> UpdateStatus(const ResourceRef& ref, const api::Object& obj,
                                     const UpdateOptions& options = {}) override;
  StatusOr<api::Object> Patch(const ResourceRef& ref, const std::string& name, PatchType type,
                              std::string_view patch, const PatchOptions& options = {}) override;
  // Sets spec.nodeName and PodScheduled=True (the FakeClient's clock) in one update;
  // kConflict when already bound. Counted as "bind".
  Status Bind(const ResourceRef& pods, const std::string& pod, const std::string& node,
              const CreateOptions& options = {}) override;
  Status Delete(const ResourceRef& ref, const std::string& name,
                const DeleteOptions& options = {}) override;
  StatusOr<std::unique_ptr<WatchStream>> Watch(const ResourceRef& ref,
                                               const WatchOptions& options = {}) override;

  // Test hooks (see the file comment).
  void CloseWatches();
  int ActiveWatches() const;
  void InjectError(const std::string& verb, Status status);
  int CallCount(const std::string& verb) const;
  void AfterUpdateStatus(std::function<void(const api::Object& stored)> fn);
  void BeforeWrite(std::function<void()> fn);
  void BeforeWatchEvent(std::function<void(const WatchEvent&)> fn);
  store::Store& store() { return store_; }

 private:
  // Counts the call and returns an injected error, if any.
  Status Enter(const std::string& verb);

  Clock& clock_;
  store::MemoryStore store_;
  mutable std::mutex mu_;
  std::map<std::string, int> calls_;
  std::map<std::string, std::vector<Status>> injected_;
  std::vector<std::weak_ptr<store::Watcher>> watchers_;
  std::function<void(const api::Object&)> after_update_status_;
  std::function<void()> before_write_;
  // Shared with the watch streams, which may outlive a hook's setting.
  struct WatchHook {
    std::mutex mu;
    std::function<void(const WatchEvent&)> fn;
  };
  std::shared_ptr<WatchHook> before_watch_event_ = std::make_shared<WatchHook>();
};

}  // namespace berth::client::testing
