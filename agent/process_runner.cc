#include "agent/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <algorithm>
#include <linux/close_range.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/logging.h"

namespace berth::agent {
namespace {

constexpr int kStartErrorExitCode = 128;

void EnableChildSubreaper() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
      Logger("agent")->warn("PR_SET_CHILD_SUBREAPER failed ({}): orphaned grandchildren of "
                            "containers are reaped by init instead of the agent",
                            std::strerror(errno));
    }
  });
}

std::string EnvValue(const std::vector<EnvVar>& env, std::string_view name) {
  for (const auto& v : env) {
    if (v.name == name) return v.value;
  }
  return "";
}

// errno text as Go's syscall.Errno prints it (what runc's messages contain): lower case.
std::string GoErrno(int err) {
  std::string s = std::strerror(err);
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Resolves argv[0] as runc does; on failure returns the start-error message.
std::string ResolveBinary(const ContainerLaunch& launch, std::string* path) {
  const std::string& arg0 = launch.argv[0];
  const std::string prefix = "unable to start container process: exec: \"" + arg0 + "\": ";
  if (arg0.find('/') != std::string::npos) {
    *path = arg0[0] == '/' ? arg0 : launch.working_dir + "/" + arg0;
    struct stat st;
    if (stat(path->c_str(), &st) != 0) {
      return prefix + "stat " + arg0 + ": " + GoErrno(errno);
    }
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

}  // namespace

bool ProcessGroupExists(pid_t pgid) { return pgid > 0 && (kill(-pgid, 0) == 0 || errno == EPERM); }

std::unique_ptr<ContainerProcess> ContainerProcess::Start(const ContainerLaunch& launch, Clock& clock,
                                                          const MemoryCgroups* cgroups) {
  EnableChildSubreaper();
  std::unique_ptr<ContainerProcess> p(new ContainerProcess(clock));
  p->started_at_ = clock.Now();
  auto fail = [&](std::string message) {
    ContainerExit e;
    e.exit_code = kStartErrorExitCode;
    e.start_error = std::move(message);
    e.started_at = p->started_at_;
    e.finished_at = clock.Now();
    p->exit_ = std::move(e);
    return std::move(p);
  };
  if (launch.argv.empty()) {
    return fail("container \"" + launch.name +
                "\" has no command: berth runs processes, not images, so command is required");
  }
  struct stat st;
  int cwd_errno = stat(launch.working_dir.c_str(), &st) != 0 ? errno
                  : !S_ISDIR(st.st_mode)                   ? ENOTDIR
                                                           : 0;
  if (cwd_errno != 0) {
    return fail("unable to start container process: chdir to cwd (\"" + launch.working_dir +
                "\") set in config.json failed: " + GoErrno(cwd_errno));
  }
  std::string binary;
  if (std::string err = ResolveBinary(launch, &binary); !err.empty()) return fail(err);

  auto log = ContainerLogWriter::Open(launch.log_path, clock);
  if (!log.ok()) return fail("unable to create the container log: " + log.status().message());

  int cgroup_procs = -1;
  if (launch.memory_limit_bytes && cgroups != nullptr && cgroups->available()) {
    auto dir = cgroups->Create(launch.cgroup_name, *launch.memory_limit_bytes);
    if (!dir.ok()) return fail("unable to apply the memory limit: " + dir.status().message());
    p->cgroups_ = cgroups;
    p->cgroup_dir_ = *dir;
    cgroup_procs = open((*dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  }

  int out[2], err_pipe[2];
  if (pipe2(out, O_CLOEXEC) != 0) return fail(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return fail(std::string("pipe: ") + std::strerror(errno));
  }
  // Everything the child touches is prepared before fork (only async-signal-safe calls after).
  std::vector<char*> argv;
  for (const auto& a : launch.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& v : launch.env) env_strings.push_back(v.name + "=" + v.value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const char* cwd = launch.working_dir.c_str();
  const char* path = binary.c_str();

  const pid_t parent = getpid();
  const int max_fd = static_cast<int>(std::min<long>(sysconf(_SC_OPEN_MAX), 65536));
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
    }
    if (cgroup_procs >= 0) {
      (void)!write(cgroup_procs, "0", 1);
    }
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out[1], 1);
    dup2(out[1], 2);
    // Nothing of berth's leaks into the container: its listening socket, log
    // files and pipes are closed at exec (err_pipe stays open until then).
    if (syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < max_fd; ++fd) fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    // The container dies with the agent (its direct process; a berth killed
    // with SIGKILL cannot signal the group itself).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the agent died before prctl
    int stage = 0;
    if (chdir(cwd) == 0) {
      stage = 1;
      execve(path, argv.data(), envp.data());
    }
    int report[2] = {stage, errno};
    (void)!write(err_pipe[1], report, sizeof report);
    _exit(127);
  }
  int fork_errno = errno;
  close(out[1]);
  close(err_pipe[1]);
  if (cgroup_procs >= 0) close(cgroup_procs);
  if (pid < 0) {
    close(out[0]);
    close(err_pipe[0]);
    return fail(std::string("fork: ") + std::strerror(fork_errno));
  }
  setpgid(pid, pid);  // also from the parent, so the group exists before any signal
  int report[2];
  ssize_t n;
  do {
    n = read(err_pipe[0], report, sizeof report);
  } while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  if (n == sizeof report) {
    int status;
    waitpid(pid, &status, 0);
    close(out[0]);
    if (!p->cgroup_dir_.empty()) cgroups->Remove(p->cgroup_dir_);
    std::string prefix = "unable to start container process: ";
    if (report[0] == 0) {
      return fail(prefix + "chdir to cwd (\"" + launch.working_dir + "\") set in config.json failed: " +
                  GoErrno(report[1]));
    }
    return fail(prefix + "exec: \"" + launch.argv[0] + "\": " + GoErrno(report[1]));
  }
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  p->pid_ = pid;
  p->group_alive_ = true;
  ContainerProcess* raw = p.get();
  p->monitor_ = std::thread([raw, pidfd, fd = out[0], w = std::move(log).value()]() mutable {
    raw->Monitor(pidfd, fd, std::move(w));
  });
  return p;
}

void ContainerProcess::Monitor(int pidfd, int out_fd, std::unique_ptr<ContainerLogWriter> log) {
  char buf[65536];
  bool out_open = true;
  bool exited = pidfd < 0;  // without a pidfd, fall back to polling waitpid
  int status = 0;
  while (!exited) {
    pollfd fds[2] = {{pidfd, POLLIN, 0}, {out_fd, POLLIN, 0}};
    int nfds = out_open ? 2 : 1;
    int r = poll(fds, nfds, -1);
    if (r < 0 && errno == EINTR) continue;
    if (out_open && (fds[1].revents & (POLLIN | POLLHUP))) {
      ssize_t n = read(out_fd, buf, sizeof buf);
      if (n > 0) {
        log->Append(std::string_view(buf, static_cast<size_t>(n)));
      } else if (n == 0) {
        out_open = false;
      }
    }
    if (fds[0].revents & POLLIN) exited = true;
  }
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  Time finished = clock_.Now();
  // The container ends with its main process: kill and reap the rest of the group.
  kill(-pid_, SIGKILL);
  for (int spins = 0; ProcessGroupExists(pid_) && spins < 10000; ++spins) {
    bool reaped = false;
    while (waitpid(-pid_, nullptr, WNOHANG) > 0) reaped = true;
    if (!reaped) usleep(1000);
    kill(-pid_, SIGKILL);
  }
  if (ProcessGroupExists(pid_)) {
    Logger("agent")->error("process group {} of container survived SIGKILL for 10s", pid_);
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    group_alive_ = false;
  }
  // Drain what the group wrote before it died.
  fcntl(out_fd, F_SETFL, fcntl(out_fd, F_GETFL) | O_NONBLOCK);
  while (out_open) {
    ssize_t n = read(out_fd, buf, sizeof buf);
    if (n > 0) {
      log->Append(std::string_view(buf, static_cast<size_t>(n)));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      out_open = false;
    }
  }
  close(out_fd);
  if (pidfd >= 0) close(pidfd);
  ContainerExit e;
  e.started_at = started_at_;
  e.finished_at = finished;
  if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
    e.exit_code = 128 + e.signal;
  } else {
    e.exit_code = WEXITSTATUS(status);
  }
  if (cgroups_ != nullptr) {
    e.oom_killed = cgroups_->OomKilled(cgroup_dir_);
    cgroups_->Remove(cgroup_dir_);
  }
  Finish(std::move(e));
}

void ContainerProcess::Finish(ContainerExit exit) {
  {
    std::lock_guard<std::mutex> l(mu_);
    exit_ = std::move(exit);
  }
  cv_.notify_all();
}

ContainerProcess::~ContainerProcess() {
  if (monitor_.joinable()) {
    Kill();
    monitor_.join();
  }
}

std::optional<ContainerExit> ContainerProcess::exit() const {
  std::lock_guard<std::mutex> l(mu_);
  return exit_;
}

std::optional<ContainerExit> ContainerProcess::WaitForExit(std::chrono::milliseconds real_timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, real_timeout, [&] { return exit_.has_value(); });
  return exit_;
}

void ContainerProcess::SignalGroup(int sig) {
  // Caller holds mu_: the monitor clears group_alive_ under it once the group is reaped,
  // so a signal never reaches a recycled process group id.
  if (group_alive_) kill(-pid_, sig);
}

void ContainerProcess::Terminate(Duration grace) {
  std::lock_guard<std::mutex> l(mu_);
  if (exit_) return;
  Time deadline = clock_.Now() + std::max(grace, Duration::zero());
  if (kill_deadline_ && *kill_deadline_ <= deadline) return;
  bool first = !kill_deadline_;
  kill_deadline_ = deadline;
  if (first) SignalGroup(SIGTERM);
  if (grace <= Duration::zero()) {
    SignalGroup(SIGKILL);
    killed_at_deadline_ = true;
  }
}

bool ContainerProcess::Tick() {
  std::lock_guard<std::mutex> l(mu_);
  if (exit_ || !kill_deadline_ || killed_at_deadline_ || clock_.Now() < *kill_deadline_) return false;
  SignalGroup(SIGKILL);
  killed_at_deadline_ = true;
  return true;
}

std::optional<Time> ContainerProcess::kill_deadline() const {
  std::lock_guard<std::mutex> l(mu_);
  return kill_deadline_;
}

bool ContainerProcess::killed_at_deadline() const {
  std::lock_guard<std::mutex> l(mu_);
  return killed_at_deadline_;
}

void ContainerProcess::Kill() {
  std::lock_guard<std::mutex> l(mu_);
  SignalGroup(SIGKILL);
}

namespace {

// Field 22 of /proc/<pid>/stat (starttime), or "" when the process is gone.
std::string ProcessStartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return "";
  // The command (field 2) is in parentheses and may contain spaces: count from its end.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && (rest >> field); ++i) {
    if (i == 22) return field;
  }
  return "";
}

}  // namespace

void RecordProcessGroup(const std::string& pod_dir, pid_t pgid) {
  const std::string start = ProcessStartTime(pgid);
  if (start.empty()) return;
  std::ofstream out(pod_dir + "/process-groups", std::ios::app);
  out << pgid << " " << start << "\n";
}

int KillLeftoverProcessGroups(const std::string& pods_dir, std::vector<std::string>* pods_with_records) {
  int killed = 0;
  std::error_code ec;
  for (const auto& pod : std::filesystem::directory_iterator(pods_dir, ec)) {
    const std::string record = pod.path().string() + "/process-groups";
    std::ifstream in(record);
    if (!in) continue;
    if (pods_with_records != nullptr) pods_with_records->push_back(pod.path().filename().string());
    pid_t pgid = 0;
    std::string start;
    while (in >> pgid >> start) {
      if (pgid <= 1) continue;
      // The leader still being that process proves the group is ours. A dead
      // leader whose group lives on (its children) proves it too: Linux does
      // not reuse a pid while a process group of that id exists.
      const std::string now = ProcessStartTime(pgid);
      if ((now == start || now.empty()) && kill(-pgid, SIGKILL) == 0) ++killed;
    }
    in.close();
    std::filesystem::remove(record, ec);
  }
  if (pods_with_records != nullptr) std::sort(pods_with_records->begin(), pods_with_records->end());
  return killed;
}

}  // namespace berth::agent
