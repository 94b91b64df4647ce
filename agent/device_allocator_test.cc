#include "agent/device_allocator.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

TEST(DeviceAllocatorTest, LowestFreeIndicesAllOrNothing) {
  DeviceAllocator d(4);
  EXPECT_EQ(d.Allocate("u1/a", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(d.Allocate("u2/a", 1), (std::vector<int>{2}));
  EXPECT_EQ(d.Allocate("u1/a", 2), (std::vector<int>{0, 1}));  // idempotent
  EXPECT_FALSE(d.Allocate("u1/a", 3));                         // different size for a holder
  EXPECT_FALSE(d.Allocate("u3/a", 2));                         // only 1 free: nothing assigned
  EXPECT_EQ(d.free_count(), 1);
  d.Release("u1/a");
  EXPECT_EQ(d.Allocate("u3/a", 3), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(d.Allocate("u4/a", 0), std::vector<int>{});
  d.ReleasePrefix("u3/");
  EXPECT_EQ(d.Held("u2/a"), std::vector<int>{2});
  EXPECT_EQ(d.free_count(), 3);
}

TEST(DeviceAllocatorTest, RestoreChecksRangeAndOwnership) {
  DeviceAllocator d(2);
  EXPECT_TRUE(d.Restore("u1/a", {1}).ok());
  EXPECT_EQ(d.Restore("u2/a", {1}).code(), Code::kConflict);
  EXPECT_EQ(d.Restore("u2/a", {2}).code(), Code::kInvalid);
  EXPECT_EQ(d.Allocate("u2/a", 1), std::vector<int>{0});
}

TEST(DeviceAllocatorTest, RequestAndEnvironment) {
  auto c = api::Object::parse(R"({"resources": {"limits": {"nvidia.com/gpu": "2"}}})");
  EXPECT_EQ(*DeviceRequest(c), 2);
  EXPECT_EQ(*DeviceRequest(api::Object::parse(R"({"resources": {"requests": {"nvidia.com/gpu": 1}}})")), 1);
  EXPECT_EQ(*DeviceRequest(api::Object::parse(R"({"name": "x"})")), 0);
  EXPECT_EQ(
      DeviceRequest(api::Object::parse(R"({"resources": {"limits": {"nvidia.com/gpu": "500m"}}})")).status().code(),
      Code::kInvalid);
  EXPECT_EQ(DeviceEnv({0, 3}, 4),
            (std::vector<EnvVar>{{"CUDA_VISIBLE_DEVICES", "0,3"}, {"NVIDIA_VISIBLE_DEVICES", "0,3"}}));
  EXPECT_EQ(DeviceEnv({}, 4), (std::vector<EnvVar>{{"CUDA_VISIBLE_DEVICES", ""}, {"NVIDIA_VISIBLE_DEVICES", "void"}}));
  EXPECT_TRUE(DeviceEnv({}, 0).empty());
}

TEST(DeviceAllocatorTest, CountsNvidiaSmiList) {
  EXPECT_EQ(ParseNvidiaSmiList("GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-1)\n"
                               "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-2)\n"),
            2);
  EXPECT_EQ(ParseNvidiaSmiList(""), 0);
  EXPECT_EQ(ParseNvidiaSmiList("No devices were found\n"), 0);
}

}  // namespace
}  // namespace berth::agent
