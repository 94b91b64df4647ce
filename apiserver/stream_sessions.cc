#include "apiserver/stream_sessions.h"

#include "apiserver/status_response.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

namespace berth::apiserver {

StreamSession::StreamSession(StreamSessions& sessions, std::string key)
    : sessions_(sessions), key_(std::move(key)), wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

StreamSession::~StreamSession() {
  if (wake_ >= 0) close(wake_);
  sessions_.Release(key_);
}

WebSocketReceiver StreamSession::Start(std::shared_ptr<WebSocketSession> ws) {
  ws_ = ws;
  if (!sessions_.Register(shared_from_this())) {
    ws->Close();
    return {};
  }
  std::weak_ptr<StreamSession> weak = shared_from_this();
  ws->OnDone([weak] {
    if (auto self = weak.lock()) self->Wake();
  });
  std::thread([self = shared_from_this()] {
    self->Run();
    self->sessions_.Unregister(self);
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

bool StreamSession::Stopping() const { return sessions_.Stopping(); }

bool StreamSessions::Acquire(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || open_ >= max_sessions_ || per_pod_[key] >= max_per_pod_) return false;
  ++open_;
  ++per_pod_[key];
  return true;
}

HttpResponse StreamSessions::TooMany(const std::string& kind) const {
  HttpResponse r = StatusResponse(UnavailableError("too many " + kind + " sessions: limit is " +
                                                   std::to_string(max_sessions_) + " per server, " +
                                                   std::to_string(max_per_pod_) + " per pod"));
  nlohmann::json body = nlohmann::json::parse(r.body);
  body["reason"] = "TooManyRequests";
  body["code"] = 429;
  r.status = 429;
  r.body = body.dump();
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

void StreamSessions::Release(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  --open_;
  if (--per_pod_[key] == 0) per_pod_.erase(key);
}

bool StreamSessions::Register(const std::shared_ptr<StreamSession>& session) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return false;
  running_.insert(session);
  return true;
}

void StreamSessions::Unregister(const std::shared_ptr<StreamSession>& session) {
  std::lock_guard<std::mutex> lock(mu_);
  running_.erase(session);
  cv_.notify_all();
}

void StreamSessions::Stop(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  for (const auto& session : running_) session->Wake();
  cv_.wait_for(lock, wait, [this] { return running_.empty(); });
}

bool StreamSessions::Stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

std::size_t StreamSessions::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return open_;
}

}  // namespace berth::apiserver
