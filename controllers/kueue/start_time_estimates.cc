#include "controllers/kueue/start_time_estimates.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "api/unstructured.h"

namespace berth::controllers::kueue {

uint64_t RunShape(const api::Object& workload) {
  std::string key;
  const api::Object& pod_sets = api::NestedField(workload, {"spec", "podSets"});
  if (!pod_sets.is_array()) return std::hash<std::string>()(key);
  for (const api::Object& ps : pod_sets) {
    key += api::NestedString(ps, {"name"}) + "\x1f" + api::NestedField(ps, {"count"}).dump() + "\x1f";
    for (const char* list : {"initContainers", "containers"}) {
      const api::Object& containers = api::NestedField(ps, {"template", "spec", list});
      if (!containers.is_array()) continue;
      for (const api::Object& c : containers) key += api::NestedField(c, {"resources", "requests"}).dump() + "\x1f";
    }
    key += "\x1e";
  }
  return std::hash<std::string>()(key);
}

void RunTimeHistory::Record(const std::string& local_queue, uint64_t shape, Duration run_time) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_pair(local_queue, shape);
  auto it = samples_.find(key);
  if (it == samples_.end()) {
    if (samples_.size() >= kRunTimeShapes) {
      samples_.erase(lru_.back());
      lru_.pop_back();
    }
    lru_.push_front(key);
    it = samples_.emplace(key, Samples{}).first;
    it->second.lru = lru_.begin();
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
  }
  Samples& s = it->second;
  const double secs = std::chrono::duration<double>(run_time).count();
  if (s.seconds.size() < kRunTimeSamples) {
    s.seconds.push_back(secs);
  } else {
    s.seconds[s.next] = secs;
  }
  s.next = (s.next + 1) % kRunTimeSamples;
}

std::optional<admission::RunTime> RunTimeHistory::Lookup(const std::string& local_queue, uint64_t shape) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = samples_.find({local_queue, shape});
  if (it == samples_.end() || it->second.seconds.empty()) return std::nullopt;
  const std::vector<double>& v = it->second.seconds;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double spread = mean / 2;
  if (v.size() > 1) {
    double var = 0;
    for (double x : v) var += (x - mean) * (x - mean);
    spread = std::sqrt(var / static_cast<double>(v.size() - 1));
  }
  auto dur = [](double s) { return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s)); };
  return admission::RunTime{dur(mean), dur(spread), admission::RunTimeSource::kHistory};
}

size_t RunTimeHistory::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_.size();
}

admission::RunTime RunTimeOf(const api::Object& workload, std::optional<Duration> job_deadline,
                             const RunTimeHistory& history) {
  const api::Object& spec = api::NestedField(workload, {"spec"});
  const api::Object& max = api::NestedField(spec, {"maximumExecutionTimeSeconds"});
  if (max.is_number_integer() && max.get<int64_t>() > 0) {
    // Kueue deactivates it once max - accumulatedPastExecutionTimeSeconds
    // has passed since this admission.
    const api::Object& past = api::NestedField(workload, {"status", "accumulatedPastExecutionTimeSeconds"});
    const int64_t left = max.get<int64_t>() - (past.is_number_integer() ? past.get<int64_t>() : 0);
    return {std::chrono::seconds(std::max<int64_t>(left, 0)), {}, admission::RunTimeSource::kMaxExecutionTime};
  }
  if (job_deadline && *job_deadline > Duration::zero()) {
    return {*job_deadline, {}, admission::RunTimeSource::kActiveDeadline};
  }
  // Every podSet's pods bounded: the Workload ends by the largest bound.
  const api::Object& pod_sets = api::NestedField(spec, {"podSets"});
  int64_t pod_deadline = 0;
  bool all = pod_sets.is_array() && !pod_sets.empty();
  if (all) {
    for (const api::Object& ps : pod_sets) {
      const api::Object& d = api::NestedField(ps, {"template", "spec", "activeDeadlineSeconds"});
      if (!d.is_number_integer() || d.get<int64_t>() <= 0) {
        all = false;
        break;
      }
      pod_deadline = std::max(pod_deadline, d.get<int64_t>());
    }
  }
  if (all) return {std::chrono::seconds(pod_deadline), {}, admission::RunTimeSource::kActiveDeadline};
  const std::string lq = api::NestedString(workload, {"metadata", "namespace"}) + "/" +
                         api::NestedString(spec, {"queueName"});
  if (auto h = history.Lookup(lq, RunShape(workload))) return *h;
  return {};
}

bool EstimateWorthWriting(const WrittenEstimate* written, const api::Condition& c, std::optional<Time> start,
                          Time now) {
  if (written == nullptr) return !start || *start - now >= kEstimateRewriteMin;
  if (written->condition.status != c.status || written->condition.reason != c.reason) return true;
  if (start && written->start) {
    const Duration moved = *start > *written->start ? *start - *written->start : *written->start - *start;
    return moved > std::max<Duration>(kEstimateRewriteMin, (*start - now) / 10);
  }
  return written->condition.message != c.message;
}

bool EstimateInputsChanged(const api::Object& old_workload, const api::Object& workload) {
  if (api::NestedField(old_workload, {"spec"}) != api::NestedField(workload, {"spec"})) return true;
  for (const char* field : {"admission", "requeueState", "reclaimablePods"}) {
    if (api::NestedField(old_workload, {"status", field}) != api::NestedField(workload, {"status", field})) return true;
  }
  for (const char* type : {"QuotaReserved", "Admitted", "Evicted", "Finished", "PodsReady"}) {
    if (api::ConditionField(old_workload, type, "status") != api::ConditionField(workload, type, "status")) return true;
  }
  return false;
}

std::string HumanDuration(Duration d) {
  int64_t s = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(d).count());
  if (s < 60) return fmt::format("{}s", s);
  const int64_t m = (s + 30) / 60;
  if (m < 60) return fmt::format("{}m", m);
  const int64_t h = m / 60;
  if (h < 48) return m % 60 ? fmt::format("{}h{}m", h, m % 60) : fmt::format("{}h", h);
  return fmt::format("{}d{}h", h / 24, h % 24);
}

namespace {

std::string SourceWords(admission::RunTimeSource s) {
  switch (s) {
    case admission::RunTimeSource::kMaxExecutionTime:
      return "run times from kueue.x-k8s.io/max-exec-time-seconds";
    case admission::RunTimeSource::kActiveDeadline:
      return "run times from activeDeadlineSeconds";
    case admission::RunTimeSource::kHistory:
      return "run times learned from finished workloads of the same LocalQueue and shape";
    case admission::RunTimeSource::kUnknown:
      break;
  }
  return "run times unknown";
}

std::string Blockers(const admission::UnknownBlockers& b) {
  std::string out;
  const size_t shown = std::min<size_t>(b.keys.size(), 5);
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + b.keys[i];
  const size_t total = std::max(b.total, b.keys.size());
  if (total > shown) out += fmt::format(" and {} more", total - shown);
  return out;
}

}  // namespace

api::Condition EstimatedStartCondition(const admission::StartEstimate* e, const admission::UnknownBlockers& blockers,
                                       bool hit_limit, Time now) {
  if (e == nullptr) {
    if (blockers.limited) {
      return {kEstimatedStartCondition, "False", "ReplayLimit",
              "No estimate: its cohort tree's backlog is deeper than one replay looks (it stopped before reaching "
              "this workload)"};
    }
    if (hit_limit || blockers.keys.empty()) {
      return {kEstimatedStartCondition, "False", "BeyondHorizon",
              "No estimate: the replay of the queue stopped before reaching this workload"};
    }
    return {kEstimatedStartCondition, "False", "UnknownRunTime",
            "No estimate: it waits for workloads whose run time is unknown: " + Blockers(blockers) +
                " (set kueue.x-k8s.io/max-exec-time-seconds on their jobs)"};
  }
  const std::string in = HumanDuration(e->start - now);
  if (!e->source) {
    return {kEstimatedStartCondition, "True", "RequeueBackoff",
            fmt::format("Expected to start at {} (in {}), when its requeue backoff ends", FormatRfc3339(e->start), in)};
  }
  std::string when = e->upper_bound ? fmt::format("Expected to start by {} (in at most {})", FormatRfc3339(e->start), in)
                                    : fmt::format("Expected to start at {} (in {}{})", FormatRfc3339(e->start), in,
                                                  e->uncertainty > std::chrono::seconds(0)
                                                      ? " ± " + HumanDuration(e->uncertainty)
                                                      : "");
  return {kEstimatedStartCondition, "True", std::string(admission::RunTimeSourceName(*e->source)),
          fmt::format("{}, after {} ends; {}", when, e->after, SourceWords(*e->source))};
}

api::Object EstimateJson(const admission::StartEstimate* e, const admission::UnknownBlockers& blockers, Time now) {
  if (e == nullptr) {
    api::Object waits = api::Object::array();
    for (const std::string& b : blockers.keys) waits.push_back(b);
    api::Object out = {{"source", blockers.limited ? "ReplayLimit" : "Unknown"}, {"waitsFor", std::move(waits)}};
    if (blockers.total > blockers.keys.size()) out["waitsForTotal"] = blockers.total;
    return out;
  }
  auto secs = [](Duration d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); };
  api::Object out = {{"time", FormatRfc3339(e->start)},
                     {"waitSeconds", std::max<int64_t>(0, secs(e->start - now))},
                     {"uncertaintySeconds", secs(e->uncertainty)},
                     {"source", e->source ? std::string(admission::RunTimeSourceName(*e->source)) : "RequeueBackoff"},
                     {"upperBound", e->upper_bound}};
  if (!e->after.empty()) out["after"] = e->after;
  return out;
}

}  // namespace berth::controllers::kueue
