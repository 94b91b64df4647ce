#include "agent/shim/seccomp.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace berth::agent::shim {
namespace {

// Refused outright (seccomp.h lists why).
constexpr const char* kDenied[] = {
    "unshare",
    "setns",
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "fanotify_init",
    "name_to_handle_at",
    "open_by_handle_at",
    "add_key",
    "request_key",
    "keyctl",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "lookup_dcookie",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "query_module",
    "get_kernel_syms",
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "iopl",
    "ioperm",
    "vhangup",
    "quotactl",
    "quotactl_fd",
    "nfsservctl",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "settimeofday",
    "stime",
    "clock_settime",
    "clock_settime64",
    "sethostname",
    "setdomainname",
    "vm86",
    "vm86old",
};

// The namespace flags of Docker's clone rule (CLONE_NEWTIME shares its bit with the exit signal of clone).
constexpr uint64_t kCloneNewFlags[] = {CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,   CLONE_NEWUSER,
                                       CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP};

constexpr int kVsockFamily = 40;  // AF_VSOCK

struct ContextDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

Status Failed(const char* call, int rc) {
  return Status(Code::kInternal, std::string("seccomp: ") + call + ": " + std::strerror(-rc));
}

}  // namespace

StatusOr<SeccompProgram> BuildRuntimeDefaultSeccomp() {
  std::unique_ptr<void, ContextDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Status(Code::kInternal, "seccomp: seccomp_init failed");
  int rc = 0;
#if defined(__x86_64__)
  // The 32-bit ABI has its own system call numbers: filter it too.
  if ((rc = seccomp_arch_add(ctx.get(), SCMP_ARCH_X86)) != 0 && rc != -EEXIST) return Failed("seccomp_arch_add", rc);
#endif
  const uint32_t deny = SCMP_ACT_ERRNO(EPERM);
  for (const char* name : kDenied) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not a system call of this architecture
    if ((rc = seccomp_rule_add(ctx.get(), deny, nr, 0)) != 0) return Failed(name, rc);
  }
  for (uint64_t flag : kCloneNewFlags) {
    if ((rc = seccomp_rule_add(ctx.get(), deny, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag))) != 0) {
      return Failed("clone", rc);
    }
  }
  if (const int nr = seccomp_syscall_resolve_name("clone3"); nr != __NR_SCMP_ERROR) {
    if ((rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), nr, 0)) != 0) return Failed("clone3", rc);
  }
  if ((rc = seccomp_rule_add(ctx.get(), deny, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, kVsockFamily))) != 0) {
    return Failed("socket", rc);
  }
  // libseccomp writes the program to a descriptor: a memory file, read back.
  const int fd = memfd_create("berth-seccomp", MFD_CLOEXEC);
  if (fd < 0) return Status(Code::kInternal, std::string("seccomp: memfd_create: ") + std::strerror(errno));
  rc = seccomp_export_bpf(ctx.get(), fd);
  const off_t size = lseek(fd, 0, SEEK_END);
  SeccompProgram program;
  if (rc == 0 && size > 0 && size % sizeof(sock_filter) == 0) {
    program.code.resize(size / sizeof(sock_filter));
    if (pread(fd, program.code.data(), size, 0) != size) rc = -EIO;
  } else if (rc == 0) {
    rc = -EIO;
  }
  close(fd);
  if (rc != 0) return Failed("seccomp_export_bpf", rc);
  return program;
}

int ApplySeccomp(const SeccompProgram& program) {
  sock_fprog prog{};
  prog.len = static_cast<unsigned short>(program.code.size());
  prog.filter = const_cast<sock_filter*>(program.code.data());
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : errno;
}

}  // namespace berth::agent::shim
