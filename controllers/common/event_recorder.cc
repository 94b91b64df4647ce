#include "controllers/common/event_recorder.h"

#include <fmt/format.h>

#include "core/logging.h"

namespace berth::controllers {

namespace {
const client::GroupVersionResource kEvents{"", "v1", "events"};
}

EventRecorder::EventRecorder(client::Client& client, Clock& clock, std::string component)
    : client_(client), clock_(clock), component_(std::move(component)) {}

void EventRecorder::Event(const api::Object& object, const std::string& type, const std::string& reason,
                          const std::string& message) {
  const Time now = clock_.Now();
  const std::string& obj_ns = api::Namespace(object);
  const std::string ns = obj_ns.empty() ? "default" : obj_ns;
  auto key = std::make_tuple(api::Uid(object), type, reason, message);
  std::string name;
  int64_t count = 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = seen_.find(key);
    if (it != seen_.end()) {
      name = std::get<1>(it->second);
      count = ++std::get<2>(it->second);
    } else {
      auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
      name = fmt::format("{}.{:x}", api::Name(object), static_cast<uint64_t>(nanos) + seq_++);
      seen_[key] = {ns, name, 1};
    }
  }
  const std::string ts = FormatRfc3339(now);
  if (count > 1) {
    api::Object patch = {{"count", count}, {"lastTimestamp", ts}};
    auto res = client_.Patch(kEvents.Namespace(ns), name, client::PatchType::kMerge, patch.dump());
    if (res.ok()) return;
    // The Event was deleted meanwhile: create a fresh one below.
    count = 1;
  }
  api::Object involved = {{"apiVersion", object.value("apiVersion", "")},
                          {"kind", object.value("kind", "")},
                          {"name", api::Name(object)},
                          {"uid", api::Uid(object)},
                          {"resourceVersion", api::ResourceVersion(object)}};
  if (!obj_ns.empty()) involved["namespace"] = obj_ns;
  api::Object ev = {{"apiVersion", "v1"},
                    {"kind", "Event"},
                    {"metadata", {{"name", name}, {"namespace", ns}}},
                    {"involvedObject", involved},
                    {"reason", reason},
                    {"message", message},
                    {"type", type},
                    {"source", {{"component", component_}}},
                    {"reportingComponent", component_},
                    {"reportingInstance", component_},
                    {"firstTimestamp", ts},
                    {"lastTimestamp", ts},
                    {"count", count}};
  auto res = client_.Create(kEvents.Namespace(ns), ev);
  if (!res.ok()) {
    Logger("controllers")->warn("event {} {} on {}/{} not recorded: {}", type, reason, ns, api::Name(object),
                                res.status().ToString());
  }
}

}  // namespace berth::controllers
