// PodLifecycle and BuildPodStatus: what the kubelet decides about a pod's
// containers and how it reports them, as pure functions of events and time.
//
// PodLifecycle is the per-pod state machine the agent drives with what the
// process runner observed. It never starts anything itself: the agent asks
// ContainersToStart(now), starts those, and reports Started/Exited back.
//   - Init containers (spec.initContainers) run one at a time in declaration
//     order; regular containers all start together once every init container
//     has exited 0. (Sidecars — init containers with restartPolicy Always —
//     are treated as ordinary init containers for now.)
//   - restartPolicy (default Always): a regular container is restarted
//     Always → after any exit; OnFailure → after a non-zero exit; Never → not.
//     A failed init container is restarted unless the policy is Never, in
//     which case the pod fails. A start error (exit code 128, reason
//     StartError) is a run that failed: it counts in restartCount and in the
//     backoff like any other run, whether or not Started was reported for it.
//   - Restart backoff as the kubelet's (pkg/kubelet/kuberuntime/
//     kuberuntime_manager.go doBackOff over client-go's flowcontrol.Backoff,
//     keyed by container; pkg/kubelet/kubelet.go backOffPeriod 10 s and
//     MaxContainerBackOff 300 s): the first restart is immediate; each restart
//     moves the entry (Next: 10 s, doubling, cap 300 s, stamped with the
//     restart time); a container that exits again waits `backoff` from its
//     finishedAt, shown as waiting reason CrashLoopBackOff with the message
//     "back-off 20s restarting failed container=c pod=p_ns(uid)"; the entry
//     expires (the next restart is immediate and starts again at 10 s) when
//     the exit comes more than 2 × 300 s after the last restart, i.e. after a
//     run of over ten minutes.
//   - BeginTermination() (pod deletion or preemption): nothing more starts or restarts.
// Time always comes in as an argument (the agent reads its Clock).
//
// BuildPodStatus maps the lifecycle to the Pod's status exactly as the
// kubelet reports it (pkg/kubelet/kubelet_pods.go getPhase, status/generate.go):
//   phase: Pending while an init container has not succeeded or any container
//     waits for its first start; Running while one runs; when none runs:
//     Always → Running (restarting), all exited 0 → Succeeded, Never →
//     Failed, OnFailure → Running (restarting); an init container failing under
//     Never → Failed.
//   containerStatuses / initContainerStatuses, in spec order: state
//     waiting {reason ContainerCreating | PodInitializing | CrashLoopBackOff |
//     CreateContainerConfigError, message} | running {startedAt} |
//     terminated {exitCode, reason Completed | Error | OOMKilled | StartError |
//     ContainerStatusUnknown (a run whose supervisor ended without an exit
//     status: message = the kubelet's text + ": " + what was found), message
//     (start errors, lost runs), startedAt, finishedAt}, lastState (the previous
//     run's terminated state), ready (running, its startup probe passed and
//     its readiness probe passing; without probes: running), started (running
//     and its startup probe passed, or it has none), restartCount, image.
//   conditions (kubelet order): Initialized, Ready, ContainersReady,
//     PodScheduled (Ready and ContainersReady: every container ready as above);
//     False ones with the kubelet's reasons/messages
//     (ContainersNotInitialized "containers with incomplete status: [a b]",
//     ContainersNotReady "containers with unready status: [a b]", PodCompleted
//     once the pod is terminal). lastTransitionTime is kept from the previous
//     status while a condition's status does not change, else `now`.
//   hostIP/hostIPs/podIP/podIPs and startTime (kept from the previous status).
//
// Thread-safety: a PodLifecycle is not synchronised (one owner per pod);
// BuildPodStatus is a pure function.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/process_runner.h"
#include "api/object.h"
#include "core/clock.h"

namespace berth::agent {

enum class RestartPolicy { kAlways, kOnFailure, kNever };
enum class PodPhase { kPending, kRunning, kSucceeded, kFailed };

const char* PodPhaseName(PodPhase phase);
// Go's time.Duration.String() for whole seconds: "10s", "1m20s", "5m0s".
std::string FormatGoDuration(Duration d);

// The kubelet's restart backoff (pkg/kubelet/kubelet.go): backOffPeriod 10 s, the first
// delay; MaxContainerBackOff 300 s, the cap. An entry expires 2 × the cap after the last
// restart (client-go flowcontrol.Backoff hasExpired).
inline constexpr Duration kInitialRestartBackoff = std::chrono::seconds(10);
inline constexpr Duration kMaxRestartBackoff = std::chrono::seconds(300);

// The agent's record of one container (regular or init).
struct ContainerRecord {
  enum class State { kWaiting, kRunning, kTerminated };
  std::string name;
  std::string image;
  State state = State::kWaiting;
  std::string waiting_reason;
  std::string waiting_message;
  Time started_at{};                     // of the current run, when running
  std::optional<ContainerExit> current;  // when terminated
  std::optional<ContainerExit> last;     // the previous run (lastState)
  int restart_count = 0;
  bool ever_started = false;
  // Restart backoff (kubelet flowcontrol.Backoff entry).
  std::optional<Time> restart_at;  // waiting to restart at this time
  Duration backoff{};              // 0 = no entry
  Time backoff_updated{};
  // Waiting because the agent refused the container's configuration
  // (ConfigError): not started again until the pod changes.
  bool config_error = false;
  // Probe results of the current run (agent/prober.h), reset at each start:
  // nullopt when the container has no such probe. `ready` is the readiness
  // probe's result, `started` whether the startup probe has succeeded.
  std::optional<bool> probe_ready;
  std::optional<bool> probe_started;
  // Running, and its probes say so: started (startup probe passed, or none) and
  // ready (readiness probe passing, or none).
  bool Started() const { return state == State::kRunning && probe_started.value_or(true); }
  bool Ready() const { return Started() && probe_ready.value_or(true); }
};

class PodLifecycle {
 public:
  // Reads spec.initContainers, spec.containers, spec.restartPolicy and the
  // pod's name/namespace/uid (for messages) from the Pod object.
  explicit PodLifecycle(const api::Object& pod);

  // Names of the containers the agent should start now (init containers one
  // at a time, then all regular ones); empty while waiting or terminal.
  std::vector<std::string> ContainersToStart(Time now) const;
  // The earliest pending restart time (for the agent's wake-up), if any.
  std::optional<Time> NextRestartTime() const;

  void Started(const std::string& name, Time at);
  // A run ended (or failed to start: exit.start_error set).
  void Exited(const std::string& name, const ContainerExit& exit);
  // A run a previous agent started (the API status says running since
  // `started_at`) that this agent cannot find: recorded as started, then
  // exited at `now` with ContainerExit.lost (exit code 137, reason
  // ContainerStatusUnknown, `detail` as ContainerExit::lost_detail), so
  // restartPolicy decides what follows as after any failure.
  void Lost(const std::string& name, Time started_at, Time now, const std::string& detail = "");
  // The container could not be configured (env resolution failed, its
  // namespace has no id block yet; `reason` is the waiting reason:
  // CreateContainerConfigError, or UnsupportedImage for an image the node does
  // not run, pod_admission.h HostImageRefusal): it waits until `retry_at`
  // (nullopt: for good, the configuration must change).
  void ConfigError(const std::string& name, const std::string& message,
                   const std::string& reason = "CreateContainerConfigError",
                   std::optional<Time> retry_at = std::nullopt);
  // Probe results of the container's current run (agent/prober.h): nullopt
  // when it has no such probe, else the probe's current result. Ignored unless
  // the container runs; reset by Started.
  void SetProbeResults(const std::string& name, std::optional<bool> started, std::optional<bool> ready);
  void BeginTermination() { terminating_ = true; }
  bool terminating() const { return terminating_; }

  PodPhase Phase() const;
  // True when no container runs and none will start again.
  bool Finished() const;
  bool AnyRunning() const;

  RestartPolicy restart_policy() const { return policy_; }
  const std::vector<ContainerRecord>& init_containers() const { return init_; }
  const std::vector<ContainerRecord>& containers() const { return regular_; }
  // Index of the next init container to run (== init_containers().size() when all succeeded).
  size_t init_done() const;

 private:
  ContainerRecord* Find(const std::string& name, bool* is_init);
  bool ShouldRestart(bool is_init, const ContainerExit& exit) const;
  bool InitFailedForGood() const;

  RestartPolicy policy_;
  std::string pod_ref_;  // "name_namespace(uid)" as the kubelet's format.Pod
  std::vector<ContainerRecord> init_;
  std::vector<ContainerRecord> regular_;
  bool terminating_ = false;
};

// Network facts for the status (pods share the host network).
struct PodAddresses {
  std::string host_ip;
  std::string pod_ip;
};

// The Pod's `status` object (see above). `previous` is the pod's current
// status (may be null/empty) for lastTransitionTime, startTime and PodScheduled.
api::Object BuildPodStatus(const PodLifecycle& lifecycle, const api::Object& previous, const PodAddresses& addresses,
                           Time now);

// The kubelet's merge of its status with the API server's (mergePodStatus): in `status`
// (from BuildPodStatus), every condition the kubelet does not own — anything but
// Initialized, Ready, ContainersReady, PodReadyToStartContainers, e.g. PodScheduled from
// the scheduler or DisruptionTarget from a preemption — is replaced by the conditions of
// `current` (the pod's status as the API server has it), in their order there; the
// kubelet-owned ones stay first. `status`'s PodScheduled is kept only when `current` has
// none. Pure.
void MergeForeignConditions(api::Object* status, const api::Object& current);

// What the kubelet's status manager does to the final status of a pod it terminated
// (pkg/kubelet/status/status_manager.go TerminatePod, called for a pod the kubelet stopped:
// node shutdown, active deadline, eviction, and a deleted pod once nothing of it runs): no
// container may show waiting or a coming restart, and the pod is terminal. In `status`:
//   - phase Pending or Running becomes Failed (Succeeded and Failed stay);
//   - a container whose state is not terminated gets
//       terminated {reason ContainerStatusUnknown, message "The container could not be
//       located when the pod was terminated", exitCode 137}
//     (its lastState and restartCount kept) when it is
//       - a regular container, and the pod has initialized (`spec` has no init containers;
//         or its last init container is running, or has terminated with exit code 0 now or
//         last time: hasPodInitialized);
//       - an init container up to the last one that ever tried to start (not waiting, or
//         with a terminated lastState), the first at least (initializedContainers);
//   - conditions Ready and ContainersReady that are False get reason PodCompleted and no
//     message, as for any terminal pod (GenerateContainersReadyCondition).
// `spec` is the pod's spec. Pure.
void TerminatePodStatus(const api::Object& spec, api::Object* status);

}  // namespace berth::agent
