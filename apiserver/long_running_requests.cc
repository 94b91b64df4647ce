#include "apiserver/long_running_requests.h"

#include <atomic>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "apiserver/status_response.h"

namespace berth::apiserver {

namespace detail {

struct LongRunningState {
  explicit LongRunningState(std::size_t max) : max_per_user(max) {}
  const std::size_t max_per_user;
  mutable std::mutex mu;
  std::unordered_map<std::string, std::size_t> open;  // guarded by mu; no zero entries
};

}  // namespace detail

namespace {

// One user's slot: given back once, when its stream ends or when it is dropped.
class Slot {
 public:
  Slot(std::shared_ptr<detail::LongRunningState> state, std::string user)
      : state_(std::move(state)), user_(std::move(user)) {}
  ~Slot() { Release(); }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  void Release();

 private:
  std::shared_ptr<detail::LongRunningState> state_;
  std::string user_;
  std::atomic<bool> released_{false};
};

}  // namespace

void Slot::Release() {
  if (released_.exchange(true)) return;
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->open.find(user_);
  if (it != state_->open.end() && --it->second == 0) state_->open.erase(it);
}

namespace {

// A slot of `user`, or null at the bound.
std::shared_ptr<Slot> Acquire(const std::shared_ptr<detail::LongRunningState>& state, const std::string& user) {
  {
    std::lock_guard<std::mutex> lock(state->mu);
    auto [it, inserted] = state->open.try_emplace(user, 0);
    if (it->second >= state->max_per_user) {
      if (inserted) state->open.erase(it);
      return nullptr;
    }
    ++it->second;
  }
  return std::make_shared<Slot>(state, user);
}

HttpResponse TooMany(const detail::LongRunningState& state, const std::string& user) {
  return TooManyRequestsResponse(
      "too many long-running requests (watches, logs, exec, attach, port-forward) for user " + user + ": limit is " +
      std::to_string(state.max_per_user));
}

// `answer` holding a slot when it is long-running, or the 429.
template <typename Answer>
Answer LimitAnswer(const std::shared_ptr<detail::LongRunningState>& state, const std::string& user, Answer answer) {
  return std::visit(
      [&](auto& a) -> Answer {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, StreamingResponse> || std::is_same_v<T, WebSocketUpgrade>) {
          std::shared_ptr<Slot> slot = Acquire(state, user);
          if (slot == nullptr) return TooMany(*state, user);
          a.start = [inner = std::move(a.start), slot](auto session) {
            session->OnDone([slot] { slot->Release(); });
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
          return std::move(a);
        }
      },
      answer);
}

}  // namespace

LongRunningRequests::LongRunningRequests(std::size_t max_per_user)
    : state_(std::make_shared<detail::LongRunningState>(max_per_user)) {}

LongRunningRequests::~LongRunningRequests() = default;

HandlerResult LongRunningRequests::Limit(const std::string& user, HandlerResult result) {
  return LimitAnswer(state_, user, std::move(result));
}

std::size_t LongRunningRequests::Open(const std::string& user) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->open.find(user);
  return it == state_->open.end() ? 0 : it->second;
}

}  // namespace berth::apiserver
