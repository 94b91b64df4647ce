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
