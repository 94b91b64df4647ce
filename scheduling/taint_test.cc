#include "scheduling/taint.h"

#include <gtest/gtest.h>

namespace berth::scheduling {
namespace {

TEST(TaintTest, EffectNamesAndGoString) {
  EXPECT_EQ(TaintEffectName(TaintEffect::kNoSchedule), "NoSchedule");
  EXPECT_EQ(TaintEffectName(TaintEffect::kPreferNoSchedule), "PreferNoSchedule");
  EXPECT_EQ(TaintEffectName(TaintEffect::kNoExecute), "NoExecute");
  // Kueue's "untolerated taint {key val NoSchedule <nil>} in flavor F".
  EXPECT_EQ((Taint{"key", "val", TaintEffect::kNoSchedule}.String()), "{key val NoSchedule <nil>}");
  EXPECT_EQ((Taint{"spot", "", TaintEffect::kNoExecute}.String()), "{spot  NoExecute <nil>}");
}

}  // namespace
}  // namespace berth::scheduling
