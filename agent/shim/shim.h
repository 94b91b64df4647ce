// The per-container supervisor (`berth shim <run dir>`): what containerd's
// shim is for the kubelet. One supervisor process owns one run of one
// container for its whole life, so the container does not depend on the node
// agent or the server that asked for it: either can die, restart or be
// upgraded while the container runs, and the next agent re-attaches
// (shim_client.h, node_agent.h "Restart").
//
// What the supervisor owns:
//   - the container's process group: it forks the container's main process
//     (pgid = pid, stdin /dev/null, stdout+stderr into one pipe, the exact
//     environment of the launch record, default signal dispositions, the
//     cgroups the record names (agent/cgroups.h), PR_SET_PDEATHSIG SIGKILL tied
//     to the supervisor) and is the child subreaper of everything the
//     container forks, so it reaps them all;
//   - the log: it copies the pipe to the run's log file
//     (container_log.h, timestamps from the real clock) and rotates it as the
//     launch record's logMaxBytes/logMaxFiles say, also while no agent
//     watches (rotation needs no agent: the writer rotates as it writes);
//   - the exit status: when the main process exits, the rest of its group is
//     SIGKILLed while the main process is still an unreaped zombie (so the
//     group id cannot be reused), every member is reaped, the output drained,
//     and exit.json written atomically (run_record.h); its watchers' connections
//     close (they read the record), the record is made durable, then it exits;
//   - the signals: only through its control socket (shim_client.h) — "signal
//     N" sends N to the container's process group while its main process is
//     unreaped, so a recycled pid is never signalled.
// It is detached from whoever started it (its own session, daemonized by a
// fork in ShimMain or by the launcher that forked it (launcher.h), no death
// signal tied to the agent), holds no API credentials and makes no
// API calls. It ignores SIGTERM, SIGINT, SIGHUP and SIGQUIT (a `pkill berth`
// meant for the server leaves the containers running); SIGKILL of the
// supervisor kills the container's main process through PDEATHSIG, and with no
// exit.json the agent reports the run lost.
//
// Start errors after the record was read (the program cannot be executed,
// the working directory is gone) are exit.json records with startError in
// runc's wording, exit code 128.
//
// Readiness: the supervisor writes one byte to file descriptor `ready_fd`
// once its socket listens and the container's program has been executed (or
// its start error recorded), then closes it; the agent waits for that byte.
//
// Thread-safety: RunShim is a process's main; it is single-threaded.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "agent/shim/run_record.h"

namespace berth::agent::shim {

// Runs the supervisor for the run in `run_dir` (launch.json must exist).
// Returns the process exit code: 0 once exit.json is written, 1 when the
// launch record cannot be read (the reason is in exit.json when it can be
// written, and on stderr).
int RunShim(const std::string& run_dir, int ready_fd);

// The PATH a container gets when its env sets none, and where the supervisor
// looks up a command name when the container's PATH is empty (runc's default).
inline constexpr std::string_view kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
// The supervisors' and the launcher's environment besides PATH: the dynamic
// linker binds every shared library's symbols at exec (ld.so's LD_BIND_NOW), so
// that the supervisors a launcher forks find them bound (see launcher.h).
inline constexpr std::string_view kBindNowEnv = "LD_BIND_NOW=1";

// What is checked before a container's (or an exec'd) command is started:
// a command, a working directory that is a directory, argv[0] resolved as runc
// does (a name without "/" through the PATH of launch.env, kDefaultPath when
// that is empty; else relative to the working directory) into *binary.
// Returns "" when it can start, else runc's start-error text, e.g.
// `unable to start container process: exec: "x": executable file not found in
// $PATH`.
std::string CheckLaunch(const LaunchRecord& launch, std::string* binary);

// The child half of starting a container's (or an exec'd) process, called
// right after fork once its standard streams are in place; async-signal-safe
// calls only. Empties the signal mask and resets every disposition, moves the
// process into each cgroup whose tasks or cgroup.procs is open in `cgroup_procs`
// (OpenCgroupProcs; one per cgroup v1 hierarchy, or one on v2; empty: none),
// marks every descriptor above 2 close-on-exec, then chdir(cwd) and execve. On failure it writes
// {stage (kReportChdirStage, kReportExecStage, kReportCgroupStage), errno} to
// `report_fd` (a close-on-exec pipe) and exits 127.
// The first int of a start report (ReadExecReport): which step failed, with errno
// second; kReportTextStage: the second int is the length of a text that follows
// (sandbox.h ReportStartError).
inline constexpr int kReportChdirStage = 0;
inline constexpr int kReportExecStage = 1;
inline constexpr int kReportTextStage = 2;
inline constexpr int kReportCgroupStage = 3;

[[noreturn]] void ExecInChild(std::span<const int> cgroup_procs, const char* cwd, const char* binary,
                              char* const argv[], char* const envp[], int report_fd);
// The cgroup step of ExecInChild, for a child that joins before it does more (a
// sandbox's init, an exec into a sandbox): writes "0" (itself) to each of
// `cgroup_procs`; on failure writes {kReportCgroupStage, errno} to `report_fd`
// and exits 127. Async-signal-safe.
void JoinCgroupsOrExit(std::span<const int> cgroup_procs, int report_fd);

// The gate a container's first process waits at before the container's program
// runs: the supervisor releases it with one byte once the launch record is
// durable (run_record.h ReleaseRun), which it does while the child sets
// up. Reads one byte from `gate_fd` and closes it; EOF or an error (the
// supervisor closed it without a byte, or died) ends the process with exit 127.
// Async-signal-safe.
void PassGateOrExit(int gate_fd);

// Opens, for ExecInChild (close-on-exec, into *fds), the file of each of `dirs`
// through which a process moves itself in: <dir>/tasks when it exists (cgroup
// v1), else <dir>/cgroup.procs (v2). Writing "0" to cgroup.procs moves the
// whole thread group and takes the kernel's global cgroup_threadgroup_rwsem for
// writing, which waits for an RCU grace period unless another migration took
// it moments before: ~10 ms on a 2-core VM for a container start after an idle
// gap, the largest part of a short Job's start (bench/cgroup_attach.py). The
// child writing is single-threaded right after fork, so moving only its own
// thread moves the whole process, and v1's `tasks` with "0" (the calling
// thread) takes no global lock (Linux >= 6.0, kernel/cgroup/cgroup.c
// cgroup_procs_write_start: "If we migrate a single thread, we don't care
// about threadgroup stability"): 0.3 ms. v2 refuses thread moves out of a
// threaded subtree, so it keeps cgroup.procs (used only when the child could not
// be cloned into its cgroup, below). Errors: kInternal naming the directory;
// nothing stays open then.
inline constexpr char kCgroupV1TasksFile[] = "tasks";
Status OpenCgroupProcs(const std::vector<std::string>& dirs, std::vector<int>* fds);

// On cgroup v2 no file moves a process of a domain cgroup without that lock
// (~11 ms a start here), so a run whose one cgroup directory is on cgroup2 gets
// its first process cloned straight into it (ForkIntoCgroup: clone3
// CLONE_INTO_CGROUP, Linux >= 5.7; ~3.5 ms): OpenCgroupV2Directory returns that
// directory's descriptor (close-on-exec), else -1 (not one directory, not
// cgroup2). ForkIntoCgroup(fd, &joined) clones into the cgroup of `fd` when it
// is >= 0 and the kernel can, setting *joined; otherwise (-1, an older kernel,
// any clone3 error) it forks as fork() does and the child joins through
// OpenCgroupProcs' files, which then reports the cgroup's error if there is one.
// The caller must be single-threaded (the child of a raw clone3 gets none of
// glibc's fork handlers) and its child may call only what a forked child may.
int OpenCgroupV2Directory(const std::vector<std::string>& dirs);
pid_t ForkIntoCgroup(int cgroup_dir_fd, bool* joined);

void CloseAll(std::vector<int>& fds);

// The parent half: reads the child's report from the pipe's read end (EOF:
// the exec succeeded) and closes it. Returns "" when the process runs, else
// runc's start-error text, e.g. `unable to start container process: chdir to
// cwd ("/x") set in config.json failed: no such file or directory`. The caller
// still reaps the child when it failed.
std::string ReadExecReport(int report_fd, const LaunchRecord& launch);

// The file descriptor the spawner passes the readiness pipe on.
inline constexpr int kReadyFd = 3;

// The argv entry point: `<argv0> shim <run dir>` → forks (the first process
// exits at once) and runs RunShim(run dir, kReadyFd) in the child;
// `<argv0> shim --launcher <padding>` → the supervisors' launcher
// (launcher.h ShimLauncherMain), whose forked supervisors return here too;
// `<argv0> shim --check` → returns 0 at once (whether the program can be
// executed here: supervisor_image.h).
// Returns 2 with a usage message on stderr for other arguments. Every binary
// that the agent starts as a supervisor (SupervisorOptions::command) must
// dispatch `shim` here first thing in main.
int ShimMain(int argc, char** argv);
inline constexpr char kShimCheckArgument[] = "--check";

}  // namespace berth::agent::shim
