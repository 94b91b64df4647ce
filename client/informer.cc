#include "client/informer.h"

#include <algorithm>

#include "client/clock_wait.h"
#include "core/logging.h"
#include "core/this_thread.h"

namespace berth::client {

Informer::Informer(Client& client, ResourceRef ref, Clock& clock, InformerOptions options)
    : client_(client), ref_(std::move(ref)), clock_(clock), options_(std::move(options)) {}

Informer::~Informer() { Stop(); }

Status Informer::AddIndexer(const std::string& name, IndexFunc fn) {
  return indexer_.AddIndex(name, std::move(fn));
}

void Informer::AddEventHandler(ResourceEventHandler handler) {
  auto shared = std::make_shared<const ResourceEventHandler>(std::move(handler));
  std::lock_guard<std::mutex> l(mu_);
  HandlerEntry entry{shared, next_seq_};
  handlers_.push_back(entry);
  if (started_) {
    Notification n;
    n.kind = Notification::kReplay;
    n.replay = indexer_.List();
    n.target = shared;
    EnqueueLocked(std::move(n));
  }
}

void Informer::Start() {
  std::lock_guard<std::mutex> l(mu_);
  if (started_ || stopped_) return;
  started_ = true;
  // Named by resource ("r:" reflector, "d:" dispatcher), as ps -L and top -H show them.
  const std::string resource = ref_.gvr.resource;
  reflector_ = std::thread([this, resource] {
    SetCurrentThreadName("r:" + resource);
    RunReflector();
  });
  dispatcher_ = std::thread([this, resource] {
    SetCurrentThreadName("d:" + resource);
    RunDispatcher();
  });
}

void Informer::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = true;
    if (active_watch_) active_watch_->Stop();
    cv_.notify_all();
  }
  if (reflector_.joinable()) reflector_.join();
  if (dispatcher_.joinable()) dispatcher_.join();
}

bool Informer::HasSynced() const {
  std::lock_guard<std::mutex> l(mu_);
  return synced_;
}

bool Informer::WaitForCacheSync(Duration timeout) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, timeout, [&] { return synced_ || stopped_; });
  return synced_;
}

std::string Informer::LastSyncResourceVersion() const {
  std::lock_guard<std::mutex> l(mu_);
  return last_rv_;
}

void Informer::EnqueueLocked(Notification n) {
  n.seq = next_seq_++;
  pending_.push_back(std::move(n));
  cv_.notify_all();
}

Status Informer::ListAndReplace() {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.limit = options_.page_size;
  std::vector<ObjectPtr> items;
  std::string rv;
  for (;;) {
    StatusOr<SharedObjectList> page = client_.ListShared(ref_, lo);
    if (!page.ok()) {
      if (page.status().code() == Code::kGone && !lo.continue_token.empty()) {
        // The first page's revision was compacted: read everything at once.
        lo.limit = 0;
        lo.continue_token.clear();
        items.clear();
        rv.clear();
        continue;
      }
      return page.status();
    }
    if (rv.empty()) rv = page->resource_version;
    for (auto& item : page->items) items.push_back(std::move(item));
    if (page->continue_token.empty()) break;
    lo.continue_token = page->continue_token;
  }
  list_count_++;

  std::lock_guard<std::mutex> l(mu_);
  std::map<std::string, ObjectPtr> old;
  for (auto& obj : indexer_.List()) old.emplace(MetaNamespaceKey(*obj), std::move(obj));
  indexer_.Replace(items);
  const bool initial = !listed_once_;
  for (const auto& obj : items) {
    auto it = old.find(MetaNamespaceKey(*obj));
    Notification n;
    if (it == old.end()) {
      n.kind = Notification::kAdd;
      n.new_obj = obj;
      n.flag = initial;
    } else {
      bool changed = api::ResourceVersion(*it->second) != api::ResourceVersion(*obj);
      n.kind = Notification::kUpdate;
      n.old_obj = std::move(it->second);
      n.new_obj = obj;
      old.erase(it);
      if (!changed) continue;
    }
    EnqueueLocked(std::move(n));
  }
  for (auto& [key, obj] : old) {  // vanished while we were not watching
    Notification n;
    n.kind = Notification::kDelete;
    n.new_obj = std::move(obj);
    n.flag = true;
    EnqueueLocked(std::move(n));
  }
  if (initial) {
    Notification n;
    n.kind = Notification::kSynced;
    EnqueueLocked(std::move(n));
    listed_once_ = true;
  }
  last_rv_ = rv;
  return Status::Ok();
}

std::optional<Informer::Notification> Informer::ApplyEventLocked(const WatchEvent& event) {
  const std::string& rv = api::ResourceVersion(*event.object);
  if (!rv.empty()) last_rv_ = rv;
  Notification n;
  switch (event.type) {
    case WatchEventType::kBookmark:
    case WatchEventType::kError:
      return std::nullopt;
    case WatchEventType::kAdded:
    case WatchEventType::kModified: {
      const ObjectPtr& obj = event.object;
      ObjectPtr old = indexer_.Upsert(obj);
      n.kind = old ? Notification::kUpdate : Notification::kAdd;
      n.old_obj = std::move(old);
      n.new_obj = obj;
      break;
    }
    case WatchEventType::kDeleted: {
      indexer_.Remove(MetaNamespaceKey(*event.object));
      n.kind = Notification::kDelete;
      n.new_obj = event.object;
      break;
    }
  }
  return n;
}

void Informer::RunHandlersUnlocked(std::unique_lock<std::mutex>& l,
                                   const std::function<void(const std::vector<HandlerEntry>&)>& run) {
  std::vector<HandlerEntry> handlers = handlers_;
  delivering_ = true;
  l.unlock();
  run(handlers);
  l.lock();
  delivering_ = false;
}

void Informer::DeliverOrEnqueueLocked(std::unique_lock<std::mutex>& l, Notification n) {
  if (!pending_.empty() || delivering_) {
    EnqueueLocked(std::move(n));
    return;
  }
  // Nothing is queued before it and no handler runs: deliver here, in order, without
  // waking the dispatch thread.
  n.seq = next_seq_++;
  RunHandlersUnlocked(l, [&](const std::vector<HandlerEntry>& handlers) { Deliver(n, handlers); });
  // The dispatch thread waits for this delivery (e.g. with a resync due), or something
  // was queued meanwhile (a late handler's replay).
  if (awaiting_delivery_ || !pending_.empty()) cv_.notify_all();
}

Status Informer::WatchOnce(bool* made_progress) {
  WatchOptions wo;
  wo.label_selector = options_.label_selector;
  wo.field_selector = options_.field_selector;
  wo.timeout_seconds = options_.watch_timeout_seconds;
  wo.allow_watch_bookmarks = true;
  {
    std::lock_guard<std::mutex> l(mu_);
    wo.resource_version = last_rv_;
  }
  StatusOr<std::unique_ptr<WatchStream>> started = client_.Watch(ref_, wo);
  if (!started.ok()) return started.status();
  std::unique_ptr<WatchStream> watch = std::move(started).value();
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopped_) return Status::Ok();
    active_watch_ = watch.get();
  }
  Status result;
  for (;;) {
    // Stop() stops the stream, so this wait ends promptly; the timeout only
    // bounds how long a stream that ignores Stop could hold us.
    StatusOr<std::optional<WatchEvent>> next = watch->Next(std::chrono::seconds(1));
    std::unique_lock<std::mutex> l(mu_);
    if (stopped_) break;
    if (!next.ok()) break;  // the watch ended: re-watch from last_rv_
    if (!next->has_value()) continue;
    const WatchEvent& event = **next;
    if (event.type == WatchEventType::kError) {
      result = event.error.ok() ? InternalError("watch ERROR event without a Status") : event.error;
      break;
    }
    std::optional<Notification> n = ApplyEventLocked(event);
    *made_progress = true;
    if (n) DeliverOrEnqueueLocked(l, std::move(*n));
  }
  std::lock_guard<std::mutex> l(mu_);
  active_watch_ = nullptr;
  return result;
}

void Informer::BackoffWait(Duration* backoff) {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, *backoff, [&] { return stopped_; });
  *backoff = std::min(*backoff * 2, options_.max_backoff);
}

void Informer::RunReflector() {
  Duration backoff = options_.min_backoff;
  bool need_list = true;
  auto stopped = [&] {
    std::lock_guard<std::mutex> l(mu_);
    return stopped_;
  };
  while (!stopped()) {
    if (need_list) {
      Status s = ListAndReplace();
      if (stopped()) break;
      if (!s.ok()) {
        Logger("client")->warn("informer {}: list failed: {}", ref_.gvr.String(), s.ToString());
        BackoffWait(&backoff);
        continue;
      }
      need_list = false;
      backoff = options_.min_backoff;
    }
    bool progress = false;
    Status s = WatchOnce(&progress);
    if (stopped()) break;
    if (progress) backoff = options_.min_backoff;
    if (s.code() == Code::kGone) {
      Logger("client")->info("informer {}: watch expired ({}), relisting", ref_.gvr.String(), s.message());
      need_list = true;
      continue;
    }
    if (!s.ok()) Logger("client")->warn("informer {}: watch failed: {}", ref_.gvr.String(), s.ToString());
    // A watch that ended without delivering anything is paced, so a server
    // that closes every watch at once cannot make us spin.
    if (!s.ok() || !progress) BackoffWait(&backoff);
  }
}

void Informer::Deliver(const Notification& n, const std::vector<HandlerEntry>& handlers) {
  // A handler that throws on one object (an odd field of a stored object) is logged and
  // the others still get it: the dispatch thread must not die, which ends the process.
  auto guarded = [this](const ObjectPtr& obj, const std::function<void()>& call) {
    try {
      call();
    } catch (const std::exception& e) {
      Logger("client")->error("informer {}: a handler threw on {}: {}", ref_.gvr.String(),
                              obj ? MetaNamespaceKey(*obj) : std::string("?"), e.what());
    }
  };
  if (n.kind == Notification::kReplay) {
    if (n.target->on_add) {
      for (const auto& obj : n.replay) guarded(obj, [&] { n.target->on_add(obj, true); });
    }
    return;
  }
  for (const auto& entry : handlers) {
    if (entry.first_seq > n.seq) continue;
    const ResourceEventHandler& h = *entry.handler;
    switch (n.kind) {
      case Notification::kAdd:
        if (h.on_add) guarded(n.new_obj, [&] { h.on_add(n.new_obj, n.flag); });
        break;
      case Notification::kUpdate:
        if (h.on_update) guarded(n.new_obj, [&] { h.on_update(n.old_obj, n.new_obj); });
        break;
      case Notification::kDelete:
        if (h.on_delete) guarded(n.new_obj, [&] { h.on_delete(n.new_obj, n.flag); });
        break;
      default:
        break;
    }
  }
}

bool Informer::NotificationsDelivered() const {
  std::lock_guard<std::mutex> l(mu_);
  return pending_.empty() && !delivering_;
}

void Informer::RunDispatcher() {
  std::unique_lock<std::mutex> l(mu_);
  std::optional<Time> next_resync;
  while (!stopped_) {
    if (delivering_) {  // the reflector delivers an event itself; it notifies when done
      awaiting_delivery_ = true;
      cv_.wait(l);
      awaiting_delivery_ = false;
      continue;
    }
    if (!pending_.empty()) {
      Notification n = std::move(pending_.front());
      pending_.pop_front();
      if (n.kind == Notification::kSynced) {
        synced_ = true;
        cv_.notify_all();
        continue;
      }
      RunHandlersUnlocked(l, [&](const std::vector<HandlerEntry>& handlers) { Deliver(n, handlers); });
      continue;
    }
    if (synced_ && options_.resync_period > Duration::zero()) {
      Time now = clock_.Now();
      if (!next_resync) next_resync = now + options_.resync_period;
      if (now >= *next_resync) {
        std::vector<ObjectPtr> objects = indexer_.List();
        RunHandlersUnlocked(l, [&](const std::vector<HandlerEntry>& handlers) {
          for (const auto& obj : objects) {
            for (const auto& entry : handlers) {
              if (entry.handler->on_update) entry.handler->on_update(obj, obj);
            }
          }
        });
        // Scheduled from the instant this resync fired, not from after its
        // handlers ran: a clock advanced while they ran must not push the
        // next resync a whole period further.
        next_resync = now + options_.resync_period;
        continue;
      }
    }
    internal::WaitForClock(cv_, l, clock_, next_resync, options_.clock_poll_interval);
  }
}

// ---------------------------------------------------------------------------

SharedInformerFactory::SharedInformerFactory(Client& client, Clock& clock,
                                             InformerOptions default_options)
    : client_(client), clock_(clock), default_options_(std::move(default_options)) {}

SharedInformerFactory::~SharedInformerFactory() { Shutdown(); }

Informer& SharedInformerFactory::ForResource(const ResourceRef& ref) {
  return ForResource(ref, default_options_);
}

Informer& SharedInformerFactory::ForResource(const ResourceRef& ref, const InformerOptions& options) {
  std::lock_guard<std::mutex> l(mu_);
  auto& slot = informers_[ref];
  if (!slot) slot = std::make_unique<Informer>(client_, ref, clock_, options);
  return *slot;
}

void SharedInformerFactory::Start() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [ref, informer] : informers_) informer->Start();
}

bool SharedInformerFactory::WaitForCacheSync(Duration timeout) {
  std::vector<Informer*> all;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [ref, informer] : informers_) all.push_back(informer.get());
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (Informer* informer : all) {
    auto left = std::chrono::duration_cast<Duration>(deadline - std::chrono::steady_clock::now());
    if (!informer->WaitForCacheSync(std::max(left, Duration::zero()))) return false;
  }
  return true;
}

std::vector<std::string> SharedInformerFactory::Unsynced() {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::string> out;
  for (auto& [ref, informer] : informers_) {
    if (!informer->HasSynced()) out.push_back(informer->resource().gvr.String());
  }
  return out;
}

void SharedInformerFactory::Shutdown() {
  std::lock_guard<std::mutex> l(mu_);
  for (auto& [ref, informer] : informers_) informer->Stop();
}

}  // namespace berth::client
