#include "core/this_thread.h"

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

TEST(ThisThreadTest, NiceChangesTheCallingThreadOnly) {
  const int before = NiceOf(gettid());
  int inside = 0;
  std::thread([&] {
    SetCurrentThreadNice(before + 5);
    inside = NiceOf(gettid());
  }).join();
  EXPECT_EQ(inside, before + 5);
  EXPECT_EQ(NiceOf(gettid()), before) << "the other threads keep theirs";
}

}  // namespace
}  // namespace berth
