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
//     nodeInfo (machineID, bootID, kernelVersion, osImage, operatingSystem,
//       architecture, containerRuntimeVersion "berth://<v>", kubeletVersion).
//   Labels kubernetes.io/hostname, kubernetes.io/os, kubernetes.io/arch.
//
// Heartbeat (kubelet nodelease controller): Lease kube-node-lease/<node name>
//   (coordination.k8s.io/v1) with spec.holderIdentity = node name,
//   leaseDurationSeconds = 40, renewTime = Clock now (RFC 3339 micro), and an
//   ownerReference to the Node; renewed every 10 s of Clock time (0.25 × the
//   duration, as upstream). A failed renewal is retried on the next loop pass.
//
// Pods: an informer on pods with fieldSelector spec.nodeName=<node name>.
//   Each pod not yet terminal gets a worker: a per-pod directory
//   <data dir>/pods/<ns>_<name>_<uid>/ (work/ is the default working
//   directory, logs/ the container logs), a PodLifecycle, and one
//   ContainerProcess per running container. Per container start: env and argv
//   from ResolveCommand (error → CreateContainerConfigError), pod host names
//   and rendezvous ports rewritten (RewriteEnvForHostNetwork; the container
//   waits in ContainerCreating while a named pod is not placed), device
//   indices for nvidia.com/gpu (DeviceEnv), the memory limit through cgroups
//   when available. After every change the status is rebuilt
//   (BuildPodStatus, podIP = hostIP = options.address) and written with
//   UpdateStatus when it differs from the last one written.
//   Pods already Succeeded/Failed when first seen are not run (their
//   processes are gone; their status is kept).
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
//   client/log_source.h); files are read with ReadContainerLog.
//
// Threads: Start() starts the informer and one loop thread; the loop wakes on
//   informer events, on process exits it polls every options.poll_interval of
//   real time, and re-reads the Clock on each pass, so FakeClock advances are
//   seen within one poll. All public methods may be called from any thread.
//
// Restart (same node name and data directory): containers die with the agent
//   that started them (PR_SET_PDEATHSIG, process_runner.h), and Start() kills
//   any process group a previous agent recorded that is still alive, so there
//   is never a live process to adopt. A pod whose directory has such records
//   and whose API status shows a container running is therefore not run again
//   as if nothing happened: that container is reported terminated with the
//   kubelet's ContainerStatusUnknown, exit code 137, "The container could not
//   be located when the pod was terminated" (PodLifecycle::Lost), and
//   restartPolicy decides: Never -> the pod is Failed (its Job or Kueue
//   reacts); OnFailure/Always -> it restarts at once with restartCount + 1 and
//   the lost run as lastState, logging to the next log file.
//
// Not done: adopting live processes across an agent restart (containers
//   would have to outlive the agent, with a shim keeping their exit status as
//   containerd's does), rendezvous port release, periodic Node status
//   heartbeats (only the Lease is renewed).
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
#include <vector>

#include "agent/device_allocator.h"
#include "agent/host_resolver.h"
#include "agent/memory_cgroup.h"
#include "client/client.h"
#include "client/informer.h"
#include "client/log_source.h"
#include "core/clock.h"
#include "core/quantity.h"
#include "core/status.h"

namespace berth::agent {

// Resource name → amount, as a Node's status.capacity.
using ResourceList = std::map<std::string, Quantity, std::less<>>;

inline constexpr int64_t kDefaultMaxPods = 110;              // kubelet --max-pods
inline constexpr int64_t kNodeLeaseDurationSeconds = 40;     // kubelet nodeLeaseDurationSeconds
inline constexpr Duration kNodeLeaseRenewInterval = std::chrono::seconds(10);
inline constexpr int64_t kDefaultTerminationGracePeriodSeconds = 30;
inline constexpr std::string_view kNodeLeaseNamespace = "kube-node-lease";

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

struct NodeAgentOptions {
  std::string node_name;
  // Declared (virtual) capacity; empty = DetectMachineCapacity().
  ResourceList capacity;
  // Pod directories live under <data_dir>/pods. Created when missing.
  std::string data_dir;
  // The node's InternalIP, also every pod's podIP and hostIP.
  std::string address = "127.0.0.1";
  // The cgroup v2 memory controller; nullopt = MemoryCgroups::Detect().
  std::optional<MemoryCgroups> cgroups;
  // The rendezvous port authority of this host; agents sharing one host
  // (virtual nodes) should share one. nullptr = a private one.
  std::shared_ptr<HostPorts> host_ports;
  // Real-time pacing of the loop (see the file comment).
  Duration poll_interval = std::chrono::milliseconds(20);
};

class NodeAgent final : public client::PodLogSource {
 public:
  NodeAgent(client::Client& client, Clock& clock, NodeAgentOptions options);
  ~NodeAgent() override;  // Stop()
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Registers the Node, creates the Lease, starts the pod informer and the
  // loop. Errors: the client's, when the Node cannot be registered, or
  // kInternal when the data directory cannot be created.
  Status Start();
  // Stops the loop and the informer and kills every process still running
  // (the pods are left as they are in the API). Idempotent.
  void Stop();

  const std::string& node_name() const { return options_.node_name; }
  const ResourceList& capacity() const { return options_.capacity; }
  // Pods with a worker (running or holding resources), "ns/name", sorted.
  std::vector<std::string> ActivePods() const;
  // How many times the Lease was written (created or renewed).
  int64_t lease_renewals() const { return lease_renewals_.load(); }

  StatusOr<std::string> ReadPodLog(const std::string& ns, const std::string& name,
                                   const client::PodLogOptions& options) override;

 private:
  struct PodWorker;

  Status RegisterNode();
  void RenewLease();
  void Loop();
  // One pass: lease, then every pod of the cache and every worker.
  void SyncOnce();
  void SyncPod(PodWorker& worker, const api::Object* cached);
  // A pod a previous agent on this data directory ran: the containers its
  // API status shows running are gone (see "Restart" above).
  void MarkLostRuns(PodWorker& worker);
  void StartContainer(PodWorker& worker, const std::string& name);
  void WriteStatus(PodWorker& worker);
  HostLookup MakeHostLookup(const std::string& ns);
  void Wake();

  client::Client& client_;
  Clock& clock_;
  NodeAgentOptions options_;
  MemoryCgroups cgroups_;
  std::shared_ptr<HostPorts> ports_;
  std::unique_ptr<client::Informer> informer_;

  std::mutex mu_;  // guards wake_, stop_, started_
  std::condition_variable cv_;
  bool wake_ = false;
  bool stop_ = false;
  bool started_ = false;
  // Held by the loop for a whole pass; guards everything below.
  mutable std::mutex workers_mu_;
  std::map<std::string, std::unique_ptr<PodWorker>> workers_;  // by uid
  // Pod directory names with process-group records of a previous agent, until
  // their pod is first seen.
  std::set<std::string> previous_runs_;
  DeviceAllocator devices_;
  std::optional<api::Object> lease_;
  std::optional<Time> next_lease_renewal_;
  std::string node_uid_;
  std::atomic<int64_t> lease_renewals_{0};
  std::thread loop_;
};

}  // namespace berth::agent
