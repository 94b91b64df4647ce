#include "api/jobset_webhook.h"

#include <map>
#include <string>
#include <vector>

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

FieldErrorList ValidateJobSetFailurePolicyRules(const Object& jobset) {
  FieldErrorList errs;
  const FieldPath rules_path = FieldPath("spec").Child("failurePolicy").Child("rules");
  const Object& rules = ArrayAt(ObjectAt(ObjectAt(jobset, "spec"), "failurePolicy"), "rules");
  std::map<std::string, std::vector<size_t>> by_name;
  std::vector<std::string> order;
  for (size_t i = 0; i < rules.size(); ++i) {
    const Object& name_field = Field(rules[i], "name");
    if (!name_field.is_null() && !name_field.is_string()) continue;  // the schema reports it
    const std::string name = AsString(name_field);
    const FieldPath path = rules_path.Index(i).Child("name");
    if (name.size() < kMinJobSetRuleNameLength || name.size() > kMaxJobSetRuleNameLength) {
      errs.push_back(Invalid(path, name,
                             "invalid failure policy rule name of length " + std::to_string(name.size()) +
                                 ", the rule name must be at least " + std::to_string(kMinJobSetRuleNameLength) +
                                 " characters long and at most " + std::to_string(kMaxJobSetRuleNameLength) +
                                 " characters long"));
    }
    if (!RuleNamePattern().Search(name)) {
      errs.push_back(Invalid(path, name,
                             "invalid failure policy rule name '" + name +
                                 "', a failure policy rule name must start with an alphabetic character, "
                                 "optionally followed by a string of alphanumeric characters or '_,:', and must "
                                 "end with an alphanumeric character or '_'"));
    }
    if (by_name[name].empty()) order.push_back(name);
    by_name[name].push_back(i);
  }
  for (const std::string& name : order) {
    const std::vector<size_t>& indices = by_name[name];
    if (indices.size() < 2) continue;
    std::string list;
    for (size_t i : indices) list += (list.empty() ? "" : " ") + std::to_string(i);
    errs.push_back(
        Invalid(rules_path.Index(indices[0]).Child("name"), name,
                "rule names are not unique, rules with indices [" + list + "] all have the same name '" + name + "'"));
  }
  return errs;
}

}  // namespace berth::api
