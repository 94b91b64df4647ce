#include "client/event_recorder.h"

#include <chrono>
#include <cstdio>
#include <utility>

namespace berth::client {

using nlohmann::json;

EventRecorder::EventRecorder(Client& client, Clock& clock, std::string component, std::string host)
    : client_(client), clock_(clock), component_(std::move(component)), host_(std::move(host)) {}

const GroupVersionResource& EventRecorder::EventsResource() {
  static const GroupVersionResource kEvents{"", "v1", "events"};
  return kEvents;
}

Status EventRecorder::Record(const api::Object& object, std::string_view type, std::string_view reason,
                             std::string_view message) {
  const Time now = clock_.Now();
  const std::string timestamp = FormatRfc3339(now);
  const std::string& obj_ns = api::Namespace(object);
  const std::string ns = obj_ns.empty() ? "default" : obj_ns;
  json involved = {{"apiVersion", object.value("apiVersion", "")},
                   {"kind", object.value("kind", "")},
                   {"name", api::Name(object)},
                   {"uid", api::Uid(object)}};
  if (!obj_ns.empty()) involved["namespace"] = obj_ns;
  if (!api::ResourceVersion(object).empty()) involved["resourceVersion"] = api::ResourceVersion(object);
  json source = {{"component", component_}};
  if (!host_.empty()) source["host"] = host_;

  // EventCorrelator's aggregation key: everything but the timestamps and count.
  const std::string key = json::array({involved["apiVersion"], involved["kind"], involved["name"], obj_ns,
                                       involved["uid"], type, reason, message, component_, host_})
                              .dump();
  const ResourceRef ref = EventsResource().Namespace(ns);
  std::unique_lock<std::mutex> lock(mu_);
  if (auto it = cache_.find(key); it != cache_.end()) {
    Cached& c = it->second;
    const int64_t count = c.count + 1;
    const std::string name = c.name;
    lock.unlock();
    json patch = {{"count", count}, {"lastTimestamp", timestamp}};
    auto patched = client_.Patch(ref, name, PatchType::kMerge, patch.dump());
    lock.lock();
    if (patched.ok()) {
      if (auto again = cache_.find(key); again != cache_.end()) again->second.count = count;
      return Status::Ok();
    }
    if (patched.status().code() != Code::kNotFound) return patched.status();
    // The stored event is gone: forget it and create a new one.
    if (auto again = cache_.find(key); again != cache_.end()) {
      order_.erase(again->second.order);
      cache_.erase(again);
    }
  }
  lock.unlock();

  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%llx",
                static_cast<unsigned long long>(
                    std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()));
  json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", api::Name(object) + suffix}, {"namespace", ns}}},
                {"involvedObject", std::move(involved)},
                {"reason", reason},
                {"message", message},
                {"type", type},
                {"source", std::move(source)},
                {"reportingComponent", component_},
                {"reportingInstance", host_},
                {"firstTimestamp", timestamp},
                {"lastTimestamp", timestamp},
                {"count", 1}};
  auto created = client_.Create(ref, event);
  if (!created.ok()) return created.status();

  lock.lock();
  if (cache_.contains(key)) return Status::Ok();  // a concurrent duplicate won the race
  order_.push_back(key);
  cache_[key] = Cached{ns, api::Name(*created), 1, std::prev(order_.end())};
  while (cache_.size() > kMaxCachedEvents) {
    cache_.erase(order_.front());
    order_.pop_front();
  }
  return Status::Ok();
}

}  // namespace berth::client
