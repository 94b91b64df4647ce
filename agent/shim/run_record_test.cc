#include "agent/shim/run_record.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include "agent/shim/testing/test_files.h"

namespace berth::agent::shim {
namespace {

namespace fs = std::filesystem;

class RunRecordTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::FreshTestDirectory("run-record").string(); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(RunRecordTest, LaunchAndExitRecordsRoundTrip) {
  LaunchRecord launch;
  launch.container = "trainer";
  launch.run = 2;
  launch.argv = {"python3", "-c", "print('\xff')"};  // not UTF-8: stored replaced, never a crash
  launch.env = {"PATH=/bin", "RANK=0"};
  launch.working_dir = "/w";
  launch.log_path = "/w/logs/trainer/2.log";
  launch.started_at = Time(std::chrono::nanoseconds(1'700'000'000'123'456'789));
  launch.devices = {0, 3};
  launch.ports = {{"10.0.0.5", "team-a/job-node-0-0.job:29500", 23456}};
  launch.log_rotation = {4096, 3};
  launch.cgroup_dirs = {"/sys/fs/cgroup/cpu/berth/podu1/trainer-2", "/sys/fs/cgroup/memory/berth/podu1/trainer-2"};
  const std::string run = RunDir(dir_, "trainer", 2);
  EXPECT_EQ(run, dir_ + "/runs/trainer/2");
  ASSERT_TRUE(WriteLaunchRecord(run, launch).ok());
  StatusOr<LaunchRecord> read = ReadLaunchRecord(run);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  launch.argv[2] = read->argv[2];
  EXPECT_EQ(*read, launch);
  EXPECT_EQ((fs::status(run + "/launch.json").permissions() & fs::perms::all),
            fs::perms::owner_read | fs::perms::owner_write);

  ExitRecord exit{137, 9, "", launch.started_at, launch.started_at + std::chrono::seconds(5)};
  ASSERT_TRUE(WriteExitRecord(run, exit).ok());
  EXPECT_EQ(*ReadExitRecord(run), exit);
  exit.lost = true;
  exit.lost_detail = "its supervisor is gone";
  ASSERT_TRUE(WriteExitRecord(run, exit).ok());
  EXPECT_EQ(*ReadExitRecord(run), exit);
  EXPECT_EQ(ListRuns(dir_, "trainer"), (std::vector<std::pair<int, std::string>>{{2, run}}));
}

TEST_F(RunRecordTest, ALaunchRecordsPortsAreCheckedOneByOne) {
  LaunchRecord launch;
  launch.ports = {{"h", "k", 20000}, {"h", "k2", 20001}};
  const std::string run = RunDir(dir_, "c", 0);
  ASSERT_TRUE(WriteLaunchRecord(run, launch).ok());
  std::string text = agent::shim::testing::ReadFile(run + "/launch.json");
  text.replace(text.find("20001"), 5, "70000");
  std::ofstream(run + "/launch.json", std::ios::trunc) << text;
  StatusOr<LaunchRecord> read = ReadLaunchRecord(run);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), run + "/launch.json: ports[1]: field \"port\" must be an integer in [1, 65535]");
}

// Records written before cgroupDirs name one directory, "" for none.
TEST_F(RunRecordTest, ALaunchRecordWithTheOldCgroupDirIsRead) {
  const std::string run = RunDir(dir_, "c", 0);
  fs::create_directories(run);
  const std::string base =
      R"({"version":1,"container":"c","run":0,"argv":["sh"],"env":[],"workingDir":"/w","logPath":"/w/0.log",)"
      R"("startedAt":1,"devices":[],)";
  std::ofstream(run + "/launch.json") << base << R"("cgroupDir":"/sys/fs/cgroup/berth-u1-c-0"})";
  StatusOr<LaunchRecord> read = ReadLaunchRecord(run);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->cgroup_dirs, std::vector<std::string>{"/sys/fs/cgroup/berth-u1-c-0"});
  std::ofstream(run + "/launch.json") << base << R"("cgroupDir":""})";
  read = ReadLaunchRecord(run);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE(read->cgroup_dirs.empty());
  std::ofstream(run + "/launch.json") << base << R"("cgroupDirs":"/x"})";
  EXPECT_EQ(ReadLaunchRecord(run).status().code(), Code::kInvalid);
}

TEST_F(RunRecordTest, MissingRecordsAreNotFound) {
  EXPECT_EQ(ReadLaunchRecord(dir_ + "/none").status().code(), Code::kNotFound);
  EXPECT_EQ(ReadExitRecord(dir_ + "/none").status().code(), Code::kNotFound);
  EXPECT_TRUE(ListRuns(dir_, "c").empty());
}

// Every way an exit record can be damaged is an error naming the file and the
// reason, never a crash or a made-up exit code.
TEST_F(RunRecordTest, DamagedExitRecordsAreInvalidWithTheReason) {
  const std::string run = RunDir(dir_, "c", 0);
  fs::create_directories(run);
  struct Case {
    std::string content;
    std::string reason;
  } cases[] = {
      {"", "is not valid JSON"},
      {R"({"version":1,"exitCode":3,"sig)", "is not valid JSON"},
      {"[1,2]", "is not a JSON object"},
      {R"({"exitCode":3})", "unknown record version"},
      {R"({"version":2,"exitCode":3})", "unknown record version"},
      {R"({"version":1,"exitCode":"3","signal":0,"startError":"","startedAt":0,"finishedAt":0})",
       "field \"exitCode\" must be an integer"},
      {R"({"version":1,"exitCode":300,"signal":0,"startError":"","startedAt":0,"finishedAt":0})",
       "field \"exitCode\" must be an integer in [0, 255]"},
      {R"({"version":1,"exitCode":0,"signal":0,"startError":"","startedAt":0})", "field \"finishedAt\""},
      {std::string(kMaxRecordBytes + 1, ' '), "is larger than"},
      {R"({"version":1,"exitCode":0,"signal":0,"startError":"","startedAt":0,"finishedAt":0,"lost":"yes"})",
       "field \"lost\" must be a boolean"},
  };
  for (const Case& c : cases) {
    std::ofstream(run + "/exit.json", std::ios::trunc) << c.content;
    StatusOr<ExitRecord> r = ReadExitRecord(run);
    ASSERT_FALSE(r.ok()) << c.content.substr(0, 80);
    EXPECT_EQ(r.status().code(), Code::kInvalid);
    EXPECT_NE(r.status().message().find(run + "/exit.json"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.reason), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace berth::agent::shim
