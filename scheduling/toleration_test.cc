#include "scheduling/toleration.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace berth::scheduling {
namespace {

struct TolerationCase {
  const char* name;
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

TEST(TolerationTest, ToleratesTaintTable) {
  using Op = Toleration::Operator;
  const Taint gpu{"node-role", "gpu", TaintEffect::kNoSchedule};
  const std::vector<TolerationCase> cases = {
      {"equal key value effect", {"node-role", Op::kEqual, "gpu", TaintEffect::kNoSchedule}, gpu, true},
      {"equal wrong value", {"node-role", Op::kEqual, "cpu", TaintEffect::kNoSchedule}, gpu, false},
      {"equal any effect", {"node-role", Op::kEqual, "gpu", std::nullopt}, gpu, true},
      {"wrong effect", {"node-role", Op::kEqual, "gpu", TaintEffect::kNoExecute}, gpu, false},
      {"exists ignores value", {"node-role", Op::kExists, "", std::nullopt}, gpu, true},
      {"exists other key", {"other", Op::kExists, "", std::nullopt}, gpu, false},
      {"empty key exists tolerates all", {"", Op::kExists, "", std::nullopt}, gpu, true},
      {"empty key exists, effect must match",
       {"", Op::kExists, "", TaintEffect::kPreferNoSchedule}, gpu, false},
      {"empty value equals empty value",
       {"node-role.kubernetes.io/control-plane", Op::kEqual, "", std::nullopt},
       {"node-role.kubernetes.io/control-plane", "", TaintEffect::kNoSchedule}, true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.toleration.Tolerates(c.taint), c.tolerates) << c.name;
  }
}

TEST(TolerationTest, TolerationsTolerateWhenAnyOneDoes) {
  using Op = Toleration::Operator;
  const Taint spot{"spot", "true", TaintEffect::kNoSchedule};
  EXPECT_FALSE(TolerationsTolerate({}, spot));
  EXPECT_FALSE(TolerationsTolerate({{"other", Op::kExists, "", std::nullopt}}, spot));
  EXPECT_TRUE(TolerationsTolerate(
      {{"other", Op::kExists, "", std::nullopt}, {"spot", Op::kEqual, "true", std::nullopt}}, spot));
}

}  // namespace
}  // namespace berth::scheduling
