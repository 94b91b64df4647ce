// The bound on the long-running requests one user holds (long_running_requests.h), on
// its own and in the API server.
#include "apiserver/long_running_requests.h"

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

TEST(LongRunningRequestsTest, EachUserHoldsAtMostTheBoundOfEveryKindOfStream) {
  LongRunningRequests limit(3);
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

TEST(LongRunningRequestsTest, ASlotComesBackWhenItsStreamEndsOrItsAnswerIsDropped) {
  LongRunningRequests limit(2);
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
  // A slot given back after its LongRunningRequests is gone is safe.
  std::optional<LongRunningRequests> gone(std::in_place, 1);
  HandlerResult outlives = gone->Limit("carol", Stream());
  gone.reset();
  outlives = HttpResponse{};
}

// Through the server: the user's watches and followed logs are bounded; the in-process
// client's (the controllers') are not.
TEST(LongRunningRequestsTest, TheApiServerBoundsAUsersWatchesButNotItsOwnControllers) {
  ApiServerOptions options = testing::WithoutGarbageCollector();
  options.max_long_running_requests_per_user = 2;
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
  // A watch that ends frees its slot.
  auto stream = std::make_shared<EndableStream>();
  std::get<StreamingResponse>(held[0]).start(stream);
  stream->Close();
  EXPECT_TRUE(std::holds_alternative<StreamingResponse>(api.server.Handle(testing::Request("GET", watch))));
}

}  // namespace
}  // namespace berth::apiserver
