#include "store/watch_hub.h"

#include <algorithm>
#include <string>
#include <utility>

#include "store/object_meta.h"

namespace berth::store {
namespace {

// What Store::Watch hands out: owns one HubWatcher and stops it on destruction.
class WatcherHandle final : public Watcher {
 public:
  explicit WatcherHandle(std::shared_ptr<HubWatcher> w) : w_(std::move(w)) {}
  ~WatcherHandle() override { w_->Stop(); }
  StatusOr<std::optional<WatchEvent>> Next(Duration timeout) override { return w_->Next(timeout); }
  int64_t StartRevision() const override { return w_->StartRevision(); }
  int64_t ProgressRevision() const override { return w_->ProgressRevision(); }
  void Stop() override { w_->Stop(); }

 private:
  std::shared_ptr<HubWatcher> w_;
};

}  // namespace

size_t ApproxJsonBytes(const api::Object& obj) {
  size_t total = 0;
  std::vector<const api::Object*> pending{&obj};
  while (!pending.empty()) {
    const api::Object* v = pending.back();
    pending.pop_back();
    switch (v->type()) {
      case api::Object::value_t::object:
        total += 2 + (v->empty() ? 0 : v->size() - 1);  // braces, commas
        for (auto it = v->begin(); it != v->end(); ++it) {
          total += it.key().size() + 3;  // quotes and colon
          pending.push_back(&it.value());
        }
        break;
      case api::Object::value_t::array:
        total += 2 + (v->empty() ? 0 : v->size() - 1);
        for (const auto& e : *v) pending.push_back(&e);
        break;
      case api::Object::value_t::string:
        total += v->get_ref<const std::string&>().size() + 2;
        break;
      case api::Object::value_t::boolean:
        total += v->get<bool>() ? 4 : 5;
        break;
      case api::Object::value_t::null:
        total += 4;
        break;
      default:
        total += 8;  // numbers (and binary, which JSON text never holds)
        break;
    }
  }
  return total;
}

// ---------------------------------------------------------------- WatchHub

WatchHub::WatchHub(size_t history_limit, size_t watcher_buffer_limit, int64_t start_revision,
                   size_t history_bytes_limit)
    : history_limit_(std::max<size_t>(1, history_limit)),
      watcher_buffer_limit_(std::max<size_t>(1, watcher_buffer_limit)),
      history_bytes_limit_(history_bytes_limit),
      start_revision_(start_revision),
      published_revision_(start_revision) {}

void WatchHub::EvictOldestLocked(ResourceHistory& history, std::vector<HistoryEvent>& evicted) {
  history.compacted = history.events.front().revision;
  history.bytes -= history.events.front().bytes;
  history_bytes_ -= history.events.front().bytes;
  --history_size_;
  evicted.push_back(std::move(history.events.front()));
  history.events.pop_front();
}

const WatchHub::ResourceHistory* WatchHub::FindLocked(const api::GroupResource& resource) const {
  auto it = histories_.find(resource);
  return it == histories_.end() ? nullptr : &it->second;
}

int64_t WatchHub::CompactedLocked(const ResourceHistory* history) const {
  return history != nullptr ? history->compacted : start_revision_;
}

WatchHub::Published WatchHub::Publish(std::vector<HistoryEvent> events, int64_t current_revision) {
  Published out;
  Notifications& notes = out.notifications;
  // Measured before the lock: a walk over every node of the object.
  for (HistoryEvent& ev : events) ev.bytes = ev.object ? ApproxJsonBytes(*ev.object) : 0;
  std::lock_guard lock(mu_);
  for (HistoryEvent& ev : events) {
    auto it = watchers_.find(ev.key.resource);
    if (it != watchers_.end()) {
      auto& list = it->second;
      bool any_closed = false;
      for (const auto& w : list) {
        switch (w->Offer(ev, /*replay=*/false)) {
          case HubWatcher::OfferResult::kQuiet:
            break;
          case HubWatcher::OfferResult::kClosed:
            any_closed = true;
            [[fallthrough]];
          case HubWatcher::OfferResult::kNotify:
            notes.push_back(w);
            break;
        }
      }
      if (any_closed) {
        std::erase_if(list, [](const std::shared_ptr<HubWatcher>& w) {
          std::lock_guard wl(w->mu_);
          return w->is_closed_;
        });
        if (list.empty()) watchers_.erase(it);
      }
    }
    ResourceHistory& history =
        histories_.try_emplace(ev.key.resource, ResourceHistory{{}, 0, start_revision_}).first->second;
    history.bytes += ev.bytes;
    history_bytes_ += ev.bytes;
    ++history_size_;
    history.events.push_back(std::move(ev));
  }
  // Over a limit: the oldest event of whichever resource holds the most events (or bytes,
  // for the byte limit) goes first, of the one with the older oldest event on a tie; a scan
  // of the resources, a few dozen, per dropped event.
  while (history_size_ > history_limit_ || history_bytes_ > history_bytes_limit_) {
    const bool by_events = history_size_ > history_limit_;
    auto weight = [by_events](const ResourceHistory& h) { return by_events ? h.events.size() : h.bytes; };
    ResourceHistory* largest = nullptr;
    for (auto& [resource, history] : histories_) {
      if (history.events.size() < 2) continue;
      if (largest == nullptr || weight(history) > weight(*largest) ||
          (weight(history) == weight(*largest) && history.events.front().revision < largest->events.front().revision)) {
        largest = &history;
      }
    }
    if (largest == nullptr) break;  // every resource is down to its newest event
    EvictOldestLocked(*largest, out.evicted);
  }
  published_revision_.store(current_revision, std::memory_order_release);
  return out;
}

StatusOr<std::unique_ptr<Watcher>> WatchHub::AddWatcher(const api::GroupResource& resource, const WatchOptions& options,
                                                        int64_t current_revision) {
  std::lock_guard lock(mu_);
  int64_t from = options.from_revision.value_or(current_revision);
  const ResourceHistory* history = FindLocked(resource);
  if (from < CompactedLocked(history)) return TooOldResourceVersion(from, CompactedLocked(history));
  size_t limit = options.buffer_limit > 0 ? options.buffer_limit : watcher_buffer_limit_;
  auto w = std::make_shared<HubWatcher>(shared_from_this(), resource, options, limit, from);
  if (history != nullptr) {
    // Replay what the history holds after `from` (binary search: ascending revisions).
    auto first = std::upper_bound(history->events.begin(), history->events.end(), from,
                                  [](int64_t rev, const HistoryEvent& ev) { return rev < ev.revision; });
    for (auto it = first; it != history->events.end(); ++it) w->Offer(*it, /*replay=*/true);
  }
  watchers_[resource].push_back(w);
  return std::unique_ptr<Watcher>(std::make_unique<WatcherHandle>(std::move(w)));
}

Status WatchHub::EventsSince(const api::GroupResource& resource, const std::string& ns, int64_t after,
                             const std::function<void(const HistoryEvent&)>& fn) const {
  std::lock_guard lock(mu_);
  const ResourceHistory* history = FindLocked(resource);
  if (after < CompactedLocked(history)) return TooOldResourceVersion(after, CompactedLocked(history));
  if (history == nullptr) return Status::Ok();
  for (auto it = history->events.rbegin(); it != history->events.rend() && it->revision > after; ++it) {
    if (ns.empty() || it->key.ns == ns) fn(*it);
  }
  return Status::Ok();
}

int64_t WatchHub::CompactedRevision(const api::GroupResource& resource) const {
  std::lock_guard lock(mu_);
  return CompactedLocked(FindLocked(resource));
}

size_t WatchHub::HistorySize() const {
  std::lock_guard lock(mu_);
  return history_size_;
}

size_t WatchHub::HistoryBytes() const {
  std::lock_guard lock(mu_);
  return history_bytes_;
}

WatchHub::Notifications WatchHub::CloseAll(const Status& status) {
  Notifications notes;
  std::lock_guard lock(mu_);
  for (auto& [resource, list] : watchers_) {
    for (auto& w : list) {
      std::lock_guard wl(w->mu_);
      if (w->Close(status, /*keep_buffer=*/true)) notes.push_back(w);
    }
  }
  watchers_.clear();
  return notes;
}

void WatchHub::RunNotifications(const Notifications& notifications) {
  for (const auto& w : notifications) w->Notify();
}

void WatchHub::Remove(HubWatcher* watcher) {
  std::lock_guard lock(mu_);
  auto it = watchers_.find(watcher->resource_);
  if (it == watchers_.end()) return;
  std::erase_if(it->second, [watcher](const std::shared_ptr<HubWatcher>& w) { return w.get() == watcher; });
  if (it->second.empty()) watchers_.erase(it);
}

// -------------------------------------------------------------- HubWatcher

HubWatcher::HubWatcher(std::shared_ptr<WatchHub> hub, api::GroupResource resource, const WatchOptions& options,
                       size_t buffer_limit, int64_t start_revision)
    : hub_(std::move(hub)),
      resource_(std::move(resource)),
      ns_(options.ns),
      predicate_(options.predicate),
      notify_(options.notify),
      buffer_limit_(buffer_limit),
      start_revision_(start_revision) {}

bool HubWatcher::Matches(const api::Object& obj) const { return !predicate_ || predicate_(obj); }

HubWatcher::OfferResult HubWatcher::Offer(const HistoryEvent& ev, bool replay) {
  if (ev.revision <= start_revision_) return OfferResult::kQuiet;
  if (!ns_.empty() && ev.key.ns != ns_) return OfferResult::kQuiet;
  // The cacher's rule: evaluate the filter on the new and the old object.
  const bool cur_passes = ev.type != EventType::kDeleted && Matches(*ev.object);
  const bool old_passes = ev.prev != nullptr && Matches(*ev.prev);
  WatchEvent out;
  out.revision = ev.revision;
  if (cur_passes && !old_passes) {
    out.type = EventType::kAdded;
    out.object = ev.object;
  } else if (cur_passes && old_passes) {
    out.type = EventType::kModified;
    out.object = ev.object;
  } else if (old_passes) {
    out.type = EventType::kDeleted;
    if (ev.type == EventType::kDeleted) {
      out.object = ev.object;
    } else {
      // Left the selection: the old content at the event's revision.
      if (!ev.prev_at_revision) {
        api::Object copy = *ev.prev;
        SetResourceVersion(copy, ev.revision);
        ev.prev_at_revision = std::make_shared<const api::Object>(std::move(copy));
      }
      out.object = ev.prev_at_revision;
    }
  } else {
    return OfferResult::kQuiet;
  }

  std::lock_guard lock(mu_);
  if (is_closed_) return OfferResult::kQuiet;
  if (!replay && buffer_.size() >= buffer_limit_) {
    Close(GoneError("watch closed: the watcher fell more than " + std::to_string(buffer_limit_) +
                    " events behind; relist and watch again"),
          /*keep_buffer=*/false);
    return OfferResult::kClosed;
  }
  const bool was_empty = buffer_.empty();
  buffer_.push_back(std::move(out));
  if (was_empty) cv_.notify_all();
  return was_empty ? OfferResult::kNotify : OfferResult::kQuiet;
}

bool HubWatcher::Close(const Status& status, bool keep_buffer) {
  // Called with mu_ held.
  if (is_closed_) return false;
  is_closed_ = true;
  closed_ = status;
  if (!keep_buffer) buffer_.clear();
  cv_.notify_all();
  return true;
}

StatusOr<std::optional<WatchEvent>> HubWatcher::Next(Duration timeout) {
  std::unique_lock lock(mu_);
  if (buffer_.empty() && !is_closed_ && timeout > Duration::zero()) {
    cv_.wait_for(lock, timeout, [this] { return !buffer_.empty() || is_closed_; });
  }
  if (!buffer_.empty()) {
    WatchEvent ev = std::move(buffer_.front());
    buffer_.pop_front();
    return std::optional<WatchEvent>(std::move(ev));
  }
  if (is_closed_) return closed_;
  return std::optional<WatchEvent>();
}

int64_t HubWatcher::ProgressRevision() const {
  std::lock_guard lock(mu_);
  // The hub publishes the revision only after offering the events up to it,
  // and offering takes mu_: an empty buffer here means nothing <= published
  // is still on its way to this watcher.
  int64_t progress = buffer_.empty() ? hub_->PublishedRevision() : buffer_.front().revision - 1;
  return std::max(progress, start_revision_);
}

void HubWatcher::Stop() {
  {
    std::lock_guard nl(notify_mu_);  // waits for a running callback (unless it is ours)
    notify_enabled_ = false;
  }
  {
    std::lock_guard lock(mu_);
    if (!is_closed_) Close(UnavailableError("watch stopped"), /*keep_buffer=*/false);
  }
  hub_->Remove(this);
}

void HubWatcher::Notify() {
  std::lock_guard nl(notify_mu_);
  if (notify_enabled_ && notify_) notify_();
}

}  // namespace berth::store
