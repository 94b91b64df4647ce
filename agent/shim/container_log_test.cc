#include "agent/shim/container_log.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <regex>
#include <vector>

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
  EXPECT_EQ(raw->text, "one\ntwo\nthree\nfour");

  LogReadOptions ts;
  ts.timestamps = true;
  EXPECT_EQ(ReadContainerLog(path, ts)->text,
            "2026-01-01T00:00:00.000000000Z one\n"
            "2026-01-01T00:00:00.000000000Z two\n"
            "2026-01-01T00:00:01.000000000Z three\n"
            "2026-01-01T00:00:02.000000000Z four");

  LogReadOptions tail;
  tail.tail_lines = 2;
  EXPECT_EQ(ReadContainerLog(path, tail)->text, "three\nfour");

  LogReadOptions since;
  since.since_time = FakeClock().Now() + std::chrono::seconds(1);
  EXPECT_EQ(ReadContainerLog(path, since)->text, "three\nfour");

  LogReadOptions limit;
  limit.limit_bytes = 5;
  EXPECT_EQ(ReadContainerLog(path, limit)->text, "one\nt");
}

// The files of the log at `path` (the current one and the rotated ones), by name.
std::vector<std::filesystem::path> LogFiles(const std::string& path) {
  std::vector<std::filesystem::path> out;
  const std::string base = std::filesystem::path(path).filename().string();
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
    const std::string name = e.path().filename().string();
    if (name.rfind(base, 0) == 0 && !name.ends_with(".ts")) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Line(int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "line %05d\n", i);
  return buf;
}

std::string Lines(int from, int to) {
  std::string out;
  for (int i = from; i < to; ++i) out += Line(i);
  return out;
}

TEST_F(ContainerLogTest, RotationKeepsAtMostMaxFilesOfAtMostTheSizeAndTheNewestContent) {
  FakeClock clock;
  const std::string path = ContainerLogPath(dir_.string(), "c", 0);
  auto w = ContainerLogWriter::Open(path, clock, {1000, 3});
  ASSERT_TRUE(w.ok()) << w.status();
  for (int i = 0; i < 500; ++i) (*w)->Append(Line(i));

  std::vector<std::filesystem::path> files = LogFiles(path);
  ASSERT_EQ(files.size(), 3u);
  // The kubelet's names: <log>.<20060102-150405>, a second rotation within one
  // second numbered after it.
  EXPECT_EQ(files[0].filename(), "0.log");
  const std::regex rotated(R"(0\.log\.20260101-000000(-\d{6})?)");
  EXPECT_TRUE(std::regex_match(files[1].filename().string(), rotated)) << files[1];
  EXPECT_TRUE(std::regex_match(files[2].filename().string(), rotated)) << files[2];
  const uint64_t entry = std::string("123 2026-01-01T00:00:00.000000000Z\n").size();
  for (const auto& f : files) {
    // log + index at most the limit, plus one line and its entry
    EXPECT_LE(std::filesystem::file_size(f) + std::filesystem::file_size(f.string() + ".ts"),
              1000 + Line(0).size() + entry)
        << f;
  }
  // The newest lines survive, contiguous, oldest file first.
  StatusOr<LogChunk> all = ReadContainerLog(path, {});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_FALSE(all->text.empty());
  const int first = std::stoi(all->text.substr(5, 5));
  EXPECT_GT(first, 400);
  EXPECT_EQ(all->text, Lines(first, 500));
  // Rotation disabled (a negative size): one file.
  const std::string plain = ContainerLogPath(dir_.string(), "c", 1);
  auto unrotated = ContainerLogWriter::Open(plain, clock, {-1, 3});
  for (int i = 0; i < 500; ++i) (*unrotated)->Append(Line(i));
  EXPECT_EQ(LogFiles(plain).size(), 1u);
  EXPECT_EQ(ReadContainerLog(plain, {})->text, Lines(0, 500));
}

TEST_F(ContainerLogTest, ALineWithoutEndIsCutPastTheLimit) {
  FakeClock clock;
  const std::string path = ContainerLogPath(dir_.string(), "c", 0);
  auto w = ContainerLogWriter::Open(path, clock, {1000, 5});
  const std::string long_line(40000, 'x');
  (*w)->Append(long_line);
  (*w)->Append("\nend\n");
  std::vector<std::filesystem::path> files = LogFiles(path);
  ASSERT_EQ(files.size(), 4u);  // 17 KiB, 17 KiB, the rest of the line, "end\n"
  for (const auto& f : files) EXPECT_LE(std::filesystem::file_size(f), 1000 + kMaxLogLineBytes) << f;
  // Each piece is a line of its own (with a timestamp each, as containerd's partial lines).
  LogReadOptions tail;
  tail.tail_lines = 1;
  EXPECT_EQ(ReadContainerLog(path, tail)->text, "end\n");
  EXPECT_EQ(ReadContainerLog(path, {})->text, long_line + "\nend\n");
}

TEST_F(ContainerLogTest, TailSinceAndTimestampsSpanRotatedFiles) {
  FakeClock clock;
  const std::string path = ContainerLogPath(dir_.string(), "c", 0);
  auto w = ContainerLogWriter::Open(path, clock, {1000, 5});
  for (int i = 0; i < 60; ++i) {
    (*w)->Append(Line(i));
    clock.Advance(std::chrono::seconds(1));
  }
  ASSERT_GE(LogFiles(path).size(), 3u);  // ~19 lines per file
  LogReadOptions tail;
  tail.tail_lines = 45;
  EXPECT_EQ(ReadContainerLog(path, tail)->text, Lines(15, 60));
  tail.tail_lines = 1000;
  EXPECT_EQ(ReadContainerLog(path, tail)->text, Lines(0, 60));
  tail.tail_lines = 0;
  StatusOr<LogChunk> none = ReadContainerLog(path, tail);
  EXPECT_EQ(none->text, "");
  EXPECT_TRUE(none->at_end);

  LogReadOptions since;
  since.since_time = FakeClock().Now() + std::chrono::seconds(7);
  EXPECT_EQ(ReadContainerLog(path, since)->text, Lines(7, 60));
  since.since_time = FakeClock().Now() + std::chrono::seconds(33);
  since.tail_lines = 100;
  EXPECT_EQ(ReadContainerLog(path, since)->text, Lines(33, 60));
  since.tail_lines = 2;
  EXPECT_EQ(ReadContainerLog(path, since)->text, Lines(58, 60));

  LogReadOptions ts;
  ts.timestamps = true;
  ts.tail_lines = 2;
  EXPECT_EQ(ReadContainerLog(path, ts)->text,
            "2026-01-01T00:00:58.000000000Z line 00058\n2026-01-01T00:00:59.000000000Z line 00059\n");
}

// What `kubectl logs -f` reads: only what was written after the cursor, across rotations.
TEST_F(ContainerLogTest, FollowReadsOnlyNewBytesAcrossRotations) {
  FakeClock clock;
  const std::string path = ContainerLogPath(dir_.string(), "c", 0);
  auto w = ContainerLogWriter::Open(path, clock, {1000, 5});
  for (int i = 0; i < 10; ++i) (*w)->Append(Line(i));
  uint64_t read = 0;
  LogReadOptions o;
  o.bytes_read = &read;
  StatusOr<LogChunk> first = ReadContainerLog(path, o);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->text, Lines(0, 10));
  EXPECT_TRUE(first->at_end);
  LogCursor cursor = first->end;

  // Nothing new: nothing read.
  read = 0;
  StatusOr<LogChunk> empty = ReadContainerLogFrom(path, cursor, o);
  EXPECT_EQ(empty->text, "");
  EXPECT_TRUE(empty->at_end);
  EXPECT_EQ(read, 0u);

  // 50 lines: two rotations (fewer than max_files) while nobody read.
  for (int i = 10; i < 60; ++i) (*w)->Append(Line(i));
  ASSERT_GE(LogFiles(path).size(), 3u);
  read = 0;
  StatusOr<LogChunk> next = ReadContainerLogFrom(path, cursor, o);
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->text, Lines(10, 60));
  EXPECT_EQ(read, Lines(10, 60).size());
  cursor = next->end;

  // In chunks of at most max_bytes.
  for (int i = 60; i < 70; ++i) (*w)->Append(Line(i));
  StatusOr<LogChunk> part = ReadContainerLogFrom(path, cursor, o, 3 * Line(0).size());
  EXPECT_EQ(part->text, Lines(60, 63));
  EXPECT_FALSE(part->at_end);
  StatusOr<LogChunk> rest = ReadContainerLogFrom(path, part->end, o);
  EXPECT_EQ(rest->text, Lines(63, 70));
  EXPECT_TRUE(rest->at_end);
  cursor = rest->end;

  // A partial line, then its end: the continuation gets no second timestamp.
  LogReadOptions ts;
  ts.timestamps = true;
  (*w)->Append("par");
  StatusOr<LogChunk> partial = ReadContainerLogFrom(path, cursor, ts);
  EXPECT_EQ(partial->text, "2026-01-01T00:00:00.000000000Z par");
  EXPECT_FALSE(partial->end.line_start);
  clock.Advance(std::chrono::seconds(1));
  (*w)->Append("tial\nnext\n");
  EXPECT_EQ(ReadContainerLogFrom(path, partial->end, ts)->text, "tial\n2026-01-01T00:00:01.000000000Z next\n");

  // A follower that fell behind by more than max_files rotations continues at the oldest file left.
  cursor = ReadContainerLog(path, {})->end;
  for (int i = 100; i < 300; ++i) (*w)->Append(Line(i));
  StatusOr<LogChunk> behind = ReadContainerLogFrom(path, cursor, {});
  EXPECT_EQ(behind->text, ReadContainerLog(path, {})->text);
  EXPECT_TRUE(behind->text.ends_with(Line(299)));
}

// --tail costs the tail, not the log: the same bytes are read from a 1 MiB and a 50 MiB log.
TEST_F(ContainerLogTest, TailReadsTheSameBytesOfA1MiBAndA50MiBLog) {
  FakeClock clock;
  auto write = [&](int run, size_t bytes, LogRotation rotation) {
    const std::string path = ContainerLogPath(dir_.string(), "c", run);
    auto w = ContainerLogWriter::Open(path, clock, rotation);
    std::string chunk;
    for (int i = 0; chunk.size() < (64 << 10); ++i) chunk += std::string(90, 'a' + i % 26) + "\n";
    for (size_t n = 0; n < bytes; n += chunk.size()) {
      (*w)->Append(chunk);
      clock.Advance(std::chrono::milliseconds(10));
    }
    return path;
  };
  const std::string small = write(0, 1 << 20, {-1, 5});
  const std::string large = write(1, 50 << 20, {-1, 5});
  const std::string rotated = write(2, 50 << 20, {});  // the default 10 MiB x 5
  ASSERT_GE(std::filesystem::file_size(large), 50u << 20);
  ASSERT_EQ(LogFiles(rotated).size(), 5u);
  auto cost = [](const std::string& path, bool timestamps) {
    uint64_t read = 0;
    LogReadOptions o;
    o.tail_lines = 10;
    o.timestamps = timestamps;
    o.bytes_read = &read;
    StatusOr<LogChunk> tail = ReadContainerLog(path, o);
    EXPECT_TRUE(tail.ok());
    EXPECT_EQ(std::count(tail->text.begin(), tail->text.end(), '\n'), 10);
    return read;
  };
  EXPECT_EQ(cost(small, false), cost(large, false));
  EXPECT_EQ(cost(small, false), cost(rotated, false));
  EXPECT_LE(cost(small, false), 16u << 10);
  // With timestamps the index is searched (a few probes more for a larger index).
  EXPECT_LE(cost(large, true), 32u << 10);
  EXPECT_LE(cost(rotated, true), 32u << 10);
}

TEST_F(ContainerLogTest, MissingFileIsNotFound) {
  EXPECT_EQ(ReadContainerLog((dir_ / "nope.log").string(), {}).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace berth::agent::shim
