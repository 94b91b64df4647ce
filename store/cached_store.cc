#include "store/cached_store.h"

#include <string>
#include <utility>

#include "api/unstructured.h"
#include "api/yaml_codec.h"
#include "core/ids.h"
#include "store/continue_token.h"
#include "store/object_meta.h"

namespace berth::store {
namespace {

// Path segment names may not contain '/' (the store's key encoding relies on it).
Status CheckSegment(const char* field, const std::string& value) {
  if (value.find('/') == std::string::npos) return Status::Ok();
  return InvalidError(std::string(field) + ": Invalid value: \"" + value + "\": may not contain '/'",
                      {{"FieldValueInvalid", field, "Invalid value: \"" + value + "\": may not contain '/'"}});
}

Status CheckPreconditions(const ObjectKey& key, const Preconditions& pre, const api::Object& cur) {
  if (pre.uid && *pre.uid != api::Uid(cur)) {
    return ConflictPrecondition(key, "UID", *pre.uid, api::Uid(cur));
  }
  if (pre.resource_version && *pre.resource_version != api::ResourceVersion(cur)) {
    return ConflictPrecondition(key, "ResourceVersion", *pre.resource_version, api::ResourceVersion(cur));
  }
  return Status::Ok();
}

std::map<api::GroupResource, Duration> PositiveTtls(const std::map<api::GroupResource, Duration>& ttl) {
  std::map<api::GroupResource, Duration> out;
  for (const auto& [resource, d] : ttl) {
    if (d > Duration::zero()) out.emplace(resource, d);
  }
  return out;
}

}  // namespace

CachedStore::CachedStore(Clock& clock, const StoreOptions& options, std::unique_ptr<Persistence> persistence,
                         RecoveredState initial)
    : clock_(clock),
      max_object_bytes_(options.max_object_bytes),
      persistence_(std::move(persistence)),
      hub_(std::make_shared<WatchHub>(options.history_limit, options.watcher_buffer_limit, initial.revision)),
      committed_revision_(initial.revision),
      assigned_revision_(initial.revision),
      ttl_(PositiveTtls(options.ttl)),
      indexed_labels_(options.indexed_labels) {
  // Every recovered object of a TTL resource starts its TTL now (see store.h, "Expiry").
  const Time now = clock_.Now();
  for (auto& [key, obj] : initial.objects) {
    IndexLabelsLocked(key, nullptr, obj.get());
    if (objects_[key.resource].insert_or_assign({key.ns, key.name}, std::move(obj)).second) {
      ++ns_counts_[key.resource][key.ns];
    }
    IndexExpiryLocked(key, /*removed=*/false, now);
  }
}

CachedStore::~CachedStore() { WatchHub::RunNotifications(hub_->CloseAll(UnavailableError("the store was closed"))); }

// ------------------------------------------------------------------- reads

const ObjectPtr* CachedStore::CommittedLocked(const ObjectKey& key) const {
  auto r = objects_.find(key.resource);
  if (r == objects_.end()) return nullptr;
  auto it = r->second.find(NameKey{key.ns, key.name});
  return it == r->second.end() ? nullptr : &it->second;
}

const ObjectPtr* CachedStore::LookupLocked(const ObjectKey& key, int64_t* pending_revision) const {
  *pending_revision = 0;
  if (!pending_.empty()) {
    auto it = pending_.find(key);
    if (it != pending_.end()) {
      *pending_revision = it->second.first;
      return it->second.second ? &it->second.second : nullptr;
    }
  }
  return CommittedLocked(key);
}

StatusOr<ObjectPtr> CachedStore::GetShared(const ObjectKey& key) {
  std::lock_guard lock(mu_);
  const ObjectPtr* obj = CommittedLocked(key);
  if (obj == nullptr) return NotFound(key);
  return *obj;
}

StatusOr<ListResult> CachedStore::List(const api::GroupResource& resource, const ListOptions& options) {
  std::optional<ContinueToken> token;
  if (!options.continue_token.empty()) {
    BERTH_ASSIGN_OR_RETURN(ContinueToken t, DecodeContinue(options.continue_token));
    token = std::move(t);
  }
  std::lock_guard lock(mu_);
  int64_t revision = committed_revision_;
  if (token && token->revision > 0) {
    revision = token->revision;
  } else if (!token && options.revision > 0) {
    revision = options.revision;
  }
  if (revision > committed_revision_) {
    return TimeoutError("Too large resource version: " + std::to_string(revision) +
                        ", current: " + std::to_string(committed_revision_));
  }
  // The state at `revision` differs from the current one in the keys written
  // since: undo those writes, newest first, so each key ends with the version
  // it had before its oldest later write (null: absent at `revision`).
  std::map<NameKey, ObjectPtr> overlay;
  if (revision < committed_revision_) {
    Status s = hub_->EventsSince(resource, options.ns, revision, [&](const HistoryEvent& ev) {
      overlay[NameKey{ev.key.ns, ev.key.name}] = ev.prev;
    });
    if (!s.ok()) {
      return GoneError(token ? ContinueExpiredMessage()
                             : std::string("The resourceVersion for the provided list is too old."));
    }
  }

  static const ResourceMap kNoObjects;
  auto r = objects_.find(resource);
  const ResourceMap* scope = r == objects_.end() ? &kNoObjects : &r->second;
  // A pinned, indexed label: only the objects carrying it now (the overlay
  // below restores those that carried it at an older revision).
  ResourceMap labelled;
  if (options.required_label) {
    for (const std::string& key : indexed_labels_) {
      if (std::optional<std::string> value = options.required_label(key)) {
        labelled = LabelledLocked(resource, *scope, key, *value);
        scope = &labelled;
        break;
      }
    }
  }
  const ResourceMap& current = *scope;

  // Where this page starts: strictly after the token's key, and not before
  // the namespace.
  NameKey start;
  bool strictly_after = false;
  if (token) {
    start = {token->ns, token->name};
    strictly_after = true;
  }
  if (!options.ns.empty() && (!token || start < NameKey{options.ns, ""})) {
    start = {options.ns, ""};
    strictly_after = false;
  }
  auto first = [&](const auto& m) { return strictly_after ? m.upper_bound(start) : m.lower_bound(start); };
  auto a = first(current);
  auto b = first(overlay);

  ListResult result;
  result.revision = revision;
  const NameKey* last = nullptr;
  // Objects of the scope before this page, when known: the remaining count is then the
  // scope's size at `revision` minus what the pages returned, not a walk over the rest.
  const int64_t before_page = !token ? 0 : token->revision > 0 ? token->offset : -1;
  int64_t remaining = 0;  // counted after a full page when there is no predicate and no offset
  while (a != current.end() || b != overlay.end()) {
    // Merge the two ordered sequences; the overlay wins on equal keys.
    const NameKey* key;
    const ObjectPtr* obj;
    if (b != overlay.end() && (a == current.end() || b->first <= a->first)) {
      if (a != current.end() && a->first == b->first) ++a;
      key = &b->first;
      obj = &b->second;
      ++b;
    } else {
      key = &a->first;
      obj = &a->second;
      ++a;
    }
    if (!options.ns.empty() && key->first != options.ns) break;  // past the namespace
    if (!*obj || (options.predicate && !options.predicate(**obj))) continue;
    if (!result.continue_token.empty()) {
      ++remaining;
      continue;
    }
    if (options.limit > 0 && static_cast<int64_t>(result.items.size()) == options.limit) {
      // One more match exists: hand out a token for the next page.
      if (options.predicate) {  // the rest could only be counted by evaluating it
        result.continue_token = EncodeContinue({revision, last->first, last->second});
        break;
      }
      if (before_page >= 0) {
        const int64_t through = before_page + static_cast<int64_t>(result.items.size());
        result.continue_token = EncodeContinue({revision, last->first, last->second, through});
        remaining = ScopeSizeLocked(resource, options.ns, overlay) - through;
        break;
      }
      result.continue_token = EncodeContinue({revision, last->first, last->second});
      remaining = 1;
      continue;
    }
    result.items.push_back(*obj);
    last = key;
  }
  if (!result.continue_token.empty() && !options.predicate) result.remaining_item_count = remaining;
  return result;
}

int64_t CachedStore::ScopeSizeLocked(const api::GroupResource& resource, const std::string& ns,
                                     const std::map<NameKey, ObjectPtr>& overlay) const {
  auto r = objects_.find(resource);
  if (r == objects_.end()) return 0;
  int64_t size = static_cast<int64_t>(r->second.size());
  if (!ns.empty()) {
    size = 0;
    if (auto counts = ns_counts_.find(resource); counts != ns_counts_.end()) {
      if (auto n = counts->second.find(ns); n != counts->second.end()) size = n->second;
    }
  }
  // The keys written since the list's revision count as they were then.
  for (const auto& [key, then] : overlay) size += (then != nullptr) - (r->second.count(key) > 0);
  return size;
}

StatusOr<std::unique_ptr<Watcher>> CachedStore::Watch(const api::GroupResource& resource, const WatchOptions& options) {
  std::lock_guard lock(mu_);
  return hub_->AddWatcher(resource, options, committed_revision_);
}

int64_t CachedStore::CurrentRevision() {
  std::lock_guard lock(mu_);
  return committed_revision_;
}

// ------------------------------------------------------------------ writes

StatusOr<CachedStore::Written> CachedStore::Write(const ObjectKey& key, const Decide& decide) {
  std::unique_lock lock(mu_);
  const uint64_t epoch = epoch_;
  int64_t pending_revision = 0;
  const ObjectPtr* found = LookupLocked(key, &pending_revision);
  ObjectPtr current = found ? *found : nullptr;
  StatusOr<Change> change = decide(current.get());
  if (!change.ok() || change->kind == Change::Kind::kNone) {
    // The answer was decided on a queued write: let it become durable (and
    // readable) first, so the caller's next read agrees with this answer.
    if (pending_revision > 0) BERTH_RETURN_IF_ERROR(WaitCommittedLocked(lock, pending_revision, epoch));
    if (!change.ok()) return change.status();
    return Written{current, false};
  }

  HistoryEvent ev;
  ev.key = key;
  ev.prev = current;
  if (change->kind == Change::Kind::kPut) {
    ev.type = current ? EventType::kModified : EventType::kAdded;
    SetResourceVersion(change->object, assigned_revision_ + 1);
    ev.object = std::make_shared<const api::Object>(std::move(change->object));
  } else {
    BERTH_CHECK(current != nullptr);
    api::Object last = *current;
    SetResourceVersion(last, assigned_revision_ + 1);
    ev.type = EventType::kDeleted;
    ev.object = std::make_shared<const api::Object>(std::move(last));
  }
  // Nothing above changed the store: an exception there (decide, a copy)
  // leaves it as it was.
  ev.revision = ++assigned_revision_;
  Written out{ev.object, ev.type == EventType::kDeleted};
  const int64_t revision = ev.revision;

  if (!persistence_) {
    std::vector<HistoryEvent> events;
    events.push_back(std::move(ev));
    WatchHub::Published published = ApplyLocked(std::move(events));
    lock.unlock();
    WatchHub::RunNotifications(published.notifications);
    return out;  // published.evicted is freed here, without the lock
  }
  pending_[key] = {revision, out.removed ? nullptr : out.object};
  queue_.push_back(std::move(ev));
  BERTH_RETURN_IF_ERROR(WaitCommittedLocked(lock, revision, epoch));
  return out;
}

Status CachedStore::CommitBatch(const std::vector<HistoryEvent>& batch) {
  try {
    std::vector<Persistence::Mutation> mutations;
    mutations.reserve(batch.size());
    for (const HistoryEvent& ev : batch) {
      mutations.push_back({&ev.key, ev.revision, ev.type == EventType::kDeleted ? nullptr : ev.object.get()});
    }
    return persistence_->Commit(mutations);
  } catch (const std::exception& e) {
    return UnavailableError(std::string("exception: ") + e.what());
  } catch (...) {
    return UnavailableError("exception of an unknown type");
  }
}

Status CachedStore::WaitCommittedLocked(std::unique_lock<std::mutex>& lock, int64_t revision, uint64_t epoch) {
  for (;;) {
    // A failed commit ended the epoch this write was queued in: the write was
    // in that batch or decided on it, and the revisions are handed out again.
    if (epoch != epoch_) return epoch_failure_;
    if (committed_revision_ >= revision) return Status::Ok();
    if (committing_) {
      committed_cv_.wait(lock);
      continue;
    }
    // Lead: commit everything queued so far as one batch.
    BERTH_CHECK(!queue_.empty());
    std::vector<HistoryEvent> batch;
    batch.swap(queue_);
    committing_ = true;
    lock.unlock();
    Status committed = CommitBatch(batch);
    lock.lock();
    committing_ = false;
    if (!committed.ok()) {
      // Nothing of this batch is durable (Persistence::Commit is all or
      // nothing): forget it and every write decided on top of it.
      health_ = UnavailableError("storage commit failed: " + committed.message());
      epoch_failure_ = health_;
      ++epoch_;
      pending_.clear();
      queue_.clear();
      assigned_revision_ = committed_revision_;
      committed_cv_.notify_all();
      return epoch_failure_;
    }
    health_ = Status::Ok();
    for (const HistoryEvent& ev : batch) {
      auto it = pending_.find(ev.key);
      if (it != pending_.end() && it->second.first == ev.revision) pending_.erase(it);
    }
    WatchHub::Published published = ApplyLocked(std::move(batch));
    committed_cv_.notify_all();
    lock.unlock();
    WatchHub::RunNotifications(published.notifications);
    published = {};  // free evicted history without the lock
    lock.lock();
  }
}

// Durable writes are in the readable state once this returns: a failure here
// (only allocation can fail) would leave memory behind the disk, so it ends
// the process (noexcept), and a restart reads the disk.
WatchHub::Published CachedStore::ApplyLocked(std::vector<HistoryEvent> events) noexcept {
  const Time now = ttl_.empty() ? Time{} : clock_.Now();
  for (const HistoryEvent& ev : events) {
    ResourceMap& m = objects_[ev.key.resource];
    const bool removed = ev.type == EventType::kDeleted;
    auto it = m.find(NameKey{ev.key.ns, ev.key.name});
    IndexLabelsLocked(ev.key, it == m.end() ? nullptr : it->second.get(), removed ? nullptr : ev.object.get());
    if (removed) {
      if (it != m.end()) {
        m.erase(it);
        auto& counts = ns_counts_[ev.key.resource];
        if (--counts[ev.key.ns] == 0) counts.erase(ev.key.ns);
      }
    } else if (it != m.end()) {
      it->second = ev.object;
    } else {
      m.emplace(NameKey{ev.key.ns, ev.key.name}, ev.object);
      ++ns_counts_[ev.key.resource][ev.key.ns];
    }
    if (!ttl_.empty()) IndexExpiryLocked(ev.key, removed, now);
  }
  committed_revision_ = events.back().revision;
  return hub_->Publish(std::move(events), committed_revision_);
}

void CachedStore::IndexLabelsLocked(const ObjectKey& key, const api::Object* before, const api::Object* after) {
  if (indexed_labels_.empty()) return;
  auto label = [](const api::Object* obj, const std::string& label_key) -> const std::string* {
    if (obj == nullptr) return nullptr;
    const api::Object& labels = api::NestedField(*obj, {"metadata", "labels"});
    if (!labels.is_object()) return nullptr;
    auto it = labels.find(label_key);
    return it != labels.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
  };
  const NameKey name{key.ns, key.name};
  for (const std::string& label_key : indexed_labels_) {
    const std::string* old_value = label(before, label_key);
    const std::string* new_value = label(after, label_key);
    if (old_value == new_value || (old_value && new_value && *old_value == *new_value)) continue;
    if (old_value) {
      auto it = label_index_.find({key.resource, label_key, *old_value});
      if (it != label_index_.end()) {
        it->second.erase(name);
        if (it->second.empty()) label_index_.erase(it);
      }
    }
    if (new_value) label_index_[{key.resource, label_key, *new_value}].insert(name);
  }
}

CachedStore::ResourceMap CachedStore::LabelledLocked(const api::GroupResource& resource, const ResourceMap& current,
                                                     const std::string& key, const std::string& value) const {
  ResourceMap out;
  auto it = label_index_.find({resource, key, value});
  if (it == label_index_.end()) return out;
  for (const NameKey& name : it->second) {
    auto obj = current.find(name);
    if (obj != current.end()) out.emplace_hint(out.end(), name, obj->second);
  }
  return out;
}

void CachedStore::IndexExpiryLocked(const ObjectKey& key, bool removed, Time now) {
  auto ttl = ttl_.find(key.resource);
  if (ttl == ttl_.end()) return;
  auto [it, inserted] = expiry_of_.try_emplace(key, Time{});
  if (!inserted) expiry_order_.erase({it->second, key});
  if (removed) {
    expiry_of_.erase(it);
    return;
  }
  it->second = now + ttl->second;
  expiry_order_.emplace(it->second, key);
}

Status CachedStore::Health() {
  std::unique_lock lock(mu_);
  if (health_.ok() || !persistence_ || committing_) return health_;
  // Probe while no commit runs: writers that queue meanwhile wait for it as
  // for a commit.
  committing_ = true;
  lock.unlock();
  Status probe;
  try {
    probe = persistence_->Probe();
  } catch (const std::exception& e) {
    probe = UnavailableError(std::string("exception: ") + e.what());
  } catch (...) {
    probe = UnavailableError("exception of an unknown type");
  }
  lock.lock();
  committing_ = false;
  committed_cv_.notify_all();
  if (probe.ok()) {
    health_ = Status::Ok();
  } else if (!health_.ok()) {
    health_ = UnavailableError("storage commit failed: " + probe.message());
  }
  return health_;
}

StatusOr<size_t> CachedStore::RemoveExpired() {
  std::unique_lock lock(mu_);
  if (expiry_order_.empty()) return size_t{0};
  const Time now = clock_.Now();
  const uint64_t epoch = epoch_;
  std::vector<HistoryEvent> events;
  for (auto it = expiry_order_.begin();
       it != expiry_order_.end() && it->first <= now && events.size() < kMaxExpiriesPerSweep; ++it) {
    const ObjectKey& key = it->second;
    // A write of the key is being committed: it restarts the TTL or removes
    // the object itself.
    if (pending_.count(key) != 0) continue;
    const ObjectPtr* current = CommittedLocked(key);
    BERTH_CHECK(current != nullptr);
    api::Object last = **current;
    HistoryEvent ev;
    ev.revision = assigned_revision_ + 1;
    SetResourceVersion(last, ev.revision);
    ev.key = key;
    ev.prev = *current;
    ev.type = EventType::kDeleted;
    ev.object = std::make_shared<const api::Object>(std::move(last));
    assigned_revision_ = ev.revision;
    events.push_back(std::move(ev));
  }
  const size_t removed = events.size();
  if (removed == 0) return size_t{0};
  const int64_t revision = events.back().revision;
  if (!persistence_) {
    WatchHub::Published published = ApplyLocked(std::move(events));
    lock.unlock();
    WatchHub::RunNotifications(published.notifications);
    return removed;
  }
  for (HistoryEvent& ev : events) {
    pending_[ev.key] = {ev.revision, nullptr};
    queue_.push_back(std::move(ev));
  }
  BERTH_RETURN_IF_ERROR(WaitCommittedLocked(lock, revision, epoch));
  return removed;
}

// etcd refuses a request larger than its --max-request-bytes with this error, which
// kube-apiserver returns as it is (a 500 without a reason).
Status CachedStore::CheckObjectSize(const api::Object& obj) const {
  if (max_object_bytes_ == 0) return Status::Ok();
  if (api::CompactJsonSize(obj) > max_object_bytes_) return UnknownError("etcdserver: request is too large");
  return Status::Ok();
}

StatusOr<ObjectPtr> CachedStore::CreateShared(const api::GroupResource& resource, api::Object obj) {
  if (!obj.is_object()) return BadRequestError("the object to create is not a JSON object");
  StampCreate(obj, clock_.Now());
  BERTH_RETURN_IF_ERROR(CheckObjectSize(obj));
  const std::string generate_name = api::MetaString(obj, "generateName");
  const bool generated = api::Name(obj).empty();
  if (generated && generate_name.empty()) {
    return InvalidError("metadata.name: Required value: name or generateName is required",
                        {{"FieldValueRequired", "metadata.name", "Required value: name or generateName is required"}});
  }
  BERTH_RETURN_IF_ERROR(CheckSegment("metadata.namespace", api::Namespace(obj)));
  BERTH_RETURN_IF_ERROR(CheckSegment("metadata.generateName", generate_name));
  BERTH_RETURN_IF_ERROR(CheckSegment("metadata.name", api::Name(obj)));
  // generateName: draw a suffix, and draw again when it is taken (the
  // registry retries a create that hits AlreadyExists the same way).
  constexpr int kGenerateAttempts = 8;
  for (int attempt = 1;; ++attempt) {
    if (generated) obj["metadata"]["name"] = generate_name + RandomNameSuffix();
    const ObjectKey key = KeyOf(resource, obj);
    auto written = Write(key, [&](const api::Object* current) -> StatusOr<Change> {
      if (current != nullptr) return AlreadyExists(key);
      return Change{Change::Kind::kPut, std::move(obj)};
    });
    if (written.ok()) return std::move(written->object);
    if (!(generated && written.status().code() == Code::kAlreadyExists && attempt < kGenerateAttempts)) {
      return written.status();
    }
  }
}

StatusOr<ObjectPtr> CachedStore::UpdateShared(const api::GroupResource& resource, api::Object obj,
                                              const UpdateOptions& options) {
  if (!obj.is_object()) return BadRequestError("the object to update is not a JSON object");
  BERTH_RETURN_IF_ERROR(CheckObjectSize(obj));
  const ObjectKey key = KeyOf(resource, obj);
  const std::string resource_version = api::ResourceVersion(obj);
  auto written = Write(key, [&](const api::Object* current) -> StatusOr<Change> {
    if (current == nullptr) return NotFound(key);
    if (options.uid && *options.uid != api::Uid(*current)) {
      return ConflictPrecondition(key, "UID", *options.uid, api::Uid(*current));
    }
    if (!resource_version.empty() && resource_version != api::ResourceVersion(*current)) {
      return ConflictModified(key);
    }
    const bool spec_changed = StampUpdate(*current, obj);
    if (!spec_changed && SameOutsideSpec(obj, *current)) return Change{};  // no write, no revision
    if (ShouldRemoveOnUpdate(*current, obj)) return Change{Change::Kind::kRemove, {}};
    return Change{Change::Kind::kPut, std::move(obj)};
  });
  if (!written.ok()) return written.status();
  return std::move(written->object);
}

StatusOr<SharedDeleteResult> CachedStore::DeleteShared(const ObjectKey& key, const DeleteOptions& options) {
  const Time now = clock_.Now();
  auto written = Write(key, [&](const api::Object* current) -> StatusOr<Change> {
    if (current == nullptr) return NotFound(key);
    BERTH_RETURN_IF_ERROR(CheckPreconditions(key, options.preconditions, *current));
    DeletePlan plan = PlanDelete(*current, options.grace_period_seconds, now);
    switch (plan.action) {
      case DeletePlan::Action::kRemove:
        return Change{Change::Kind::kRemove, {}};
      case DeletePlan::Action::kMark:
        return Change{Change::Kind::kPut, std::move(plan.marked)};
      case DeletePlan::Action::kNothing:
        break;
    }
    return Change{};
  });
  if (!written.ok()) return written.status();
  return SharedDeleteResult{std::move(written->object), written->removed};
}

}  // namespace berth::store
