// StreamSessions: the long-lived streaming sessions of one pod subresource
// (pods/exec and pods/attach in pod_exec.h, pods/portforward in pod_portforward.h),
// each a WebSocket served by a thread of its own.
//
//   - Slots: Acquire(pod key) takes one before the upgrade; it fails while
//     stopping or when `max_sessions` are open, or `max_per_pod` for that pod
//     (the limits are the caller's, documented in docs/security.md). The
//     session gives its slot back when it is destroyed.
//   - Threads: StreamSession::Start (the upgrade's start) registers the
//     session and runs its Run() on a new thread; Receive() gets the client's
//     messages on the connection's I/O thread. The thread sleeps in poll() on
//     wake_fd() among its own descriptors; Wake() makes that poll return.
//   - Stop(): no new slot or session; every session is woken (it sees
//     Stopping() and ends) and the threads are waited for, at most `wait`.
//
// Thread-safety: every method of StreamSessions may be called from any
// thread; a StreamSession's Wake() too. The sessions are shared_ptr-owned by
// their thread and their connection's callbacks, and share the registry's state,
// so a session that outlives its StreamSessions (a connection that ends after
// the server object) still gives its slot back safely.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "apiserver/http_server.h"

namespace berth::apiserver {

class StreamSessions;

class StreamSession : public std::enable_shared_from_this<StreamSession> {
 public:
  // Holds the slot `sessions.Acquire(key)` took.
  StreamSession(StreamSessions& sessions, std::string key);
  virtual ~StreamSession();  // gives the slot back
  StreamSession(const StreamSession&) = delete;
  StreamSession& operator=(const StreamSession&) = delete;

  // The upgrade's start: registers the session and starts its thread; while
  // stopping, closes the connection and returns an empty receiver.
  WebSocketReceiver Start(std::shared_ptr<WebSocketSession> ws);
  // Makes the session thread's poll on wake_fd() return.
  void Wake();

 protected:
  // The session, on its own thread; it ends the session (closes ws_) before it returns.
  virtual void Run() = 0;
  // A client message, on the connection's I/O thread; false pauses reading.
  virtual bool Receive(std::string message) = 0;
  // Stop() was called: Run() returns soon.
  bool Stopping() const;
  int wake_fd() const { return wake_; }
  // Consumes the wake-ups (after poll()).
  void DrainWake();

  std::shared_ptr<WebSocketSession> ws_;  // set by Start, before Run

 private:
  struct State;
  friend class StreamSessions;
  const std::shared_ptr<State> state_;  // the registry's
  const std::string key_;
  const int wake_;  // eventfd
};

class StreamSessions {
 public:
  StreamSessions(std::size_t max_sessions, std::size_t max_per_pod);
  ~StreamSessions() { Stop(); }

  // A slot for pod `key` ("namespace/name"); false while stopping or at a bound. An
  // `unbounded` requester (system:masters: the administrator must always be able to act)
  // is refused only while stopping; its slot still counts towards the others' bounds.
  bool Acquire(const std::string& key, bool unbounded = false);
  // Whether Acquire(key) would succeed now. A request berth will not upgrade (SPDY) is
  // answered TooMany when it would not: kubectl falls back to SPDY when its WebSocket is
  // refused, and must show why that was refused, not that berth wants a WebSocket.
  bool HasRoom(const std::string& key, bool unbounded = false) const;
  // Gives back a slot no session took (a StreamSession gives its own back).
  void Release(const std::string& key);
  // The answer when Acquire fails: 429 TooManyRequests, Retry-After 1, "too many <kind>
  // sessions: limit is N per server, M per pod".
  HttpResponse TooMany(const std::string& kind) const;
  // Ends every session and waits (real time, at most `wait`) for their threads.
  void Stop(std::chrono::milliseconds wait = std::chrono::seconds(5));
  bool Stopping() const;
  // Slots taken now.
  std::size_t open() const;

 private:
  friend class StreamSession;
  const std::shared_ptr<StreamSession::State> state_;
};

}  // namespace berth::apiserver
