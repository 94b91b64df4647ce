// JobKindReconciler: the opening every job-kind reconciler shares (batch/v1 Job, JobSet,
// TrainJob, PyTorchJob), as controller-runtime reconcilers open: read the object by key;
// absent (client.IgnoreNotFound) or being deleted (deletionTimestamp set: its children go
// with it through garbage collection) → nothing to do; otherwise the kind's own Sync.
//
// Keys are "namespace/name" (client/indexer.h MetaNamespaceKey). ReconcileAll reconciles
// every object of the kind in the order List returns them ((namespace, name)), for tests and
// benchmarks; it tries all and returns the first error.
//
// Errors: API failures are returned; the caller (a ReconcileLoop) requeues with rate
// limiting. Sync's errors likewise.
// Thread-safety: Reconcile may run concurrently for different keys when Sync allows it
// (every kind's does: it keeps no state between calls beyond what the constructor set).
#pragma once

#include <functional>
#include <string>

#include "api/object.h"
#include "client/client.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::jobs {

class JobKindReconciler {
 public:
  JobKindReconciler(client::Client& client, Clock& clock, client::GroupVersionResource resource)
      : client_(client), clock_(clock), resource_(std::move(resource)) {}
  virtual ~JobKindReconciler() = default;
  JobKindReconciler(const JobKindReconciler&) = delete;
  JobKindReconciler& operator=(const JobKindReconciler&) = delete;

  Status Reconcile(const std::string& key);
  Status ReconcileAll();

  // How a kind asks for a key to be reconciled again after a delay (the ReconcileLoop's
  // queue().AddAfter), e.g. when an active deadline runs out; unset, the kind sees it at
  // the next reconcile (a resync). Set before the first Reconcile.
  void SetRequeueAfter(std::function<void(const std::string& key, Duration after)> requeue_after) {
    requeue_after_ = std::move(requeue_after);
  }

  const client::GroupVersionResource& resource() const { return resource_; }

 protected:
  // The kind's reconcile of one object as read (it exists and is not being deleted).
  virtual Status Sync(const std::string& key, const api::Object& live) = 0;

  client::Client& client_;
  Clock& clock_;
  const client::GroupVersionResource resource_;
  std::function<void(const std::string& key, Duration after)> requeue_after_;
};

}  // namespace berth::controllers::jobs
