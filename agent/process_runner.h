// ContainerProcess: the node agent's handle on one run of one container —
// what the kubelet holds through the CRI while containerd's shim owns the
// process. The process itself is owned by a supervisor (`berth shim`,
// agent/shim/shim.h) that outlives the agent; this handle starts it, or
// re-attaches to it after an agent restart, and reports how the run ended.
//
// Start(launch): creates the run's cgroups (agent/cgroups.h: under the pod's,
//   with launch.limits) when cgroups are available, writes the launch record to launch.run_dir
//   (agent/shim/run_record.h) with started_at = clock.Now(), and returns; the
//   watcher thread then starts the supervisor (forked by the launcher of
//   options.command, or options.command + run dir exec'd), waits for it to be
//   ready and connects to its control socket. Until then the run is not
//   ready(): neither running nor exited, as a kubelet's container between the
//   CRI's CreateContainer and the return of its StartContainer. The wait
//   (~25 ms on a 2-core VM, up to options.ready_timeout) is thereby off the
//   caller's thread: an agent starts the next pod's container meanwhile, as
//   the kubelet's per-pod workers (pkg/kubelet/pod_workers.go) do. Signals
//   asked for meanwhile (Terminate, Tick, Kill) are sent once the supervisor
//   answers, SIGTERM before SIGKILL. The supervisor checks and executes the
//   command (argv[0] through the container's PATH, default kDefaultPath);
//   failures before the program runs are exits with start_error set, exit
//   code 128 (containerd's) and runc's wording:
//       no command:   container "c" has no command: berth runs processes, not
//                     images, so command is required
//       not in PATH:  unable to start container process: exec: "foo":
//                     executable file not found in $PATH
//       missing path: unable to start container process: exec: "/x/y": stat
//                     /x/y: no such file or directory
//       bad cwd:      unable to start container process: chdir to cwd ("/x")
//                     set in config.json failed: no such file or directory
// Adopt(run_dir): re-attaches to the run a previous agent started: connected
//   to its live supervisor (running); or its supervisor verifiably alive but
//   not reachable (socket replaced, connection slots taken: running, the
//   watcher retries every 500 ms); or the run's exit.json (exited while nobody
//   watched); or neither (lost: the supervisor was killed, or the host
//   rebooted). A run is never declared over while its supervisor lives, so a
//   second copy is never started next to it.
// Exit: the run is over when its supervisor has gone (its connection closed
//   and it is no longer alive, or exit.json exists); exit.json says how:
//   exit_code (128 + signal when a signal ended it), the signal, start_error;
//   oom_killed from the run's cgroups (only directories of the agent's cgroup
//   layout, Cgroups::Owns), which are then emptied (whatever the container
//   left running there is SIGKILLed: nothing of a run outlives it) and removed. No exit.json, or a corrupt
//   one, is a lost run (lost = true, exit code 137, lost_detail saying why),
//   and that verdict is written to exit.json so every later replay agrees. Times: started_at is the launch record's;
//   finished_at is clock.Now() when this handle saw the end as it happened,
//   else the supervisor's recorded time (never later than clock.Now()).
// Termination (kubelet killContainer): Terminate(grace) asks the supervisor
//   (through its socket; a kill of an unreachable one goes to the verified
//   supervisor process, shim_client.h KillSupervisor) to SIGTERM the
//   container's process group and sets the deadline
//   clock.Now() + grace; Tick() asks for SIGKILL once the Clock reaches the
//   deadline while the run lasts. SIGKILL is requested nowhere else (except
//   Kill()), so with a FakeClock a test controls exactly when it happens. A
//   grace of 0 kills at once.
// Destruction detaches: the container keeps running under its supervisor
//   (call Kill() first to end it). A handle destroyed before its run is ready
//   waits for the supervisor's readiness (at most options.ready_timeout).
//
// Thread-safety: all public methods may be called from any thread. One
// watcher thread per live run blocks on the control socket.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

#include "agent/cgroups.h"
#include "agent/container_env.h"
#include "agent/shim/run_record.h"
#include "core/clock.h"

namespace berth::agent {

// Everything needed to start one run of a container.
struct ContainerLaunch {
  std::string name;                         // container name (for messages and the cgroup name)
  std::vector<std::string> argv;            // command + args; empty = no command (start error)
  std::vector<EnvVar> env;                  // the complete environment
  std::string working_dir;                  // absolute; must exist
  std::string run_dir;                      // shim::RunDir(pod dir, name, run); created
  int run = 0;                              // the run number (restartCount at start)
  std::string log_path;                     // shim::ContainerLogPath(pod dir, name, run)
  std::string pod_uid;                      // the pod cgroup the run's cgroup is made in ([A-Za-z0-9-])
  std::string cgroup_name;                  // unique in the pod, "<container>-<run>"
  CgroupLimits limits;                      // the container's cpu and memory (agent/cgroups.h)
  std::vector<int> devices;                 // device indices held (recorded for re-adoption)
  std::vector<shim::PortAllocation> ports;  // rendezvous ports mapped (likewise)
  shim::LogRotation log_rotation;           // how the supervisor rotates log_path
  shim::SandboxSpec sandbox;                // enabled: the run is sandboxed (agent/shim/sandbox.h)
};

// How the agent starts supervisors.
struct SupervisorOptions {
  // The supervisor's command; the run directory is appended. The default is
  // this very binary (`berth shim`; test binaries' main dispatches it too);
  // berth sets the supervisor program it embeds (shim/supervisor_image.h).
  std::vector<std::string> command = {"/proc/self/exe", "shim"};
  // Whether supervisors are forked by a launcher of `command` (agent/shim/
  // launcher.h: `command --launcher <padding>`, started once per process and
  // command, shared by every agent of the process) instead of exec'ing
  // `command` for each run. Only for commands whose main dispatches `shim`
  // to shim::ShimMain (berth, and the test binaries' main); set false for
  // any other. A launcher that cannot be started falls back to the exec.
  bool launcher = true;
  // Real time to wait for a supervisor to be ready.
  std::chrono::milliseconds ready_timeout{10000};
};

// How a run ended.
struct ContainerExit {
  int exit_code = 0;  // 0..255; 128 + signal when signalled; 128 on start errors
  int signal = 0;     // the terminating signal, 0 when it exited
  bool oom_killed = false;
  std::string start_error;  // non-empty: the process never ran (reason StartError)
  // The run was lost: its supervisor ended without recording how the
  // container ended (kubelet's ContainerStatusUnknown, see
  // kContainerLostMessage). exit_code is then 137, the value the kubelet
  // reports; lost_detail says what was found.
  bool lost = false;
  std::string lost_detail;
  Time started_at{};
  Time finished_at{};
  bool operator==(const ContainerExit&) const = default;
};

// The kubelet's text for a container whose run it cannot find any more
// (kubelet_pods.go, reason ContainerStatusUnknown, exit code 137).
inline constexpr char kContainerLostMessage[] = "The container could not be located when the pod was terminated";
inline constexpr char kContainerStatusUnknownReason[] = "ContainerStatusUnknown";
inline constexpr int kContainerLostExitCode = 137;

class ContainerProcess {
 public:
  // Starts the run. Never fails: a start failure is a run that has already
  // exited with start_error set. `cgroups` may be nullptr.
  static std::unique_ptr<ContainerProcess> Start(const ContainerLaunch& launch, Clock& clock, const Cgroups* cgroups,
                                                 const SupervisorOptions& supervisor = {});
  // Re-attaches to the run recorded in `run_dir` (see the file comment).
  // nullptr when the directory holds no run: no readable launch record (the
  // agent writes it before anything starts) and no live supervisor.
  static std::unique_ptr<ContainerProcess> Adopt(const std::string& run_dir, Clock& clock, const Cgroups* cgroups);
  ~ContainerProcess();  // detaches (see above)
  ContainerProcess(const ContainerProcess&) = delete;
  ContainerProcess& operator=(const ContainerProcess&) = delete;

  Time started_at() const { return started_at_; }
  const std::string& run_dir() const { return run_dir_; }
  // The device indices the run holds (from its launch record).
  const std::vector<int>& devices() const { return devices_; }
  // The run's cgroup directories (from its launch record; empty: none).
  const std::vector<std::string>& cgroup_dirs() const { return cgroup_dirs_; }
  // The rendezvous ports the run holds (from its launch record).
  const std::vector<shim::PortAllocation>& ports() const { return ports_; }

  // Whether the start is decided: the supervisor answered (the container's
  // program was executed, or its start error recorded) or the run is over.
  // Always true for an adopted run.
  bool ready() const;
  // Blocks up to `real_timeout` of real time for ready(); returns it.
  bool WaitReady(std::chrono::milliseconds real_timeout) const;
  // The exit once the run is over (the supervisor reaped the whole group).
  // A start error is an exit too, known once ready().
  std::optional<ContainerExit> exit() const;
  // Ready and not over: the container's program runs.
  bool running() const;
  // Blocks up to `real_timeout` of real time for the exit.
  std::optional<ContainerExit> WaitForExit(std::chrono::milliseconds real_timeout) const;
  // `notify` runs when the run becomes ready() and when its exit is known (on
  // the watcher thread), and once at once when it is ready() already; it must
  // not call back into this handle.
  void SetNotify(std::function<void()> notify);

  // SIGTERM to the group now; SIGKILL from Tick() at clock.Now() + grace.
  // A second call can only shorten the deadline (as a second DELETE with a
  // shorter grace period).
  void Terminate(Duration grace);
  // Enforces the termination deadline; call periodically. Returns true if it
  // requested SIGKILL now.
  bool Tick();
  // The SIGKILL deadline, once Terminate was called.
  std::optional<Time> kill_deadline() const;
  // Whether SIGKILL was requested because the grace period ran out.
  bool killed_at_deadline() const;
  // SIGKILL to the group now.
  void Kill();

 private:
  ContainerProcess(Clock& clock, const Cgroups* cgroups) : clock_(clock), cgroups_(cgroups) {}
  // Connects to the run's supervisor (true: the watcher goes on with Watch()),
  // or reads how the run ended (false, the exit set). Either makes the run
  // ready(). `observed`: this handle started the run, so an end found now
  // happened just now. `spawned`: how starting the supervisor went.
  bool Connect(bool observed, const Status& spawned);
  // Connect on the caller's thread, then the watcher thread for a live run.
  void Attach(bool observed, const Status& spawned);
  ContainerExit ExitFromRecord(bool observed);
  // Whether the run recorded its end (an exit.json, readable or not).
  bool RunEnded() const;
  ContainerExit LostExit(std::string detail) const;
  void Watch();
  void Finish(ContainerExit exit);
  void SignalGroup(int sig);

  Clock& clock_;
  const Cgroups* cgroups_;
  std::string run_dir_;
  std::vector<std::string> cgroup_dirs_;
  std::vector<int> devices_;
  std::vector<shim::PortAllocation> ports_;
  Time started_at_{};
  int connection_ = -1;
  std::thread watcher_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::optional<ContainerExit> exit_;
  bool ready_ = false;
  bool term_pending_ = false;  // SIGTERM asked for before ready_
  bool kill_pending_ = false;  // SIGKILL likewise
  bool detaching_ = false;
  std::function<void()> notify_;
  std::optional<Time> kill_deadline_;
  bool killed_at_deadline_ = false;
};

// Whether any process of group `pgid` exists (zombies included).
bool ProcessGroupExists(pid_t pgid);

}  // namespace berth::agent
