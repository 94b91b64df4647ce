// NodeAgent: the node agent's main loop — what the kubelet does for one node,
// over the generic client::Client (in-process API server, a remote server over
// HTTP, or the FakeClient in tests).
//
// Node registration (kubelet registerWithAPIServer / setNodeStatus):
//   Creates Node `options.node_name` (or, when it exists, keeps it) and writes
//   its status with UpdateStatus:
//     capacity = allocatable = the node's resources (no system reservations),
//       always including `pods` (110 unless declared);
//     conditions MemoryPressure/DiskPressure/PIDPressure False
//       (KubeletHasSufficientMemory "kubelet has sufficient memory available",
//       KubeletHasNoDiskPressure "kubelet has no disk pressure",
//       KubeletHasSufficientPID "kubelet has sufficient PID available") and
//       Ready True (KubeletReady "kubelet is posting ready status");
//     addresses InternalIP = options.address, Hostname = the node name;
//     daemonEndpoints.kubeletEndpoint.Port = options.kubelet_port;
//     nodeInfo (machineID, bootID, kernelVersion, osImage, operatingSystem,
//       architecture, containerRuntimeVersion "berth://<v>", kubeletVersion).
//   Labels kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch.
//   Annotations the agent declares, written at every registration (a restart
//   with other flags rewrites them, one no longer declared is removed):
//   berth.dev/host-images (options.host_images) and berth.dev/kubelet-serving-ca
//   (options.kubelet_serving_ca_pem). Later writes (the DiskPressure condition)
//   read the Node first, so they keep both and the port.
//
// Heartbeat (kubelet nodelease controller): Lease kube-node-lease/<node name>
//   (coordination.k8s.io/v1) with spec.holderIdentity = node name,
//   leaseDurationSeconds = 40, renewTime = Clock now (RFC 3339 micro), and an
//   ownerReference to the Node; renewed every 10 s of Clock time (0.25 × the
//   duration, as upstream) by a thread of its own (the kubelet's nodelease
//   controller is its own loop too), so a pass that starts many containers
//   never delays it. A failed renewal is retried at the next poll. Each
//   renewal first reads the Node and registers it again when it is gone
//   (deleted through the API; the kubelet registers only at start): its
//   running pods then survive the pod garbage collector's orphan quarantine.
//
// Pods: an informer on pods with fieldSelector spec.nodeName=<node name>.
//   Each pod not yet terminal gets a worker: a per-pod directory
//   <data dir>/pods/<ns>_<name>_<uid>/ (the name cut to fit the 255-byte
//   limit of a directory entry; work/ is the default working
//   directory, logs/ the container logs), a PodLifecycle, and one
//   ContainerProcess per running container (started asynchronously: the
//   container counts as started, with its Started event, in the pass after
//   its supervisor answered; ReportStarts). Per container start: env and argv
//   from ResolveCommand (error → CreateContainerConfigError), pod host names
//   and rendezvous ports rewritten (RewriteEnvForHostNetwork; the container
//   waits in ContainerCreating while a named pod is not placed), device
//   indices for nvidia.com/gpu (DeviceEnv), the pod's cgroup (created or
//   updated before each start: PodCgroupLimits, pids.max =
//   options.sandbox.pod_pids_limit) and the run's below it
//   (ContainerCgroupLimits), when cgroups are available (agent/cgroups.h). The
//   pod's cgroup is removed once none of its runs lives, when its worker is
//   dropped (deleted, force-deleted: what its runs left is killed), when the
//   first pass sweeps a pod gone or terminal, and with its directory. At Start the berth parent is weighted by the
//   node's cpu capacity, at most the machine's CPUs (Cgroups::SetNodeCpu); what the node cannot enforce is logged once
//   there and listed by UnenforcedCgroups(). After every change the status is rebuilt (BuildPodStatus, podIP = hostIP =
//   options.address) and written with UpdateStatus when it differs from the last one written. Pods already
//   Succeeded/Failed when first seen are not run (their processes are gone; their status is kept).
//
// Terminal in the API (phase Succeeded/Failed written by someone else, e.g.
//   Failed by the pod garbage collection after an administrator marked the
//   node out of service while this agent was away): its containers are stopped as for a deletion, and the agent
//   never moves it out of that phase (a terminal phase is final; see Finished
//   pods for a later write that does).
//
// Deletion (kubelet killPod + status manager): when a pod gets
//   metadata.deletionTimestamp, nothing more starts and every running
//   container gets SIGTERM with the grace period
//   metadata.deletionGracePeriodSeconds, else
//   spec.terminationGracePeriodSeconds, else 30; SIGKILL when the Clock
//   reaches the deadline (ContainerProcess::Tick). Once no process is left the
//   final status is written and the pod is deleted with gracePeriodSeconds=0
//   and a uid precondition, which is when the API server removes it. A pod
//   removed from the API without that (force deletion) has its processes
//   killed at once. A pod marked for deletion that runs nothing here (never
//   started, or terminal before this agent saw it) is deleted with grace 0 at
//   once. Devices are released when a pod's processes are gone.
//
// Logs: NodeAgent is a client::PodLogSource over the pods it runs (see
//   client/log_source.h); files are read with ReadContainerLog (tail from the
//   end) and followed with ReadContainerLogFrom (only what is new). A cursor
//   names its pod uid, container and run, so a follower reads the same run to
//   its end (run_ended once exit.json exists and all was read), also after
//   the pod was deleted, until its directory is removed.
//
// Passes: a pass syncs only the pods with something to do — a changed cached
//   object, a run that ended, or time-driven work (a restart or start pending,
//   a termination deadline, a status write or deletion to retry). A pass visits
//   the pods the informer reported changed since the last pass and the pods with
//   a worker (those that run or are being stopped), so its cost follows what
//   changed and what runs, not the finished pods the node has kept. A full pass
//   over every cached pod (orphan sweeps, forgetting deleted pods, removing their
//   directories) runs first, on shutdown, when a reported pod is gone from the
//   cache, when pod directories are due, and every kHousekeepingInterval of Clock
//   time, as the kubelet's housekeeping (pkg/kubelet/kubelet.go,
//   housekeepingPeriod = 2 s).
// Finished pods (agent/finished_pods.h): a pod terminal in the API with nothing
//   running here costs an entry, not a worker. Its status is the agent's: when
//   another client writes a different phase over it, the agent writes the status
//   it finished with back (the kubelet status manager's needsReconcile), on the
//   pass that sees the change and, if that write fails, on the next full pass;
//   nothing runs again.
//
// Events (the kubelet's recorder, source {component "kubelet", host <node name>}, through
//   client/event_recorder.h with its spam filter and aggregation), on the pod with the
//   container's fieldPath spec.containers{<name>} / spec.initContainers{<name>}
//   (pkg/kubelet/container/ref.go GenerateContainerRef), reasons from
//   pkg/kubelet/events/event.go and messages from kuberuntime_container.go (1.32):
//   on every start Normal Pulled `Container image "<image>" already present on machine`
//   (berth pulls nothing: the command runs on the host, which is the image), Normal
//   Created "Created container <name>", then Normal Started "Started container <name>" or,
//   when the process cannot be started (exec not found), Warning Failed "Error: <start
//   error>"; Warning Failed "Error: <message>" for a CreateContainerConfigError; Normal
//   Killing "Stopping container <name>" for each running container when the pod begins
//   terminating; Warning BackOff "Back-off restarting failed container <name> in pod
//   <name>_<namespace>(<uid>)" (kuberuntime_manager.go doBackOff) each time a container
//   exits into a restart back-off (the kubelet records it on each sync that finds the
//   container backing off; berth once per back-off wait, so the count is the number of
//   waits). The scheduler records Scheduled.
//
// Threads: Start() starts the informer, the lease thread and one loop thread; the loop wakes on
//   informer events, on process exits it polls every options.poll_interval of
//   real time, and re-reads the Clock on each pass, so FakeClock advances are
//   seen within one poll. All public methods may be called from any thread.
//
// Restart (same node name and data directory): containers do not depend on
//   the agent. Each run is owned by its supervisor (`berth shim`,
//   agent/shim/shim.h) and recorded under <pod dir>/runs/<container>/<run>/
//   (agent/shim/run_record.h), so the agent, or the server it is embedded in,
//   can die, restart or be replaced by another build while containers run.
//   Start() takes <data dir>/agent.lock (flock); a second agent on the same
//   data directory is refused. Nor may two agents serve one node name (each
//   would run every pod of the node): every Lease renewal names the agent
//   process (kAgentInstanceAnnotation: boot id/pid/start time), and Start()
//   refuses (Conflict) when the Lease names another process that is alive on
//   this host, or, from another host (another boot id), renewed it less than
//   kNodeLeaseDurationSeconds ago by this agent's Clock. An agent that meets
//   another's renewal while it runs logs an error naming it. When a pod is first seen, its recorded runs
//   are replayed through its PodLifecycle in start order (ContainerProcess::
//   Adopt): a live run is re-attached (still running, restartCount as
//   before, its devices and rendezvous ports held again); a run that ended while no agent watched
//   is reported with the exit code and finish time its supervisor recorded,
//   and restartPolicy applies to it as to any exit (a restart counts as the
//   kubelet counts it); a run whose supervisor is gone without an exit
//   record (killed, or the host rebooted) is lost: ContainerStatusUnknown,
//   exit code 137. A container the pod's API status shows running with no
//   record on disk (the data directory was lost) is lost too
//   (PodLifecycle::Lost). So no pod changes state because the agent was away.
//   Live runs of pods that are gone from the API, or terminal there (e.g.
//   failed and deleted after the node was marked out of service while the
//   agent was away), are killed: the first pass after the informer
//   synced sweeps the data directory before it starts anything.
//
// Pod directories (kubelet HandlePodCleanups -> cleanupOrphanedPodDirs,
//   pkg/kubelet/kubelet_volumes.go): a pod directory is removed once its pod
//   is gone from the API (deleted, or force-deleted) and no supervisor of any
//   of its runs is alive; a pod still in the API keeps it, terminal or not
//   (logs stay readable until the pod is deleted). Looked for when a pod
//   leaves the informer's cache and on the first pass after the informer
//   synced (pods deleted while no agent ran). A directory is removed
//   kPodDirRemovalDelay of Clock time after it was first found orphaned (a
//   `kubectl logs -f` follower's last read still finds the log); one kept for
//   a live supervisor is looked at again every kPodDirRemovalDelay. Removal never follows a symbolic link
//   (std::filesystem::remove_all removes links, not their targets; a link in place of a pod directory is left alone).
//
// Logs: each run's log is rotated by its supervisor as
//   options.container_log says (agent/shim/container_log.h); when run n
//   starts, the logs of runs before n-1 are removed (the kubelet keeps one
//   dead container per container: --maximum-dead-containers-per-container 1),
//   so `--previous` still reads run n-1.
//
// Stopping (Stop): kLeaveRunning stops the loop and detaches from every run,
//   which keeps running for the next agent (a server restart or upgrade);
//   kKillContainers (the default, and the destructor) SIGKILLs every run
//   first (tests; a node removed for good).
// Graceful node shutdown (Shutdown, kubelet's shutdownGracePeriod): every
//   running pod is terminated with SIGTERM and min(its grace period, the
//   remaining shutdown period), SIGKILL at that deadline; once its containers
//   are gone its status is written as the kubelet's node shutdown manager
//   writes it (phase Failed, reason Terminated, message "Pod was terminated in
//   response to imminent node shutdown.", condition DisruptionTarget True
//   reason TerminationByKubelet), and the pod is not deleted.
//
// Active deadline (kubelet pkg/kubelet/active_deadline.go): once the Clock reaches
//   status.startTime + spec.activeDeadlineSeconds (read at every sync, so a lowered deadline
//   applies), nothing more starts and every running container is stopped as for a deletion
//   (SIGTERM, SIGKILL after the grace period); once none runs the pod's status is written
//   phase Failed, reason DeadlineExceeded, message "Pod was active on the node longer than
//   the specified deadline" (upstream writes the phase at once and the containers' ends
//   after; berth writes both together, as for a node shutdown). A pass syncs a running pod
//   when its deadline comes.
//
// ServiceAccount tokens (agent/service_account_token.h): before a pod's
//   containers start, and again at 80 % of its lifetime while they run, the
//   pod's token, the CA and its namespace are written under
//   <pod dir>/var/run/secrets/kubernetes.io/serviceaccount/ (unless
//   automountServiceAccountToken is false), and every container gets the
//   kubelet's KUBERNETES_SERVICE_* / KUBERNETES_PORT* variables for
//   options.api_server (a variable the container sets itself wins).
//
// Volumes (agent/volumes.h): before a pod's containers start, its volumes are set up
//   under <pod dir>/volumes/ (a container waits in ContainerCreating while one fails, with
//   a Warning FailedMount event on the pod, retried with back-off) and resynced every
//   kVolumeResyncInterval while it runs; each container's mounts come from its
//   volumeMounts. Without the sandbox only hostPath mounts at their own path are possible:
//   any other mount is a CreateContainerConfigError (kVolumesNeedSandboxMessage).
//
// Probes (agent/prober.h, the kubelet's prober manager): each running regular container's
//   startup, readiness and liveness probes are made when its run starts and run on the
//   ProbeRunner's threads when due (Clock time); their outcomes come back to the pod's
//   worker (waking the loop as an exit does) and are applied at its next sync: Warning
//   Unhealthy events, the container's `started`/`ready` (agent/pod_status.h), and a liveness
//   or startup failure stops that container (SIGTERM, SIGKILL after the probe's or the pod's
//   grace period) so restartPolicy restarts it. A pass syncs a pod when a probe is due.
//
// Local ephemeral storage (agent/local_storage.h, the kubelet's eviction manager):
//   Node capacity ephemeral-storage is the size of the data directory's filesystem
//   unless declared. A running pod with an emptyDir sizeLimit or a
//   limits.ephemeral-storage is measured every kEvictionMonitoringPeriod (its first
//   sync included) and evicted when over (Evict). Every kEvictionMonitoringPeriod the
//   loop compares nodefs.available with options.eviction_hard: while met, the Node's
//   DiskPressure condition is True (until kPressureTransitionPeriod after it last
//   was), pods not tolerating node.kubernetes.io/disk-pressure are rejected at
//   admission (reason Evicted), and one running pod is evicted per period
//   (RankForDiskPressure). An evicted pod ends as an active deadline does (nothing
//   restarts, its containers are killed, then its status is written), with reason
//   Evicted, and what it wrote (work/, volumes/, each run's /tmp) is removed at once
//   (RemoveEvictedPodContent); a restarted agent measures again and evicts again.
//
// Not done: periodic Node status heartbeats (only the Lease is renewed).
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "agent/cgroups.h"
#include "agent/device_allocator.h"
#include "agent/finished_pods.h"
#include "agent/host_resolver.h"
#include "agent/local_storage.h"
#include "agent/pod_sandbox.h"
#include "agent/prober.h"
#include "agent/process_runner.h"
#include "agent/service_account_token.h"
#include "agent/shim/container_log.h"
#include "agent/shim/sandbox.h"
#include "client/client.h"
#include "client/container_exec.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/log_source.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "core/status.h"

namespace berth::agent {

struct PodAdmitResult;  // agent/pod_admission.h

// Resource name → amount, as a Node's status.capacity.
using ResourceList = std::map<std::string, Quantity, std::less<>>;

inline constexpr int64_t kDefaultMaxPods = 110;           // kubelet --max-pods
inline constexpr int64_t kNodeLeaseDurationSeconds = 40;  // kubelet nodeLeaseDurationSeconds
inline constexpr Duration kNodeLeaseRenewInterval = std::chrono::seconds(10);
inline constexpr int64_t kDefaultTerminationGracePeriodSeconds = 30;
inline constexpr std::string_view kNodeLeaseNamespace = "kube-node-lease";
// On the node's Lease: the agent process renewing it, "<boot id>/<pid>/<start time>".
inline constexpr char kAgentInstanceAnnotation[] = "berth.dev/agent-instance";
// How long a pod directory is kept after its pod left the API, and how often
// one kept for a live supervisor is looked at again: the kubelet's
// housekeeping period (2 s), which runs cleanupOrphanedPodDirs.
inline constexpr Duration kPodDirRemovalDelay = std::chrono::seconds(2);
// How long a pod's status write waits for a container whose supervisor is starting
// (ContainerProcess::ready): a start that answers sooner is reported in one write, Running
// or its start error; a slower one first shows ContainerCreating. berth's choice (a start
// takes ~25 ms; the kubelet writes whatever status it has when its status manager syncs).
inline constexpr Duration kStartingStatusDelay = std::chrono::seconds(1);

// Parses a declared capacity "cpu=8,memory=32Gi,nvidia.com/gpu=8,pods=110".
// Errors: kInvalid "invalid node capacity \"x\": ..." for a missing '=' or a
// bad quantity. `pods` is added as 110 when absent.
StatusOr<ResourceList> ParseResourceList(std::string_view text);

// The machine's capacity: cpu from sched_getaffinity (the CPUs this process
// may use), memory from /proc/meminfo MemTotal (in Ki), nvidia.com/gpu from
// `nvidia-smi -L` when that program exists and lists GPUs, pods 110.
ResourceList DetectMachineCapacity();

// One host's rendezvous ports (RendezvousPortAllocator needs a lock when
// shared by several agents).
struct HostPorts {
  std::mutex mu;
  RendezvousPortAllocator allocator;
};

// How the node isolates pods (agent/shim/sandbox.h; docs/security.md, "Pod
// isolation"). The `berth server` and `berth agent` commands turn the sandbox on
// when they run as root (a node daemon's usual case) and print what is not
// enforced otherwise; the library default is off.
struct SandboxOptions {
  bool enabled = false;
  // Which ids a pod may name (pod_sandbox.h): kMustRunAsRange, only those of
  // its namespace's block (the Namespace's openshift.io/sa.scc.uid-range,
  // allocated by the control plane, so the same on every node); kRunAsAny, any
  // (single-tenant hosts). Either way a pod without runAsUser runs as its
  // block's base uid.
  PodIdPolicy id_policy = PodIdPolicy::kMustRunAsRange;
  // Whether a pod may run as uid 0 (runAsUser: 0). Off: such a container fails
  // with CreateContainerConfigError.
  bool allow_root = false;
  // Host directories a hostPath volume may name (itself or below); empty = none.
  std::vector<std::string> host_path_prefixes;
  // pids.max of each pod's cgroup (kubelet --pod-max-pids; the kubelet's own
  // default is unlimited, berth bounds it so a fork bomb cannot take the node).
  int64_t pod_pids_limit = 4096;
  // Where the GPUs' device nodes are (<device_dir>/nvidia<i>, nvidiactl,
  // nvidia-uvm, nvidia-uvm-tools); a test points it at stand-in nodes.
  std::string device_dir = "/dev";
  // More host directories pods see as empty, besides data_dir (the server's
  // data directory with berth.db and pki/, which holds the nodes' ones).
  std::vector<std::string> hidden_paths;
  // Why pods are not sandboxed on this node (enabled = false), e.g. "berth
  // runs as uid 1000, not root". Non-empty: the Node gets condition
  // kPodIsolationCondition True with this message; enabled: False; neither
  // (the library default): no condition.
  std::string degraded_reason;
};

// The Node condition saying whether pods are isolated (not part of Ready):
// True = degraded (reason kPodIsolationDegradedReason, message
// SandboxOptions::degraded_reason), False = enforced.
inline constexpr char kPodIsolationCondition[] = "berth.dev/PodIsolationDegraded";
inline constexpr char kPodIsolationDegradedReason[] = "SandboxUnavailable";
inline constexpr char kPodIsolationEnforcedReason[] = "SandboxEnforced";

struct NodeAgentOptions {
  std::string node_name;
  // Declared (virtual) capacity; empty = DetectMachineCapacity().
  ResourceList capacity;
  // Pod directories live under <data_dir>/pods. Created when missing.
  std::string data_dir;
  // The node's InternalIP, also every pod's podIP and hostIP.
  std::string address = "127.0.0.1";
  // The pod and container cgroups (agent/cgroups.h); nullopt = Cgroups::Detect().
  std::optional<Cgroups> cgroups;
  // The rendezvous port authority of this host; agents sharing one host
  // (virtual nodes) should share one. nullptr = a private one.
  std::shared_ptr<HostPorts> host_ports;
  // Real-time pacing of the loop (see the file comment).
  Duration poll_interval = std::chrono::milliseconds(20);
  // How containers' supervisors are started.
  SupervisorOptions supervisor;
  // How each run's log is rotated (kubelet --container-log-max-size 10Mi,
  // --container-log-max-files 5; agent/shim/container_log.h). Recorded in the
  // run's launch record, so a run keeps its rotation across agent restarts.
  shim::LogRotation container_log;
  // The API server as pods reach it: KUBERNETES_SERVICE_HOST/PORT and the CA of each
  // pod's ServiceAccount token directory (agent/service_account_token.h). An empty
  // host gives pods neither.
  ApiServerEndpoint api_server;
  // Pod isolation (see SandboxOptions).
  SandboxOptions sandbox;
  // The images this node runs on its host (scheduling/host_images.h), published
  // as the Node's berth.dev/host-images annotation and enforced at admission;
  // nullopt = any image.
  std::optional<std::vector<std::string>> host_images;
  // The hard eviction threshold of nodefs.available (kubelet --eviction-hard,
  // agent/local_storage.h); default 10 % of the data directory's filesystem.
  EvictionThreshold eviction_hard = {.percent = 10.0};
  // The node's streaming server (apiserver/node_streaming_server.h), published on
  // the Node at every registration: its bound port as
  // status.daemonEndpoints.kubeletEndpoint.Port (0: the node serves no streams,
  // as before a kubelet listens), and the PEM of the CA that signed its serving
  // certificate as annotation pki::kKubeletServingCaAnnotation ("": the
  // annotation is removed).
  uint16_t kubelet_port = 0;
  std::string kubelet_serving_ca_pem;
};

enum class StopMode { kKillContainers, kLeaveRunning };

// The kubelet's Event source and reasons (pkg/kubelet/events/event.go).
inline constexpr char kKubeletComponent[] = "kubelet";
inline constexpr char kPulledReason[] = "Pulled";
inline constexpr char kCreatedReason[] = "Created";
inline constexpr char kStartedReason[] = "Started";
inline constexpr char kFailedReason[] = "Failed";
inline constexpr char kKillingReason[] = "Killing";
inline constexpr char kBackOffReason[] = "BackOff";
inline constexpr char kUnhealthyReason[] = "Unhealthy";

// The kubelet's node shutdown status (pkg/kubelet/nodeshutdown).
inline constexpr char kNodeShutdownReason[] = "Terminated";
inline constexpr char kNodeShutdownMessage[] = "Pod was terminated in response to imminent node shutdown.";
// The kubelet's status for a pod past its activeDeadlineSeconds (pkg/kubelet/active_deadline.go).
inline constexpr char kDeadlineExceededReason[] = "DeadlineExceeded";
inline constexpr char kDeadlineExceededMessage[] = "Pod was active on the node longer than the specified deadline";
// The CreateContainerConfigError of a container that mounts a volume on a node whose
// sandbox is off (only hostPath mounts at their own path need no mount namespace).
inline constexpr char kVolumesNeedSandboxMessage[] = "volume mounts need the pod sandbox, which is off on this node";

class NodeAgent final : public client::PodLogSource, public client::ContainerExecutor {
 public:
  NodeAgent(client::Client& client, Clock& clock, NodeAgentOptions options);
  ~NodeAgent() override;  // Stop()
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Takes the data directory's lock, registers the Node, creates the Lease,
  // starts the pod informer and the loop. Errors: kConflict "data directory
  // D is in use by another berth agent (pid P)" when the lock is held; the client's, when the Node cannot be
  // registered; kInternal when the data directory cannot be created.
  Status Start();
  // Stops the loop and the informer (see "Stopping"); the pods are left as
  // they are in the API. Idempotent; releases the data directory's lock.
  void Stop(StopMode mode = StopMode::kKillContainers);
  // Graceful node shutdown (see above), then Stop(kLeaveRunning). Blocks up
  // to `grace_period` of Clock time plus the time the last statuses take.
  void Shutdown(Duration grace_period);

  const std::string& node_name() const { return options_.node_name; }
  const ResourceList& capacity() const { return options_.capacity; }
  // Pods with a worker (running or holding resources), "ns/name", sorted.
  std::vector<std::string> ActivePods() const;
  // How many passes of the agent's loop have run to their end (a pass holds the workers'
  // lock throughout, so none is half done when this returns): a test waits for passes
  // after a change with it.
  uint64_t CompletedPasses() const;
  // One entry per cgroup controller the node does not enforce, "<controller>:
  // <why>" (Cgroups::unenforced); empty when cpu, memory and pids limits all are.
  const std::vector<std::string>& UnenforcedCgroups() const { return cgroups_.unenforced(); }
  // How many times the Lease was written (created or renewed).
  int64_t lease_renewals() const { return lease_renewals_.load(); }
  // Pod ns/name from the pod informer's cache, which holds the pods bound to
  // this node; kNotFound `pods "name" not found` otherwise, and before Start.
  // Call after Start returned (the cache is made there).
  StatusOr<client::ObjectPtr> CachedPod(const std::string& ns, const std::string& name) const;

  StatusOr<client::PodLogChunk> ReadPodLogChunk(const std::string& ns, const std::string& name,
                                                const client::PodLogOptions& options, const client::PodLogCursor* from,
                                                size_t max_bytes) override;

  // `kubectl exec`: the command in the environment of the container's
  // current run (agent/exec.h), when that run is running: launched and not
  // ended (no exit.json). Errors as client/container_exec.h lists.
  StatusOr<std::unique_ptr<client::ExecProcess>> StartExec(const std::string& ns, const std::string& name,
                                                           const client::ExecOptions& options) override;
  // `kubectl port-forward`: 127.0.0.1:port, for a pod of this node (pods share the
  // node's network: agent/pod_sandbox.h). Errors as client/container_exec.h lists.
  StatusOr<int> ConnectPort(const std::string& ns, const std::string& name, uint16_t port) override;

 private:
  struct PodWorker;

  // Conflict when another live agent serves this node (see "Restart").
  Status CheckNoOtherAgent();
  Status RegisterNode();
  Status EnsureNodeRegistered();
  void RenewLease();
  void Loop();
  void LeaseLoop();
  // One pass: lease, then every pod of the cache and every worker.
  void SyncOnce();
  // <data dir>/pods/<ns>_<name>_<uid>, the name cut so the entry fits NAME_MAX (the uid,
  // which alone identifies the pod, stays whole and last).
  std::string PodDir(const std::string& ns, const std::string& name, const std::string& uid) const;
  // `shutdown`: the graceful node shutdown's deadline, when one is in progress.
  void SyncPod(PodWorker& worker, const api::Object* cached, std::optional<Time> shutdown);
  // Replays the runs recorded on disk for a pod first seen (see "Restart").
  void RestoreRuns(PodWorker& worker);
  // Containers the pod's API status shows running that have no record here.
  void MarkLostRuns(PodWorker& worker);
  // DELETE with grace 0 and a uid precondition (the pod runs nothing here).
  void DeleteNow(const api::Object& pod);
  // Writes `finished`'s status (the terminal one the pod finished with here) over `pod`,
  // the API's revision, whose phase another client changed. Failures are logged.
  void RestoreFinishedStatus(const api::Object& pod, const api::Object& finished);
  // Gives back the pod's devices and its hold on rendezvous ports (host_resolver.h,
  // "Holders"): once it is finished and nothing of it runs, or it is gone.
  void ReleaseDevicesAndPorts(const PodWorker& w);
  // finished_.Mark, reading whether `pod` is terminal and marked for deletion.
  FinishedPods::Entry& MarkFinished(const std::string& uid, const client::ObjectPtr& pod, uint64_t pass);
  // Kills the live runs of every pod directory whose pod is not among
  // `runnable_uids` (gone from the API, or terminal there).
  void SweepOrphanRuns(const std::set<std::string>& runnable_uids);
  // Removes the pod directories of pods not in `in_api` whose supervisors are
  // all gone (see "Pod directories").
  void RemoveOrphanedPodDirs(const std::set<std::string>& in_api);
  // Hands the container's run to a supervisor (ContainerProcess::Start); it is
  // reported Started, or failed to start, by the pass after its supervisor
  // answered (ReportStarts), so one pod's start never waits for another's.
  void StartContainer(PodWorker& worker, const std::string& name);
  // The Started event and lifecycle start (or the Failed event of a start
  // error) of each run in worker.starting that is ready.
  void ReportStarts(PodWorker& worker);
  // The lifecycle's containers to start, less those whose start is pending.
  std::vector<std::string> ContainersToStart(const PodWorker& worker, Time now) const;
  // Creates or updates the pod's cgroup (see "Pods"); a failure is logged, the run's own cgroup still limits it.
  void EnsurePodCgroup(const PodWorker& worker);
  // Volumes (agent/volumes.h): sets up or resyncs the worker's volumes when due and
  // records FailedMount events.
  void SyncVolumes(PodWorker& worker);
  // The mounts of one container: kUnavailable while a volume is not set up (the container
  // waits), kInvalid for a CreateContainerConfigError.
  StatusOr<std::vector<shim::SandboxMount>> ContainerMounts(PodWorker& worker, const api::Object& container);
  // The id blocks of namespace `ns`, read from its Namespace (pod_sandbox.h
  // NamespaceIdsOf); an error is the container's CreateContainerConfigError.
  StatusOr<NamespaceIds> NamespaceIdsFor(const std::string& ns) const;
  IdentityRules PodIdentityRules() const;
  // Who owns the pod's volume files (the sandbox's user of the pod; nullopt without it);
  // kUnavailable while the pod's namespace has no id block.
  StatusOr<std::optional<shim::SandboxUser>> PodVolumeUser(const PodWorker& worker) const;
  void StartSandbox();
  // The sandbox of a run of `container` (options_.sandbox.enabled), with the
  // pod's work directory given to the pod's user; an error is the
  // container's CreateContainerConfigError message.
  // `volume_mounts` (ContainerMounts) follow the work directory's own mount.
  StatusOr<shim::SandboxSpec> SandboxFor(PodWorker& worker, const api::Object& container, const std::string& run_dir,
                                         const std::vector<int>& devices,
                                         const std::vector<shim::SandboxMount>& volume_mounts);
  // Writes or refreshes the pod's ServiceAccount token files (failures retried later).
  void EnsureToken(PodWorker& worker);
  // An Event about one container of the worker's pod (see Events above).
  void ContainerEvent(const PodWorker& worker, const std::string& name, const char* type, const std::string& reason,
                      const std::string& message);
  // Warning BackOff when the container's last exit put it in a restart back-off.
  void RecordBackOff(const PodWorker& worker, const std::string& name);
  StatusOr<client::PodLogChunk> ReadRunLog(const std::string& pod_dir, const std::string& uid,
                                           const std::string& container, int run, const client::PodLogOptions& options,
                                           const client::PodLogCursor* from, size_t max_bytes);
  // Writes the kubelet's rejection of a pod that failed admission (phase Failed) and
  // returns the pod as written; null when the write failed (the pod is admitted again on
  // the next pass).
  client::ObjectPtr RejectPod(const api::Object& pod, const PodAdmitResult& result);
  // Local ephemeral storage (agent/local_storage.h). Measures a running pod with
  // limits when due and evicts it when one is exceeded.
  void CheckLocalStorageLimits(PodWorker& worker);
  // Probes (agent/prober.h): applies the outcomes the runner delivered, kills a
  // container whose liveness or startup probe failed, sets the containers'
  // started/ready results, and hands the due probes to the runner.
  void SyncProbes(PodWorker& worker);
  void SubmitProbe(PodWorker& worker, const std::string& container, int run, const ProbeState& probe);
  // Starts `options.command` in the current run of `container` of the pod in `pod_dir`
  // (StartExec's errors).
  StatusOr<std::unique_ptr<client::ExecProcess>> ExecInContainer(const std::string& pod_dir,
                                                                 const std::string& container,
                                                                 const client::ExecOptions& options);
  // The eviction manager's stop: a Warning Evicted event, then the pod's containers are
  // killed after kEvictionGraceSeconds and it ends Failed, reason Evicted, `message`
  // (with condition DisruptionTarget for a node-pressure eviction).
  void Evict(PodWorker& worker, const std::string& message, bool node_pressure);
  // Removes what an evicted pod wrote (its work directory, volumes, each run's /tmp) once its
  // containers are gone; its logs and run records stay until the pod is deleted.
  void RemoveEvictedPodContent(const PodWorker& worker);
  // Every kEvictionMonitoringPeriod: nodefs.available against options_.eviction_hard, the
  // Node's DiskPressure condition, and under pressure one pod evicted.
  void MonitorDiskPressure(Time now);
  // Writes the DiskPressure condition (disk_pressure_) to the Node; false on failure.
  bool WriteDiskPressureCondition();
  void WriteStatus(PodWorker& worker);
  HostLookup MakeHostLookup(const std::string& ns);
  void Wake();
  // Wakes the loop for a pod the informer reported added, updated or deleted.
  void PodChanged(const client::ObjectPtr& pod);
  // The kubelet's housekeeping period: the longest time between full passes.
  static constexpr Duration kHousekeepingInterval = std::chrono::seconds(2);

  client::Client& client_;
  Clock& clock_;
  NodeAgentOptions options_;
  client::EventRecorder recorder_;
  Cgroups cgroups_;
  std::shared_ptr<HostPorts> ports_;
  std::unique_ptr<client::Informer> informer_;

  std::mutex mu_;  // guards wake_, stop_, started_, changed_
  std::condition_variable cv_;
  bool wake_ = false;
  std::set<std::string> changed_;  // "<ns>/<name>" of pods the informer reported since the last pass
  bool stop_ = false;
  bool started_ = false;
  // Held by the loop for a whole pass; guards everything below.
  mutable std::mutex workers_mu_;
  std::map<std::string, std::unique_ptr<PodWorker>> workers_;  // by uid
  bool swept_ = false;                                         // SweepOrphanRuns done
  bool pod_dirs_due_ = false;                                  // a pod left the API: RemoveOrphanedPodDirs on this pass
  std::optional<Time> pod_dirs_retry_;                         // a directory was kept: look again then
  std::map<std::string, Time> orphaned_since_;                 // pod directory name -> when first seen orphaned
  // Pods terminal in the API with nothing running here (no worker), with the
  // revision last seen and the last pass that saw them cached. The housekeeping
  // pass visits every cached pod and finished ones are most of them (until the
  // Job's TTL or the terminated-pod GC): an unchanged one is known by its
  // object's address, without reading it.
  FinishedPods finished_;
  uint64_t pass_ = 0;
  Time last_full_pass_{};  // Clock time of the last full pass
  // Graceful node shutdown in progress: the deadline (Clock time).
  std::optional<Time> shutdown_deadline_;
  int lock_fd_ = -1;  // <data dir>/agent.lock, flocked while started
  DeviceAllocator devices_;
  PodTokenManager tokens_;
  std::optional<api::Object> lease_;
  std::optional<Time> next_lease_renewal_;
  std::string instance_;        // kAgentInstanceAnnotation of this process
  std::string other_instance_;  // another agent's, last logged (lease thread)
  std::string node_uid_;
  // Disk pressure (MonitorDiskPressure, loop thread): when the filesystem was last
  // looked at and last found under the threshold, and the condition as reported
  // (read by RegisterNode in the lease thread, hence atomic).
  std::optional<Time> disk_checked_;
  std::optional<Time> disk_pressure_seen_;
  std::atomic<bool> disk_pressure_{false};
  bool disk_condition_written_ = true;  // RegisterNode writes the condition it reads
  std::atomic<int64_t> lease_renewals_{0};
  std::thread loop_;
  std::thread lease_loop_;  // owns lease_ and next_lease_renewal_ once started
  // Runs probes; declared last so it stops (and its tasks, which use this agent) first.
  ProbeRunner probes_;
};

}  // namespace berth::agent
