#include "agent/shim/seccomp.h"

#include <cerrno>
#include <gtest/gtest.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace berth::agent::shim {
namespace {

// Runs `body` in a child under the filter; the child's exit code is body's result.
int UnderFilter(const std::function<int()>& body) {
  StatusOr<SeccompProgram> filter = BuildRuntimeDefaultSeccomp();
  EXPECT_TRUE(filter.ok()) << filter.status().ToString();
  if (!filter.ok()) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ApplySeccomp(*filter) != 0) _exit(200);
    _exit(body());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 300;
}

// The errno of a system call that fails (0 when it succeeds).
int ErrnoOf(long rc) { return rc < 0 ? errno : 0; }

TEST(SeccompTest, NamespacesKeysAndKernelInterfacesFailEperm) {
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(unshare(CLONE_NEWUSER)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(unshare(CLONE_NEWNS)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_setns, 0, 0)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_keyctl, 0 /*KEYCTL_GET_KEYRING_ID*/, -3, 0)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_add_key, "user", "k", "v", 1, -3)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_userfaultfd, 0)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_bpf, 0, nullptr, 0)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_perf_event_open, nullptr, 0, -1, -1, 0)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_mount, "none", "/", "tmpfs", 0, nullptr)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_io_uring_setup, 1, nullptr)); }), EPERM);
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(socket(40 /*AF_VSOCK*/, SOCK_STREAM, 0)); }), EPERM);
  // A clone with a namespace flag fails; clone3 says ENOSYS so libc falls back to clone.
  EXPECT_EQ(UnderFilter([] { return ErrnoOf(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)); }), EPERM);
  EXPECT_EQ(UnderFilter([] {
              clone_args args{};
              args.exit_signal = SIGCHLD;
              return ErrnoOf(syscall(SYS_clone3, &args, sizeof args));
            }),
            ENOSYS);
}

TEST(SeccompTest, OrdinaryProgramsRunForkThreadsAndExec) {
  EXPECT_EQ(UnderFilter([] {
              int sum = 0;
              std::thread t([&] { sum = 41; });
              t.join();
              const pid_t child = fork();
              if (child == 0) _exit(1);
              int status = 0;
              waitpid(child, &status, 0);
              return sum + WEXITSTATUS(status);
            }),
            42);
  EXPECT_EQ(UnderFilter([] {
              const int s = socket(AF_INET, SOCK_STREAM, 0);
              return s >= 0 ? 0 : errno;
            }),
            0);
  EXPECT_EQ(UnderFilter([] {
              execl("/bin/sh", "sh", "-c", "python3 -c 'import threading, os; print(os.getpid())' >/dev/null && exit 9",
                    nullptr);
              return 1;
            }),
            9);
}

}  // namespace
}  // namespace berth::agent::shim
