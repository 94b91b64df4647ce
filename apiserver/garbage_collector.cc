#include "apiserver/garbage_collector.h"

#include <algorithm>
#include <utility>

#include "api/unstructured.h"
#include "core/logging.h"

namespace berth::apiserver {

using nlohmann::json;

namespace {

// How often a failing work item is retried before it waits for the object to change.
constexpr int kRetries = 5;

}  // namespace

struct GarbageCollector::ResourceWatch {
  const api::ResourceDefinition* def = nullptr;
  api::GroupResource resource;  // def->Resource(), built once (drains run on every write)
  std::unique_ptr<store::Watcher> watcher;
  std::set<std::string> uids;  // objects of this resource in the index
  // Set by the watch's notify (events arrived after a drain found it empty) and when
  // the watch is opened (its replay is buffered without a notify); cleared by the drain.
  std::atomic<bool> signalled{true};
};

GarbageCollector::GarbageCollector(const api::Registry& registry, store::Store& store)
    : registry_(registry), store_(store), deleter_(store) {}

GarbageCollector::~GarbageCollector() { Stop(); }

Status GarbageCollector::Open() {
  if (opened_) return Status::Ok();
  for (const api::ResourceDefinition* def : registry_.Definitions()) {
    if (!def->stored_as.resource.empty()) continue;  // a view: its objects are another's
    if (GarbageCollectorIgnores(def->Resource())) continue;
    auto rw = std::make_unique<ResourceWatch>();
    rw->def = def;
    rw->resource = def->Resource();
    BERTH_RETURN_IF_ERROR(ListAndWatch(rw.get()));
    watches_.push_back(std::move(rw));
  }
  opened_ = true;
  // Now that every object is known, dependents of owners that are gone.
  for (const auto& [uid, node] : nodes_) {
    for (const Owner& o : node.owners) {
      if (!nodes_.contains(o.uid)) Enqueue(WorkType::kAttemptToDelete, uid);
    }
  }
  return Status::Ok();
}

Status GarbageCollector::Start() {
  BERTH_RETURN_IF_ERROR(Open());
  // The first pass drains what the initial lists queued and arms every
  // watch's notify (the store notifies only after a drain found it empty).
  Notify();
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void GarbageCollector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  for (auto& rw : watches_) {
    if (rw->watcher) rw->watcher->Stop();
  }
}

void GarbageCollector::Notify() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;
  }
  cv_.notify_one();
}

Status GarbageCollector::ListAndWatch(ResourceWatch* rw) {
  if (rw->watcher) rw->watcher->Stop();
  const api::GroupResource gr = rw->def->Resource();
  BERTH_ASSIGN_OR_RETURN(store::ListResult list, store_.List(gr, {}));
  std::set<std::string> seen;
  for (const auto& item : list.items) {
    seen.insert(api::Uid(*item));
    Observe(gr, *item);
  }
  // Objects deleted while the watch was closed.
  for (const std::string& uid : rw->uids) {
    if (seen.contains(uid)) continue;
    auto it = nodes_.find(uid);
    if (it == nodes_.end()) continue;
    json gone = {{"metadata", {{"uid", uid}, {"name", it->second.key.name}, {"namespace", it->second.key.ns}}}};
    Forget(gone);
  }
  rw->uids = std::move(seen);
  store::WatchOptions wo;
  wo.from_revision = list.revision;
  wo.notify = [this, rw] {
    rw->signalled.store(true);
    Notify();
  };
  rw->signalled.store(true);
  BERTH_ASSIGN_OR_RETURN(rw->watcher, store_.Watch(gr, wo));
  return Status::Ok();
}

bool GarbageCollector::DrainEvents() {
  bool any = false;
  for (auto& rw : watches_) {
    // A watch whose notify has not fired since its last drain has nothing buffered.
    if (!rw->signalled.exchange(false)) continue;
    const api::GroupResource& gr = rw->resource;
    while (rw->watcher) {
      auto next = rw->watcher->TryNext();
      if (!next.ok()) {
        if (next.status().code() == Code::kGone) {
          // Fell behind: relist and re-watch.
          if (Status s = ListAndWatch(rw.get()); !s.ok()) {
            Logger("gc")->warn("relisting {}: {}", gr.String(), s.ToString());
            rw->watcher.reset();
          }
          any = true;
          continue;
        }
        rw->watcher.reset();  // stopped or store closed
        break;
      }
      if (!next->has_value()) break;
      const store::WatchEvent& ev = **next;
      any = true;
      if (ev.type == store::EventType::kDeleted) {
        rw->uids.erase(api::Uid(*ev.object));
        Forget(*ev.object);
      } else {
        rw->uids.insert(api::Uid(*ev.object));
        Observe(gr, *ev.object);
      }
    }
  }
  return any;
}

void GarbageCollector::Observe(const api::GroupResource& resource, const api::Object& obj) {
  const std::string& uid = api::Uid(obj);
  if (uid.empty()) return;
  Node& node = nodes_[uid];
  for (const Owner& o : node.owners) {
    auto d = dependents_.find(o.uid);
    if (d != dependents_.end()) {
      d->second.erase(uid);
      if (d->second.empty()) dependents_.erase(d);
    }
  }
  node.key = store::KeyOf(resource, obj);
  node.owners.clear();
  const json* refs = nullptr;
  if (auto m = obj.find("metadata"); m != obj.end() && m->is_object()) {
    if (auto r = m->find("ownerReferences"); r != m->end() && r->is_array()) refs = &*r;
  }
  if (refs != nullptr) {
    for (const json& ref : *refs) {
      if (!ref.is_object()) continue;
      Owner o{api::StringAt(ref, "uid"), api::StringAt(ref, "apiVersion"), api::StringAt(ref, "kind"), api::StringAt(ref, "name")};
      if (o.uid.empty()) continue;
      dependents_[o.uid].insert(uid);
      node.owners.push_back(std::move(o));
    }
  }
  // A changed object gets fresh retries.
  failures_.erase(WorkItem{WorkType::kAttemptToDelete, uid});
  failures_.erase(WorkItem{WorkType::kProcessDeleting, uid});
  const bool is_namespace = resource.group.empty() && resource.resource == "namespaces";
  if (api::BeingDeleted(obj) && (HasFinalizer(obj, kFinalizerForeground) || HasFinalizer(obj, kFinalizerOrphan) ||
                                 (is_namespace && HasFinalizer(obj, kFinalizerNamespace)))) {
    Enqueue(WorkType::kProcessDeleting, uid);
  }
  if (opened_) {
    for (const Owner& o : node.owners) {
      if (!nodes_.contains(o.uid)) Enqueue(WorkType::kAttemptToDelete, uid);
    }
  }
}

void GarbageCollector::Forget(const api::Object& obj) {
  const std::string uid = api::Uid(obj);
  auto it = nodes_.find(uid);
  if (it == nodes_.end()) return;
  for (const Owner& o : it->second.owners) {
    auto d = dependents_.find(o.uid);
    if (d != dependents_.end()) {
      d->second.erase(uid);
      if (d->second.empty()) dependents_.erase(d);
    }
    // An owner in foreground deletion may be waiting for this one.
    if (nodes_.contains(o.uid)) Enqueue(WorkType::kProcessDeleting, o.uid);
  }
  const std::string ns = it->second.key.ns;
  nodes_.erase(it);
  // Nothing is kept for an object that is gone: its retries, and, for a namespace removed
  // while it was terminating (its finalizer taken off by hand), its terminating state.
  failures_.erase(WorkItem{WorkType::kAttemptToDelete, uid});
  failures_.erase(WorkItem{WorkType::kProcessDeleting, uid});
  terminating_namespaces_.erase(uid);
  if (awaiting_unwatched_.erase(uid) > 0) awaiting_any_.store(!awaiting_unwatched_.empty());
  if (auto d = dependents_.find(uid); d != dependents_.end()) {
    for (const std::string& dep : d->second) Enqueue(WorkType::kAttemptToDelete, dep);
  }
  if (!ns.empty()) {
    for (const std::string& ns_uid : terminating_namespaces_) {
      auto n = nodes_.find(ns_uid);
      if (n != nodes_.end() && n->second.key.name == ns) Enqueue(WorkType::kProcessDeleting, ns_uid);
    }
  }
}

GarbageCollector::Held GarbageCollector::HeldPerObject() const {
  return Held{nodes_.size(), dependents_.size(), failures_.size(), terminating_namespaces_.size(),
              awaiting_unwatched_.size()};
}

void GarbageCollector::Enqueue(WorkType type, const std::string& uid) {
  WorkItem item{type, uid};
  if (queued_.insert(item).second) queue_.push_back(std::move(item));
}

int GarbageCollector::Sync() {
  int actions = 0;
  if (recheck_.exchange(false)) {
    // Each stays in the set until its namespace pass finds nothing unwatched left (or the
    // namespace is gone), so a pass that fails is tried again on the next recheck.
    for (auto it = awaiting_unwatched_.begin(); it != awaiting_unwatched_.end();) {
      if (!nodes_.contains(*it)) {
        it = awaiting_unwatched_.erase(it);
        continue;
      }
      Enqueue(WorkType::kProcessDeleting, *it);
      ++it;
    }
    awaiting_any_.store(!awaiting_unwatched_.empty());
  }
  bool events = true;
  while (events || !queue_.empty()) {
    events = DrainEvents();
    while (!queue_.empty()) {
      WorkItem item = queue_.front();
      queue_.pop_front();
      queued_.erase(item);
      if (Process(item)) ++actions;
      // Take in what the action changed before the next item.
      if (DrainEvents()) events = true;
    }
  }
  return actions;
}

void GarbageCollector::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait(lock, [this] { return wake_ || stopping_; });
    if (stopping_) break;
    wake_ = false;
    lock.unlock();
    Sync();
    lock.lock();
  }
}

bool GarbageCollector::Process(const WorkItem& item) {
  auto it = nodes_.find(item.uid);
  if (it == nodes_.end()) return false;
  const Node node = it->second;  // the index may change during the action
  StatusOr<bool> acted = false;
  switch (item.type) {
    case WorkType::kAttemptToDelete:
      acted = AttemptToDelete(node);
      break;
    case WorkType::kProcessDeleting:
      acted = ProcessDeleting(node);
      break;
  }
  if (acted.ok()) {
    failures_.erase(item);
    return *acted;
  }
  int& failures = failures_[item];
  ++failures;
  Logger("gc")->warn("{} {}/{}: {} (attempt {})", item.type == WorkType::kAttemptToDelete ? "collecting" : "finalizing",
                     node.key.resource.String(), node.key.name, acted.status().ToString(), failures);
  if (failures < kRetries) Enqueue(item.type, item.uid);
  return false;
}

StatusOr<std::optional<api::Object>> GarbageCollector::GetOwner(const std::string& dependent_ns,
                                                                const Owner& owner) {
  BERTH_ASSIGN_OR_RETURN(const api::ResourceDefinition* def, registry_.ForKind(owner.api_version, owner.kind));
  store::ObjectKey key{def->StorageResource(), def->namespaced() ? dependent_ns : "", owner.name};
  auto obj = store_.Get(key);
  if (!obj.ok()) {
    if (obj.status().code() == Code::kNotFound) return std::optional<api::Object>();
    return obj.status();
  }
  if (api::Uid(*obj) != owner.uid) return std::optional<api::Object>();
  return std::optional<api::Object>(std::move(obj).value());
}

StatusOr<bool> GarbageCollector::AttemptToDelete(const Node& node) {
  const api::ResourceDefinition* def = registry_.Find(node.key.resource);
  if (def == nullptr) return false;
  auto current = store_.Get(node.key);
  if (!current.ok()) return current.status().code() == Code::kNotFound ? StatusOr<bool>(false) : current.status();
  const std::string uid = api::Uid(*current);
  if (nodes_.find(uid) == nodes_.end() || api::BeingDeleted(*current)) return false;
  std::vector<std::string> dangling;
  int solid = 0, waiting = 0;
  for (const Owner& o : node.owners) {
    auto owner = GetOwner(node.key.ns, o);
    if (!owner.ok()) {
      ++solid;  // an owner that cannot be checked keeps its dependent
      continue;
    }
    if (!owner->has_value()) {
      dangling.push_back(o.uid);
    } else if (api::BeingDeleted(**owner) && HasFinalizer(**owner, kFinalizerForeground)) {
      ++waiting;
    } else {
      ++solid;
    }
  }
  if (solid > 0) {
    if (dangling.empty()) return false;
    auto updated = store_.GuaranteedUpdate(node.key, [&](const api::Object& obj) -> StatusOr<api::Object> {
      if (api::Uid(obj) != uid) return store::NotFound(node.key);
      api::Object next = obj;
      json& refs = next["metadata"]["ownerReferences"];
      json kept = json::array();
      for (const json& ref : refs) {
        if (!ref.is_object() ||
            std::find(dangling.begin(), dangling.end(), api::StringAt(ref, "uid")) == dangling.end()) {
          kept.push_back(ref);
        }
      }
      refs = std::move(kept);
      return next;
    });
    if (!updated.ok() && updated.status().code() != Code::kNotFound) return updated.status();
    return true;
  }
  if (waiting == 0 && dangling.empty()) return false;
  DeleteRequest request;
  request.precondition_uid = uid;
  // Upstream's attemptToDeleteItem: Foreground when an owner waits for its dependents and
  // this one has dependents of its own; otherwise the object's own orphan or
  // foregroundDeletion finalizer is honoured, else Background.
  const auto has_dependents = dependents_.find(uid);
  const bool forced = waiting > 0 && has_dependents != dependents_.end() && !has_dependents->second.empty();
  request.propagation_policy =
      std::string(forced ? kPropagationForeground : FinalizerPolicy(*current, kPropagationBackground));
  auto deleted = deleter_.Delete(*def, node.key, request);
  if (!deleted.ok() && deleted.status().code() != Code::kNotFound && deleted.status().code() != Code::kConflict) {
    return deleted.status();
  }
  return true;
}

StatusOr<bool> GarbageCollector::RemoveFinalizer(const store::ObjectKey& key, const std::string& uid,
                                                 std::string_view finalizer) {
  auto updated = store_.GuaranteedUpdate(key, [&](const api::Object& obj) -> StatusOr<api::Object> {
    if (api::Uid(obj) != uid) return store::NotFound(key);
    api::Object next = obj;
    json& list = next["metadata"]["finalizers"];
    json kept = json::array();
    for (const json& f : list) {
      if (!(f.is_string() && f.get_ref<const std::string&>() == finalizer)) kept.push_back(f);
    }
    list = std::move(kept);
    return next;
  });
  if (!updated.ok() && updated.status().code() != Code::kNotFound) return updated.status();
  return true;
}

StatusOr<bool> GarbageCollector::ProcessDeleting(const Node& node) {
  auto current = store_.Get(node.key);
  if (!current.ok()) return current.status().code() == Code::kNotFound ? StatusOr<bool>(false) : current.status();
  const std::string uid = api::Uid(*current);
  if (!api::BeingDeleted(*current) || !nodes_.contains(uid)) return false;
  if (node.key.resource.group.empty() && node.key.resource.resource == "namespaces" &&
      HasFinalizer(*current, kFinalizerNamespace)) {
    return ProcessNamespace(*current);
  }
  std::vector<std::string> deps;
  if (auto d = dependents_.find(uid); d != dependents_.end()) deps.assign(d->second.begin(), d->second.end());
  if (HasFinalizer(*current, kFinalizerOrphan)) {
    for (const std::string& dep_uid : deps) {
      auto dn = nodes_.find(dep_uid);
      if (dn == nodes_.end()) continue;
      auto updated = store_.GuaranteedUpdate(dn->second.key, [&](const api::Object& obj) -> StatusOr<api::Object> {
        if (api::Uid(obj) != dep_uid) return store::NotFound(dn->second.key);
        api::Object next = obj;
        json& refs = next["metadata"]["ownerReferences"];
        json kept = json::array();
        for (const json& ref : refs) {
          if (!ref.is_object() || api::StringAt(ref, "uid") != uid) kept.push_back(ref);
        }
        refs = std::move(kept);
        if (refs.empty()) next["metadata"].erase("ownerReferences");
        return next;
      });
      if (!updated.ok() && updated.status().code() != Code::kNotFound) return updated.status();
    }
    return RemoveFinalizer(node.key, uid, kFinalizerOrphan);
  }
  if (HasFinalizer(*current, kFinalizerForeground)) {
    bool acted = false;
    int remaining = 0;
    for (const std::string& dep_uid : deps) {
      auto dn = nodes_.find(dep_uid);
      if (dn == nodes_.end()) continue;
      ++remaining;
      auto dep = store_.Get(dn->second.key);
      if (!dep.ok() || api::Uid(*dep) != dep_uid || api::BeingDeleted(*dep)) continue;
      const api::ResourceDefinition* def = registry_.Find(dn->second.key.resource);
      if (def == nullptr) continue;
      DeleteRequest request;
      request.precondition_uid = dep_uid;
      request.propagation_policy = std::string(kPropagationForeground);
      auto deleted = deleter_.Delete(*def, dn->second.key, request);
      if (!deleted.ok() && deleted.status().code() != Code::kNotFound &&
          deleted.status().code() != Code::kConflict) {
        return deleted.status();
      }
      acted = true;
    }
    if (remaining == 0) return RemoveFinalizer(node.key, uid, kFinalizerForeground);
    return acted;
  }
  return false;
}

StatusOr<bool> GarbageCollector::ProcessNamespace(const api::Object& ns) {
  const std::string& name = api::Name(ns);
  const std::string& uid = api::Uid(ns);
  terminating_namespaces_.insert(uid);
  bool acted = false;
  int remaining = 0;       // objects still in the namespace after this pass
  bool unwatched = false;  // some of them are of an ignored resource (no watch tells when they go)
  for (const api::ResourceDefinition* def : registry_.Definitions()) {
    if (!def->namespaced() || !def->stored_as.resource.empty()) continue;
    store::ListOptions lo;
    lo.ns = name;
    BERTH_ASSIGN_OR_RETURN(store::ListResult list, store_.List(def->Resource(), lo));
    for (const auto& item : list.items) {
      bool stays = true;
      if (!api::BeingDeleted(*item)) {
        DeleteRequest request;
        request.precondition_uid = api::Uid(*item);
        auto deleted = deleter_.Delete(*def, store::KeyOf(def->Resource(), *item), request);
        if (deleted.ok()) {
          acted = true;
          stays = !deleted->removed;  // marked: finalizers or a grace period to wait for
        } else if (deleted.status().code() == Code::kNotFound) {
          stays = false;
        } else if (deleted.status().code() != Code::kConflict) {  // kConflict: replaced meanwhile
          return deleted.status();
        }
      }
      if (!stays) continue;
      ++remaining;
      if (GarbageCollectorIgnores(def->Resource())) unwatched = true;
    }
  }
  if (unwatched) {
    awaiting_unwatched_.insert(uid);
  } else {
    awaiting_unwatched_.erase(uid);
  }
  awaiting_any_.store(!awaiting_unwatched_.empty());
  if (remaining > 0) return acted;
  terminating_namespaces_.erase(uid);
  return RemoveFinalizer(store::KeyOf(api::GroupResource{"", "namespaces"}, ns), uid, kFinalizerNamespace);
}

void GarbageCollector::Recheck() {
  if (!awaiting_any_.load()) return;
  recheck_.store(true);
  Notify();
}

}  // namespace berth::apiserver
