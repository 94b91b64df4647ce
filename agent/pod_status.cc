#include "agent/pod_status.h"

#include <algorithm>

#include "api/unstructured.h"

namespace berth::agent {
namespace {

std::vector<ContainerRecord> Records(const api::Object& pod, const char* list, const char* waiting) {
  std::vector<ContainerRecord> out;
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return out;
  auto it = spec->find(list);
  if (it == spec->end() || !it->is_array()) return out;
  for (const auto& c : *it) {
    ContainerRecord r;
    r.name = api::StringAt(c, "name");
    r.image = api::StringAt(c, "image");
    r.waiting_reason = waiting;
    out.push_back(std::move(r));
  }
  return out;
}

bool Succeeded(const ContainerRecord& r) {
  return r.state == ContainerRecord::State::kTerminated && r.current && r.current->exit_code == 0;
}

std::string TerminatedReason(const ContainerExit& e) {
  if (e.lost) return kContainerStatusUnknownReason;
  if (!e.start_error.empty()) return "StartError";
  if (e.oom_killed) return "OOMKilled";
  return e.exit_code == 0 ? "Completed" : "Error";
}

api::Object TerminatedState(const ContainerExit& e) {
  api::Object t = {{"exitCode", e.exit_code},
                   {"reason", TerminatedReason(e)},
                   {"startedAt", FormatRfc3339(e.started_at)},
                   {"finishedAt", FormatRfc3339(e.finished_at)}};
  if (!e.start_error.empty()) t["message"] = e.start_error;
  if (e.lost) {
    t["message"] = e.lost_detail.empty() ? std::string(kContainerLostMessage)
                                         : std::string(kContainerLostMessage) + ": " + e.lost_detail;
  }
  return t;
}

api::Object ContainerStatus(const ContainerRecord& r) {
  api::Object state;
  switch (r.state) {
    case ContainerRecord::State::kWaiting: {
      api::Object w = {{"reason", r.waiting_reason}};
      if (!r.waiting_message.empty()) w["message"] = r.waiting_message;
      state["waiting"] = std::move(w);
      break;
    }
    case ContainerRecord::State::kRunning:
      state["running"] = {{"startedAt", FormatRfc3339(r.started_at)}};
      break;
    case ContainerRecord::State::kTerminated:
      state["terminated"] = TerminatedState(*r.current);
      break;
  }
  api::Object last = api::Object::object();
  if (r.last) last["terminated"] = TerminatedState(*r.last);
  return {{"name", r.name},         {"image", r.image},           {"imageID", ""},
          {"state", state},         {"lastState", last},          {"ready", r.Ready()},
          {"started", r.Started()}, {"restartCount", r.restart_count}};
}

std::string NameList(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? " " : "") + names[i];
  return s + "]";
}

}  // namespace

const char* PodPhaseName(PodPhase phase) {
  switch (phase) {
    case PodPhase::kPending:
      return "Pending";
    case PodPhase::kRunning:
      return "Running";
    case PodPhase::kSucceeded:
      return "Succeeded";
    case PodPhase::kFailed:
      return "Failed";
  }
  return "Unknown";
}

std::string FormatGoDuration(Duration d) {
  int64_t s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (s < 60) return std::to_string(s) + "s";
  int64_t h = s / 3600, m = (s % 3600) / 60, sec = s % 60;
  std::string out;
  if (h > 0) out += std::to_string(h) + "h";
  return out + std::to_string(m) + "m" + std::to_string(sec) + "s";
}

PodLifecycle::PodLifecycle(const api::Object& pod) {
  const std::string policy = api::NestedString(pod, {"spec", "restartPolicy"});
  policy_ = policy == "Never"       ? RestartPolicy::kNever
            : policy == "OnFailure" ? RestartPolicy::kOnFailure
                                    : RestartPolicy::kAlways;
  pod_ref_ = api::Name(pod) + "_" + api::Namespace(pod) + "(" + api::Uid(pod) + ")";
  init_ = Records(pod, "initContainers", "PodInitializing");
  regular_ = Records(pod, "containers", init_.empty() ? "ContainerCreating" : "PodInitializing");
}

size_t PodLifecycle::init_done() const {
  size_t i = 0;
  while (i < init_.size() && Succeeded(init_[i])) ++i;
  return i;
}

bool PodLifecycle::InitFailedForGood() const {
  if (policy_ != RestartPolicy::kNever) return false;
  return std::any_of(init_.begin(), init_.end(), [](const ContainerRecord& r) {
    return r.state == ContainerRecord::State::kTerminated && r.current && r.current->exit_code != 0;
  });
}

std::vector<std::string> PodLifecycle::ContainersToStart(Time now) const {
  std::vector<std::string> out;
  if (terminating_ || InitFailedForGood()) return out;
  auto due = [&](const ContainerRecord& r) {
    if (r.state == ContainerRecord::State::kRunning) return false;
    if (r.state == ContainerRecord::State::kTerminated) return r.restart_at && *r.restart_at <= now;
    if (r.config_error && !r.restart_at) return false;
    return !r.restart_at || *r.restart_at <= now;
  };
  size_t done = init_done();
  if (done < init_.size()) {
    if (due(init_[done])) out.push_back(init_[done].name);
    return out;
  }
  for (const auto& r : regular_) {
    if (due(r)) out.push_back(r.name);
  }
  return out;
}

std::optional<Time> PodLifecycle::NextRestartTime() const {
  std::optional<Time> t;
  for (const auto* list : {&init_, &regular_}) {
    for (const auto& r : *list) {
      if (r.state != ContainerRecord::State::kRunning && r.restart_at && (!t || *r.restart_at < *t)) {
        t = r.restart_at;
      }
    }
  }
  return t;
}

ContainerRecord* PodLifecycle::Find(const std::string& name, bool* is_init) {
  for (auto& r : init_) {
    if (r.name == name) {
      *is_init = true;
      return &r;
    }
  }
  for (auto& r : regular_) {
    if (r.name == name) {
      *is_init = false;
      return &r;
    }
  }
  return nullptr;
}

void PodLifecycle::SetProbeResults(const std::string& name, std::optional<bool> started, std::optional<bool> ready) {
  bool is_init;
  ContainerRecord* r = Find(name, &is_init);
  if (r == nullptr || r->state != ContainerRecord::State::kRunning) return;
  r->probe_started = started;
  r->probe_ready = ready;
}

void PodLifecycle::Started(const std::string& name, Time at) {
  bool is_init;
  ContainerRecord* r = Find(name, &is_init);
  BERTH_CHECK_MSG(r != nullptr, "unknown container " + name);
  if (r->ever_started) {
    // A restart: kubelet's backoff.Next — reset after 2 × max idle, else double up to max.
    ++r->restart_count;
    if (r->backoff == Duration::zero() || at - r->backoff_updated > 2 * kMaxRestartBackoff) {
      r->backoff = kInitialRestartBackoff;
    } else {
      r->backoff = std::min(2 * r->backoff, kMaxRestartBackoff);
    }
    r->backoff_updated = at;
  }
  r->ever_started = true;
  r->state = ContainerRecord::State::kRunning;
  r->probe_ready.reset();
  r->probe_started.reset();
  r->config_error = false;
  r->started_at = at;
  r->restart_at.reset();
  r->waiting_reason.clear();
  r->waiting_message.clear();
  if (r->current) r->last = r->current;
  r->current.reset();
}

bool PodLifecycle::ShouldRestart(bool is_init, const ContainerExit& exit) const {
  if (terminating_) return false;
  bool failed = exit.exit_code != 0 || !exit.start_error.empty();
  if (is_init) return failed && policy_ != RestartPolicy::kNever;
  switch (policy_) {
    case RestartPolicy::kAlways:
      return true;
    case RestartPolicy::kOnFailure:
      return failed;
    case RestartPolicy::kNever:
      return false;
  }
  return false;
}

void PodLifecycle::Exited(const std::string& name, const ContainerExit& exit) {
  bool is_init;
  ContainerRecord* r = Find(name, &is_init);
  BERTH_CHECK_MSG(r != nullptr, "unknown container " + name);
  if (r->state != ContainerRecord::State::kRunning && !exit.start_error.empty()) {
    // A start error reported without a start: the attempt is a run all the same (the
    // kubelet's container was created, then failed to start), so it counts as a restart
    // and moves the backoff like any other run.
    Started(name, exit.started_at);
  }
  if (r->current) r->last = r->current;
  r->current = exit;
  r->state = ContainerRecord::State::kTerminated;
  r->restart_at.reset();
  if (!ShouldRestart(is_init, exit)) return;
  bool in_backoff = r->backoff != Duration::zero() && exit.finished_at - r->backoff_updated <= 2 * kMaxRestartBackoff;
  if (!in_backoff) {
    r->restart_at = exit.finished_at;  // first restart: at once
    return;
  }
  // The kubelet shows the last run as lastState and the container as waiting.
  r->restart_at = exit.finished_at + r->backoff;
  r->state = ContainerRecord::State::kWaiting;
  r->last = r->current;
  r->current.reset();
  r->waiting_reason = "CrashLoopBackOff";
  r->waiting_message =
      "back-off " + FormatGoDuration(r->backoff) + " restarting failed container=" + r->name + " pod=" + pod_ref_;
}

void PodLifecycle::Lost(const std::string& name, Time started_at, Time now, const std::string& detail) {
  Started(name, started_at);
  ContainerExit exit;
  exit.exit_code = kContainerLostExitCode;
  exit.lost = true;
  exit.lost_detail = detail;
  exit.started_at = started_at;
  exit.finished_at = now;
  Exited(name, exit);
}

void PodLifecycle::ConfigError(const std::string& name, const std::string& message, const std::string& reason,
                               std::optional<Time> retry_at) {
  bool is_init;
  ContainerRecord* r = Find(name, &is_init);
  BERTH_CHECK_MSG(r != nullptr, "unknown container " + name);
  r->state = ContainerRecord::State::kWaiting;
  r->config_error = true;
  r->waiting_reason = reason;
  r->waiting_message = message;
  r->restart_at = retry_at;
}

bool PodLifecycle::AnyRunning() const {
  for (const auto* list : {&init_, &regular_}) {
    for (const auto& r : *list) {
      if (r.state == ContainerRecord::State::kRunning) return true;
    }
  }
  return false;
}

PodPhase PodLifecycle::Phase() const {
  if (InitFailedForGood()) return PodPhase::kFailed;
  if (init_done() < init_.size()) return PodPhase::kPending;
  int running = 0, waiting = 0, stopped = 0, succeeded = 0;
  for (const auto& r : regular_) {
    switch (r.state) {
      case ContainerRecord::State::kRunning:
        ++running;
        break;
      case ContainerRecord::State::kTerminated:
        ++stopped;
        if (r.current->exit_code == 0) ++succeeded;
        break;
      case ContainerRecord::State::kWaiting:
        // A container waiting to restart counts as stopped (it has a lastState).
        if (r.last) {
          ++stopped;
        } else {
          ++waiting;
        }
        break;
    }
  }
  if (waiting > 0) return PodPhase::kPending;
  if (running > 0) return PodPhase::kRunning;
  if (stopped > 0) {
    if (policy_ == RestartPolicy::kAlways) return terminating_ ? PodPhase::kFailed : PodPhase::kRunning;
    if (stopped == succeeded) return PodPhase::kSucceeded;
    if (policy_ == RestartPolicy::kNever || terminating_) return PodPhase::kFailed;
    return PodPhase::kRunning;
  }
  return PodPhase::kPending;
}

bool PodLifecycle::Finished() const {
  if (AnyRunning()) return false;
  if (terminating_) return true;
  PodPhase p = Phase();
  return p == PodPhase::kSucceeded || p == PodPhase::kFailed;
}

api::Object BuildPodStatus(const PodLifecycle& lc, const api::Object& previous, const PodAddresses& addresses,
                           Time now) {
  PodPhase phase = lc.Phase();
  bool terminal = phase == PodPhase::kSucceeded || phase == PodPhase::kFailed;

  std::map<std::string, api::Object> old_conditions;
  if (previous.is_object()) {
    if (auto it = previous.find("conditions"); it != previous.end() && it->is_array()) {
      for (const auto& c : *it) old_conditions[api::StringAt(c, "type")] = c;
    }
  }
  auto condition = [&](const std::string& type, bool ok, const std::string& reason, const std::string& message) {
    std::string status = ok ? "True" : "False";
    api::Object c = {{"type", type}, {"status", status}, {"lastProbeTime", nullptr}};
    auto old = old_conditions.find(type);
    c["lastTransitionTime"] = old != old_conditions.end() && api::StringAt(old->second, "status") == status &&
                                      old->second.contains("lastTransitionTime")
                                  ? old->second["lastTransitionTime"]
                                  : api::Object(FormatRfc3339(now));
    if (!reason.empty()) c["reason"] = reason;
    if (!message.empty()) c["message"] = message;
    return c;
  };

  std::vector<std::string> incomplete;
  for (const auto& r : lc.init_containers()) {
    if (!Succeeded(r)) incomplete.push_back(r.name);
  }
  std::vector<std::string> unready;
  for (const auto& r : lc.containers()) {
    if (!r.Ready()) unready.push_back(r.name);
  }
  api::Object conditions = api::Object::array();
  if (incomplete.empty()) {
    conditions.push_back(condition("Initialized", true, "", ""));
  } else {
    conditions.push_back(condition("Initialized", false,
                                   phase == PodPhase::kSucceeded ? "PodCompleted" : "ContainersNotInitialized",
                                   "containers with incomplete status: " + NameList(incomplete)));
  }
  for (const char* type : {"Ready", "ContainersReady"}) {
    if (terminal) {
      conditions.push_back(condition(type, false, "PodCompleted", ""));
    } else if (unready.empty()) {
      conditions.push_back(condition(type, true, "", ""));
    } else {
      conditions.push_back(
          condition(type, false, "ContainersNotReady", "containers with unready status: " + NameList(unready)));
    }
  }
  if (auto old = old_conditions.find("PodScheduled"); old != old_conditions.end()) {
    conditions.push_back(old->second);
  } else {
    conditions.push_back(condition("PodScheduled", true, "", ""));
  }

  api::Object status = {{"phase", PodPhaseName(phase)}, {"conditions", conditions}};
  if (!addresses.host_ip.empty()) {
    status["hostIP"] = addresses.host_ip;
    status["hostIPs"] = api::Object::array({{{"ip", addresses.host_ip}}});
  }
  if (!addresses.pod_ip.empty()) {
    status["podIP"] = addresses.pod_ip;
    status["podIPs"] = api::Object::array({{{"ip", addresses.pod_ip}}});
  }
  status["startTime"] =
      previous.is_object() && previous.contains("startTime") ? previous["startTime"] : api::Object(FormatRfc3339(now));
  if (!lc.init_containers().empty()) {
    api::Object init = api::Object::array();
    for (const auto& r : lc.init_containers()) init.push_back(ContainerStatus(r));
    status["initContainerStatuses"] = std::move(init);
  }
  api::Object regular = api::Object::array();
  for (const auto& r : lc.containers()) regular.push_back(ContainerStatus(r));
  status["containerStatuses"] = std::move(regular);
  return status;
}

void MergeForeignConditions(api::Object* status, const api::Object& current) {
  auto owned = [](const std::string& type) {
    return type == "Initialized" || type == "Ready" || type == "ContainersReady" || type == "PodReadyToStartContainers";
  };
  if (!current.is_object() || !current.contains("conditions") || !current["conditions"].is_array()) return;
  api::Object& conditions = (*status)["conditions"];
  api::Object merged = api::Object::array();
  for (const auto& c : conditions) {
    if (owned(api::StringAt(c, "type"))) merged.push_back(c);
  }
  bool scheduled_known = false;
  for (const auto& c : current["conditions"]) {
    if (owned(api::StringAt(c, "type"))) continue;
    scheduled_known |= api::StringAt(c, "type") == "PodScheduled";
    merged.push_back(c);
  }
  if (!scheduled_known) {  // not written by anyone yet: ours (BuildPodStatus's PodScheduled=True)
    for (const auto& c : conditions) {
      if (api::StringAt(c, "type") == "PodScheduled") merged.push_back(c);
    }
  }
  conditions = std::move(merged);
}

namespace {

const api::Object& StateOf(const api::Object& container_status, const char* state) {
  return api::NestedField(container_status, {"state", state});
}
bool Terminated(const api::Object& container_status) { return StateOf(container_status, "terminated").is_object(); }
bool TerminatedBefore(const api::Object& container_status) {
  return api::NestedField(container_status, {"lastState", "terminated"}).is_object();
}
int64_t ExitCodeIn(const api::Object& terminated) {
  const api::Object& code = api::Field(terminated, "exitCode");
  return code.is_number_integer() ? code.get<int64_t>() : -1;
}

// hasPodInitialized: no init containers, or the last one runs or has exited 0 (now or last time).
bool PodInitialized(const api::Object& spec, const api::Object& init_statuses) {
  const api::Object& inits = api::Field(spec, "initContainers");
  if (!inits.is_array() || inits.empty()) return true;
  const std::string last = api::StringAt(inits.back(), "name");
  if (!init_statuses.is_array()) return false;
  for (const api::Object& cs : init_statuses) {
    if (api::StringAt(cs, "name") != last) continue;
    if (TerminatedBefore(cs)) return ExitCodeIn(api::NestedField(cs, {"lastState", "terminated"})) == 0;
    if (Terminated(cs)) return ExitCodeIn(StateOf(cs, "terminated")) == 0;
    return StateOf(cs, "running").is_object();
  }
  return false;
}

void MarkStatusUnknown(api::Object& container_status) {
  container_status["state"] = {{"terminated",
                                {{"reason", kContainerStatusUnknownReason},
                                 {"message", kContainerLostMessage},
                                 {"exitCode", kContainerLostExitCode}}}};
}

}  // namespace

void TerminatePodStatus(const api::Object& spec, api::Object* status) {
  const std::string phase = api::StringAt(*status, "phase");
  if (phase != "Succeeded" && phase != "Failed") (*status)["phase"] = "Failed";
  if (auto conditions = status->find("conditions"); conditions != status->end() && conditions->is_array()) {
    for (api::Object& c : *conditions) {
      const std::string type = api::StringAt(c, "type");
      if ((type == "Ready" || type == "ContainersReady") && api::StringAt(c, "status") == "False") {
        c["reason"] = "PodCompleted";
        c.erase("message");
      }
    }
  }
  const bool initialized = PodInitialized(spec, api::Field(*status, "initContainerStatuses"));
  auto found = status->find("initContainerStatuses");
  if (found != status->end() && found->is_array() && !found->empty()) {
    api::Object& inits = *found;
    // initializedContainers: up to the last that ever tried to start, the first at least.
    size_t tried = 1;
    for (size_t i = inits.size(); i > 0; --i) {
      const api::Object& cs = inits[i - 1];
      if (!StateOf(cs, "waiting").is_object() || TerminatedBefore(cs)) {
        tried = i;
        break;
      }
    }
    for (size_t i = 0; i < tried; ++i) {
      if (inits[i].is_object() && !Terminated(inits[i])) MarkStatusUnknown(inits[i]);
    }
  }
  if (!initialized) return;
  auto regular = status->find("containerStatuses");
  if (regular == status->end() || !regular->is_array()) return;
  for (api::Object& cs : *regular) {
    if (cs.is_object() && !Terminated(cs)) MarkStatusUnknown(cs);
  }
}

}  // namespace berth::agent
