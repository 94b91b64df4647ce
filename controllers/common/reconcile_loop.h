// ReconcileLoop: one named, level-triggered reconciler fed by informers
// through a rate-limited work queue, as controller-runtime's Controller
// (Watches + workqueue + MaxConcurrentReconciles) and client-go's
// processNextWorkItem loop.
//
// Keys are strings, "namespace/name" for namespaced kinds and "name" for
// cluster-scoped ones (client/indexer.h MetaNamespaceKey). Watch() maps every
// add, update and delete of an informer to keys with a KeyFunc:
//   ObjectKey()                     the object's own key;
//   ControllerOwnerKey(apiVersion, kind)
//                                   the key of the object's controller owner
//                                   (the ownerReference with controller=true)
//                                   when it has that apiVersion and kind, as
//                                   controller-runtime's EnqueueRequestForOwner
//                                   with OnlyControllerOwner;
//   or any function of the object.
//
// Processing one key (ProcessOne): Reconcile(key); OK → Forget (the rate
// limiter's history is cleared); an error → logged and AddRateLimited (5 ms
// doubling to 1000 s, client/rate_limiter.h DefaultControllerRateLimiter);
// then Done. A key is never reconciled by two workers at once (WorkQueue).
// With options.resync_period > 0 every key of every watched informer's cache
// (mapped through its KeyFunc) is enqueued again each period of Clock time,
// so state the watches cannot signal (a TrainJob waiting for its runtime,
// an external change) is still reconciled eventually.
//
// Running: Start(workers) starts `workers` threads; Stop() shuts the queue
// down and joins them (a running reconcile finishes first). For tests and
// benchmarks, ProcessQueued() drains the queue on the calling thread.
//
// Time: delays and resync from the injected Clock.
// Thread-safety: every method may be called from any thread; Watch before
// Start.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/object.h"
#include "client/informer.h"
#include "client/work_queue.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers {

using ReconcileFunc = std::function<Status(const std::string& key)>;
// The keys an object's change should reconcile (possibly none).
using KeyFunc = std::function<std::vector<std::string>(const api::Object& obj)>;

// The object's own key.
KeyFunc ObjectKey();
// "namespace/<owner name>" of the object's controller ownerReference when its
// apiVersion and kind match (e.g. "batch/v1", "Job"); nothing otherwise.
KeyFunc ControllerOwnerKey(std::string api_version, std::string kind);
// The controller ownerReference of an object ({apiVersion, kind, name, uid,
// controller: true}); nullptr when it has none.
const api::Object* ControllerOwnerReference(const api::Object& obj);

struct ReconcileLoopOptions {
  Duration resync_period = Duration::zero();  // zero: no resync
  // How many nice steps the worker threads run below the process
  // (core/this_thread.h; 0: at its priority): loops that only report run
  // kReportingNice below.
  int lower_priority_by = 0;
};

class ReconcileLoop {
 public:
  ReconcileLoop(std::string name, Clock& clock, ReconcileFunc reconcile, ReconcileLoopOptions options = {});
  ~ReconcileLoop();  // Stop()
  ReconcileLoop(const ReconcileLoop&) = delete;
  ReconcileLoop& operator=(const ReconcileLoop&) = delete;

  const std::string& name() const { return name_; }
  client::WorkQueue& queue() { return *queue_; }

  // Enqueues keys(obj) for every event of `informer` (and at each resync).
  void Watch(client::Informer& informer, KeyFunc keys);
  void Add(const std::string& key) { queue_->Add(key); }
  // Enqueues the keys of every object cached by the watched informers.
  void EnqueueAll();
  // No key ready or being reconciled (keys delayed by AddAfter aside).
  bool Idle() { return queue_->Idle(); }

  // Reconciles one key and requeues it on error; returns the reconcile's
  // status.
  Status ProcessOne(const std::string& key);
  // Drains the queue on the calling thread (keys delayed by the rate limiter
  // wait for the Clock); returns the number of keys processed.
  int ProcessQueued();

  void Start(int workers = 1);
  void Stop();

 private:
  void ResyncLoop();

  const std::string name_;
  Clock& clock_;
  const ReconcileFunc reconcile_;
  const ReconcileLoopOptions options_;
  std::unique_ptr<client::WorkQueue> queue_;
  std::vector<std::pair<client::Informer*, KeyFunc>> sources_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace berth::controllers
