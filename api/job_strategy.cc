#include "api/job_strategy.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/pod_validation.h"
#include "api/selectors.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

constexpr int64_t kMaxInt32 = 2147483647;

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
  std::string out = "v1.LabelSelector{MatchLabels:" + GoStringMap(Find(&selector, "matchLabels")) +
                    ", MatchExpressions:";
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

// The selector rules, then ValidateJobSpec's ValidatePodTemplateSpec: the template's pod
// spec (api/pod_validation.h).
FieldErrorList ValidateJob(const Object& job, bool create) {
  FieldErrorList errs = ValidateJobSelector(job, create);
  for (FieldError& e : ValidatePodSpec(NestedField(job, {"spec", "template", "spec"}),
                                       FieldPath("spec").Child("template").Child("spec"))) {
    errs.push_back(std::move(e));
  }
  return errs;
}

class JobStrategy final : public Strategy {
 public:
  explicit JobStrategy(KueueJobWebhook webhook) : webhook_(std::move(webhook)) {}

  void PrepareForCreate(Object* obj) const override {
    SetJobDefaults(obj);
    webhook_.Default(obj, kBatchJobFramework, {"spec", "suspend"});
    if (!ManualSelector(*obj)) GenerateJobSelector(obj);
  }
  void PrepareForUpdate(Object* obj, const Object& old) const override { SetJobDefaults(obj); }
  FieldErrorList ValidateCreate(const Object& obj) const override { return ValidateJob(obj, true); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override { return ValidateJob(obj, false); }

 private:
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
        errs.push_back(
            InvalidGoValue(FieldPath("spec").Child("selector"), GoLabelSelector(*selector), "`selector` not auto-generated"));
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

void RegisterJobStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& kueue) {
  registry->Register("batch", "Job", std::make_unique<JobStrategy>(KueueJobWebhook(kueue)));
}

}  // namespace berth::api
