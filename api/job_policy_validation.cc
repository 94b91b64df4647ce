#include "api/job_policy_validation.h"

#include <set>
#include <string>
#include <vector>

#include "api/metadata_validation.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

// An Invalid error whose value is written as given (Go's %#v of a slice or struct).
FieldError InvalidRaw(const FieldPath& path, const std::string& go_value, const std::string& detail) {
  FieldError e = Invalid(path, nullptr, go_value.empty() ? detail : go_value + ": " + detail);
  e.value_omitted = true;
  return e;
}

// Go's %#v of a []int32 (the integers of `values`).
std::string GoInt32s(const Object& values) {
  std::string out = "[]int32{";
  bool first = true;
  for (const Object& v : values) {
    if (!v.is_number_integer()) continue;
    if (!first) out += ", ";
    first = false;
    out += std::to_string(v.get<int64_t>());
  }
  return out + "}";
}

void OnExitCodes(const Object& req, const FieldPath& path, const std::set<std::string>& containers,
                 FieldErrorList* errs) {
  const Object& name = Field(req, "containerName");
  if (name.is_string() && containers.count(name.get<std::string>()) == 0) {
    errs->push_back(Invalid(path.Child("containerName"), name,
                            "must be one of the container or initContainer names in the pod template"));
  }
  const FieldPath values_path = path.Child("values");
  const Object& values = Field(req, "values");
  if (!values.is_array()) return;  // the schema's
  if (values.empty()) {
    errs->push_back(InvalidRaw(values_path, GoInt32s(values), "at least one value is required"));
  } else if (static_cast<int64_t>(values.size()) > kMaxPodFailurePolicyOnExitCodesValues) {
    errs->push_back(TooMany(values_path, static_cast<int64_t>(values.size()), kMaxPodFailurePolicyOnExitCodesValues));
  }
  const bool in = StringAt(req, "operator") == "In";
  bool ordered = true;
  for (size_t j = 0; j < values.size(); ++j) {
    if (!values[j].is_number_integer()) continue;
    const int64_t v = values[j].get<int64_t>();
    if (in && v == 0) errs->push_back(Invalid(values_path.Index(j), v, "must not be 0 for the In operator"));
    // Duplicates: the schema's list-type set reports them at the same path.
    if (j > 0 && values[j - 1].is_number_integer() && values[j - 1].get<int64_t>() > v) ordered = false;
  }
  if (!ordered) errs->push_back(InvalidRaw(values_path, GoInt32s(values), "must be ordered"));
}

void OnPodConditions(const Object& patterns, const FieldPath& path, FieldErrorList* errs) {
  if (static_cast<int64_t>(patterns.size()) > kMaxPodFailurePolicyOnPodConditionsPatterns) {
    errs->push_back(TooMany(path, static_cast<int64_t>(patterns.size()), kMaxPodFailurePolicyOnPodConditionsPatterns));
  }
  for (size_t j = 0; j < patterns.size(); ++j) {
    const FieldPath p = path.Index(j);
    const std::string type = StringAt(patterns[j], "type");
    for (std::string& msg : IsQualifiedName(type)) errs->push_back(Invalid(p.Child("type"), type, std::move(msg)));
    const Object& status = Field(patterns[j], "status");
    if (!status.is_null() && !status.is_string()) continue;  // the schema's
    const std::string value = status.is_string() ? status.get<std::string>() : "";
    if (value.empty()) {
      errs->push_back(Required(p.Child("status"), R"(valid values: ["False" "True" "Unknown"])"));
    } else if (value != "False" && value != "True" && value != "Unknown") {
      errs->push_back(NotSupported(p.Child("status"), value, {"False", "True", "Unknown"}));
    }
  }
}

void PodFailurePolicy(const Object& spec, FieldErrorList* errs) {
  const FieldPath path = FieldPath("spec").Child("podFailurePolicy");
  const Object& rules = Field(Field(spec, "podFailurePolicy"), "rules");
  if (!rules.is_array()) return;  // the schema's
  if (static_cast<int64_t>(rules.size()) > kMaxPodFailurePolicyRules) {
    errs->push_back(TooMany(path.Child("rules"), static_cast<int64_t>(rules.size()), kMaxPodFailurePolicyRules));
  }
  std::set<std::string> containers;
  const Object& pod_spec = NestedField(spec, {"template", "spec"});
  for (const char* list : {"containers", "initContainers"}) {
    const Object& cs = Field(pod_spec, list);
    if (!cs.is_array()) continue;
    for (const Object& c : cs) containers.insert(StringAt(c, "name"));
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    const FieldPath rule_path = path.Child("rules").Index(i);
    const Object& rule = rules[i];
    if (StringAt(rule, "action") == "FailIndex" && Field(spec, "backoffLimitPerIndex").is_null()) {
      errs->push_back(Invalid(rule_path.Child("action"), "FailIndex", "requires the backoffLimitPerIndex to be set"));
    }
    const Object& on_exit_codes = Field(rule, "onExitCodes");
    const Object& on_conditions = Field(rule, "onPodConditions");
    const bool has_exit_codes = on_exit_codes.is_object();
    const bool has_conditions = on_conditions.is_array() && !on_conditions.empty();
    if (has_exit_codes) OnExitCodes(on_exit_codes, rule_path.Child("onExitCodes"), containers, errs);
    if (has_conditions) OnPodConditions(on_conditions, rule_path.Child("onPodConditions"), errs);
    if (has_exit_codes && has_conditions) {
      errs->push_back(InvalidRaw(rule_path, "", "specifying both OnExitCodes and OnPodConditions is not supported"));
    } else if (!has_exit_codes && !has_conditions) {
      errs->push_back(InvalidRaw(rule_path, "", "specifying one of OnExitCodes and OnPodConditions is required"));
    }
  }
  const Object& replacement = Field(spec, "podReplacementPolicy");
  if (replacement.is_string() && replacement.get<std::string>() != "Failed") {
    errs->push_back(NotSupported(FieldPath("spec").Child("podReplacementPolicy"), replacement, {"Failed"}));
  }
}

// Upstream parseIndexInterval / validateIndexesFormat: the number of indexes, or the error.
bool IndexesFormat(const std::string& text, int64_t completions, int64_t* total, std::string* error) {
  *total = 0;
  if (text.empty()) return true;
  auto to_int = [&](const std::string& s, int64_t* out) {
    // strconv.Atoi: an optional sign and decimal digits.
    size_t start = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (s.size() == start || s.size() > start + 18 || s.find_first_not_of("0123456789", start) != std::string::npos) {
      *error = "cannot convert string to integer for index: \"" + s + "\"";
      return false;
    }
    *out = std::stoll(s);
    if (*out >= completions) {
      *error = "too large index: \"" + s + "\"";
      return false;
    }
    return true;
  };
  std::optional<int64_t> last;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    const std::string interval = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::vector<std::string> parts;
    for (size_t from = 0;;) {
      const size_t dash = interval.find('-', from);
      parts.push_back(interval.substr(from, dash == std::string::npos ? std::string::npos : dash - from));
      if (dash == std::string::npos) break;
      from = dash + 1;
    }
    if (parts.size() > 2) {
      *error = "the fragment \"" + interval +
               "\" violates the requirement that an index interval can have at most two parts separated by '-'";
      return false;
    }
    int64_t x = 0, y = 0;
    if (!to_int(parts[0], &x)) return false;
    y = x;
    if (parts.size() == 2) {
      if (!to_int(parts[1], &y)) return false;
      if (x >= y) {
        *error = "non-increasing order, previous: " + std::to_string(x) + ", current: " + std::to_string(y);
        return false;
      }
    }
    if (last && *last >= x) {
      *error = "non-increasing order, previous: " + std::to_string(*last) + ", current: " + std::to_string(x);
      return false;
    }
    *total += y - x + 1;
    last = y;
    if (comma == std::string::npos) return true;
    pos = comma + 1;
  }
}

void SuccessPolicy(const Object& spec, FieldErrorList* errs) {
  const FieldPath path = FieldPath("spec").Child("successPolicy");
  const Object& policy = Field(spec, "successPolicy");
  if (StringAt(spec, "completionMode") != "Indexed") {
    errs->push_back(InvalidRaw(path, "", "requires indexed completion mode"));
    return;
  }
  const Object& rules = Field(policy, "rules");
  if (!rules.is_array()) return;  // the schema's
  if (rules.empty()) {
    errs->push_back(
        Required(path.Child("rules"), "at least one rules must be specified when the successPolicy is specified"));
  }
  if (static_cast<int64_t>(rules.size()) > kMaxSuccessPolicyRules) {
    errs->push_back(TooMany(path.Child("rules"), static_cast<int64_t>(rules.size()), kMaxSuccessPolicyRules));
  }
  const int64_t completions = IntAt(spec, "completions", 0);
  for (size_t i = 0; i < rules.size(); ++i) {
    const FieldPath rule_path = path.Child("rules").Index(i);
    const Object& indexes = Field(rules[i], "succeededIndexes");
    const Object& count = Field(rules[i], "succeededCount");
    if (!indexes.is_string() && !count.is_number_integer()) {
      errs->push_back(Required(rule_path, "at least one of succeededCount or succeededIndexes must be specified"));
    }
    int64_t total = 0;
    if (indexes.is_string()) {
      const std::string text = indexes.get<std::string>();
      if (static_cast<int64_t>(text.size()) > kMaxSuccessPolicySucceededIndexesLength) {
        errs->push_back(TooLong(rule_path.Child("succeededIndexes"), kMaxSuccessPolicySucceededIndexesLength));
      }
      std::string error;
      if (!IndexesFormat(text, completions, &total, &error)) {
        total = 0;
        errs->push_back(Invalid(rule_path.Child("succeededIndexes"), text, "error parsing succeededIndexes: " + error));
      }
    }
    if (count.is_number_integer()) {
      const FieldPath count_path = rule_path.Child("succeededCount");
      const int64_t n = count.get<int64_t>();
      if (n < 0) errs->push_back(Invalid(count_path, n, "must be greater than or equal to 0"));
      if (n > completions) {
        errs->push_back(Invalid(
            count_path, n,
            "must be less than or equal to " + std::to_string(completions) + " (the number of specified completions)"));
      }
      if (indexes.is_string() && n > total) {
        errs->push_back(Invalid(count_path, n,
                                "must be less than or equal to " + std::to_string(total) +
                                    " (the number of indexes in the specified succeededIndexes field)"));
      }
    }
  }
}

}  // namespace

FieldErrorList ValidateJobPolicies(const Object& job) {
  FieldErrorList errs;
  const Object& spec = Field(job, "spec");
  if (!spec.is_object()) return errs;
  const FieldPath path("spec");
  const bool indexed = StringAt(spec, "completionMode") == "Indexed";
  const Object& max_failed = Field(spec, "maxFailedIndexes");
  if (indexed && max_failed.is_number_integer()) {
    const Object& completions = Field(spec, "completions");
    if (completions.is_number_integer() && max_failed.get<int64_t>() > completions.get<int64_t>()) {
      errs.push_back(Invalid(path.Child("maxFailedIndexes"), max_failed, "must be less than or equal to completions"));
    }
    if (max_failed.get<int64_t>() > kMaxFailedIndexesForIndexedJob) {
      errs.push_back(Invalid(path.Child("maxFailedIndexes"), max_failed,
                             "must be less than or equal to " + std::to_string(kMaxFailedIndexesForIndexedJob)));
    }
  }
  if (!indexed) {
    for (const char* field : {"backoffLimitPerIndex", "maxFailedIndexes"}) {
      const Object& v = Field(spec, field);
      if (!v.is_null()) errs.push_back(Invalid(path.Child(field), v, "requires indexed completion mode"));
    }
  }
  if (Field(spec, "podFailurePolicy").is_object()) PodFailurePolicy(spec, &errs);
  if (Field(spec, "successPolicy").is_object()) SuccessPolicy(spec, &errs);
  return errs;
}

}  // namespace berth::api
