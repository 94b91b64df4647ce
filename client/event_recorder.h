// EventRecorder: how controllers write core/v1 Events, so that `kubectl
// describe <object>` and `kubectl get events` explain what happened, as
// client-go's tools/record EventRecorder (with its EventCorrelator's
// aggregation of identical events) does.
//
// An event about `object` (any api::Object with apiVersion, kind and
// metadata) is stored as
//   {"apiVersion":"v1","kind":"Event",
//    "metadata":{"name":"<object name>.<hex nanoseconds>","namespace":<ns>},
//    "involvedObject":{"apiVersion","kind","name","namespace","uid","resourceVersion"},
//    "reason":"FailedScheduling","message":"...","type":"Warning",
//    "source":{"component":"default-scheduler"[,"host":...]},
//    "reportingComponent":"default-scheduler","reportingInstance":<host>,
//    "firstTimestamp":..., "lastTimestamp":..., "count":1}
// in the object's namespace, or in "default" for a cluster-scoped object
// (upstream's convention; involvedObject.namespace stays empty). kubectl's
// describers find them with the field selector
// involvedObject.name=..,involvedObject.namespace=..,involvedObject.kind=..,involvedObject.uid=..
// (the API server serves those field labels).
//
// Aggregation (EventCorrelator's dedup): an event identical to one this
// recorder already wrote (same involved object uid/kind/name/namespace, type,
// reason, message and source) is not created again: the stored Event gets
// count + 1 and a new lastTimestamp (a JSON merge patch). If that Event is gone
// (deleted, expired), a new one is created. The cache is bounded
// (kMaxCachedEvents, oldest dropped first).
//
// Differences from client-go: events are written synchronously on the
// caller's thread (no broadcaster goroutine, no rate limiting), so tests see
// them at once; similar-but-different events are not folded into "combined
// from similar events" messages.
//
// Errors: the Client's (the event is not recorded). Controllers usually
// ignore them, as upstream's recorder does.
// Thread-safety: Record may be called from any number of threads.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "api/object.h"
#include "client/client.h"
#include "core/clock.h"

namespace berth::client {

// core/v1 Event types.
inline constexpr std::string_view kEventTypeNormal = "Normal";
inline constexpr std::string_view kEventTypeWarning = "Warning";

class EventRecorder {
 public:
  static constexpr size_t kMaxCachedEvents = 4096;

  // `component` is the source (e.g. "default-scheduler", "kueue-admission");
  // `host` the optional source.host / reportingInstance (a node name).
  EventRecorder(Client& client, Clock& clock, std::string component, std::string host = "");

  // Records an event of `type` (kEventTypeNormal or kEventTypeWarning) about
  // `object`.
  Status Record(const api::Object& object, std::string_view type, std::string_view reason,
                std::string_view message);

  // The resource events are written to.
  static const GroupVersionResource& EventsResource();

 private:
  struct Cached {
    std::string ns, name;
    int64_t count = 0;
    std::list<std::string>::iterator order;
  };

  Client& client_;
  Clock& clock_;
  const std::string component_;
  const std::string host_;
  std::mutex mu_;
  std::map<std::string, Cached> cache_;  // aggregation key -> stored event
  std::list<std::string> order_;         // keys, oldest first
};

}  // namespace berth::client
