// PodLogSource: where the API server gets the text of GET
// /api/v1/namespaces/{ns}/pods/{name}/log (`kubectl logs`).
//
// In Kubernetes the API server proxies that request to the kubelet of the
// pod's node, which reads the container's log files. In berth the node agent
// implements this interface (agent/node_agent.h: NodeAgent), and the API
// server calls the source of the pod's spec.nodeName: directly for an agent
// in the same process, or through a proxy for a remote agent. This header
// depends on nothing but core/, so the API server needs no agent internals.
//
// Query parameters follow corev1.PodLogOptions (the non-streaming subset):
//   container     "" = the pod's only container (an error when it has several)
//   previous      the previous (terminated) run of the container
//   timestamps    prefix each line with its RFC3339Nano time and a space
//   tailLines     only the last N lines
//   limitBytes    at most N bytes
//   sinceTime     lines written at or after this time (sinceSeconds is turned
//                 into sinceTime by the caller: now - seconds)
// `follow` is not part of this interface.
//
// Errors, with kube-apiserver / kubelet wording:
//   kNotFound    pods "p" not found (not on this node)
//   kBadRequest  a container name must be specified for pod p, choose one of: [a b]
//                container c is not valid for pod p
//                previous terminated container "c" in pod "p" not found
//                container "c" in pod "p" is waiting to start: ContainerCreating
//
// Thread-safety: implementations must allow concurrent calls from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/status.h"

namespace berth::client {

struct PodLogOptions {
  std::string container;
  bool previous = false;
  bool timestamps = false;
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> limit_bytes;
  std::optional<Time> since_time;
  // With a uid (and a container): the log of that pod object even after it was
  // deleted (the node keeps the files), for a follower's final read.
  std::string uid;
};

class PodLogSource {
 public:
  virtual ~PodLogSource() = default;
  // The log text of a container of pod `ns`/`name` (see the file comment).
  virtual StatusOr<std::string> ReadPodLog(const std::string& ns, const std::string& name,
                                           const PodLogOptions& options) = 0;
};

}  // namespace berth::client
