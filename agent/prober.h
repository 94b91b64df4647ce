// Container probes as the kubelet runs them (kubernetes/kubernetes 1.32
// pkg/kubelet/prober/{prober.go,worker.go,prober_manager.go},
// pkg/probe/{exec,http,tcp}): startupProbe, readinessProbe and livenessProbe
// with the exec, httpGet and tcpSocket handlers.
//
// Spec (ContainerProbe): the probe's handler, then initialDelaySeconds (0),
// timeoutSeconds (1), periodSeconds (10), successThreshold (1),
// failureThreshold (3) and terminationGracePeriodSeconds (the probe's own,
// else the pod's) as the API defaults them. httpGet: scheme HTTP or HTTPS,
// host (default the pod's IP, which is the node's address in berth), path
// (default "/"), port (a number, or the name of one of the container's
// `ports`), httpHeaders. tcpSocket: host, port. A probe that cannot run (an
// unknown port name, a port out of range, no handler, a grpc probe: "grpc
// probes are not supported by berth") is a spec of Handler::kInvalid whose
// every run errors with that text, as the kubelet's prober errors: the
// results are thrown away, so the container never becomes Ready by it and is
// never killed by it.
//
// Results (RunHttpProbe, RunTcpProbe, RunExecProbe, each bounded by
// timeoutSeconds of real time):
//   exec     exit 0 → Success; otherwise Failure with the command's output
//            (stdout then stderr, at most 10 KiB, as the kubelet's
//            maxReadLength); past the timeout the process group is killed:
//            Failure `command "<argv joined by spaces>" timed out`; a command
//            that cannot start: Unknown with the error.
//   httpGet  GET with User-Agent "kube-probe/1.32" and Accept "*/*" (unless
//            httpHeaders set them); a status in [200, 400) → Success, else
//            Failure "HTTP probe failed with statuscode: <code>"; a
//            connection error: Failure `Get "<url>": dial tcp <host:port>:
//            connect: connection refused` (or the error's text); the timeout:
//            Failure `Get "<url>": context deadline exceeded (Client.Timeout
//            exceeded while awaiting headers)`. HTTPS is not verified, as the
//            kubelet's. Redirects are not followed (a 3xx is a success, as
//            upstream reports a redirect to another host).
//   tcp      connected → Success; else Failure "dial tcp <host:port>:
//            connect: connection refused" (or "... i/o timeout").
//
// Thresholds (ProbeState, worker.go doProbe): the result starts as Failure
// for readiness, Success for liveness and Unknown for startup. Readiness and
// liveness are not run until the startup probe has succeeded. A probe runs
// first initialDelaySeconds after the container started, then every
// periodSeconds (Clock time, from when the previous run was due). A result
// becomes the probe's result once it has repeated successThreshold
// (Success) or failureThreshold (Failure) times in a row; Unknown changes
// nothing. A startup probe stops once it has succeeded. A liveness or
// startup probe whose result becomes Failure has the container killed
// (after the probe's termination grace period) and restarted as its
// restartPolicy says; the agent records Normal Killing "Container <c> failed
// <liveness|startup> probe, will be restarted", and every failed run Warning
// Unhealthy "<Liveness|Readiness|Startup> probe failed: <output>" (an
// Unknown: "... probe errored: <error>").
//
// ProbeRunner runs probes off the agent's loop on a few threads of its own,
// so a slow probe (up to its timeout) never delays a pass.
//
// Thread-safety: ContainerProbe, ProbeState and the Run* functions are
// plain values/functions (Run* block); ProbeRunner's methods may be called
// from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/object.h"
#include "client/container_exec.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::agent {

enum class ProbeType { kStartup, kReadiness, kLiveness };
// "Startup", "Readiness", "Liveness" (the kubelet's event text).
const char* ProbeTypeName(ProbeType type);

struct ProbeSpec {
  // kInvalid: the probe cannot run (`error` says why); it errors at every period.
  enum class Handler { kExec, kHttpGet, kTcpSocket, kInvalid };
  Handler handler = Handler::kExec;
  std::string error;                                         // kInvalid
  std::vector<std::string> command;                          // exec
  std::string scheme = "HTTP";                               // httpGet: HTTP or HTTPS
  std::string host;                                          // httpGet, tcpSocket; "" = the pod's IP
  std::string path = "/";                                    // httpGet
  int port = 0;                                              // httpGet, tcpSocket
  std::vector<std::pair<std::string, std::string>> headers;  // httpGet
  int64_t initial_delay_seconds = 0;
  int64_t timeout_seconds = 1;
  int64_t period_seconds = 10;
  int64_t success_threshold = 1;
  int64_t failure_threshold = 3;
  std::optional<int64_t> termination_grace_period_seconds;
};

// The container's probe of `type` (see the file comment); nullopt when it has none.
StatusOr<std::optional<ProbeSpec>> ContainerProbe(const api::Object& container, ProbeType type);

enum class ProbeResult { kUnknown, kSuccess, kFailure };

struct ProbeOutcome {
  ProbeResult result = ProbeResult::kUnknown;
  std::string output;  // the failure's text, or the error of an Unknown
};

// Largest output of an exec probe kept (the kubelet's maxReadLength).
inline constexpr size_t kMaxProbeOutput = 10 * 1024;

ProbeOutcome RunHttpProbe(const ProbeSpec& spec, const std::string& pod_ip);
ProbeOutcome RunTcpProbe(const ProbeSpec& spec, const std::string& pod_ip);
// Reads the started process's output until it exits or `timeout` passes (then kills it).
ProbeOutcome RunExecProbe(client::ExecProcess& process, const std::vector<std::string>& command, Duration timeout);

// One probe of one run of a container (see "Thresholds").
class ProbeState {
 public:
  ProbeState(ProbeType type, ProbeSpec spec, Time started_at);
  ProbeType type() const { return type_; }
  const ProbeSpec& spec() const { return spec_; }
  // When it should run next (Clock time).
  Time due() const { return due_; }
  // The run due now is handed out: the next one is due a period later.
  void Dispatched() { due_ += std::chrono::seconds(spec_.period_seconds); }
  // Applies one run's outcome; true when the probe's result changed.
  bool Record(const ProbeOutcome& outcome);
  ProbeResult result() const { return result_; }
  // A startup probe that has succeeded runs no more.
  bool done() const { return type_ == ProbeType::kStartup && result_ == ProbeResult::kSuccess; }

 private:
  ProbeType type_;
  ProbeSpec spec_;
  Time due_;
  ProbeResult result_;
  ProbeResult last_ = ProbeResult::kUnknown;
  int64_t run_ = 0;  // how many times in a row last_ came
};

// A small pool of threads that run probe tasks in submission order.
class ProbeRunner {
 public:
  explicit ProbeRunner(int threads = 4);
  ~ProbeRunner();
  ProbeRunner(const ProbeRunner&) = delete;
  ProbeRunner& operator=(const ProbeRunner&) = delete;
  void Submit(std::function<void()> task);
  // Runs nothing more; waits for the running tasks (each bounded by its timeout).
  void Stop();

 private:
  void Work();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace berth::agent
