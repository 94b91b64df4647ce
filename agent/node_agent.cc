#include "agent/node_agent.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <sched.h>
#include <set>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sstream>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/container_env.h"
#include "agent/exec.h"
#include "agent/pod_admission.h"
#include "agent/pod_sandbox.h"
#include "agent/pod_status.h"
#include "agent/process_runner.h"
#include "agent/shim/container_log.h"
#include "agent/shim/run_record.h"
#include "agent/shim/shim_client.h"
#include "agent/volumes.h"
#include "api/metadata_validation.h"
#include "api/resource_version.h"
#include "api/unstructured.h"
#include "core/file.h"
#include "pki/certificates.h"
#include "scheduling/host_images.h"

namespace berth::agent {
namespace {

const client::GroupVersionResource kPods{"", "v1", "pods"};
const client::GroupVersionResource kNodes{"", "v1", "nodes"};
const client::GroupVersionResource kNamespaces{"", "v1", "namespaces"};
// How soon a container whose namespace has no id block yet is tried again (the
// kubelet retries a CreateContainerConfigError at its next pod sync, seconds).
constexpr Duration kNamespaceIdsRetry = std::chrono::seconds(2);
const client::GroupVersionResource kServices{"", "v1", "services"};
const client::GroupVersionResource kLeases{"coordination.k8s.io", "v1", "leases"};
constexpr std::string_view kBerthVersion = "v1.32.0-berth";

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string OsImage() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string v = line.substr(12);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  return "Linux";
}

std::string GoArch(const std::string& machine) {
  if (machine == "x86_64") return "amd64";
  if (machine == "aarch64") return "arm64";
  if (machine == "armv7l") return "arm";
  return machine;
}

api::Object ResourceListJson(const ResourceList& list) {
  api::Object out = api::Object::object();
  for (const auto& [name, q] : list) out[name] = q.String();
  return out;
}

bool IsTerminalPhase(std::string_view phase) { return phase == "Succeeded" || phase == "Failed"; }

bool IsTerminal(const api::Object& pod) { return IsTerminalPhase(api::NestedString(pod, {"status", "phase"})); }

// kubelet: deletionGracePeriodSeconds, else spec.terminationGracePeriodSeconds, else 30.
int64_t GracePeriodSeconds(const api::Object& pod) {
  const api::Object& meta = pod["metadata"];
  if (meta.contains("deletionGracePeriodSeconds") && meta["deletionGracePeriodSeconds"].is_number_integer()) {
    return std::max<int64_t>(0, meta["deletionGracePeriodSeconds"].get<int64_t>());
  }
  if (pod.contains("spec") && pod["spec"].contains("terminationGracePeriodSeconds") &&
      pod["spec"]["terminationGracePeriodSeconds"].is_number_integer()) {
    return std::max<int64_t>(0, pod["spec"]["terminationGracePeriodSeconds"].get<int64_t>());
  }
  return kDefaultTerminationGracePeriodSeconds;
}

std::string PodKey(const api::Object& pod) { return api::Namespace(pod) + "/" + api::Name(pod); }

std::vector<std::string> ContainerNames(const api::Object& pod, const char* field) {
  std::vector<std::string> out;
  if (!pod.contains("spec") || !pod["spec"].contains(field)) return out;
  for (const auto& c : pod["spec"][field]) out.push_back(c.value("name", ""));
  return out;
}

// The node's InternalIP from its status.addresses ("" when none).
std::string InternalIp(const api::Object& node) {
  if (!node.contains("status") || !node["status"].contains("addresses")) return "";
  for (const auto& a : node["status"]["addresses"]) {
    if (a.value("type", "") == "InternalIP") return a.value("address", "");
  }
  return "";
}

// The highest run number N with <pod dir>/logs/<container>/N.log, or -1.
// The container `requested` names in `pod` ("" = its only regular
// container), as kube-apiserver's streamLocation resolves it for logs, exec
// and attach (pkg/registry/core/pod/strategy.go).
StatusOr<std::string> ContainerOf(const api::Object& pod, const std::string& name, const std::string& requested) {
  std::vector<std::string> regular = ContainerNames(pod, "containers");
  std::vector<std::string> init = ContainerNames(pod, "initContainers");
  std::string container = requested;
  if (container.empty()) {
    if (regular.size() != 1) {
      std::string list;
      for (const auto& c : regular) list += (list.empty() ? "" : " ") + c;
      return BadRequestError("a container name must be specified for pod " + name + ", choose one of: [" + list + "]");
    }
    container = regular[0];
  }
  if (std::find(regular.begin(), regular.end(), container) == regular.end() &&
      std::find(init.begin(), init.end(), container) == init.end()) {
    return BadRequestError("container " + container + " is not valid for pod " + name);
  }
  return container;
}

int LatestRun(const std::string& pod_dir, const std::string& container) {
  int latest = -1;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(pod_dir + "/logs/" + container, ec)) {
    std::string f = e.path().filename().string();
    if (f.size() < 5 || f.substr(f.size() - 4) != ".log") continue;
    std::string num = f.substr(0, f.size() - 4);
    if (num.empty() || !std::all_of(num.begin(), num.end(), ::isdigit)) continue;
    latest = std::max(latest, std::stoi(num));
  }
  return latest;
}

// Whether a run under the pod directory has a verifiably live supervisor.
bool HasLiveSupervisor(const std::string& pod_dir) {
  std::error_code ec;
  for (const auto& container : std::filesystem::directory_iterator(pod_dir + "/runs", ec)) {
    for (const auto& [run, dir] : shim::ListRuns(pod_dir, container.path().filename().string())) {
      if (shim::SupervisorAlive(dir) != 0) return true;
    }
  }
  return false;
}

// Removes the log files of the runs of `container` numbered below `keep`:
// the kubelet keeps one dead container per container (its container GC's
// MaxPerPodContainer, --maximum-dead-containers-per-container, default 1), so
// `--previous` reads the run before the current one and no older.
void RemoveLogsBefore(const std::string& pod_dir, const std::string& container, int keep) {
  if (keep <= 0) return;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(pod_dir + "/logs/" + container, ec)) {
    const std::string f = e.path().filename().string();
    const size_t dot = f.find('.');
    if (dot == 0 || dot == std::string::npos || dot > 10 || f.compare(dot, 4, ".log") != 0 ||
        !std::all_of(f.begin(), f.begin() + static_cast<long>(dot), ::isdigit)) {
      continue;
    }
    if (std::stoll(f.substr(0, dot)) < keep) std::filesystem::remove(e.path(), ec);  // never follows a link
  }
}

// spec.priority (set by the Priority admission plugin; 0 when absent).
int64_t PodPriority(const api::Object& pod) {
  const api::Object& p = api::NestedField(pod, {"spec", "priority"});
  return p.is_number_integer() ? p.get<int64_t>() : 0;
}

// A pod the kubelet itself stopped: phase Failed with `reason` and `message`, and, when
// `disruption`, condition DisruptionTarget True with reason TerminationByKubelet and the same
// message (kept once set).
void MarkTerminatedByKubelet(api::Object* status, const std::string& reason, const std::string& message,
                             bool disruption, Time now) {
  (*status)["phase"] = "Failed";
  (*status)["reason"] = reason;
  (*status)["message"] = message;
  if (!disruption) return;
  api::Object& conditions = (*status)["conditions"];
  if (!conditions.is_array()) conditions = api::Object::array();
  for (const auto& c : conditions) {
    if (c.is_object() && c.value("type", "") == "DisruptionTarget" && c.value("status", "") == "True") return;
  }
  api::Object kept = api::Object::array();
  for (auto& c : conditions) {
    if (!(c.is_object() && c.value("type", "") == "DisruptionTarget")) kept.push_back(std::move(c));
  }
  conditions = std::move(kept);
  conditions.push_back({{"type", "DisruptionTarget"},
                        {"status", "True"},
                        {"reason", "TerminationByKubelet"},
                        {"message", message},
                        {"lastProbeTime", nullptr},
                        {"lastTransitionTime", FormatRfc3339(now)}});
}

// The kubelet's node shutdown manager's status for a pod it killed
// (pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go killPods): reason Terminated,
// the shutdown message, and DisruptionTarget.
void MarkShutDown(api::Object* status, Time now) {
  MarkTerminatedByKubelet(status, kNodeShutdownReason, kNodeShutdownMessage, true, now);
}

// When the pod's spec.activeDeadlineSeconds runs out, counted from status.startTime (kubelet
// active_deadline.go pastActiveDeadline; the agent's last status, else the API's); nullopt
// without a deadline or a start time.
std::optional<Time> ActiveDeadline(const api::Object& pod, const std::optional<api::Object>& last_status) {
  const api::Object& seconds = api::NestedField(pod, {"spec", "activeDeadlineSeconds"});
  if (!seconds.is_number_integer()) return std::nullopt;
  const api::Object& status = last_status ? *last_status : api::Field(pod, "status");
  Time start;
  if (!ParseRfc3339(api::StringAt(status, "startTime"), &start)) return std::nullopt;
  return start + std::chrono::seconds(std::clamp<int64_t>(seconds.get<int64_t>(), 0, INT32_MAX));
}

// Asks every live supervisor of the pod directory's runs to SIGKILL its
// container; returns how many were asked. Never signals anything by pid.
int KillLiveRuns(const std::string& pod_dir) {
  int killed = 0;
  std::error_code ec;
  for (const auto& container : std::filesystem::directory_iterator(pod_dir + "/runs", ec)) {
    for (const auto& [run, dir] : shim::ListRuns(pod_dir, container.path().filename().string())) {
      StatusOr<int> connection = shim::ConnectShim(dir);
      if (!connection.ok()) {
        if (shim::KillSupervisor(dir)) ++killed;  // alive but unreachable through its socket
        continue;
      }
      if (shim::SendSignal(*connection, SIGKILL)) ++killed;
      close(*connection);
    }
  }
  return killed;
}

}  // namespace

// ---------------------------------------------------------------------------
// Capacity.

StatusOr<ResourceList> ParseResourceList(std::string_view text) {
  ResourceList out;
  std::string s(text);
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidError("invalid node capacity \"" + s + "\": \"" + item + "\" is not name=quantity");
    }
    StatusOr<Quantity> q = Quantity::Parse(item.substr(eq + 1));
    if (!q.ok()) {
      return InvalidError("invalid node capacity \"" + s + "\": " + item.substr(0, eq) + ": " + q.status().message());
    }
    out[item.substr(0, eq)] = *q;
  }
  if (!out.contains("pods")) out["pods"] = Quantity::FromUnits(kDefaultMaxPods);
  return out;
}

ResourceList DetectMachineCapacity() {
  ResourceList out;
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  out["cpu"] = Quantity::FromUnits(std::max(cpus, 1));
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    long long kib = 0;
    if (std::sscanf(line.c_str(), "MemTotal: %lld kB", &kib) == 1) {
      out["memory"] = Quantity::MustParse(std::to_string(kib) + "Ki");
    }
  }
  if (std::FILE* p = ::popen("nvidia-smi -L 2>/dev/null", "r")) {
    std::string output;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) output.append(buf, n);
    ::pclose(p);
    int gpus = ParseNvidiaSmiList(output);
    if (gpus > 0) out[std::string(kNvidiaGpu)] = Quantity::FromUnits(gpus);
  }
  out["pods"] = Quantity::FromUnits(kDefaultMaxPods);
  return out;
}

namespace {
int DeviceCount(const ResourceList& capacity) {
  auto it = capacity.find(kNvidiaGpu);
  return it == capacity.end() ? 0 : static_cast<int>(it->second.Value());
}
}  // namespace

// ---------------------------------------------------------------------------

struct NodeAgent::PodWorker {
  explicit PodWorker(const api::Object& p) : pod(p), lifecycle(p) {}
  api::Object pod;  // the latest cached state
  std::string uid;
  std::string key;  // ns/name
  std::string dir;
  PodLifecycle lifecycle;
  std::map<std::string, std::unique_ptr<ContainerProcess>> running;
  // Containers of `running` whose supervisor has not answered yet (ContainerProcess::ready):
  // neither started nor to start; ReportStarts settles them.
  std::set<std::string> starting;
  Time starting_since{};           // when `starting` last became non-empty
  std::optional<Time> status_due;  // a status write waiting for a start (kStartingStatusDelay)
  // Whether the pod counts against the node's capacity when another pod is admitted (the
  // kubelet's filterOutInactivePods): while a container of it runs, or may start again; not
  // once this agent knows it finished, even before the API (and so `pod`) shows the terminal
  // status it wrote. A pod bound as the previous one succeeds (a Kueue-managed Job's next pod,
  // once the finished one freed the quota) fits then.
  bool HoldsResources() const { return !running.empty() || !(IsTerminal(pod) || lifecycle.Finished()); }
  std::map<std::string, int> runs;  // container → runs started (next log index)
  std::optional<api::Object> last_status;
  bool terminating = false;
  int64_t grace_seconds = 0;
  bool released = false;           // devices returned
  bool deleted = false;            // final DELETE done
  bool shut_down = false;          // terminated by a graceful node shutdown
  bool shutdown_reported = false;  // ... and its final status is written

  // spec.activeDeadlineSeconds: when it runs out (a pass syncs the pod then).
  std::optional<Time> active_deadline;
  // Why the kubelet stops the pod itself: past its active deadline (active_deadline.go
  // ShouldEvict: DeadlineExceeded) or evicted (agent/local_storage.h). Nothing restarts, its
  // containers get `grace_seconds`, and once none runs its status is Failed with this reason
  // and message (with DisruptionTarget when `disruption`).
  struct KubeletStop {
    std::string reason;
    std::string message;
    bool disruption = false;
    int64_t grace_seconds = 0;
  };
  std::optional<KubeletStop> stop;
  // When the pod's local storage is measured next (it has limits and runs).
  std::optional<Time> storage_due;
  // A sync that threw: when to try again.
  std::optional<Time> retry_at;
  // The probes of each running regular container's current run (agent/prober.h).
  struct ContainerProbes {
    int run = -1;                    // w.runs[name] when they were made
    std::vector<ProbeState> probes;  // startup, readiness, liveness (those it has)
    std::set<ProbeType> in_flight;   // handed to the runner, no outcome yet
    bool killing = false;            // a liveness or startup failure is stopping the run
  };
  std::map<std::string, ContainerProbes> probes;
  std::optional<Time> probe_due;
  // Outcomes the runner's threads deliver: (container, run, type, outcome).
  struct ProbeInbox {
    std::mutex mu;
    std::vector<std::tuple<std::string, int, ProbeType, ProbeOutcome>> outcomes;
  };
  std::shared_ptr<ProbeInbox> inbox = std::make_shared<ProbeInbox>();
  // The pod's volumes (agent/volumes.h), made on the first sync; when they are due again.
  std::unique_ptr<PodVolumes> volumes;
  std::optional<Time> volumes_due;
  // Steady-state skipping: a pass syncs the pod only when its cached object
  // changed, one of its runs became ready or ended (set by the run's watcher)
  // or a probe reported, or it has
  // time-driven work (needs_poll, computed after each sync).
  client::ObjectPtr object;            // the cached object last synced
  std::optional<api::Object> written;  // the pod as this agent's last status write returned it
  std::shared_ptr<std::atomic<bool>> run_changed = std::make_shared<std::atomic<bool>>(false);
  bool needs_poll = true;
  bool status_current = false;  // the last status computed is the API's
  uint64_t seen_pass = 0;
};

NodeAgent::NodeAgent(client::Client& client, Clock& clock, NodeAgentOptions options)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      recorder_(client_, clock_, kKubeletComponent, options_.node_name),
      cgroups_(options_.cgroups ? *options_.cgroups : Cgroups::Detect()),
      ports_(options_.host_ports ? options_.host_ports : std::make_shared<HostPorts>()),
      devices_(0),
      tokens_(client, clock, options_.api_server) {
  if (options_.capacity.empty()) options_.capacity = DetectMachineCapacity();
  if (!options_.capacity.contains("pods")) options_.capacity["pods"] = Quantity::FromUnits(kDefaultMaxPods);
  devices_ = DeviceAllocator(DeviceCount(options_.capacity));
}

NodeAgent::~NodeAgent() { Stop(); }

// Pod isolation at start: the data directory closed to pods, the uid table
// opened, and what is not enforced said.
void NodeAgent::StartSandbox() {
  if (!options_.sandbox.enabled) {
    if (!options_.sandbox.degraded_reason.empty()) {
      spdlog::warn(
          "node {}: pods are not isolated ({}): they run as berth's user on the host, can read and signal "
          "each other and berth, and see every device",
          options_.node_name, options_.sandbox.degraded_reason);
    }
    return;
  }
  chmod(options_.data_dir.c_str(), 0700);
}

Status NodeAgent::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (started_) return Status::Ok();
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.data_dir + "/pods", ec);
  if (ec) return InternalError("cannot create " + options_.data_dir + "/pods: " + ec.message());
  // Resolved once: pod directories are then paths without symlinks, which the
  // sandbox requires of every mount source (agent/shim/sandbox.h).
  if (std::filesystem::path real = std::filesystem::canonical(options_.data_dir, ec); !ec) {
    options_.data_dir = real.string();
  }
  // The kubelet's ephemeral-storage capacity: its root directory's filesystem (cadvisor RootFsInfo).
  if (!options_.capacity.contains("ephemeral-storage")) {
    if (StatusOr<FilesystemStats> fs = StatFilesystem(options_.data_dir); fs.ok()) {
      options_.capacity["ephemeral-storage"] = Quantity::FromUnits(fs->capacity, Quantity::Format::kBinarySI);
    }
  }
  for (const std::string& missing : cgroups_.unenforced()) {
    spdlog::warn("node {}: not enforced: {}", options_.node_name, missing);
  }
  if (auto cpu = options_.capacity.find("cpu"); cpu != options_.capacity.end() && cgroups_.available()) {
    // A declared (virtual) capacity above the machine's weighs as the machine: the
    // pods never outweigh the rest of the host, berth included, by more than that.
    cpu_set_t set;
    CPU_ZERO(&set);
    const int64_t machine = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    if (Status s = cgroups_.SetNodeCpu(std::min(cpu->second.milli(), machine * 1000)); !s.ok()) {
      spdlog::warn("node {}: weighting the pods' cgroup: {}", options_.node_name, s.ToString());
    }
  }
  StartSandbox();
  // One agent per data directory: two would both adopt, restart and kill the
  // same containers. flock is released by the kernel when this process dies.
  const std::string lock_path = options_.data_dir + "/agent.lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return InternalError("cannot open " + lock_path + ": " + std::strerror(errno));
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    StatusOr<std::string> holder = ReadFileBounded(lock_path, 64);
    std::string pid = holder.ok() ? holder->substr(0, holder->find('\n')) : "";
    close(lock_fd);
    return ConflictError("data directory " + options_.data_dir + " is in use by another berth agent" +
                         (pid.empty() ? "" : " (pid " + pid + ")") +
                         "; stop it first, or give each agent its own --data-dir");
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(lock_fd, 0) != 0 || pwrite(lock_fd, pid.data(), pid.size(), 0) < 0) {
    spdlog::warn("node {}: cannot write {}: {}", options_.node_name, lock_path, std::strerror(errno));
  }
  lock_fd_ = lock_fd;
  instance_ = ReadFirstLine("/proc/sys/kernel/random/boot_id") + "/" + std::to_string(getpid()) + "/" +
              shim::ProcessStartTime(getpid());
  if (Status alone = CheckNoOtherAgent(); !alone.ok()) {
    close(lock_fd_);
    lock_fd_ = -1;
    return alone;
  }
  BERTH_RETURN_IF_ERROR(RegisterNode());
  RenewLease();
  client::InformerOptions io;
  io.field_selector = "spec.nodeName=" + options_.node_name;
  io.clock_poll_interval = options_.poll_interval;
  informer_ = std::make_unique<client::Informer>(client_, client::ResourceRef(kPods), clock_, io);
  client::ResourceEventHandler h;
  h.on_add = [this](const client::ObjectPtr& pod, bool) { PodChanged(pod); };
  h.on_update = [this](const client::ObjectPtr&, const client::ObjectPtr& pod) { PodChanged(pod); };
  h.on_delete = [this](const client::ObjectPtr& pod, bool) { PodChanged(pod); };
  informer_->AddEventHandler(std::move(h));
  informer_->Start();
  std::lock_guard<std::mutex> lock(mu_);
  started_ = true;
  loop_ = std::thread([this] { Loop(); });
  lease_loop_ = std::thread([this] { LeaseLoop(); });
  return Status::Ok();
}

void NodeAgent::Stop(StopMode mode) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (loop_.joinable()) loop_.join();
  if (lease_loop_.joinable()) lease_loop_.join();
  probes_.Stop();  // nothing submits any more; running probes end within their timeouts
  if (informer_) informer_->Stop();
  {
    std::lock_guard<std::mutex> lock(workers_mu_);
    if (mode == StopMode::kKillContainers) {
      for (auto& [uid, w] : workers_) {
        for (auto& [name, proc] : w->running) proc->Kill();
      }
      for (auto& [uid, w] : workers_) {
        for (auto& [name, proc] : w->running) proc->WaitForExit(std::chrono::seconds(10));
      }
    }
    workers_.clear();  // the handles detach; what still runs keeps running
  }
  if (lock_fd_ >= 0) {
    close(lock_fd_);  // releases the flock
    lock_fd_ = -1;
  }
}

void NodeAgent::Shutdown(Duration grace_period) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || !started_) return;
    shutdown_deadline_ = clock_.Now() + std::max(grace_period, Duration::zero());
  }
  Wake();
  // Wait until no pod runs anything and every shut-down pod's status is
  // written; the real-time bound covers an API server that stopped answering.
  const auto give_up = std::chrono::steady_clock::now() + grace_period + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < give_up) {
    {
      std::lock_guard<std::mutex> lock(workers_mu_);
      bool done = true;
      for (const auto& [uid, w] : workers_) {
        if (!w->running.empty() || (w->shut_down && !w->shutdown_reported)) done = false;
      }
      if (done) break;
    }
    std::this_thread::sleep_for(options_.poll_interval);
  }
  Stop(StopMode::kLeaveRunning);
}

void NodeAgent::PodChanged(const client::ObjectPtr& pod) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pod) changed_.insert(PodKey(*pod));
    wake_ = true;
  }
  cv_.notify_all();
}

void NodeAgent::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    wake_ = true;
  }
  cv_.notify_all();
}

uint64_t NodeAgent::CompletedPasses() const {
  std::lock_guard<std::mutex> lock(workers_mu_);
  return pass_;
}

std::vector<std::string> NodeAgent::ActivePods() const {
  std::lock_guard<std::mutex> lock(workers_mu_);
  std::vector<std::string> out;
  for (const auto& [uid, w] : workers_) out.push_back(w->key);
  std::sort(out.begin(), out.end());
  return out;
}

// ---------------------------------------------------------------------------
// Node and Lease.

Status NodeAgent::RegisterNode() {
  struct utsname uts {};
  ::uname(&uts);
  std::string arch = GoArch(uts.machine);
  std::string now = FormatRfc3339(clock_.Now());
  api::Object node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata",
       {{"name", options_.node_name},
        {"labels",
         {{"kubernetes.io/hostname", options_.node_name},
          {"kubernetes.io/os", "linux"},
          {"kubernetes.io/arch", arch},
          {"beta.kubernetes.io/os", "linux"},
          {"beta.kubernetes.io/arch", arch}}}}},
      {"spec", api::Object::object()},
  };
  auto condition = [&](const char* type, const char* status, const char* reason, const char* message) {
    return api::Object{{"type", type},     {"status", status},  {"lastHeartbeatTime", now}, {"lastTransitionTime", now},
                       {"reason", reason}, {"message", message}};
  };
  api::Object status = {
      {"capacity", ResourceListJson(options_.capacity)},
      {"allocatable", ResourceListJson(options_.capacity)},
      {"conditions",
       {condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        disk_pressure_.load()
            ? condition(kDiskPressureCondition, "True", kHasDiskPressureReason, kHasDiskPressureMessage)
            : condition(kDiskPressureCondition, "False", kNoDiskPressureReason, kNoDiskPressureMessage),
        condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")}},
      {"addresses",
       {{{"type", "InternalIP"}, {"address", options_.address}},
        {{"type", "Hostname"}, {"address", options_.node_name}}}},
      {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", options_.kubelet_port}}}}},
      {"nodeInfo",
       {{"machineID", ReadFirstLine("/etc/machine-id")},
        {"systemUUID", ReadFirstLine("/etc/machine-id")},
        {"bootID", ReadFirstLine("/proc/sys/kernel/random/boot_id")},
        {"kernelVersion", std::string(uts.release)},
        {"osImage", OsImage()},
        {"containerRuntimeVersion", "berth://" + std::string(kBerthVersion.substr(1))},
        {"kubeletVersion", std::string(kBerthVersion)},
        {"kubeProxyVersion", ""},
        {"operatingSystem", "linux"},
        {"architecture", arch}}},
  };
  if (options_.sandbox.enabled) {
    status["conditions"].push_back(condition(kPodIsolationCondition, "False", kPodIsolationEnforcedReason,
                                             "pods run in their own PID and mount namespaces as unprivileged users"));
  } else if (!options_.sandbox.degraded_reason.empty()) {
    status["conditions"].push_back(condition(kPodIsolationCondition, "True", kPodIsolationDegradedReason,
                                             options_.sandbox.degraded_reason.c_str()));
  }
  node["status"] = status;
  // The annotations the agent declares (nullopt: absent).
  std::map<std::string, std::optional<std::string>> declared;
  declared[std::string(scheduling::kHostImagesAnnotation)] =
      options_.host_images ? std::optional(scheduling::FormatHostImages(*options_.host_images)) : std::nullopt;
  declared[pki::kKubeletServingCaAnnotation] =
      options_.kubelet_serving_ca_pem.empty() ? std::nullopt : std::optional(options_.kubelet_serving_ca_pem);
  for (const auto& [key, value] : declared) {
    if (value) node["metadata"]["annotations"][key] = *value;
  }
  StatusOr<api::Object> created = client_.Create(kNodes, node);
  api::Object stored;
  if (created.ok()) {
    stored = *created;
  } else if (created.status().code() == Code::kAlreadyExists) {
    BERTH_ASSIGN_OR_RETURN(stored, client_.Get(kNodes, options_.node_name));
    // The declarations are the agent's: a restart with other flags rewrites them.
    bool changed = false;
    for (const auto& [key, value] : declared) {
      const api::Object& current = api::NestedField(stored, {"metadata", "annotations", key});
      if (value ? current == *value : current.is_null()) continue;
      if (!stored["metadata"]["annotations"].is_object()) stored["metadata"]["annotations"] = api::Object::object();
      if (value) {
        stored["metadata"]["annotations"][key] = *value;
      } else {
        stored["metadata"]["annotations"].erase(key);
      }
      changed = true;
    }
    if (changed) {
      BERTH_ASSIGN_OR_RETURN(stored, client_.Update(kNodes, stored));
    }
  } else {
    return created.status();
  }
  // The API server may drop status on create; write it through the status subresource.
  stored["status"] = status;
  stored["metadata"].erase("resourceVersion");
  BERTH_ASSIGN_OR_RETURN(api::Object updated, client_.UpdateStatus(kNodes, stored));
  node_uid_ = api::Uid(updated);
  return Status::Ok();
}

// The kubelet registers its Node once, at start. The agent also registers it
// again when it is gone at a renewal (deleted through the API): without its
// Node the scheduler places nothing here and the pods still running here
// would be failed as orphans once the pod garbage collector's quarantine
// (40 s, controllers/nodelifecycle) runs out. Renewals come every 10 s, well
// inside that quarantine.
Status NodeAgent::EnsureNodeRegistered() {
  StatusOr<api::Object> node = client_.Get(kNodes, options_.node_name);
  if (node.ok()) {
    node_uid_ = api::Uid(*node);
    return Status::Ok();
  }
  if (node.status().code() != Code::kNotFound) return node.status();
  spdlog::warn("node {}: the Node object is gone; registering it again", options_.node_name);
  lease_.reset();  // its ownerReference named the old Node
  return RegisterNode();
}

namespace {

// Who else renews the Lease `lease` (kAgentInstanceAnnotation), when it is not `self` and
// that agent may still be running: on this host (same boot id) its process is alive; from
// another host it renewed less than the lease duration before `now`. "" otherwise.
std::string OtherLiveAgent(const api::Object& lease, const std::string& self, Time now, std::string* where) {
  const std::string other =
      api::StringAt(api::ObjectAt(api::ObjectAt(lease, "metadata"), "annotations"), kAgentInstanceAnnotation);
  if (other.empty() || other == self) return "";
  const size_t a = other.find('/'), b = other.rfind('/');
  if (a == std::string::npos || b == a) return "";
  const std::string boot = other.substr(0, a), start = other.substr(b + 1);
  const std::string my_boot = self.substr(0, self.find('/'));
  if (boot == my_boot) {
    long long pid = 0;
    auto [end, ec] = std::from_chars(other.data() + a + 1, other.data() + b, pid);
    if (ec != std::errc() || end != other.data() + b || pid <= 0 || pid > (1 << 22)) return "";
    if (!shim::ProcessLive(static_cast<pid_t>(pid), start)) return "";  // that process is gone (or a zombie)
    *where = "pid " + std::to_string(pid) + " on this host";
    return other;
  }
  Time renewed;
  if (!ParseRfc3339(api::StringAt(api::ObjectAt(lease, "spec"), "renewTime"), &renewed)) return "";
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - renewed);
  if (age >= std::chrono::seconds(kNodeLeaseDurationSeconds)) return "";
  *where =
      "on another host, which renewed the node's Lease " + std::to_string(std::max<int64_t>(0, age.count())) + "s ago";
  return other;
}

}  // namespace

Status NodeAgent::CheckNoOtherAgent() {
  StatusOr<api::Object> lease = client_.Get(kLeases.Namespace(std::string(kNodeLeaseNamespace)), options_.node_name);
  if (!lease.ok()) return Status::Ok();  // none yet, or unreadable: the renewals will tell
  std::string where;
  if (OtherLiveAgent(*lease, instance_, clock_.Now(), &where).empty()) return Status::Ok();
  return ConflictError("node " + options_.node_name + " is served by another berth agent (" + where +
                       "); two agents serving one node would each run its pods: stop that agent first (or wait " +
                       std::to_string(kNodeLeaseDurationSeconds) +
                       " s after it stopped), or give this one its own --name");
}

void NodeAgent::RenewLease() {
  Time now = clock_.Now();
  if (Status registered = EnsureNodeRegistered(); !registered.ok()) {
    spdlog::warn("node {}: cannot check the Node object: {}", options_.node_name, registered.ToString());
  }
  client::ResourceRef ref = kLeases.Namespace(std::string(kNodeLeaseNamespace));
  // The renewed fields and the owner, written over whatever the Lease held.
  auto renewed = [&](api::Object lease) {
    api::Object& annotations = lease["metadata"]["annotations"];
    if (!annotations.is_object()) annotations = api::Object::object();
    annotations[kAgentInstanceAnnotation] = instance_;
    lease["spec"]["holderIdentity"] = options_.node_name;
    lease["spec"]["leaseDurationSeconds"] = kNodeLeaseDurationSeconds;
    lease["spec"]["renewTime"] = FormatRfc3339Micro(now);
    if (!node_uid_.empty()) {
      lease["metadata"]["ownerReferences"] = api::Object::array(
          {{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", options_.node_name}, {"uid", node_uid_}}});
    }
    return lease;
  };
  StatusOr<api::Object> written = Status::Ok();
  if (lease_) {
    written = client_.Update(ref, renewed(*lease_));
  } else {
    StatusOr<api::Object> got = client_.Get(ref, options_.node_name);
    if (got.ok()) {
      std::string where;
      const std::string other = OtherLiveAgent(*got, instance_, now, &where);
      if (!other.empty() && other != other_instance_) {
        spdlog::error(
            "node {}: another berth agent ({}) renews this node's Lease: two agents serve this node "
            "and each runs its pods; stop one of them",
            options_.node_name, where);
      }
      other_instance_ = other;
      written = client_.Update(ref, renewed(*got));
    } else if (got.status().code() == Code::kNotFound) {
      written = client_.Create(
          ref,
          renewed({{"apiVersion", "coordination.k8s.io/v1"},
                   {"kind", "Lease"},
                   {"metadata", {{"name", options_.node_name}, {"namespace", std::string(kNodeLeaseNamespace)}}}}));
    } else {
      written = got.status();
    }
  }
  if (!written.ok()) {
    // kubelet: a failed renewal is retried soon (here: next pass); a conflict refetches.
    spdlog::warn("node {}: lease renewal failed: {}", options_.node_name, written.status().ToString());
    lease_.reset();
    next_lease_renewal_ = now;
    return;
  }
  lease_ = *written;
  ++lease_renewals_;
  next_lease_renewal_ = now + kNodeLeaseRenewInterval;
}

// ---------------------------------------------------------------------------
// The loop.

std::string NodeAgent::PodDir(const std::string& ns, const std::string& name, const std::string& uid) const {
  // One directory entry holds at most NAME_MAX (255) bytes; a pod name may have 253.
  constexpr size_t kNameMax = 255;
  const size_t fixed = ns.size() + uid.size() + 2;
  const size_t keep = fixed >= kNameMax ? 0 : std::min(name.size(), kNameMax - fixed);
  return options_.data_dir + "/pods/" + ns + "_" + name.substr(0, keep) + "_" + uid;
}

void NodeAgent::Loop() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_) return;
      wake_ = false;
    }
    try {
      SyncOnce();
    } catch (const std::exception& e) {
      // A pass that throws (a file system error on one pod's directory, say) must not take the
      // node, and the server it is embedded in, down with every container: it is logged and
      // the next pass tries again.
      spdlog::error("node {}: pass failed: {}", options_.node_name, e.what());
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) return;
    if (!wake_) cv_.wait_for(lock, options_.poll_interval, [this] { return stop_ || wake_; });
  }
}

void NodeAgent::LeaseLoop() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (stop_) return;
      cv_.wait_for(lock, options_.poll_interval, [this] { return stop_; });
      if (stop_) return;
    }
    if (!next_lease_renewal_ || clock_.Now() >= *next_lease_renewal_) RenewLease();
  }
}

void NodeAgent::SyncOnce() {
  std::optional<Time> shutdown;
  std::set<std::string> changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shutdown = shutdown_deadline_;
    changed.swap(changed_);
  }
  std::lock_guard<std::mutex> lock(workers_mu_);
  const uint64_t pass = ++pass_;
  const Time now = clock_.Now();
  const client::Indexer& cache = informer_->GetIndexer();
  // The pods this pass visits: every cached one on a full pass, else the changed ones and
  // those with a worker (see "Passes" in the header).
  std::vector<client::ObjectPtr> pods;
  bool full = !swept_ || shutdown || pod_dirs_due_ || (pod_dirs_retry_ && now >= *pod_dirs_retry_) ||
              now - last_full_pass_ >= kHousekeepingInterval || now < last_full_pass_;
  if (!full) {
    for (const auto& [uid, w] : workers_) changed.insert(w->key);
    for (const std::string& key : changed) {
      client::ObjectPtr pod = cache.Get(key);
      if (pod == nullptr) {
        full = true;  // deleted: the full pass forgets it and removes its directory
        break;
      }
      pods.push_back(std::move(pod));
    }
  }
  if (full) {
    pods = cache.List();
    last_full_pass_ = now;
  }
  if (!swept_ && informer_->HasSynced()) {
    // Before anything starts: a leftover container may hold what a new one needs (ports, devices).
    std::set<std::string> runnable;
    for (const client::ObjectPtr& pod : pods) {
      if (!IsTerminal(*pod)) runnable.insert(api::Uid(*pod));
    }
    SweepOrphanRuns(runnable);
    swept_ = true;
    pod_dirs_due_ = true;  // pods deleted while no agent ran
  }
  MonitorDiskPressure(now);
  // A pass costs O(1) per steady pod: only pods with something to do are synced.
  std::vector<std::pair<PodWorker*, client::ObjectPtr>> due;
  std::vector<std::pair<client::ObjectPtr, std::string>> admitting;  // pod, directory
  auto start_worker = [&](const client::ObjectPtr& pod, const std::string& uid, const std::string& dir, bool has_runs) {
    auto w = std::make_unique<PodWorker>(*pod);
    w->uid = uid;
    w->key = PodKey(*pod);
    w->dir = dir;
    w->seen_pass = pass;
    std::error_code ec;
    std::filesystem::create_directories(w->dir + "/work", ec);
    if (has_runs) RestoreRuns(*w);
    MarkLostRuns(*w);
    due.emplace_back(w.get(), pod);
    workers_.emplace(uid, std::move(w));
  };
  for (const client::ObjectPtr& pod : pods) {
    if (FinishedPods::Entry* f = finished_.FindObject(pod.get())) {
      // The revision it was found finished in: nothing to read. (A finished pod has no worker.)
      finished_.See(*f, pass);
      if (f->deleting) DeleteNow(*pod);
      continue;
    }
    const std::string& uid = api::Uid(*pod);
    auto it = workers_.find(uid);
    if (it != workers_.end()) {
      PodWorker& w = *it->second;
      w.seen_pass = pass;
      if (shutdown || w.needs_poll || w.object != pod || w.run_changed->load() ||
          (w.active_deadline && now >= *w.active_deadline) || (w.volumes_due && now >= *w.volumes_due) ||
          (w.storage_due && now >= *w.storage_due) || (w.probe_due && now >= *w.probe_due) ||
          (w.retry_at && now >= *w.retry_at) || (w.status_due && now >= *w.status_due)) {
        due.emplace_back(&w, pod);
      }
      continue;
    }
    if (FinishedPods::Entry* f = finished_.Find(uid)) {
      if (f->object && api::ResourceVersionNumber(*pod) < api::ResourceVersionNumber(*f->object)) {
        // Older than the revision it finished in (the agent's own terminal write, which the
        // informer has not shown yet): not another client's write. Nothing to do until the
        // informer catches up; the entry keeps the newer revision.
        finished_.See(*f, pass);
        if (f->deleting) DeleteNow(*pod);
        continue;
      }
      // A new revision of a finished pod: nothing runs here for it.
      const std::string& finished_phase = f->object ? api::NestedString(*f->object, {"status", "phase"}) : "";
      if (IsTerminalPhase(finished_phase) && api::NestedString(*pod, {"status", "phase"}) != finished_phase) {
        // Another client wrote a different phase over the one it finished with. The agent
        // owns pod status, as the kubelet's status manager does (status_manager.go
        // needsReconcile writes the kubelet's own status over a differing one): it keeps the
        // terminal revision and writes that status back, once per revision it is shown (a
        // failed write is tried again by the next full pass). Else a pod set Running again
        // and deleted gracefully stayed Terminating, waiting for a phase that never came.
        finished_.See(*f, pass);
        RestoreFinishedStatus(*pod, *f->object);
        // Marked for deletion meanwhile: nothing runs for it here, so it goes now (as the
        // kubelet deletes on its own terminal status, canBeDeleted), whatever phase it shows.
        if (api::BeingDeleted(*pod)) DeleteNow(*pod);
        continue;
      }
      // A terminal pod marked for deletion is deleted (once per pass until the API has it
      // gone, as the kubelet retries).
      if (MarkFinished(uid, pod, pass).deleting) DeleteNow(*pod);
      continue;
    }
    const std::string dir = PodDir(api::Namespace(*pod), api::Name(*pod), uid);
    const bool has_runs = std::filesystem::exists(dir + "/runs");
    if (IsTerminal(*pod)) {
      // Finished (here, or before this agent saw it, or failed while the node
      // was lost): nothing may run for it any more.
      if (has_runs) KillLiveRuns(dir);
      if (MarkFinished(uid, pod, pass).deleting) DeleteNow(*pod);
      continue;
    }
    if (api::BeingDeleted(*pod) && !has_runs) {
      // Never started here: nothing to stop, so remove it at once (kubelet does the same).
      DeleteNow(*pod);
      continue;
    }
    if (!has_runs) {
      // Nothing of it ran here: admitted first, whatever phase the API shows (a pod another
      // client set Running, or one whose runs this node lost), after this loop, oldest first,
      // as the kubelet admits every pod it is given (HandlePodAdditions, also at its restart).
      admitting.emplace_back(pod, dir);
      continue;
    }
    start_worker(pod, uid, dir, has_runs);
  }
  // The kubelet's admission (agent/pod_admission.h): oldest first, each against the
  // pods admitted before it.
  std::sort(admitting.begin(), admitting.end(), [](const auto& a, const auto& b) {
    const std::string ta = api::NestedString(*a.first, {"metadata", "creationTimestamp"});
    const std::string tb = api::NestedString(*b.first, {"metadata", "creationTimestamp"});
    return ta != tb ? ta < tb : PodKey(*a.first) < PodKey(*b.first);
  });
  for (const auto& [pod, dir] : admitting) {
    std::vector<const api::Object*> admitted;
    for (const auto& [uid, w] : workers_) {
      if (w->HoldsResources()) admitted.push_back(&w->pod);
    }
    // The eviction manager's admit handler comes first (kubelet.go registers it before the
    // predicates): under disk pressure only pods tolerating its taint, or critical ones.
    PodAdmitResult result;
    if (disk_pressure_.load() && !ToleratesDiskPressure(*pod) && PodPriority(*pod) < kSystemCriticalPriority) {
      result = {false, kEvictedReason, kDiskPressureAdmitMessage};
    }
    if (result.admit) result = AdmitPodImages(*pod, options_.node_name, options_.host_images);
    if (result.admit) result = AdmitPodResources(*pod, admitted, options_.capacity);
    const std::string& uid = api::Uid(*pod);
    if (!result.admit) {
      if (client::ObjectPtr rejected = RejectPod(*pod, result)) MarkFinished(uid, rejected, pass);
      continue;
    }
    start_worker(pod, uid, dir, false);
  }
  // In name order, so that what starts in one pass starts deterministically.
  std::sort(due.begin(), due.end(), [](const auto& a, const auto& b) { return a.first->key < b.first->key; });
  for (auto& [w, pod] : due) {
    w->run_changed->store(false);  // a start or exit after this is seen by the next pass
    try {
      SyncPod(*w, pod.get(), shutdown);
    } catch (const std::exception& e) {
      // One pod's failure (its directory, its files) stays that pod's: logged, synced again.
      spdlog::error("node {}: pod {}: {} (retried in {}s)", options_.node_name, w->key, e.what(),
                    std::chrono::duration_cast<std::chrono::seconds>(kHousekeepingInterval).count());
      w->retry_at = now + kHousekeepingInterval;
    }
    w->object = pod;
  }
  for (auto it = workers_.begin(); it != workers_.end();) {
    PodWorker& w = *it->second;
    if (w.seen_pass != pass) {
      // Removed from the API without our final delete (force deletion): stop at once.
      for (auto& [name, proc] : w.running) proc->Kill();
      // The handles detach (their supervisors end the runs) before the devices and cgroups are
      // given back: one still starting sends its kill once its supervisor answers.
      w.running.clear();
      pod_dirs_due_ = true;
      ReleaseDevicesAndPorts(w);
      tokens_.Forget(w.uid);
      if (cgroups_.available()) cgroups_.RemovePod(w.uid);  // kills what the runs left
      it = workers_.erase(it);
      continue;
    }
    if (w.deleted) {
      // The informer may still hold the pod until its DELETE arrives: it must
      // not be taken for a new one (and its runs replayed).
      MarkFinished(it->first, w.object, pass);
      tokens_.Forget(w.uid);
      if (cgroups_.available() && w.running.empty()) cgroups_.RemovePod(w.uid);
      it = workers_.erase(it);
      continue;
    }
    if (IsTerminal(w.pod) && w.running.empty() && w.released) {
      // Done here: a terminal pod costs a set entry, not a worker, until it is deleted. The
      // entry holds a terminal revision: the cached one, or the agent's own status write when
      // the informer has not shown it yet (the status to write back, should another client
      // change the phase before the cache catches up).
      MarkFinished(it->first, w.object && IsTerminal(*w.object) ? w.object : std::make_shared<const api::Object>(w.pod),
                   pass);
      tokens_.Forget(w.uid);
      it = workers_.erase(it);
      continue;
    }
    ++it;
  }
  if (!full) return;
  if (finished_.ForgetUnseen(pass) > 0) pod_dirs_due_ = true;
  if (pod_dirs_due_ || (pod_dirs_retry_ && clock_.Now() >= *pod_dirs_retry_)) {
    std::set<std::string> in_api;
    for (const client::ObjectPtr& pod : pods) {
      const FinishedPods::Entry* f = finished_.FindObject(pod.get());
      in_api.insert(f != nullptr ? f->uid : api::Uid(*pod));
    }
    RemoveOrphanedPodDirs(in_api);
  }
}

void NodeAgent::RemoveOrphanedPodDirs(const std::set<std::string>& in_api) {
  pod_dirs_due_ = false;
  pod_dirs_retry_.reset();
  const Time now = clock_.Now();
  const std::filesystem::path pods_dir = options_.data_dir + "/pods";
  std::map<std::string, Time> orphans;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(pods_dir, ec)) {
    // <ns>_<name>_<uid>: neither a namespace nor a name contains '_'.
    const std::string dir_name = entry.path().filename().string();
    const size_t sep = dir_name.rfind('_');
    if (sep == std::string::npos) continue;
    const std::string uid = dir_name.substr(sep + 1);
    if (in_api.contains(uid) || workers_.contains(uid)) continue;
    std::error_code type_ec;
    // Only a real directory (symlink_status: a link put in its place is not followed).
    if (!std::filesystem::is_directory(std::filesystem::symlink_status(entry.path(), type_ec))) continue;
    auto seen = orphaned_since_.find(dir_name);
    const Time since = seen == orphaned_since_.end() ? now : seen->second;
    // Kept a while, so that a follower's last read (by uid) still finds the log.
    if (now - since < kPodDirRemovalDelay || HasLiveSupervisor(entry.path().string())) {
      orphans[dir_name] = since;
      const Time next = std::max(since + kPodDirRemovalDelay, now + std::chrono::milliseconds(1));
      pod_dirs_retry_ = pod_dirs_retry_ ? std::min(*pod_dirs_retry_, next) : next;
      if (now - since >= kPodDirRemovalDelay) pod_dirs_retry_ = now + kPodDirRemovalDelay;  // supervisor alive
      continue;
    }
    if (cgroups_.available()) cgroups_.RemovePod(uid);  // whatever of it is left
    // Never follows a link in the tree; any depth with two descriptors (core/file.h).
    if (Status removed = RemoveTree(entry.path().string()); !removed.ok()) {
      spdlog::warn("node {}: removing {}: {}", options_.node_name, entry.path().string(), removed.message());
      orphans[dir_name] = since;
      pod_dirs_retry_ = now + kPodDirRemovalDelay;
    } else {
      spdlog::info("node {}: removed the directory of pod {} (gone from the API)", options_.node_name, dir_name);
    }
  }
  orphaned_since_ = std::move(orphans);
}

void NodeAgent::ReleaseDevicesAndPorts(const PodWorker& w) {
  devices_.ReleasePrefix(w.uid + "/");
  std::lock_guard<std::mutex> lock(ports_->mu);
  ports_->allocator.ReleaseHolder(w.uid);
}

FinishedPods::Entry& NodeAgent::MarkFinished(const std::string& uid, const client::ObjectPtr& pod, uint64_t pass) {
  return finished_.Mark(uid, pod, pass, pod != nullptr && api::BeingDeleted(*pod) && IsTerminal(*pod));
}

void NodeAgent::RestoreFinishedStatus(const api::Object& pod, const api::Object& finished) {
  spdlog::warn("node {}: pod {}: phase {} was written over the {} it finished with; writing its status back",
               options_.node_name, PodKey(pod), api::NestedString(pod, {"status", "phase"}),
               api::NestedString(finished, {"status", "phase"}));
  api::Object obj = pod;  // this revision's resourceVersion: a newer write wins, and is looked at next
  api::Object status = finished.at("status");
  // Conditions the agent does not own (DisruptionTarget, PodScheduled) stay as the API has them.
  MergeForeignConditions(&status, api::ObjectAt(pod, "status"));
  obj["status"] = std::move(status);
  StatusOr<api::Object> written = client_.UpdateStatus(kPods.Namespace(api::Namespace(pod)), obj);
  if (!written.ok() && written.status().code() != Code::kNotFound && written.status().code() != Code::kConflict) {
    spdlog::warn("node {}: restoring the status of pod {}: {}", options_.node_name, PodKey(pod),
                 written.status().ToString());
  }
}

void NodeAgent::DeleteNow(const api::Object& pod) {
  client::DeleteOptions d;
  d.grace_period_seconds = 0;
  d.preconditions.uid = api::Uid(pod);
  Status s = client_.Delete(kPods.Namespace(api::Namespace(pod)), api::Name(pod), d);
  if (!s.ok() && s.code() != Code::kNotFound) {
    spdlog::warn("node {}: delete pod {}: {}", options_.node_name, PodKey(pod), s.ToString());
  }
}

void NodeAgent::SweepOrphanRuns(const std::set<std::string>& runnable_uids) {
  std::error_code ec;
  for (const auto& pod : std::filesystem::directory_iterator(options_.data_dir + "/pods", ec)) {
    // <ns>_<name>_<uid>: neither a namespace nor a name contains '_'.
    const std::string dir_name = pod.path().filename().string();
    const size_t sep = dir_name.rfind('_');
    if (sep == std::string::npos) continue;
    const std::string uid = dir_name.substr(sep + 1);
    if (runnable_uids.contains(uid)) continue;
    if (int killed = KillLiveRuns(pod.path().string()); killed > 0) {
      spdlog::warn("node {}: killed {} container(s) of {}: the pod is gone from the API or finished",
                   options_.node_name, killed, dir_name);
    }
    if (cgroups_.available()) cgroups_.RemovePod(uid);  // and whatever its runs left there
  }
}

void NodeAgent::RestoreRuns(PodWorker& w) {
  const Cgroups* cgroups = cgroups_.available() ? &cgroups_ : nullptr;
  int adopted = 0;
  // Container by container, in run order, through the same state machine as
  // when the runs happened, so restartCount, lastState and backoff come out
  // alike (each container's record is independent of the others').
  for (const auto* records : {&w.lifecycle.init_containers(), &w.lifecycle.containers()}) {
    for (const ContainerRecord& r : *records) {
      for (auto& [number, dir] : shim::ListRuns(w.dir, r.name)) {
        // A run whose program never ran (the agent stopped before its supervisor released
        // it) is started afresh under its number, not reported lost.
        if (shim::ClaimUnreleasedRun(dir)) {
          if (Status removed = RemoveTree(dir); removed.ok()) {
            spdlog::warn("node {}: run {} of container {} of pod {} never ran its program: started again",
                         options_.node_name, number, r.name, w.key);
            continue;
          } else {
            spdlog::warn("node {}: run {} of container {} of pod {} never ran its program, but {}", options_.node_name,
                         number, r.name, w.key, removed.ToString());
          }
        }
        std::unique_ptr<ContainerProcess> process = ContainerProcess::Adopt(dir, clock_, cgroups);
        if (process == nullptr) {
          spdlog::warn("node {}: {} holds no run of container {} of pod {} (no launch record): ignored",
                       options_.node_name, dir, r.name, w.key);
          continue;
        }
        w.runs[r.name] = std::max(w.runs[r.name], number + 1);
        std::optional<ContainerExit> exit = process->exit();
        if (!exit || exit->start_error.empty()) w.lifecycle.Started(r.name, process->started_at());
        if (exit) {
          if (exit->lost) {
            spdlog::warn("node {}: run {} of container {} of pod {} is lost: {}", options_.node_name, number, r.name,
                         w.key, exit->lost_detail);
          }
          w.lifecycle.Exited(r.name, *exit);
          continue;
        }
        if (auto previous = w.running.find(r.name); previous != w.running.end()) {
          previous->second->Kill();  // two live runs of one container: only the newest stays
        }
        if (!process->ports().empty()) {
          // The ports it was given stay its own: no new job may be mapped onto them.
          std::lock_guard<std::mutex> lock(ports_->mu);
          for (const auto& p : process->ports()) {
            if (!ports_->allocator.Restore(p.host, p.key, static_cast<uint16_t>(p.port), w.uid)) {
              spdlog::warn("node {}: rendezvous port {} of {}/{} is held by another job", options_.node_name, p.port,
                           w.key, r.name);
            }
          }
        }
        if (!process->devices().empty()) {
          Status s = devices_.Restore(w.uid + "/" + r.name, process->devices());
          if (!s.ok()) spdlog::warn("node {}: devices of {}/{}: {}", options_.node_name, w.key, r.name, s.ToString());
        }
        process->SetNotify([flag = w.run_changed, this] {
          flag->store(true);
          Wake();
        });
        w.running[r.name] = std::move(process);
        ++adopted;
      }
    }
  }
  if (adopted > 0)
    spdlog::info("node {}: adopted {} running container(s) of pod {}", options_.node_name, adopted, w.key);
}

void NodeAgent::MarkLostRuns(PodWorker& w) {
  auto field = [](const api::Object& o, const char* key) -> const api::Object* {
    if (!o.is_object()) return nullptr;
    auto it = o.find(key);
    return it == o.end() ? nullptr : &*it;
  };
  const api::Object* status = field(w.pod, "status");
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    const api::Object* statuses = status ? field(*status, list) : nullptr;
    if (statuses == nullptr || !statuses->is_array()) continue;
    for (const api::Object& cs : *statuses) {
      const api::Object* state = field(cs, "state");
      const api::Object* running = state ? field(*state, "running") : nullptr;
      const api::Object* name = field(cs, "name");
      if (running == nullptr || !running->is_object() || name == nullptr || !name->is_string()) continue;
      Time started = clock_.Now();
      if (const api::Object* at = field(*running, "startedAt"); at && at->is_string()) {
        ParseRfc3339(at->get<std::string>(), &started);
      }
      const std::string& container = name->get_ref<const std::string&>();
      bool known = false;
      for (const auto* records : {&w.lifecycle.init_containers(), &w.lifecycle.containers()}) {
        for (const ContainerRecord& r : *records) known = known || (r.name == container && !r.ever_started);
      }
      if (!known) continue;  // not in the spec, or replayed from its records
      w.lifecycle.Lost(container, started, clock_.Now(), "no record of its run is left on this node");
      // The lost run wrote logs 0 .. restartCount; the next run follows them.
      const api::Object* restarts = field(cs, "restartCount");
      w.runs[container] = (restarts && restarts->is_number_integer() ? restarts->get<int>() : 0) + 1;
      spdlog::warn("node {}: container {} of pod {} is running in the API but has no record on this node: {}",
                   options_.node_name, container, w.key, kContainerLostMessage);
    }
  }
}

void NodeAgent::SyncPod(PodWorker& w, const api::Object* cached, std::optional<Time> shutdown) {
  w.retry_at.reset();
  // The informer's copy, unless this agent's own last write is newer (its
  // event has not arrived yet): writing from the older copy would only conflict.
  if (!w.written || api::ResourceVersionNumber(*cached) >= api::ResourceVersionNumber(*w.written)) {
    w.pod = *cached;
    w.written.reset();
  } else {
    w.pod = *w.written;
  }
  // The running pod's token, refreshed when due.
  if (!w.running.empty() && !api::BeingDeleted(w.pod) && !IsTerminal(w.pod)) EnsureToken(w);
  // 1. Starts the supervisors answered, then exits seen by the monitors.
  ReportStarts(w);
  for (auto it = w.running.begin(); it != w.running.end();) {
    if (w.starting.contains(it->first)) {
      ++it;
      continue;
    }
    std::optional<ContainerExit> exit = it->second->exit();
    if (!exit) {
      ++it;
      continue;
    }
    if (exit->lost) {
      // Its supervisor ended without an exit status (killed, say): the one trace of why a
      // long run ended as ContainerStatusUnknown, as the adoption after a restart logs it.
      spdlog::warn("node {}: run {} of container {} of pod {} is lost: {}", options_.node_name,
                   std::max(w.runs[it->first] - 1, 0), it->first, w.key, exit->lost_detail);
    }
    w.lifecycle.Exited(it->first, *exit);
    RecordBackOff(w, it->first);
    it = w.running.erase(it);
  }
  // 2. Deletion or node shutdown: SIGTERM now, SIGKILL at the deadline.
  std::optional<int64_t> termination_grace;
  // Terminal in the API (e.g. failed by pod GC on a node marked out of service while this
  // agent could not renew its Lease): the kubelet stops what still runs, as for a deletion.
  if (api::BeingDeleted(w.pod) || IsTerminal(w.pod)) termination_grace = GracePeriodSeconds(w.pod);
  // spec.activeDeadlineSeconds (may be lowered while the pod runs): stopped as for a deletion.
  w.active_deadline = w.stop || w.lifecycle.Finished() ? std::nullopt : ActiveDeadline(w.pod, w.last_status);
  if (w.active_deadline && clock_.Now() >= *w.active_deadline) {
    w.stop =
        PodWorker::KubeletStop{kDeadlineExceededReason, kDeadlineExceededMessage, false, GracePeriodSeconds(w.pod)};
    w.active_deadline.reset();
  }
  CheckLocalStorageLimits(w);
  if (w.stop) termination_grace = std::min(termination_grace.value_or(w.stop->grace_seconds), w.stop->grace_seconds);
  if (shutdown) {
    if (!w.terminating && !w.lifecycle.Finished()) w.shut_down = true;
    const auto left = std::chrono::ceil<std::chrono::seconds>(*shutdown - clock_.Now()).count();
    const int64_t grace = std::clamp<int64_t>(left, 0, GracePeriodSeconds(w.pod));
    termination_grace = termination_grace ? std::min(*termination_grace, grace) : grace;
  }
  if (termination_grace) {
    int64_t grace = *termination_grace;
    if (!w.terminating || grace < w.grace_seconds) {
      if (!w.terminating) {
        for (const auto& [name, proc] : w.running) {
          ContainerEvent(w, name, client::kEventTypeNormal, kKillingReason, "Stopping container " + name);
        }
      }
      w.terminating = true;
      w.grace_seconds = grace;
      w.lifecycle.BeginTermination();
      for (auto& [name, proc] : w.running) proc->Terminate(std::chrono::seconds(grace));
    }
    for (auto& [name, proc] : w.running) proc->Tick();
  }
  // 3. Volumes, then starts, then probes.
  if (!w.terminating && !w.lifecycle.Finished()) SyncVolumes(w);
  if (!w.terminating) {
    for (const std::string& name : ContainersToStart(w, clock_.Now())) StartContainer(w, name);
  }
  SyncProbes(w);
  // 4. Status; while a supervisor is starting (~25 ms), only once kStartingStatusDelay passed:
  // one write (Running, or the start error) instead of ContainerCreating and then that, as
  // the kubelet's status manager writes the latest status it has, not each step.
  // Nor is a terminal phase written while a run starts (a pod deleted as its container
  // restarts: the lifecycle sees nothing running, but the run may yet start).
  if (!w.starting.empty() && w.lifecycle.Finished()) {
    w.status_due.reset();  // its readiness wakes the pod
  } else if (!w.starting.empty() && clock_.Now() < w.starting_since + kStartingStatusDelay) {
    w.status_due = w.starting_since + kStartingStatusDelay;
  } else {
    w.status_due.reset();
    WriteStatus(w);
  }
  // 5. Done: release resources; a deleted pod is removed from the API.
  if (w.running.empty() && w.lifecycle.Finished()) {
    if (!w.released) {
      ReleaseDevicesAndPorts(w);
      if (cgroups_.available()) cgroups_.RemovePod(w.uid);
      w.released = true;
      if (w.stop && w.stop->reason == kEvictedReason) RemoveEvictedPodContent(w);
    }
    if (api::BeingDeleted(w.pod) && !w.deleted && w.last_status) {
      client::DeleteOptions d;
      d.grace_period_seconds = 0;
      d.preconditions.uid = w.uid;
      Status s = client_.Delete(kPods.Namespace(api::Namespace(w.pod)), api::Name(w.pod), d);
      if (s.ok() || s.code() == Code::kNotFound) {
        w.deleted = true;
      } else {
        spdlog::warn("node {}: delete pod {}: {}", options_.node_name, w.key, s.ToString());
      }
    }
  }
  // 6. What makes the next pass sync this pod although nothing told it to.
  const Time now = clock_.Now();
  w.needs_poll = (w.terminating && !w.running.empty()) || !w.status_current ||
                 std::any_of(w.probes.begin(), w.probes.end(), [](const auto& p) { return p.second.killing; }) ||
                 !ContainersToStart(w, now).empty() || w.lifecycle.NextRestartTime().has_value() ||
                 (api::BeingDeleted(w.pod) && !w.deleted) ||
                 (w.running.empty() && w.lifecycle.Finished() && !w.released);
}

HostLookup NodeAgent::MakeHostLookup(const std::string& ns) {
  // Built on first use: most env values name no pod.
  auto directory = std::make_shared<std::optional<PodHostDirectory>>();
  return [this, ns, directory](std::string_view h, std::string_view s) -> HostAnswer {
    if (!directory->has_value()) {
      directory->emplace();
      std::map<std::string, std::string> node_addresses;
      StatusOr<client::ObjectList> nodes = client_.List(kNodes);
      if (nodes.ok()) {
        for (const auto& n : nodes->items) node_addresses[api::Name(n)] = InternalIp(n);
      }
      // Pods that ended resolve nothing: listing only the others keeps the cost of a
      // container start independent of how many finished pods the namespace holds.
      client::ListOptions live;
      live.field_selector = "status.phase!=Succeeded,status.phase!=Failed";
      StatusOr<client::ObjectList> pods = client_.List(kPods.Namespace(ns), live);
      if (pods.ok()) {
        for (const auto& p : pods->items) {
          std::string node = p.contains("spec") ? p["spec"].value("nodeName", "") : "";
          std::string address;
          // A pod being deleted is no endpoint (a headless Service lists no terminating pod):
          // known but not placed, so a new job's worker waits for its own master rather than
          // joining the old one that is still stopping under the same name.
          if (!node.empty() && !api::BeingDeleted(p)) {
            address = node == options_.node_name ? options_.address : node_addresses[node];
          }
          (*directory)->Add(p, address);
        }
      }
      StatusOr<client::ObjectList> services = client_.List(kServices.Namespace(ns));
      if (services.ok()) {
        for (const auto& svc : services->items) (*directory)->AddService(svc);
      }
    }
    return (*directory)->Find(h, s);
  };
}

void NodeAgent::EnsureToken(PodWorker& w) {
  Status s = tokens_.Ensure(w.pod, w.dir);
  if (!s.ok()) {
    spdlog::debug("node {}: pod {}: service account token: {}", options_.node_name, w.key, s.ToString());
  }
}

void NodeAgent::StartContainer(PodWorker& w, const std::string& name) {
  const api::Object* container = FindContainer(w.pod, name);
  if (container == nullptr) return;
  if (std::vector<std::string> errors = api::IsDNS1123Label(name); !errors.empty()) {
    // The name becomes a path under the pod directory (runs/, logs/): the API
    // server validates it, and the agent never trusts that alone.
    w.lifecycle.ConfigError(name, "invalid container name \"" + name + "\": " + errors.front());
    return;
  }
  // The node's image declaration, at every start: the image may have changed since admission.
  if (std::string refusal = HostImageRefusal(container->value("image", ""), options_.node_name, options_.host_images);
      !refusal.empty()) {
    ContainerEvent(w, name, client::kEventTypeWarning, kFailedReason, "Error: " + refusal);
    w.lifecycle.ConfigError(name, refusal, std::string(scheduling::kHostImageRejectReason));
    return;
  }
  NodeFacts facts;
  facts.pod_ip = options_.address;
  facts.host_ip = options_.address;
  for (const auto& [r, q] : options_.capacity) facts.allocatable[r] = q;
  StatusOr<ContainerCommand> cmd = ResolveCommand(w.pod, name, facts);
  if (!cmd.ok()) {
    ContainerEvent(w, name, client::kEventTypeWarning, kFailedReason, "Error: " + cmd.status().message());
    w.lifecycle.ConfigError(name, cmd.status().message());
    return;
  }
  // Volumes (agent/volumes.h): the container waits in ContainerCreating until they are set up.
  StatusOr<std::vector<shim::SandboxMount>> mounts = ContainerMounts(w, *container);
  if (!mounts.ok()) {
    if (mounts.status().code() != Code::kInvalid) return;
    ContainerEvent(w, name, client::kEventTypeWarning, kFailedReason, "Error: " + mounts.status().message());
    w.lifecycle.ConfigError(name, mounts.status().message());
    return;
  }
  // *mounts become the run's shim::SandboxSpec::mounts when the sandbox is on (SandboxFor).
  const std::string& ns = api::Namespace(w.pod);
  EnvRewrite rewrite;
  {
    HostLookup lookup = MakeHostLookup(ns);
    std::lock_guard<std::mutex> lock(ports_->mu);
    rewrite = RewriteEnvForHostNetwork(cmd->env, ns, lookup, ports_->allocator, w.uid);
  }
  if (!rewrite.error.empty()) {
    ContainerEvent(w, name, client::kEventTypeWarning, kFailedReason, "Error: " + rewrite.error);
    w.lifecycle.ConfigError(name, rewrite.error);
    return;
  }
  // A named pod is not placed yet, or no rendezvous port is free: stay ContainerCreating.
  if (!rewrite.pending.empty()) return;
  EnsureToken(w);
  // The kubelet's service environment comes first; the container's own variables win.
  std::vector<EnvVar> env;
  for (EnvVar& e : KubernetesServiceEnv(options_.api_server)) {
    const bool own =
        std::any_of(rewrite.env.begin(), rewrite.env.end(), [&](const EnvVar& c) { return c.name == e.name; });
    if (!own) env.push_back(std::move(e));
  }
  for (EnvVar& e : rewrite.env) env.push_back(std::move(e));
  std::vector<shim::PortAllocation> ports;
  for (const auto& p : rewrite.ports) ports.push_back({p.host, p.key, p.port});
  // Devices.
  StatusOr<int> wanted = DeviceRequest(*container);
  if (!wanted.ok()) {
    w.lifecycle.ConfigError(name, wanted.status().message());
    return;
  }
  if (devices_.count() > 0 || *wanted > 0) {
    std::optional<std::vector<int>> indices = devices_.Allocate(w.uid + "/" + name, *wanted);
    if (!indices) {
      // The kubelet's device manager message (UnexpectedAdmissionError).
      w.lifecycle.ConfigError(name, "Allocate failed due to requested number of devices unavailable for " +
                                        std::string(kNvidiaGpu) + ". Requested: " + std::to_string(*wanted) +
                                        ", Available: " + std::to_string(devices_.free_count()) +
                                        ", which is unexpected");
      return;
    }
    std::vector<EnvVar> device_env = DeviceEnv(*indices, devices_.count());
    std::erase_if(env, [&](const EnvVar& e) {
      return std::any_of(device_env.begin(), device_env.end(), [&](const EnvVar& d) { return d.name == e.name; });
    });
    env.insert(env.end(), device_env.begin(), device_env.end());
  }
  ContainerLaunch launch;
  launch.name = name;
  launch.argv = cmd->argv;
  launch.env = std::move(env);
  std::string work = w.dir + "/work";
  if (cmd->working_dir.empty()) {
    launch.working_dir = work;
  } else if (cmd->working_dir.front() != '/') {
    launch.working_dir = work + "/" + cmd->working_dir;
  } else {
    launch.working_dir = cmd->working_dir;
  }
  launch.limits = ContainerCgroupLimits(*container);
  EnsurePodCgroup(w);
  int run = w.runs[name]++;
  launch.run = run;
  launch.run_dir = shim::RunDir(w.dir, name, run);
  launch.log_path = shim::ContainerLogPath(w.dir, name, run);
  launch.log_rotation = options_.container_log;
  RemoveLogsBefore(w.dir, name, run - 1);
  launch.pod_uid = w.uid;
  launch.cgroup_name = name + "-" + std::to_string(run);
  launch.devices = devices_.Held(w.uid + "/" + name);
  launch.ports = std::move(ports);
  if (options_.sandbox.enabled) {
    RemoveRootfsBefore(w.dir, name, run);
    StatusOr<shim::SandboxSpec> sandbox = SandboxFor(w, *container, launch.run_dir, launch.devices, *mounts);
    if (!sandbox.ok()) {
      ContainerEvent(w, name, client::kEventTypeWarning, kFailedReason, "Error: " + sandbox.status().message());
      // kUnavailable: the namespace has no id block yet (or could not be read): retried.
      std::optional<Time> retry;
      if (sandbox.status().code() == Code::kUnavailable) retry = clock_.Now() + kNamespaceIdsRetry;
      w.lifecycle.ConfigError(name, sandbox.status().message(), "CreateContainerConfigError", retry);
      return;
    }
    launch.sandbox = std::move(sandbox).value();
  }
  std::unique_ptr<ContainerProcess> proc =
      ContainerProcess::Start(launch, clock_, cgroups_.available() ? &cgroups_ : nullptr, options_.supervisor);
  ContainerEvent(w, name, client::kEventTypeNormal, kPulledReason,
                 "Container image \"" + container->value("image", "") + "\" already present on machine");
  ContainerEvent(w, name, client::kEventTypeNormal, kCreatedReason, "Created container " + name);
  // Started (or failed) once its supervisor answers: the pass after that reports it (ReportStarts).
  proc->SetNotify([flag = w.run_changed, this] {
    flag->store(true);
    Wake();
  });
  w.running[name] = std::move(proc);
  if (w.starting.empty()) w.starting_since = clock_.Now();
  w.starting.insert(name);
}

void NodeAgent::ReportStarts(PodWorker& w) {
  for (auto it = w.starting.begin(); it != w.starting.end();) {
    const std::string& name = *it;
    auto run = w.running.find(name);
    if (run != w.running.end() && !run->second->ready()) {
      ++it;
      continue;
    }
    if (run != w.running.end()) {
      std::optional<ContainerExit> exit = run->second->exit();
      if (exit && !exit->start_error.empty()) {
        // Never ran: the exit (with its start error) is taken as any other by the caller.
        ContainerEvent(w, name, client::kEventTypeWarning, kFailedReason, "Error: " + exit->start_error);
      } else {
        ContainerEvent(w, name, client::kEventTypeNormal, kStartedReason, "Started container " + name);
        w.lifecycle.Started(name, run->second->started_at());
      }
    }
    it = w.starting.erase(it);
  }
}

std::vector<std::string> NodeAgent::ContainersToStart(const PodWorker& w, Time now) const {
  std::vector<std::string> names = w.lifecycle.ContainersToStart(now);
  std::erase_if(names, [&](const std::string& name) { return w.starting.contains(name); });
  return names;
}

void NodeAgent::EnsurePodCgroup(const PodWorker& w) {
  // pod_container_manager_linux.go EnsureExists: pids.max when --pod-max-pids > 0.
  if (!cgroups_.available()) return;
  const int64_t pids = options_.sandbox.pod_pids_limit;
  auto dirs = cgroups_.CreatePod(w.uid, PodCgroupLimits(w.pod, pids > 0 ? std::optional<int64_t>(pids) : std::nullopt));
  if (!dirs.ok()) spdlog::warn("node {}: cgroup of pod {}: {}", options_.node_name, w.key, dirs.status().ToString());
}

StatusOr<shim::SandboxSpec> NodeAgent::SandboxFor(PodWorker& w, const api::Object& container,
                                                  const std::string& run_dir, const std::vector<int>& devices,
                                                  const std::vector<shim::SandboxMount>& volume_mounts) {
  const std::string ns = api::Namespace(w.pod);
  std::optional<StatusOr<NamespaceIds>> ids;  // read once for both
  auto ns_ids = [&]() -> StatusOr<NamespaceIds> {
    if (!ids) ids = NamespaceIdsFor(ns);
    return *ids;
  };
  shim::SandboxSpec spec;
  spec.enabled = true;
  BERTH_ASSIGN_OR_RETURN(spec.user, ContainerIdentity(w.pod, container, PodIdentityRules(), ns_ids));
  BERTH_ASSIGN_OR_RETURN(WorkDirOwner owner, PodWorkDirOwner(w.pod, PodIdentityRules(), ns_ids));
  const std::string work = w.dir + "/work";
  BERTH_RETURN_IF_ERROR(ApplyWorkDirOwner(work, owner));
  spec.rootfs_dir = run_dir + "/" + shim::kRootfsDir;
  spec.hidden_paths = {options_.data_dir};  // resolved at Start
  for (const std::string& h : options_.sandbox.hidden_paths) {
    if (std::find(spec.hidden_paths.begin(), spec.hidden_paths.end(), h) == spec.hidden_paths.end()) {
      spec.hidden_paths.push_back(h);
    }
  }
  spec.mounts.push_back({shim::SandboxMount::Kind::kBind, work, work, false, 0});
  // The volumes' mounts (emptyDir, hostPath, configMap, secret, projected, downwardAPI).
  spec.mounts.insert(spec.mounts.end(), volume_mounts.begin(), volume_mounts.end());
  spec.devices = GpuDeviceNodes(options_.sandbox.device_dir, devices);
  BERTH_RETURN_IF_ERROR(shim::ValidateSandboxSpec(spec));
  return spec;
}

client::ObjectPtr NodeAgent::RejectPod(const api::Object& pod, const PodAdmitResult& result) {
  // rejectPod (kubelet.go): phase Failed with the admit handler's reason and message;
  // the status manager keeps the other conditions and sets startTime once.
  api::Object obj = pod;
  api::Object& status = obj["status"];
  if (!status.is_object()) status = api::Object::object();
  status["phase"] = "Failed";
  status["reason"] = result.reason;
  status["message"] = "Pod was rejected: " + result.message;
  if (!status.contains("startTime")) status["startTime"] = FormatRfc3339(clock_.Now());
  StatusOr<api::Object> written = client_.UpdateStatus(kPods.Namespace(api::Namespace(pod)), obj);
  if (!written.ok()) {
    if (written.status().code() != Code::kNotFound && written.status().code() != Code::kConflict) {
      spdlog::warn("node {}: rejecting pod {}: {}", options_.node_name, PodKey(pod), written.status().ToString());
    }
    return nullptr;  // admitted again on the next pass
  }
  spdlog::info("node {}: pod {} rejected: {}: {}", options_.node_name, PodKey(pod), result.reason, result.message);
  return std::make_shared<const api::Object>(std::move(written).value());
}

void NodeAgent::CheckLocalStorageLimits(PodWorker& w) {
  if (w.stop || w.terminating || w.lifecycle.Finished() || !HasLocalStorageLimits(w.pod)) {
    w.storage_due.reset();
    return;
  }
  const Time now = clock_.Now();
  if (w.storage_due && now < *w.storage_due && now + kEvictionMonitoringPeriod >= *w.storage_due) return;
  w.storage_due = now + kEvictionMonitoringPeriod;
  if (w.running.empty()) return;  // nothing runs yet (or between restarts): measured at the next period
  if (std::optional<std::string> message = LocalStorageLimitViolation(w.pod, MeasurePodStorage(w.dir, w.pod))) {
    Evict(w, *message, false);
  }
}

void NodeAgent::MonitorDiskPressure(Time now) {
  if (!disk_condition_written_) disk_condition_written_ = WriteDiskPressureCondition();
  if (disk_checked_ && now >= *disk_checked_ && now - *disk_checked_ < kEvictionMonitoringPeriod) return;
  disk_checked_ = now;
  if (!options_.eviction_hard.enabled()) return;
  StatusOr<FilesystemStats> fs = StatFilesystem(options_.data_dir);
  if (!fs.ok()) {
    spdlog::warn("node {}: disk pressure: {}", options_.node_name, fs.status().ToString());
    return;
  }
  const bool met = options_.eviction_hard.Met(*fs);
  if (met) disk_pressure_seen_ = now;
  const bool pressure = disk_pressure_seen_ && now - *disk_pressure_seen_ < kPressureTransitionPeriod;
  if (pressure != disk_pressure_.load()) {
    disk_pressure_ = pressure;
    spdlog::warn("node {}: DiskPressure {} ({} bytes available of {}, threshold {})", options_.node_name,
                 pressure ? "True" : "False", fs->available, fs->capacity, options_.eviction_hard.Bytes(fs->capacity));
    disk_condition_written_ = WriteDiskPressureCondition();
  }
  if (!met) return;
  // One pod per period, ranked among those with something running (the kubelet's active pods).
  std::vector<DiskPressureCandidate> candidates;
  std::map<std::string, PodStorageUsage> usage;
  for (auto& [uid, w] : workers_) {
    if (w->running.empty() || w->stop || w->terminating) continue;
    PodStorageUsage u = MeasurePodStorage(w->dir, w->pod);
    candidates.push_back({uid, static_cast<int32_t>(std::clamp<int64_t>(PodPriority(w->pod), INT32_MIN, INT32_MAX)),
                          u.total, PodEphemeralStorageRequest(w->pod)});
    usage.emplace(uid, std::move(u));
  }
  RankForDiskPressure(&candidates);
  if (candidates.empty()) {
    spdlog::warn("node {}: disk pressure, but no pod that may be evicted runs here", options_.node_name);
    return;
  }
  PodWorker& w = *workers_.at(candidates.front().uid);
  Evict(w, DiskPressureEvictionMessage(options_.eviction_hard, *fs, w.pod, usage.at(w.uid)), true);
}

bool NodeAgent::WriteDiskPressureCondition() {
  StatusOr<api::Object> node = client_.Get(kNodes, options_.node_name);
  if (!node.ok()) return false;
  api::Object obj = std::move(node).value();
  const bool pressure = disk_pressure_.load();
  const std::string now = FormatRfc3339(clock_.Now());
  api::Object condition = {{"type", kDiskPressureCondition},
                           {"status", pressure ? "True" : "False"},
                           {"lastHeartbeatTime", now},
                           {"lastTransitionTime", now},
                           {"reason", pressure ? kHasDiskPressureReason : kNoDiskPressureReason},
                           {"message", pressure ? kHasDiskPressureMessage : kNoDiskPressureMessage}};
  api::Object& conditions = obj["status"]["conditions"];
  if (!conditions.is_array()) conditions = api::Object::array();
  bool found = false;
  for (api::Object& c : conditions) {
    if (!c.is_object() || c.value("type", "") != kDiskPressureCondition) continue;
    if (c.value("status", "") == condition["status"])
      condition["lastTransitionTime"] = c.value("lastTransitionTime", now);
    c = condition;
    found = true;
  }
  if (!found) conditions.push_back(std::move(condition));
  StatusOr<api::Object> written = client_.UpdateStatus(kNodes, obj);
  if (!written.ok()) {
    spdlog::warn("node {}: DiskPressure condition: {}", options_.node_name, written.status().ToString());
    return false;
  }
  return true;
}

namespace {
// The object reference of the kubelet's pod events.
api::Object PodReference(const api::Object& pod) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", api::Name(pod)},
            {"namespace", api::Namespace(pod)},
            {"uid", api::Uid(pod)},
            {"resourceVersion", api::ResourceVersion(pod)}}}};
}
}  // namespace

void NodeAgent::SyncProbes(PodWorker& w) {
  const Time now = clock_.Now();
  std::vector<std::tuple<std::string, int, ProbeType, ProbeOutcome>> outcomes;
  {
    std::lock_guard<std::mutex> lock(w.inbox->mu);
    outcomes.swap(w.inbox->outcomes);
  }
  // Probes belong to a run: a container that stopped, one whose next run is still starting,
  // or a pod being stopped, has none.
  std::erase_if(w.probes, [&](const auto& p) {
    return w.terminating || !w.running.contains(p.first) || w.starting.contains(p.first);
  });
  for (const ContainerRecord& c : w.lifecycle.containers()) {
    if (w.terminating || c.state != ContainerRecord::State::kRunning || !w.running.contains(c.name)) continue;
    PodWorker::ContainerProbes& cp = w.probes[c.name];
    const int run = w.runs[c.name];
    if (cp.run == run) continue;
    cp = PodWorker::ContainerProbes{run, {}, {}, false};
    const api::Object* container = FindContainer(w.pod, c.name);
    if (container == nullptr) continue;
    for (ProbeType type : {ProbeType::kStartup, ProbeType::kReadiness, ProbeType::kLiveness}) {
      StatusOr<std::optional<ProbeSpec>> spec = ContainerProbe(*container, type);
      if (!spec.ok()) {
        ContainerEvent(w, c.name, client::kEventTypeWarning, kFailedReason, "Error: " + spec.status().message());
        continue;
      }
      if (*spec) cp.probes.emplace_back(type, std::move(**spec), c.started_at);
    }
  }
  for (auto& [name, run, type, outcome] : outcomes) {
    auto it = w.probes.find(name);
    if (it == w.probes.end() || it->second.run != run) continue;
    PodWorker::ContainerProbes& cp = it->second;
    cp.in_flight.erase(type);
    auto probe =
        std::find_if(cp.probes.begin(), cp.probes.end(), [&](const ProbeState& p) { return p.type() == type; });
    if (probe == cp.probes.end() || cp.killing) continue;
    if (outcome.result != ProbeResult::kSuccess) {
      ContainerEvent(w, name, client::kEventTypeWarning, kUnhealthyReason,
                     std::string(ProbeTypeName(type)) +
                         (outcome.result == ProbeResult::kFailure ? " probe failed: " : " probe errored: ") +
                         outcome.output);
    }
    if (probe->Record(outcome) && probe->result() == ProbeResult::kFailure && type != ProbeType::kReadiness) {
      // The kubelet kills the container (computePodActions) and restartPolicy decides what follows.
      std::string kind = ProbeTypeName(type);
      kind[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(kind[0])));
      ContainerEvent(w, name, client::kEventTypeNormal, kKillingReason,
                     "Container " + name + " failed " + kind + " probe, will be restarted");
      cp.killing = true;
      const int64_t grace = probe->spec().termination_grace_period_seconds.value_or(GracePeriodSeconds(w.pod));
      if (auto proc = w.running.find(name); proc != w.running.end())
        proc->second->Terminate(std::chrono::seconds(grace));
    }
  }
  std::optional<Time> next;
  for (auto& [name, cp] : w.probes) {
    const ProbeState* startup = nullptr;
    const ProbeState* readiness = nullptr;
    for (const ProbeState& p : cp.probes) {
      if (p.type() == ProbeType::kStartup) startup = &p;
      if (p.type() == ProbeType::kReadiness) readiness = &p;
    }
    const bool started = startup == nullptr || startup->done();
    w.lifecycle.SetProbeResults(
        name, startup ? std::optional<bool>(started) : std::nullopt,
        readiness ? std::optional<bool>(started && readiness->result() == ProbeResult::kSuccess) : std::nullopt);
    if (cp.killing) {
      if (auto proc = w.running.find(name); proc != w.running.end()) proc->second->Tick();
      continue;
    }
    for (ProbeState& p : cp.probes) {
      if (p.done() || (p.type() != ProbeType::kStartup && !started) || cp.in_flight.contains(p.type())) continue;
      if (now >= p.due()) {
        SubmitProbe(w, name, cp.run, p);
        p.Dispatched();
        cp.in_flight.insert(p.type());
        continue;  // the next run is scheduled when this one's outcome is in
      }
      next = next ? std::min(*next, p.due()) : p.due();
    }
  }
  w.probe_due = next;
}

void NodeAgent::SubmitProbe(PodWorker& w, const std::string& container, int run, const ProbeState& probe) {
  // The runner's thread reports to the worker's inbox and wakes the loop (as an exit does).
  std::function<void(ProbeOutcome)> deliver = [this, inbox = w.inbox, changed = w.run_changed, container, run,
                                               type = probe.type()](ProbeOutcome outcome) {
    {
      std::lock_guard<std::mutex> lock(inbox->mu);
      inbox->outcomes.emplace_back(container, run, type, std::move(outcome));
    }
    changed->store(true);
    Wake();
  };
  const ProbeSpec spec = probe.spec();
  const std::string dir = w.dir;
  const std::string address = options_.address;
  probes_.Submit([this, spec, dir, address, container, deliver] {
    switch (spec.handler) {
      case ProbeSpec::Handler::kHttpGet:
        return deliver(RunHttpProbe(spec, address));
      case ProbeSpec::Handler::kTcpSocket:
        return deliver(RunTcpProbe(spec, address));
      case ProbeSpec::Handler::kInvalid:
        return deliver({ProbeResult::kUnknown, spec.error});
      case ProbeSpec::Handler::kExec: {
        client::ExecOptions o;
        o.container = container;
        o.command = spec.command;
        StatusOr<std::unique_ptr<client::ExecProcess>> process = ExecInContainer(dir, container, o);
        if (!process.ok()) return deliver({ProbeResult::kUnknown, process.status().message()});
        return deliver(RunExecProbe(**process, spec.command, std::chrono::seconds(spec.timeout_seconds)));
      }
    }
  });
}

void NodeAgent::RemoveEvictedPodContent(const PodWorker& w) {
  // pod_workers.go ShouldPodContentBeRemoved: an evicted pod's content goes once it has
  // stopped, so the space an eviction was for is given back now, not at the pod's deletion.
  // The logs and the runs' records stay for `kubectl logs` and the status.
  std::vector<std::string> content = {w.dir + "/work", w.dir + "/volumes"};
  std::error_code ec;
  for (const auto& container : std::filesystem::directory_iterator(w.dir + "/runs", ec)) {
    std::error_code run_ec;
    for (const auto& run : std::filesystem::directory_iterator(container.path(), run_ec)) {
      content.push_back(run.path().string() + "/" + shim::kRootfsDir);
    }
  }
  for (const std::string& path : content) {
    if (Status removed = RemoveTree(path); !removed.ok()) {
      spdlog::warn("node {}: evicted pod {}: {}", options_.node_name, w.key, removed.message());
    }
  }
}

void NodeAgent::Evict(PodWorker& w, const std::string& message, bool node_pressure) {
  // eviction_manager.go evictPod: the event, then the pod killed with the immediate grace.
  spdlog::warn("node {}: evicting pod {}: {}", options_.node_name, w.key, message);
  recorder_.Event(PodReference(w.pod), client::kEventTypeWarning, kEvictedReason, message);
  w.stop = PodWorker::KubeletStop{kEvictedReason, message, node_pressure, kEvictionGraceSeconds};
  w.storage_due.reset();
  w.needs_poll = true;
}

void NodeAgent::SyncVolumes(PodWorker& w) {
  if (!w.volumes) {
    PodVolumes::Options o;
    o.pod_dir = w.dir;
    // Without the sandbox a container sees the whole host anyway: no prefix rule.
    o.host_path_prefixes =
        options_.sandbox.enabled ? options_.sandbox.host_path_prefixes : std::vector<std::string>{"/"};
    if (options_.sandbox.enabled) {  // without it the container sees berth's data anyway
      o.protected_paths = options_.sandbox.hidden_paths;
      o.protected_paths.push_back(options_.data_dir);
    }
    o.node.pod_ip = o.node.host_ip = options_.address;
    for (const auto& [r, q] : options_.capacity) o.node.allocatable[r] = q;
    o.service_account_tokens = !options_.api_server.host.empty();
    StatusOr<std::optional<shim::SandboxUser>> owner = PodVolumeUser(w);
    if (!owner.ok()) {  // the namespace has no id block yet: no files with the wrong owner
      w.volumes_due = clock_.Now() + kNamespaceIdsRetry;
      return;
    }
    o.owner = *owner;
    w.volumes = std::make_unique<PodVolumes>(client_, clock_, std::move(o));
  }
  for (const std::string& failed : w.volumes->Sync(w.pod)) {
    recorder_.Event(PodReference(w.pod), client::kEventTypeWarning, kFailedMountReason, failed);
  }
  w.volumes_due = w.volumes->NextSync();
}

StatusOr<NamespaceIds> NodeAgent::NamespaceIdsFor(const std::string& ns) const {
  StatusOr<api::Object> got = client_.Get(kNamespaces, ns);
  if (!got.ok()) return UnavailableError("cannot read namespace \"" + ns + "\": " + got.status().message());
  return NamespaceIdsOf(*got);
}

IdentityRules NodeAgent::PodIdentityRules() const {
  return IdentityRules{options_.sandbox.allow_root, options_.sandbox.id_policy};
}

StatusOr<std::optional<shim::SandboxUser>> NodeAgent::PodVolumeUser(const PodWorker& w) const {
  // The pod's owner in the sandbox (pod_sandbox.h PodWorkDirOwner: runAsUser/runAsGroup or
  // the namespace block's base; fsGroup is applied by PodVolumes itself); without the sandbox the
  // files stay the agent's, and so they do for a pod whose ids are refused (its containers fail).
  if (!options_.sandbox.enabled) return std::optional<shim::SandboxUser>();
  const std::string ns = api::Namespace(w.pod);
  StatusOr<WorkDirOwner> owner = PodWorkDirOwner(w.pod, PodIdentityRules(), [&] { return NamespaceIdsFor(ns); });
  if (owner.status().code() == Code::kUnavailable) return owner.status();
  if (!owner.ok()) return std::optional<shim::SandboxUser>();
  return std::optional<shim::SandboxUser>(shim::SandboxUser{owner->uid, owner->gid, {}});
}

StatusOr<std::vector<shim::SandboxMount>> NodeAgent::ContainerMounts(PodWorker& w, const api::Object& container) {
  if (!w.volumes) SyncVolumes(w);
  if (!w.volumes) return Status(Code::kUnavailable, "the pod's namespace has no id block yet");
  if (!w.volumes->Ready()) return Status(Code::kUnavailable, "the pod's volumes are not set up yet");
  StatusOr<std::vector<shim::SandboxMount>> mounts = w.volumes->MountsFor(container);
  if (!mounts.ok() || options_.sandbox.enabled) return mounts;
  // No sandbox: the token stays where the container finds it today (its pod directory),
  // and only hostPath mounts at their own path need no mount namespace.
  const std::string token_dir = w.dir + "/" + kServiceAccountDir;
  std::erase_if(*mounts, [&](const shim::SandboxMount& m) { return m.source == token_dir; });
  for (const shim::SandboxMount& m : *mounts) {
    if (m.kind != shim::SandboxMount::Kind::kBind || m.source != m.target) {
      return InvalidError(kVolumesNeedSandboxMessage);
    }
  }
  return mounts;
}

void NodeAgent::ContainerEvent(const PodWorker& w, const std::string& name, const char* type, const std::string& reason,
                               const std::string& message) {
  // The kubelet's container reference: the pod, and the container as a field path.
  const api::Object pod = PodReference(w.pod);
  const auto& init = w.lifecycle.init_containers();
  const bool is_init = std::any_of(init.begin(), init.end(), [&](const ContainerRecord& c) { return c.name == name; });
  recorder_.Event(pod, (is_init ? "spec.initContainers{" : "spec.containers{") + name + "}", type, reason, message);
}

void NodeAgent::RecordBackOff(const PodWorker& w, const std::string& name) {
  for (const auto* records : {&w.lifecycle.init_containers(), &w.lifecycle.containers()}) {
    for (const ContainerRecord& c : *records) {
      if (c.name != name || !c.restart_at || *c.restart_at <= clock_.Now()) continue;
      ContainerEvent(w, name, client::kEventTypeWarning, kBackOffReason,
                     "Back-off restarting failed container " + name + " in pod " + api::Name(w.pod) + "_" +
                         api::Namespace(w.pod) + "(" + api::Uid(w.pod) + ")");
    }
  }
}

void NodeAgent::WriteStatus(PodWorker& w) {
  // A terminal phase is final (the kubelet's status manager never moves a pod out of it).
  w.status_current = true;
  if (IsTerminal(w.pod)) return;
  const api::Object empty = api::Object::object();
  const api::Object& previous = w.last_status ? *w.last_status : (w.pod.contains("status") ? w.pod["status"] : empty);
  api::Object status =
      BuildPodStatus(w.lifecycle, previous, PodAddresses{options_.address, options_.address}, clock_.Now());
  // The kubelet owns Initialized, Ready and ContainersReady; every other condition
  // (PodScheduled, set by the scheduler after binding; DisruptionTarget, set by a preemption
  // or an eviction) is kept as the API server has it (kubelet mergePodStatus), and the write
  // is conditional on the pod's resourceVersion, so a concurrent writer's condition is never
  // overwritten: a Conflict is retried on the next pass with the informer's newer copy.
  MergeForeignConditions(&status, w.pod.contains("status") ? w.pod["status"] : empty);
  // The final status of a pod the agent stopped, or of a deleted one once nothing of it runs.
  const bool shutdown_final = w.shut_down && w.running.empty();
  const bool stop_final = w.stop && w.running.empty();
  const bool deleted_final = api::BeingDeleted(w.pod) && w.running.empty() && w.lifecycle.Finished();
  if (shutdown_final) {
    MarkShutDown(&status, clock_.Now());
  } else if (stop_final) {
    MarkTerminatedByKubelet(&status, w.stop->reason, w.stop->message, w.stop->disruption, clock_.Now());
  }
  if (shutdown_final || stop_final || deleted_final) TerminatePodStatus(api::Field(w.pod, "spec"), &status);
  // Nothing written yet (a pod first seen, e.g. adopted after a restart): the API's status is
  // the one to compare with, so an unchanged pod costs no write at all.
  if (status == previous) {
    w.last_status = std::move(status);
    w.shutdown_reported = w.shutdown_reported || shutdown_final;
    return;
  }
  api::Object obj = w.pod;
  obj["status"] = status;
  StatusOr<api::Object> written = client_.UpdateStatus(kPods.Namespace(api::Namespace(w.pod)), obj);
  if (!written.ok()) {
    if (written.status().code() != Code::kNotFound && written.status().code() != Code::kConflict) {
      spdlog::warn("node {}: status of pod {}: {}", options_.node_name, w.key, written.status().ToString());
    }
    w.status_current = false;  // retried on the next pass
    return;
  }
  w.last_status = std::move(status);
  w.shutdown_reported = shutdown_final;
  w.written = std::move(written).value();
}

// ---------------------------------------------------------------------------
// Logs.

namespace {
shim::LogReadOptions LogReadOptionsOf(const client::PodLogOptions& options) {
  shim::LogReadOptions ro;
  ro.timestamps = options.timestamps;
  ro.tail_lines = options.tail_lines;
  ro.limit_bytes = options.limit_bytes;
  ro.since_time = options.since_time;
  return ro;
}
}  // namespace

// One run's log as a chunk: whether the run had ended is decided before the
// files are read, so a chunk that reaches their end has everything it wrote.
StatusOr<client::PodLogChunk> NodeAgent::ReadRunLog(const std::string& pod_dir, const std::string& uid,
                                                    const std::string& container, int run,
                                                    const client::PodLogOptions& options,
                                                    const client::PodLogCursor* from, size_t max_bytes) {
  const bool ended = std::filesystem::exists(shim::RunDir(pod_dir, container, run) + "/" + shim::kExitFile);
  const std::string path = shim::ContainerLogPath(pod_dir, container, run);
  shim::LogReadOptions ro = LogReadOptionsOf(options);
  StatusOr<shim::LogChunk> chunk =
      from == nullptr
          ? shim::ReadContainerLog(path, ro)
          : shim::ReadContainerLogFrom(path, {from->file_id, from->offset, from->line_start, from->pin}, ro, max_bytes);
  if (!chunk.ok()) return chunk.status();
  client::PodLogChunk out;
  out.text = std::move(chunk->text);
  out.next = {uid, container, run, chunk->end.file_id, chunk->end.offset, chunk->end.line_start, chunk->end.pin};
  out.at_end = chunk->at_end;
  out.run_ended = ended && chunk->at_end;
  return out;
}

StatusOr<client::PodLogChunk> NodeAgent::ReadPodLogChunk(const std::string& ns, const std::string& name,
                                                         const client::PodLogOptions& options,
                                                         const client::PodLogCursor* from, size_t max_bytes) {
  // Every one of these becomes a path component under the data directory.
  for (const std::string* part : {&ns, &name, &options.uid, from ? &from->uid : &options.uid}) {
    if (part->find('/') != std::string::npos || *part == "." || *part == ".." ||
        part->find('\0') != std::string::npos) {
      return NotFoundError("pods \"" + name + "\" not found");
    }
  }
  for (const std::string* c : {&options.container, from ? &from->container : &options.container}) {
    if (!c->empty() && !api::IsDNS1123Label(*c).empty()) {
      return BadRequestError("container " + *c + " is not valid for pod " + name);
    }
  }
  if (from != nullptr) {
    if (from->uid.empty() || from->container.empty() || from->run < 0) {
      return BadRequestError("invalid log cursor for pod " + name);
    }
    const std::string dir = PodDir(ns, name, from->uid);
    return ReadRunLog(dir, from->uid, from->container, from->run, options, from, max_bytes);
  }
  client::ObjectPtr pod = informer_ ? informer_->GetIndexer().Get(ns, name) : nullptr;
  if ((!pod || api::Uid(*pod) != options.uid) && !options.uid.empty() && !options.container.empty()) {
    // A pod object that is gone (or replaced): its files are still here.
    const std::string dir = PodDir(ns, name, options.uid);
    const int run = LatestRun(dir, options.container);
    if (run < 0) return NotFoundError("pods \"" + name + "\" not found");
    return ReadRunLog(dir, options.uid, options.container, run, options, nullptr, max_bytes);
  }
  if (!pod) return NotFoundError("pods \"" + name + "\" not found");
  BERTH_ASSIGN_OR_RETURN(const std::string container, ContainerOf(*pod, name, options.container));
  std::string dir = PodDir(ns, name, api::Uid(*pod));
  int run = LatestRun(dir, container);
  if (options.previous) {
    if (run < 1) {
      return BadRequestError("previous terminated container \"" + container + "\" in pod \"" + name + "\" not found");
    }
    --run;
  } else if (run < 0) {
    // No run yet: what the container's status shows, as the kubelet's validateContainerLogStatus
    // says it: "is terminated" (its pod stopped first), or its waiting reason (ContainerCreating
    // before it has a status).
    std::string reason;
    bool terminated = false;
    for (const char* field : {"containerStatuses", "initContainerStatuses"}) {
      const api::Object& statuses = api::NestedField(*pod, {"status", field});
      if (!statuses.is_array()) continue;
      for (const api::Object& cs : statuses) {
        if (api::StringAt(cs, "name") != container) continue;
        reason = api::NestedString(cs, {"state", "waiting", "reason"});
        terminated = api::NestedField(cs, {"state", "terminated"}).is_object();
      }
    }
    const std::string prefix = "container \"" + container + "\" in pod \"" + name + "\" is ";
    if (terminated) return BadRequestError(prefix + "terminated");
    return BadRequestError(prefix + "waiting to start: " + (reason.empty() ? "ContainerCreating" : reason));
  }
  return ReadRunLog(dir, api::Uid(*pod), container, run, options, nullptr, max_bytes);
}

StatusOr<client::ObjectPtr> NodeAgent::CachedPod(const std::string& ns, const std::string& name) const {
  client::ObjectPtr pod = informer_ ? informer_->GetIndexer().Get(ns, name) : nullptr;
  if (!pod) return NotFoundError("pods \"" + name + "\" not found");
  return pod;
}

StatusOr<std::unique_ptr<client::ExecProcess>> NodeAgent::StartExec(const std::string& ns, const std::string& name,
                                                                    const client::ExecOptions& options) {
  BERTH_ASSIGN_OR_RETURN(const client::ObjectPtr pod, CachedPod(ns, name));
  BERTH_ASSIGN_OR_RETURN(const std::string container, ContainerOf(*pod, name, options.container));
  // The kubelet's findContainer: only a running container can be exec'd into.
  return ExecInContainer(PodDir(ns, name, api::Uid(*pod)), container, options);
}

StatusOr<std::unique_ptr<client::ExecProcess>> NodeAgent::ExecInContainer(const std::string& dir,
                                                                          const std::string& container,
                                                                          const client::ExecOptions& options) {
  const std::string not_found = "container not found (\"" + container + "\")";
  const int run = LatestRun(dir, container);
  if (run < 0) return InternalError(not_found);
  const std::string run_dir = shim::RunDir(dir, container, run);
  if (std::filesystem::exists(run_dir + "/" + shim::kExitFile)) return InternalError(not_found);
  StatusOr<shim::LaunchRecord> launch = shim::ReadLaunchRecord(run_dir);
  if (!launch.ok()) return InternalError(not_found);
  if (options.validate_only) return std::unique_ptr<client::ExecProcess>();
  // The record's cgroups are joined only when they are this node's (the container could rewrite it).
  if (!cgroups_.Owns(launch->cgroup_dirs)) launch->cgroup_dirs.clear();
  return StartExecProcess(ExecLaunchFor(*launch, options.command, options.stdin, options.tty, run_dir));
}

StatusOr<int> NodeAgent::ConnectPort(const std::string& ns, const std::string& name, uint16_t port) {
  BERTH_RETURN_IF_ERROR(CachedPod(ns, name).status());
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return UnavailableError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // A loopback connect completes or is refused at once.
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    close(fd);
    // Go's net.OpError text, as the runtime's dial error reads.
    std::string text = std::strerror(err);
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return UnavailableError("dial tcp4 127.0.0.1:" + std::to_string(port) + ": connect: " + text);
  }
  return fd;
}

}  // namespace berth::agent
