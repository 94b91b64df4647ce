// The bound on the long-running requests one user holds (per_user_limits.h), on
// its own and in the API server.
#include "apiserver/per_user_limits.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
  WebSocketUpgrade upgrade;
  upgrade.start = [](std::shared_ptr<WebSocketSession>) { return WebSocketReceiver(); };
  alice.push_back(limit.Limit("alice", std::move(upgrade)));
  // A relay that replies with a stream takes its slot when it replies.
  DeferredResponse relay;
  relay.start = [](std::function<void(ImmediateResult)> reply) { reply(Stream()); };
  HandlerResult deferred = limit.Limit("alice", std::move(relay));
  std::optional<ImmediateResult> relayed;
  std::get<DeferredResponse>(deferred).start([&](ImmediateResult r) { relayed = std::move(r); });
  ASSERT_TRUE(relayed && std::holds_alternative<StreamingResponse>(*relayed));
  EXPECT_EQ(limit.Open("alice"), 3u);

  // At the bound: every long-running answer is 429, a relay's too; whole answers pass.
  EXPECT_TRUE(IsTooMany(limit.Limit("alice", Stream()), "alice", 3));
  DeferredResponse late;
  late.start = [](std::function<void(ImmediateResult)> reply) { reply(Stream()); };
  HandlerResult late_result = limit.Limit("alice", std::move(late));
  std::optional<ImmediateResult> refused;
  std::get<DeferredResponse>(late_result).start([&](ImmediateResult r) { refused = std::move(r); });
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
    held.push_back(api.server.Handle(testing::Request("GET", watch)));
    ASSERT_TRUE(std::holds_alternative<StreamingResponse>(held.back()));
  }
  HandlerResult refused = api.server.Handle(testing::Request("GET", watch));
  EXPECT_TRUE(IsTooMany(refused, "system:unsecured", 2));
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
  HandlerResult unread = api.server.Handle(testing::Request("GET", list));
  ASSERT_EQ(std::get<HttpResponse>(unread).status, 200);
  ASSERT_GE(std::get<HttpResponse>(unread).body.size(), kCountedResponseBytes);
  HandlerResult second = api.server.Handle(testing::Request("GET", list));
  EXPECT_EQ(std::get<HttpResponse>(second).status, 429) << std::get<HttpResponse>(second).body;
  HttpRequest own = testing::Request("GET", list);
  own.in_process = true;
  EXPECT_EQ(std::get<HttpResponse>(api.server.Handle(own)).status, 200);
  unread = HttpResponse{};
  EXPECT_EQ(std::get<HttpResponse>(api.server.Handle(testing::Request("GET", list))).status, 200);
  // A watch that ends frees its slot.
  auto stream = std::make_shared<EndableStream>();
  std::get<StreamingResponse>(held[0]).start(stream);
  stream->Close();
  EXPECT_TRUE(std::holds_alternative<StreamingResponse>(api.server.Handle(testing::Request("GET", watch))));
}

}  // namespace
}  // namespace berth::apiserver
