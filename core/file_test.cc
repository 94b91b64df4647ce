#include "core/file.h"

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace berth {
namespace {

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-file-test.XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(FileTest, WriteReplacesTheWholeFileWithTheModeAndLeavesNoTemporary) {
  const std::string path = dir_ + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, "first", 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second\n", 0600).ok());
  EXPECT_EQ(*ReadFileBounded(path, 100), "second\n");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_F(FileTest, WriteIntoAMissingDirectoryNamesThePath) {
  Status s = WriteFileAtomically(dir_ + "/missing/f", "x");
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find(dir_ + "/missing/f.tmp"), std::string::npos) << s.message();
}

TEST_F(FileTest, ReadIsBoundedAndNamesMissingFiles) {
  const std::string path = dir_ + "/big";
  std::ofstream(path) << std::string(1000, 'a');
  EXPECT_EQ(ReadFileBounded(path, 1000)->size(), 1000u);
  StatusOr<std::string> big = ReadFileBounded(path, 999);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), Code::kTooLarge);
  StatusOr<std::string> missing = ReadFileBounded(dir_ + "/none", 10);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
}

// Whatever sits at the path, the reader answers at once: a FIFO (which would
// block an ordinary open until a writer comes), a directory, a device, a link
// when links are refused.
TEST_F(FileTest, ReadRefusesAnythingButARegularFileWithoutBlocking) {
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::filesystem::create_directory(dir_ + "/dir");
  std::filesystem::create_symlink("/dev/zero", dir_ + "/zero");
  std::ofstream(dir_ + "/real") << "x";
  std::filesystem::create_symlink(dir_ + "/real", dir_ + "/link");
  for (const std::string& path : {fifo, dir_ + "/dir", dir_ + "/zero", std::string("/dev/null")}) {
    StatusOr<std::string> r = ReadFileBounded(path, 100);
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.status().code(), Code::kInvalid) << path;
    EXPECT_EQ(r.status().message(), path + " is not a regular file");
  }
  EXPECT_EQ(*ReadFileBounded(dir_ + "/link", 100), "x");
  StatusOr<std::string> link = ReadFileBounded(dir_ + "/link", 100, /*follow_symlinks=*/false);
  ASSERT_FALSE(link.ok());
  EXPECT_EQ(link.status().message(), dir_ + "/link is a symbolic link");
}

}  // namespace
}  // namespace berth
