#include "cli/describe.h"

#include <gtest/gtest.h>

namespace berth::cli {
namespace {

using nlohmann::json;

Time At(const std::string& rfc3339) {
  Time t;
  EXPECT_TRUE(ParseRfc3339(rfc3339, &t));
  return t;
}

TEST(DescribeTest, SmartLabels) {
  EXPECT_EQ(SmartLabel("nominalQuota"), "Nominal Quota");
  EXPECT_EQ(SmartLabel("apiVersion"), "API Version");
  EXPECT_EQ(SmartLabel("uid"), "UID");
  EXPECT_EQ(SmartLabel("creationTimestamp"), "Creation Timestamp");
  EXPECT_EQ(SmartLabel("podIPs"), "Pod I Ps");  // camelcase.Split gives "pod", "I", "Ps"
  EXPECT_EQ(SmartLabel("URLPath"), "URL Path");
  EXPECT_EQ(SmartLabel("nvidia.com/gpu"), "nvidia.com/gpu");
  EXPECT_EQ(SmartLabel("v1beta2"), "v1beta2");
}

TEST(DescribeTest, GenericDescriberLayout) {
  json cq = json::parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue",
    "metadata":{"name":"cluster-queue","uid":"u-1","generation":1,"resourceVersion":"12",
      "creationTimestamp":"2026-01-01T00:00:00Z","labels":{"tier":"gold","a":"b"},
      "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","note":"hi"},
      "managedFields":[{"manager":"berth"}]},
    "spec":{"cohort":null,"queueingStrategy":"BestEffortFIFO","resourceGroups":[{"coveredResources":["cpu"],
      "flavors":[{"name":"default-flavor","resources":[{"name":"cpu","nominalQuota":5}]}]}]},
    "status":{"pendingWorkloads":0}})");
  EXPECT_EQ(DescribeObject(cq, {}, At("2026-01-01T00:05:00Z")),
            "Name:         cluster-queue\n"
            "Namespace:    \n"
            "Labels:       a=b\n"
            "              tier=gold\n"
            "Annotations:  note: hi\n"
            "API Version:  kueue.x-k8s.io/v1beta2\n"
            "Kind:         ClusterQueue\n"
            "Metadata:\n"
            "  Creation Timestamp:  2026-01-01T00:00:00Z\n"
            "  Generation:          1\n"
            "  Resource Version:    12\n"
            "  UID:                 u-1\n"
            "Spec:\n"
            "  Cohort:             <nil>\n"
            "  Queueing Strategy:  BestEffortFIFO\n"
            "  Resource Groups:\n"
            "    Covered Resources:\n"
            "      cpu\n"
            "    Flavors:\n"
            "      Name:  default-flavor\n"
            "      Resources:\n"
            "        Name:           cpu\n"
            "        Nominal Quota:  5\n"
            "Status:\n"
            "  Pending Workloads:  0\n"
            "Events:               <none>\n");
}

TEST(DescribeTest, EventsTableSortedWithAges) {
  json obj = json::parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ns1","uid":"u"}})");
  std::vector<json> events{
      json::parse(R"({"type":"Warning","reason":"FailedScheduling","message":" 0/1 nodes are available. ",
        "source":{"component":"default-scheduler"},"count":3,
        "firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:04:00Z"})"),
      json::parse(R"({"type":"Normal","reason":"Created","message":"made",
        "reportingComponent":"berth-controller","count":1,
        "firstTimestamp":"2026-01-01T00:01:00Z","lastTimestamp":"2026-01-01T00:01:00Z"})")};
  EXPECT_EQ(DescribeObject(obj, events, At("2026-01-01T00:05:00Z")),
            "Name:         ns1\n"
            "Namespace:    \n"
            "Labels:       <none>\n"
            "Annotations:  <none>\n"
            "API Version:  v1\n"
            "Kind:         Namespace\n"
            "Metadata:\n"
            "  UID:  u\n"
            "Events:\n"
            "  Type     Reason            Age               From               Message\n"
            "  ----     ------            ----              ----               -------\n"
            "  Normal   Created           4m                berth-controller   made\n"
            "  Warning  FailedScheduling  60s (x3 over 5m)  default-scheduler  0/1 nodes are available.\n");
}

TEST(DescribeTest, EventFieldSelector) {
  json wl = json::parse(R"({"kind":"Workload","metadata":{"name":"wl1","namespace":"default","uid":"u-9"}})");
  EXPECT_EQ(EventFieldSelector(wl),
            "involvedObject.name=wl1,involvedObject.namespace=default,involvedObject.kind=Workload,"
            "involvedObject.uid=u-9");
}

}  // namespace
}  // namespace berth::cli
