// The supervisor program: the container supervisor (shim.h), the sandbox's
// init (sandbox.h) and the supervisors' launcher (launcher.h) built as a
// small statically linked program of their own (agent/shim/
// supervisor_main.cc, target berth_supervisor), whose image the berth binary
// embeds, so that berth stays one file.
//
// Why: a supervisor the launcher forks from the whole berth binary (~580 MB
// with debug info, 18 shared libraries) touched ~85 pages before it was ready
// (its text mapped in again, copy-on-write of the relocated data), and its
// sandbox init the same again; from the ~3 MB static program it touches ~50,
// and its start costs about half the CPU (bench/shim_start.py). The server's
// allocator or libraries no longer reach the supervisors either.
//
// InstallSupervisorImage(image) copies `image` into a memfd sealed against
// every change (F_SEAL_WRITE, _SHRINK, _GROW, _SEAL, and _EXEC where the
// kernel has it (6.3): nobody can alter the program the supervisors are
// started from, or take its execute permission; nothing is written to disk),
// executes it once as `<memfd> shim --check` (which must exit 0: memfd
// execution can be forbidden, vm.memfd_noexec) and returns the supervisor
// command for SupervisorOptions::command: {"/proc/<pid>/fd/<n>", "shim"}. The
// path names this process's descriptor (a spawned child resolves it before
// its close-on-exec descriptors close), so it is valid while this process
// lives; <pid> is /proc/self as the mounted /proc reads it, and the path is
// checked to reach the memfd (same device and inode) before it is used; the supervisors keep the memfd's program mapped
// whatever happens to this process or to the berth binary on disk. Their /proc/<pid>/exe reads
// "/memfd:berth-supervisor (deleted)"; their command lines show
// "berth-shim" (launcher.h "Command line"), never the path.
// Once per process and image address: later calls return the first call's
// result. Errors:
// kUnavailable when `image` is empty (a sanitizer or fuzzing build
// embeds none: ASan cannot link statically); kInternal naming the step
// (memfd_create, also naming vm.memfd_noexec when it is refused; write; seal;
// /proc/self, or a path that does not reach the memfd; the check's spawn or its
// exit status). The
// caller then keeps the default command, `/proc/self/exe shim`, which works
// the same at the old cost.
//
// EmbeddedSupervisorImage(): the embedded program's bytes (library
// berth_supervisor_image, which only the berth binary links); empty in a
// sanitizer or fuzzing build.
//
// Thread-safety: both may be called from any thread.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace berth::agent::shim {

StatusOr<std::vector<std::string>> InstallSupervisorImage(std::span<const unsigned char> image);

std::span<const unsigned char> EmbeddedSupervisorImage();

}  // namespace berth::agent::shim
