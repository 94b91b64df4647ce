#include "agent/shim/shim.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <linux/close_range.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <sstream>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "agent/shim/container_log.h"
#include "agent/shim/launcher.h"
#include "agent/shim/run_record.h"
#include "agent/shim/sandbox.h"
#include "agent/shim/shim_client.h"

namespace berth::agent::shim {
namespace {

constexpr int kStartErrorExitCode = 128;  // containerd's exit code for a run that never started
constexpr size_t kMaxConnections = 16;
constexpr size_t kMaxCommandBytes = 64;

// errno text as Go's syscall.Errno prints it (what runc's messages contain): lower case.
std::string GoErrno(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

std::string EnvValue(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& v : env) {
    if (v.size() > name.size() && v.compare(0, name.size(), name) == 0 && v[name.size()] == '=') {
      return v.substr(name.size() + 1);
    }
  }
  return "";
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

void SignalReady(int& ready_fd) {
  if (ready_fd < 0) return;
  (void)!write(ready_fd, "R", 1);
  close(ready_fd);
  ready_fd = -1;
}

// One supervised run: the state of the poll loop.
class Supervisor {
 public:
  Supervisor(std::string run_dir, LaunchRecord launch)
      : run_dir_(std::move(run_dir)), hello_(HelloLine(run_dir_)), launch_(std::move(launch)) {}

  // Returns the process exit code.
  int Run(int ready_fd);

 private:
  int RecordStartError(const std::string& message, int& ready_fd);
  bool Listen();
  // Forks and executes the container; "" on success, else the start error.
  std::string StartContainer(const std::string& binary);
  void Accept();
  void ServeConnection(size_t i);
  void ReapOrphans();
  void Finish();

  std::string run_dir_;
  std::string hello_;  // HelloLine(run dir)
  LaunchRecord launch_;
  std::unique_ptr<ContainerLogWriter> log_;
  int listen_fd_ = -1;
  std::vector<int> connections_;
  std::vector<std::string> pending_;  // partial command per connection
  pid_t pid_ = 0;
  int pidfd_ = -1;
  int out_fd_ = -1;
  int status_fd_ = -1;  // sandboxed: the init reports the main process's wait status here
  bool main_reaped_ = false;
};

int Supervisor::RecordStartError(const std::string& message, int& ready_fd) {
  ExitRecord e;
  e.exit_code = kStartErrorExitCode;
  e.start_error = message;
  e.started_at = launch_.started_at;
  e.finished_at = RealClock::Get().Now();
  Status s = WriteExitRecord(run_dir_, e);
  if (!s.ok()) std::cerr << "berth shim: " << s.ToString() << "\n";
  if (listen_fd_ >= 0) unlink((run_dir_ + "/" + kSocketFile).c_str());
  SignalReady(ready_fd);
  return 0;
}

bool Supervisor::Listen() {
  // The socket is bound relative to the run directory: its absolute path may
  // exceed sun_path. The container's working directory is set in its own process.
  if (chdir(run_dir_.c_str()) != 0) return false;
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", kSocketFile);
  unlink(kSocketFile);
  mode_t old = umask(0177);  // the socket is the owner's only
  int rc = bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  umask(old);
  if (rc != 0 || listen(listen_fd_, static_cast<int>(kMaxConnections)) != 0) return false;
  return true;
}

}  // namespace

void JoinCgroupsOrExit(std::span<const int> cgroup_procs, int report_fd) {
  for (int fd : cgroup_procs) {
    if (write(fd, "0", 1) != 1) {
      int report[2] = {kReportCgroupStage, errno};
      (void)!write(report_fd, report, sizeof report);
      _exit(127);
    }
  }
}

void PassGateOrExit(int gate_fd) {
  char byte;
  ssize_t n;
  do {
    n = read(gate_fd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  close(gate_fd);
  if (n != 1) _exit(127);
}

void ExecInChild(std::span<const int> cgroup_procs, const char* cwd, const char* binary, char* const argv[],
                 char* const envp[], int report_fd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  JoinCgroupsOrExit(cgroup_procs, report_fd);
  if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd < 65536; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  int stage = kReportChdirStage;
  if (chdir(cwd) == 0) {
    stage = kReportExecStage;
    execve(binary, argv, envp);
  }
  int report[2] = {stage, errno};
  (void)!write(report_fd, report, sizeof report);
  _exit(127);
}

std::string ReadExecReport(int report_fd, const LaunchRecord& launch) {
  int report[2];
  ssize_t n;
  do {
    n = read(report_fd, report, sizeof report);
  } while (n < 0 && errno == EINTR);
  if (n == sizeof report && report[0] == kReportTextStage) {  // ReportStartError (sandbox.h): the text follows
    std::string text(static_cast<size_t>(std::clamp(report[1], 0, static_cast<int>(kMaxStartErrorBytes))), '\0');
    size_t got = 0;
    while (got < text.size()) {
      ssize_t r = read(report_fd, text.data() + got, text.size() - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    close(report_fd);
    text.resize(got);
    return text;
  }
  close(report_fd);
  if (n != sizeof report) return "";
  const std::string prefix = "unable to start container process: ";
  if (report[0] == kReportCgroupStage) return prefix + "joining the container's cgroup: " + GoErrno(report[1]);
  if (report[0] == kReportChdirStage) {
    return prefix + "chdir to cwd (\"" + launch.working_dir + "\") set in config.json failed: " + GoErrno(report[1]);
  }
  return prefix + "exec: \"" + (launch.argv.empty() ? std::string() : launch.argv[0]) + "\": " + GoErrno(report[1]);
}

Status OpenCgroupProcs(const std::vector<std::string>& dirs, std::vector<int>* fds) {
  for (const std::string& dir : dirs) {
    // cgroup v1: `tasks` (see shim.h). v2 has none: cgroup.procs. O_CREAT only matters in a
    // plain directory (tests' fake trees): cgroupfs creates no files.
    int fd = open((dir + "/" + kCgroupV1TasksFile).c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) fd = open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int err = errno;
      CloseAll(*fds);
      return InternalError(dir + ": " + GoErrno(err));
    }
    fds->push_back(fd);
  }
  return Status::Ok();
}

int OpenCgroupV2Directory(const std::vector<std::string>& dirs) {
  if (dirs.size() != 1) return -1;
  int fd = open(dirs[0].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC) {
    close(fd);
    return -1;
  }
  return fd;
}

pid_t ForkIntoCgroup(int cgroup_dir_fd, bool* joined) {
  *joined = false;
  if (cgroup_dir_fd >= 0) {
    clone_args args{};
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<uint64_t>(cgroup_dir_fd);
    const long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid >= 0) {
      *joined = true;
      return static_cast<pid_t>(pid);
    }
  }
  return fork();
}

void CloseAll(std::vector<int>& fds) {
  for (int fd : fds) close(fd);
  fds.clear();
}

namespace {

std::string Supervisor::StartContainer(const std::string& binary) {
  std::vector<int> cgroup_procs;
  if (Status s = OpenCgroupProcs(launch_.cgroup_dirs, &cgroup_procs); !s.ok()) {
    return "unable to start container process: cannot join the container's cgroup " + s.message();
  }
  int out[2], err_pipe[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    CloseAll(cgroup_procs);
    return std::string("pipe: ") + std::strerror(errno);
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    CloseAll(cgroup_procs);
    close(out[0]);
    close(out[1]);
    return std::string("pipe: ") + std::strerror(errno);
  }
  std::vector<char*> argv;
  for (auto& a : launch_.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& v : launch_.env) envp.push_back(v.data());
  envp.push_back(nullptr);
  const char* cwd = launch_.working_dir.c_str();
  const bool sandboxed = launch_.sandbox.enabled;
  int gate[2];
  if (pipe2(gate, O_CLOEXEC) != 0) {
    CloseAll(cgroup_procs);
    for (int fd : {out[0], out[1], err_pipe[0], err_pipe[1]}) close(fd);
    return std::string("pipe: ") + std::strerror(errno);
  }
  int status_pipe[2] = {-1, -1};
  if (sandboxed) {
    // The child is the init of a new PID namespace (sandbox.h).
    if (int err = EnterSandboxPidNamespace(); err != 0 || pipe2(status_pipe, O_CLOEXEC) != 0) {
      CloseAll(cgroup_procs);
      for (int fd : {out[0], out[1], err_pipe[0], err_pipe[1], gate[0], gate[1]}) close(fd);
      return "unable to start container process: unshare(CLONE_NEWPID): " + GoErrno(err != 0 ? err : errno);
    }
  }
  const pid_t parent = getpid();
  const int cgroup_dir = OpenCgroupV2Directory(launch_.cgroup_dirs);
  bool joined = false;  // cloned straight into the run's cgroup
  pid_t pid = ForkIntoCgroup(cgroup_dir, &joined);
  if (pid == 0) {
    const std::span<const int> join = joined ? std::span<const int>() : std::span<const int>(cgroup_procs);
    setpgid(0, 0);
    // The container dies with its supervisor (never with the agent).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A sandbox's init sees no parent (it is outside its PID namespace).
    if (getppid() != (sandboxed ? 0 : parent)) _exit(127);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(gate[1]);
    if (sandboxed) {
      // The init joins the run's cgroups, so everything in the sandbox is in them.
      JoinCgroupsOrExit(join, err_pipe[1]);
      SandboxInitMain(launch_, err_pipe[1], status_pipe[1], gate[0]);
    }
    PassGateOrExit(gate[0]);
    ExecInChild(join, cwd, binary.c_str(), argv.data(), envp.data(), err_pipe[1]);
  }
  if (cgroup_dir >= 0) close(cgroup_dir);
  if (status_pipe[1] >= 0) close(status_pipe[1]);
  status_fd_ = status_pipe[0];
  int fork_errno = errno;
  close(out[1]);
  close(err_pipe[1]);
  close(gate[0]);
  CloseAll(cgroup_procs);
  if (pid < 0) {
    close(out[0]);
    close(err_pipe[0]);
    close(gate[1]);
    return std::string("fork: ") + std::strerror(fork_errno);
  }
  setpgid(pid, pid);
  // The child sets up meanwhile (a sandbox's mounts); its program runs only once the
  // launch record is durable, so a host that crashes never forgets a run that ran.
  Status durable = ReleaseRun(run_dir_);
  if (durable.ok()) (void)!write(gate[1], "G", 1);
  close(gate[1]);
  if (!durable.ok()) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(out[0]);
    close(err_pipe[0]);
    if (status_fd_ >= 0) close(status_fd_);
    status_fd_ = -1;
    if (durable.code() == Code::kAlreadyExists) {
      return "unable to start container process: the node agent took the run back before its program started";
    }
    return "unable to start container process: the launch record cannot be made durable: " + durable.message();
  }
  if (std::string failed = ReadExecReport(err_pipe[0], launch_); !failed.empty()) {
    waitpid(pid, nullptr, 0);
    close(out[0]);
    return failed;
  }
  pid_ = pid;
  out_fd_ = out[0];
  pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return "";
}

void Supervisor::Accept() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    if (connections_.size() >= kMaxConnections) {
      close(fd);
      continue;
    }
    // Every connection starts with who this is, so that a client reaching it
    // through a moved or linked socket file knows it is not its run.
    (void)!write(fd, hello_.data(), hello_.size());
    connections_.push_back(fd);
    pending_.emplace_back();
  }
}

void Supervisor::ServeConnection(size_t i) {
  char buf[256];
  ssize_t n = read(connections_[i], buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    close(connections_[i]);
    connections_[i] = -1;
    return;
  }
  std::string& pending = pending_[i];
  pending.append(buf, static_cast<size_t>(n));
  size_t newline;
  while ((newline = pending.find('\n')) != std::string::npos) {
    std::string line = pending.substr(0, newline);
    pending.erase(0, newline + 1);
    int sig = 0;
    if (line.rfind("signal ", 0) == 0 && line.size() <= 10 && std::all_of(line.begin() + 7, line.end(), ::isdigit) &&
        line.size() > 7) {
      sig = std::stoi(line.substr(7));
    }
    // The main process is unreaped here (the loop reaps it only in Finish), so
    // its group id still names the container.
    if (sig >= 1 && sig < 65 && !main_reaped_) kill(-pid_, sig);
  }
  if (pending.size() > kMaxCommandBytes) {  // not the protocol: drop the client
    close(connections_[i]);
    connections_[i] = -1;
  }
}

void Supervisor::ReapOrphans() {
  // Reap the container's orphans (we are their subreaper) but never the main
  // process: it stays a zombie until Finish, which keeps its group id reserved.
  siginfo_t info;
  while (true) {
    info.si_pid = 0;
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    if (info.si_pid == pid_) return;
    waitpid(info.si_pid, nullptr, WNOHANG);
  }
}

void Supervisor::Finish() {
  const Time finished = RealClock::Get().Now();
  // The container ends with its main process: kill the rest of its group
  // while the main process is an unreaped zombie, then reap everything.
  kill(-pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  main_reaped_ = true;
  for (int spins = 0; spins < 10000; ++spins) {
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (kill(-pid_, SIGKILL) != 0 && errno == ESRCH) break;
    usleep(1000);
  }
  // A sandbox's init exits with 128 + signal for a signalled main process;
  // the main process's own wait status is what it reported.
  if (status_fd_ >= 0) {
    int reported = 0;
    if (read(status_fd_, &reported, sizeof reported) == sizeof reported) status = reported;
    close(status_fd_);
    status_fd_ = -1;
  }
  // Drain what the group wrote before it died.
  char buf[65536];
  fcntl(out_fd_, F_SETFL, fcntl(out_fd_, F_GETFL) | O_NONBLOCK);
  while (true) {
    ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n > 0) {
      log_->Append(std::string_view(buf, static_cast<size_t>(n)));
    } else if (!(n < 0 && errno == EINTR)) {
      break;
    }
  }
  close(out_fd_);
  ExitRecord e;
  e.started_at = launch_.started_at;
  e.finished_at = finished;
  if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.exit_code = 128 + e.signal;
  } else {
    e.exit_code = WEXITSTATUS(status);
  }
  Status s = WriteExitRecord(run_dir_, e, FileDurability::kDeferred);
  if (!s.ok()) std::cerr << "berth shim: " << s.ToString() << "\n";
  unlink(kSocketFile);
  unlink(kInitFile);
  unlink(kSupervisorFile);
}

int Supervisor::Run(int ready_fd) {
  if (!Listen()) {
    std::string err = std::string("cannot listen on ") + run_dir_ + "/" + kSocketFile + ": " + std::strerror(errno);
    return RecordStartError("unable to start container process: supervisor: " + err, ready_fd);
  }
  // A sandboxed run's program is looked up inside its root, by its main process.
  std::string binary;
  if (!launch_.sandbox.enabled) {
    if (std::string err = CheckLaunch(launch_, &binary); !err.empty()) return RecordStartError(err, ready_fd);
  }
  auto log = ContainerLogWriter::Open(launch_.log_path, RealClock::Get(), launch_.log_rotation);
  if (!log.ok()) return RecordStartError("unable to create the container log: " + log.status().message(), ready_fd);
  log_ = std::move(log).value();
  if (std::string err = StartContainer(binary); !err.empty()) return RecordStartError(err, ready_fd);
  if (launch_.sandbox.enabled) {
    if (Status s = WriteProcessRecord(run_dir_ + "/" + kInitFile, pid_); !s.ok()) {
      std::cerr << "berth shim: " << s.ToString() << "\n";
    }
  }
  if (Status s = WriteSupervisorRecord(run_dir_); !s.ok()) std::cerr << "berth shim: " << s.ToString() << "\n";
  SignalReady(ready_fd);

  char buf[65536];
  bool out_open = true;
  while (true) {
    std::vector<pollfd> fds;
    fds.push_back({pidfd_, POLLIN, 0});
    fds.push_back({out_open ? out_fd_ : -1, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    for (int c : connections_) fds.push_back({c, POLLIN, 0});
    // Without a pidfd (old kernels) the exit is noticed by polling every 100 ms.
    int r = poll(fds.data(), fds.size(), pidfd_ < 0 ? 100 : 1000);
    if (r < 0 && errno != EINTR) break;
    if (out_open && (fds[1].revents & (POLLIN | POLLHUP))) {
      ssize_t n = read(out_fd_, buf, sizeof buf);
      if (n > 0) {
        log_->Append(std::string_view(buf, static_cast<size_t>(n)));
      } else if (n == 0) {
        out_open = false;
      }
    }
    if (fds[2].revents & POLLIN) Accept();
    for (size_t i = 0; i + 3 < fds.size(); ++i) {
      if (fds[i + 3].revents & (POLLIN | POLLHUP | POLLERR)) ServeConnection(i);
    }
    for (size_t i = connections_.size(); i-- > 0;) {
      if (connections_[i] < 0) {
        connections_.erase(connections_.begin() + static_cast<long>(i));
        pending_.erase(pending_.begin() + static_cast<long>(i));
      }
    }
    bool exited = false;
    if (pidfd_ >= 0) {
      exited = (fds[0].revents & POLLIN) != 0;
    } else {
      siginfo_t info{};
      exited = waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
    }
    if (exited) break;
    ReapOrphans();
  }
  Finish();
  // The watchers learn of the end now (their connections close) and read exit.json; it is
  // made durable meanwhile, before the supervisor exits. A host that crashes in between
  // finds the run without an end, as one that crashed a moment before the exit: lost.
  for (int c : connections_) close(c);
  if (Status s = SyncExitRecord(run_dir_); !s.ok()) std::cerr << "berth shim: " << s.ToString() << "\n";
  return 0;
}

}  // namespace

// Resolves argv[0] as runc does (a name without "/" through the container's
// PATH, else relative to the working directory); on failure returns the
// start-error message.
static std::string ResolveBinary(const LaunchRecord& launch, std::string* path) {
  const std::string& arg0 = launch.argv[0];
  const std::string prefix = "unable to start container process: exec: \"" + arg0 + "\": ";
  if (arg0.find('/') != std::string::npos) {
    *path = arg0[0] == '/' ? arg0 : launch.working_dir + "/" + arg0;
    struct stat st;
    if (stat(path->c_str(), &st) != 0) return prefix + "stat " + arg0 + ": " + GoErrno(errno);
    if (!S_ISREG(st.st_mode) || access(path->c_str(), X_OK) != 0) return prefix + "permission denied";
    return "";
  }
  std::string search = EnvValue(launch.env, "PATH");
  if (search.empty()) search = std::string(kDefaultPath);
  std::istringstream dirs(search);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) dir = ".";
    std::string candidate = (dir[0] == '/' ? dir : launch.working_dir + "/" + dir) + "/" + arg0;
    if (IsExecutableFile(candidate)) {
      *path = candidate;
      return "";
    }
  }
  return prefix + "executable file not found in $PATH";
}

// What the supervisor checks before forking; "" when the run can start.
std::string CheckLaunch(const LaunchRecord& launch, std::string* binary) {
  if (launch.argv.empty()) {
    return "container \"" + launch.container +
           "\" has no command: berth runs processes, not images, so command is required";
  }
  struct stat st;
  int cwd_errno = stat(launch.working_dir.c_str(), &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
  if (cwd_errno != 0) {
    return "unable to start container process: chdir to cwd (\"" + launch.working_dir +
           "\") set in config.json failed: " + GoErrno(cwd_errno);
  }
  return ResolveBinary(launch, binary);
}

int RunShim(const std::string& run_dir, int ready_fd) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE}) signal(sig, SIG_IGN);
  prctl(PR_SET_NAME, "berth-shim");
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    std::cerr << "berth shim: PR_SET_CHILD_SUBREAPER: " << std::strerror(errno) << "\n";
  }
  StatusOr<LaunchRecord> launch = ReadLaunchRecord(run_dir);
  if (!launch.ok()) {
    std::cerr << "berth shim: " << launch.status().ToString() << "\n";
    ExitRecord e;
    e.exit_code = kStartErrorExitCode;
    e.start_error = "unable to start container process: supervisor: " + launch.status().message();
    e.started_at = e.finished_at = RealClock::Get().Now();
    (void)WriteExitRecord(run_dir, e);
    SignalReady(ready_fd);
    return 1;
  }
  Supervisor supervisor(run_dir, std::move(launch).value());
  return supervisor.Run(ready_fd);
}

int ShimMain(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "shim" && std::string(argv[2]) == "--launcher") {
    return ShimLauncherMain(argc, argv);
  }
  if (argc == 3 && std::string(argv[1]) == "shim" && std::string(argv[2]) == kShimCheckArgument) return 0;
  if (argc != 3 || std::string(argv[1]) != "shim") {
    std::cerr << "usage: " << (argc > 0 ? argv[0] : "berth") << " shim <run directory>\n";
    return 2;
  }
  // Daemonize: the process the agent started exits at once, so the supervisor
  // is nobody's child (init, or the nearest subreaper, reaps it) and the agent
  // has only that short-lived first process to reap.
  pid_t supervisor = fork();
  if (supervisor < 0) {
    std::cerr << "berth shim: fork: " << std::strerror(errno) << "\n";
    return 1;
  }
  if (supervisor > 0) _exit(0);
  // Shown as a launched supervisor is (launcher.h "Command line"), where the
  // exec'd path is long enough to make room.
  const std::string run_dir = argv[2];
  (void)SetSupervisorCommandLine(ArgvArea(argc, argv), kSupervisorDisplayName, run_dir);
  return RunShim(run_dir, kReadyFd);
}

}  // namespace berth::agent::shim
