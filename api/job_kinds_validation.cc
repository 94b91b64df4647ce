#include "api/job_kinds_validation.h"

#include <utility>

#include "api/jobset_webhook.h"
#include "api/pod_validation.h"
#include "api/regexp.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

void Append(FieldErrorList* to, FieldErrorList from) {
  for (FieldError& e : from) to->push_back(std::move(e));
}

}  // namespace

FieldErrorList ValidateJobSetTemplatesAndPatterns(const Object& jobset, const Object* old) {
  // The CRD's CEL rules fail a request before the validating webhook is called.
  FieldErrorList errs = JobSetCelErrors(jobset, old);
  if (errs.empty()) errs = old == nullptr ? ValidateJobSet(jobset) : ValidateJobSetUpdate(jobset, *old);
  const Object& spec = ObjectAt(jobset, "spec");
  const FieldPath rjobs_path = FieldPath("spec").Child("replicatedJobs");
  const Object& rjobs = ArrayAt(spec, "replicatedJobs");
  for (size_t i = 0; i < rjobs.size(); ++i) {
    Append(&errs, ValidatePodTemplateSpec(NestedField(rjobs[i], {"template", "spec", "template"}),
                                          rjobs_path.Index(i).Child("template").Child("spec").Child("template")));
  }
  const FieldPath rules_path = FieldPath("spec").Child("failurePolicy").Child("rules");
  const Object& rules = ArrayAt(ObjectAt(spec, "failurePolicy"), "rules");
  for (size_t i = 0; i < rules.size(); ++i) {
    const Object& patterns = ArrayAt(rules[i], "onJobFailureMessagePatterns");
    for (size_t j = 0; j < patterns.size(); ++j) {
      if (!patterns[j].is_string()) continue;  // the schema reports it
      auto re = Regexp::Compile(patterns[j].get_ref<const std::string&>());
      if (!re.ok()) {
        errs.push_back(Invalid(rules_path.Index(i).Child("onJobFailureMessagePatterns").Index(j), patterns[j],
                               re.status().message()));
      }
    }
  }
  return errs;
}

FieldErrorList ValidatePyTorchJobTemplates(const Object& pytorchjob, const Object* /*old*/) {
  FieldErrorList errs;
  const FieldPath specs_path = FieldPath("spec").Child("pytorchReplicaSpecs");
  for (const auto& [type, replica_spec] : ObjectAt(ObjectAt(pytorchjob, "spec"), "pytorchReplicaSpecs").items()) {
    const FieldPath spec_path = specs_path.Key(type).Child("template").Child("spec");
    const Object& pod_spec = NestedField(replica_spec, {"template", "spec"});
    // The training operator's webhook: a replica without containers (no template at
    // all included) is refused before its pod spec is looked at.
    if (ArrayAt(pod_spec, "containers").empty()) {
      errs.push_back(Required(spec_path.Child("containers"), "must be specified"));
      continue;
    }
    Append(&errs, ValidatePodTemplateSpec(Field(replica_spec, "template"), specs_path.Key(type).Child("template")));
  }
  return errs;
}

}  // namespace berth::api
