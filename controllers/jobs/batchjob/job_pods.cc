#include "controllers/jobs/batchjob/job_pods.h"

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

std::optional<int32_t> ParseIndex(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  int32_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
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
  s.backoff_limit = static_cast<int32_t>(IntAt(spec, "backoffLimit", 6));
  s.suspend = BoolAt(spec, "suspend", false);
  s.restart_on_failure = StringAt(ObjectAt(ObjectAt(spec, "template"), "spec"), "restartPolicy") == "OnFailure";
  if (Field(spec, "activeDeadlineSeconds").is_number_integer()) {
    s.active_deadline_seconds = IntAt(spec, "activeDeadlineSeconds", 0);
  }
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

Object NewPod(const Object& job, std::optional<int32_t> index, std::string_view suffix) {
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
    MutableObject(&metadata, "annotations")[std::string(kJobCompletionIndexAnnotation)] = std::to_string(*index);
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
  p.index = ParseIndex(StringAt(ObjectAt(ObjectAt(pod, "metadata"), "annotations"), kJobCompletionIndexAnnotation));
  p.terminating = HasField(ObjectAt(pod, "metadata"), "deletionTimestamp");
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
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
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

  int32_t observed_succeeded = 0, observed_failed = 0;
  std::set<int32_t> succeeded_indexes;
  std::vector<const ObservedPod*> active;
  int32_t live = 0;  // active + terminating: pods that still hold their slot
  for (const ObservedPod& p : pods) {
    if (p.phase == "Succeeded") {
      ++observed_succeeded;
      if (p.index && (!spec.completions || *p.index < *spec.completions)) succeeded_indexes.insert(*p.index);
    } else if (p.phase == "Failed") {
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
  if (spec.indexed) observed_succeeded = static_cast<int32_t>(succeeded_indexes.size());
  plan.succeeded = std::max<int32_t>(observed_succeeded, static_cast<int32_t>(IntAt(status, "succeeded", 0)));
  plan.failed = std::max<int32_t>(observed_failed, static_cast<int32_t>(IntAt(status, "failed", 0)));
  if (spec.indexed) {
    plan.completed_indexes =
        FormatIndexIntervals(std::vector<int32_t>(succeeded_indexes.begin(), succeeded_indexes.end()));
  }

  auto delete_all_active = [&] {
    for (const ObservedPod* p : active) plan.delete_pods.push_back(p->name);
    active.clear();
  };
  const bool was_complete = IsConditionTrue(job, "Complete") || IsConditionTrue(job, "SuccessCriteriaMet");
  const bool was_failed = IsConditionTrue(job, "Failed") || IsConditionTrue(job, "FailureTarget");

  // Failure first, as upstream: a Job past its backoff limit fails even if it also succeeded.
  const std::optional<Time> deadline = ActiveDeadline(job, now);
  std::optional<Condition> failure;
  if (was_failed) {
    failure = Condition{"FailureTarget", "True", "", ""};
  } else if (!was_complete && (plan.failed > spec.backoff_limit || PastBackoffLimitOnFailure(spec, pods))) {
    failure = Condition{"FailureTarget", "True", std::string(kBackoffLimitExceeded), std::string(kBackoffLimitMessage)};
  } else if (!was_complete && deadline && now >= *deadline) {
    failure = Condition{"FailureTarget", "True", std::string(kDeadlineExceeded), std::string(kDeadlineExceededMessage)};
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

  bool success = false;
  if (spec.indexed) {
    success = static_cast<int32_t>(succeeded_indexes.size()) >= *spec.completions;
  } else if (spec.completions) {
    success = plan.succeeded >= *spec.completions;
  } else {
    success = plan.succeeded > 0 && active.empty();
  }
  if (was_complete || success) {
    Condition c{"SuccessCriteriaMet", "True", std::string(kCompletionsReached),
                std::string(kCompletionsReachedMessage)};
    delete_all_active();
    plan.conditions.push_back(c);
    if (live == 0) {
      c.type = "Complete";
      plan.conditions.push_back(c);
    }
    plan.active = 0;
    return plan;
  }

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

  if (spec.indexed) {
    // One live pod per index: extra live pods of an index are deleted (newest name last).
    std::set<int32_t> live_indexes;
    std::vector<const ObservedPod*> kept;
    for (const ObservedPod& p : pods) {
      if ((p.terminal() && !p.terminating) || !p.index) continue;
      if (*p.index >= *spec.completions || succeeded_indexes.count(*p.index) > 0 ||
          !live_indexes.insert(*p.index).second) {
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
    for (int32_t i = 0; i < *spec.completions && live_count < spec.parallelism; ++i) {
      if (succeeded_indexes.count(i) > 0 || live_indexes.count(i) > 0) continue;
      plan.create_indexes.push_back(i);
      ++live_count;
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
    plan.create_count = std::max(0, want - live_count);
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
}

std::vector<PodSet> PodSets(const Object& job) {
  const JobSpec spec = JobSpec::FromObject(job);
  int32_t count = spec.parallelism;
  if (spec.completions && *spec.completions < count) count = *spec.completions;
  PodSet ps;
  ps.name = "main";
  ps.count = count;
  ps.template_spec = ObjectAt(ObjectAt(job, "spec"), "template");
  return {ps};
}

}  // namespace berth::controllers::jobs::batchjob
