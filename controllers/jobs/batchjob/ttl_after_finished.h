// TtlAfterFinishedController: deletes a finished batch/v1 Job once its
// spec.ttlSecondsAfterFinished has passed, as kube-controller-manager's
// TTL-after-finished controller (pkg/controller/ttlafterfinished/
// ttlafterfinished_controller.go) does, so finished Jobs and their pods do not
// accumulate for the life of the server.
//
// One reconcile of a Job key ("namespace/name"):
//   - the Job is absent, being deleted, has no ttlSecondsAfterFinished, or has
//     not finished: nothing;
//   - finished = a condition Complete or Failed with status True; its
//     lastTransitionTime is the finish time (none: an error, as upstream's
//     "unable to find the time when the Job finished");
//   - now < finish + ttl: reconcile again then (requeue_after);
//   - else the Job is read again from the API server (the informer's copy may
//     be stale: the TTL may have been changed or the Job re-created under the
//     same name), checked again, and deleted with propagationPolicy
//     Foreground and a uid precondition, so its pods go first and a
//     re-created Job of the same name is never deleted.
//
// Time: the injected Clock. Driving: a ReconcileLoop keyed by Job, fed by the
// Jobs informer through Keys() (controllers/manager): only a Job that
// NeedsCleanup is enqueued, as upstream's addJob/updateJob handlers do, so a
// Job without a TTL costs the loop nothing however often its status changes.
// Thread-safety: Reconcile may run concurrently for different keys; Keys and
// NeedsCleanup are pure.
#pragma once

#include <string>

#include "client/client.h"
#include "client/informer.h"
#include "controllers/common/reconcile_loop.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::controllers::jobs::batchjob {

class TtlAfterFinishedController {
 public:
  TtlAfterFinishedController(client::Client& client, client::Informer& jobs, Clock& clock)
      : client_(client), jobs_(jobs), clock_(clock) {}

  // Returns when to look at the Job again (zero: no need).
  StatusOr<Duration> Reconcile(const std::string& key);

  // Upstream's needsCleanup plus its handlers' deletionTimestamp check: not
  // being deleted, spec.ttlSecondsAfterFinished set, and a Complete or Failed
  // condition True (with or without a usable lastTransitionTime: a Job
  // without one is reconciled, and the reconcile reports it).
  static bool NeedsCleanup(const api::Object& job);
  // The loop's KeyFunc: the Job's own key when it NeedsCleanup, else none.
  static KeyFunc Keys();

 private:
  client::Client& client_;
  client::Informer& jobs_;
  Clock& clock_;
};

}  // namespace berth::controllers::jobs::batchjob
