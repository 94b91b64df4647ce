#include "api/job_strategy.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/job_policy_validation.h"
#include "api/pod_validation.h"
#include "api/selectors.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

constexpr int64_t kMaxInt32 = 2147483647;
// apivalidation.FieldImmutableErrorMsg.
constexpr std::string_view kFieldIsImmutable = "field is immutable";

// obj[key] as an object, created when absent or null; nullptr when it holds
// something else (left for schema validation).
Object* ObjectField(Object* obj, const char* key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  Object& v = (*obj)[key];
  if (v.is_null()) v = Object::object();
  return v.is_object() ? &v : nullptr;
}

const Object* Find(const Object* obj, const char* key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() || it->is_null() ? nullptr : &*it;
}

std::string StringField(const Object* obj, const char* key) {
  const Object* v = Find(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

bool ManualSelector(const Object& job) {
  const Object* manual = Find(Find(&job, "spec"), "manualSelector");
  return manual != nullptr && manual->is_boolean() && manual->get<bool>();
}

// Go's %#v of a []string.
std::string GoStrings(const Object* values) {
  if (values == nullptr || !values->is_array()) return "[]string(nil)";
  std::string out = "[]string{";
  for (size_t i = 0; i < values->size(); ++i) {
    if (i > 0) out += ", ";
    out += GoQuote((*values)[i].is_string() ? (*values)[i].get<std::string>() : (*values)[i].dump());
  }
  return out + "}";
}

// Go's %#v of a map[string]string (keys sorted, as fmt prints maps).
std::string GoStringMap(const Object* labels) {
  if (labels == nullptr || !labels->is_object()) return "map[string]string(nil)";
  std::string out = "map[string]string{";
  bool first = true;
  for (const auto& [key, value] : labels->items()) {
    if (!first) out += ", ";
    first = false;
    out += GoQuote(key) + ":" + GoQuote(value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out + "}";
}

// Go's %#v of a metav1.LabelSelector.
std::string GoLabelSelector(const Object& selector) {
  std::string out =
      "v1.LabelSelector{MatchLabels:" + GoStringMap(Find(&selector, "matchLabels")) + ", MatchExpressions:";
  const Object* exprs = Find(&selector, "matchExpressions");
  if (exprs == nullptr || !exprs->is_array()) {
    out += "[]v1.LabelSelectorRequirement(nil)";
  } else {
    out += "[]v1.LabelSelectorRequirement{";
    for (size_t i = 0; i < exprs->size(); ++i) {
      const Object& e = (*exprs)[i];
      if (i > 0) out += ", ";
      out += "v1.LabelSelectorRequirement{Key:" + GoQuote(StringField(&e, "key")) +
             ", Operator:" + GoQuote(StringField(&e, "operator")) + ", Values:" + GoStrings(Find(&e, "values")) + "}";
    }
    out += "}";
  }
  return out + "}";
}

// An Invalid error whose value is printed as Go's %#v (a struct or map, which
// RenderFieldValue would print as JSON).
FieldError InvalidGoValue(const FieldPath& path, std::string go_value, const std::string& detail) {
  FieldError e = Invalid(path, nullptr, go_value + ": " + detail);
  e.value_omitted = true;
  return e;
}

// apivalidation.ValidateHasLabel on the pod template's metadata.
void ValidateHasLabel(const Object* labels, std::string_view key, const std::string& expected, FieldErrorList* errs) {
  const FieldPath path = FieldPath("spec").Child("template").Child("metadata").Child("labels").Key(key);
  const Object* actual = Find(labels, std::string(key).c_str());
  if (actual == nullptr) {
    errs->push_back(Required(path, expected));
  } else if (!actual->is_string() || actual->get<std::string>() != expected) {
    errs->push_back(InvalidGoValue(path, GoStringMap(labels), "must be '" + expected + "'"));
  }
}

// validateJobSpec's counts (pkg/apis/batch/validation/validation.go): each must be >= 0
// when set; maxFailedIndexes needs backoffLimitPerIndex; an Indexed Job needs completions
// and at most maxParallelismForIndexedJob (100,000) pods at once.
void ValidateJobCounts(const Object* spec, FieldErrorList* errs) {
  const FieldPath path("spec");
  for (const char* field : {"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                            "ttlSecondsAfterFinished", "backoffLimitPerIndex", "maxFailedIndexes"}) {
    const Object* value = Find(spec, field);
    if (value != nullptr && value->is_number_integer() && value->get<int64_t>() < 0) {
      errs->push_back(Invalid(path.Child(field), *value, "must be greater than or equal to 0"));
    }
  }
  if (Find(spec, "maxFailedIndexes") != nullptr && Find(spec, "backoffLimitPerIndex") == nullptr) {
    errs->push_back(Required(path.Child("backoffLimitPerIndex"), "when maxFailedIndexes is specified"));
  }
  if (StringField(spec, "completionMode") == "Indexed") {
    constexpr int64_t kMaxParallelismForIndexedJob = 100000;
    if (Find(spec, "completions") == nullptr)
      errs->push_back(Required(path.Child("completions"), "when completion mode is Indexed"));
    const Object* parallelism = Find(spec, "parallelism");
    if (parallelism != nullptr && parallelism->is_number_integer() &&
        parallelism->get<int64_t>() > kMaxParallelismForIndexedJob) {
      errs->push_back(Invalid(path.Child("parallelism"), *parallelism,
                              "must be less than or equal to 100000 when completion mode is Indexed"));
    }
  }
}

// ValidateJobSpec's check of the template's restartPolicy: a Job's pods never restart
// Always (an absent policy is one SetDefaults_PodSpec turns into Always upstream).
void ValidateJobRestartPolicy(const Object& job, FieldErrorList* errs) {
  const FieldPath path = FieldPath("spec").Child("template").Child("spec").Child("restartPolicy");
  const Object& policy = NestedField(job, {"spec", "template", "spec", "restartPolicy"});
  if (!policy.is_null() && !policy.is_string()) return;  // the schema reports it
  const std::string value = AsString(policy);
  if (value.empty() || value == "Always") {
    errs->push_back(Required(path, R"(valid values: "OnFailure", "Never")"));
  } else if (value != "OnFailure" && value != "Never") {
    errs->push_back(NotSupported(path, value, {"OnFailure", "Never"}));
  } else if (Find(Find(&job, "spec"), "podFailurePolicy") != nullptr && value != "Never") {
    errs->push_back(Invalid(path, value, R"(only "Never" is supported when podFailurePolicy is specified)"));
  }
}

// The counts, the selector rules, then ValidateJobSpec's ValidatePodTemplateSpec: the
// template's pod spec (api/pod_validation.h), and on create its restartPolicy (the
// template is immutable, so an update cannot change it; a Job stored before berth checked
// it stays updatable).
FieldErrorList ValidateJob(const Object& job, bool create) {
  FieldErrorList errs;
  ValidateJobCounts(Find(&job, "spec"), &errs);
  for (FieldError& e : ValidateJobSelector(job, create)) errs.push_back(std::move(e));
  for (FieldError& e :
       ValidatePodTemplateSpec(NestedField(job, {"spec", "template"}), FieldPath("spec").Child("template"))) {
    errs.push_back(std::move(e));
  }
  if (create) ValidateJobRestartPolicy(job, &errs);
  for (FieldError& e : ValidateJobPolicies(job)) errs.push_back(std::move(e));
  return errs;
}

// Sets obj[key] to value, or removes the key when value is null.
void SetOrErase(Object* obj, const char* key, const Object& value) {
  if (value.is_null()) {
    obj->erase(key);
  } else {
    (*obj)[key] = value;
  }
}

// validatePodTemplateUpdate: the old template with the scheduling directives the update
// may change (AllowMutableSchedulingDirectives) taken from the new one, for comparison.
Object TemplateWithNewSchedulingDirectives(const Object& old_template, const Object& new_template) {
  Object out = old_template.is_object() ? old_template : Object::object();
  const Object& new_spec = Field(new_template, "spec");
  Object& spec = MutableObject(&out, "spec");
  const Object& new_affinity = Field(new_spec, "affinity");
  const Object old_affinity = Field(spec, "affinity");
  if (new_affinity.is_null() && !old_affinity.is_null()) {
    // The affinity may be cleared when it held nothing but nodeAffinity.
    Object rest = old_affinity.is_object() ? old_affinity : Object::object();
    rest.erase("nodeAffinity");
    SetOrErase(&spec, "affinity", rest.empty() ? Object() : rest);
  } else if (!new_affinity.is_null()) {
    Object affinity = old_affinity.is_object() ? old_affinity : Object::object();
    SetOrErase(&affinity, "nodeAffinity", Field(new_affinity, "nodeAffinity"));
    spec["affinity"] = affinity;
  }
  for (const char* key : {"nodeSelector", "tolerations", "schedulingGates"})
    SetOrErase(&spec, key, Field(new_spec, key));
  Object& meta = MutableObject(&out, "metadata");
  for (const char* key : {"annotations", "labels"})
    SetOrErase(&meta, key, NestedField(new_template, {"metadata", key}));
  // Go compares structs: an empty spec or metadata is the same as none.
  for (const char* key : {"spec", "metadata"}) {
    if (out[key].empty() && !old_template.contains(key)) out.erase(key);
  }
  return out;
}

// ValidateImmutableField for a value printed as Go prints a struct (omitted, see the header).
void ImmutableStruct(const Object& now, const Object& before, const FieldPath& path, FieldErrorList* errs) {
  if (now == before) return;
  FieldError e = Invalid(path, nullptr, std::string(kFieldIsImmutable));
  e.value_omitted = true;
  errs->push_back(std::move(e));
}

// ValidateImmutableField for a scalar (printed as the value, null when unset).
void ImmutableScalar(const Object& now, const Object& before, const FieldPath& path, FieldErrorList* errs) {
  if (now != before) errs->push_back(Invalid(path, now, std::string(kFieldIsImmutable)));
}

class JobStrategy final : public Strategy {
 public:
  explicit JobStrategy(KueueJobWebhook webhook) : webhook_(std::move(webhook)) {}

  void PrepareForCreate(Object* obj) const override {
    SetJobDefaults(obj);
    webhook_.Default(obj, kBatchJobFramework, {"spec", "suspend"});
    if (!ManualSelector(*obj)) GenerateJobSelector(obj);
  }
  void PrepareForUpdate(Object* obj, const Object& old) const override {
    SetJobDefaults(obj);
    SuspendOnPodCountChange(obj, old);
  }
  FieldErrorList ValidateCreate(const Object& obj) const override {
    FieldErrorList errs = ValidateJob(obj, true);
    for (FieldError& e : webhook_.ValidateCreate(obj, kBatchJobFramework)) errs.push_back(std::move(e));
    for (FieldError& e : webhook_.ValidateBatchJob(obj, nullptr)) errs.push_back(std::move(e));
    return errs;
  }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs = ValidateJob(obj, false);
    for (FieldError& e : ValidateJobSpecUpdate(obj, old)) errs.push_back(std::move(e));
    for (FieldError& e : webhook_.ValidateUpdate(obj, old, kBatchJobFramework, {"spec", "suspend"})) {
      errs.push_back(std::move(e));
    }
    for (FieldError& e : webhook_.ValidateBatchJob(obj, &old)) errs.push_back(std::move(e));
    return errs;
  }

 private:
  // See the header ("Kueue-managed Jobs").
  void SuspendOnPodCountChange(Object* job, const Object& old) const {
    const Object& spec = Field(*job, "spec");
    const Object& old_spec = Field(old, "spec");
    if (!spec.is_object() || BoolAt(spec, "suspend", false) || BoolAt(old_spec, "suspend", false)) return;
    if (KueueJobPodsCount(spec) == KueueJobPodsCount(old_spec) || !webhook_.Manages(*job, kBatchJobFramework)) return;
    (*job)["spec"]["suspend"] = true;
  }

  const KueueJobWebhook webhook_;
};

}  // namespace

void SetJobDefaults(Object* job) {
  Object* spec = ObjectField(job, "spec");
  if (spec == nullptr) return;
  const bool has_completions = Find(spec, "completions") != nullptr;
  if (!has_completions && Find(spec, "parallelism") == nullptr) (*spec)["completions"] = 1;
  if (Find(spec, "parallelism") == nullptr) (*spec)["parallelism"] = 1;
  if (Find(spec, "backoffLimit") == nullptr) {
    (*spec)["backoffLimit"] = Find(spec, "backoffLimitPerIndex") != nullptr ? kMaxInt32 : int64_t{6};
  }
  const Object* template_labels = Find(Find(Find(spec, "template"), "metadata"), "labels");
  if (template_labels != nullptr && template_labels->is_object()) {
    Object* meta = ObjectField(job, "metadata");
    const Object* labels = Find(meta, "labels");
    if (meta != nullptr && (labels == nullptr || (labels->is_object() && labels->empty()))) {
      (*meta)["labels"] = *template_labels;
    }
  }
  if (Find(spec, "completionMode") == nullptr) (*spec)["completionMode"] = "NonIndexed";
  if (Find(spec, "suspend") == nullptr) (*spec)["suspend"] = false;
  Object* policy = (*spec).contains("podFailurePolicy") ? &(*spec)["podFailurePolicy"] : nullptr;
  const bool has_policy = policy != nullptr && !policy->is_null();
  if (has_policy && policy->is_object() && policy->contains("rules") && (*policy)["rules"].is_array()) {
    for (Object& rule : (*policy)["rules"]) {
      if (!rule.is_object() || !rule.contains("onPodConditions") || !rule["onPodConditions"].is_array()) continue;
      for (Object& pattern : rule["onPodConditions"]) {
        if (!pattern.is_object()) continue;
        const Object* status = Find(&pattern, "status");
        if (status == nullptr || (status->is_string() && status->get<std::string>().empty())) {
          pattern["status"] = "True";
        }
      }
    }
  }
  if (Find(spec, "podReplacementPolicy") == nullptr) {
    (*spec)["podReplacementPolicy"] = has_policy ? "Failed" : "TerminatingOrFailed";
  }
  if (Find(spec, "manualSelector") == nullptr) (*spec)["manualSelector"] = false;
}

void GenerateJobSelector(Object* job) {
  Object* spec = ObjectField(job, "spec");
  // No template: left for schema validation (spec.template: Required value).
  const Object* pod_template = Find(spec, "template");
  if (pod_template == nullptr || !pod_template->is_object()) return;
  Object* labels = ObjectField(ObjectField(ObjectField(spec, "template"), "metadata"), "labels");
  if (labels == nullptr) return;
  const Object* meta = Find(job, "metadata");
  const std::string name = StringField(meta, "name");
  const std::string uid = StringField(meta, "uid");
  // A label the user set is kept (validation rejects a wrong value).
  for (std::string_view key : {kJobLegacyJobNameLabel, kJobNameLabel}) {
    if (!labels->contains(key)) (*labels)[std::string(key)] = name;
  }
  for (std::string_view key : {kJobLegacyControllerUidLabel, kJobControllerUidLabel}) {
    if (!labels->contains(key)) (*labels)[std::string(key)] = uid;
  }
  Object* match_labels = ObjectField(ObjectField(spec, "selector"), "matchLabels");
  if (match_labels != nullptr && !match_labels->contains(kJobControllerUidLabel)) {
    (*match_labels)[std::string(kJobControllerUidLabel)] = uid;
  }
}

FieldErrorList ValidateJobSelector(const Object& job, bool generated) {
  FieldErrorList errs;
  const Object* meta = Find(&job, "metadata");
  const Object* spec = Find(&job, "spec");
  const Object* selector = Find(spec, "selector");
  const Object* template_labels = Find(Find(Find(spec, "template"), "metadata"), "labels");
  if (generated && !ManualSelector(job)) {
    const std::string uid = StringField(meta, "uid");
    if (uid.empty()) errs.push_back(Required(FieldPath("metadata").Child("uid")));
    ValidateHasLabel(template_labels, kJobControllerUidLabel, uid, &errs);
    ValidateHasLabel(template_labels, kJobNameLabel, StringField(meta, "name"), &errs);
    if (selector != nullptr) {
      auto parsed = LabelSelector::FromJson(*selector);
      if (parsed.ok() && !parsed->Matches(Object{{std::string(kJobControllerUidLabel), uid}})) {
        errs.push_back(InvalidGoValue(FieldPath("spec").Child("selector"), GoLabelSelector(*selector),
                                      "`selector` not auto-generated"));
      }
    }
  }
  if (selector == nullptr) {
    // Jobs stored before berth generated selectors have none: required on create only.
    if (generated) errs.push_back(Required(FieldPath("spec").Child("selector")));
    return errs;
  }
  auto parsed = LabelSelector::FromJson(*selector);
  if (parsed.ok() && !parsed->Matches(template_labels != nullptr ? *template_labels : Object::object())) {
    errs.push_back(InvalidGoValue(FieldPath("spec").Child("template").Child("metadata").Child("labels"),
                                  GoStringMap(template_labels), "`selector` does not match template `labels`"));
  }
  return errs;
}

FieldErrorList ValidateJobSpecUpdate(const Object& job, const Object& old) {
  FieldErrorList errs;
  const Object& spec = Field(job, "spec");
  const Object& old_spec = Field(old, "spec");
  const FieldPath path("spec");

  // validateCompletions (ElasticIndexedJob, GA in 1.31).
  const Object& completions = Field(spec, "completions");
  if (completions != Field(old_spec, "completions")) {
    if (Field(spec, "completionMode") != "Indexed") {
      ImmutableScalar(completions, Field(old_spec, "completions"), path.Child("completions"), &errs);
    } else if (!completions.is_null() && completions != Field(spec, "parallelism")) {
      errs.push_back(
          Invalid(path.Child("completions"), completions, "can only be modified in tandem with spec.parallelism"));
    }
  }

  const Object& selector = Field(spec, "selector");
  if (selector != Field(old_spec, "selector")) {
    FieldError e = selector.is_object() ? InvalidGoValue(path.Child("selector"), GoLabelSelector(selector),
                                                         std::string(kFieldIsImmutable))
                                        : Invalid(path.Child("selector"), nullptr, std::string(kFieldIsImmutable));
    errs.push_back(std::move(e));
  }

  // validatePodTemplateUpdate: scheduling directives may change while the Job is suspended
  // and never started (the registry's validationOptionsForJob, from the OLD Job).
  const bool mutable_directives =
      BoolAt(old_spec, "suspend", false) && Field(ObjectAt(old, "status"), "startTime").is_null();
  const Object& pod_template = Field(spec, "template");
  ImmutableStruct(pod_template,
                  mutable_directives ? TemplateWithNewSchedulingDirectives(Field(old_spec, "template"), pod_template)
                                     : Field(old_spec, "template"),
                  path.Child("template"), &errs);

  ImmutableScalar(Field(spec, "completionMode"), Field(old_spec, "completionMode"), path.Child("completionMode"),
                  &errs);
  ImmutableStruct(Field(spec, "podFailurePolicy"), Field(old_spec, "podFailurePolicy"), path.Child("podFailurePolicy"),
                  &errs);
  for (const char* key : {"backoffLimitPerIndex", "managedBy"}) {
    ImmutableScalar(Field(spec, key), Field(old_spec, key), path.Child(key), &errs);
  }
  ImmutableStruct(Field(spec, "successPolicy"), Field(old_spec, "successPolicy"), path.Child("successPolicy"), &errs);
  return errs;
}

void RegisterJobStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& kueue) {
  registry->Register("batch", "Job", std::make_unique<JobStrategy>(KueueJobWebhook(kueue)));
}

}  // namespace berth::api
