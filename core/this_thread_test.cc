#include "core/this_thread.h"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

namespace berth {
namespace {

std::string OwnComm() {
  std::ifstream in("/proc/self/task/" + std::to_string(gettid()) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

int NiceOf(pid_t tid) {
  errno = 0;
  return getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
}

TEST(ThisThreadTest, TheThreadShowsItsNameCutTo15Bytes) {
  std::string short_name, long_name;
  std::thread([&] {
    SetCurrentThreadName("estimates");
    short_name = OwnComm();
    SetCurrentThreadName("kueue/clusterqueue-status");
    long_name = OwnComm();
  }).join();
  EXPECT_EQ(short_name, "estimates");
  EXPECT_EQ(long_name, "kueue/clusterqu");
}

TEST(ThisThreadTest, LoweringAddsToTheThreadsNiceAndLeavesTheOthers) {
  const int before = NiceOf(gettid());
  int first = 0, second = 0;
  std::thread([&] {
    LowerCurrentThreadPriority(2);
    first = NiceOf(gettid());
    LowerCurrentThreadPriority(3);
    second = NiceOf(gettid());
  }).join();
  EXPECT_EQ(first, std::min(before + 2, 19));
  EXPECT_EQ(second, std::min(before + 5, 19)) << "relative to the thread's nice, not absolute";
  EXPECT_EQ(NiceOf(gettid()), before) << "the other threads keep theirs";
}

}  // namespace
}  // namespace berth
