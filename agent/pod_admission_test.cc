#include "agent/pod_admission.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

api::Object Pod(const api::Object& requests, const api::Object& limits = api::Object::object()) {
  return {
      {"spec", {{"containers", {{{"name", "main"}, {"resources", {{"requests", requests}, {"limits", limits}}}}}}}}};
}

const ResourceList kNode = *ParseResourceList("cpu=2,memory=4Gi,nvidia.com/gpu=2,pods=3");

TEST(PodAdmissionTest, FitsBesideTheAdmittedPods) {
  const api::Object running = Pod({{"cpu", "1500m"}, {"memory", "1Gi"}});
  EXPECT_TRUE(AdmitPodResources(Pod({{"cpu", "500m"}}), {&running}, kNode).admit);
  EXPECT_TRUE(AdmitPodResources(Pod(api::Object::object()), {&running}, kNode).admit);  // best effort
}

TEST(PodAdmissionTest, CpuIsInMilliCoresAndCheckedBeforeMemory) {
  const api::Object running = Pod({{"cpu", "1500m"}, {"memory", "3Gi"}});
  PodAdmitResult r = AdmitPodResources(Pod({{"cpu", "2"}, {"memory", "2Gi"}}), {&running}, kNode);
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "OutOfcpu");
  EXPECT_EQ(r.message, "Node didn't have enough resource: cpu, requested: 2000, used: 1500, capacity: 2000");
  r = AdmitPodResources(Pod({{"memory", "2Gi"}}), {&running}, kNode);
  EXPECT_EQ(r.reason, "OutOfmemory");
  EXPECT_EQ(r.message,
            "Node didn't have enough resource: memory, requested: 2147483648, used: 3221225472, capacity: 4294967296");
}

TEST(PodAdmissionTest, ExtendedResourcesCountAndOnesTheNodeLacksAreIgnored) {
  const api::Object running = Pod({{"nvidia.com/gpu", "2"}});
  PodAdmitResult r = AdmitPodResources(Pod({}, {{"nvidia.com/gpu", "1"}}), {&running}, kNode);
  EXPECT_EQ(r.reason, "OutOfnvidia.com/gpu");
  EXPECT_EQ(r.message, "Node didn't have enough resource: nvidia.com/gpu, requested: 1, used: 2, capacity: 2");
  // removeMissingExtendedResources: the node advertises no example.com/fpga.
  EXPECT_TRUE(AdmitPodResources(Pod({{"example.com/fpga", "1"}}), {}, kNode).admit);
  // hugepages are scalar resources but not extended ones: absent means none.
  EXPECT_EQ(AdmitPodResources(Pod({{"hugepages-2Mi", "2Mi"}}), {}, kNode).reason, "OutOfhugepages-2Mi");
}

TEST(PodAdmissionTest, ThePodCountComesFirst) {
  const api::Object p = Pod(api::Object::object());
  PodAdmitResult r = AdmitPodResources(Pod({{"cpu", "100"}}), {&p, &p, &p}, kNode);
  EXPECT_EQ(r.reason, "OutOfpods");
  EXPECT_EQ(r.message, "Node didn't have enough resource: pods, requested: 1, used: 3, capacity: 3");
}

TEST(PodAdmissionTest, InitContainersAndOverheadCountAsThePodsRequest) {
  api::Object pod = Pod({{"cpu", "500m"}});
  pod["spec"]["initContainers"] = {{{"name", "init"}, {"resources", {{"requests", {{"cpu", "2"}}}}}}};
  pod["spec"]["overhead"] = {{"cpu", "100m"}};
  PodAdmitResult r = AdmitPodResources(pod, {}, kNode);
  EXPECT_FALSE(r.admit);  // max(500m, 2) + 100m
  EXPECT_EQ(r.message, "Node didn't have enough resource: cpu, requested: 2100, used: 0, capacity: 2000");
}

TEST(PodAdmissionTest, ImagesTheNodeDoesNotRunOnItsHostAreRefusedInitContainersFirst) {
  const api::Object pod = {{"spec",
                            {{"initContainers", {{{"name", "init"}, {"image", "alpine"}}}},
                             {"containers", {{{"name", "main"}, {"image", "pytorch/pytorch:2.7"}}}}}}};
  EXPECT_TRUE(AdmitPodImages(pod, "n", std::nullopt).admit);  // nothing declared: any image
  EXPECT_TRUE(AdmitPodImages(pod, "n", std::vector<std::string>{"alpine", "pytorch/*"}).admit);
  PodAdmitResult r = AdmitPodImages(pod, "n", std::vector<std::string>{"busybox", "pytorch/*"});
  EXPECT_FALSE(r.admit);
  EXPECT_EQ(r.reason, "UnsupportedImage");
  EXPECT_EQ(r.message,
            "image \"alpine\" is not one the node n runs on its host (berth.dev/host-images: busybox,pytorch/*)");
  r = AdmitPodImages(pod, "n", std::vector<std::string>{"alpine"});
  EXPECT_EQ(r.message, "image \"pytorch/pytorch:2.7\" is not one the node n runs on its host (berth.dev/host-images: alpine)");
}

}  // namespace
}  // namespace berth::agent
