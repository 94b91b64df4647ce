// berth: one binary for the control plane (server), node agents (agent) and the
// client commands (apply/get/describe/delete/logs/wait, explain, lint, version).
//
//   berth server --port N --data-dir DIR [--store=sqlite|memory] [--address A]
//                [--nodes K] [--node-capacity cpu=4,memory=8Gi,nvidia.com/gpu=2]
//                [--controllers=true|false] [--config KUEUE_CONFIG]
//                [--token-auth-file F] [--authorization-mode RBAC|AlwaysAllow] [--insecure-http]
//     Serves the Kubernetes API over TLS on A:N (127.0.0.1 by default) over the
//     SQLite store DIR/berth.db (or memory), with the CA and serving
//     certificate in DIR/pki (created at the first start), and writes
//     DIR/kubeconfig (the admin's: the CA and a client certificate in
//     system:masters, current context set) so `KUBECONFIG=DIR/kubeconfig
//     kubectl get cq` works with nothing else. Requests are authenticated
//     (client certificates, --token-auth-file tokens) and authorized by RBAC
//     (apiserver/authentication.h, authorization.h); --insecure-http serves
//     plain HTTP on loopback with neither, for development. It runs every controller (controllers/manager: Kueue
//     admission, Job/JobSet/TrainJob/PyTorchJob, pod placement) and K embedded
//     node agents (agent/node_agent.h; K=1 by default, named node-0..K-1, each
//     with the declared capacity or, when none is declared, this machine's),
//     On SIGTERM or SIGINT it stops serving and exits, and the pods keep
//     running under their supervisors (`berth shim`, agent/shim/shim.h): the
//     next `berth server` on the same data directory adopts them, so a restart
//     or an upgrade of berth never touches a running job. With
//     --shutdown-grace-period S the embedded nodes shut down gracefully
//     first: every pod gets SIGTERM and up to S seconds (its own grace period
//     if shorter), then is reported Failed as the kubelet's graceful node
//     shutdown reports it.
//     The controllers and agents use the in-process client (apiserver/
//     in_process_client.h), the same client::Client as over HTTP.
//     GET /metrics serves the API server's, Kueue's and the scheduler's
//     Prometheus metrics (docs/metrics.md).
//
//     --config reads a Kueue Configuration (config.kueue.x-k8s.io/v1beta2 or
//     v1beta1; controllers/kueue/configuration.h): waitForPodsReady,
//     integrations.frameworks, manageJobsWithoutQueueName; a malformed or
//     unknown field stops the server before it listens.
//
//     --node-monitor-grace-period S (40 by default, as kube-controller-manager):
//     a node whose agent has not renewed its Lease for S seconds becomes
//     NotReady and its pods are failed (controllers/nodelifecycle); tests of
//     lost nodes shorten it (keep it above the agents' 10 s renewal).
//
//     --terminated-pod-gc-threshold N (12500 by default, as kube-controller-manager):
//     beyond N terminal pods (Succeeded or Failed), the oldest are deleted
//     every 20 s (controllers/podgc); 0 = never.
//
//     --event-ttl D (Go duration, 1h by default, as kube-apiserver's
//     --event-ttl): Events are removed D after their last write (store/store.h,
//     "Expiry"); watchers see DELETED.
//
//   berth agent (--server URL | --kubeconfig F) --name NODE --data-dir DIR [--capacity ...] [--address A]
//               [--port P] [--shutdown-grace-period S]
//     A node agent joining a remote server; stops as the server's agents do. Its
//     kubeconfig carries the server's CA and a credential (`berth node add`);
//     --server alone suits only a --insecure-http server.
//     It serves its pods' logs, exec, attach and port-forward to the API server
//     over TLS on A:P (the kubelet's --port; 10250 by default, 0 = an ephemeral
//     port; apiserver/node_streaming_server.h): the API server's client
//     certificate only (CN kube-apiserver-kubelet-client, signed by the cluster
//     CA of the kubeconfig). Its serving certificate (DNS = NODE, IP = A when A
//     is an IP) is signed by a CA of the node's own, both in DIR/pki and kept
//     across starts; the Node carries that CA (annotation
//     berth.dev/kubelet-serving-ca) and the port (status.daemonEndpoints.
//     kubeletEndpoint.Port). Without a CA in the kubeconfig (--server alone)
//     no streaming server runs (a warning says so).
//
//   berth user add NAME [--group G]... --data-dir DIR [-o FILE]
//     A kubeconfig for user NAME in groups G (a client certificate signed by
//     the server's CA in DIR/pki), to bind with RoleBindings.
//
//   berth node add NAME --data-dir DIR [-o FILE]
//     The kubeconfig node NAME's agent joins with (system:node:NAME in
//     system:nodes: the node authorizer limits it to its own Node, Lease and
//     pods), and the join command.
//
//   Pod isolation (both commands): --sandbox=auto|on|off (auto: on when berth
//     runs as root and a probe can unshare namespaces and mount an overlay),
//     --allow-root-pods, --pod-id-policy MustRunAsRange|RunAsAny, --device-dir DIR
//     (agent/node_agent.h SandboxOptions; docs/security.md "Pod isolation");
//     `berth server --pod-uid-range FIRST:COUNT`: the ids the control plane
//     gives namespaces, in blocks (controllers/namespacesecurity).
//     What is not enforced is logged at start and shown on each Node as
//     condition berth.dev/PodIsolationDegraded.
//
//   berth shim RUN_DIR
//     The per-container supervisor the agents start (not for users).
//   berth shim --launcher PADDING
//     The launcher that forks those supervisors (agent/shim/launcher.h; not
//     for users).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <ifaddrs.h>
#include <iostream>
#include <memory>
#include <netinet/in.h>
#include <optional>
#include <prometheus/registry.h>
#include <sstream>
#include <string_view>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

#include "agent/node_agent.h"
#include "agent/shim/sandbox.h"
#include "agent/shim/shim.h"
#include "agent/shim/supervisor_image.h"
#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/metadata_validation.h"
#include "api/pod_validation.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "api/yaml_codec.h"
#include "apiserver/api_server.h"
#include "apiserver/in_process_client.h"
#include "apiserver/node_streaming_server.h"
#include "apiserver/request_metrics.h"
#include "apiserver/status_response.h"
#include "authn/service_account_token.h"
#include "authn/token_file.h"
#include "authn/user_info.h"
#include "cli/commands.h"
#include "cli/diagnostics/explain.h"
#include "cli/diagnostics/explain_command.h"
#include "cli/diagnostics/lint_command.h"
#include "client/http_client.h"
#include "client/kubeconfig.h"
#include "controllers/kueue/configuration.h"
#include "controllers/kueue/visibility.h"
#include "controllers/manager/controller_manager.h"
#include "core/base64.h"
#include "core/clock.h"
#include "core/file.h"
#include "core/logging.h"
#include "core/rlimit.h"
#include "pki/certificates.h"
#include "scheduling/host_images.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace {

// The kubelet's container log flags, for the embedded agents and `berth agent`.
struct ContainerLogFlags {
  std::string max_size = "10Mi";                                          // --container-log-max-size
  int max_files = berth::agent::shim::kDefaultContainerLogMaxFiles;  // --container-log-max-files
};

void AddContainerLogFlags(CLI::App* app, ContainerLogFlags& flags) {
  app->add_option("--container-log-max-size", flags.max_size,
                  "size a container's log file reaches before it is rotated, as a quantity (kubelet "
                  "containerLogMaxSize; default 10Mi; negative = no rotation)");
  app->add_option("--container-log-max-files", flags.max_files,
                  "log files kept per container run, the current one included (kubelet containerLogMaxFiles; "
                  "default 5)")
      ->check(CLI::Range(berth::agent::shim::kMinContainerLogMaxFiles, 1 << 20));
}

// The rotation the flags ask for; nullopt (and the reason on stderr) when --container-log-max-size is not a
// whole number of bytes.
std::optional<berth::agent::shim::LogRotation> ContainerLogRotation(const ContainerLogFlags& flags) {
  auto size = berth::Quantity::Parse(flags.max_size);
  if (!size.ok()) {
    std::cerr << "error: invalid --container-log-max-size \"" << flags.max_size << "\": " << size.status().message()
              << "\n";
    return std::nullopt;
  }
  return berth::agent::shim::LogRotation{size->Value(), flags.max_files};
}

// --host-images, for the embedded agents and `berth agent` (scheduling/host_images.h).
void AddHostImagesFlag(CLI::App* app, std::optional<std::string>& flag) {
  app->add_option("--host-images", flag,
                  "images whose commands this node runs on its host, comma-separated; an entry ending in '*' "
                  "matches names starting with the rest (e.g. busybox,pytorch/pytorch:*). Pods naming another "
                  "image are not scheduled here (FailedScheduling). Default: any image");
}

// The declared images; nullopt in the result = any image; false (and the reason on stderr) when invalid.
bool HostImages(const std::optional<std::string>& flag, std::optional<std::vector<std::string>>* images) {
  if (!flag) return true;
  if (std::string error = berth::scheduling::ValidateHostImages(*flag); !error.empty()) {
    std::cerr << "error: invalid --host-images: " << error << "\n";
    return false;
  }
  *images = berth::scheduling::ParseHostImages(*flag);
  return true;
}

// --allowed-host-paths, for the embedded agents and `berth agent` (NodeAgentOptions::sandbox).
void AddAllowedHostPathsFlag(CLI::App* app, std::vector<std::string>& flag) {
  app->add_option("--allowed-host-paths", flag,
                  "host directories a pod's hostPath volume may name (the directory itself or below), "
                  "comma-separated absolute paths; default: none (PodSecurity's allowedHostPaths)")
      ->delimiter(',');
}

// The prefixes in lexical normal form; false (and the reason on stderr) for a relative path or one with "..".
bool AllowedHostPaths(const std::vector<std::string>& flag, std::vector<std::string>* prefixes) {
  for (const std::string& p : flag) {
    const std::filesystem::path path(p);
    const bool dotdot = std::any_of(path.begin(), path.end(), [](const auto& c) { return c == ".."; });
    if (!path.is_absolute() || dotdot) {
      std::cerr << "error: invalid --allowed-host-paths \"" << p << "\": must be an absolute path without \"..\"\n";
      return false;
    }
    std::string normal = path.lexically_normal().string();
    while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
    prefixes->push_back(normal);
  }
  return true;
}

// The kubelet's --pod-max-pids, for the embedded agents and `berth agent`.
void AddPodMaxPidsFlag(CLI::App* app, int64_t& pod_max_pids) {
  app->add_option("--pod-max-pids", pod_max_pids,
                  "pids.max of each pod's cgroup (kubelet --pod-max-pids; default 4096; -1 = unlimited)")
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 22));
}

void AddEvictionHardFlag(CLI::App* app, std::string& eviction_hard) {
  app->add_option("--eviction-hard", eviction_hard,
                  "hard eviction threshold of the data directory's filesystem (kubelet --eviction-hard; "
                  "nodefs.available<PERCENT% or nodefs.available<QUANTITY; \"none\" disables it; the last "
                  "one given wins)")
      ->capture_default_str()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// Pod isolation flags (agent/node_agent.h SandboxOptions), for the embedded agents and `berth agent`.
struct SandboxFlags {
  std::string mode = "auto";        // --sandbox: auto | on | off
  bool allow_root = false;          // --allow-root-pods
  std::string id_policy = "MustRunAsRange";  // --pod-id-policy: MustRunAsRange | RunAsAny
  std::string device_dir = "/dev";  // --device-dir
};

void AddSandboxFlags(CLI::App* app, SandboxFlags& flags) {
  app->add_option("--sandbox", flags.mode,
                  "pod isolation (own PID and mount namespaces, unprivileged users, only assigned GPUs): auto "
                  "(default: on when berth runs as root and the host can), on (refuse to start without it), off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app->add_flag("--allow-root-pods", flags.allow_root, "let pods run as uid 0 (runAsUser: 0) in their sandbox");
  app->add_option("--pod-id-policy", flags.id_policy,
                  "which uids/gids pods may name: MustRunAsRange (default: their namespace's block, the "
                  "openshift.io/sa.scc.uid-range annotation) or RunAsAny (any; single-tenant hosts)")
      ->check(CLI::IsMember({"MustRunAsRange", "RunAsAny"}));
  app->add_option("--device-dir", flags.device_dir, "directory of the GPUs' device nodes (nvidia<i>; default /dev)");
}

// Containers' supervisors are started from the supervisor program this binary
// embeds (agent/shim/supervisor_image.h); where it cannot be installed, from
// this binary itself (`/proc/self/exe shim`), which works the same at a higher
// cost per container start.
void UseSupervisorProgram(berth::agent::SupervisorOptions& options, spdlog::logger& log) {
  auto command = berth::agent::shim::InstallSupervisorImage(berth::agent::shim::EmbeddedSupervisorImage());
  if (command.ok()) {
    options.command = *command;
  } else {
    log.warn("container supervisors run from this binary: {}", command.status().message());
  }
}

// The sandbox settings the flags ask for, into `options`, probing the host once
// in `data_dir` (created); false with the reason on stderr when a flag is
// malformed or --sandbox=on cannot be honoured.
bool SandboxSettings(const SandboxFlags& flags, const std::string& data_dir, spdlog::logger& log,
                     berth::agent::SandboxOptions& options) {
  options.allow_root = flags.allow_root;
  options.device_dir = flags.device_dir;
  options.id_policy =
      flags.id_policy == "RunAsAny" ? berth::agent::PodIdPolicy::kRunAsAny : berth::agent::PodIdPolicy::kMustRunAsRange;
  if (flags.mode == "off") {
    options.degraded_reason = "--sandbox=off";
    return true;
  }
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  berth::Status probe = berth::agent::shim::ProbeSandbox(data_dir);
  if (probe.ok()) {
    options.enabled = true;
    log.info("pods are sandboxed: own PID and mount namespaces, ids {}{}", flags.id_policy,
             options.allow_root ? ", uid 0 allowed" : "");
    return true;
  }
  if (flags.mode == "on") {
    std::cerr << "error: --sandbox=on, but pods cannot be sandboxed here: " << probe.message() << "\n";
    return false;
  }
  options.degraded_reason = probe.message();
  return true;
}

// The node agent's own flags, the same for the embedded agents of `berth server`
// and for `berth agent`.
struct NodeFlags {
  ContainerLogFlags container_log;
  std::optional<std::string> host_images;
  std::vector<std::string> allowed_host_paths;
  int64_t pod_max_pids = berth::agent::SandboxOptions{}.pod_pids_limit;  // --pod-max-pids
  SandboxFlags sandbox;
  std::string eviction_hard = berth::agent::kDefaultEvictionHard;  // --eviction-hard
  bool shim_launcher = berth::agent::SupervisorOptions{}.launcher;   // --shim-launcher
};

void AddNodeFlags(CLI::App* app, NodeFlags& flags) {
  AddContainerLogFlags(app, flags.container_log);
  AddHostImagesFlag(app, flags.host_images);
  AddAllowedHostPathsFlag(app, flags.allowed_host_paths);
  AddPodMaxPidsFlag(app, flags.pod_max_pids);
  AddSandboxFlags(app, flags.sandbox);
  AddEvictionHardFlag(app, flags.eviction_hard);
  app->add_option("--shim-launcher", flags.shim_launcher,
                  "fork each container's supervisor from one long-lived launcher (true, the default: "
                  "agent/shim/launcher.h) or exec `berth shim` for every container start (false)");
}

// The options every agent of the node flags gets (the sandbox not probed yet:
// SandboxSettings); nullopt with the reason on stderr when a flag is invalid.
std::optional<berth::agent::NodeAgentOptions> NodeOptions(const NodeFlags& flags) {
  berth::agent::NodeAgentOptions options;
  auto container_log = ContainerLogRotation(flags.container_log);
  if (!container_log) return std::nullopt;
  options.container_log = *container_log;
  if (!HostImages(flags.host_images, &options.host_images)) return std::nullopt;
  if (!AllowedHostPaths(flags.allowed_host_paths, &options.sandbox.host_path_prefixes)) return std::nullopt;
  options.sandbox.pod_pids_limit = flags.pod_max_pids;
  auto eviction_hard = berth::agent::ParseEvictionHard(flags.eviction_hard);
  if (!eviction_hard.ok()) {
    std::cerr << "error: " << eviction_hard.status().message() << "\n";
    return std::nullopt;
  }
  options.eviction_hard = *eviction_hard;
  options.supervisor.launcher = flags.shim_launcher;
  return options;
}

struct ServerFlags {
  int port = 6443;
  std::string address = "127.0.0.1";
  std::string data_dir;
  std::string store = "sqlite";
  int threads = 4;
  bool controllers = true;
  int nodes = 1;
  std::string node_capacity;  // "" = this machine's
  int node_monitor_grace_period = 40;  // seconds without a Lease renewal before a node is NotReady
  int64_t terminated_pod_gc_threshold = berth::controllers::podgc::kDefaultTerminatedPodThreshold;
  int start_estimate_period = 5;        // seconds between estimated start time passes; 0 = off
  std::string config;         // Kueue Configuration file; "" = none
  int shutdown_grace_period = 0;  // seconds; 0 = pods keep running after the server stops
  std::string event_ttl = "1h";   // Go duration; Events are removed this long after their last write
  NodeFlags node;
  std::string token_auth_file;              // kube-apiserver's --token-auth-file; "" = none
  std::string authorization_mode = "RBAC";  // RBAC | AlwaysAllow
  bool insecure_http = false;               // plain HTTP, no authentication (loopback only)
  std::string service_account_issuer = berth::authn::kDefaultServiceAccountIssuer;
  std::vector<std::string> api_audiences;   // "" = the issuer
  std::string pod_uid_range;                // --pod-uid-range FIRST:COUNT; "" = the controller's default
};

// `berth server --pod-uid-range FIRST:COUNT` into `options`; false with the reason on
// stderr when malformed (the range must hold one block and stay within the API's ids).
bool PodUidRange(const std::string& text, berth::controllers::namespacesecurity::NamespaceSecurityOptions& options) {
  if (text.empty()) return true;
  long long first = 0, count = 0;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lld:%lld%c", &first, &count, &extra) != 2 || first < 1 ||
      count < options.block_size || first + count - 1 > berth::api::kMaxPodId) {
    std::cerr << "error: --pod-uid-range \"" << text
              << "\": want FIRST:COUNT with 1 <= FIRST, COUNT >= " << options.block_size
              << " and FIRST+COUNT-1 <= " << berth::api::kMaxPodId << "\n";
    return false;
  }
  options.first = first;
  options.count = count;
  return true;
}

struct AgentFlags {
  std::string kubeconfig;
  std::string server;  // URL of the server; overrides the kubeconfig's
  std::string name;
  std::string data_dir;
  std::string capacity;  // "" = this machine's
  std::string address = "127.0.0.1";
  int port = berth::apiserver::kKubeletPort;  // the streaming server's; 0 = an ephemeral port
  int shutdown_grace_period = 0;  // seconds; 0 = pods keep running after the agent stops
  NodeFlags node;
  std::string ignored_uid_range;  // --pod-uid-range, accepted from before the server allocated ids
};

// Stops node agents as the stop signal asks: with a shutdown grace period, a
// graceful node shutdown of each (in parallel); without one, the agents detach
// and every container keeps running under its supervisor for the next start.
void StopAgents(std::vector<berth::agent::NodeAgent*> agents, int shutdown_grace_period) {
  if (shutdown_grace_period <= 0) {
    for (auto* agent : agents) agent->Stop(berth::agent::StopMode::kLeaveRunning);
    return;
  }
  std::vector<std::thread> threads;
  for (auto* agent : agents) {
    threads.emplace_back([agent, shutdown_grace_period] { agent->Shutdown(std::chrono::seconds(shutdown_grace_period)); });
  }
  for (auto& t : threads) t.join();
}

// Raises the soft file-descriptor limit to the hard one (core/rlimit.h), as a
// Go binary's runtime does at start; a failure is logged and the process goes on.
void RaiseFileDescriptorLimit(spdlog::logger& log) {
  auto limit = berth::RaiseFileDescriptorLimit();
  if (!limit.ok()) {
    log.warn("cannot raise the file descriptor limit: {}", limit.status().ToString());
  } else if (limit->before != limit->after) {
    log.info("file descriptor limit raised from {} to {}", limit->before, limit->after);
  }
}

// Blocks SIGTERM and SIGINT in every thread started afterwards; returns the set
// for sigwait.
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return stop_signals;
}

// The capacity declared by `flag` (its value `text`), or this machine's when
// `text` is empty; nothing, after printing the error, when it does not parse.
std::optional<berth::agent::ResourceList> Capacity(std::string_view flag, const std::string& text) {
  if (text.empty()) return berth::agent::DetectMachineCapacity();
  auto capacity = berth::agent::ParseResourceList(text);
  if (!capacity.ok()) {
    std::cerr << "error: " << flag << ": " << capacity.status().message() << "\n";
    return std::nullopt;
  }
  return std::move(capacity).value();
}

// Kueue's visibility API served by the API server from `source`'s queues
// (kube-aggregator's role for Kueue's visibility server, in process).
berth::apiserver::ApiService KueueVisibilityService(
    std::shared_ptr<std::atomic<berth::controllers::kueue::KueueController*>> source) {
  namespace kueue = berth::controllers::kueue;
  using berth::apiserver::HandlerResult;
  auto handler = [source](const berth::apiserver::HttpRequest&, const berth::apiserver::RequestInfo& info,
                          const berth::authn::UserInfo&) -> HandlerResult {
    kueue::KueueController* controller = source->load();
    if (controller == nullptr) {
      return berth::apiserver::StatusResponse(
          berth::UnavailableError("the Kueue controller is not running: the visibility API is unavailable"));
    }
    kueue::VisibilityRequest request{info.verb,     info.api_version, info.namespace_, info.resource,
                                     info.name,     info.subresource, std::nullopt,    std::nullopt};
    if (info.query.Has("limit")) request.limit = info.query.Get("limit");
    if (info.query.Has("offset")) request.offset = info.query.Get("offset");
    auto summary = kueue::ServeVisibility(*controller, request);
    if (!summary.ok()) {
      berth::apiserver::StatusDetails details;
      if (summary.status().code() == berth::Code::kNotFound && !info.name.empty()) {
        details = {.name = info.name,
                   .group = kueue::kVisibilityGroup,
                   .kind = info.resource.substr(0, info.resource.size() - 1)};
      }
      return berth::apiserver::StatusResponse(summary.status(), details);
    }
    berth::apiserver::HttpResponse res;
    res.body = berth::apiserver::DumpJson(*summary);
    return res;
  };
  return {kueue::VisibilityApiService(), std::move(handler)};
}

// A kubeconfig with one cluster, one user and its context selected (the
// server's admin.conf, as kubeadm's, names them "berth"). Over TLS it carries
// the CA and the user's client certificate; over plain HTTP (--insecure-http)
// no credential.
std::string Kubeconfig(const std::string& server, const berth::pki::CertificateAndKey* admin, const std::string& ca_pem,
                       const std::string& user_name = "berth") {
  berth::api::Object cluster = {{"server", server}};
  berth::api::Object user = berth::api::Object::object();
  if (admin != nullptr) {
    cluster["certificate-authority-data"] = berth::Base64Encode(ca_pem);
    user["client-certificate-data"] = berth::Base64Encode(admin->certificate_pem);
    user["client-key-data"] = berth::Base64Encode(admin->private_key_pem);
  }
  const berth::api::Object config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", {{{"name", "berth"}, {"cluster", std::move(cluster)}}}},
      {"users", {{{"name", user_name}, {"user", std::move(user)}}}},
      {"contexts",
       {{{"name", user_name}, {"context", {{"cluster", "berth"}, {"user", user_name}, {"namespace", "default"}}}}}},
      {"current-context", user_name},
      {"preferences", berth::api::Object::object()}};
  return berth::api::EmitYaml(config);
}

bool IsLoopback(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

// The names a client may use for this server: localhost, the host name, the
// loopback addresses and the listening address (every interface's address
// when it listens on all of them).
void ServerNames(const std::string& address, std::vector<std::string>* dns, std::vector<std::string>* ips) {
  *dns = {"localhost"};
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') dns->push_back(host);
  *ips = {"127.0.0.1", "::1"};
  auto add_ip = [&](const std::string& ip) {
    if (std::find(ips->begin(), ips->end(), ip) == ips->end()) ips->push_back(ip);
  };
  if (address != "0.0.0.0" && address != "::") {
    add_ip(address);
    return;
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const int family = a->ifa_addr->sa_family;
    const void* raw =
        family == AF_INET    ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr)
        : family == AF_INET6 ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ifa_addr)->sin6_addr)
                             : nullptr;
    if (raw != nullptr && inet_ntop(family, raw, text, sizeof(text)) != nullptr && std::strchr(text, '%') == nullptr) {
      add_ip(text);
    }
  }
  freeifaddrs(list);
}

// The server's PKI (DATA/pki: the CA and the serving certificate, kept across
// starts), a new admin client certificate (CN kubernetes-admin, O
// system:masters, as kubeadm's admin.conf; a year, as kubeadm's) and a new
// client certificate towards node agents (CN kube-apiserver-kubelet-client,
// kubeadm's apiserver-kubelet-client, without its groups: it authorizes
// nothing at the API, and node streaming servers accept only it), kept in
// memory only.
struct ServerCredentials {
  berth::pki::ServerPki pki;
  berth::pki::CertificateAndKey admin;
  berth::pki::CertificateAndKey kubelet_client;
};

berth::StatusOr<ServerCredentials> LoadServerCredentials(const std::string& data_dir, const std::string& address,
                                                         berth::Time now) {
  std::vector<std::string> dns, ips;
  ServerNames(address, &dns, &ips);
  ServerCredentials c;
  BERTH_ASSIGN_OR_RETURN(
      c.pki, berth::pki::LoadOrCreateServerPki((std::filesystem::path(data_dir) / "pki").string(), dns, ips, now));
  berth::pki::CertificateRequest admin;
  admin.common_name = "kubernetes-admin";
  admin.organizations = {berth::authn::kSystemPrivilegedGroup};
  admin.client_auth = true;
  BERTH_ASSIGN_OR_RETURN(c.admin, berth::pki::IssueCertificate(c.pki.ca, admin, now));
  berth::pki::CertificateRequest kubelet_client;
  kubelet_client.common_name = berth::pki::kKubeletClientCommonName;
  kubelet_client.client_auth = true;
  BERTH_ASSIGN_OR_RETURN(c.kubelet_client, berth::pki::IssueCertificate(c.pki.ca, kubelet_client, now));
  return c;
}

struct UserFlags {
  std::string name;
  std::vector<std::string> groups;
  std::string data_dir;
  std::string output;  // "" = stdout
};

// `berth user add`: a kubeconfig for a user in groups, with a client
// certificate the server's CA signs (CN = the user, O = the groups; a year, as
// kubeadm's `kubeconfig user`). The server URL and CA come from the server's
// own DATA/kubeconfig; the CA key from DATA/pki, so it runs where the server's
// data is, as its owner.
//
// `berth node add` is the same for a node's agent: the user
// system:node:NAME in system:nodes, which the node authorizer and
// NodeRestriction limit to that node (apiserver/node_authorization.h); it
// prints the command that joins the node.
int RunUserAdd(const UserFlags& flags, bool node) {
  auto fail = [](const std::string& message) {
    std::cerr << "error: " << message << "\n";
    return 1;
  };
  if (flags.name.empty() || flags.name.rfind("system:", 0) == 0) {
    return fail("the name must be set and must not start with \"system:\" (reserved for Kubernetes' own users)");
  }
  if (flags.name == berth::pki::kKubeletClientCommonName) {
    return fail(std::string("the name ") + berth::pki::kKubeletClientCommonName +
                " is the API server's identity towards node agents, which serve it any pod's exec and logs");
  }
  if (node) {
    for (const std::string& msg : berth::api::IsDNS1123Subdomain(flags.name)) return fail("node name: " + msg);
  }
  const std::filesystem::path dir(flags.data_dir);
  auto ca_cert = berth::ReadFileBounded((dir / "pki" / "ca.crt").string(), 1 << 20);
  auto ca_key = berth::ReadFileBounded((dir / "pki" / "ca.key").string(), 1 << 20);
  if (!ca_cert.ok()) return fail(ca_cert.status().message());
  if (!ca_key.ok()) return fail(ca_key.status().message());
  auto admin = berth::client::LoadKubeconfig({.path = (dir / "kubeconfig").string()});
  if (!admin.ok()) return fail(admin.status().message());
  berth::pki::CertificateRequest request;
  request.common_name = node ? std::string(berth::authn::kNodeUserPrefix) + flags.name : flags.name;
  request.organizations = node ? std::vector<std::string>{berth::authn::kNodesGroup} : flags.groups;
  request.client_auth = true;
  auto cert = berth::pki::IssueCertificate({*ca_cert, *ca_key}, request, berth::RealClock::Get().Now());
  if (!cert.ok()) return fail(cert.status().message());
  const std::string text = Kubeconfig(admin->server, &*cert, *ca_cert, request.common_name);
  if (flags.output.empty()) {
    std::cout << text;
  } else if (berth::Status w = berth::WriteFileAtomically(flags.output, text, 0600); !w.ok()) {
    return fail(w.message());
  }
  if (node) {
    std::cerr << "join with: berth agent --kubeconfig " << (flags.output.empty() ? "<this kubeconfig>" : flags.output)
              << " --name " << flags.name << " --data-dir <a directory of the node> [--address <its address>]\n";
  }
  return 0;
}

int RunServer(const ServerFlags& flags) {
  auto log = berth::Logger("server");
  RaiseFileDescriptorLimit(*log);
  // Block the stop signals before any thread starts, so every thread inherits
  // the mask and sigwait below is the only receiver.
  sigset_t stop_signals = BlockStopSignals();
  auto capacity = Capacity("--node-capacity", flags.node_capacity);
  if (!capacity) return 1;
  auto event_ttl = berth::controllers::kueue::ParseGoDuration(flags.event_ttl);
  if (!event_ttl.ok() || *event_ttl <= berth::Duration::zero()) {
    std::cerr << "error: --event-ttl: "
              << (event_ttl.ok() ? "must be positive, e.g. 1h or 30m" : event_ttl.status().message()) << "\n";
    return 1;
  }
  std::optional<berth::agent::NodeAgentOptions> node = NodeOptions(flags.node);
  if (!node) return 1;

  // Without --config: Kueue v0.19's defaults, every implemented framework managed.
  auto kueue_config = berth::controllers::kueue::KueueConfiguration::ServerDefault();
  if (!flags.config.empty()) {
    std::ifstream in(flags.config);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      std::cerr << "error: cannot read --config " << flags.config << "\n";
      return 1;
    }
    auto parsed = berth::controllers::kueue::ParseKueueConfiguration(text.str(), flags.config);
    if (!parsed.ok()) {
      std::cerr << "error: " << parsed.status().message() << "\n";
      return 1;
    }
    kueue_config = std::move(parsed).value();
    for (const std::string& note : kueue_config.ignored) log->warn("{}: ignored: {}", flags.config, note);
    if (const std::string warning = kueue_config.UnmanagedFrameworksWarning(); !warning.empty()) {
      log->warn("{}: {}", flags.config, warning);
    }
  }
  {
    const auto& w = kueue_config.wait_for_pods_ready;
    std::vector<std::string> strategies;
    for (auto st : kueue_config.fair_sharing.preemption_strategies) {
      strategies.push_back(st == berth::admission::FairSharingStrategy::kLessThanInitialShare
                               ? "LessThanInitialShare"
                               : "LessThanOrEqualToFinalShare");
    }
    const auto& afs = kueue_config.admission_fair_sharing;
    auto seconds = [](berth::Duration d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); };
    log->info(
        "{}: waitForPodsReady {} (timeout {}s, blockAdmission {}), frameworks [{}], fairSharing {}, "
        "admissionFairSharing {}",
        flags.config.empty() ? "Kueue defaults (no --config)" : flags.config + " " + kueue_config.api_version,
        w.enabled ? "on" : "off", seconds(w.timeout), w.block_admission, fmt::join(kueue_config.frameworks, ", "),
        kueue_config.fair_sharing.enable ? fmt::format("on [{}]", fmt::join(strategies, ", ")) : "off",
        afs.enabled ? fmt::format("on (usageHalfLifeTime {}s, usageSamplingInterval {}s)",
                                  seconds(afs.usage_half_life_time), seconds(afs.usage_sampling_interval))
                    : "off");
  }

  std::error_code ec;
  const bool fresh_dir = !std::filesystem::exists(flags.data_dir, ec);
  std::filesystem::create_directories(flags.data_dir, ec);
  if (ec) {
    std::cerr << "error: cannot create data directory " << flags.data_dir << ": " << ec.message() << "\n";
    return 1;
  }
  // Pods see the whole data directory (berth.db, pki/, every node's pods) as empty.
  berth::agent::SandboxOptions& sandbox = node->sandbox;
  if (!SandboxSettings(flags.node.sandbox, (std::filesystem::path(flags.data_dir) / "nodes").string(), *log, sandbox)) {
    return 1;
  }
  UseSupervisorProgram(node->supervisor, *log);
  if (sandbox.enabled) {
    std::filesystem::permissions(flags.data_dir, std::filesystem::perms::owner_all, ec);
    sandbox.hidden_paths.push_back(std::filesystem::canonical(flags.data_dir, ec).string());
  }
  // The namespaces' id blocks (controllers/namespacesecurity), seeded once from the
  // former per-server table so its namespaces keep their uid and files.
  berth::controllers::namespacesecurity::NamespaceSecurityOptions namespace_security;
  if (!PodUidRange(flags.pod_uid_range, namespace_security)) return 1;
  {
    auto legacy = berth::controllers::namespacesecurity::ReadLegacyPodUsers(
        (std::filesystem::path(flags.data_dir) / berth::controllers::namespacesecurity::kLegacyPodUsersFile).string());
    if (!legacy.ok()) {
      std::cerr << "error: " << legacy.status().message() << "\n";
      return 1;
    }
    namespace_security.legacy_uids = std::move(legacy).value();
  }
  // One server per data directory: a second one would corrupt the first one's
  // view of the store. The lock is released when the process exits.
  const std::string lock_path = (std::filesystem::path(flags.data_dir) / "berth.lock").string();
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    std::cerr << "error: data directory " << flags.data_dir
              << " is in use by another berth server (lock " << lock_path << ")\n";
    return 1;
  }
  // A server that fails to start leaves no half-made data directory behind.
  auto fail = [&](const std::string& message) {
    std::cerr << "error: " << message << "\n";
    if (fresh_dir) std::filesystem::remove_all(flags.data_dir, ec);
    return 1;
  };
  berth::Clock& clock = berth::RealClock::Get();
  berth::store::StoreOptions store_options;
  store_options.ttl[berth::store::kEventsResource] = *event_ttl;
  std::unique_ptr<berth::store::Store> store;
  if (flags.store == "memory") {
    store = std::make_unique<berth::store::MemoryStore>(clock, store_options);
  } else if (flags.store == "sqlite") {
    berth::store::SqliteOptions sqlite_options;
    sqlite_options.store = store_options;
    auto opened = berth::store::SqliteStore::Open(
        (std::filesystem::path(flags.data_dir) / "berth.db").string(), clock, sqlite_options);
    if (!opened.ok()) return fail(opened.status().message());
    store = std::move(opened).value();
  } else {
    std::cerr << "error: --store must be sqlite or memory\n";
    return 1;
  }
  const berth::api::Registry& registry = berth::api::Registry::Default();
  // Kueue's job webhook follows --config (integrations.frameworks, manageJobsWithoutQueueName).
  berth::api::StrategyRegistry strategies;
  berth::api::InstallDefaultStrategies(&strategies, kueue_config.JobWebhookOptions());
  berth::api::AdmissionPipeline pipeline(registry, strategies, berth::api::Convert);
  berth::apiserver::ApiServerOptions options;
  options.http.address = flags.address;
  options.http.port = static_cast<uint16_t>(flags.port);
  options.http.threads = flags.threads;
  std::optional<ServerCredentials> credentials;
  if (flags.insecure_http) {
    if (!IsLoopback(flags.address)) return fail("--insecure-http serves only a loopback --address");
    if (!flags.token_auth_file.empty()) return fail("--token-auth-file needs TLS: drop --insecure-http");
    log->warn("--insecure-http: plain HTTP without authentication; every local process is cluster-admin");
  } else {
    auto loaded = LoadServerCredentials(flags.data_dir, flags.address, clock.Now());
    if (!loaded.ok()) return fail(loaded.status().message());
    credentials = std::move(loaded).value();
    options.http.tls =
        berth::apiserver::HttpTlsOptions{credentials->pki.serving.certificate_pem,
                                         credentials->pki.serving.private_key_pem, credentials->pki.ca.certificate_pem};
    options.authentication.enabled = true;
    if (!flags.token_auth_file.empty()) {
      auto tokens = berth::authn::TokenFile::Load(flags.token_auth_file);
      if (!tokens.ok()) return fail(tokens.status().message());
      options.authentication.token_file = std::make_shared<const berth::authn::TokenFile>(std::move(tokens).value());
    }
    options.rbac_authorization = flags.authorization_mode == "RBAC";
    options.service_account_tokens.issuer = flags.service_account_issuer;
    options.service_account_tokens.api_audiences = flags.api_audiences;
    options.service_account_tokens.signing_key_pem = credentials->pki.service_account.private_key_pem;
    options.service_account_tokens.public_key_pem = credentials->pki.service_account.public_key_pem;
    options.node_proxy.client_certificate_pem = credentials->kubelet_client.certificate_pem;
    options.node_proxy.client_key_pem = credentials->kubelet_client.private_key_pem;
  }
  // One Prometheus registry for the API server, Kueue and the scheduler,
  // served as GET /metrics (docs/metrics.md).
  auto metrics = std::make_shared<prometheus::Registry>();
  options.metrics_registry = metrics;
  // Kueue's visibility API (controllers/kueue/visibility.h), answered from the
  // Kueue controller once the controllers run; 503 before and without them.
  auto visibility_source = std::make_shared<std::atomic<berth::controllers::kueue::KueueController*>>(nullptr);
  options.api_services.push_back(KueueVisibilityService(visibility_source));
  berth::apiserver::ApiServer server(registry, pipeline, *store, clock, options);
  server.RegisterNonResourceHandler("/metrics", [metrics](const berth::apiserver::HttpRequest& req) {
    return berth::apiserver::HandlerResult(berth::apiserver::MetricsResponse(*metrics, req));
  });
  // `berth explain` over HTTP (cli/diagnostics/explain.h), e.g. `kubectl get --raw
  // /berth/v1/explain/namespaces/default/trainjobs/x`, answered through an in-process client.
  std::shared_ptr<berth::client::Client> explain_client = berth::apiserver::NewInProcessClient(server);
  server.RegisterNonResourceHandler(
      berth::cli::diagnostics::kExplainPathPrefix, [explain_client, &clock](const berth::apiserver::HttpRequest& req) {
        auto body = berth::cli::diagnostics::ServeExplain(*explain_client, req.method, req.target, clock);
        if (!body.ok()) return berth::apiserver::HandlerResult(berth::apiserver::StatusResponse(body.status()));
        berth::apiserver::HttpResponse res;
        res.content_type = body->content_type;
        res.body = std::move(body->body);
        return berth::apiserver::HandlerResult(std::move(res));
      });
  berth::Status started = server.Start();
  if (!started.ok()) {
    return fail(started.message() + (started.code() == berth::Code::kUnavailable
                                         ? " (another server on this port? choose one with --port, or 0 for any)"
                                         : ""));
  }
  const auto kubeconfig = std::filesystem::path(flags.data_dir) / "kubeconfig";
  const std::string url = std::string(credentials ? "https://" : "http://") +
                          (flags.address == "0.0.0.0" || flags.address == "::" ? "127.0.0.1" : flags.address) + ":" +
                          std::to_string(server.port());
  const std::string kubeconfig_text = credentials
                                          ? Kubeconfig(url, &credentials->admin, credentials->pki.ca.certificate_pem)
                                          : Kubeconfig(url, nullptr, "");
  if (berth::Status w = berth::WriteFileAtomically(kubeconfig.string(), kubeconfig_text, 0600); !w.ok()) {
    std::cerr << "error: " << w.message() << "\n";
    server.Stop();
    return 1;
  }
  log->info("serving the Kubernetes API on {} (store {}, data {}); KUBECONFIG={}", url, flags.store, flags.data_dir,
            kubeconfig.string());

  // The controllers and the embedded agents use the in-process client: the
  // same client::Client (and request/response code) as over HTTP, without the
  // socket. Nothing in them assumes in-process access (docs/architecture.md, cmd/berth).
  std::unique_ptr<berth::client::Client> client_ptr = berth::apiserver::NewInProcessClient(server);
  berth::client::Client& client = *client_ptr;
  std::unique_ptr<berth::controllers::ControllerManager> manager;
  if (flags.controllers) {
    berth::controllers::ControllerManagerOptions manager_options;
    manager_options.metrics_registry = metrics;
    manager_options.kueue_config = kueue_config;
    manager_options.node_lifecycle.grace_period = std::chrono::seconds(flags.node_monitor_grace_period);
    manager_options.terminated_pod_gc_threshold = flags.terminated_pod_gc_threshold;
    manager_options.estimate_period = std::chrono::seconds(flags.start_estimate_period);
    manager_options.namespace_security = namespace_security;
    manager = std::make_unique<berth::controllers::ControllerManager>(client, clock, std::move(manager_options));
    manager->Start();
    visibility_source->store(manager->kueue());
  }
  auto host_ports = std::make_shared<berth::agent::HostPorts>();
  std::vector<std::unique_ptr<berth::agent::NodeAgent>> agents;
  for (int i = 0; i < flags.nodes; ++i) {
    berth::agent::NodeAgentOptions options = *node;
    options.node_name = "node-" + std::to_string(i);
    options.capacity = capacity.value();
    options.data_dir = (std::filesystem::path(flags.data_dir) / "nodes" / options.node_name).string();
    options.host_ports = host_ports;
    // Pods reach the API server where this server listens (an unspecified
    // address through loopback), with the CA of its serving certificate.
    if (credentials) {
      options.api_server.host =
          flags.address == "0.0.0.0" || flags.address == "::" ? "127.0.0.1" : flags.address;
      options.api_server.port = server.port();
      options.api_server.ca_pem = credentials->pki.ca.certificate_pem;
    }
    auto agent = std::make_unique<berth::agent::NodeAgent>(client, clock, std::move(options));
    berth::Status s = agent->Start();
    if (!s.ok()) {
      std::cerr << "error: node agent " << agent->node_name() << ": " << s.ToString() << "\n";
      return 1;
    }
    server.RegisterPodLogSource(agent->node_name(), agent.get());
    server.RegisterContainerExecutor(agent->node_name(), agent.get());
    agents.push_back(std::move(agent));
  }
  log->info("{} controllers, {} embedded node(s)", flags.controllers ? "running" : "not running", agents.size());

  int sig = 0;
  sigwait(&stop_signals, &sig);
  log->info("received signal {}, shutting down{}", sig,
            flags.shutdown_grace_period > 0
                ? fmt::format(" (graceful node shutdown: pods get up to {}s)", flags.shutdown_grace_period)
                : std::string(" (pods keep running; a restarted server adopts them)"));
  // The controllers stop first: during a graceful node shutdown nothing may
  // replace the pods being stopped (the agents still write their statuses
  // through the API server, which stops last).
  visibility_source->store(nullptr);
  if (manager) manager->Stop();
  std::vector<berth::agent::NodeAgent*> to_stop;
  for (auto& agent : agents) to_stop.push_back(agent.get());
  StopAgents(to_stop, flags.shutdown_grace_period);
  for (auto& agent : agents) {
    server.UnregisterPodLogSource(agent->node_name());
    server.UnregisterContainerExecutor(agent->node_name());
  }
  agents.clear();
  server.Stop();
  store.reset();  // closes the database
  log->info("stopped");
  return 0;
}

// A started node streaming server and the PEM of the CA its serving certificate chains to.
struct NodeStreams {
  std::unique_ptr<berth::apiserver::NodeStreamingServer> server;
  std::string serving_ca_pem;
};

// `berth agent`'s streaming server (apiserver/node_streaming_server.h) on
// --address:--port: its CA and serving certificate in DATA/pki (kept across
// starts; the certificate names the node, and --address when it is an IP), and
// the cluster CA `cluster_ca_pem` as the judge of the API server's client
// certificate.
berth::StatusOr<NodeStreams> StartNodeStreamingServer(const AgentFlags& flags, const std::string& cluster_ca_pem) {
  std::error_code ec;
  std::filesystem::create_directories(flags.data_dir, ec);
  if (ec) return berth::InternalError("cannot create " + flags.data_dir + ": " + ec.message());
  std::vector<std::string> ips;
  in6_addr parsed{};
  if (inet_pton(AF_INET, flags.address.c_str(), &parsed) == 1 || inet_pton(AF_INET6, flags.address.c_str(), &parsed) == 1) {
    ips.push_back(flags.address);
  }
  BERTH_ASSIGN_OR_RETURN(berth::pki::ServingPki pki,
                         berth::pki::LoadOrCreateKubeletServingPki(
                             (std::filesystem::path(flags.data_dir) / "pki").string(), flags.name, std::move(ips),
                             berth::RealClock::Get().Now()));
  berth::apiserver::NodeStreamingServerOptions options;
  options.node_name = flags.name;
  options.address = flags.address;
  options.port = static_cast<uint16_t>(flags.port);
  options.tls = {pki.serving.certificate_pem, pki.serving.private_key_pem, cluster_ca_pem};
  NodeStreams streams{std::make_unique<berth::apiserver::NodeStreamingServer>(options, berth::RealClock::Get()),
                      std::move(pki.ca.certificate_pem)};
  berth::Status started = streams.server->Start();
  if (!started.ok()) return started.WithContext("--port " + std::to_string(flags.port));
  return streams;
}

int RunAgent(const AgentFlags& flags) {
  auto log = berth::Logger("agent");
  if (!flags.ignored_uid_range.empty()) {
    log->warn(
        "--pod-uid-range is ignored: namespaces get their ids from the server; this agent's "
        "pod-users.json is no longer read");
  }
  RaiseFileDescriptorLimit(*log);
  sigset_t stop_signals = BlockStopSignals();
  auto capacity = Capacity("--capacity", flags.capacity);
  if (!capacity) return 1;
  std::optional<berth::agent::NodeAgentOptions> node = NodeOptions(flags.node);
  if (!node) return 1;
  berth::StatusOr<berth::client::RestConfig> rest = berth::client::RestConfig{};
  if (flags.server.empty()) {
    rest = berth::client::LoadKubeconfig({.path = flags.kubeconfig});
  } else {
    // As kubectl --server: the URL alone, no credential and the system's CA
    // roots; only a --insecure-http server accepts such an agent.
    auto url = berth::client::ParseServerUrl(flags.server);
    if (url.ok()) {
      rest->server = flags.server;
      rest->url = url.value();
    } else {
      rest = url.status();
    }
  }
  if (!rest.ok()) {
    std::cerr << "error: " << rest.status().message() << "\n";
    return 1;
  }
  berth::client::HttpClient client(rest.value());
  if (!SandboxSettings(flags.node.sandbox, flags.data_dir, *log, node->sandbox)) return 1;
  UseSupervisorProgram(node->supervisor, *log);
  berth::agent::NodeAgentOptions options = *node;
  options.node_name = flags.name;
  options.capacity = capacity.value();
  options.data_dir = flags.data_dir;
  options.address = flags.address;
  // Pods reach the API server as this agent does.
  if (rest->url.scheme == "https") {
    options.api_server.host = rest->url.host;
    options.api_server.port = rest->url.port;
    options.api_server.ca_pem = rest->certificate_authority_pem;
  }
  // The node's streaming server listens before the agent registers its Node, which
  // publishes its port and CA; it serves the agent's pods once the agent has started.
  std::unique_ptr<berth::apiserver::NodeStreamingServer> streams;
  if (rest->certificate_authority_pem.empty()) {
    log->warn(
        "the kubeconfig has no certificate-authority-data (joined with --server alone): no streaming server is "
        "started, so kubectl logs, exec, attach, port-forward and cp cannot reach the pods of node {}",
        flags.name);
  } else {
    auto started = StartNodeStreamingServer(flags, rest->certificate_authority_pem);
    if (!started.ok()) {
      std::cerr << "error: " << started.status().ToString() << "\n";
      return 1;
    }
    streams = std::move(started->server);
    options.kubelet_port = streams->port();
    options.kubelet_serving_ca_pem = std::move(started->serving_ca_pem);
    log->info("node {} serves pod streams on {}:{}", flags.name, flags.address, streams->port());
  }
  berth::agent::NodeAgent agent(client, berth::RealClock::Get(), std::move(options));
  berth::Status s = agent.Start();
  if (!s.ok()) {
    std::cerr << "error: " << s.ToString() << "\n";
    return 1;
  }
  if (streams) {
    streams->Attach([&agent](const std::string& ns, const std::string& name) { return agent.CachedPod(ns, name); },
                    &agent, &agent);
  }
  log->info("node {} joined {}", flags.name, rest.value().server);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  log->info("received signal {}, stopping node {}", sig, flags.name);
  if (streams) streams->Stop();
  StopAgents({&agent}, flags.shutdown_grace_period);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The container supervisor (agent/shim/shim.h) runs before anything else is
  // set up: it is one small process per container.
  if (argc >= 2 && std::string_view(argv[1]) == "shim") return berth::agent::shim::ShimMain(argc, argv);
  CLI::App app{"berth: queued, gang-admitted distributed training jobs"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error|off");

  auto* version = app.add_subcommand("version", "Print the berth version");
  version->callback([] { std::cout << "berth v0.1.0-dev (Kubernetes API v1.32 compatible)\n"; });

  int server_rc = 0;
  ServerFlags server_flags;
  auto* server = app.add_subcommand("server", "Run the API server, the controllers and embedded node agents");
  server->add_option("--port", server_flags.port, "TCP port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535));
  server->add_option("--address", server_flags.address, "address to listen on");
  server->add_option("--data-dir", server_flags.data_dir, "directory for the database and the kubeconfig")
      ->required();
  server->add_option("--store", server_flags.store, "object store backend")
      ->check(CLI::IsMember({"sqlite", "memory"}));
  server->add_option("--threads", server_flags.threads, "HTTP I/O threads")->check(CLI::Range(1, 64));
  server->add_option("--controllers", server_flags.controllers,
                     "run the controllers (Kueue admission, job kinds, pod placement)");
  server->add_option("--nodes", server_flags.nodes, "embedded node agents (node-0, node-1, ...); 0 = none")
      ->check(CLI::Range(0, 64));
  server->add_option("--config", server_flags.config,
                     "Kueue Configuration file (config.kueue.x-k8s.io/v1beta2 or v1beta1 kind Configuration)");
  server->add_option("--node-capacity", server_flags.node_capacity,
                     "capacity of each embedded node, e.g. cpu=8,memory=32Gi,nvidia.com/gpu=8 "
                     "(default: this machine's CPUs, memory and GPUs)");
  server->add_option("--start-estimate-period", server_flags.start_estimate_period,
                     "seconds between recomputations of pending workloads' estimated start times "
                     "(EstimatedStart condition, visibility API); 0 = off")
      ->check(CLI::Range(0, 3600));
  server->add_option("--node-monitor-grace-period", server_flags.node_monitor_grace_period,
                     "seconds without a node Lease renewal before the node is NotReady and its pods "
                     "are failed (kube-controller-manager's flag; keep it above the agents' 10 s renewal)")
      ->check(CLI::Range(1, 3600));
  server->add_option("--terminated-pod-gc-threshold", server_flags.terminated_pod_gc_threshold,
                     "terminal pods kept before the oldest are deleted (kube-controller-manager's flag, "
                     "12500 by default); 0 = never")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  server->add_option("--shutdown-grace-period", server_flags.shutdown_grace_period,
                     "on SIGTERM/SIGINT, seconds the embedded nodes give their pods to stop (graceful node "
                     "shutdown, the kubelet's shutdownGracePeriod); 0 (default) = leave pods running for the "
                     "next start to adopt")
      ->check(CLI::Range(0, 86400))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  server->add_option("--event-ttl", server_flags.event_ttl,
                     "how long Events are kept after their last write, as a Go duration (kube-apiserver's "
                     "--event-ttl)")
      ->capture_default_str();
  server->add_option("--token-auth-file", server_flags.token_auth_file,
                     "bearer tokens, one CSV record each: token,user,uid,\"group1,group2\" (kube-apiserver's "
                     "--token-auth-file); turns authentication on");
  server->add_flag("--insecure-http", server_flags.insecure_http,
                   "development only: serve plain HTTP on a loopback --address with no authentication or "
                   "authorization (every local process is cluster-admin); the default is TLS with client "
                   "certificates, tokens and RBAC");
  server
      ->add_option("--authorization-mode", server_flags.authorization_mode,
                   "RBAC (Roles and bindings decide; system:masters may do anything) or AlwaysAllow")
      ->check(CLI::IsMember({"RBAC", "AlwaysAllow"}))
      ->capture_default_str();
  server->add_option("--service-account-issuer", server_flags.service_account_issuer,
                     "the iss claim of ServiceAccount tokens, and the only issuer accepted (kube-apiserver's "
                     "--service-account-issuer)")
      ->capture_default_str();
  server->add_option("--api-audiences", server_flags.api_audiences,
                     "audiences a ServiceAccount token must name one of, and the default audiences of a "
                     "TokenRequest (kube-apiserver's --api-audiences; default: the issuer)")
      ->delimiter(',');
  server->add_option("--pod-uid-range", server_flags.pod_uid_range,
                     "FIRST:COUNT, the uids/gids the control plane gives namespaces in blocks of 10000 "
                     "(openshift.io/sa.scc.uid-range; default 1000000000:1000000000)");
  AddNodeFlags(server, server_flags.node);
  server->callback([&] {
    if (!berth::SetLogLevel(log_level)) throw CLI::ValidationError("--log-level", "unknown level " + log_level);
    server_rc = RunServer(server_flags);
  });

  AgentFlags agent_flags;
  auto* agent = app.add_subcommand("agent", "Run a node agent that joins a berth server");
  auto* agent_kubeconfig =
      agent->add_option("--kubeconfig", agent_flags.kubeconfig, "kubeconfig of the server (default: $KUBECONFIG)");
  agent->add_option("--server", agent_flags.server, "URL of the server, e.g. http://10.0.0.1:6443 (instead of a kubeconfig)")
      ->excludes(agent_kubeconfig);
  agent->add_option("--name", agent_flags.name, "node name")->required();
  agent->add_option("--data-dir", agent_flags.data_dir, "directory for pod work directories and logs")
      ->required();
  agent->add_option("--capacity", agent_flags.capacity,
                    "declared capacity, e.g. cpu=8,memory=32Gi,nvidia.com/gpu=8 (default: this machine's)");
  agent->add_option("--address", agent_flags.address, "this node's address, reachable by the other nodes");
  agent->add_option("--port", agent_flags.port,
                    "port of the node's streaming server on --address, which the API server dials for logs, exec, "
                    "attach and port-forward (the kubelet's --port; 0 = an ephemeral port)")
      ->check(CLI::Range(0, 65535))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  agent->add_option("--shutdown-grace-period", agent_flags.shutdown_grace_period,
                    "on SIGTERM/SIGINT, seconds pods get to stop (graceful node shutdown); 0 (default) = leave "
                    "pods running for the next start to adopt")
      ->check(CLI::Range(0, 86400))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  AddNodeFlags(agent, agent_flags.node);
  agent->add_option("--pod-uid-range", agent_flags.ignored_uid_range,
                    "ignored: namespaces get their ids from the server (berth server --pod-uid-range)");
  agent->callback([&] {
    if (!berth::SetLogLevel(log_level)) throw CLI::ValidationError("--log-level", "unknown level " + log_level);
    server_rc = RunAgent(agent_flags);
  });

  UserFlags user_flags;
  auto* user = app.add_subcommand("user", "Users of the server: their kubeconfigs");
  auto* user_add = user->add_subcommand(
      "add",
      "Write a kubeconfig for a user in groups, with a client certificate signed by the server's CA "
      "(bind the user or a group with RoleBindings to give rights)");
  user_add->add_option("name", user_flags.name, "user name (the certificate's CN)")->required();
  user_add->add_option("--group", user_flags.groups, "a group of the user (the certificate's O); repeat for more");
  user_add->add_option("--data-dir", user_flags.data_dir, "the server's --data-dir")->required();
  user_add->add_option("-o,--output", user_flags.output, "write the kubeconfig there (mode 0600) instead of stdout");
  user_add->callback([&] { server_rc = RunUserAdd(user_flags, false); });
  user->require_subcommand(1);

  UserFlags node_flags;
  auto* node = app.add_subcommand("node", "Nodes of the server: their agents' credentials");
  auto* node_add = node->add_subcommand(
      "add", "Write the kubeconfig a node's agent joins with (a client certificate for system:node:NAME, which "
             "may write only that Node, its Lease and its pods' status) and print the join command");
  node_add->add_option("name", node_flags.name, "node name")->required();
  node_add->add_option("--data-dir", node_flags.data_dir, "the server's --data-dir")->required();
  node_add->add_option("-o,--output", node_flags.output, "write the kubeconfig there (mode 0600) instead of stdout");
  node_add->callback([&] { server_rc = RunUserAdd(node_flags, true); });
  node->require_subcommand(1);

  berth::cli::AddClientCommands(app, &server_rc);
  berth::cli::diagnostics::AddExplainCommand(app, &server_rc);
  berth::cli::diagnostics::AddLintCommand(app, &server_rc);

  CLI11_PARSE(app, argc, argv);
  return server_rc;
}
