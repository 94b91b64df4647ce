// The pod garbage collector's terminated-pod threshold (kube-controller-manager
// pkg/controller/podgc/gc_controller.go, gcTerminated; the orphaned-pod part is
// in controllers/nodelifecycle). Terminal pods (phase Succeeded or Failed)
// stay in the API until someone deletes them; a server that runs jobs for
// months would keep every one, and with them the node agents' housekeeping
// (which visits each pod bound to the node every 2 s, as the kubelet's) and
// every pod informer's memory would grow without end. When more than
// `threshold` terminal pods exist, Collect deletes the oldest of them (by
// metadata.creationTimestamp, then namespace/name) with grace period 0 until
// `threshold` remain, as upstream does every 20 s (gcCheckPeriod) with
// --terminated-pod-gc-threshold 12500.
//
// What a deleted pod took with it is already counted: the Job controller
// removes its batch.kubernetes.io/job-tracking finalizer only after counting
// the pod in status.succeeded/failed, and a pod that still carries a finalizer
// is only marked for deletion (it goes when the finalizer does). Running and
// pending pods are never touched.
//
// Cost: the constructor adds an index of the collectable pods to `pods`, so a
// Collect under the threshold reads one count (O(1)); upstream lists and
// filters every pod on each check.
//
// Shapes: `pods` is an informer of every namespace's pods. Errors: Collect
// returns the first failed delete's status (NotFound is not an error: someone
// else deleted it); the pods deleted before it stay deleted.
// Thread-safety: Collect may run on any one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>

#include "client/client.h"
#include "client/informer.h"
#include "core/status.h"

namespace berth::controllers::podgc {

// kube-controller-manager's defaults (--terminated-pod-gc-threshold, gcCheckPeriod).
inline constexpr int64_t kDefaultTerminatedPodThreshold = 12500;
inline constexpr std::chrono::seconds kCheckPeriod{20};

class TerminatedPodGC {
 public:
  // threshold <= 0 disables it (Collect does nothing), as upstream.
  TerminatedPodGC(client::Client& client, client::Informer& pods, int64_t threshold);

  // Deletes the oldest terminal pods beyond the threshold; returns how many it deleted.
  StatusOr<int64_t> Collect();

 private:
  client::Client& client_;
  client::Informer& pods_;
  const int64_t threshold_;
};

}  // namespace berth::controllers::podgc
