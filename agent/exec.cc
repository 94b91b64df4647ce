#include "agent/exec.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/close_range.h>
#include <mutex>
#include <optional>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "agent/shim/sandbox.h"
#include "agent/shim/seccomp.h"
#include "agent/shim/shim.h"
#include "agent/shim/shim_client.h"

namespace berth::agent {
namespace {

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

void SetNonBlocking(int fd) {
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 255;
}

class LocalExecProcess final : public client::ExecProcess {
 public:
  LocalExecProcess(pid_t pid, bool tty, int in, int out, int err)
      : pid_(pid), tty_(tty), in_(in), out_(out), err_(err) {}
  ~LocalExecProcess() override {
    Kill();
    Wait();
    CloseFd(in_);
    CloseFd(out_);
    CloseFd(err_);
  }

  int stdin_fd() const override { return tty_ ? out_ : in_; }
  int stdout_fd() const override { return out_; }
  int stderr_fd() const override { return err_; }

  void CloseStdin() override {
    if (tty_) {
      // The terminal's end-of-file character (^D unless the process changed it).
      struct termios t;
      char eof = 4;
      if (tcgetattr(out_, &t) == 0 && t.c_cc[VEOF] != _POSIX_VDISABLE) eof = static_cast<char>(t.c_cc[VEOF]);
      (void)!write(out_, &eof, 1);
    } else {
      CloseFd(in_);
    }
  }

  void Resize(uint16_t width, uint16_t height) override {
    if (!tty_) return;
    struct winsize ws {};
    ws.ws_col = width;
    ws.ws_row = height;
    ioctl(out_, TIOCSWINSZ, &ws);
  }

  int Wait() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (exit_) return *exit_;
    }
    siginfo_t info{};
    while (waitid(P_PID, pid_, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    return Reap(0).value_or(255);
  }

  std::optional<int> TryWait() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (exit_) return exit_;
    }
    siginfo_t info{};
    info.si_pid = 0;
    if (waitid(P_PID, pid_, &info, WEXITED | WNOWAIT | WNOHANG) != 0 || info.si_pid == 0) return std::nullopt;
    return Reap(0);
  }

  void Kill() override {
    std::lock_guard<std::mutex> lock(mu_);
    // Until the leader is reaped its pid (the group's id) cannot be reused.
    if (!exit_) kill(-pid_, SIGKILL);
  }

 private:
  // The leader has exited (not reaped yet): the rest of its group is killed
  // while the group id is still held, then the leader is reaped.
  std::optional<int> Reap(int flags) {
    std::lock_guard<std::mutex> lock(mu_);
    if (exit_) return exit_;
    kill(-pid_, SIGKILL);
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid_, &status, flags)) < 0 && errno == EINTR) {
    }
    if (r != pid_) return std::nullopt;
    exit_ = ExitCodeOf(status);
    return exit_;
  }

  const pid_t pid_;
  const bool tty_;
  int in_, out_, err_;
  std::mutex mu_;
  std::optional<int> exit_;  // guarded by mu_
};

std::string Errno(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// The child's half of a sandboxed exec, after its streams are in place:
// enter the init's namespaces, fork the command into them, relay its status.
// Runs in a child of a multi-threaded process: system calls, and the
// allocations of CheckLaunch after the second fork (glibc's fork leaves
// malloc usable in the child).
[[noreturn]] void EnterSandboxAndExec(int init_pidfd, std::span<const int> cgroup_procs,
                                      const shim::LaunchRecord& record, const shim::SandboxUser& user,
                                      const shim::SeccompProgram& filter, bool tty, char* const argv[],
                                      char* const envp[], int report_fd) {
  // The cgroups are joined before the namespaces, so the command (forked below) inherits them.
  shim::JoinCgroupsOrExit(cgroup_procs, report_fd);
  if (setns(init_pidfd, CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC) != 0) {
    shim::ReportStartError(report_fd, "unable to start container process: setns: " + std::string(strerror(errno)));
    _exit(127);
  }
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  const pid_t child = static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0));
  if (child < 0) {
    shim::ReportStartError(report_fd, "unable to start container process: fork: " + std::string(strerror(errno)));
    _exit(127);
  }
  if (child == 0) {
    if (tty) {
      // The terminal's foreground group must be one the command can see: a
      // session of its own inside the PID namespace (a shell restores the
      // group it started with when it exits). Killing the intermediate kills it.
      setsid();
      ioctl(0, TIOCSCTTY, 0);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
    }
    const char* what = "";
    if (int err = shim::EnterSandboxIdentity(user, &what); err != 0) {
      shim::ReportStartError(report_fd,
                             std::string("unable to start container process: ") + what + ": " + strerror(err));
      _exit(127);
    }
    if (int err = shim::ApplySeccomp(filter); err != 0) {
      shim::ReportStartError(report_fd, std::string("unable to start container process: seccomp: ") + strerror(err));
      _exit(127);
    }
    std::string binary;
    if (std::string err = shim::CheckLaunch(record, &binary); !err.empty()) {
      shim::ReportStartError(report_fd, err);
      _exit(127);
    }
    shim::ExecInChild({}, record.working_dir.c_str(), binary.c_str(), argv, envp, report_fd);
  }
  // Holds nothing of the session but its standard streams: a descriptor it kept
  // (the write end of the stdin pipe, inherited from the agent) would keep the
  // command from ever seeing end-of-file.
  if (syscall(SYS_close_range, 3u, ~0u, 0) != 0) {
    for (int fd = 3; fd < 65536; ++fd) close(fd);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    signal(WTERMSIG(status), SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, WTERMSIG(status));
    sigprocmask(SIG_UNBLOCK, &one, nullptr);
    raise(WTERMSIG(status));
  }
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 255);
}

}  // namespace

ExecLaunch ExecLaunchFor(const shim::LaunchRecord& launch, std::vector<std::string> command, bool stdin, bool tty,
                         const std::string& run_dir) {
  ExecLaunch l;
  l.sandbox = launch.sandbox;
  l.run_dir = run_dir;
  l.argv = std::move(command);
  l.env = launch.env;
  l.working_dir = launch.working_dir;
  l.cgroup_dirs = launch.cgroup_dirs;
  l.stdin = stdin;
  l.tty = tty;
  return l;
}

StatusOr<std::unique_ptr<client::ExecProcess>> StartExecProcess(const ExecLaunch& launch) {
  shim::LaunchRecord record;
  record.container = "exec";
  record.argv = launch.argv;
  record.env = launch.env;
  record.working_dir = launch.working_dir;
  std::string binary;
  if (launch.argv.empty()) return BadRequestError("you must specify at least 1 command");
  // A sandboxed run's init, pinned by a pidfd once verified (then checked again),
  // and the system call filter the command gets (as the container's processes).
  int init_pidfd = -1;
  shim::SeccompProgram filter;
  if (launch.sandbox.enabled) {
    const pid_t init = shim::SandboxInitAlive(launch.run_dir);
    if (init != 0) init_pidfd = static_cast<int>(syscall(SYS_pidfd_open, init, 0));
    if (init_pidfd >= 0 && shim::SandboxInitAlive(launch.run_dir) != init) CloseFd(init_pidfd);
    if (init_pidfd < 0) return InternalError("container not found: its sandbox is not running");
    StatusOr<shim::SeccompProgram> built = shim::BuildRuntimeDefaultSeccomp();
    if (!built.ok()) {
      CloseFd(init_pidfd);
      return InternalError("unable to start container process: " + built.status().message());
    }
    filter = *std::move(built);
  } else if (std::string err = shim::CheckLaunch(record, &binary); !err.empty()) {
    return InternalError(err);
  }

  // Everything the child needs is built before fork: it may only make
  // async-signal-safe calls.
  std::vector<char*> argv, envp;
  for (const std::string& a : launch.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : launch.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const char* cwd = launch.working_dir.c_str();

  // Parent ends (returned) and child ends (closed after fork).
  int master = -1, slave = -1;
  int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, report[2] = {-1, -1};
  auto close_all = [&] {
    for (int* fd :
         {&master, &slave, &in[0], &in[1], &out[0], &out[1], &errp[0], &errp[1], &report[0], &report[1], &init_pidfd}) {
      CloseFd(*fd);
    }
  };
  if (launch.tty) {
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    char name[128];
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
      const int e = errno;
      close_all();
      return InternalError(Errno("allocating a pseudo-terminal", e));
    }
    slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
      const int e = errno;
      close_all();
      return InternalError(Errno("opening the pseudo-terminal", e));
    }
  } else if ((launch.stdin && pipe2(in, O_CLOEXEC) != 0) || pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
    return InternalError(Errno("pipe", e));
  }
  if (pipe2(report, O_CLOEXEC) != 0) {
    const int e = errno;
    close_all();
    return InternalError(Errno("pipe", e));
  }
  std::vector<int> cgroup_procs;
  if (Status s = shim::OpenCgroupProcs(launch.cgroup_dirs, &cgroup_procs); !s.ok()) {
    close_all();
    return InternalError("unable to start container process: cannot join the container's cgroup " + s.message());
  }
  const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);

  const pid_t pid = fork();
  if (pid == 0) {
    setsid();  // a new session and process group: Kill reaches all of it
    if (launch.tty) {
      if (init_pidfd < 0) ioctl(slave, TIOCSCTTY, 0);  // a sandboxed command takes it itself

      dup2(slave, 0);
      dup2(slave, 1);
      dup2(slave, 2);
    } else {
      dup2(launch.stdin ? in[0] : devnull, 0);
      dup2(out[1], 1);
      dup2(errp[1], 2);
    }
    if (init_pidfd >= 0) {
      EnterSandboxAndExec(init_pidfd, cgroup_procs, record, launch.sandbox.user, filter, launch.tty, argv.data(),
                          envp.data(), report[1]);
    }
    shim::ExecInChild(cgroup_procs, cwd, binary.c_str(), argv.data(), envp.data(), report[1]);
  }
  CloseFd(init_pidfd);
  const int fork_errno = errno;
  shim::CloseAll(cgroup_procs);
  if (devnull >= 0) close(devnull);
  CloseFd(slave);
  CloseFd(in[0]);
  CloseFd(out[1]);
  CloseFd(errp[1]);
  CloseFd(report[1]);
  if (pid < 0) {
    close_all();
    return InternalError(Errno("fork", fork_errno));
  }
  std::string failed = shim::ReadExecReport(report[0], record);
  report[0] = -1;  // closed by ReadExecReport
  if (!failed.empty()) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    close_all();
    return InternalError(failed);
  }
  if (launch.tty) {
    SetNonBlocking(master);
    const int fd = master;
    master = -1;
    return std::unique_ptr<client::ExecProcess>(new LocalExecProcess(pid, true, -1, fd, -1));
  }
  SetNonBlocking(in[1]);
  SetNonBlocking(out[0]);
  SetNonBlocking(errp[0]);
  return std::unique_ptr<client::ExecProcess>(new LocalExecProcess(pid, false, in[1], out[0], errp[0]));
}

}  // namespace berth::agent
