#include "apiserver/stream_sessions.h"

#include "apiserver/status_response.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

namespace berth::apiserver {

// The registry's state, shared by the sessions (see the header).
struct StreamSession::State {
  State(std::size_t max_sessions, std::size_t max_per_pod) : max_sessions(max_sessions), max_per_pod(max_per_pod) {}
  const std::size_t max_sessions, max_per_pod;
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::size_t> per_pod;
  std::size_t open = 0;
  std::set<std::shared_ptr<StreamSession>> running;  // threads running
  bool stopping = false;

  bool HasRoomLocked(const std::string& key, bool unbounded) const {
    if (stopping) return false;
    if (unbounded) return true;
    if (open >= max_sessions) return false;
    auto it = per_pod.find(key);
    return it == per_pod.end() || it->second < max_per_pod;
  }
  void Release(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu);
    --open;
    if (--per_pod[key] == 0) per_pod.erase(key);
  }
};

StreamSession::StreamSession(StreamSessions& sessions, std::string key)
    : state_(sessions.state_), key_(std::move(key)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

StreamSession::~StreamSession() {
  if (wake_ >= 0) close(wake_);
  state_->Release(key_);
}

WebSocketReceiver StreamSession::Start(std::shared_ptr<WebSocketSession> ws) {
  ws_ = ws;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->stopping) {
      ws->Close();
      return {};
    }
    state_->running.insert(shared_from_this());
  }
  std::weak_ptr<StreamSession> weak = shared_from_this();
  ws->OnDone([weak] {
    if (auto self = weak.lock()) self->Wake();
  });
  std::thread([self = shared_from_this()] {
    self->Run();
    std::lock_guard<std::mutex> lock(self->state_->mu);
    self->state_->running.erase(self);
    self->state_->cv.notify_all();
  }).detach();
  return [weak](std::string message) {
    auto self = weak.lock();
    return self ? self->Receive(std::move(message)) : true;
  };
}

void StreamSession::Wake() {
  const uint64_t one = 1;
  (void)!write(wake_, &one, sizeof one);
}

void StreamSession::DrainWake() {
  uint64_t drained;
  (void)!read(wake_, &drained, sizeof drained);
}

bool StreamSession::Stopping() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stopping;
}

StreamSessions::StreamSessions(std::size_t max_sessions, std::size_t max_per_pod)
    : state_(std::make_shared<StreamSession::State>(max_sessions, max_per_pod)) {}

bool StreamSessions::HasRoom(const std::string& key, bool unbounded) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->HasRoomLocked(key, unbounded);
}

bool StreamSessions::Acquire(const std::string& key, bool unbounded) {
  std::lock_guard<std::mutex> lock(state_->mu);
  if (!state_->HasRoomLocked(key, unbounded)) return false;
  ++state_->open;
  ++state_->per_pod[key];
  return true;
}

void StreamSessions::Release(const std::string& key) { state_->Release(key); }

HttpResponse StreamSessions::TooMany(const std::string& kind) const {
  return TooManyRequestsResponse("too many " + kind + " sessions: limit is " + std::to_string(state_->max_sessions) +
                                 " per server, " + std::to_string(state_->max_per_pod) + " per pod");
}

void StreamSessions::Stop(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->stopping = true;
  for (const auto& session : state_->running) session->Wake();
  state_->cv.wait_for(lock, wait, [this] { return state_->running.empty(); });
}

bool StreamSessions::Stopping() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->stopping;
}

std::size_t StreamSessions::open() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->open;
}

}  // namespace berth::apiserver
