// The zero-latency replay's arrivals (kueue_replay.h): by default the
// scenario's i × interval, or the instants a real-time run observed.
#include "bench/kueue_replay.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <vector>

namespace berth::bench {
namespace {

// One ClusterQueue of 20 cpu that borrows nothing; three workloads of 20 cpu,
// 100 ms each, created 10 ms apart: they can only run one after another.
Scenario Serial() {
  Scenario sc{"serial", 1, 1, {{"whole", 3, 10, 100, 1, 20}}, {}};
  sc.nominal_cpu = 20;
  sc.borrowing_limit_cpu = 0;
  return sc;
}

TEST(KueueReplayTest, DefaultArrivalsAreTheScenariosSchedule) {
  const ReplayStats st = Replay(Serial());
  // Created at 10, 20, 30; admitted at 10, 110, 210: waits 0, 90, 180.
  EXPECT_DOUBLE_EQ(st.AvgAdmissionMs("whole"), 90);
  EXPECT_DOUBLE_EQ(st.end_s, 0.31);
  EXPECT_EQ(st.admitted, 3);

  const std::vector<int64_t> same = {10, 20, 30};
  const ReplayStats again = Replay(Serial(), 0, nullptr, &same);
  EXPECT_DOUBLE_EQ(again.AvgAdmissionMs("whole"), 90);
  EXPECT_DOUBLE_EQ(again.end_s, 0.31);
}

TEST(KueueReplayTest, ObservedArrivalsReplaceTheSchedule) {
  // All three seen at once: admitted at 0, 100, 200.
  const std::vector<int64_t> burst = {0, 0, 0};
  const ReplayStats st = Replay(Serial(), 0, nullptr, &burst);
  EXPECT_DOUBLE_EQ(st.AvgAdmissionMs("whole"), 100);
  EXPECT_DOUBLE_EQ(st.end_s, 0.3);

  // Seen late and far apart: each runs as it comes, no wait.
  const std::vector<int64_t> sparse = {1000, 2000, 3000};
  const ReplayStats late = Replay(Serial(), 0, nullptr, &sparse);
  EXPECT_DOUBLE_EQ(late.AvgAdmissionMs("whole"), 0);
  EXPECT_DOUBLE_EQ(late.end_s, 3.1);
  EXPECT_DOUBLE_EQ(late.wall_s, 2.1);
}

TEST(KueueReplayTest, ArrivalsOfTheWrongSizeAreIgnored) {
  const std::vector<int64_t> short_list = {0, 0};
  const ReplayStats st = Replay(Serial(), 0, nullptr, &short_list);
  EXPECT_DOUBLE_EQ(st.AvgAdmissionMs("whole"), 90);
  EXPECT_DOUBLE_EQ(st.end_s, 0.31);
}

}  // namespace
}  // namespace berth::bench
