#include "admission/model.h"

#include <gtest/gtest.h>

#include "admission/testing/builders.h"

namespace berth::admission {
namespace {

using testing::Q;

TEST(PodSetTotalTest, MultipliesByCountMinusReclaimable) {
  ResourceNames names;
  ResourceId cpu = names.Intern("cpu");
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

namespace berth::admission {
namespace {

// Kueue's ResourceFormatter: bytes in binary SI when exact, else canonical
// decimal; cpu in milli; everything else decimal SI.
TEST(FormatAmountTest, AsKueuesResourceFormatter) {
  const Amount kMi = int64_t{1024} * 1024 * 1000;  // milli-units
  EXPECT_EQ(FormatAmount("memory", 600 * kMi), "600Mi");
  EXPECT_EQ(FormatAmount("memory", 12 * 1024 * kMi), "12Gi");
  EXPECT_EQ(FormatAmount("memory", int64_t{1500000000} * 1000), "1500M");
  EXPECT_EQ(FormatAmount("memory", int64_t{1536} * 1000), "1536");  // 1.5Ki: no exact binary suffix
  EXPECT_EQ(FormatAmount("memory", 0), "0");
  EXPECT_EQ(FormatAmount("ephemeral-storage", 2 * 1024 * kMi), "2Gi");
  EXPECT_EQ(FormatAmount("hugepages-2Mi", 4 * kMi), "4Mi");
  EXPECT_EQ(FormatAmount("cpu", 500), "500m");
  EXPECT_EQ(FormatAmount("cpu", 4000), "4");
  EXPECT_EQ(FormatAmount("nvidia.com/gpu", 8000), "8");
  EXPECT_EQ(FormatAmount("pods", 1024 * 1000), "1024");  // not bytes: never "1Ki"
}

}  // namespace
}  // namespace berth::admission
