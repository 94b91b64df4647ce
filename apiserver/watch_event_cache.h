// WatchEventCache: the encoded line of a watch event, made once and shared by
// every watch that sends the same event in the same form.
//
// A write that 100 watches see used to be converted and serialized 100 times.
// kube-apiserver's watch cache wraps each event's object in a cachingObject
// (staging/src/k8s.io/apiserver/pkg/storage/cacher/caching_object.go) that keeps
// one serialization per encoder, so the cost of an event is one encoding plus one
// copy per watcher. This cache does the same for berth's JSON watch lines.
//
// Key: the stored object (the store's ObjectPtr: one immutable object per
// revision, shared by every watcher it is offered to), the event type (the same
// object is ADDED to one watch and MODIFIED to another, depending on selectors)
// and the encoding (the API version it is converted to). The entry holds the
// ObjectPtr, so the address cannot be reused by another object while the entry
// lives.
//
// Bounds: at most `max_entries` lines and `max_bytes` of encoded lines; the
// oldest entries go first. Watchers receive an event within moments of each
// other, so a short memory serves them all; a watcher that lags past the bound
// encodes the event itself again (a miss, never a wrong answer).
//
// Thread-safety: Line may be called from any thread; `encode` runs without the
// cache's lock held (two threads missing the same key both encode; the first
// insert wins).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "store/store.h"

namespace berth::apiserver {

class WatchEventCache {
 public:
  // kube-apiserver keeps the serializations for as long as the watch cache holds
  // the event (its capacity, 100 to 1,000 events per resource by default); 4,096
  // lines and 32 MiB cover that for every resource together.
  static constexpr size_t kDefaultMaxEntries = 4096;
  static constexpr size_t kDefaultMaxBytes = size_t{32} << 20;

  explicit WatchEventCache(size_t max_entries = kDefaultMaxEntries, size_t max_bytes = kDefaultMaxBytes);

  // The line for `event` in the encoding named `encoding` (e.g. the API
  // version): the cached one, or encode(event), kept for the next watcher.
  std::shared_ptr<const std::string> Line(const store::WatchEvent& event, const std::string& encoding,
                                          const std::function<std::string(const store::WatchEvent&)>& encode);

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    size_t entries = 0;
    size_t bytes = 0;
  };
  Stats stats() const;

 private:
  using Key = std::tuple<const api::Object*, store::EventType, std::string>;
  struct Entry {
    store::ObjectPtr object;  // pins the key's address
    std::shared_ptr<const std::string> line;
  };

  const size_t max_entries_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::map<Key, Entry> entries_;  // guarded by mu_
  std::deque<Key> order_;         // insertion order, oldest first; guarded by mu_
  size_t bytes_ = 0;              // guarded by mu_
  uint64_t hits_ = 0;             // guarded by mu_
  uint64_t misses_ = 0;           // guarded by mu_
};

}  // namespace berth::apiserver
