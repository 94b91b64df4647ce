// The seccomp filter of a sandboxed container's processes (a pod's
// securityContext.seccompProfile type RuntimeDefault, which berth applies to
// every sandboxed container; see docs/security.md "System calls").
//
// What it refuses, modelled on Docker's and containerd's default profile
// (moby profiles/seccomp/default.json, containerd
// contrib/seccomp/seccomp_default.go): the system calls those profiles allow
// only with a capability Docker's default set lacks (CAP_SYS_ADMIN,
// CAP_SYS_MODULE, CAP_SYS_BOOT, CAP_SYS_PACCT, CAP_SYS_RAWIO, CAP_SYS_TIME,
// CAP_SYS_TTY_CONFIG, CAP_DAC_READ_SEARCH) or never allow:
//   - namespaces: unshare, setns, clone with any CLONE_NEW* flag (the profile's
//     `clone` rule: flags & (NEWNS|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET|NEWCGROUP)
//     must be 0); clone3 fails ENOSYS instead (its flags are behind a pointer
//     seccomp cannot read; glibc then falls back to clone, as under Docker);
//   - mounts: mount, umount2, pivot_root, move_mount, open_tree, fsopen,
//     fsconfig, fsmount, fspick, mount_setattr, fanotify_init, name_to_handle_at,
//     open_by_handle_at;
//   - the kernel's keyring (not namespaced): add_key, request_key, keyctl;
//   - bpf, perf_event_open, userfaultfd, lookup_dcookie, io_uring_setup,
//     io_uring_enter, io_uring_register (not in moby's default profile since
//     Docker 25);
//   - kexec_load, kexec_file_load, init_module, finit_module, delete_module,
//     reboot, swapon, swapoff, acct, iopl, ioperm, vhangup, quotactl,
//     quotactl_fd, nfsservctl, uselib, ustat, sysfs, _sysctl, settimeofday,
//     stime, clock_settime, sethostname, setdomainname (berth's pods share the
//     host's UTS namespace), socket(AF_VSOCK);
// each with EPERM (the profiles' defaultErrnoRet 1). Everything else is
// allowed: it is a deny list of what the upstream allow list leaves out, so a
// system call newer than this list is allowed where Docker's refuses it.
// ptrace, process_vm_readv/writev and kcmp stay allowed (Docker allows them on
// kernels >= 4.8; the sandbox's PID namespace limits whom they reach).
// personality is not restricted (Docker allows only a few personas; libseccomp
// cannot express "none of these values" as a deny rule).
//
// Thread-safety: BuildRuntimeDefaultSeccomp allocates (call it before fork);
// ApplySeccomp is async-signal-safe (for a forked child of a threaded process).
#pragma once

#include <linux/filter.h>
#include <vector>

#include "core/status.h"

namespace berth::agent::shim {

// A compiled filter: the classic BPF program the kernel runs.
struct SeccompProgram {
  std::vector<sock_filter> code;
};

// The RuntimeDefault filter for the running architecture (and its 32-bit
// compat ABI on x86_64), compiled by libseccomp. kInternal naming the
// libseccomp call that failed.
StatusOr<SeccompProgram> BuildRuntimeDefaultSeccomp();

// Loads `program` on the calling thread (prctl PR_SET_SECCOMP; needs
// no_new_privs or CAP_SYS_ADMIN). Returns 0 or the errno.
int ApplySeccomp(const SeccompProgram& program);

}  // namespace berth::agent::shim
