#include "apiserver/per_user_limits.h"

#include <atomic>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "apiserver/status_response.h"

namespace berth::apiserver {

namespace detail {

struct PerUserState {
  PerUserState(std::size_t streams, std::size_t bytes) : max_long_running(streams), max_response_bytes(bytes) {}
  const std::size_t max_long_running;
  const std::size_t max_response_bytes;
  struct Held {
    std::size_t streams = 0;
    std::size_t bytes = 0;
  };
  mutable std::mutex mu;
  std::unordered_map<std::string, Held> held;  // guarded by mu; no entry holding nothing
};

}  // namespace detail

namespace {

using detail::PerUserState;

// What one answer holds of one user's budgets: given back once, when its stream ends,
// its response is written, or it is dropped.
class Hold {
 public:
  Hold(std::shared_ptr<PerUserState> state, std::string user, std::size_t streams, std::size_t bytes)
      : state_(std::move(state)), user_(std::move(user)), streams_(streams), bytes_(bytes) {}
  ~Hold() { Release(); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  void Release() {
    if (released_.exchange(true)) return;
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->held.find(user_);
    if (it == state_->held.end()) return;
    it->second.streams -= streams_;
    it->second.bytes -= bytes_;
    if (it->second.streams == 0 && it->second.bytes == 0) state_->held.erase(it);
  }

 private:
  std::shared_ptr<PerUserState> state_;
  std::string user_;
  std::size_t streams_, bytes_;
  std::atomic<bool> released_{false};
};

// `streams` long-running slots and `bytes` response bytes of `user`, or null past a bound.
// A response alone may pass the byte budget.
std::shared_ptr<Hold> Acquire(const std::shared_ptr<PerUserState>& state, const std::string& user, std::size_t streams,
                              std::size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(state->mu);
    auto [it, inserted] = state->held.try_emplace(user);
    PerUserState::Held& h = it->second;
    const bool refused = h.streams + streams > state->max_long_running ||
                         (bytes > 0 && h.bytes > 0 && h.bytes + bytes > state->max_response_bytes);
    if (refused) {
      if (inserted) state->held.erase(it);
      return nullptr;
    }
    h.streams += streams;
    h.bytes += bytes;
  }
  return std::make_shared<Hold>(state, user, streams, bytes);
}

// `answer` holding its budget, or the 429.
template <typename Answer>
Answer LimitAnswer(const std::shared_ptr<PerUserState>& state, const std::string& user, Answer answer) {
  return std::visit(
      [&](auto& a) -> Answer {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, StreamingResponse> || std::is_same_v<T, WebSocketUpgrade>) {
          std::shared_ptr<Hold> hold = Acquire(state, user, 1, 0);
          if (hold == nullptr) {
            return TooManyRequestsResponse(
                "too many long-running requests (watches, logs, exec, attach, port-forward) for user " + user +
                ": limit is " + std::to_string(state->max_long_running));
          }
          a.start = [inner = std::move(a.start), hold](auto session) {
            session->OnDone([hold] { hold->Release(); });
            return inner(std::move(session));
          };
          return std::move(a);
        } else if constexpr (std::is_same_v<T, DeferredResponse>) {
          a.start = [inner = std::move(a.start), state, user](std::function<void(ImmediateResult)> reply) {
            inner([state, user, reply = std::move(reply)](ImmediateResult r) {
              reply(LimitAnswer(state, user, std::move(r)));
            });
          };
          return std::move(a);
        } else {
          if (a.body.size() < kCountedResponseBytes) return std::move(a);
          std::shared_ptr<Hold> hold = Acquire(state, user, 0, a.body.size());
          if (hold == nullptr) {
            return TooManyRequestsResponse("too many bytes of responses being written to user " + user + ": limit is " +
                                           std::to_string(state->max_response_bytes));
          }
          a.hold = std::move(hold);
          return std::move(a);
        }
      },
      answer);
}

}  // namespace

PerUserLimits::PerUserLimits(std::size_t max_long_running, std::size_t max_response_bytes)
    : state_(std::make_shared<PerUserState>(max_long_running, max_response_bytes)) {}

PerUserLimits::~PerUserLimits() = default;

HandlerResult PerUserLimits::Limit(const std::string& user, HandlerResult result) {
  return LimitAnswer(state_, user, std::move(result));
}

std::size_t PerUserLimits::Open(const std::string& user) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->held.find(user);
  return it == state_->held.end() ? 0 : it->second.streams;
}

std::size_t PerUserLimits::ResponseBytes(const std::string& user) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->held.find(user);
  return it == state_->held.end() ? 0 : it->second.bytes;
}

}  // namespace berth::apiserver
