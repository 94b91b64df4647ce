#include "api/kueue_job_webhook.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/job_kinds_validation.h"
#include "api/unstructured.h"
#include "api/jobset_webhook.h"

namespace berth::api {
namespace {

bool HasControllerOwner(const Object& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return false;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return false;
  for (const Object& ref : *refs) {
    if (ref.is_object() && ref.value("controller", false)) return true;
  }
  return false;
}

// A label's or an annotation's value (`map`: "labels" or "annotations"); nullopt when
// absent (or not a string).
std::optional<std::string> MetadataValue(const Object& obj, const char* map, std::string_view key) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return std::nullopt;
  auto values = meta->find(map);
  if (values == meta->end() || !values->is_object()) return std::nullopt;
  auto value = values->find(std::string(key));
  if (value == values->end() || !value->is_string()) return std::nullopt;
  return value->get<std::string>();
}
std::optional<std::string> LabelValue(const Object& obj, std::string_view key) {
  return MetadataValue(obj, "labels", key);
}

// The queue-name label's value, "" when absent.
std::string QueueName(const Object& obj) { return LabelValue(obj, kQueueNameLabel).value_or(""); }

enum class ParseError { kNone, kSyntax, kRange };

// Go's strconv.ParseInt(s, 10, bits): an optional sign, then at least one decimal digit;
// a non-digit is a syntax error, a value outside the signed `bits`-bit range a range error.
ParseError ParseGoInt(std::string_view s, int bits, int64_t* out) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return ParseError::kSyntax;
  const uint64_t cutoff = uint64_t{1} << (bits - 1);
  uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return ParseError::kSyntax;
    if (n > cutoff / 10) return ParseError::kRange;  // n * 10 > cutoff (and no uint64 overflow)
    n = n * 10 + static_cast<uint64_t>(c - '0');
    if (n > cutoff) return ParseError::kRange;
  }
  if (!negative && n == cutoff) return ParseError::kRange;
  *out = negative ? static_cast<int64_t>(0 - n) : static_cast<int64_t>(n);  // modular (C++20)
  return ParseError::kNone;
}

// strconv.Atoi's error for `text` (a Go int, 64 bits); nullopt, with *out set, when it parses.
std::optional<std::string> AtoiError(const std::string& text, int64_t* out) {
  switch (ParseGoInt(text, 64, out)) {
    case ParseError::kSyntax:
      return "strconv.Atoi: parsing " + GoQuote(text) + ": invalid syntax";
    case ParseError::kRange:
      return "strconv.Atoi: parsing " + GoQuote(text) + ": value out of range";
    case ParseError::kNone:
      break;
  }
  return std::nullopt;
}

bool IsSuspended(const Object& job, const std::vector<std::string>& suspend_path) {
  const Object* at = &job;
  for (const std::string& key : suspend_path) {
    if (!at->is_object() || !at->contains(key)) return false;
    at = &(*at)[key];
  }
  return at->is_boolean() && at->get<bool>();
}

FieldPath LabelPath(std::string_view key) { return FieldPath("metadata").Child("labels").Key(key); }
FieldPath AnnotationPath(std::string_view key) { return FieldPath("metadata").Child("annotations").Key(key); }

std::optional<std::string> AnnotationValue(const Object& obj, std::string_view key) {
  return MetadataValue(obj, "annotations", key);
}

// Go's strconv.ParseBool.
std::optional<bool> ParseGoBool(std::string_view s) {
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

bool Queued(const Object& obj) { return !QueueName(obj).empty(); }

std::string NamespaceOf(const Object& obj) {
  auto meta = obj.find("metadata");
  return meta != obj.end() && meta->is_object() ? meta->value("namespace", "") : "";
}

// The suspend field, its missing parents created; nullptr when a parent is
// not an object (the schema rejects such a job anyway).
Object* SuspendField(Object* job, const std::vector<std::string>& path) {
  Object* at = job;
  for (const std::string& key : path) {
    if (at->is_null()) *at = Object::object();
    if (!at->is_object()) return nullptr;
    at = &(*at)[key];
  }
  return at;
}

// Kueue's defaulting on create, the kind's own webhook defaults (`defaults`, may be null)
// on create and update, and the kind's own checks (api/job_kinds_validation.h) on create
// and update.
class KueueJobStrategy final : public Strategy {
 public:
  using Defaults = void (*)(Object*);
  using Validate = FieldErrorList (*)(const Object&, const Object* old);
  KueueJobStrategy(KueueJobWebhook webhook, std::string_view framework, std::vector<std::string> path,
                   Defaults defaults, Validate validate)
      : webhook_(std::move(webhook)),
        framework_(framework),
        path_(std::move(path)),
        defaults_(defaults),
        validate_(validate) {}
  void PrepareForCreate(Object* obj) const override { webhook_.Default(obj, framework_, path_); }
  void Default(Object* obj) const override {
    if (defaults_ != nullptr) defaults_(obj);
  }
  FieldErrorList ValidateCreate(const Object& obj) const override {
    FieldErrorList errs = validate_(obj, nullptr);
    for (FieldError& e : webhook_.ValidateCreate(obj, framework_)) errs.push_back(std::move(e));
    return errs;
  }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs = validate_(obj, &old);
    for (FieldError& e : webhook_.ValidateUpdate(obj, old, framework_, path_)) errs.push_back(std::move(e));
    return errs;
  }

 private:
  const KueueJobWebhook webhook_;
  const std::string framework_;
  const std::vector<std::string> path_;
  const Defaults defaults_;
  const Validate validate_;
};

}  // namespace

bool KueueManagesNamespace(std::string_view ns) { return ns != "kube-system" && ns != "kueue-system"; }

std::optional<int32_t> MaxExecTimeSecondsFromLabel(const Object& job) {
  const std::optional<std::string> value = LabelValue(job, kMaxExecTimeSecondsLabel);
  int64_t v = 0;
  if (!value || ParseGoInt(*value, 32, &v) != ParseError::kNone || v <= 0) return std::nullopt;
  return static_cast<int32_t>(v);
}

int64_t KueueJobPodsCount(const Object& spec) {
  int64_t count = IntAt(spec, "parallelism", 1);
  const Object& completions = Field(spec, "completions");
  if (completions.is_number_integer()) count = std::min(count, completions.get<int64_t>());
  return count;
}

bool CompletionsEqualParallelism(const Object& job) {
  const std::optional<std::string> value = AnnotationValue(job, kJobCompletionsEqualParallelismAnnotation);
  return value && ParseGoBool(*value).value_or(false);
}

FieldErrorList KueueJobWebhook::ValidateBatchJob(const Object& job, const Object* old) const {
  if (options_.frameworks.count(kBatchJobFramework) == 0) return {};
  FieldErrorList errs;
  const std::optional<std::string> min = AnnotationValue(job, kJobMinParallelismAnnotation);
  if (min && (old == nullptr || min != AnnotationValue(*old, kJobMinParallelismAnnotation))) {
    const FieldPath path = AnnotationPath(kJobMinParallelismAnnotation);
    int64_t v = 0;
    if (auto error = AtoiError(*min, &v)) {
      errs.push_back(Invalid(path, *min, *error));
    } else if (const int64_t pods = KueueJobPodsCount(Field(job, "spec")); v <= 0 || v >= pods) {
      errs.push_back(Invalid(path, v, "should be between 0 and " + std::to_string(pods - 1)));
    }
  }
  if (const std::optional<std::string> sync = AnnotationValue(job, kJobCompletionsEqualParallelismAnnotation)) {
    const FieldPath path = AnnotationPath(kJobCompletionsEqualParallelismAnnotation);
    const std::optional<bool> enabled = ParseGoBool(*sync);
    if (!enabled) {
      errs.push_back(Invalid(path, *sync, "strconv.ParseBool: parsing " + GoQuote(*sync) + ": invalid syntax"));
    } else if (*enabled) {
      const Object& spec = Field(job, "spec");
      if (Field(spec, "completionMode") != "Indexed") {
        errs.push_back(Invalid(path, *sync, "should not be enabled for NonIndexed jobs"));
      }
      if (IntAt(Field(job, "spec"), "parallelism", 1) != IntAt(Field(job, "spec"), "completions", 1)) {
        errs.push_back(Invalid(FieldPath("spec").Child("completions"), Field(spec, "completions"),
                               "should be equal to parallelism when " +
                                   std::string(kJobCompletionsEqualParallelismAnnotation) + " annotation is true"));
      }
    }
  }
  if (old != nullptr) {
    const std::vector<std::string> suspend = {"spec", "suspend"};
    if (AnnotationValue(*old, kJobMinParallelismAnnotation) && !IsSuspended(*old, suspend) &&
        IntAt(Field(*old, "spec"), "parallelism", 1) != IntAt(Field(job, "spec"), "parallelism", 1)) {
      errs.push_back(Forbidden(FieldPath("spec").Child("parallelism"),
                               "cannot change when partial admission is enabled and the job is not suspended"));
    }
    if (IsSuspended(*old, suspend) == IsSuspended(job, suspend) && !IsSuspended(job, suspend) &&
        CompletionsEqualParallelism(*old) != CompletionsEqualParallelism(job)) {
      errs.push_back(Forbidden(AnnotationPath(kJobCompletionsEqualParallelismAnnotation),
                               "field is immutable while the job is not suspended"));
    }
  }
  return errs;
}

FieldErrorList KueueJobWebhook::ValidateCreate(const Object& job, std::string_view framework) const {
  if (options_.frameworks.count(framework) == 0) return {};
  const std::optional<std::string> value = LabelValue(job, kMaxExecTimeSecondsLabel);
  if (!value) return {};
  int64_t v = 0;
  if (auto error = AtoiError(*value, &v)) return {Invalid(LabelPath(kMaxExecTimeSecondsLabel), *value, *error)};
  if (v <= 0) return {Invalid(LabelPath(kMaxExecTimeSecondsLabel), v, "should be greater than 0")};
  return {};
}

bool KueueJobWebhook::Default(Object* job, std::string_view framework,
                              const std::vector<std::string>& suspend_path) const {
  const bool queued = Queued(*job);
  if (options_.frameworks.count(framework) == 0) {
    // Not Kueue's: an absent suspend on a labelled job must not read as suspended.
    if (!queued || HasControllerOwner(*job)) return false;
    Object* suspend = SuspendField(job, suspend_path);
    if (suspend == nullptr || !suspend->is_null()) return false;
    *suspend = false;
    return true;
  }
  if (!Manages(*job, framework)) return false;
  Object* suspend = SuspendField(job, suspend_path);
  if (suspend == nullptr || (suspend->is_boolean() && suspend->get<bool>())) return false;
  *suspend = true;
  return true;
}

FieldErrorList KueueJobWebhook::ValidateUpdate(const Object& job, const Object& old, std::string_view framework,
                                               const std::vector<std::string>& suspend_path) const {
  if (options_.frameworks.count(framework) == 0) return {};
  FieldErrorList errs;
  const bool suspended = IsSuspended(job, suspend_path);
  if (const std::string now = QueueName(job); !suspended && now != QueueName(old)) {
    errs.push_back(Invalid(LabelPath(kQueueNameLabel), now, "field is immutable"));
  }
  const std::string max_now = LabelValue(job, kMaxExecTimeSecondsLabel).value_or("");
  if ((!suspended || !IsSuspended(old, suspend_path)) &&
      max_now != LabelValue(old, kMaxExecTimeSecondsLabel).value_or("")) {
    errs.push_back(Invalid(LabelPath(kMaxExecTimeSecondsLabel), max_now, "field is immutable"));
  }
  for (FieldError& e : ValidateCreate(job, framework)) errs.push_back(std::move(e));
  return errs;
}

bool KueueJobWebhook::Manages(const Object& job, std::string_view framework) const {
  if (options_.frameworks.count(framework) == 0 || HasControllerOwner(job)) return false;
  return Queued(job) || (options_.manage_jobs_without_queue_name && KueueManagesNamespace(NamespaceOf(job)));
}

void RegisterKueueJobStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& options) {
  const KueueJobWebhook webhook(options);
  registry->Register(
      "jobset.x-k8s.io", "JobSet",
      std::make_unique<KueueJobStrategy>(webhook, kJobSetFramework, std::vector<std::string>{"spec", "suspend"},
                                         &DefaultJobSet, &ValidateJobSetTemplatesAndPatterns));
  registry->Register("kubeflow.org", "PyTorchJob",
                     std::make_unique<KueueJobStrategy>(webhook, kPyTorchJobFramework,
                                                        std::vector<std::string>{"spec", "runPolicy", "suspend"},
                                                        nullptr, &ValidatePyTorchJobTemplates));
}

}  // namespace berth::api
