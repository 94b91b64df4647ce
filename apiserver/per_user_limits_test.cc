// The bounds on what one user holds (per_user_limits.h): long-running requests, exec,
// attach and port-forward sessions, and response bytes; on their own and in the API server.
#include "apiserver/per_user_limits.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apiserver/remote_command.h"
#include "apiserver/testing/fake_executor.h"
#include "apiserver/testing/test_api_server.h"

namespace berth::apiserver {
namespace {

using nlohmann::json;

class EndableStream : public ResponseStreamBase {
 public:
  bool Write(std::string) override { return !Done(); }
  void Close() override { End(); }
};

StreamingResponse Stream() {
  StreamingResponse s;
  s.start = [](std::shared_ptr<ResponseStream>) {};
  return s;
}

bool IsTooMany(const HandlerResult& r, const std::string& user, std::size_t limit) {
  const auto* response = std::get_if<HttpResponse>(&r);
  if (response == nullptr || response->status != 429) return false;
  const json body = json::parse(response->body);
  bool retry_after = false;
  for (const auto& [name, value] : response->headers)
    retry_after = retry_after || (name == "Retry-After" && value == "1");
  return retry_after && body["reason"] == "TooManyRequests" &&
         body["message"] == "too many long-running requests (watches, logs, exec, attach, port-forward) for user " +
                                user + ": limit is " + std::to_string(limit);
}

// An upgrade, as pods/exec, attach and port-forward answer.
WebSocketUpgrade Session() {
  WebSocketUpgrade upgrade;
  upgrade.start = [](std::shared_ptr<WebSocketSession>) { return WebSocketReceiver(); };
  return upgrade;
}

// What a relay to a remote node (a DeferredResponse) limited for `user` replies, when the
// node answers `make()`.
template <typename Make>
std::optional<ImmediateResult> Relayed(PerUserLimits& limit, const std::string& user, Make make) {
  DeferredResponse relay;
  relay.start = [make](std::function<void(ImmediateResult)> reply) { reply(make()); };
  HandlerResult deferred = limit.Limit(user, std::move(relay));
  std::optional<ImmediateResult> replied;
  std::get<DeferredResponse>(deferred).start([&](ImmediateResult r) { replied = std::move(r); });
  return replied;
}

// Starts a limited StreamingResponse on a stream the test ends.
std::shared_ptr<EndableStream> Start(HandlerResult& r) {
  auto stream = std::make_shared<EndableStream>();
  std::get<StreamingResponse>(r).start(stream);
  return stream;
}

TEST(PerUserLimitsTest, EachUserHoldsAtMostTheBoundOfEveryKindOfStream) {
  PerUserLimits limit(3);
  std::vector<HandlerResult> alice;
  alice.push_back(limit.Limit("alice", Stream()));
  alice.push_back(limit.Limit("alice", Session()));
  // A relay that replies with a stream takes its slot when it replies.
  std::optional<ImmediateResult> relayed = Relayed(limit, "alice", Stream);
  ASSERT_TRUE(relayed && std::holds_alternative<StreamingResponse>(*relayed));
  EXPECT_EQ(limit.Open("alice"), 3u);

  // At the bound: every long-running answer is 429, a relay's too; whole answers pass.
  EXPECT_TRUE(IsTooMany(limit.Limit("alice", Stream()), "alice", 3));
  std::optional<ImmediateResult> refused = Relayed(limit, "alice", Stream);
  ASSERT_TRUE(refused.has_value());
  EXPECT_TRUE(IsTooMany(FromImmediate(std::move(*refused)), "alice", 3));
  HttpResponse whole;
  whole.body = "ok";
  EXPECT_EQ(std::get<HttpResponse>(limit.Limit("alice", whole)).status, 200);
  // Another user is not affected.
  HandlerResult bob = limit.Limit("bob", Stream());
  EXPECT_TRUE(std::holds_alternative<StreamingResponse>(bob));
  EXPECT_EQ(limit.Open("bob"), 1u);
  EXPECT_EQ(limit.Open("alice"), 3u);
}

TEST(PerUserLimitsTest, ASlotComesBackWhenItsStreamEndsOrItsAnswerIsDropped) {
  PerUserLimits limit(2);
  HandlerResult first = limit.Limit("alice", Stream());
  auto stream = Start(first);
  HandlerResult second = limit.Limit("alice", Stream());
  EXPECT_TRUE(IsTooMany(limit.Limit("alice", Stream()), "alice", 2));
  // The stream ends (the client went away): its slot is free although the answer lives.
  stream->Close();
  EXPECT_EQ(limit.Open("alice"), 1u);
  HandlerResult third = limit.Limit("alice", Stream());
  EXPECT_TRUE(std::holds_alternative<StreamingResponse>(third));
  // An answer dropped before it started (the connection failed) gives its slot back.
  second = HttpResponse{};
  third = HttpResponse{};
  EXPECT_EQ(limit.Open("alice"), 0u);
  // A slot given back after its PerUserLimits is gone is safe.
  std::optional<PerUserLimits> gone(std::in_place, 1);
  HandlerResult outlives = gone->Limit("carol", Stream());
  gone.reset();
  outlives = HttpResponse{};
}

HttpResponse Body(std::size_t bytes) {
  HttpResponse r;
  r.body.assign(bytes, 'x');
  return r;
}

bool IsTooManyBytes(const HandlerResult& r, const std::string& user, std::size_t limit) {
  const auto* response = std::get_if<HttpResponse>(&r);
  if (response == nullptr || response->status != 429) return false;
  return json::parse(response->body)["message"] ==
         "too many bytes of responses being written to user " + user + ": limit is " + std::to_string(limit);
}

// Whole responses of kCountedResponseBytes or more hold their size of the user's budget
// until they are written (destroyed); small ones are never counted; one response larger
// than the budget passes when the user holds nothing else.
TEST(PerUserLimitsTest, LargeResponsesHoldTheUsersByteBudgetUntilWritten) {
  const std::size_t budget = 3 * kCountedResponseBytes;
  PerUserLimits limit(8, budget);
  HandlerResult first = limit.Limit("alice", Body(2 * kCountedResponseBytes));
  ASSERT_EQ(std::get<HttpResponse>(first).status, 200);
  EXPECT_EQ(limit.ResponseBytes("alice"), 2 * kCountedResponseBytes);
  EXPECT_TRUE(IsTooManyBytes(limit.Limit("alice", Body(2 * kCountedResponseBytes)), "alice", budget));
  // Small responses pass and are not counted; other users have their own budget.
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(std::get<HttpResponse>(limit.Limit("alice", Body(kCountedResponseBytes - 1))).status, 200);
  }
  HandlerResult bob = limit.Limit("bob", Body(3 * kCountedResponseBytes));
  EXPECT_EQ(std::get<HttpResponse>(bob).status, 200);
  EXPECT_EQ(limit.ResponseBytes("alice"), 2 * kCountedResponseBytes);
  // Written: the budget is free again.
  first = HttpResponse{};
  EXPECT_EQ(limit.ResponseBytes("alice"), 0u);
  HandlerResult huge = limit.Limit("alice", Body(10 * kCountedResponseBytes));
  EXPECT_EQ(std::get<HttpResponse>(huge).status, 200);  // alone: passes
  EXPECT_TRUE(IsTooManyBytes(limit.Limit("alice", Body(kCountedResponseBytes)), "alice", budget));
  // Streams and bytes are separate budgets.
  EXPECT_TRUE(std::holds_alternative<StreamingResponse>(limit.Limit("alice", Stream())));
}

bool IsTooManySessions(const HandlerResult& r, const std::string& user, std::size_t limit) {
  const auto* response = std::get_if<HttpResponse>(&r);
  if (response == nullptr || response->status != 429) return false;
  const json body = json::parse(response->body);
  return body["reason"] == "TooManyRequests" &&
         body["message"] ==
             "too many exec, attach and port-forward sessions for user " + user + ": limit is " + std::to_string(limit);
}

TEST(PerUserLimitsTest, EachUserHoldsAtMostItsBoundOfSessionsAndIsToldBeforeServing) {
  PerUserLimits limit(/*max_long_running=*/3, kMaxResponseBytesPerUser, /*max_sessions=*/2);
  EXPECT_FALSE(limit.RefuseSession("alice").has_value());
  HandlerResult first = limit.Limit("alice", Session());
  // A relay to a remote node that replies with an upgrade takes a session when it replies.
  std::optional<ImmediateResult> relayed = Relayed(limit, "alice", Session);
  ASSERT_TRUE(relayed && std::holds_alternative<WebSocketUpgrade>(*relayed));
  EXPECT_EQ(limit.Sessions("alice"), 2u);
  EXPECT_EQ(limit.Open("alice"), 2u);

  // At the session bound: told before serving, and a session that got through anyway is refused.
  std::optional<HttpResponse> refused = limit.RefuseSession("alice");
  ASSERT_TRUE(refused.has_value());
  EXPECT_TRUE(IsTooManySessions(*refused, "alice", 2)) << refused->body;
  EXPECT_TRUE(IsTooManySessions(limit.Limit("alice", Session()), "alice", 2));
  std::optional<ImmediateResult> late_reply = Relayed(limit, "alice", Session);
  ASSERT_TRUE(late_reply.has_value());
  EXPECT_TRUE(IsTooManySessions(FromImmediate(std::move(*late_reply)), "alice", 2));
  EXPECT_EQ(limit.Sessions("alice"), 2u);
  // Other long-running requests still have their own bound's room; another user has all of his.
  HandlerResult watch = limit.Limit("alice", Stream());
  EXPECT_TRUE(std::holds_alternative<StreamingResponse>(watch));
  EXPECT_FALSE(limit.RefuseSession("bob").has_value());
  HandlerResult bob = limit.Limit("bob", Session());
  EXPECT_TRUE(std::holds_alternative<WebSocketUpgrade>(bob));
  // A dropped session gives its slot back; the long-running bound (3, now full) still refuses.
  first = HttpResponse{};
  EXPECT_EQ(limit.Sessions("alice"), 1u);
  EXPECT_FALSE(limit.RefuseSession("alice").has_value());
  HandlerResult another_watch = limit.Limit("alice", Stream());
  ASSERT_TRUE(std::holds_alternative<StreamingResponse>(another_watch));
  refused = limit.RefuseSession("alice");
  ASSERT_TRUE(refused.has_value());
  EXPECT_TRUE(IsTooMany(*refused, "alice", 3)) << refused->body;
}

// `req` as `user` (and `group`): the test server's unsecured user is a member of
// system:masters, whose requests are not limited, and may impersonate anyone.
HttpRequest As(const std::string& user, HttpRequest req, const std::string& group = "") {
  req.headers.emplace_back("Impersonate-User", user);
  if (!group.empty()) req.headers.emplace_back("Impersonate-Group", group);
  return req;
}

// A server with an executor for node-0 and a pod "p" on it.
struct ServerWithAPod {
  explicit ServerWithAPod(ApiServerOptions options) : api(std::move(options)) {
    EXPECT_TRUE(api.server.EnsureSystemNamespaces().ok());
    api.server.RegisterContainerExecutor("node-0", &executor);
    const json pod = {{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", {{"name", "p"}}},
                      {"spec", {{"nodeName", "node-0"}, {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
    EXPECT_EQ(testing::Respond(api.server, "POST", "/api/v1/namespaces/default/pods", pod.dump()).status, 201);
  }
  testing::TestApiServer api;
  testing::FakeExecutor executor;
};

// kubectl's first try: a WebSocket.
HttpRequest WebSocketRequest(const std::string& subresource, const std::string& query) {
  HttpRequest req =
      As("alice", testing::Request("GET", "/api/v1/namespaces/default/pods/p/" + subresource + "?" + query));
  req.headers.emplace_back("Connection", "Upgrade");
  req.headers.emplace_back("Upgrade", "websocket");
  req.headers.emplace_back("Sec-WebSocket-Protocol",
                           subresource == "portforward" ? "SPDY/3.1+portforward.k8s.io" : kStreamProtocolV5);
  return req;
}
// Its fallback when the WebSocket is refused: SPDY.
HttpRequest SpdyRequest(const std::string& subresource, const std::string& query) {
  HttpRequest req =
      As("alice", testing::Request("POST", "/api/v1/namespaces/default/pods/p/" + subresource + "?" + query));
  req.headers.emplace_back("Connection", "Upgrade");
  req.headers.emplace_back("Upgrade", "SPDY/3.1");
  req.headers.emplace_back("X-Stream-Protocol-Version", "v4.channel.k8s.io");
  return req;
}
const char kExecQuery[] = "command=true&stdout=true";

std::string BodyOf(const HandlerResult& r) {
  return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r).body : "(not refused)";
}

// Through the server: a user at the session bound gets the 429 for exec, attach and
// port-forward, over WebSocket and over SPDY (kubectl's fallback) alike.
TEST(PerUserLimitsTest, TheApiServerBoundsAUsersSessionsWhateverTheProtocol) {
  ApiServerOptions options = testing::WithoutGarbageCollector();
  options.max_sessions_per_user = 1;
  ServerWithAPod s(options);
  HandlerResult held = s.api.server.Handle(WebSocketRequest("exec", kExecQuery));
  ASSERT_TRUE(std::holds_alternative<WebSocketUpgrade>(held)) << BodyOf(held);
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"exec", kExecQuery}, {"attach", "stdout=true"}, {"portforward", "ports=80"}};
  for (const auto& [subresource, query] : requests) {
    for (const HttpRequest& req : {WebSocketRequest(subresource, query), SpdyRequest(subresource, query)}) {
      HandlerResult r = s.api.server.Handle(req);
      EXPECT_TRUE(IsTooManySessions(r, "alice", 1)) << req.method << " " << subresource << ": " << BodyOf(r);
    }
  }
  // Once the session is gone, a SPDY request is told again that berth wants a WebSocket,
  // and a WebSocket is served.
  held = HttpResponse{};
  const HttpResponse told = std::get<HttpResponse>(s.api.server.Handle(SpdyRequest("exec", kExecQuery)));
  EXPECT_EQ(told.status, 400);
  EXPECT_NE(told.body.find("not SPDY"), std::string::npos) << told.body;
  EXPECT_TRUE(std::holds_alternative<WebSocketUpgrade>(s.api.server.Handle(WebSocketRequest("exec", kExecQuery))));
}

// The server's own bounds (stream_sessions.h: per pod, per server) reach kubectl's SPDY
// fallback too: the 429 its WebSocket got, not "berth serves exec over WebSocket only".
TEST(PerUserLimitsTest, ASpdyFallbackIsToldTheSessionBoundItsWebSocketMet) {
  ServerWithAPod s(testing::WithoutGarbageCollector());
  std::vector<HandlerResult> held;
  for (std::size_t i = 0; i < kMaxExecSessionsPerPod; ++i) {
    held.push_back(s.api.server.Handle(WebSocketRequest("exec", kExecQuery)));
    ASSERT_TRUE(std::holds_alternative<WebSocketUpgrade>(held.back())) << BodyOf(held.back());
  }
  const std::string message = "too many exec sessions: limit is " + std::to_string(kMaxExecSessions) + " per server, " +
                              std::to_string(kMaxExecSessionsPerPod) + " per pod";
  for (const HttpRequest& req : {WebSocketRequest("exec", kExecQuery), SpdyRequest("exec", kExecQuery)}) {
    HandlerResult r = s.api.server.Handle(req);
    ASSERT_TRUE(std::holds_alternative<HttpResponse>(r)) << req.method;
    EXPECT_EQ(std::get<HttpResponse>(r).status, 429) << req.method << ": " << BodyOf(r);
    EXPECT_EQ(json::parse(std::get<HttpResponse>(r).body)["message"], message) << req.method;
  }
  held.pop_back();
  const HttpResponse told = std::get<HttpResponse>(s.api.server.Handle(SpdyRequest("exec", kExecQuery)));
  EXPECT_EQ(told.status, 400) << told.body;
}

// The administrator (system:masters: here the test server's unsecured user) can always reach a
// pod: the session bounds that refuse the tenants do not refuse it, though its sessions count.
TEST(PerUserLimitsTest, TheAdministratorIsNotHeldToTheSessionBounds) {
  ServerWithAPod s(testing::WithoutGarbageCollector());
  std::vector<HandlerResult> held;
  for (std::size_t i = 0; i < kMaxExecSessionsPerPod; ++i) {
    held.push_back(s.api.server.Handle(WebSocketRequest("exec", kExecQuery)));  // alice's
    ASSERT_TRUE(std::holds_alternative<WebSocketUpgrade>(held.back())) << BodyOf(held.back());
  }
  HandlerResult tenant = s.api.server.Handle(WebSocketRequest("exec", kExecQuery));
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(tenant));
  EXPECT_EQ(std::get<HttpResponse>(tenant).status, 429);
  auto as_admin = [](HttpRequest req) {
    req.headers.erase(std::remove_if(req.headers.begin(), req.headers.end(),
                                     [](const auto& h) { return h.first == "Impersonate-User"; }),
                      req.headers.end());
    return req;
  };
  for (int i = 0; i < 2; ++i) {
    held.push_back(s.api.server.Handle(as_admin(WebSocketRequest("exec", kExecQuery))));
    EXPECT_TRUE(std::holds_alternative<WebSocketUpgrade>(held.back())) << BodyOf(held.back());
  }
  // Its SPDY attempt is told that berth wants a WebSocket, not a bound.
  const HttpResponse told = std::get<HttpResponse>(s.api.server.Handle(as_admin(SpdyRequest("exec", kExecQuery))));
  EXPECT_EQ(told.status, 400) << told.body;
  // Its sessions count: the tenant is still refused when one of its own ends.
  held.erase(held.begin());
  tenant = s.api.server.Handle(WebSocketRequest("exec", kExecQuery));
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(tenant));
  EXPECT_EQ(std::get<HttpResponse>(tenant).status, 429);
}

// Through the server: the user's watches and followed logs are bounded; the in-process
// client's (the controllers') are not.
TEST(PerUserLimitsTest, TheApiServerBoundsAUsersWatchesButNotItsOwnControllers) {
  ApiServerOptions options = testing::WithoutGarbageCollector();
  options.max_long_running_requests_per_user = 2;
  options.max_response_bytes_per_user = 2 * kCountedResponseBytes;
  testing::TestApiServer api(options);
  ASSERT_TRUE(api.server.EnsureSystemNamespaces().ok());
  const std::string watch = "/api/v1/namespaces/default/configmaps?watch=true";
  std::vector<HandlerResult> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(api.server.Handle(As("alice", testing::Request("GET", watch))));
    ASSERT_TRUE(std::holds_alternative<StreamingResponse>(held.back()));
  }
  HandlerResult refused = api.server.Handle(As("alice", testing::Request("GET", watch)));
  EXPECT_TRUE(IsTooMany(refused, "alice", 2));
  // Requests that are not long-running are served as before.
  EXPECT_EQ(testing::Respond(api.server, "GET", "/api/v1/namespaces/default/configmaps").status, 200);
  for (int i = 0; i < 3; ++i) {
    HttpRequest req = testing::Request("GET", watch);
    req.in_process = true;
    EXPECT_TRUE(std::holds_alternative<StreamingResponse>(api.server.Handle(req))) << i;
  }
  // A LIST the client has not read yet holds its bytes: a second is refused until it is written.
  const std::string data(kCountedResponseBytes / 4, 'x');
  for (int i = 0; i < 6; ++i) {
    json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cm" + std::to_string(i)}}},
               {"data", {{"d", data}}}};
    ASSERT_EQ(testing::Respond(api.server, "POST", "/api/v1/namespaces/default/configmaps", cm.dump()).status, 201);
  }
  const std::string list = "/api/v1/namespaces/default/configmaps";
  HandlerResult unread = api.server.Handle(As("alice", testing::Request("GET", list)));
  ASSERT_EQ(std::get<HttpResponse>(unread).status, 200);
  ASSERT_GE(std::get<HttpResponse>(unread).body.size(), kCountedResponseBytes);
  HandlerResult second = api.server.Handle(As("alice", testing::Request("GET", list)));
  EXPECT_EQ(std::get<HttpResponse>(second).status, 429) << std::get<HttpResponse>(second).body;
  HttpRequest own = testing::Request("GET", list);
  own.in_process = true;
  EXPECT_EQ(std::get<HttpResponse>(api.server.Handle(own)).status, 200);
  unread = HttpResponse{};
  EXPECT_EQ(std::get<HttpResponse>(api.server.Handle(As("alice", testing::Request("GET", list)))).status, 200);
  // A watch that ends frees its slot.
  auto stream = std::make_shared<EndableStream>();
  std::get<StreamingResponse>(held[0]).start(stream);
  stream->Close();
  EXPECT_TRUE(
      std::holds_alternative<StreamingResponse>(api.server.Handle(As("alice", testing::Request("GET", watch)))));
}

// Every ServiceAccount of a namespace shares one budget (a tenant minting ServiceAccounts,
// or impersonating them, gets no more); system:masters is not limited.
TEST(PerUserLimitsTest, ServiceAccountsShareTheirNamespacesBudgetAndAdministratorsAreNotLimited) {
  EXPECT_EQ(LimitKeyOf({.name = "alice", .groups = {"team-a", "system:authenticated"}}), "alice");
  EXPECT_EQ(LimitKeyOf({.name = "system:serviceaccount:team-a:ci-1", .groups = {"system:serviceaccounts"}}),
            "system:serviceaccounts:team-a");
  EXPECT_EQ(LimitKeyOf({.name = "system:serviceaccount:team-a:ci-2"}), "system:serviceaccounts:team-a");
  EXPECT_EQ(LimitKeyOf({.name = "system:serviceaccount:malformed"}), "system:serviceaccount:malformed");
  EXPECT_EQ(LimitKeyOf({.name = "root", .groups = {"system:masters"}}), std::nullopt);

  ApiServerOptions options = testing::WithoutGarbageCollector();
  options.max_long_running_requests_per_user = 2;
  testing::TestApiServer api(options);
  ASSERT_TRUE(api.server.EnsureSystemNamespaces().ok());
  const std::string watch = "/api/v1/namespaces/team-a/configmaps?watch=true";
  std::vector<HandlerResult> held;
  for (const char* sa : {"system:serviceaccount:team-a:ci-1", "system:serviceaccount:team-a:ci-2"}) {
    held.push_back(api.server.Handle(As(sa, testing::Request("GET", watch))));
    ASSERT_TRUE(std::holds_alternative<StreamingResponse>(held.back())) << sa;
  }
  HandlerResult third = api.server.Handle(As("system:serviceaccount:team-a:ci-3", testing::Request("GET", watch)));
  const auto* refused = std::get_if<HttpResponse>(&third);
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(json::parse(refused->body)["message"],
            "too many long-running requests (watches, logs, exec, attach, port-forward) for the service accounts "
            "of namespace team-a: limit is 2");
  // Another namespace's ServiceAccounts, and a user, have their own budgets.
  for (const char* other : {"system:serviceaccount:team-b:ci-1", "alice"}) {
    held.push_back(api.server.Handle(As(other, testing::Request("GET", watch))));
    EXPECT_TRUE(std::holds_alternative<StreamingResponse>(held.back())) << other;
  }
  // A member of system:masters is not limited.
  for (int i = 0; i < 4; ++i) {
    held.push_back(api.server.Handle(As("root", testing::Request("GET", watch), "system:masters")));
    EXPECT_TRUE(std::holds_alternative<StreamingResponse>(held.back())) << i;
  }
}

}  // namespace
}  // namespace berth::apiserver
