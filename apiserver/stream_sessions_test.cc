// StreamSessions' slots: the per-server and per-pod bounds of exec and port-forward
// sessions (docs/security.md), the 429 a client gets beyond them, and Stop().
#include "apiserver/stream_sessions.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace berth::apiserver {
namespace {

TEST(StreamSessionsTest, SlotsAreBoundedPerServerAndPerPod) {
  StreamSessions sessions(3, 2);
  EXPECT_TRUE(sessions.HasRoom("ns/a"));
  EXPECT_TRUE(sessions.Acquire("ns/a"));
  EXPECT_TRUE(sessions.Acquire("ns/a"));
  EXPECT_FALSE(sessions.HasRoom("ns/a"));
  EXPECT_FALSE(sessions.Acquire("ns/a"));  // 2 per pod
  EXPECT_TRUE(sessions.HasRoom("ns/b"));
  EXPECT_TRUE(sessions.Acquire("ns/b"));
  EXPECT_FALSE(sessions.HasRoom("ns/c"));
  EXPECT_FALSE(sessions.Acquire("ns/c"));  // 3 per server
  EXPECT_EQ(sessions.open(), 3u);
  sessions.Release("ns/a");
  EXPECT_EQ(sessions.open(), 2u);
  EXPECT_TRUE(sessions.Acquire("ns/b"));   // a freed slot serves another pod
  EXPECT_FALSE(sessions.Acquire("ns/a"));  // the server bound again
  EXPECT_EQ(sessions.open(), 3u);
}

TEST(StreamSessionsTest, AnUnboundedRequesterPassesTheBoundsAndCountsTowardsThem) {
  StreamSessions sessions(2, 1);
  EXPECT_TRUE(sessions.Acquire("ns/a"));
  EXPECT_FALSE(sessions.HasRoom("ns/a"));
  EXPECT_TRUE(sessions.HasRoom("ns/a", /*unbounded=*/true));
  EXPECT_TRUE(sessions.Acquire("ns/a", /*unbounded=*/true));  // past the pod's bound
  EXPECT_TRUE(sessions.Acquire("ns/b", /*unbounded=*/true));  // past the server's
  EXPECT_EQ(sessions.open(), 3u);
  EXPECT_FALSE(sessions.Acquire("ns/c"));  // the others are refused
  sessions.Stop(std::chrono::milliseconds(10));
  EXPECT_FALSE(sessions.Acquire("ns/c", /*unbounded=*/true));  // but not while stopping
  for (const char* key : {"ns/a", "ns/a", "ns/b"}) sessions.Release(key);
  EXPECT_EQ(sessions.open(), 0u);
}

TEST(StreamSessionsTest, StoppingRefusesNewSlots) {
  StreamSessions sessions(3, 2);
  EXPECT_TRUE(sessions.Acquire("ns/a"));
  sessions.Stop(std::chrono::milliseconds(10));
  EXPECT_TRUE(sessions.Stopping());
  EXPECT_FALSE(sessions.HasRoom("ns/b"));
  EXPECT_FALSE(sessions.Acquire("ns/b"));
  sessions.Release("ns/a");
  EXPECT_EQ(sessions.open(), 0u);
}

TEST(StreamSessionsTest, TooManyIsA429StatusWithRetryAfter) {
  const StreamSessions sessions(128, 16);
  const HttpResponse r = sessions.TooMany("exec");
  EXPECT_EQ(r.status, 429);
  const nlohmann::json body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["kind"], "Status");
  EXPECT_EQ(body["reason"], "TooManyRequests");
  EXPECT_EQ(body["code"], 429);
  EXPECT_EQ(body["message"], "too many exec sessions: limit is 128 per server, 16 per pod");
  bool retry_after = false;
  for (const auto& [name, value] : r.headers) retry_after = retry_after || (name == "Retry-After" && value == "1");
  EXPECT_TRUE(retry_after);
}

}  // namespace
}  // namespace berth::apiserver
