// The batch/v1 Job integration (Kueue's pkg/controller/jobs/job, framework
// "batch/job"): one podSet "main" from spec.template with count =
// spec.parallelism (default 1) reduced to spec.completions when that is
// smaller; suspension through spec.suspend; finished when the Job has a
// Complete (or SuccessCriteriaMet) / Failed condition True; pods ready when
// status.ready + status.succeeded ≥ the podSet count; active while
// status.active or status.terminating is non-zero (the Job controller's
// counts of its pods). Stopping it clears status.startTime (Kueue's Job.Stop), which
// makes the template's scheduling directives mutable again while suspended.
//
// Thread-safety: see job_integration.h.
#pragma once

#include "controllers/kueue/job_integration.h"

namespace berth::controllers::jobs::batchjob {

class BatchJobIntegration final : public kueue::JobIntegration {
 public:
  BatchJobIntegration();
  std::unique_ptr<kueue::GenericJob> Wrap(api::Object job) const override;
  std::optional<Duration> ActiveDeadline(const api::Object& job) const override;
};

}  // namespace berth::controllers::jobs::batchjob
