#include "core/file.h"

#include <fcntl.h>
#include <sys/resource.h>
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

// A deferred write is as whole to every process as a synced one; the fsyncs it leaves are
// SyncFileAndDirectory's, which refuses a link and names what it could not sync.
TEST_F(FileTest, ADeferredWriteIsWholeAndItsSyncNamesWhatFailed) {
  const std::string path = dir_ + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, "first", 0600, FileDurability::kDeferred).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second\n", 0640, FileDurability::kDeferred).ok());
  EXPECT_EQ(*ReadFileBounded(path, 100), "second\n");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_TRUE(SyncFileAndDirectory(path).ok());

  Status missing = SyncFileAndDirectory(dir_ + "/absent");
  EXPECT_EQ(missing.code(), Code::kInternal);
  EXPECT_NE(missing.message().find(dir_ + "/absent"), std::string::npos) << missing.message();
  std::filesystem::create_symlink(path, dir_ + "/link");
  Status link = SyncFileAndDirectory(dir_ + "/link");
  EXPECT_EQ(link.code(), Code::kInternal);
  EXPECT_NE(link.message().find(dir_ + "/link"), std::string::npos) << link.message();
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

// A tree 20,000 directories deep (deeper than the fds a process may hold here, and than
// std::filesystem::remove_all can remove), with files, hard links and symlinks: all of it goes
// with at most a few descriptors open, and what the links point to stays.
TEST_F(FileTest, RemoveTreeRemovesAnyDepthAndNeverFollowsALink) {
  const std::string outside = dir_ + "/outside";
  ASSERT_TRUE(std::filesystem::create_directory(outside));
  std::ofstream(outside + "/keep").put('k');
  const std::string tree = dir_ + "/tree";
  ASSERT_EQ(mkdir(tree.c_str(), 0755), 0);
  int fd = open(tree.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(mkdirat(fd, "d", 0755), 0);
    if (i % 1000 == 0) {
      ASSERT_EQ(symlinkat(outside.c_str(), fd, "link"), 0);
      int f = openat(fd, "file", O_CREAT | O_WRONLY, 0644);
      ASSERT_GE(f, 0);
      close(f);
      ASSERT_EQ(linkat(fd, "file", fd, "hard", 0), 0);
    }
    int next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
    close(fd);
    fd = next;
    ASSERT_GE(fd, 0);
  }
  close(fd);
  // Few descriptors: a walk that holds one per level fails.
  struct rlimit old_limit {};
  getrlimit(RLIMIT_NOFILE, &old_limit);
  struct rlimit low = old_limit;
  low.rlim_cur = 256;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  Status removed = RemoveTree(tree);
  setrlimit(RLIMIT_NOFILE, &old_limit);
  ASSERT_TRUE(removed.ok()) << removed.ToString();
  EXPECT_FALSE(std::filesystem::exists(tree));
  EXPECT_TRUE(std::filesystem::exists(outside + "/keep"));
  EXPECT_TRUE(RemoveTree(tree).ok()) << "a missing tree is removed already";
  std::ofstream(dir_ + "/plain").put('x');
  EXPECT_TRUE(RemoveTree(dir_ + "/plain").ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/plain"));
  ASSERT_EQ(symlink(outside.c_str(), (dir_ + "/alink").c_str()), 0);
  EXPECT_TRUE(RemoveTree(dir_ + "/alink").ok());
  EXPECT_TRUE(std::filesystem::exists(outside + "/keep")) << "a link given as the tree is removed, not followed";
}

}  // namespace
}  // namespace berth
