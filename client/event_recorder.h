// EventRecorder: writes core/v1 Events about objects through client::Client, as
// client-go's record.EventRecorder with its EventCorrelator
// (staging/src/k8s.io/client-go/tools/record/event.go, events_cache.go). Controllers and
// the node agent (the kubelet's recorder, source "kubelet" + the node name) share it.
//
// An Event is created in the involved object's namespace ("default" for a cluster-scoped
// object, as client-go does) named "<object name>.<hex>" where hex is the Clock's Unix
// nanoseconds plus a per-recorder sequence (unique even when a FakeClock stands still).
// Shape written:
//   {"apiVersion":"v1","kind":"Event",
//    "metadata":{"name":..., "namespace":...},
//    "involvedObject":{"apiVersion","kind","name","namespace","uid","resourceVersion",
//                      "fieldPath" (when given, e.g. "spec.containers{main}")},
//    "reason":"QuotaReserved","message":"...","type":"Normal"|"Warning",
//    "source":{"component":<component>, "host":<host> (when given)},
//    "reportingComponent":<component>,"reportingInstance":<host> (when given: client-go
//    sets reportingController/Instance from source, so the wide SOURCE column of
//    `kubectl get events` reads "kubelet, node-0" and "job-controller"),
//    "firstTimestamp":..., "lastTimestamp":..., "count":1}
//
// The correlator, in upstream's order (EventCorrelator.EventCorrelate):
//   1. Spam filter (EventSourceObjectSpamFilter): a token bucket per source + involved
//      object (component, host, kind, namespace, name, uid, apiVersion) holding
//      kEventSpamBurst tokens, refilled one per kEventSpamRefill; an Event finding the
//      bucket empty is dropped (not written at all). Repeats count too, as upstream.
//   2. Aggregation of similar Events (EventAggregator): when kEventAggregateMaxEvents
//      distinct messages with the same source, object (no fieldPath), type and reason
//      were seen within kEventAggregateInterval, the Event becomes one combined Event
//      per (source, object, type, reason) whose message is "(combined from similar
//      events): <first combined message>" and whose count grows with each further one.
//   3. Deduplication (eventLogger): a repeat of the same source, object (with fieldPath),
//      type, reason and message patches the existing Event (count + 1, lastTimestamp)
//      instead of creating a new one.
// Each of the three caches keeps at most kEventCacheEntries keys (least recently used
// dropped first; a dropped key starts afresh), so memory is bounded whatever the objects.
// With these, a crash-looping container adds at most one Event object per distinct
// message, and its count grows by at most one per kEventSpamRefill after the burst.
//
// Writing is asynchronous, as client-go's broadcaster (event.go: StartRecordingToSink over
// a watch.Broadcaster of maxQueuedEvents = 1000 with DropIfChannelFull): Event() runs the
// correlator and queues the write; one sender thread per recorder writes the queue in order
// (a repeat's patch after the create it patches). A caller never waits for the store: the
// node agent's container start and the controllers' reconciles do not pay for their Events.
// When kEventQueueLimit writes are queued, a further Event is dropped (logged). Flush()
// waits until everything queued is written; the destructor writes what is queued and stops.
//
// Errors: recording is best effort (as upstream): failures are logged and otherwise
// ignored; a write that throws loses its Event only, and the sender goes on.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "api/object.h"
#include "client/client.h"
#include "core/clock.h"

namespace berth::client {

inline constexpr char kEventTypeNormal[] = "Normal";
inline constexpr char kEventTypeWarning[] = "Warning";

// client-go tools/record/events_cache.go: defaultSpamBurst = 25, defaultSpamQPS = 1/300.
inline constexpr int kEventSpamBurst = 25;
inline constexpr Duration kEventSpamRefill = std::chrono::minutes(5);
// defaultAggregateMaxEvents = 10, defaultAggregateIntervalInSeconds = 600.
inline constexpr int kEventAggregateMaxEvents = 10;
inline constexpr Duration kEventAggregateInterval = std::chrono::minutes(10);
// maxLruCacheEntries = 4096 (each of the correlator's caches).
inline constexpr size_t kEventCacheEntries = 4096;
// event.go maxQueuedEvents = 1000: Event writes waiting for the sender thread.
inline constexpr size_t kEventQueueLimit = 1000;

class EventRecorder {
 public:
  // `component` is source.component ("job-controller", "kubelet"); `host` is
  // source.host ("" for controllers, the node name for the kubelet).
  EventRecorder(Client& client, Clock& clock, std::string component, std::string host = "");
  ~EventRecorder();  // writes what is queued, then stops the sender
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // `object` is the involved object (apiVersion, kind and metadata are read).
  void Event(const api::Object& object, const std::string& type, const std::string& reason, const std::string& message);
  // About a part of `object`: involvedObject.fieldPath (the kubelet's container
  // reference, "spec.containers{<name>}").
  void Event(const api::Object& object, std::string_view field_path, const std::string& type, const std::string& reason,
             const std::string& message);

  // Blocks until every Event recorded before the call has been written (or failed).
  void Flush();
  // Flush() on every recorder alive in this process: for tests, which read Events
  // through the client right after the action that recorded them, wherever the
  // recorder lives (a controller's, the node agent's).
  static void FlushAll();

 private:
  struct Cache;  // the correlator's three bounded caches
  // One queued write: a repeat (`patch_count` > 1) patches count and lastTimestamp of the
  // Event it repeats, and creates `event` afresh (count 1) when that one is gone.
  struct Write {
    std::string ns;
    api::Object event;
    int64_t patch_count = 0;
  };
  void Send();  // the sender thread
  void Deliver(Write& w);

  Client& client_;
  Clock& clock_;
  const std::string component_;
  const std::string host_;
  std::mutex mu_;  // guards the correlator's state and the queue
  uint64_t seq_ = 0;
  std::unique_ptr<Cache> cache_;
  std::condition_variable cv_;
  std::deque<Write> queue_;
  uint64_t queued_ = 0;   // writes ever queued
  uint64_t written_ = 0;  // writes done (ok or not)
  bool stopping_ = false;
  std::thread sender_;
};

}  // namespace berth::client
