#include "controllers/jobs/batchjob/job_pods.h"

#include <charconv>

#include <algorithm>
#include <map>
#include <set>

namespace berth::controllers::jobs::batchjob {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

constexpr std::string_view kBackoffLimitExceeded = "BackoffLimitExceeded";
constexpr std::string_view kBackoffLimitMessage = "Job has reached the specified backoff limit";
constexpr std::string_view kDeadlineExceeded = "DeadlineExceeded";
constexpr std::string_view kDeadlineExceededMessage = "Job was active longer than specified deadline";
constexpr std::string_view kCompletionsReached = "CompletionsReached";
constexpr std::string_view kCompletionsReachedMessage = "Reached expected number of succeeded pods";
constexpr std::string_view kMaxFailedIndexesExceeded = "MaxFailedIndexesExceeded";
constexpr std::string_view kMaxFailedIndexesMessage = "Job has exceeded the specified maximal number of failed indexes";
constexpr std::string_view kFailedIndexes = "FailedIndexes";
constexpr std::string_view kFailedIndexesMessage = "Job has failed indexes";

// A decimal of at most 18 digits (no sign), for index intervals.
std::optional<int64_t> ParseNonNegative(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::optional<int32_t> ParseIndex(std::string_view text) {
  if (text.size() > 9) return std::nullopt;
  const std::optional<int64_t> v = ParseNonNegative(text);
  return v ? std::optional<int32_t>(static_cast<int32_t>(*v)) : std::nullopt;
}

// An annotation's non-negative int32, else 0 (upstream parseInt32).
int32_t ParseCount(const Object& annotations, std::string_view key) {
  const std::optional<int64_t> v = ParseNonNegative(StringAt(annotations, key));
  return v && *v <= INT32_MAX ? static_cast<int32_t>(*v) : 0;
}

// Upstream getFinishedTime (backoff_utils.go); see ObservedPod::finish_time.
Time FinishTime(const Object& pod) {
  const Object& status = ObjectAt(pod, "status");
  const Object& statuses = Field(status, "containerStatuses");
  if (statuses.is_array() && !statuses.empty()) {
    std::optional<Time> latest;
    for (const Object& cs : statuses) {
      Time t;
      if (!ParseRfc3339(StringAt(ObjectAt(ObjectAt(cs, "state"), "terminated"), "finishedAt"), &t)) {
        latest.reset();
        break;
      }
      if (!latest || t > *latest) latest = t;
    }
    if (latest) return *latest;
  }
  const Object& conditions = Field(status, "conditions");
  if (conditions.is_array()) {
    for (const Object& c : conditions) {
      Time t;
      if (StringAt(c, "type") == "Ready" && StringAt(c, "status") == "False" &&
          ParseRfc3339(StringAt(c, "lastTransitionTime"), &t)) {
        return t;
      }
    }
  }
  const Object& metadata = ObjectAt(pod, "metadata");
  Time t;
  if (ParseRfc3339(StringAt(metadata, "deletionTimestamp"), &t)) {
    return t -
           std::chrono::seconds(std::clamp<int64_t>(IntAt(metadata, "deletionGracePeriodSeconds", 0), 0, INT32_MAX));
  }
  if (ParseRfc3339(StringAt(metadata, "creationTimestamp"), &t)) return t;
  return Time{};
}

void AddIndexEnv(Object* containers) {
  if (!containers->is_array()) return;
  for (Object& c : *containers) {
    Object& env = MutableArray(&c, "env");
    if (FindNamed(env, kJobCompletionIndexEnv) == nullptr) {
      env.push_back(EnvVarFromField(kJobCompletionIndexEnv, kJobCompletionIndexFieldPath));
    }
  }
}

}  // namespace

JobSpec JobSpec::FromObject(const Object& job) {
  const Object& spec = ObjectAt(job, "spec");
  JobSpec s;
  s.parallelism = static_cast<int32_t>(IntAt(spec, "parallelism", 1));
  s.indexed = StringAt(spec, "completionMode") == "Indexed";
  if (Field(spec, "completions").is_number_integer()) {
    s.completions = static_cast<int32_t>(IntAt(spec, "completions", 0));
  } else if (s.indexed) {
    s.completions = s.parallelism;
  }
  if (s.indexed && Field(spec, "backoffLimitPerIndex").is_number_integer()) {
    s.backoff_limit_per_index = static_cast<int32_t>(IntAt(spec, "backoffLimitPerIndex", 0));
    if (Field(spec, "maxFailedIndexes").is_number_integer()) {
      s.max_failed_indexes = static_cast<int32_t>(IntAt(spec, "maxFailedIndexes", 0));
    }
  }
  // The API server's default: MaxInt32 with backoffLimitPerIndex, else 6.
  s.backoff_limit = static_cast<int32_t>(IntAt(spec, "backoffLimit", s.backoff_limit_per_index ? INT32_MAX : 6));
  s.suspend = BoolAt(spec, "suspend", false);
  s.restart_on_failure = StringAt(ObjectAt(ObjectAt(spec, "template"), "spec"), "restartPolicy") == "OnFailure";
  if (Field(spec, "activeDeadlineSeconds").is_number_integer()) {
    s.active_deadline_seconds = IntAt(spec, "activeDeadlineSeconds", 0);
  }
  s.pod_failure_policy = Field(spec, "podFailurePolicy");
  if (s.indexed) s.success_policy = Field(spec, "successPolicy");
  return s;
}

std::string PodGenerateName(std::string_view job_name, std::optional<int32_t> index) {
  if (!index) {
    std::string prefix = std::string(job_name) + "-";
    if (prefix.size() > kMaxGeneratedNameLength) prefix.resize(kMaxGeneratedNameLength);
    return prefix;
  }
  std::string tail = "-" + std::to_string(*index) + "-";
  std::string prefix = std::string(job_name) + tail;
  if (prefix.size() > kMaxGeneratedNameLength) {
    prefix = std::string(job_name.substr(0, kMaxGeneratedNameLength - tail.size())) + tail;
  }
  return prefix;
}

Object NewPod(const Object& job, std::optional<int32_t> index, std::string_view suffix,
              std::optional<IndexFailureCounts> counts) {
  const Object& tmpl = ObjectAt(ObjectAt(job, "spec"), "template");
  const std::string& job_name = api::Name(job);
  const std::string& uid = api::Uid(job);

  Object pod = Object::object();
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  Object metadata = ObjectAt(tmpl, "metadata");
  metadata.erase("name");
  metadata.erase("generateName");
  metadata["name"] = PodGenerateName(job_name, index) + std::string(suffix);
  metadata["generateName"] = PodGenerateName(job_name, index);
  if (!api::Namespace(job).empty()) metadata["namespace"] = api::Namespace(job);
  Object& labels = MutableObject(&metadata, "labels");
  labels[std::string(kControllerUidLabel)] = uid;
  labels[std::string(kLegacyControllerUidLabel)] = uid;
  labels[std::string(kJobNameLabel)] = job_name;
  labels[std::string(kLegacyJobNameLabel)] = job_name;
  if (index) {
    labels[std::string(kJobCompletionIndexLabel)] = std::to_string(*index);
    Object& annotations = MutableObject(&metadata, "annotations");
    annotations[std::string(kJobCompletionIndexAnnotation)] = std::to_string(*index);
    if (counts) {
      annotations[std::string(kJobIndexFailureCountAnnotation)] = std::to_string(counts->failed);
      if (counts->ignored > 0) {
        annotations[std::string(kJobIndexIgnoredFailureCountAnnotation)] = std::to_string(counts->ignored);
      }
    }
  }
  metadata["ownerReferences"] = Object::array({ControllerReference(job)});
  pod["metadata"] = std::move(metadata);

  Object spec = ObjectAt(tmpl, "spec");
  if (index) {
    AddIndexEnv(&MutableArray(&spec, "containers"));
    if (HasField(spec, "initContainers")) AddIndexEnv(&MutableArray(&spec, "initContainers"));
    spec["hostname"] = job_name + "-" + std::to_string(*index);
  }
  pod["spec"] = std::move(spec);
  return pod;
}

ObservedPod ObservedPod::FromObject(const Object& pod) {
  ObservedPod p;
  p.name = api::Name(pod);
  const Object& status = ObjectAt(pod, "status");
  p.phase = StringAt(status, "phase", "Pending");
  const Object& annotations = ObjectAt(ObjectAt(pod, "metadata"), "annotations");
  p.index = ParseIndex(StringAt(annotations, kJobCompletionIndexAnnotation));
  p.failure_counts = {ParseCount(annotations, kJobIndexFailureCountAnnotation),
                      ParseCount(annotations, kJobIndexIgnoredFailureCountAnnotation)};
  if (p.terminal()) p.finish_time = FinishTime(pod);
  if (p.phase == "Failed") p.failure_facts = PodFailureFacts::FromObject(pod);
  p.terminating = HasField(ObjectAt(pod, "metadata"), "deletionTimestamp");
  p.removed_by_controller = HasField(annotations, kRemovedByJobControllerAnnotation);
  p.ready = IsConditionTrue(pod, "Ready");
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    const Object& statuses = Field(status, list);
    if (!statuses.is_array()) continue;
    for (const Object& cs : statuses) {
      p.restart_count += static_cast<int32_t>(std::clamp<int64_t>(IntAt(cs, "restartCount", 0), 0, INT32_MAX));
    }
  }
  return p;
}

bool JobPlan::finished() const {
  for (const Condition& c : conditions) {
    if ((c.type == "Complete" || c.type == "Failed") && c.status == "True") return true;
  }
  return false;
}

std::string FormatIndexIntervals(const std::vector<int32_t>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(sorted[i]);
    if (j > i) out += (j == i + 1 ? "," : "-") + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int32_t> ParseIndexIntervals(std::string_view text, int32_t completions) {
  // Intervals cut to completions, merged before expanding, so the work is bounded by the
  // text's length plus completions however the intervals repeat.
  std::vector<std::pair<int64_t, int64_t>> intervals;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view part = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t dash = part.find('-');
    const std::optional<int64_t> first = ParseNonNegative(part.substr(0, dash));
    const std::optional<int64_t> last =
        dash == std::string_view::npos ? first : ParseNonNegative(part.substr(dash + 1));
    if (!first || !last || *first > std::min<int64_t>(*last, completions - 1)) continue;
    intervals.emplace_back(*first, std::min<int64_t>(*last, completions - 1));
  }
  std::sort(intervals.begin(), intervals.end());
  std::vector<int32_t> out;
  int64_t next = 0;  // the lowest index not yet written
  for (const auto& [first, last] : intervals) {
    for (int64_t i = std::max(first, next); i <= last; ++i) out.push_back(static_cast<int32_t>(i));
    next = std::max(next, last + 1);
  }
  return out;
}

Duration PodFailureBackoff(int32_t failures) {
  if (failures <= 0) return Duration::zero();
  Duration d = kDefaultPodFailureBackoff;
  for (int32_t i = 1; i < failures && d < kMaxPodFailureBackoff; ++i) d *= 2;
  return std::min(d, kMaxPodFailureBackoff);
}

namespace {

// Upstream pastBackoffLimitOnFailure.
bool PastBackoffLimitOnFailure(const JobSpec& spec, const std::vector<ObservedPod>& pods) {
  if (!spec.restart_on_failure) return false;
  int64_t restarts = 0;
  for (const ObservedPod& p : pods) {
    if (p.phase == "Running" || p.phase == "Pending") restarts += p.restart_count;
  }
  return spec.backoff_limit == 0 ? restarts > 0 : restarts >= spec.backoff_limit;
}

// When the active deadline passes (upstream pastActiveDeadline); nullopt without one or
// while suspended.
std::optional<Time> ActiveDeadline(const Object& job, Time now) {
  const JobSpec spec = JobSpec::FromObject(job);
  if (!spec.active_deadline_seconds || spec.suspend) return std::nullopt;
  // Started (no startTime yet) or resumed (Suspended still True) by this reconcile: the
  // controller writes startTime = now.
  Time start = now;
  if (!IsConditionTrue(job, "Suspended")) {
    Time recorded;
    if (ParseRfc3339(StringAt(ObjectAt(job, "status"), "startTime"), &recorded)) start = recorded;
  }
  return start + std::chrono::seconds(*spec.active_deadline_seconds);
}

}  // namespace

JobPlan PlanJob(const Object& job, const std::vector<ObservedPod>& pods_in, Time now) {
  const JobSpec spec = JobSpec::FromObject(job);
  const Object& status = ObjectAt(job, "status");
  JobPlan plan;

  std::vector<ObservedPod> pods = pods_in;
  std::sort(pods.begin(), pods.end(), [](const ObservedPod& a, const ObservedPod& b) { return a.name < b.name; });

  // A Failed pod that is a failure of the Job (it may still be an ignored one), and the
  // podFailurePolicy verdict of each (by position in `pods`).
  auto is_failure = [&](size_t i) { return pods[i].phase == "Failed" && !pods[i].uncounted(); };
  const std::string& ns = api::Namespace(job);
  std::vector<PodFailureMatch> matches(pods.size());
  for (size_t i = 0; i < pods.size(); ++i) {
    if (is_failure(i)) {
      matches[i] = MatchPodFailurePolicy(spec.pod_failure_policy, ns, pods[i].name, pods[i].failure_facts);
    }
  }

  int32_t observed_succeeded = 0, observed_failed = 0;
  std::set<int32_t> succeeded_indexes;
  std::vector<const ObservedPod*> active;
  int32_t live = 0;  // active + terminating: pods that still hold their slot
  for (size_t i = 0; i < pods.size(); ++i) {
    const ObservedPod& p = pods[i];
    if (p.phase == "Succeeded" && !p.uncounted()) {
      ++observed_succeeded;
      if (p.index && (!spec.completions || *p.index < *spec.completions)) succeeded_indexes.insert(*p.index);
    } else if (is_failure(i) && matches[i].counts) {
      ++observed_failed;
    }
    if (p.terminating) {  // terminal or not: it holds its slot until it is gone
      ++plan.terminating;
      ++live;
    } else if (!p.terminal()) {
      active.push_back(&p);
      ++live;
      if (p.ready) ++plan.ready;
    }
  }
  if (spec.indexed) {
    // The indexes the status already counts stay counted, whether or not their pods still
    // exist (upstream calculateSucceededIndexes starts from status.completedIndexes): a
    // succeeded pod deleted by a user, pod GC or its agent's confirmation is not run again.
    for (int32_t i : ParseIndexIntervals(StringAt(status, "completedIndexes"), *spec.completions)) {
      succeeded_indexes.insert(i);
    }
    observed_succeeded = static_cast<int32_t>(succeeded_indexes.size());
  }
  plan.succeeded = std::max<int32_t>(observed_succeeded, static_cast<int32_t>(IntAt(status, "succeeded", 0)));
  plan.failed = std::max<int32_t>(observed_failed, static_cast<int32_t>(IntAt(status, "failed", 0)));
  if (spec.indexed) {
    plan.completed_indexes =
        FormatIndexIntervals(std::vector<int32_t>(succeeded_indexes.begin(), succeeded_indexes.end()));
  }

  std::set<int32_t> failed_indexes;
  if (spec.backoff_limit_per_index) {
    for (int32_t i : ParseIndexIntervals(StringAt(status, "failedIndexes"), *spec.completions)) {
      failed_indexes.insert(i);
    }
    // Upstream isIndexFailed.
    for (size_t i = 0; i < pods.size(); ++i) {
      const ObservedPod& p = pods[i];
      if (!is_failure(i) || !p.index || *p.index >= *spec.completions) continue;
      if (matches[i].action == PodFailureAction::kFailIndex ||
          (matches[i].counts && p.failure_counts.failed >= *spec.backoff_limit_per_index)) {
        failed_indexes.insert(*p.index);
      }
    }
    plan.failed_indexes = FormatIndexIntervals(std::vector<int32_t>(failed_indexes.begin(), failed_indexes.end()));
  }
  const int64_t failed_index_count = static_cast<int64_t>(failed_indexes.size());

  auto delete_all_active = [&] {
    for (const ObservedPod* p : active) plan.delete_pods.push_back(p->name);
    active.clear();
  };
  const bool was_complete = IsConditionTrue(job, "Complete") || IsConditionTrue(job, "SuccessCriteriaMet");
  const bool was_failed = IsConditionTrue(job, "Failed") || IsConditionTrue(job, "FailureTarget");

  // Failure first, as upstream: a Job past its backoff limit fails even if it also succeeded.
  const std::optional<Time> deadline = ActiveDeadline(job, now);
  std::optional<Condition> failure;
  const std::string* fail_job_message = nullptr;
  for (size_t i = 0; i < pods.size() && fail_job_message == nullptr; ++i) {
    if (matches[i].action == PodFailureAction::kFailJob) fail_job_message = &matches[i].fail_job_message;
  }
  if (was_failed) {
    failure = Condition{"FailureTarget", "True", "", ""};
  } else if (!was_complete && fail_job_message != nullptr) {
    failure = Condition{"FailureTarget", "True", std::string(kPodFailurePolicyReason), *fail_job_message};
  } else if (!was_complete && (plan.failed > spec.backoff_limit || PastBackoffLimitOnFailure(spec, pods))) {
    failure = Condition{"FailureTarget", "True", std::string(kBackoffLimitExceeded), std::string(kBackoffLimitMessage)};
  } else if (!was_complete && deadline && now >= *deadline) {
    failure = Condition{"FailureTarget", "True", std::string(kDeadlineExceeded), std::string(kDeadlineExceededMessage)};
  } else if (!was_complete && spec.max_failed_indexes && failed_index_count > *spec.max_failed_indexes) {
    failure = Condition{"FailureTarget", "True", std::string(kMaxFailedIndexesExceeded),
                        std::string(kMaxFailedIndexesMessage)};
  } else if (!was_complete && failed_index_count > 0 &&
             failed_index_count + static_cast<int64_t>(succeeded_indexes.size()) >= *spec.completions) {
    failure = Condition{"FailureTarget", "True", std::string(kFailedIndexes), std::string(kFailedIndexesMessage)};
  }
  if (failure) {
    Condition c = *failure;
    for (std::string_view type : {"Failed", "FailureTarget"}) {
      if (IsConditionTrue(job, type)) {
        c.reason = ConditionField(job, type, "reason");
        c.message = ConditionField(job, type, "message");
        break;
      }
    }
    delete_all_active();
    plan.conditions.push_back(c);
    // Failed waits until every pod is terminal (the active ones are being deleted now).
    if (live == 0) {
      c.type = "Failed";
      plan.conditions.push_back(c);
    }
    plan.active = 0;
    return plan;
  }

  std::optional<Condition> success;
  const std::optional<std::string> policy_met =
      was_complete ? std::nullopt
                   : MatchSuccessPolicy(spec.success_policy, spec.completions.value_or(0),
                                        std::vector<int32_t>(succeeded_indexes.begin(), succeeded_indexes.end()));
  const Condition completions_reached{"SuccessCriteriaMet", "True", std::string(kCompletionsReached),
                                      std::string(kCompletionsReachedMessage)};
  if (was_complete) {
    success = completions_reached;
    for (std::string_view type : {"Complete", "SuccessCriteriaMet"}) {
      if (IsConditionTrue(job, type)) {
        success->reason = ConditionField(job, type, "reason");
        success->message = ConditionField(job, type, "message");
        break;
      }
    }
  } else if (policy_met) {
    success = Condition{"SuccessCriteriaMet", "True", std::string(kSuccessPolicyReason), *policy_met};
  } else if (spec.indexed       ? static_cast<int32_t>(succeeded_indexes.size()) >= *spec.completions
             : spec.completions ? plan.succeeded >= *spec.completions
                                : plan.succeeded > 0 && active.empty()) {
    success = completions_reached;
  }
  if (success) {
    Condition c = *success;
    delete_all_active();
    plan.conditions.push_back(c);
    if (live == 0) {
      c.type = "Complete";
      plan.conditions.push_back(c);
    }
    plan.active = 0;
    return plan;
  }

  plan.uncounted_deletions = true;  // from here on, deletions are a suspension or a scale-down
  if (spec.suspend) {
    delete_all_active();
    plan.conditions.push_back({"Suspended", "True", "JobSuspended", "Job suspended"});
    plan.active = 0;
    return plan;
  }
  if (IsConditionTrue(job, "Suspended")) {
    plan.conditions.push_back({"Suspended", "False", "JobResumed", "Job resumed"});
    plan.resumed = true;
  }
  plan.active_deadline = deadline;

  // Job-wide pod-failure backoff (without backoffLimitPerIndex): the Failed pods that
  // finished after the last success, the delay running from the latest of them.
  std::optional<Time> job_backoff_until;
  if (!spec.backoff_limit_per_index) {
    std::optional<Time> last_success;
    for (const ObservedPod& p : pods) {
      if (p.phase == "Succeeded" && (!last_success || p.finish_time > *last_success)) last_success = p.finish_time;
    }
    int32_t failures = 0;
    Time last_failure{};
    for (size_t i = 0; i < pods.size(); ++i) {
      const ObservedPod& p = pods[i];
      if (!is_failure(i) || (last_success && p.finish_time <= *last_success)) continue;
      ++failures;
      last_failure = std::max(last_failure, p.finish_time);
    }
    const Time until = last_failure + PodFailureBackoff(failures);
    if (failures > 0 && until > now) job_backoff_until = until;
  }

  if (spec.indexed) {
    // One live pod per index: extra live pods of an index are deleted (newest name last).
    std::set<int32_t> live_indexes;
    std::vector<const ObservedPod*> kept;
    for (const ObservedPod& p : pods) {
      if ((p.terminal() && !p.terminating) || !p.index) continue;
      if (*p.index >= *spec.completions || succeeded_indexes.count(*p.index) > 0 ||
          failed_indexes.count(*p.index) > 0 || !live_indexes.insert(*p.index).second) {
        if (!p.terminating) plan.delete_pods.push_back(p.name);
        continue;
      }
      if (!p.terminating) kept.push_back(&p);
    }
    int32_t live_count = static_cast<int32_t>(live_indexes.size());
    // Over parallelism: delete the highest indexes first.
    std::sort(kept.begin(), kept.end(), [](const ObservedPod* a, const ObservedPod* b) {
      return *a->index != *b->index ? *a->index > *b->index : a->name < b->name;
    });
    size_t k = 0;
    while (live_count > spec.parallelism && k < kept.size()) {
      plan.delete_pods.push_back(kept[k++]->name);
      --live_count;
    }
    plan.active = static_cast<int32_t>(kept.size() - k);
    std::vector<int32_t> pending;  // upstream firstPendingIndexes
    for (int32_t i = 0; i < *spec.completions && live_count < spec.parallelism &&
                        pending.size() < static_cast<size_t>(kMaxPodCreatesPerSync);
         ++i) {
      if (succeeded_indexes.count(i) > 0 || live_indexes.count(i) > 0 || failed_indexes.count(i) > 0) continue;
      pending.push_back(i);
      ++live_count;
    }
    if (job_backoff_until && !pending.empty()) {
      plan.backoff_until = job_backoff_until;
    } else if (!spec.backoff_limit_per_index) {
      plan.create_indexes = std::move(pending);
    } else {
      // Per index (upstream getPodCreationInfoForIndependentIndexes): the index's last failed
      // pod (highest failure + ignored count, then latest finish) sets its delay and count.
      std::map<int32_t, size_t> last_failed;  // index -> position in `pods`
      auto absolute = [](const ObservedPod* p) {
        return static_cast<int64_t>(p->failure_counts.failed) + p->failure_counts.ignored;
      };
      for (size_t j = 0; j < pods.size(); ++j) {
        const ObservedPod& p = pods[j];
        if (!is_failure(j) || !p.index) continue;
        auto [it, added] = last_failed.emplace(*p.index, j);
        const ObservedPod* last = &pods[it->second];
        if (!added &&
            std::make_pair(absolute(&p), p.finish_time) >= std::make_pair(absolute(last), last->finish_time)) {
          it->second = j;
        }
      }
      for (int32_t i : pending) {
        auto it = last_failed.find(i);
        if (it == last_failed.end()) {
          plan.create_indexes.push_back(i);
          plan.create_failure_counts.push_back({});
          continue;
        }
        const ObservedPod& last = pods[it->second];
        const bool ignored = !matches[it->second].counts;  // upstream getNewIndexFailureCounts
        const int64_t failures = std::min<int64_t>(absolute(&last) + 1, INT32_MAX);
        const Time until = last.finish_time + PodFailureBackoff(static_cast<int32_t>(failures));
        if (until > now) {
          if (!plan.backoff_until || until < *plan.backoff_until) plan.backoff_until = until;
          continue;
        }
        plan.create_indexes.push_back(i);
        auto next = [](int32_t n) { return static_cast<int32_t>(std::min<int64_t>(int64_t{n} + 1, INT32_MAX)); };
        plan.create_failure_counts.push_back(
            ignored ? IndexFailureCounts{last.failure_counts.failed, next(last.failure_counts.ignored)}
                    : IndexFailureCounts{next(last.failure_counts.failed), last.failure_counts.ignored});
      }
    }
  } else {
    int32_t want = spec.parallelism;
    if (spec.completions) want = std::min(want, std::max(0, *spec.completions - plan.succeeded));
    if (!spec.completions && plan.succeeded > 0) want = 0;
    int32_t live_count = live;
    // Over the wanted number: delete active pods, highest name first.
    for (auto it = active.rbegin(); it != active.rend() && live_count > want; ++it) {
      plan.delete_pods.push_back((*it)->name);
      --live_count;
    }
    plan.active = static_cast<int32_t>(active.size()) - (live - live_count);
    plan.create_count = std::min(std::max(0, want - live_count), kMaxPodCreatesPerSync);
    if (job_backoff_until && plan.create_count > 0) {
      plan.create_count = 0;
      plan.backoff_until = job_backoff_until;
    }
  }
  std::sort(plan.delete_pods.begin(), plan.delete_pods.end());
  return plan;
}

void WriteStatusCounts(const JobPlan& plan, Object* job) {
  Object& status = MutableObject(job, "status");
  status["active"] = plan.active;
  status["ready"] = plan.ready;
  status["terminating"] = plan.terminating;
  status["succeeded"] = plan.succeeded;
  status["failed"] = plan.failed;
  if (JobSpec::FromObject(*job).indexed) status["completedIndexes"] = plan.completed_indexes;
  if (plan.failed_indexes) status["failedIndexes"] = *plan.failed_indexes;
}

std::optional<int32_t> MinParallelism(const Object& job) {
  const Object& annotations = ObjectAt(ObjectAt(job, "metadata"), "annotations");
  auto it = annotations.find(kJobMinParallelismAnnotation);
  if (it == annotations.end() || !it->is_string()) return std::nullopt;
  const std::string& text = it->get_ref<const std::string&>();
  int32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::vector<PodSet> PodSets(const Object& job) {
  const JobSpec spec = JobSpec::FromObject(job);
  int32_t count = spec.parallelism;
  if (spec.completions && *spec.completions < count) count = *spec.completions;
  PodSet ps;
  ps.name = "main";
  ps.count = count;
  // Kueue's webhook refuses a value outside [1, count − 1]; berth does not validate the
  // annotation on the Job, so such a value is ignored and the Job is admitted whole.
  if (auto min = MinParallelism(job); min && *min > 0 && *min < count) ps.min_count = min;
  ps.template_spec = ObjectAt(ObjectAt(job, "spec"), "template");
  return {ps};
}

}  // namespace berth::controllers::jobs::batchjob
