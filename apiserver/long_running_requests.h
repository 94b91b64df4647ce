// LongRunningRequests: how many long-running requests one user may hold open at once.
//
// A long-running request is one whose answer keeps its connection after the handler
// returns: a StreamingResponse (watch, `logs -f`) or a WebSocketUpgrade (exec, attach,
// port-forward), also when a DeferredResponse (a relay to a remote node) replies with
// one. Each holds one of the server's kMaxConnections (http_server.h) for as long as it
// lasts, so without a bound per user one client holding streams would lock every other
// user out (the connection cap makes room only by closing idle keep-alive connections).
//
// Limit(user, result) passes `result` through when it is not long-running, or when the
// user holds fewer than `max_per_user` open; the slot it takes is given back when the
// stream ends (ResponseStreamBase::OnDone) or when the answer is dropped unstarted.
// Beyond the bound the answer is 429 TooManyRequests, Retry-After: 1,
//   "too many long-running requests (watches, logs, exec, attach, port-forward) for user
//    <name>: limit is 1024"
// which client-go's reflector meets with its back-off and a new watch later.
//
// Upstream: kube-apiserver's API Priority and Fairness shares the server's concurrency
// among flows (per user within a FlowSchema; staging/src/k8s.io/apiserver/pkg/util/
// flowcontrol/apf_filter.go), and counts a watch only while it initializes; the
// connections it holds are bounded by the file descriptors alone. berth, which serves
// HTTP/1.1 (one connection per stream) under a connection cap, bounds what each user
// holds instead. The server's own controllers (in-process requests) are not limited:
// they hold no connection.
//
// Thread-safety: every method may be called from any thread; slots may be given back
// after the LongRunningRequests is destroyed.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "apiserver/http_server.h"

namespace berth::apiserver {

namespace detail {
struct LongRunningState;  // the counts, shared with the slots (long_running_requests.cc)
}  // namespace detail

// A quarter of kMaxConnections: four users at their bound still leave nothing idle
// locked out, and a client-go program holds one watch per informer (tens).
inline constexpr std::size_t kMaxLongRunningRequestsPerUser = kMaxConnections / 4;

class LongRunningRequests {
 public:
  explicit LongRunningRequests(std::size_t max_per_user = kMaxLongRunningRequestsPerUser);
  ~LongRunningRequests();
  LongRunningRequests(const LongRunningRequests&) = delete;
  LongRunningRequests& operator=(const LongRunningRequests&) = delete;

  // `result`, holding one of `user`'s slots when it is long-running; or the 429 above.
  HandlerResult Limit(const std::string& user, HandlerResult result);
  // The long-running requests `user` holds open now.
  std::size_t Open(const std::string& user) const;

 private:
  std::shared_ptr<detail::LongRunningState> state_;
};

}  // namespace berth::apiserver
