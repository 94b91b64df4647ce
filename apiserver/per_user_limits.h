// PerUserLimits: what one user's requests may hold of the server's connections and
// memory at once, so that one client cannot lock the others out or exhaust the server.
//
// Three budgets per user. The user is the one authenticated, after impersonation, with two
// exceptions (LimitKeyOf): every ServiceAccount of a namespace shares one budget, so that a
// tenant who may create ServiceAccounts and their tokens (or impersonate them, as `edit`
// may) cannot multiply its share by minting identities; and members of system:masters are
// not limited, as API Priority and Fairness exempts that group (its `exempt` FlowSchema),
// so the cluster's administrator can always act. The 429s name the budget: "user alice",
// or "the service accounts of namespace team-a".
//   - long-running requests: answers that keep their connection after the handler
//     returns, a StreamingResponse (watch, `logs -f`) or a WebSocketUpgrade (exec,
//     attach, port-forward), also when a DeferredResponse (a relay to a remote node)
//     replies with one. Each holds one of the server's kMaxConnections (http_server.h)
//     for as long as it lasts; at most `max_long_running` per user. Beyond it:
//       429 "too many long-running requests (watches, logs, exec, attach, port-forward)
//            for user <name>: limit is 1024"
//   - interactive sessions: pods/exec, attach and port-forward (a WebSocketUpgrade, also
//     when a relay replies with one), each a thread and often a process of the server's
//     kMaxExecSessions / kMaxPortForwardSessions; at most `max_sessions` per user, so one
//     user cannot take every session of the server. Beyond it:
//       429 "too many exec, attach and port-forward sessions for user <name>: limit is 32"
//     (the server's own session bounds, stream_sessions.h, come on top of it)
//     RefuseSession(user) gives that answer before the request is served, whatever its
//     protocol: kubectl, refused a WebSocket, falls back to SPDY, and the SPDY request
//     gets the same 429 rather than "berth serves exec over WebSocket only".
//   - bytes of whole responses being written: a response body of at least
//     kCountedResponseBytes holds its size of the user's budget until the connection
//     has written it (or given up at the write timeout: a LIST of 60 MB to a client
//     that does not read is held a minute). At most `max_response_bytes` per user;
//     the response that would pass it is dropped and answered
//       429 "too many bytes of responses being written to user <name>: limit is
//            268435456"
//     (so the memory held is at most the budget plus the responses being built, one per
//     I/O thread). A single response larger than the budget is always sent when the
//     user holds nothing else.
// Every 429 carries Retry-After: 1, which client-go meets with its back-off. A slot or
// byte count is given back when its stream ends (ResponseStreamBase::OnDone), when its
// response has been written, or when the answer is dropped unstarted.
//
// Upstream: kube-apiserver's API Priority and Fairness shares the server's concurrency
// among flows (per user within a FlowSchema; staging/src/k8s.io/apiserver/pkg/util/
// flowcontrol/apf_filter.go), counts a watch only while it initializes and weighs a
// LIST by the objects it may return (its "width"); the connections and buffers it holds
// are bounded by file descriptors and memory alone. berth, which serves HTTP/1.1 (one
// connection per stream) under a connection cap and writes a response whole, bounds
// what each user holds instead. The server's own controllers (in-process requests) are
// not limited: they hold no connection and take objects, not text.
//
// Thread-safety: every method may be called from any thread; budgets may be given back
// after the PerUserLimits is destroyed.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "apiserver/http_server.h"
#include "apiserver/pod_exec.h"
#include "authn/user_info.h"

namespace berth::apiserver {

namespace detail {
struct PerUserState;  // the counts, shared with the slots (per_user_limits.cc)
}  // namespace detail

// A quarter of kMaxConnections: four users at their bound still leave room, and a
// client-go program holds one watch per informer (tens).
inline constexpr std::size_t kMaxLongRunningRequestsPerUser = kMaxConnections / 4;
// A quarter of a server's exec (or port-forward) sessions: four users at their bound
// fill it. Interactive shells and `kubectl cp` take one each.
inline constexpr std::size_t kMaxSessionsPerUser = kMaxExecSessions / 4;
// 256 MiB: four full LISTs at the 64 MiB a response of 10,000 objects of 6 KB reaches.
inline constexpr std::size_t kMaxResponseBytesPerUser = std::size_t{256} << 20;
// Responses smaller than this (every GET, create, update, patch of one object, small
// LISTs) are not counted.
inline constexpr std::size_t kCountedResponseBytes = std::size_t{64} << 10;

// The budget `user`'s requests count against: "system:serviceaccounts:<namespace>" for a
// ServiceAccount, the user's name otherwise; nothing for a member of system:masters.
std::optional<std::string> LimitKeyOf(const authn::UserInfo& user);

class PerUserLimits {
 public:
  explicit PerUserLimits(std::size_t max_long_running = kMaxLongRunningRequestsPerUser,
                         std::size_t max_response_bytes = kMaxResponseBytesPerUser,
                         std::size_t max_sessions = kMaxSessionsPerUser);
  ~PerUserLimits();
  PerUserLimits(const PerUserLimits&) = delete;
  PerUserLimits& operator=(const PerUserLimits&) = delete;

  // `user` in these methods is a budget's key (LimitKeyOf).
  // `result`, holding `user`'s budget while it is written or streams; or a 429 above.
  HandlerResult Limit(const std::string& user, HandlerResult result);
  // The 429 for a pods/exec, attach or port-forward request of `user` who holds
  // max_sessions sessions, or max_long_running long-running requests, already; nothing
  // when there is room (Limit counts the session).
  std::optional<HttpResponse> RefuseSession(const std::string& user) const;
  // The long-running requests `user` holds open now.
  std::size_t Open(const std::string& user) const;
  // The bytes of `user`'s responses being written now.
  std::size_t ResponseBytes(const std::string& user) const;
  // The exec, attach and port-forward sessions `user` holds open now.
  std::size_t Sessions(const std::string& user) const;

 private:
  std::shared_ptr<detail::PerUserState> state_;
};

}  // namespace berth::apiserver
