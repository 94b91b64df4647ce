// core/pod_requests.h: quota counts requests (limits only as defaults), init containers as a
// max, sidecars added to the running sum, plus pod overhead.
#include "admission/pod_requests.h"

#include <gtest/gtest.h>

#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::Q;

class PodRequestsTest : public ::testing::Test {
 protected:
  ResourceNames names;
  ResourceId cpu = names.Intern("cpu");
  ResourceId mem = names.Intern("memory");
};

TEST_F(PodRequestsTest, RequestsDefaultToLimitsAndLimitsAreOtherwiseIgnored) {
  PodResources pod;
  // kueue#11931: requests 12 cpu / 24Gi, limits 12 cpu / 26Gi -> 12 / 24Gi.
  pod.containers.push_back({{{cpu, Q("12")}, {mem, Q("24Gi")}}, {{cpu, Q("12")}, {mem, Q("26Gi")}}});
  EXPECT_EQ(PodRequests(pod), (ResourceList{{cpu, Q("12")}, {mem, Q("24Gi")}}));
  // A container with only limits is charged its limits (Kueue PR #317).
  PodResources limits_only;
  limits_only.containers.push_back({{}, {{cpu, Q("2")}, {mem, Q("1Gi")}}});
  limits_only.containers.push_back({{{cpu, Q("500m")}}, {{cpu, Q("1")}, {mem, Q("512Mi")}}});
  EXPECT_EQ(PodRequests(limits_only), (ResourceList{{cpu, Q("2500m")}, {mem, Q("1536Mi")}}));
}

TEST_F(PodRequestsTest, InitContainersCountAsMaxNotSum) {
  PodResources pod;
  pod.containers.push_back({{{cpu, Q("1")}}, {}});
  pod.containers.push_back({{{cpu, Q("1")}}, {}});
  pod.init_containers.push_back({{{cpu, Q("3")}, {mem, Q("1Gi")}}, {}});
  pod.init_containers.push_back({{{cpu, Q("1")}}, {}});
  // cpu: max(1+1, 3) = 3; memory: max(0, 1Gi) = 1Gi.
  EXPECT_EQ(PodRequests(pod), (ResourceList{{cpu, Q("3")}, {mem, Q("1Gi")}}));
}

TEST_F(PodRequestsTest, SidecarsAddToRunningSumAndToLaterInitContainers) {
  // kubernetes/website PR #57373: sidecar 100m, init 200m, app 100m -> 300m.
  PodResources pod;
  pod.init_containers.push_back({{{cpu, Q("100m")}}, {}, /*restart_always=*/true});
  pod.init_containers.push_back({{{cpu, Q("200m")}}, {}});
  pod.containers.push_back({{{cpu, Q("100m")}}, {}});
  EXPECT_EQ(PodRequests(pod), (ResourceList{{cpu, Q("300m")}}));
  // An init container declared before the sidecar runs without it.
  PodResources before;
  before.init_containers.push_back({{{cpu, Q("200m")}}, {}});
  before.init_containers.push_back({{{cpu, Q("100m")}}, {}, true});
  before.containers.push_back({{{cpu, Q("100m")}}, {}});
  EXPECT_EQ(PodRequests(before), (ResourceList{{cpu, Q("200m")}}));
  // Sidecars alone: running sum = app + sidecars.
  PodResources sidecars;
  sidecars.init_containers.push_back({{{cpu, Q("1")}}, {}, true});
  sidecars.containers.push_back({{{cpu, Q("2")}}, {}});
  EXPECT_EQ(PodRequests(sidecars), (ResourceList{{cpu, Q("3")}}));
}

TEST_F(PodRequestsTest, OverheadIsAdded) {
  PodResources pod;
  pod.containers.push_back({{{cpu, Q("1")}}, {}});
  pod.overhead = {{cpu, Q("250m")}, {mem, Q("120Mi")}};
  EXPECT_EQ(PodRequests(pod), (ResourceList{{cpu, Q("1250m")}, {mem, Q("120Mi")}}));
}

TEST_F(PodRequestsTest, PodSetTotalMultipliesByCountMinusReclaimable) {
  PodSet ps;
  ps.count = 5;
  ps.reclaimable = 2;
  ps.requests = {{cpu, Q("1500m")}};
  EXPECT_EQ(PodSetTotal(ps, ps.count), (ResourceList{{cpu, Q("4500m")}}));
  ps.reclaimable = 7;
  EXPECT_EQ(PodSetTotal(ps, ps.count), (ResourceList{{cpu, 0}}));
}

}  // namespace
}  // namespace berth::admission
