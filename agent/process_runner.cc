#include "agent/process_runner.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/shim/launcher.h"
#include "agent/shim/run_record.h"
#include "agent/shim/shim_client.h"
#include "core/logging.h"

namespace berth::agent {
namespace {

constexpr int kStartErrorExitCode = 128;
constexpr int kLostExitCode = 137;

}  // namespace

bool ProcessGroupExists(pid_t pgid) { return pgid > 0 && (kill(-pgid, 0) == 0 || errno == EPERM); }

std::unique_ptr<ContainerProcess> ContainerProcess::Start(const ContainerLaunch& launch, Clock& clock,
                                                          const Cgroups* cgroups, const SupervisorOptions& supervisor) {
  std::unique_ptr<ContainerProcess> p(new ContainerProcess(clock, cgroups));
  p->started_at_ = clock.Now();
  p->run_dir_ = launch.run_dir;
  p->devices_ = launch.devices;
  p->ports_ = launch.ports;
  // A run that cannot be handed to a supervisor ends here, recorded like any
  // other start error so that a restarted agent replays it.
  auto fail = [&](std::string message) {
    ContainerExit e;
    e.exit_code = kStartErrorExitCode;
    e.start_error = std::move(message);
    e.started_at = p->started_at_;
    e.finished_at = clock.Now();
    shim::ExitRecord record;
    record.exit_code = e.exit_code;
    record.start_error = e.start_error;
    record.started_at = e.started_at;
    record.finished_at = e.finished_at;
    (void)shim::WriteExitRecord(launch.run_dir, record);
    if (!p->cgroup_dirs_.empty()) cgroups->Remove(p->cgroup_dirs_);
    p->exit_ = std::move(e);
    p->ready_ = true;
    return std::move(p);
  };
  std::error_code ec;
  std::filesystem::create_directories(launch.run_dir, ec);
  shim::LaunchRecord record;
  record.container = launch.name;
  record.run = launch.run;
  record.argv = launch.argv;
  for (const auto& v : launch.env) record.env.push_back(v.name + "=" + v.value);
  record.working_dir = launch.working_dir;
  record.log_path = launch.log_path;
  record.started_at = p->started_at_;
  record.devices = launch.devices;
  record.ports = launch.ports;
  record.log_rotation = launch.log_rotation;
  record.sandbox = launch.sandbox;
  if (cgroups != nullptr && cgroups->available()) {
    auto dirs = cgroups->CreateContainer(launch.pod_uid, launch.cgroup_name, launch.limits);
    if (!dirs.ok()) return fail("unable to create the container's cgroup: " + dirs.status().message());
    p->cgroup_dirs_ = record.cgroup_dirs = *dirs;
  }
  if (Status s = shim::WriteLaunchRecord(launch.run_dir, record); !s.ok()) {
    return fail("unable to start container process: " + s.message());
  }
  // The supervisor's start and readiness wait (~25 ms on the machines berth is
  // measured on) are the watcher's: the caller goes on meanwhile.
  p->watcher_ = std::thread([p = p.get(), supervisor] {
    Status spawned = supervisor.launcher ? shim::LaunchShim(supervisor.command, p->run_dir_, supervisor.ready_timeout)
                                         : shim::SpawnShim(supervisor.command, p->run_dir_, supervisor.ready_timeout);
    if (p->Connect(/*observed=*/true, spawned)) p->Watch();
  });
  return p;
}

std::unique_ptr<ContainerProcess> ContainerProcess::Adopt(const std::string& run_dir, Clock& clock,
                                                          const Cgroups* cgroups) {
  std::unique_ptr<ContainerProcess> p(new ContainerProcess(clock, cgroups));
  p->run_dir_ = run_dir;
  StatusOr<shim::LaunchRecord> record = shim::ReadLaunchRecord(run_dir);
  if (!record.ok()) {
    // The agent writes the launch record before anything runs: without one
    // this is no run of ours, unless a supervisor of it still answers.
    if (shim::SupervisorAlive(run_dir) == 0) return nullptr;
    p->started_at_ = clock.Now();
    p->Attach(/*observed=*/false, Status::Ok());
    return p;
  }
  p->started_at_ = record->started_at;
  p->devices_ = record->devices;
  p->ports_ = record->ports;
  p->cgroup_dirs_ = record->cgroup_dirs;
  p->Attach(/*observed=*/false, Status::Ok());
  return p;
}

void ContainerProcess::Attach(bool observed, const Status& spawned) {
  if (Connect(observed, spawned)) watcher_ = std::thread([this] { Watch(); });
}

bool ContainerProcess::Connect(bool observed, const Status& spawned) {
  StatusOr<int> connection = shim::ConnectShim(run_dir_);
  if (connection.ok() || (!RunEnded() && shim::SupervisorAlive(run_dir_) != 0)) {
    // Connected; or alive but not reachable now (its socket file replaced, its
    // connection slots taken): the watcher keeps trying. Never a second copy.
    std::function<void()> notify;
    {
      std::lock_guard<std::mutex> l(mu_);
      connection_ = connection.ok() ? *connection : -1;
      ready_ = true;
      // What was asked while the supervisor started (also by a handle since
      // destroyed: a Kill() before detaching), in the order it would have been sent.
      if (term_pending_) SignalGroup(SIGTERM);
      if (kill_pending_) SignalGroup(SIGKILL);
      if (detaching_) {
        if (connection_ >= 0) close(connection_);
        connection_ = -1;
        return false;
      }
      notify = notify_;
    }
    cv_.notify_all();
    if (notify) notify();
    return true;
  }
  // The run is over (or never started).
  ContainerExit e = ExitFromRecord(observed);
  if (e.lost && !spawned.ok()) {
    e = ContainerExit{};
    e.exit_code = kStartErrorExitCode;
    e.start_error = "unable to start container process: " + spawned.message();
    e.started_at = started_at_;
    e.finished_at = clock_.Now();
  }
  Finish(std::move(e));
  return false;
}

bool ContainerProcess::RunEnded() const { return shim::ReadExitRecord(run_dir_).status().code() != Code::kNotFound; }

ContainerExit ContainerProcess::LostExit(std::string detail) const {
  ContainerExit e;
  e.exit_code = kLostExitCode;
  e.lost = true;
  e.lost_detail = std::move(detail);
  e.started_at = started_at_;
  e.finished_at = std::max(clock_.Now(), started_at_);
  return e;
}

ContainerExit ContainerProcess::ExitFromRecord(bool observed) {
  StatusOr<shim::ExitRecord> record = shim::ReadExitRecord(run_dir_);
  ContainerExit e;
  if (record.ok() && record->lost) {
    // A verdict an earlier agent recorded: the same end on every replay.
    e = LostExit(record->lost_detail);
    e.finished_at = std::clamp(record->finished_at, started_at_, std::max(clock_.Now(), started_at_));
    return e;
  }
  if (!record.ok()) {
    e = LostExit(record.status().code() == Code::kNotFound
                     ? "its supervisor is gone and recorded no exit status (it was killed, or the host restarted)"
                     : "its exit status is unreadable: " + record.status().message());
    // Keep the verdict, so that the run ends the same way for every later agent.
    shim::ExitRecord verdict;
    verdict.exit_code = e.exit_code;
    verdict.started_at = e.started_at;
    verdict.finished_at = e.finished_at;
    verdict.lost = true;
    verdict.lost_detail = e.lost_detail;
    (void)shim::WriteExitRecord(run_dir_, verdict);
  } else {
    e.exit_code = record->exit_code;
    e.signal = record->signal;
    e.start_error = record->start_error;
    e.started_at = started_at_;
    // An end this handle saw happen is stamped with the agent's clock; one that
    // happened while nobody watched keeps the supervisor's time, but never
    // lies in the clock's future.
    Time now = clock_.Now();
    e.finished_at = observed ? now : std::clamp(record->finished_at, started_at_, std::max(now, started_at_));
  }
  // The cgroup directories come from a record the container could have
  // written: only directories of the agent's layout are used.
  if (!cgroup_dirs_.empty() && cgroups_ != nullptr && cgroups_->Owns(cgroup_dirs_)) {
    e.oom_killed = !e.lost && cgroups_->OomKilled(cgroup_dirs_, e.signal == SIGKILL);
    cgroups_->Remove(cgroup_dirs_);
  }
  return e;
}

void ContainerProcess::Watch() {
  char buf[64];
  while (true) {
    int connection;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (detaching_) return;
      connection = connection_;
    }
    if (connection >= 0) {
      while (true) {
        ssize_t n = read(connection, buf, sizeof buf);
        if (n > 0) continue;  // nothing is expected after the hello; ignore
        if (n < 0 && errno == EINTR) continue;
        break;
      }
      std::lock_guard<std::mutex> l(mu_);
      if (detaching_) return;
      close(connection_);
      connection_ = -1;
    }
    // The connection ended. The run is over once it recorded its end or its
    // supervisor is verifiably gone; anything else (a supervisor that closed
    // this connection because its slots were taken, a replaced socket file)
    // is retried, and the run stays running.
    if (RunEnded() || shim::SupervisorAlive(run_dir_) == 0) break;
    StatusOr<int> again = shim::ConnectShim(run_dir_);
    std::unique_lock<std::mutex> l(mu_);
    if (again.ok()) {
      if (detaching_) {
        close(*again);
        return;
      }
      connection_ = *again;
      continue;
    }
    cv_.wait_for(l, std::chrono::milliseconds(500), [this] { return detaching_; });
  }
  Finish(ExitFromRecord(/*observed=*/true));
}

void ContainerProcess::Finish(ContainerExit exit) {
  std::function<void()> notify;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (detaching_ && !ready_) return;  // destroyed while its supervisor started: nobody asks any more
    exit_ = std::move(exit);
    ready_ = true;
    notify = notify_;
  }
  cv_.notify_all();
  if (notify) notify();
}

void ContainerProcess::SetNotify(std::function<void()> notify) {
  {
    std::lock_guard<std::mutex> l(mu_);
    notify_ = notify;
    if (!ready_) return;
  }
  notify();
}

ContainerProcess::~ContainerProcess() {
  {
    std::lock_guard<std::mutex> l(mu_);
    detaching_ = true;
    if (connection_ >= 0) shutdown(connection_, SHUT_RDWR);  // wakes the watcher's read
  }
  cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  if (connection_ >= 0) close(connection_);
}

std::optional<ContainerExit> ContainerProcess::exit() const {
  std::lock_guard<std::mutex> l(mu_);
  return exit_;
}

bool ContainerProcess::ready() const {
  std::lock_guard<std::mutex> l(mu_);
  return ready_;
}

bool ContainerProcess::running() const {
  std::lock_guard<std::mutex> l(mu_);
  return ready_ && !exit_;
}

bool ContainerProcess::WaitReady(std::chrono::milliseconds real_timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_for(l, real_timeout, [&] { return ready_; });
}

std::optional<ContainerExit> ContainerProcess::WaitForExit(std::chrono::milliseconds real_timeout) const {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, real_timeout, [&] { return exit_.has_value(); });
  return exit_;
}

void ContainerProcess::SignalGroup(int sig) {
  // Caller holds mu_. The supervisor signals the group only while the
  // container's main process is unreaped, so a recycled id is never reached.
  if (exit_) return;
  if (!ready_) {
    // Its supervisor is starting (no socket, no verified process yet): sent once it answers.
    (sig == SIGKILL ? kill_pending_ : term_pending_) = true;
    return;
  }
  if (connection_ >= 0 && shim::SendSignal(connection_, sig)) return;
  // Not reachable through its socket: a kill still ends the run, through the
  // verified supervisor (its container dies with it).
  if (sig == SIGKILL) shim::KillSupervisor(run_dir_);
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

}  // namespace berth::agent
