#include "apiserver/encoding_cache.h"

namespace berth::apiserver {

EncodingCache::EncodingCache(size_t max_entries, size_t max_bytes)
    : max_entries_(max_entries), max_bytes_(max_bytes) {}

std::shared_ptr<const std::string> EncodingCache::Find(const api::Object* object, const std::string& form) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(Key{object, form});
  if (it == entries_.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  return it->second.text;
}

std::shared_ptr<const std::string> EncodingCache::Insert(const store::ObjectPtr& object, const std::string& form,
                                                         std::string text) {
  auto shared = std::make_shared<const std::string>(std::move(text));
  if (shared->size() > max_bytes_) return shared;
  Key key{object.get(), form};
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = entries_.try_emplace(key, Entry{object, shared});
  if (!inserted) return it->second.text;
  order_.push_back(std::move(key));
  bytes_ += shared->size();
  while (entries_.size() > max_entries_ || bytes_ > max_bytes_) {
    auto oldest = entries_.find(order_.front());
    bytes_ -= oldest->second.text->size();
    entries_.erase(oldest);
    order_.pop_front();
  }
  return shared;
}

std::shared_ptr<const std::string> EncodingCache::Line(
    const store::WatchEvent& event, const std::string& encoding,
    const std::function<std::string(const store::WatchEvent&)>& encode) {
  const std::string form = std::string(store::EventTypeName(event.type)) + " " + encoding;
  if (auto line = Find(event.object.get(), form)) return line;
  return Insert(event.object, form, encode(event));
}

EncodingCache::Stats EncodingCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return Stats{hits_, misses_, entries_.size(), bytes_};
}

}  // namespace berth::apiserver
