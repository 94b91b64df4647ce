// EventRecorder: writes core/v1 Events about objects, as client-go's
// record.EventRecorder with its EventCorrelator, through client::Client only.
//
// An Event is created in the involved object's namespace ("default" for a
// cluster-scoped object, as client-go does) named "<object name>.<hex>" where
// hex is the Clock's Unix nanoseconds plus a per-recorder sequence (unique
// even when a FakeClock stands still). Shape written:
//   {"apiVersion":"v1","kind":"Event",
//    "metadata":{"name":..., "namespace":...},
//    "involvedObject":{"apiVersion","kind","name","namespace","uid","resourceVersion"},
//    "reason":"QuotaReserved","message":"...","type":"Normal"|"Warning",
//    "source":{"component":<component>},"reportingComponent":<component>,
//    "firstTimestamp":..., "lastTimestamp":..., "count":1}
// A repeat of the same (object uid, type, reason, message) by this recorder
// patches the existing Event (count + 1, lastTimestamp) instead of creating a
// new one, as the correlator's aggregation does.
//
// Errors: recording is best effort (as upstream): failures are logged and
// otherwise ignored.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "api/object.h"
#include "client/client.h"
#include "core/clock.h"

namespace berth::controllers {

inline constexpr char kEventTypeNormal[] = "Normal";
inline constexpr char kEventTypeWarning[] = "Warning";

class EventRecorder {
 public:
  EventRecorder(client::Client& client, Clock& clock, std::string component);

  // `object` is the involved object (apiVersion, kind and metadata are read).
  void Event(const api::Object& object, const std::string& type, const std::string& reason,
             const std::string& message);

 private:
  client::Client& client_;
  Clock& clock_;
  const std::string component_;
  std::mutex mu_;
  uint64_t seq_ = 0;
  // (uid, type, reason, message) -> (namespace, event name, count)
  std::map<std::tuple<std::string, std::string, std::string, std::string>,
           std::tuple<std::string, std::string, int64_t>>
      seen_;
};

}  // namespace berth::controllers
