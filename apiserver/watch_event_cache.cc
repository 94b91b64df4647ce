#include "apiserver/watch_event_cache.h"

namespace berth::apiserver {

WatchEventCache::WatchEventCache(size_t max_entries, size_t max_bytes)
    : max_entries_(max_entries), max_bytes_(max_bytes) {}

std::shared_ptr<const std::string> WatchEventCache::Line(
    const store::WatchEvent& event, const std::string& encoding,
    const std::function<std::string(const store::WatchEvent&)>& encode) {
  Key key{event.object.get(), event.type, encoding};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      ++hits_;
      return it->second.line;
    }
    ++misses_;
  }
  auto line = std::make_shared<const std::string>(encode(event));
  if (line->size() > max_bytes_) return line;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = entries_.try_emplace(key, Entry{event.object, line});
  if (!inserted) return it->second.line;
  order_.push_back(std::move(key));
  bytes_ += line->size();
  while (entries_.size() > max_entries_ || bytes_ > max_bytes_) {
    auto oldest = entries_.find(order_.front());
    bytes_ -= oldest->second.line->size();
    entries_.erase(oldest);
    order_.pop_front();
  }
  return line;
}

WatchEventCache::Stats WatchEventCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Stats{hits_, misses_, entries_.size(), bytes_};
}

}  // namespace berth::apiserver
