// WatchPump: moves store watch events onto HTTP response streams without a
// thread per watch.
//
// A store::Watcher signals new events through WatchOptions::notify (on the
// writer's thread). The pump's notify only marks the watch ready and wakes a
// pump thread; pump threads drain ready watches (TryNext until empty), encode
// each event with the watch's encoder and write it to the ResponseStream.
// So a write never waits for encoding or for slow clients, and 100 watches
// cost 100 queues, not 100 threads.
//
// A watch ends when its stream ends (client gone, timeoutSeconds, server
// stop): the watcher is stopped and dropped. When the store closes a watcher
// (kGone: the client fell behind or started from a compacted revision) the
// pump writes the encoder's error event and closes the stream, so the client
// relists, as kube-apiserver does.
//
// Bookmarks: a watch with `bookmark` set gets a BOOKMARK event carrying the
// watcher's ProgressRevision every `bookmark_interval` of Clock time, and one
// about 2 s before its timeout ends it (kube-apiserver's cacher,
// staging/src/k8s.io/apiserver/pkg/storage/cacher/cache_watcher.go
// nextBookmarkTime), so a client rewatching after the timeout starts from a
// revision still in the history even when its resource had no event for
// minutes while others had thousands. Due bookmarks are looked for once per
// second of real time, also while other watches keep the pump busy.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/http_server.h"
#include "core/clock.h"
#include "store/store.h"

namespace berth::apiserver {

struct WatchEncoders {
  // One event -> one chunk (a JSON line).
  std::function<std::string(const store::WatchEvent&)> event;
  // The object to hand over as it is to a stream that takes watch events
  // (ResponseStream::TakesWatchEvents), when `event` would encode exactly
  // that object (the watch's API version is the stored one, and not a Table);
  // null: write the encoded line. Empty = always encode.
  std::function<store::ObjectPtr(const store::WatchEvent&)> share;
  // The ERROR event for a closing status.
  std::function<std::string(const Status&)> error;
  // A BOOKMARK at a revision; empty = no bookmarks.
  std::function<std::string(int64_t revision)> bookmark;
};

// The notify callback of a watch opened before the pump knows it: calls are
// forwarded once Set() is called (a call before that is remembered and
// replayed by Set).
class NotifyRelay : public std::enable_shared_from_this<NotifyRelay> {
 public:
  // The callback keeps the relay alive; create relays with make_shared.
  std::function<void()> Callback();
  void Set(std::function<void()> fn);

 private:
  std::mutex mu_;
  std::function<void()> fn_;
  bool pending_ = false;
};

class WatchPump {
 public:
  WatchPump(Clock& clock, Duration bookmark_interval, int threads = 1);
  ~WatchPump();  // Stop()s.

  // Starts pumping `watcher` (opened with relay->Callback() as its notify)
  // into `stream`. `initial` chunks are written first, with WriteInitial (the
  // synthetic ADDED events of a watch from resourceVersion 0 or unset: as
  // large as a list, so outside the stream's byte bound for what follows).
  // kUnavailable when stopping. `timeout`: when the stream's timer (real
  // time) ends the watch, for the bookmark before it; zero = none.
  Status Add(std::unique_ptr<store::Watcher> watcher, std::shared_ptr<NotifyRelay> relay,
             std::vector<std::string> initial, WatchEncoders encoders,
             std::shared_ptr<ResponseStream> stream,
             std::chrono::milliseconds timeout = std::chrono::milliseconds::zero());

  // Ends every watch and joins the threads. Idempotent.
  void Stop();

  // Live watches (for tests and metrics).
  size_t size() const;

 private:
  struct Session;
  void Loop();
  void Drain(const std::shared_ptr<Session>& s);
  void MarkReady(const std::shared_ptr<Session>& s);
  void Remove(uint64_t id);

  Clock& clock_;
  const Duration bookmark_interval_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t next_id_ = 0;
  std::map<uint64_t, std::shared_ptr<Session>> sessions_;
  std::deque<std::shared_ptr<Session>> ready_;
  std::vector<std::thread> threads_;
};

}  // namespace berth::apiserver
