// EncodingCache: the serialized text of a stored object, made once and shared
// by every response that sends the same object in the same form.
//
// A write that 100 watches see would be converted and serialized 100 times,
// and a page that many clients list would be serialized for each of them.
// kube-apiserver's watch cache wraps each object in a cachingObject
// (staging/src/k8s.io/apiserver/pkg/storage/cacher/caching_object.go) that
// keeps one serialization per encoder, so the cost of an object is one
// encoding plus one copy per response. berth keeps two such caches: the JSON
// lines of watch events (Line), and the JSON of objects answered by GET and
// LIST (Find/Insert).
//
// Key: the stored object (the store's ObjectPtr: one immutable object per
// revision, shared by every reader it is handed to) and a form: for a watch
// line the event type (the same object is ADDED to one watch and MODIFIED to
// another, depending on selectors) and the encoding (the API version it is
// converted to); for an object, the API version. The entry holds the
// ObjectPtr, so the address cannot be reused by another object while the
// entry lives.
//
// Bounds: at most `max_entries` texts and `max_bytes` of text; the oldest
// entries go first. A text over `max_bytes` is not kept. A reader that comes
// after its entry left encodes the object again (a miss, never a wrong
// answer).
//
// Thread-safety: every method may be called from any thread; encoding runs
// without the cache's lock held (two threads missing the same key both
// encode; the first insert wins).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "store/store.h"

namespace berth::apiserver {

class EncodingCache {
 public:
  // kube-apiserver keeps the serializations for as long as the watch cache holds
  // the object (its capacity, 100 to 1,000 events per resource by default); 4,096
  // texts and 32 MiB cover that for every resource together.
  static constexpr size_t kDefaultMaxEntries = 4096;
  static constexpr size_t kDefaultMaxBytes = size_t{32} << 20;

  explicit EncodingCache(size_t max_entries = kDefaultMaxEntries, size_t max_bytes = kDefaultMaxBytes);

  // The text of `object` in `form`, or null when it is not cached.
  std::shared_ptr<const std::string> Find(const api::Object* object, const std::string& form);
  // Keeps `text` as the text of `object` in `form` (unless another thread kept
  // one first: that one is returned) and returns it.
  std::shared_ptr<const std::string> Insert(const store::ObjectPtr& object, const std::string& form, std::string text);

  // The watch line for `event` in the encoding named `encoding` (e.g. the API
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
  using Key = std::pair<const api::Object*, std::string>;
  struct Entry {
    store::ObjectPtr object;  // pins the key's address
    std::shared_ptr<const std::string> text;
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
