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
// `follow` is served with cursors: the first read returns where the log
// ended, and each later read (ReadPodLogChunk with `from`) returns only what
// was written after it, across rotations of the log files, never the whole
// log again.
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

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
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

// Where a follower has read up to: one run of one container of one pod
// object, and a position in its log files. Opaque to callers: a cursor is
// what a read returned.
struct PodLogCursor {
  std::string uid;
  std::string container;
  int run = 0;
  uint64_t file_id = 0;
  uint64_t offset = 0;
  bool line_start = true;
  std::shared_ptr<void> pin;  // the source's hold on the position (e.g. an open file)
};

struct PodLogChunk {
  std::string text;
  PodLogCursor next;       // where the following read continues
  bool at_end = false;     // everything written when the read began was read
  bool run_ended = false;  // ... and the run had ended then: nothing more will come
};

class PodLogSource {
 public:
  virtual ~PodLogSource() = default;
  // Without `from`: the log text of a container of pod `ns`/`name` as
  // `options` say (see the file comment). With `from`: what that cursor's run
  // wrote after it, at most `max_bytes` of log (tail_lines is ignored; the pod
  // need not exist any more).
  virtual StatusOr<PodLogChunk> ReadPodLogChunk(const std::string& ns, const std::string& name,
                                                const PodLogOptions& options, const PodLogCursor* from,
                                                size_t max_bytes) = 0;
  // The text of the read without `from`.
  StatusOr<std::string> ReadPodLog(const std::string& ns, const std::string& name, const PodLogOptions& options) {
    StatusOr<PodLogChunk> chunk = ReadPodLogChunk(ns, name, options, nullptr, std::numeric_limits<size_t>::max());
    if (!chunk.ok()) return chunk.status();
    return std::move(chunk->text);
  }
};

}  // namespace berth::client
