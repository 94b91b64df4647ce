#include "controllers/jobs/batchjob/ttl_after_finished.h"

#include <optional>

#include "client/indexer.h"
#include "controllers/jobs/common/owned_objects.h"
#include "controllers/jobs/common/resources.h"
#include "core/logging.h"

namespace berth::controllers::jobs::batchjob {
namespace {

// The Job's TTL in seconds, when it has one.
std::optional<int64_t> Ttl(const api::Object& job) {
  auto spec = job.find("spec");
  if (spec == job.end() || !spec->is_object()) return std::nullopt;
  auto ttl = spec->find("ttlSecondsAfterFinished");
  if (ttl == spec->end() || !ttl->is_number_integer()) return std::nullopt;
  return ttl->get<int64_t>();
}

// Whether the Job finished, and when: nullopt = not finished; an error when a
// finishing condition has no usable time.
StatusOr<std::optional<Time>> FinishTime(const api::Object& job) {
  auto status = job.find("status");
  if (status == job.end() || !status->is_object()) return std::optional<Time>();
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return std::optional<Time>();
  for (const api::Object& c : *conditions) {
    if (!c.is_object()) continue;
    const std::string type = c.value("type", "");
    if ((type != "Complete" && type != "Failed") || c.value("status", "") != "True") continue;
    Time at;
    if (!c.contains("lastTransitionTime") || !c["lastTransitionTime"].is_string() ||
        !ParseRfc3339(c["lastTransitionTime"].get<std::string>(), &at)) {
      return InternalError("unable to find the time when the Job " + api::Namespace(job) + "/" + api::Name(job) +
                           " finished");
    }
    return std::optional<Time>(at);
  }
  return std::optional<Time>();
}

// When the Job expires: nullopt when it does not need cleaning up.
StatusOr<std::optional<Time>> ExpireTime(const api::Object& job) {
  if (api::BeingDeleted(job)) return std::optional<Time>();
  std::optional<int64_t> ttl = Ttl(job);
  if (!ttl) return std::optional<Time>();
  BERTH_ASSIGN_OR_RETURN(std::optional<Time> finished, FinishTime(job));
  if (!finished) return std::optional<Time>();
  return std::optional<Time>(*finished + std::chrono::seconds(*ttl));
}

}  // namespace

bool TtlAfterFinishedController::NeedsCleanup(const api::Object& job) {
  if (!job.is_object() || api::BeingDeleted(job) || !Ttl(job)) return false;
  StatusOr<std::optional<Time>> finished = FinishTime(job);
  return !finished.ok() || finished->has_value();
}

KeyFunc TtlAfterFinishedController::Keys() {
  return [](const api::Object& job) {
    return NeedsCleanup(job) ? std::vector<std::string>{client::MetaNamespaceKey(job)} : std::vector<std::string>{};
  };
}

StatusOr<Duration> TtlAfterFinishedController::Reconcile(const std::string& key) {
  client::ObjectPtr cached = jobs_.GetIndexer().Get(key);
  if (!cached) return Duration::zero();
  BERTH_ASSIGN_OR_RETURN(std::optional<Time> expire, ExpireTime(*cached));
  if (!expire) return Duration::zero();
  const Time now = clock_.Now();
  if (now < *expire) return std::chrono::duration_cast<Duration>(*expire - now);

  const auto [ns, name] = client::SplitMetaNamespaceKey(key);
  const client::ResourceRef ref = kJobsResource.Namespace(ns);
  StatusOr<api::Object> fresh = client_.Get(ref, name);
  if (!fresh.ok())
    return fresh.status().code() == Code::kNotFound ? StatusOr<Duration>(Duration::zero()) : fresh.status();
  BERTH_ASSIGN_OR_RETURN(expire, ExpireTime(*fresh));
  if (!expire) return Duration::zero();
  if (now < *expire) return std::chrono::duration_cast<Duration>(*expire - now);

  client::DeleteOptions options;
  options.propagation_policy = client::PropagationPolicy::kForeground;
  options.preconditions.uid = api::Uid(*fresh);
  Status deleted = client_.Delete(ref, name, options);
  if (!deleted.ok() && deleted.code() != Code::kNotFound && deleted.code() != Code::kConflict) return deleted;
  Logger("ttl-after-finished")->info("job {} finished and its ttlSecondsAfterFinished passed: deleted", key);
  return Duration::zero();
}

}  // namespace berth::controllers::jobs::batchjob
