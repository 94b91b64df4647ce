#include "api/jobset_webhook.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/metadata_validation.h"
#include "api/regexp.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

const Regexp& RuleNamePattern() {
  static const Regexp* const re = new Regexp(Regexp::Compile("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$").value());
  return *re;
}

// parent[key] as an object, created when absent or null; nullptr when `parent` is not an
// object or the field has another type (left to schema validation).
Object* ChildObject(Object* parent, const char* key) {
  if (!parent->is_object()) return nullptr;
  Object& v = (*parent)[key];
  if (v.is_null()) v = Object::object();
  return v.is_object() ? &v : nullptr;
}

// parent[key] when it is an array, else nullptr (nothing is created).
Object* ExistingArray(Object* parent, const char* key) {
  if (!parent->is_object()) return nullptr;
  auto it = parent->find(key);
  return it != parent->end() && it->is_array() ? &*it : nullptr;
}

}  // namespace

void DefaultJobSet(Object* jobset) {
  Object* spec = ChildObject(jobset, "spec");
  if (spec == nullptr) return;
  if (Object* success = ChildObject(spec, "successPolicy")) {
    if (!HasField(*success, "operator")) (*success)["operator"] = "All";
  }
  if (Object* startup = ChildObject(spec, "startupPolicy")) {
    if (!HasField(*startup, "startupPolicyOrder")) (*startup)["startupPolicyOrder"] = "AnyOrder";
  }
  if (Object* rjobs = ExistingArray(spec, "replicatedJobs")) {
    for (Object& rjob : *rjobs) {
      // A replicatedJob without a template stays without one: the schema's Required names it.
      if (!Field(rjob, "template").is_object()) continue;
      Object* job_spec = ChildObject(&rjob["template"], "spec");
      if (job_spec == nullptr) continue;
      if (!HasField(*job_spec, "completionMode")) (*job_spec)["completionMode"] = "Indexed";
      Object* pod_template = ChildObject(job_spec, "template");
      Object* pod_spec = pod_template == nullptr ? nullptr : ChildObject(pod_template, "spec");
      if (pod_spec != nullptr && !HasField(*pod_spec, "restartPolicy")) (*pod_spec)["restartPolicy"] = "OnFailure";
    }
  }
  if (Object* network = ChildObject(spec, "network")) {
    if (!HasField(*network, "enableDNSHostnames")) (*network)["enableDNSHostnames"] = true;
    if (!HasField(*network, "publishNotReadyAddresses")) (*network)["publishNotReadyAddresses"] = true;
  }
  if (!Field(*spec, "failurePolicy").is_object()) return;
  if (Object* rules = ExistingArray(&(*spec)["failurePolicy"], "rules")) {
    for (size_t i = 0; i < rules->size(); ++i) {
      Object& rule = (*rules)[i];
      if (rule.is_object() && AsString(Field(rule, "name")).empty()) {
        rule["name"] = "failurePolicyRule" + std::to_string(i);
      }
    }
  }
}

namespace {

// Job failure reasons a rule may name (upstream validOnJobFailureReasons: batch/v1's
// JobReason* constants).
constexpr std::string_view kJobFailureReasons[] = {"BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes",
                                                   "MaxFailedIndexesExceeded", "PodFailurePolicy"};

// IsDNS1035Label's messages with its length message replaced by `too_long` (upstream
// swaps the message containing "must be no more than 63 characters").
void AddDNS1035Errors(FieldErrorList* errs, const FieldPath& path, const std::string& checked,
                      const Object& value, std::string_view too_long) {
  for (std::string& msg : IsDNS1035Label(checked)) {
    if (msg.find(MaxLenError(kLabelValueMaxLength)) != std::string::npos) msg = std::string(too_long);
    errs->push_back(Invalid(path, value, std::move(msg)));
  }
}

bool Contains(const std::set<std::string, std::less<>>& names, const Object& name) {
  return name.is_string() && names.count(name.get_ref<const std::string&>()) > 0;
}

// The failure policy's checks (upstream validateFailurePolicy), at spec.failurePolicy.
void ValidateFailurePolicy(const Object& spec, const std::set<std::string, std::less<>>& rjob_names,
                           FieldErrorList* errs) {
  const FieldPath rules_path = FieldPath("spec").Child("failurePolicy").Child("rules");
  const Object& rules = ArrayAt(ObjectAt(spec, "failurePolicy"), "rules");
  // RestartJob and RestartJobAndIgnoreMaxRestarts need the RestartJob feature gate (alpha,
  // off); upstream reports this alone and checks nothing else of the policy.
  for (size_t i = 0; i < rules.size(); ++i) {
    const Object& action = Field(rules[i], "action");
    if (action == "RestartJob" || action == "RestartJobAndIgnoreMaxRestarts") {
      errs->push_back(Invalid(rules_path.Index(i).Child("action"), action, kRestartJobGateMessage));
      return;
    }
  }
  std::map<std::string, std::vector<size_t>> by_name;
  std::vector<std::string> order;
  for (size_t i = 0; i < rules.size(); ++i) {
    const FieldPath rule_path = rules_path.Index(i);
    const Object& name_field = Field(rules[i], "name");
    if (name_field.is_null() || name_field.is_string()) {  // another type: the schema reports it
      const std::string name = AsString(name_field);
      const FieldPath path = rule_path.Child("name");
      if (name.size() < kMinJobSetRuleNameLength || name.size() > kMaxJobSetRuleNameLength) {
        errs->push_back(Invalid(path, name,
                                "invalid failure policy rule name of length " + std::to_string(name.size()) +
                                    ", the rule name must be at least " + std::to_string(kMinJobSetRuleNameLength) +
                                    " characters long and at most " + std::to_string(kMaxJobSetRuleNameLength) +
                                    " characters long"));
      }
      if (!RuleNamePattern().Search(name)) {
        errs->push_back(Invalid(path, name,
                                "invalid failure policy rule name '" + name +
                                    "', a failure policy rule name must start with an alphabetic character, "
                                    "optionally followed by a string of alphanumeric characters or '_,:', and must "
                                    "end with an alphanumeric character or '_'"));
      }
      if (by_name[name].empty()) order.push_back(name);
      by_name[name].push_back(i);
    }
    const Object& targets = ArrayAt(rules[i], "targetReplicatedJobs");
    for (size_t j = 0; j < targets.size(); ++j) {
      if (!targets[j].is_string() || Contains(rjob_names, targets[j])) continue;
      errs->push_back(Invalid(rule_path.Child("targetReplicatedJobs").Index(j), targets[j],
                              "invalid replicatedJob name '" + targets[j].get<std::string>() +
                                  "' in failure policy does not appear in .spec.ReplicatedJobs"));
    }
    const Object& reasons = ArrayAt(rules[i], "onJobFailureReasons");
    for (size_t j = 0; j < reasons.size(); ++j) {
      if (!reasons[j].is_string()) continue;  // the schema reports it
      const std::string& reason = reasons[j].get_ref<const std::string&>();
      if (std::find(std::begin(kJobFailureReasons), std::end(kJobFailureReasons), reason) !=
          std::end(kJobFailureReasons)) {
        continue;
      }
      errs->push_back(Invalid(rule_path.Child("onJobFailureReasons").Index(j), reason,
                              "invalid job failure reason '" + reason +
                                  "' in failure policy is not a recognized job failure reason"));
    }
  }
  for (const std::string& name : order) {
    const std::vector<size_t>& indices = by_name[name];
    if (indices.size() < 2) continue;
    std::string list;
    for (size_t i : indices) list += (list.empty() ? "" : " ") + std::to_string(i);
    errs->push_back(
        Invalid(rules_path.Index(indices[0]).Child("name"), name,
                "rule names are not unique, rules with indices [" + list + "] all have the same name '" + name + "'"));
  }
}

// The coordinator's checks (upstream validateCoordinator, which stops at its first error,
// and validateCoordinatorLabelValue).
void ValidateCoordinator(const Object& jobset, FieldErrorList* errs) {
  const Object& spec = ObjectAt(jobset, "spec");
  const Object& coordinator = ObjectAt(spec, "coordinator");
  const FieldPath path = FieldPath("spec").Child("coordinator");
  const std::string rjob_name = StringAt(coordinator, "replicatedJob");
  const int64_t job_index = IntAt(coordinator, "jobIndex", 0);
  const int64_t pod_index = IntAt(coordinator, "podIndex", 0);
  const Object* rjob = FindNamed(ArrayAt(spec, "replicatedJobs"), rjob_name);
  if (rjob == nullptr) {
    errs->push_back(Invalid(path.Child("replicatedJob"), rjob_name,
                            "coordinator replicatedJob " + rjob_name + " does not exist"));
  } else if (job_index < 0 || job_index >= IntAt(*rjob, "replicas", 1)) {
    errs->push_back(Invalid(path.Child("jobIndex"), job_index,
                            "coordinator job index " + std::to_string(job_index) + " is invalid for replicatedJob " +
                                rjob_name));
  } else {
    const Object& job_spec = NestedField(*rjob, {"template", "spec"});
    const Object& completions = Field(job_spec, "completions");
    if (Field(job_spec, "completionMode") != "Indexed" || !completions.is_number_integer()) {
      errs->push_back(Invalid(path.Child("replicatedJob"), rjob_name,
                              "job for coordinator pod must be indexed completion mode, and completions number must "
                              "be set"));
    } else if (pod_index < 0 || pod_index >= completions.get<int64_t>()) {
      errs->push_back(Invalid(path.Child("podIndex"), pod_index,
                              "coordinator pod index " + std::to_string(pod_index) + " is invalid for replicatedJob " +
                                  rjob_name + " job index " + std::to_string(job_index)));
    }
  }
  const std::string endpoint = JobSetCoordinatorEndpoint(jobset);
  std::string label_errors;
  for (const std::string& msg : IsValidLabelValue(endpoint)) label_errors += (label_errors.empty() ? "" : ", ") + msg;
  if (!label_errors.empty()) {
    errs->push_back(Invalid(path, endpoint,
                            "spec will lead to invalid label value " + GoQuote(endpoint) + " for coordinator label " +
                                GoQuote(kJobSetCoordinatorKey) +
                                " (long JobSet / ReplicatedJob / SubDomain name?): " + label_errors));
  }
}

// Erases what Kueue sets on a replicatedJob's pod template (its labels, annotations,
// nodeSelector, tolerations and schedulingGates), creating nothing.
void ForgetKueuePodTemplateFields(Object* rjob) {
  Object* pod_template = rjob;
  for (const char* key : {"template", "spec", "template"}) {
    if (!pod_template->is_object() || !pod_template->contains(key)) return;
    pod_template = &(*pod_template)[key];
  }
  if (!pod_template->is_object()) return;
  auto erase = [pod_template](const char* part, std::initializer_list<const char*> keys) {
    auto it = pod_template->find(part);
    if (it == pod_template->end() || !it->is_object()) return;
    for (const char* key : keys) it->erase(key);
  };
  erase("metadata", {"labels", "annotations"});
  erase("spec", {"nodeSelector", "tolerations", "schedulingGates"});
}

// Removes nulls and empty objects and lists, recursively: upstream compares typed structs
// (apiequality.Semantic.DeepEqual), where an absent field and an empty one are alike.
void PruneEmpty(Object* value) {
  if (value->is_object()) {
    for (auto it = value->begin(); it != value->end();) {
      PruneEmpty(&it.value());
      const bool empty = it->is_null() || ((it->is_object() || it->is_array()) && it->empty());
      it = empty ? value->erase(it) : std::next(it);
    }
  } else if (value->is_array()) {
    for (Object& item : *value) PruneEmpty(&item);
  }
}

}  // namespace

std::string JobSetCoordinatorEndpoint(const Object& jobset) {
  const Object& spec = ObjectAt(jobset, "spec");
  const Object& coordinator = ObjectAt(spec, "coordinator");
  std::string subdomain = StringAt(ObjectAt(spec, "network"), "subdomain");
  if (subdomain.empty()) subdomain = Name(jobset);
  return Name(jobset) + "-" + StringAt(coordinator, "replicatedJob") + "-" +
         std::to_string(IntAt(coordinator, "jobIndex", 0)) + "-" + std::to_string(IntAt(coordinator, "podIndex", 0)) +
         "." + subdomain;
}

FieldErrorList ValidateJobSet(const Object& jobset) {
  FieldErrorList errs;
  const Object& spec = ObjectAt(jobset, "spec");
  const FieldPath spec_path("spec");
  const std::string& js_name = Name(jobset);

  const Object& restart_strategy = Field(ObjectAt(spec, "failurePolicy"), "restartStrategy");
  if (restart_strategy == "InPlaceRestart") {
    errs.push_back(Invalid(spec_path.Child("failurePolicy").Child("restartStrategy"), restart_strategy,
                           kInPlaceRestartGateMessage));
  }

  const Object& rjobs = ArrayAt(spec, "replicatedJobs");
  const FieldPath rjobs_path = spec_path.Child("replicatedJobs");
  if (!rjobs.empty() && HasField(rjobs[0], "dependsOn")) {
    errs.push_back(Forbidden(rjobs_path.Index(0).Child("dependsOn"), "DependsOn can't be set for the first ReplicatedJob"));
  }

  const Object& subdomain = Field(ObjectAt(spec, "network"), "subdomain");
  if (subdomain.is_string() && !subdomain.get_ref<const std::string&>().empty()) {
    const FieldPath path = spec_path.Child("network").Child("subdomain");
    const std::string& value = subdomain.get_ref<const std::string&>();
    for (std::string& msg : IsDNS1123Subdomain(value)) errs.push_back(Invalid(path, subdomain, std::move(msg)));
    // The subdomain also names the headless Service: an RFC 1035 label.
    AddDNS1035Errors(&errs, path, value, subdomain, kJobSetSubdomainTooLongMessage);
  }

  const Object& managed_by = Field(spec, "managedBy");
  if (managed_by.is_string()) {
    const std::string& manager = managed_by.get_ref<const std::string&>();
    const FieldPath path = spec_path.Child("managedBy");
    for (FieldError& e : IsDomainPrefixedPath(path, manager)) errs.push_back(std::move(e));
    if (manager.size() > kMaxJobSetManagedByLength) errs.push_back(TooLong(path, kMaxJobSetManagedByLength));
  }

  std::set<std::string, std::less<>> rjob_names;
  for (size_t i = 0; i < rjobs.size(); ++i) {
    const Object& rjob = rjobs[i];
    const FieldPath path = rjobs_path.Index(i);
    const std::string rjob_name = StringAt(rjob, "name");
    rjob_names.insert(rjob_name);
    const int64_t replicas = IntAt(rjob, "replicas", 1);
    const Object& job_spec = NestedField(rjob, {"template", "spec"});
    const int64_t parallelism = IntAt(job_spec, "parallelism", 1);
    const std::string group = StringAt(rjob, "groupName");
    AddDNS1035Errors(&errs, path.Child("groupName"), group, group, kJobSetGroupNameTooLongMessage);
    // Counts outside int32 are the schema's errors (reported alongside): skipped here.
    auto int32 = [](int64_t v) { return v >= -kMaxInt32 - 1 && v <= kMaxInt32; };
    if (int32(replicas) && int32(parallelism)) {
      if (parallelism * replicas > kMaxInt32) {
        errs.push_back(Invalid(path.Child("replicas"), replicas,
                               "the product of replicas and parallelism must not exceed " + std::to_string(kMaxInt32) +
                                   " for replicatedJob '" + rjob_name + "'"));
      }
      // The longest Job name is the last replica's, the longest pod name its last index's
      // plus the 5 characters of a generated suffix.
      const std::string longest_job = js_name + "-" + rjob_name + "-" + std::to_string(replicas - 1);
      AddDNS1035Errors(&errs, path.Child("name"), longest_job, longest_job, kJobSetJobNameTooLongMessage);
      const Object& completions = Field(job_spec, "completions");
      if (Field(job_spec, "completionMode") == "Indexed" && completions.is_number_integer() &&
          int32(completions.get<int64_t>())) {
        const std::string longest_pod =
            longest_job + "-" + std::to_string(completions.get<int64_t>() - 1) + "-abcde";
        AddDNS1035Errors(&errs, path.Child("name"), longest_pod, longest_job, kJobSetPodNameTooLongMessage);
      }
    }
    // A dependency is a previous replicatedJob (upstream also lets one name itself, which
    // then waits for itself for ever; berth refuses that too).
    const Object& deps = ArrayAt(rjob, "dependsOn");
    for (size_t j = 0; j < deps.size(); ++j) {
      const Object& dep = Field(deps[j], "name");
      if (!dep.is_string() || (Contains(rjob_names, dep) && dep != rjob_name)) continue;
      errs.push_back(Invalid(path.Child("dependsOn").Index(j).Child("name"), dep,
                             "replicatedJob: " + rjob_name + " cannot depend on replicatedJob: " +
                                 dep.get<std::string>()));
    }
  }

  const Object& success_targets = ArrayAt(ObjectAt(spec, "successPolicy"), "targetReplicatedJobs");
  for (size_t j = 0; j < success_targets.size(); ++j) {
    if (!success_targets[j].is_string() || Contains(rjob_names, success_targets[j])) continue;
    errs.push_back(Invalid(spec_path.Child("successPolicy").Child("targetReplicatedJobs").Index(j), success_targets[j],
                           "invalid replicatedJob name '" + success_targets[j].get<std::string>() +
                               "' does not appear in .spec.ReplicatedJobs"));
  }

  ValidateFailurePolicy(spec, rjob_names, &errs);
  if (Field(spec, "coordinator").is_object()) ValidateCoordinator(jobset, &errs);
  return errs;
}

FieldErrorList JobSetCelErrors(const Object& jobset, const Object* old) {
  FieldErrorList errs;
  auto cel_error = [](const FieldPath& path, std::string_view type, std::string message) {
    return Invalid(path, std::string(type), std::move(message));
  };
  auto exclusive_violated = [](const Object& js) {
    const Object& spec = ObjectAt(js, "spec");
    if (StringAt(ObjectAt(spec, "startupPolicy"), "startupPolicyOrder") != "InOrder") return false;
    const Object& rjobs = ArrayAt(spec, "replicatedJobs");
    return std::any_of(rjobs.begin(), rjobs.end(), [](const Object& r) { return HasField(r, "dependsOn"); });
  };
  if (exclusive_violated(jobset) && (old == nullptr || !exclusive_violated(*old))) {
    errs.push_back(cel_error(FieldPath("spec"), "object", "StartupPolicy and DependsOn APIs are mutually exclusive"));
  }
  if (old == nullptr) return errs;
  // Transition rules compare only where the old object has the field too.
  Object old_defaulted = *old;
  DefaultJobSet(&old_defaulted);
  const Object& spec = ObjectAt(jobset, "spec");
  const Object& old_spec = ObjectAt(old_defaulted, "spec");
  const FieldPath spec_path("spec");
  for (const char* f : {"network", "successPolicy", "failurePolicy", "startupPolicy", "volumeClaimPolicies"}) {
    if (!HasField(spec, f) || !HasField(old_spec, f) || Field(spec, f) == Field(old_spec, f)) continue;
    errs.push_back(cel_error(spec_path.Child(f), Field(spec, f).is_array() ? "array" : "object", "Value is immutable"));
  }
  const Object& rjobs = ArrayAt(spec, "replicatedJobs");
  for (size_t i = 0; i < rjobs.size(); ++i) {
    const Object* before = FindNamed(ArrayAt(old_spec, "replicatedJobs"), StringAt(rjobs[i], "name"));
    if (before == nullptr || !HasField(rjobs[i], "dependsOn") || !HasField(*before, "dependsOn")) continue;
    if (Field(rjobs[i], "dependsOn") == Field(*before, "dependsOn")) continue;
    errs.push_back(cel_error(spec_path.Child("replicatedJobs").Index(i).Child("dependsOn"), "array",
                             "Value is immutable"));
  }
  return errs;
}

FieldErrorList ValidateJobSetUpdate(const Object& jobset, const Object& old) {
  FieldErrorList errs;
  Object old_defaulted = old;
  DefaultJobSet(&old_defaulted);
  const Object& spec = ObjectAt(jobset, "spec");
  const Object& old_spec = ObjectAt(old_defaulted, "spec");
  // replicatedJobs, except what Kueue sets on the pod templates of a JobSet that is or
  // was suspended: their labels, annotations, nodeSelector, tolerations and
  // schedulingGates.
  Object rjobs = Field(spec, "replicatedJobs");
  Object old_rjobs = Field(old_spec, "replicatedJobs");
  if (BoolAt(spec, "suspend", false) || BoolAt(old_spec, "suspend", false)) {
    for (Object* list : {&rjobs, &old_rjobs}) {
      if (list->is_array()) {
        for (Object& rjob : *list) ForgetKueuePodTemplateFields(&rjob);
      }
    }
  }
  PruneEmpty(&rjobs);
  PruneEmpty(&old_rjobs);
  if (rjobs != old_rjobs) {
    FieldError e = Invalid(FieldPath("spec").Child("replicatedJobs"), nullptr, "field is immutable");
    e.value_omitted = true;
    errs.push_back(std::move(e));
  }
  if (Field(spec, "managedBy") != Field(old_spec, "managedBy")) {
    errs.push_back(Invalid(FieldPath("spec").Child("managedBy"), Field(spec, "managedBy"), "field is immutable"));
  }
  // ValidateJobSet's errors that the stored object does not have as well.
  const FieldErrorList old_errs = ValidateJobSet(old_defaulted);
  for (FieldError& e : ValidateJobSet(jobset)) {
    if (std::find(old_errs.begin(), old_errs.end(), e) == old_errs.end()) errs.push_back(std::move(e));
  }
  return errs;
}

}  // namespace berth::api
