#include "client/event_recorder.h"

#include <algorithm>
#include <exception>
#include <fmt/format.h>
#include <optional>
#include <set>

#include "core/logging.h"
#include "core/this_thread.h"

namespace berth::client {

namespace {

const GroupVersionResource kEvents{"", "v1", "events"};

// The recorders alive in this process, for FlushAll().
struct Registry {
  std::mutex mu;
  std::set<EventRecorder*> set;
};
Registry& LiveRecorders() {
  static Registry* registry = new Registry;  // never destroyed: recorders may outlive statics
  return *registry;
}

// A map that keeps at most `capacity` keys, dropping the least recently used
// (client-go's lru.Cache).
template <typename V>
class LruMap {
 public:
  explicit LruMap(size_t capacity) : capacity_(capacity) {}

  // The value of `key`, now the most recently used; nullptr when absent.
  V* Find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }
  // Inserts (or replaces) `key`, dropping the least recently used key when full.
  V& Put(const std::string& key, V value) {
    if (V* existing = Find(key)) return *existing = std::move(value);
    if (index_.size() >= capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, std::move(value));
    index_[key] = order_.begin();
    return order_.front().second;
  }
  size_t size() const { return index_.size(); }

 private:
  size_t capacity_;
  std::list<std::pair<std::string, V>> order_;  // most recent first
  std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index_;
};

// A token bucket (client-go's flowcontrol token bucket as the spam filter uses it).
struct SpamRecord {
  double tokens = kEventSpamBurst;
  Time last;
};

// Distinct messages seen for one aggregate key (events_cache.go aggregateRecord).
struct AggregateRecord {
  std::set<std::string> messages;
  Time last;
};

// (namespace, Event name, count) of the Event a repeat patches.
struct LoggedEvent {
  std::string ns;
  std::string name;
  int64_t count = 0;
};

std::string Join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) {
    out += p;
    out.push_back('\x1f');  // a separator no name contains
  }
  return out;
}

}  // namespace

struct EventRecorder::Cache {
  LruMap<SpamRecord> spam{kEventCacheEntries};
  LruMap<AggregateRecord> aggregate{kEventCacheEntries};
  LruMap<LoggedEvent> logged{kEventCacheEntries};
};

EventRecorder::EventRecorder(Client& client, Clock& clock, std::string component, std::string host)
    : client_(client),
      clock_(clock),
      component_(std::move(component)),
      host_(std::move(host)),
      cache_(std::make_unique<Cache>()),
      sender_([this] { Send(); }) {
  std::lock_guard<std::mutex> lock(LiveRecorders().mu);
  LiveRecorders().set.insert(this);
}

EventRecorder::~EventRecorder() {
  {
    std::lock_guard<std::mutex> lock(LiveRecorders().mu);
    LiveRecorders().set.erase(this);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  sender_.join();
}

void EventRecorder::Flush() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = queued_;
  cv_.wait(lock, [&] { return written_ >= target; });
}

void EventRecorder::FlushAll() {
  std::lock_guard<std::mutex> lock(LiveRecorders().mu);  // a recorder is not destroyed meanwhile
  for (EventRecorder* r : LiveRecorders().set) r->Flush();
}

void EventRecorder::Send() {
  SetCurrentThreadName("events");
  LowerCurrentThreadPriority(kReportingNice);  // Events only report
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is written
    Write w = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    try {
      Deliver(w);
    } catch (const std::exception& e) {  // best effort: this Event is lost, the sender goes on
      Logger("events")->error("event {} {} not recorded: {}", w.event.value("type", ""), w.event.value("reason", ""),
                              e.what());
    }
    lock.lock();
    ++written_;
    cv_.notify_all();
  }
}

void EventRecorder::Deliver(Write& w) {
  const std::string name = api::Name(w.event);
  if (w.patch_count > 1) {
    api::Object patch = {{"count", w.patch_count}, {"lastTimestamp", w.event["lastTimestamp"]}};
    auto res = client_.Patch(kEvents.Namespace(w.ns), name, PatchType::kMerge, patch.dump());
    if (res.ok()) return;
    // The Event was deleted meanwhile (or expired): create a fresh one below.
  }
  auto res = client_.Create(kEvents.Namespace(w.ns), w.event);
  if (!res.ok()) {
    Logger("events")->warn("event {} {} on {}/{} not recorded: {}", w.event.value("type", ""),
                           w.event.value("reason", ""), w.ns, w.event["involvedObject"].value("name", ""),
                           res.status().ToString());
  }
}

void EventRecorder::Event(const api::Object& object, const std::string& type, const std::string& reason,
                          const std::string& message) {
  Event(object, std::string_view(), type, reason, message);
}

void EventRecorder::Event(const api::Object& object, std::string_view field_path, const std::string& type,
                          const std::string& reason, const std::string& message_in) {
  const Time now = clock_.Now();
  const std::string& obj_ns = api::Namespace(object);
  const std::string ns = obj_ns.empty() ? "default" : obj_ns;
  const std::string api_version = object.value("apiVersion", "");
  const std::string kind = object.value("kind", "");
  const std::string& name = api::Name(object);
  const std::string& uid = api::Uid(object);
  const std::string object_key = Join({component_, host_, kind, obj_ns, name, uid, api_version});
  std::string message = message_in;
  std::string event_name;
  int64_t count = 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // 1. Spam filter: one token per Event, refilled at one per kEventSpamRefill.
    SpamRecord* spam = cache_->spam.Find(object_key);
    if (spam == nullptr) spam = &cache_->spam.Put(object_key, SpamRecord{kEventSpamBurst, now});
    const double refill = std::chrono::duration<double>(now - spam->last) / kEventSpamRefill;
    spam->tokens = std::min<double>(kEventSpamBurst, spam->tokens + std::max(0.0, refill));
    spam->last = std::max(spam->last, now);
    if (spam->tokens < 1) {
      Logger("events")->debug("event {} {} on {}/{} dropped by the spam filter", type, reason, ns, name);
      return;
    }
    spam->tokens -= 1;
    // 2. Aggregation of similar Events (distinct messages within the interval).
    const std::string aggregate_key = object_key + Join({type, reason});
    AggregateRecord* agg = cache_->aggregate.Find(aggregate_key);
    if (agg == nullptr || now - agg->last > kEventAggregateInterval) {
      agg = &cache_->aggregate.Put(aggregate_key, AggregateRecord{{}, now});
    }
    agg->messages.insert(message);
    agg->last = now;
    // Over the limit, every further Event of the key is one combined Event (keyed by the
    // aggregate key, its message the first combined one's); the set stays bounded.
    const bool combined = agg->messages.size() >= static_cast<size_t>(kEventAggregateMaxEvents);
    if (combined) {
      message = "(combined from similar events): " + message;
      agg->messages.erase(agg->messages.begin());
    }
    // 3. Deduplication: a repeat patches the Event it repeats.
    const std::string event_key =
        combined ? aggregate_key : object_key + Join({std::string(field_path), type, reason, message});
    if (LoggedEvent* logged = cache_->logged.Find(event_key)) {
      event_name = logged->name;
      count = ++logged->count;
    } else {
      auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
      event_name = fmt::format("{}.{:x}", name, static_cast<uint64_t>(nanos) + seq_++);
      cache_->logged.Put(event_key, LoggedEvent{ns, event_name, 1});
    }
  }
  const std::string ts = FormatRfc3339(now);
  api::Object involved = {{"apiVersion", api_version},
                          {"kind", kind},
                          {"name", name},
                          {"uid", uid},
                          {"resourceVersion", api::ResourceVersion(object)}};
  if (!obj_ns.empty()) involved["namespace"] = obj_ns;
  if (!field_path.empty()) involved["fieldPath"] = std::string(field_path);
  api::Object source = {{"component", component_}};
  if (!host_.empty()) source["host"] = host_;
  api::Object ev = {{"apiVersion", "v1"},
                    {"kind", "Event"},
                    {"metadata", {{"name", event_name}, {"namespace", ns}}},
                    {"involvedObject", involved},
                    {"reason", reason},
                    {"message", message},
                    {"type", type},
                    {"source", source},
                    {"reportingComponent", component_},
                    {"firstTimestamp", ts},
                    {"lastTimestamp", ts},
                    {"count", 1}};
  if (!host_.empty()) ev["reportingInstance"] = host_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= kEventQueueLimit) {
      Logger("events")->warn("event {} {} on {}/{} dropped: {} Events wait to be written", type, reason, ns, name,
                             queue_.size());
      return;
    }
    queue_.push_back(Write{ns, std::move(ev), count});
    ++queued_;
  }
  cv_.notify_all();
}

}  // namespace berth::client
