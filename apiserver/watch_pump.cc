#include "apiserver/watch_pump.h"

#include <atomic>
#include <utility>

namespace berth::apiserver {

struct WatchPump::Session {
  uint64_t id = 0;
  std::unique_ptr<store::Watcher> watcher;  // set once, before the session is shared
  std::shared_ptr<NotifyRelay> relay;
  WatchEncoders encoders;
  std::shared_ptr<ResponseStream> stream;
  std::atomic<bool> queued{false};
  std::atomic<bool> finished{false};
  std::mutex drain_mu;  // one drainer at a time keeps events in order
  Time last_bookmark{};
  // The bookmark before the timeout (real time, as the stream's timer); the
  // epoch when none is due.
  std::chrono::steady_clock::time_point pre_timeout_bookmark{};
};

WatchPump::WatchPump(Clock& clock, Duration bookmark_interval, int threads)
    : clock_(clock), bookmark_interval_(bookmark_interval) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Loop(); });
}

WatchPump::~WatchPump() { Stop(); }

size_t WatchPump::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

std::function<void()> NotifyRelay::Callback() {
  return [self = shared_from_this()] {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      if (!self->fn_) {
        self->pending_ = true;
        return;
      }
      fn = self->fn_;
    }
    fn();
  };
}

void NotifyRelay::Set(std::function<void()> fn) {
  bool pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = fn;
    pending = std::exchange(pending_, false);
  }
  if (pending) fn();
}

Status WatchPump::Add(std::unique_ptr<store::Watcher> watcher, std::shared_ptr<NotifyRelay> relay,
                      std::vector<std::string> initial, WatchEncoders encoders,
                      std::shared_ptr<ResponseStream> stream, std::chrono::milliseconds timeout) {
  auto s = std::make_shared<Session>();
  s->encoders = std::move(encoders);
  s->stream = stream;
  s->last_bookmark = clock_.Now();
  if (timeout > std::chrono::milliseconds::zero() && s->encoders.bookmark) {
    s->pre_timeout_bookmark = std::chrono::steady_clock::now() + timeout - std::chrono::seconds(2);
  }
  s->watcher = std::move(watcher);
  s->relay = relay;  // keeps the relay alive as long as the watcher
  std::weak_ptr<Session> weak = s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      s->watcher->Stop();
      stream->Close();
      return UnavailableError("the server is shutting down");
    }
    s->id = next_id_++;
    sessions_.emplace(s->id, s);
  }
  for (auto& chunk : initial) stream->WriteInitial(std::move(chunk));
  relay->Set([this, weak] {
    if (auto session = weak.lock()) MarkReady(session);
  });
  const uint64_t id = s->id;
  stream->OnDone([this, weak, id] {
    if (auto session = weak.lock()) {
      session->finished = true;
      session->watcher->Stop();
    }
    Remove(id);
  });
  MarkReady(s);  // events may already be buffered (replay from history)
  return Status::Ok();
}

void WatchPump::MarkReady(const std::shared_ptr<Session>& s) {
  if (s->queued.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ready_.push_back(s);
  }
  cv_.notify_one();
}

void WatchPump::Remove(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(id);
}

void WatchPump::Drain(const std::shared_ptr<Session>& s) {
  std::lock_guard<std::mutex> drain(s->drain_mu);
  s->queued = false;  // a notify from now on queues the session again
  if (s->finished || s->watcher == nullptr) return;
  for (;;) {
    auto next = s->watcher->TryNext();
    if (!next.ok()) {
      // kGone: fell behind or compacted -> tell the client to relist.
      // kUnavailable: stopped (stream already over) or store closed.
      if (next.status().code() == Code::kGone && s->encoders.error) {
        s->stream->Write(s->encoders.error(next.status()));
      }
      s->finished = true;
      s->stream->Close();
      return;
    }
    if (!next->has_value()) return;
    const store::WatchEvent& event = **next;
    store::ObjectPtr shared =
        s->encoders.share && s->stream->TakesWatchEvents() ? s->encoders.share(event) : nullptr;
    const bool written = shared ? s->stream->WriteWatchEvent(store::EventTypeName(event.type), std::move(shared))
                                : s->stream->Write(s->encoders.event(event));
    if (!written) {
      s->finished = true;
      s->watcher->Stop();
      return;
    }
  }
}

void WatchPump::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  auto last_tick = std::chrono::steady_clock::now();
  while (!stopping_) {
    if (ready_.empty()) {
      cv_.wait_for(lock, std::chrono::seconds(1));
    }
    if (stopping_) break;
    // Bookmarks, looked for at most once per second whether or not other
    // watches are ready: a busy pump must not starve the quiet watches'.
    const auto now_steady = std::chrono::steady_clock::now();
    if (now_steady - last_tick >= std::chrono::seconds(1)) {
      last_tick = now_steady;
      std::vector<std::shared_ptr<Session>> due;
      const Time now = clock_.Now();
      for (auto& [id, s] : sessions_) {
        if (!s->encoders.bookmark) continue;
        const bool pre_timeout = s->pre_timeout_bookmark != std::chrono::steady_clock::time_point{} &&
                                 now_steady >= s->pre_timeout_bookmark;
        if (pre_timeout || now - s->last_bookmark >= bookmark_interval_) {
          s->last_bookmark = now;
          if (pre_timeout) s->pre_timeout_bookmark = {};
          due.push_back(s);
        }
      }
      lock.unlock();
      for (auto& s : due) {
        Drain(s);  // events first, so the bookmark revision covers what was sent
        std::lock_guard<std::mutex> drain(s->drain_mu);
        if (!s->finished) s->stream->Write(s->encoders.bookmark(s->watcher->ProgressRevision()));
      }
      lock.lock();
      continue;
    }
    if (!ready_.empty()) {
      auto s = std::move(ready_.front());
      ready_.pop_front();
      lock.unlock();
      Drain(s);
      lock.lock();
    }
  }
}

void WatchPump::Stop() {
  std::map<uint64_t, std::shared_ptr<Session>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    sessions = sessions_;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
  for (auto& [id, s] : sessions) s->stream->Close();
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.clear();
  ready_.clear();
}

}  // namespace berth::apiserver
