#include "apiserver/per_user_limits.h"

#include <atomic>
#include <mutex>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>

#include "apiserver/status_response.h"

namespace berth::apiserver {

namespace detail {

struct PerUserState {
  PerUserState(std::size_t streams, std::size_t bytes, std::size_t sessions)
      : max_long_running(streams), max_response_bytes(bytes), max_sessions(sessions) {}
  const std::size_t max_long_running;
  const std::size_t max_response_bytes;
  const std::size_t max_sessions;
  // What one answer holds, and what one user holds in all.
  struct Held {
    std::size_t streams = 0;
    std::size_t bytes = 0;
    std::size_t sessions = 0;
    bool empty() const { return streams == 0 && bytes == 0 && sessions == 0; }
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
  Hold(std::shared_ptr<PerUserState> state, std::string user, PerUserState::Held held)
      : state_(std::move(state)), user_(std::move(user)), held_(held) {}
  ~Hold() { Release(); }
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  void Release() {
    if (released_.exchange(true)) return;
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->held.find(user_);
    if (it == state_->held.end()) return;
    it->second.streams -= held_.streams;
    it->second.bytes -= held_.bytes;
    it->second.sessions -= held_.sessions;
    if (it->second.empty()) state_->held.erase(it);
  }

 private:
  std::shared_ptr<PerUserState> state_;
  std::string user_;
  const PerUserState::Held held_;
  std::atomic<bool> released_{false};
};

// What `user` holds now (nothing when it has no entry). The caller holds state.mu.
PerUserState::Held HeldByLocked(const PerUserState& state, const std::string& user) {
  auto it = state.held.find(user);
  return it == state.held.end() ? PerUserState::Held{} : it->second;
}

// What refused an Acquire.
enum class Refusal { kNone, kStreams, kBytes, kSessions };

constexpr std::string_view kServiceAccountsKeyPrefix = "system:serviceaccounts:";

// How a 429 names the budget of `key` (LimitKeyOf).
std::string Who(const std::string& key) {
  if (key.starts_with(kServiceAccountsKeyPrefix)) {
    return "the service accounts of namespace " + key.substr(kServiceAccountsKeyPrefix.size());
  }
  return "user " + key;
}

HttpResponse TooMany(const PerUserState& state, const std::string& key, Refusal why) {
  const std::string who = Who(key);
  switch (why) {
    case Refusal::kBytes:
      return TooManyRequestsResponse("too many bytes of responses being written to " + who + ": limit is " +
                                     std::to_string(state.max_response_bytes));
    case Refusal::kSessions:
      return TooManyRequestsResponse("too many exec, attach and port-forward sessions for " + who + ": limit is " +
                                     std::to_string(state.max_sessions));
    default:
      return TooManyRequestsResponse("too many long-running requests (watches, logs, exec, attach, port-forward) for " +
                                     who + ": limit is " + std::to_string(state.max_long_running));
  }
}

// Why `want` more would pass one of `held`'s bounds. A response alone may pass the byte budget.
Refusal Check(const PerUserState& state, const PerUserState::Held& held, const PerUserState::Held& want) {
  if (held.streams + want.streams > state.max_long_running) return Refusal::kStreams;
  if (held.sessions + want.sessions > state.max_sessions) return Refusal::kSessions;
  if (want.bytes > 0 && held.bytes > 0 && held.bytes + want.bytes > state.max_response_bytes) return Refusal::kBytes;
  return Refusal::kNone;
}

// `want` of `user`'s budgets, or the 429 of the bound it would pass.
std::variant<std::shared_ptr<Hold>, HttpResponse> Acquire(const std::shared_ptr<PerUserState>& state,
                                                          const std::string& user, PerUserState::Held want) {
  {
    std::lock_guard<std::mutex> lock(state->mu);
    auto [it, inserted] = state->held.try_emplace(user);
    PerUserState::Held& h = it->second;
    if (const Refusal why = Check(*state, h, want); why != Refusal::kNone) {
      if (inserted) state->held.erase(it);
      return TooMany(*state, user, why);
    }
    h.streams += want.streams;
    h.bytes += want.bytes;
    h.sessions += want.sessions;
  }
  return std::make_shared<Hold>(state, user, want);
}

// `answer` holding its budget, or the 429.
template <typename Answer>
Answer LimitAnswer(const std::shared_ptr<PerUserState>& state, const std::string& user, Answer answer) {
  return std::visit(
      [&](auto& a) -> Answer {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, StreamingResponse> || std::is_same_v<T, WebSocketUpgrade>) {
          // Every WebSocketUpgrade is a pods/exec, attach or port-forward session.
          auto held = Acquire(state, user, {1, 0, std::is_same_v<T, WebSocketUpgrade> ? 1u : 0u});
          if (auto* refused = std::get_if<HttpResponse>(&held)) return std::move(*refused);
          a.start = [inner = std::move(a.start), hold = std::get<std::shared_ptr<Hold>>(held)](auto session) {
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
          auto held = Acquire(state, user, {0, a.body.size(), 0});
          if (auto* refused = std::get_if<HttpResponse>(&held)) return std::move(*refused);
          a.hold = std::get<std::shared_ptr<Hold>>(std::move(held));
          return std::move(a);
        }
      },
      answer);
}

}  // namespace

std::optional<std::string> LimitKeyOf(const authn::UserInfo& user) {
  if (authn::IsSystemMaster(user)) return std::nullopt;
  if (auto sa = authn::SplitServiceAccountUsername(user.name)) {
    return std::string(kServiceAccountsKeyPrefix) + std::string(sa->first);
  }
  return user.name;
}

PerUserLimits::PerUserLimits(std::size_t max_long_running, std::size_t max_response_bytes, std::size_t max_sessions)
    : state_(std::make_shared<PerUserState>(max_long_running, max_response_bytes, max_sessions)) {}

PerUserLimits::~PerUserLimits() = default;

HandlerResult PerUserLimits::Limit(const std::string& user, HandlerResult result) {
  return LimitAnswer(state_, user, std::move(result));
}

std::optional<HttpResponse> PerUserLimits::RefuseSession(const std::string& user) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  const Refusal why = Check(*state_, HeldByLocked(*state_, user), {1, 0, 1});
  if (why == Refusal::kNone) return std::nullopt;
  return TooMany(*state_, user, why);
}

std::size_t PerUserLimits::Sessions(const std::string& user) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return HeldByLocked(*state_, user).sessions;
}

std::size_t PerUserLimits::Open(const std::string& user) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return HeldByLocked(*state_, user).streams;
}

std::size_t PerUserLimits::ResponseBytes(const std::string& user) const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return HeldByLocked(*state_, user).bytes;
}

}  // namespace berth::apiserver
