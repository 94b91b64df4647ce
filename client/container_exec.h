// ContainerExecutor: where the API server gets a process for
// POST|GET /api/v1/namespaces/{ns}/pods/{name}/exec (`kubectl exec`, and
// `kubectl cp`, which execs `tar`).
//
// In Kubernetes the API server proxies the request to the kubelet of the
// pod's node, which asks the container runtime to run the command inside the
// container (pkg/kubelet/server/server.go getExec ->
// pkg/kubelet/cri/streaming/remotecommand/exec.go). In berth the node agent
// implements this interface (agent/node_agent.h: NodeAgent) and the API
// server calls the executor of the pod's spec.nodeName, as it does for logs
// (client/log_source.h). This header depends on nothing but core/, so the
// API server needs no agent internals.
//
// StartExec runs `command` in the environment of the running container:
// its complete environment and working directory (from the run's launch
// record), as the same user, in the container's cgroups when it has them,
// as the leader of a new session and process group. With tty the
// process's stdin, stdout and stderr are the slave side of a new
// pseudo-terminal (its controlling terminal) and stdout_fd() is the master;
// without tty they are pipes (stdin only when asked for; otherwise
// /dev/null).
//
// Errors, with the kubelet's / kube-apiserver's wording:
//   kNotFound    pods "p" not found (not on this node)
//   kBadRequest  container c is not valid for pod p
//   kInternal    container not found ("c")   (not running: the kubelet's
//                                             findContainer miss)
//                the process could not be started (executable not found:
//                runc's `exec: "x": executable file not found in $PATH`)
//
// Thread-safety: implementations must allow concurrent calls from any
// thread. An ExecProcess is used by one thread at a time, except Kill, which
// may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace berth::client {

struct ExecOptions {
  std::string container;  // required (kubectl names it; the API server defaults it)
  std::vector<std::string> command;
  bool stdin = false;
  bool tty = false;
  // Check everything (pod, container, running) but start nothing: StartExec
  // returns nullptr on success. The API server answers a request it will not
  // upgrade with the errors a real one would get.
  bool validate_only = false;
};

// One exec'd process. Destruction kills its process group (SIGKILL) and
// reaps it, so no process outlives its session unless it left the group.
class ExecProcess {
 public:
  virtual ~ExecProcess() = default;
  // Non-blocking file descriptors, owned by the process object:
  // stdin_fd: write end of the process's stdin (tty: the pty master, the
  // same descriptor as stdout_fd); -1 without stdin.
  virtual int stdin_fd() const = 0;
  // stdout_fd: read end of stdout (tty: the pty master; reads fail with EIO
  // once every holder of the slave side has closed it: treat as EOF).
  virtual int stdout_fd() const = 0;
  // stderr_fd: read end of stderr; -1 with tty (stderr goes to the terminal).
  virtual int stderr_fd() const = 0;
  // Ends the process's input: closes the stdin pipe, or with tty sends the
  // terminal's EOF character (^D) through the master.
  virtual void CloseStdin() = 0;
  // Sets the terminal's size (TIOCSWINSZ; the process gets SIGWINCH). No-op
  // without tty.
  virtual void Resize(uint16_t width, uint16_t height) = 0;
  // Blocks until the process has exited and returns its exit code (128 +
  // signal when a signal ended it).
  virtual int Wait() = 0;
  // The exit code if the process has exited (reaps it), without blocking.
  virtual std::optional<int> TryWait() = 0;
  // SIGKILL to the process group. Safe from any thread, also after exit.
  virtual void Kill() = 0;
};

class ContainerExecutor {
 public:
  virtual ~ContainerExecutor() = default;
  virtual StatusOr<std::unique_ptr<ExecProcess>> StartExec(const std::string& ns, const std::string& name,
                                                           const ExecOptions& options) = 0;
  // pods/portforward (`kubectl port-forward`): a TCP connection to `port` of the pod's
  // network. The CRI runtime dials localhost:port inside the pod sandbox's network namespace
  // (containerd's PortForward); berth's pods share the node's network, so the node agent
  // dials 127.0.0.1:port. Returns a connected socket the caller owns (and closes).
  // Errors: kNotFound  pods "p" not found (not on this node);
  //         kUnavailable  the dial failed, with Go's wording
  //                       ("dial tcp4 127.0.0.1:9999: connect: connection refused");
  //         kUnavailable  also: this executor does not forward ports (the default).
  virtual StatusOr<int> ConnectPort(const std::string& ns, const std::string& name, uint16_t port) {
    (void)ns, (void)name, (void)port;
    return UnavailableError("port forwarding is not served for this node");
  }
};

}  // namespace berth::client
