#include "agent/shim/container_log.h"

#include <filesystem>
#include <gtest/gtest.h>

#include "agent/shim/testing/test_files.h"

namespace berth::agent::shim {
namespace {

class ContainerLogTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDirectory("log-test"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ContainerLogTest, PathLayout) {
  EXPECT_EQ(ContainerLogPath("/var/pods/u1", "main", 2), "/var/pods/u1/logs/main/2.log");
}

TEST_F(ContainerLogTest, FormatsNanoseconds) {
  FakeClock clock;
  EXPECT_EQ(FormatRfc3339Nano(clock.Now()), "2026-01-01T00:00:00.000000000Z");
  EXPECT_EQ(FormatRfc3339Nano(clock.Now() + std::chrono::nanoseconds(1500000123)), "2026-01-01T00:00:01.500000123Z");
}

TEST_F(ContainerLogTest, RawLinesTimestampsTailSinceAndLimit) {
  FakeClock clock;
  std::string path = ContainerLogPath(dir_.string(), "c", 0);
  auto w = ContainerLogWriter::Open(path, clock);
  ASSERT_TRUE(w.ok()) << w.status();
  (*w)->Append("one\ntw");  // a line split across reads keeps its first stamp
  clock.Advance(std::chrono::seconds(1));
  (*w)->Append("o\nthree\n");
  clock.Advance(std::chrono::seconds(1));
  (*w)->Append("four");  // partial last line

  auto raw = ReadContainerLog(path, {});
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(*raw, "one\ntwo\nthree\nfour");

  LogReadOptions ts;
  ts.timestamps = true;
  EXPECT_EQ(*ReadContainerLog(path, ts),
            "2026-01-01T00:00:00.000000000Z one\n"
            "2026-01-01T00:00:00.000000000Z two\n"
            "2026-01-01T00:00:01.000000000Z three\n"
            "2026-01-01T00:00:02.000000000Z four");

  LogReadOptions tail;
  tail.tail_lines = 2;
  EXPECT_EQ(*ReadContainerLog(path, tail), "three\nfour");

  LogReadOptions since;
  since.since_time = FakeClock().Now() + std::chrono::seconds(1);
  EXPECT_EQ(*ReadContainerLog(path, since), "three\nfour");

  LogReadOptions limit;
  limit.limit_bytes = 5;
  EXPECT_EQ(*ReadContainerLog(path, limit), "one\nt");
}

TEST_F(ContainerLogTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadContainerLog((dir_ / "nope.log").string(), {}).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace berth::agent::shim
