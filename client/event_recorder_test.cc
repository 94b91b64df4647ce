#include "client/event_recorder.h"

#include <gtest/gtest.h>

#include "client/testing/fake_client.h"

namespace berth::client {
namespace {

using nlohmann::json;

class EventRecorderTest : public ::testing::Test {
 protected:
  EventRecorderTest() : client_(clock_), recorder_(client_, clock_, "default-scheduler") {}

  std::vector<json> Events(const std::string& ns, const std::string& field_selector = "") {
    ListOptions o;
    o.field_selector = field_selector;
    auto list = client_.List(EventRecorder::EventsResource().Namespace(ns), o);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    return list.ok() ? list->items : std::vector<json>{};
  }

  FakeClock clock_;
  testing::FakeClient client_;
  EventRecorder recorder_;
};

const json kPod = json::parse(R"({"apiVersion":"v1","kind":"Pod",
  "metadata":{"name":"p1","namespace":"team-a","uid":"u-1","resourceVersion":"7"}})");

// The stored shape kubectl's describers and `kubectl get events` read
// (k8s.io/kubectl/pkg/describe/describe.go DescribeEvents).
TEST_F(EventRecorderTest, RecordsACoreV1Event) {
  const std::string t0 = FormatRfc3339(clock_.Now());
  ASSERT_TRUE(recorder_.Record(kPod, kEventTypeWarning, "FailedScheduling",
                               "0/1 nodes are available: 1 Insufficient cpu.").ok());
  auto events = Events("team-a", "involvedObject.name=p1,involvedObject.uid=u-1");
  ASSERT_EQ(events.size(), 1u);
  const json& e = events[0];
  EXPECT_EQ(e["metadata"]["namespace"], "team-a");
  EXPECT_EQ(e["metadata"]["name"].get<std::string>().rfind("p1.", 0), 0u);
  EXPECT_EQ(e["involvedObject"], json::parse(R"({"apiVersion":"v1","kind":"Pod","name":"p1",
                                                 "namespace":"team-a","uid":"u-1","resourceVersion":"7"})"));
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["reason"], "FailedScheduling");
  EXPECT_EQ(e["message"], "0/1 nodes are available: 1 Insufficient cpu.");
  EXPECT_EQ(e["source"], json::parse(R"({"component":"default-scheduler"})"));
  EXPECT_EQ(e["reportingComponent"], "default-scheduler");
  EXPECT_EQ(e["count"], 1);
  EXPECT_EQ(e["firstTimestamp"], t0);
  EXPECT_EQ(e["lastTimestamp"], t0);
}

// Identical events are aggregated: one Event, count and lastTimestamp move.
TEST_F(EventRecorderTest, AggregatesIdenticalEvents) {
  const std::string t0 = FormatRfc3339(clock_.Now());
  ASSERT_TRUE(recorder_.Record(kPod, kEventTypeWarning, "FailedScheduling", "no nodes").ok());
  clock_.Advance(std::chrono::seconds(90));
  ASSERT_TRUE(recorder_.Record(kPod, kEventTypeWarning, "FailedScheduling", "no nodes").ok());
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(recorder_.Record(kPod, kEventTypeWarning, "FailedScheduling", "no nodes").ok());
  auto events = Events("team-a");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 3);
  EXPECT_EQ(events[0]["firstTimestamp"], t0);
  EXPECT_EQ(events[0]["lastTimestamp"], FormatRfc3339(clock_.Now()));
  // A different message is a different event.
  ASSERT_TRUE(recorder_.Record(kPod, kEventTypeNormal, "Scheduled", "Successfully assigned team-a/p1 to node-1").ok());
  EXPECT_EQ(Events("team-a").size(), 2u);
}

// An aggregated event that was deleted meanwhile is created again.
TEST_F(EventRecorderTest, RecreatesADeletedEvent) {
  ASSERT_TRUE(recorder_.Record(kPod, kEventTypeWarning, "BackOff", "restarting").ok());
  auto events = Events("team-a");
  ASSERT_EQ(events.size(), 1u);
  ASSERT_TRUE(client_.Delete(EventRecorder::EventsResource().Namespace("team-a"),
                             events[0]["metadata"]["name"].get<std::string>()).ok());
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(recorder_.Record(kPod, kEventTypeWarning, "BackOff", "restarting").ok());
  events = Events("team-a");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 1);
}

// Events about cluster-scoped objects live in "default" with an empty
// involvedObject.namespace.
TEST_F(EventRecorderTest, ClusterScopedObjectsGoToDefault) {
  json cq = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue",
                            "metadata":{"name":"cq","uid":"u-cq"}})");
  ASSERT_TRUE(recorder_.Record(cq, kEventTypeNormal, "Active", "Can admit new workloads").ok());
  auto events = Events("default");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0]["involvedObject"].contains("namespace"));
  EXPECT_EQ(events[0]["involvedObject"]["kind"], "ClusterQueue");
}

}  // namespace
}  // namespace berth::client
