#include "controllers/jobs/jobset/jobset_children.h"

#include <algorithm>
#include <map>
#include <openssl/evp.h>
#include <set>

#include "api/jobset_webhook.h"
#include "api/regexp.h"

namespace berth::controllers::jobs::jobset {

using namespace api;  // NOLINT(build/namespaces): objects, accessors and conditions

namespace {

constexpr std::string_view kFailedJobsMessage = "jobset failed due to one or more job failures";
constexpr std::string_view kReachedMaxRestartsMessage = "jobset failed due to reaching max number of restarts";
constexpr std::string_view kFailJobSetActionMessage = "jobset failed due to FailJobSet action";

int32_t Replicas(const Object& rjob) { return static_cast<int32_t>(IntAt(rjob, "replicas", 1)); }
std::string GroupName(const Object& rjob) { return StringAt(rjob, "groupName", "default"); }
const Object& RJobs(const Object& jobset) { return ArrayAt(ObjectAt(jobset, "spec"), "replicatedJobs"); }

// Pods per Job: min(parallelism, completions), parallelism default 1.
int32_t PodsPerJob(const Object& job_spec) {
  int64_t parallelism = IntAt(job_spec, "parallelism", 1);
  if (Field(job_spec, "completions").is_number_integer()) {
    parallelism = std::min(parallelism, IntAt(job_spec, "completions", 0));
  }
  return static_cast<int32_t>(parallelism);
}

bool DnsHostnames(const Object& jobset) {
  return BoolAt(ObjectAt(ObjectAt(jobset, "spec"), "network"), "enableDNSHostnames", true);
}

bool JobFinished(const Object& job, std::string_view* type) {
  for (std::string_view t : {"Complete", "Failed"}) {
    if (IsConditionTrue(job, t)) {
      if (type != nullptr) *type = t;
      return true;
    }
  }
  return false;
}

int32_t RestartAttempt(const Object& job) {
  std::string v = StringAt(ObjectAt(ObjectAt(job, "metadata"), "labels"), kRestartsKey, "0");
  try {
    return std::stoi(v);
  } catch (...) {
    return 0;
  }
}

std::string JobRJobName(const Object& job) {
  return StringAt(ObjectAt(ObjectAt(job, "metadata"), "labels"), kReplicatedJobNameKey);
}

bool ListContains(const Object& list, std::string_view value) {
  for (const Object& v : list) {
    if (v.is_string() && v.get<std::string>() == value) return true;
  }
  return false;
}

void Label(Object* obj_meta_owner, const std::map<std::string, std::string>& kv) {
  Object& meta = MutableObject(obj_meta_owner, "metadata");
  Object& labels = MutableObject(&meta, "labels");
  Object& annotations = MutableObject(&meta, "annotations");
  for (const auto& [k, v] : kv) {
    labels[k] = v;
    annotations[k] = v;
  }
}

}  // namespace

void ApplyDefaults(Object* jobset) {
  api::DefaultJobSet(jobset);
  Object& spec = MutableObject(jobset, "spec");
  for (Object& rjob : MutableArray(&spec, "replicatedJobs")) {
    if (!HasField(rjob, "replicas")) rjob["replicas"] = 1;
    if (!HasField(rjob, "groupName")) rjob["groupName"] = "default";
  }
  if (HasField(spec, "failurePolicy")) {
    Object& failure = MutableObject(&spec, "failurePolicy");
    if (!HasField(failure, "restartStrategy")) failure["restartStrategy"] = "Recreate";
  }
}

std::string Subdomain(const Object& jobset) {
  std::string s = StringAt(ObjectAt(ObjectAt(jobset, "spec"), "network"), "subdomain");
  return s.empty() ? api::Name(jobset) : s;
}

std::string ChildJobName(std::string_view jobset, std::string_view replicated_job, int32_t job_index) {
  return std::string(jobset) + "-" + std::string(replicated_job) + "-" + std::to_string(job_index);
}

std::string JobKey(std::string_view ns, std::string_view job_name) {
  std::string input = std::string(ns) + "/" + std::string(job_name);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(input.data(), input.size(), digest, &len, EVP_sha1(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

Object ChildJob(const Object& jobset, size_t rjob_index, int32_t job_index) {
  const Object& rjobs = RJobs(jobset);
  const Object& rjob = rjobs.at(rjob_index);
  const std::string& js_name = api::Name(jobset);
  const std::string rjob_name = StringAt(rjob, "name");
  const std::string job_name = ChildJobName(js_name, rjob_name, job_index);
  const std::string group = GroupName(rjob);

  int32_t global_replicas = 0, global_index = 0, group_replicas = 0, group_index = 0;
  for (size_t i = 0; i < rjobs.size(); ++i) {
    int32_t r = Replicas(rjobs[i]);
    global_replicas += r;
    if (i < rjob_index) global_index += r;
    if (GroupName(rjobs[i]) == group) {
      group_replicas += r;
      if (i < rjob_index) group_index += r;
    }
  }
  global_index += job_index;
  group_index += job_index;

  std::map<std::string, std::string> kv = {
      {std::string(kJobSetNameKey), js_name},
      {std::string(kJobSetUidKey), api::Uid(jobset)},
      {std::string(kReplicatedJobNameKey), rjob_name},
      {std::string(kReplicatedJobReplicasKey), std::to_string(Replicas(rjob))},
      {std::string(kGlobalReplicasKey), std::to_string(global_replicas)},
      {std::string(kJobIndexKey), std::to_string(job_index)},
      {std::string(kJobGlobalIndexKey), std::to_string(global_index)},
      {std::string(kJobKey), JobKey(api::Namespace(jobset), job_name)},
      {std::string(kRestartsKey), std::to_string(IntAt(ObjectAt(jobset, "status"), "restarts", 0))},
      {std::string(kGroupNameKey), group},
      {std::string(kGroupReplicasKey), std::to_string(group_replicas)},
      {std::string(kJobGroupIndexKey), std::to_string(group_index)},
  };
  const Object& coordinator = ObjectAt(ObjectAt(jobset, "spec"), "coordinator");
  if (!coordinator.empty()) {
    kv[std::string(kCoordinatorKey)] = api::JobSetCoordinatorEndpoint(jobset);
  }

  Object job = Object::object();
  job["apiVersion"] = "batch/v1";
  job["kind"] = "Job";
  const Object& tmpl = ObjectAt(rjob, "template");
  Object metadata = ObjectAt(tmpl, "metadata");
  metadata["name"] = job_name;
  if (!api::Namespace(jobset).empty()) metadata["namespace"] = api::Namespace(jobset);
  metadata["ownerReferences"] = Object::array({ControllerReference(jobset)});
  job["metadata"] = std::move(metadata);
  Object spec = ObjectAt(tmpl, "spec");
  if (!HasField(spec, "completionMode")) spec["completionMode"] = "Indexed";
  spec["suspend"] = BoolAt(ObjectAt(jobset, "spec"), "suspend", false);
  Object& pod_template = MutableObject(&spec, "template");
  if (DnsHostnames(jobset)) MutableObject(&pod_template, "spec")["subdomain"] = Subdomain(jobset);
  Label(&pod_template, kv);
  job["spec"] = std::move(spec);
  Label(&job, kv);
  return job;
}

std::vector<Object> ChildJobs(const Object& jobset) {
  std::vector<Object> out;
  const Object& rjobs = RJobs(jobset);
  for (size_t i = 0; i < rjobs.size(); ++i) {
    for (int32_t j = 0; j < Replicas(rjobs[i]); ++j) out.push_back(ChildJob(jobset, i, j));
  }
  return out;
}

std::optional<Object> HeadlessService(const Object& jobset) {
  if (!DnsHostnames(jobset)) return std::nullopt;
  Object svc = Object::object();
  svc["apiVersion"] = "v1";
  svc["kind"] = "Service";
  svc["metadata"] = Object{{"name", Subdomain(jobset)}};
  if (!api::Namespace(jobset).empty()) svc["metadata"]["namespace"] = api::Namespace(jobset);
  svc["metadata"]["ownerReferences"] = Object::array({ControllerReference(jobset)});
  svc["spec"] = Object{
      {"clusterIP", "None"},
      {"selector", {{std::string(kJobSetNameKey), api::Name(jobset)}}},
      {"publishNotReadyAddresses",
       BoolAt(ObjectAt(ObjectAt(jobset, "spec"), "network"), "publishNotReadyAddresses", true)}};
  return svc;
}

std::vector<PodSet> PodSets(const Object& jobset) {
  std::vector<PodSet> out;
  for (const Object& rjob : RJobs(jobset)) {
    const Object& job_spec = ObjectAt(ObjectAt(rjob, "template"), "spec");
    PodSet ps;
    ps.name = StringAt(rjob, "name");
    std::transform(ps.name.begin(), ps.name.end(), ps.name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // In 64 bits, saturated at int32: 4 replicas × 1073741825 pods wrapped to 4 and was
    // admitted on 4 cpus. A count beyond int32 cannot fit any quota and stays pending.
    ps.count = static_cast<int32_t>(
        std::min<int64_t>(int64_t{Replicas(rjob)} * int64_t{PodsPerJob(job_spec)}, INT32_MAX));
    ps.template_spec = ObjectAt(job_spec, "template");
    out.push_back(std::move(ps));
  }
  return out;
}

JobSetPlan PlanJobSet(const Object& jobset, const std::vector<Object>& child_jobs) {
  JobSetPlan plan;
  const Object& spec = ObjectAt(jobset, "spec");
  const Object& status = ObjectAt(jobset, "status");
  const Object& rjobs = RJobs(jobset);
  plan.restarts = static_cast<int32_t>(IntAt(status, "restarts", 0));
  plan.restarts_count_towards_max = static_cast<int32_t>(IntAt(status, "restartsCountTowardsMax", 0));
  plan.terminal_state = StringAt(status, "terminalState");
  if (plan.terminal_state.empty()) {
    if (IsConditionTrue(jobset, "Completed")) plan.terminal_state = "Completed";
    if (IsConditionTrue(jobset, "Failed")) plan.terminal_state = "Failed";
  }
  const bool suspended = BoolAt(spec, "suspend", false);

  // Jobs by name, sorted, so every decision below is deterministic.
  std::vector<const Object*> jobs;
  for (const Object& j : child_jobs) jobs.push_back(&j);
  std::sort(jobs.begin(), jobs.end(), [](const Object* a, const Object* b) { return api::Name(*a) < api::Name(*b); });

  std::vector<const Object*> current, previous;
  for (const Object* j : jobs) (RestartAttempt(*j) < plan.restarts ? previous : current).push_back(j);

  auto status_of = [&](std::string_view rjob_name) {
    Object s{{"name", rjob_name}, {"ready", 0}, {"succeeded", 0}, {"failed", 0}, {"active", 0}, {"suspended", 0}};
    for (const Object* j : current) {
      if (JobRJobName(*j) != rjob_name) continue;
      std::string_view finished;
      if (JobFinished(*j, &finished)) {
        s[finished == "Complete" ? "succeeded" : "failed"] = s[finished == "Complete" ? "succeeded" : "failed"].get<int>() + 1;
        continue;
      }
      const Object& js = ObjectAt(*j, "status");
      if (BoolAt(ObjectAt(*j, "spec"), "suspend", false)) s["suspended"] = s["suspended"].get<int>() + 1;
      if (IntAt(js, "active", 0) > 0) s["active"] = s["active"].get<int>() + 1;
      if (IntAt(js, "ready", 0) + IntAt(js, "succeeded", 0) >= PodsPerJob(ObjectAt(*j, "spec"))) {
        s["ready"] = s["ready"].get<int>() + 1;
      }
    }
    return s;
  };
  std::map<std::string, Object> rjob_status;
  for (const Object& rjob : rjobs) {
    Object s = status_of(StringAt(rjob, "name"));
    rjob_status[StringAt(rjob, "name")] = s;
    plan.replicated_jobs_status.push_back(std::move(s));
  }

  auto finish_active = [&] {
    for (const Object* j : jobs) {
      if (!JobFinished(*j, nullptr)) plan.delete_jobs.push_back(api::Name(*j));
    }
  };
  if (!plan.terminal_state.empty()) {
    finish_active();
    return plan;
  }

  for (const Object* j : previous) plan.delete_jobs.push_back(api::Name(*j));

  // Failure policy.
  std::vector<const Object*> failed;
  for (const Object* j : current) {
    if (IsConditionTrue(*j, "Failed")) failed.push_back(j);
  }
  std::stable_sort(failed.begin(), failed.end(), [](const Object* a, const Object* b) {
    std::string ta, tb;
    for (const Object& c : ArrayAt(ObjectAt(*a, "status"), "conditions"))
      if (StringAt(c, "type") == "Failed") ta = StringAt(c, "lastTransitionTime");
    for (const Object& c : ArrayAt(ObjectAt(*b, "status"), "conditions"))
      if (StringAt(c, "type") == "Failed") tb = StringAt(c, "lastTransitionTime");
    return ta < tb;  // RFC 3339 UTC strings order as times; equal times keep name order
  });
  if (!failed.empty()) {
    auto fail = [&](std::string reason, std::string_view msg, const Object* first) {
      plan.terminal_state = "Failed";
      plan.conditions.push_back({"Failed", "True", std::move(reason),
                                 std::string(msg) + " (first failed job: " + api::Name(*first) + ")"});
      finish_active();
    };
    if (!HasField(spec, "failurePolicy")) {
      fail("FailedJobs", kFailedJobsMessage, failed.front());
      return plan;
    }
    const Object& policy = ObjectAt(spec, "failurePolicy");
    std::string action = "RestartJobSet";
    std::string rule_name;
    const Object* first = failed.front();
    const Object& rules = ArrayAt(policy, "rules");
    for (size_t i = 0; i < rules.size(); ++i) {
      const Object& rule = rules[i];
      const Object* match = nullptr;
      for (const Object* j : failed) {
        const Object& reasons = ArrayAt(rule, "onJobFailureReasons");
        const Object& targets = ArrayAt(rule, "targetReplicatedJobs");
        const Object& patterns = ArrayAt(rule, "onJobFailureMessagePatterns");
        if (!reasons.empty() && !ListContains(reasons, ConditionField(*j, "Failed", "reason"))) continue;
        if (!targets.empty() && !ListContains(targets, JobRJobName(*j))) continue;
        if (!patterns.empty()) {
          bool any = false;
          // Go's regexp.MatchString (RE2, linear in the message); admission refuses a
          // pattern that does not compile, so one stored before that never matches.
          for (const Object& p : patterns) {
            if (!p.is_string()) continue;
            auto re = api::Regexp::Compile(p.get_ref<const std::string&>());
            if (re.ok() && re->Search(ConditionField(*j, "Failed", "message"))) any = true;
          }
          if (!any) continue;
        }
        match = j;
        break;
      }
      if (match != nullptr) {
        action = StringAt(rule, "action");
        rule_name = StringAt(rule, "name", "failurePolicyRule" + std::to_string(i));
        first = match;
        break;
      }
    }
    if (action == "FailJobSet") {
      fail("FailJobSetFailurePolicyAction", kFailJobSetActionMessage, first);
      return plan;
    }
    const bool ignore_max = action == "RestartJobSetAndIgnoreMaxRestarts" || action == "RestartJobAndIgnoreMaxRestarts";
    if (!ignore_max && plan.restarts_count_towards_max >= IntAt(policy, "maxRestarts", 0)) {
      fail("ReachedMaxRestarts", kReachedMaxRestartsMessage, first);
      return plan;
    }
    plan.restarts += 1;
    if (!ignore_max) plan.restarts_count_towards_max += 1;
    plan.conditions.push_back({"RestartingJobSet", "True",
                               rule_name.empty() ? "DefaultFailurePolicy" : "FailurePolicy_" + rule_name,
                               "restarting jobset, attempt " + std::to_string(plan.restarts)});
    plan.event = Event{"Warning", "Restarting", "restarting jobset, attempt " + std::to_string(plan.restarts)};
    for (const Object* j : current) plan.delete_jobs.push_back(api::Name(*j));
    std::sort(plan.delete_jobs.begin(), plan.delete_jobs.end());
    return plan;
  }

  // Success policy, once a Job of this attempt has succeeded (upstream's reconcile runs
  // executeSuccessPolicy only then): with operator All and targets naming no replicatedJob
  // (a JobSet stored before admission checked them), no Job is expected and the first
  // success completes the JobSet, as upstream's numJobsExpectedToSucceed is 0.
  const bool any_succeeded = std::any_of(current.begin(), current.end(), [](const Object* j) {
    std::string_view finished;
    return JobFinished(*j, &finished) && finished == "Complete";
  });
  if (any_succeeded) {
    const Object& sp = ObjectAt(spec, "successPolicy");
    const bool any = StringAt(sp, "operator", "All") == "Any";
    const Object& targets = ArrayAt(sp, "targetReplicatedJobs");
    bool all_done = true, any_done = false;
    for (const Object& rjob : rjobs) {
      std::string name = StringAt(rjob, "name");
      if (!targets.empty() && !ListContains(targets, name)) continue;
      int succeeded = rjob_status[name]["succeeded"].get<int>();
      if (succeeded > 0) any_done = true;
      if (succeeded < Replicas(rjob)) all_done = false;
    }
    if (any ? any_done : all_done) {
      plan.terminal_state = "Completed";
      plan.conditions.push_back({"Completed", "True", "AllJobsCompleted", "jobset completed successfully"});
      finish_active();
      return plan;
    }
  }

  // Suspend / resume of existing Jobs.
  for (const Object* j : current) {
    if (JobFinished(*j, nullptr)) continue;
    const bool job_suspended = BoolAt(ObjectAt(*j, "spec"), "suspend", false);
    if (suspended && !job_suspended) {
      Object u = *j;
      MutableObject(&u, "spec")["suspend"] = true;
      plan.update_jobs.push_back(std::move(u));
    } else if (!suspended && job_suspended) {
      Object u = *j;
      Object& job_spec = MutableObject(&u, "spec");
      job_spec["suspend"] = false;
      for (const Object& rjob : rjobs) {
        if (StringAt(rjob, "name") != JobRJobName(*j)) continue;
        const Object& src = ObjectAt(ObjectAt(ObjectAt(rjob, "template"), "spec"), "template");
        Object& dst = MutableObject(&job_spec, "template");
        Object& dst_meta = MutableObject(&dst, "metadata");
        MergeStringMap(&MutableObject(&dst_meta, "labels"), ObjectAt(ObjectAt(src, "metadata"), "labels"));
        MergeStringMap(&MutableObject(&dst_meta, "annotations"), ObjectAt(ObjectAt(src, "metadata"), "annotations"));
        Object& dst_spec = MutableObject(&dst, "spec");
        const Object& src_spec = ObjectAt(src, "spec");
        for (std::string_view f : {"nodeSelector", "tolerations", "schedulingGates"}) {
          if (HasField(src_spec, f)) dst_spec[std::string(f)] = Field(src_spec, f);
          else dst_spec.erase(std::string(f));
        }
      }
      plan.update_jobs.push_back(std::move(u));
    }
  }
  if (suspended) {
    plan.conditions.push_back({"Suspended", "True", "SuspendedJobs", "jobset is suspended"});
  } else if (IsConditionTrue(jobset, "Suspended")) {
    plan.conditions.push_back({"Suspended", "False", "ResumeJobs", "jobset is resumed"});
  }

  // Creation: blocked until the previous attempt is gone (docs/architecture.md, departure 3).
  if (!previous.empty()) {
    std::sort(plan.delete_jobs.begin(), plan.delete_jobs.end());
    return plan;
  }
  std::set<std::string> existing;
  for (const Object* j : current) existing.insert(api::Name(*j));
  const bool in_order = StringAt(ObjectAt(spec, "startupPolicy"), "startupPolicyOrder") == "InOrder";
  bool previous_ready = true;
  for (size_t i = 0; i < rjobs.size(); ++i) {
    const Object& rjob = rjobs[i];
    const std::string name = StringAt(rjob, "name");
    bool may_create = !in_order || previous_ready;
    for (const Object& dep : ArrayAt(rjob, "dependsOn")) {
      const std::string dep_name = StringAt(dep, "name");
      auto ds = rjob_status.find(dep_name);
      if (ds == rjob_status.end() || !ds->second.is_object()) {
        may_create = false;  // no such replicatedJob (refused on create): never satisfied
        continue;
      }
      int32_t dep_replicas = 0;
      for (const Object& r : rjobs)
        if (StringAt(r, "name") == dep_name) dep_replicas = Replicas(r);
      const Object& dst = ds->second;
      const int64_t have = StringAt(dep, "status") == "Complete" ? IntAt(dst, "succeeded", 0)
                                                                 : IntAt(dst, "ready", 0) + IntAt(dst, "succeeded", 0);
      if (have < dep_replicas) may_create = false;
    }
    if (may_create) {
      // At most kMaxChildJobsPerSync new Jobs per reconcile: their events bring the next.
      for (int32_t j = 0; j < Replicas(rjob) && plan.create_jobs.size() < kMaxChildJobsPerSync; ++j) {
        if (existing.count(ChildJobName(api::Name(jobset), name, j)) == 0) {
          plan.create_jobs.push_back(ChildJob(jobset, i, j));
        }
      }
    }
    auto st = rjob_status.find(name);
    const int64_t up =
        st == rjob_status.end() ? 0 : IntAt(st->second, "ready", 0) + IntAt(st->second, "succeeded", 0);
    previous_ready = may_create && up >= Replicas(rjob);
  }
  std::sort(plan.delete_jobs.begin(), plan.delete_jobs.end());
  return plan;
}

void WriteStatus(const JobSetPlan& plan, Object* jobset) {
  Object& status = MutableObject(jobset, "status");
  status["replicatedJobsStatus"] = plan.replicated_jobs_status;
  status["restarts"] = plan.restarts;
  status["restartsCountTowardsMax"] = plan.restarts_count_towards_max;
  if (!plan.terminal_state.empty()) status["terminalState"] = plan.terminal_state;
}

}  // namespace berth::controllers::jobs::jobset
