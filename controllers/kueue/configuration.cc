#include "controllers/kueue/configuration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "api/field_errors.h"
#include "api/unstructured.h"
#include "api/yaml_codec.h"

namespace berth::controllers::kueue {

namespace {

constexpr char kGroup[] = "config.kueue.x-k8s.io";
constexpr char kV1beta1[] = "config.kueue.x-k8s.io/v1beta1";
constexpr char kV1beta2[] = "config.kueue.x-k8s.io/v1beta2";

// The frameworks berth implements, and every other one Kueue accepts
// (apis/config/v1beta2 Integrations.Frameworks).
const std::vector<std::string> kImplemented = {std::string(api::kBatchJobFramework), std::string(api::kJobSetFramework),
                                               std::string(api::kPyTorchJobFramework),
                                               std::string(api::kTrainJobFramework)};
const std::vector<std::string> kKueueOnly = {
    "kubeflow.org/mpijob",  "ray.io/rayjob",          "ray.io/rayservice",
    "ray.io/raycluster",    "kubeflow.org/paddlejob", "kubeflow.org/tfjob",
    "kubeflow.org/xgboostjob", "kubeflow.org/jaxjob", "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication", "pod", "deployment",
    "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset"};

// The JSON shape of a field, as the Go type it decodes into.
enum class Shape { kObject, kBool, kInt32, kFloat, kString, kDuration, kStringList, kMap, kList };

struct FieldSpec {
  std::string name;
  Shape shape;
  std::vector<FieldSpec> children;  // kObject: known fields; empty = not checked further
  const char* only_in = nullptr;    // apiVersion that has this field (nullptr: both)
  const char* go_type = nullptr;    // for type errors; defaults from the shape
};

std::string_view GoType(const FieldSpec& f) {
  if (f.go_type) return f.go_type;
  switch (f.shape) {
    case Shape::kObject: return "object";
    case Shape::kBool: return "bool";
    case Shape::kInt32: return "int32";
    case Shape::kFloat: return "float32";
    case Shape::kString: return "string";
    case Shape::kDuration: return "v1.Duration";
    case Shape::kStringList: return "[]string";
    case Shape::kMap: return "map[string]";
    case Shape::kList: return "[]";
  }
  return "";
}

std::string_view JsonTypeName(const api::Object& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "bool";
  if (v.is_number()) return "number";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

// The Configuration's fields (Kueue apis/config v1beta2 + v1beta1). Sections
// berth does not apply are checked for their JSON shape only.
const FieldSpec& ConfigurationSpec() {
  static const FieldSpec spec = [] {
    FieldSpec requeuing{"requeuingStrategy", Shape::kObject,
                        {{"timestamp", Shape::kString},
                         {"backoffLimitCount", Shape::kInt32},
                         {"backoffBaseSeconds", Shape::kInt32},
                         {"backoffMaxSeconds", Shape::kInt32}}};
    FieldSpec wfpr{"waitForPodsReady", Shape::kObject,
                   {{"enable", Shape::kBool, {}, kV1beta1},
                    {"timeout", Shape::kDuration},
                    {"blockAdmission", Shape::kBool},
                    requeuing,
                    {"recoveryTimeout", Shape::kDuration}}};
    FieldSpec integrations{"integrations", Shape::kObject,
                           {{"frameworks", Shape::kStringList},
                            {"externalFrameworks", Shape::kStringList},
                            {"labelKeysToCopy", Shape::kStringList},
                            {"podOptions", Shape::kObject, {}, kV1beta1}}};
    FieldSpec fair{"fairSharing", Shape::kObject,
                   {{"enable", Shape::kBool, {}, kV1beta1}, {"preemptionStrategies", Shape::kStringList}}};
    FieldSpec afs{"admissionFairSharing", Shape::kObject,
                  {{"usageHalfLifeTime", Shape::kDuration},
                   {"usageSamplingInterval", Shape::kDuration},
                   {"resourceWeights", Shape::kMap}}};
    return FieldSpec{"",
                     Shape::kObject,
                     {{"apiVersion", Shape::kString},
                      {"kind", Shape::kString},
                      {"namespace", Shape::kString},
                      {"manageJobsWithoutQueueName", Shape::kBool},
                      {"managedJobsNamespaceSelector", Shape::kObject},
                      {"internalCertManagement", Shape::kObject},
                      wfpr,
                      {"clientConnection", Shape::kObject},
                      integrations,
                      {"multiKueue", Shape::kObject},
                      fair,
                      afs,
                      {"resources", Shape::kObject},
                      {"featureGates", Shape::kMap},
                      {"objectRetentionPolicies",
                       Shape::kObject,
                       {{"workloads",
                         Shape::kObject,
                         {{"afterFinished", Shape::kDuration}, {"afterDeactivatedByKueue", Shape::kDuration}}}}},
                      {"webhook", Shape::kObject},
                      {"leaderElection", Shape::kObject},
                      {"metrics", Shape::kObject},
                      {"health", Shape::kObject},
                      {"pprofBindAddress", Shape::kString},
                      {"controller", Shape::kObject},
                      {"tls", Shape::kObject},
                      {"visibilityServer", Shape::kObject, {}, kV1beta2},
                      {"queueVisibility", Shape::kObject, {}, kV1beta1}}};
  }();
  return spec;
}

// Strict decoding: unknown fields and wrong JSON types, every one collected.
void CheckShape(const api::Object& value, const FieldSpec& spec, const std::string& path,
                const std::string& version, std::vector<std::string>* unknown, std::vector<std::string>* type_errors) {
  auto type_error = [&](const FieldSpec& f, const std::string& p, const api::Object& v) {
    type_errors->push_back(
        fmt::format("json: cannot unmarshal {} into Go struct field {} of type {}", JsonTypeName(v), p, GoType(f)));
  };
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string p = path.empty() ? it.key() : path + "." + it.key();
    auto f = std::find_if(spec.children.begin(), spec.children.end(), [&](const FieldSpec& c) {
      return c.name == it.key() && (c.only_in == nullptr || version == c.only_in);
    });
    if (f == spec.children.end()) {
      unknown->push_back(fmt::format("unknown field \"{}\"", p));
      continue;
    }
    const api::Object& v = it.value();
    if (v.is_null()) continue;  // Go leaves a null field at its zero value
    bool ok = true;
    switch (f->shape) {
      case Shape::kObject:
        ok = v.is_object();
        if (ok && !f->children.empty()) CheckShape(v, *f, p, version, unknown, type_errors);
        break;
      case Shape::kBool: ok = v.is_boolean(); break;
      case Shape::kInt32:
        ok = v.is_number_integer() && v.get<int64_t>() >= INT32_MIN && v.get<int64_t>() <= INT32_MAX;
        break;
      case Shape::kFloat: ok = v.is_number(); break;
      case Shape::kString:
      case Shape::kDuration: ok = v.is_string(); break;
      case Shape::kStringList:
        ok = v.is_array() && std::all_of(v.begin(), v.end(), [](const api::Object& e) { return e.is_string(); });
        break;
      case Shape::kMap: ok = v.is_object(); break;
      case Shape::kList: ok = v.is_array(); break;
    }
    if (!ok) type_error(*f, p, v);
  }
}

}  // namespace

Duration WaitForPodsReadyConfig::Backoff(int32_t n) const {
  const double base = static_cast<double>(backoff_base_seconds);
  const double seconds = std::min(base * std::pow(2.0, std::max(0, n - 1)), static_cast<double>(backoff_max_seconds));
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

std::vector<std::string> KueueConfiguration::DefaultFrameworks() { return kImplemented; }

KueueConfiguration KueueConfiguration::ServerDefault() {
  StatusOr<KueueConfiguration> cfg =
      ParseKueueConfiguration(std::string("{\"apiVersion\":\"") + kV1beta2 + "\",\"kind\":\"Configuration\"}");
  KueueConfiguration out = cfg.ok() ? std::move(cfg).value() : KueueConfiguration();
  out.api_version.clear();  // no file
  out.frameworks = DefaultFrameworks();
  return out;
}

std::vector<std::string> KueueConfiguration::UnmanagedFrameworks() const {
  std::vector<std::string> out;
  for (const std::string& f : kImplemented) {
    if (!Manages(f)) out.push_back(f);
  }
  return out;
}

std::string KueueConfiguration::UnmanagedFrameworksWarning() const {
  const std::vector<std::string> unmanaged = UnmanagedFrameworks();
  if (unmanaged.empty()) return "";
  return fmt::format(
      "integrations.frameworks is [{}] (without an integrations section Kueue manages batch/job only): "
      "{} are NOT managed by Kueue; such jobs are not queued and run as soon as they are created, even with "
      "the {} label; to manage them list them under integrations.frameworks",
      fmt::join(frameworks, ", "), fmt::join(unmanaged, ", "), api::kQueueNameLabel);
}

api::KueueJobWebhookOptions KueueConfiguration::JobWebhookOptions() const {
  return {.frameworks = {frameworks.begin(), frameworks.end()},
          .manage_jobs_without_queue_name = manage_jobs_without_queue_name};
}

bool KueueConfiguration::Manages(std::string_view framework) const {
  return std::find(frameworks.begin(), frameworks.end(), framework) != frameworks.end();
}

StatusOr<Duration> ParseGoDuration(std::string_view text) {
  const std::string original(text);
  auto invalid = [&] { return BadRequestError(fmt::format("time: invalid duration \"{}\"", original)); };
  std::string_view s = text;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration::zero();
  if (s.empty()) return invalid();
  static const std::vector<std::pair<std::string_view, double>> kUnits = {
      {"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"\xCE\xBCs", 1e-6}, {"ms", 1e-3},
      {"s", 1}, {"m", 60}, {"h", 3600}};
  double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    bool digits = false;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, digits = true;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, digits = true;
    }
    if (!digits) return invalid();
    const double number = std::strtod(std::string(s.substr(0, i)).c_str(), nullptr);  // HUGE_VAL: caught below
    s.remove_prefix(i);
    size_t u = 0;
    while (u < s.size() && !std::isdigit(static_cast<unsigned char>(s[u])) && s[u] != '.') ++u;
    const std::string_view unit = s.substr(0, u);
    auto found = std::find_if(kUnits.begin(), kUnits.end(), [&](const auto& p) { return p.first == unit; });
    if (found == kUnits.end()) {
      if (unit.empty()) return BadRequestError(fmt::format("time: missing unit in duration \"{}\"", original));
      return BadRequestError(fmt::format("time: unknown unit \"{}\" in duration \"{}\"", unit, original));
    }
    total += number * found->second;
    s.remove_prefix(u);
  }
  // Go's time.ParseDuration: beyond an int64 of nanoseconds (~292 years) it overflows.
  if (!(total < 9.223372036854775e9)) return invalid();
  const auto d = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(total));
  return negative ? -d : d;
}

StatusOr<KueueConfiguration> ParseKueueConfiguration(std::string_view text, std::string_view source) {
  const std::string prefix = source.empty() ? "" : std::string(source) + ": ";
  auto fail = [&](const std::string& message) { return BadRequestError(prefix + message); };
  auto doc = api::ParseJsonOrYaml(text, source);
  if (!doc.ok()) return doc.status();
  const api::Object& obj = doc.value();
  if (!obj.is_object()) return fail("a Configuration must be a mapping");

  // Type: apiVersion + kind, as the config loader's decoder requires them.
  const std::string version = obj.value("apiVersion", "");
  const std::string kind = obj.value("kind", "");
  if (kind != "Configuration" || (version != kV1beta1 && version != kV1beta2)) {
    if (version.rfind(std::string(kGroup) + "/", 0) == 0 || version == kGroup) {
      if (kind == "Configuration") {
        return fail(fmt::format("no kind \"Configuration\" is registered for version \"{}\"", version));
      }
    }
    return fail(fmt::format(
        "no kind \"{}\" is registered for version \"{}\" (berth reads a Kueue Configuration: apiVersion {} or {}, "
        "kind Configuration)",
        kind, version, kV1beta2, kV1beta1));
  }

  // Strict decoding.
  std::vector<std::string> unknown, type_errors;
  CheckShape(obj, ConfigurationSpec(), "", version, &unknown, &type_errors);
  if (!type_errors.empty()) return fail(type_errors.front());
  if (!unknown.empty()) {
    std::string joined;
    for (const auto& u : unknown) joined += (joined.empty() ? "" : ", ") + u;
    return fail("strict decoding error: " + joined);
  }

  KueueConfiguration cfg;
  cfg.api_version = version;
  const bool v1beta1 = version == kV1beta1;
  api::FieldErrorList errs;

  cfg.manage_jobs_without_queue_name = api::Field(obj, "manageJobsWithoutQueueName").is_boolean() &&
                                       api::Field(obj, "manageJobsWithoutQueueName").get<bool>();

  // waitForPodsReady (defaults as described in the header).
  const api::Object& w = api::Field(obj, "waitForPodsReady");
  WaitForPodsReadyConfig& wc = cfg.wait_for_pods_ready;
  const api::FieldPath wpath("waitForPodsReady");
  if (v1beta1) {
    wc.enabled = api::Field(w, "enable").is_boolean() && api::Field(w, "enable").get<bool>();
    wc.timeout = std::chrono::minutes(5);
    wc.block_admission = true;
  } else {
    wc.enabled = true;
    wc.timeout = std::chrono::minutes(30);
    wc.block_admission = false;
  }
  auto duration = [&](const api::Object& v, const api::FieldPath& p) -> std::optional<Duration> {
    if (!v.is_string()) return std::nullopt;
    auto d = ParseGoDuration(v.get<std::string>());
    if (!d.ok()) {
      errs.push_back(api::Invalid(p, v, d.status().message()));
      return std::nullopt;
    }
    if (d.value() < Duration::zero()) {
      errs.push_back(api::Invalid(p, v, "must be greater than or equal to 0"));
      return std::nullopt;
    }
    return d.value();
  };
  if (auto t = duration(api::Field(w, "timeout"), wpath.Child("timeout")); t && *t > Duration::zero()) wc.timeout = *t;
  if (api::Field(w, "blockAdmission").is_boolean()) wc.block_admission = api::Field(w, "blockAdmission").get<bool>();
  wc.recovery_timeout = v1beta1 ? std::nullopt : std::optional<Duration>(wc.timeout);
  if (const api::Object& r = api::Field(w, "recoveryTimeout"); r.is_string()) {
    auto d = duration(r, wpath.Child("recoveryTimeout"));
    wc.recovery_timeout = d && *d > Duration::zero() ? d : std::nullopt;  // "0s" disables
  }
  const api::Object& rs = api::Field(w, "requeuingStrategy");
  const api::FieldPath rpath = wpath.Child("requeuingStrategy");
  if (const api::Object& ts = api::Field(rs, "timestamp"); ts.is_string()) {
    if (ts == "Eviction") {
      wc.timestamp = RequeuingTimestamp::kEviction;
    } else if (ts == "Creation") {
      wc.timestamp = RequeuingTimestamp::kCreation;
    } else {
      errs.push_back(api::NotSupported(rpath.Child("timestamp"), ts, {"Creation", "Eviction"}));
    }
  }
  auto non_negative = [&](const char* field, auto set) {
    const api::Object& v = api::Field(rs, field);
    if (!v.is_number_integer()) return;
    const int32_t n = v.get<int32_t>();
    if (n < 0) {
      errs.push_back(api::Invalid(rpath.Child(field), v, "must be greater than or equal to 0"));
    } else {
      set(n);
    }
  };
  non_negative("backoffLimitCount", [&](int32_t n) { wc.backoff_limit_count = n; });
  non_negative("backoffBaseSeconds", [&](int32_t n) { wc.backoff_base_seconds = n; });
  non_negative("backoffMaxSeconds", [&](int32_t n) { wc.backoff_max_seconds = n; });

  // integrations.frameworks.
  const api::Object& fw = api::Field(api::Field(obj, "integrations"), "frameworks");
  std::vector<std::string> frameworks;
  const api::FieldPath fpath = api::FieldPath("integrations").Child("frameworks");
  if (fw.is_array()) {
    std::vector<std::string> supported = kImplemented;
    supported.insert(supported.end(), kKueueOnly.begin(), kKueueOnly.end());
    std::sort(supported.begin(), supported.end());
    for (size_t i = 0; i < fw.size(); ++i) {
      const std::string name = fw[i].get<std::string>();
      if (std::find(frameworks.begin(), frameworks.end(), name) != frameworks.end()) {
        errs.push_back(api::Duplicate(fpath.Index(i), name));
      } else if (std::find(kImplemented.begin(), kImplemented.end(), name) != kImplemented.end()) {
        frameworks.push_back(name);
      } else if (std::find(kKueueOnly.begin(), kKueueOnly.end(), name) != kKueueOnly.end()) {
        frameworks.push_back(name);
        cfg.ignored.push_back(fmt::format("integrations.frameworks: \"{}\" (berth has no such job kind)", name));
      } else {
        errs.push_back(api::NotSupported(fpath.Index(i), name, supported));
      }
    }
  }
  cfg.frameworks.clear();
  for (const auto& f : frameworks.empty() ? std::vector<std::string>{"batch/job"} : frameworks) {
    if (std::find(kImplemented.begin(), kImplemented.end(), f) != kImplemented.end()) cfg.frameworks.push_back(f);
  }

  // Fair Sharing (see the header): v1beta1 `enable: true` with the default
  // strategies when none are listed; v1beta2 the section present, its
  // strategies required. Either way the list must be one of Kueue's sets.
  if (const api::Object& fs = api::Field(obj, "fairSharing"); fs.is_object()) {
    const bool enabled = !v1beta1 || (api::Field(fs, "enable").is_boolean() && api::Field(fs, "enable").get<bool>());
    if (enabled) {
      cfg.fair_sharing.enable = true;
      std::vector<std::string> listed;
      if (const api::Object& l = api::Field(fs, "preemptionStrategies"); l.is_array()) {
        for (const api::Object& v : l) listed.push_back(v.get<std::string>());
      }
      if (listed.empty() && v1beta1) listed = {"LessThanOrEqualToFinalShare", "LessThanInitialShare"};
      const api::FieldPath spath = api::FieldPath("fairSharing").Child("preemptionStrategies");
      static const std::vector<std::vector<std::string>> kSets = {
          {"LessThanOrEqualToFinalShare"},
          {"LessThanInitialShare"},
          {"LessThanOrEqualToFinalShare", "LessThanInitialShare"}};
      if (listed.empty()) {
        errs.push_back(api::Required(spath, "must be specified"));
      } else if (std::find(kSets.begin(), kSets.end(), listed) == kSets.end()) {
        std::vector<std::string> supported;
        for (const auto& set : kSets) supported.push_back(fmt::format("{}", fmt::join(set, ",")));
        errs.push_back(api::NotSupported(spath, api::Object(listed), supported));
      } else {
        cfg.fair_sharing.preemption_strategies.clear();
        for (const auto& name : listed) {
          cfg.fair_sharing.preemption_strategies.push_back(
              name == "LessThanInitialShare" ? admission::FairSharingStrategy::kLessThanInitialShare
                                             : admission::FairSharingStrategy::kLessThanOrEqualToFinalShare);
        }
      }
    }
  }
  // admissionFairSharing: Kueue's defaults.go (usageSamplingInterval 5m when
  // 0) and validation.go validateAdmissionFairSharing.
  if (const api::Object& a = api::Field(obj, "admissionFairSharing"); a.is_object()) {
    admission::AdmissionFairSharingConfig& ac = cfg.admission_fair_sharing;
    ac.enabled = true;
    const api::FieldPath apath("admissionFairSharing");
    auto read = [&](const char* field) -> std::optional<Duration> {
      const api::Object& v = api::Field(a, field);
      if (!v.is_string()) return Duration::zero();
      auto d = ParseGoDuration(v.get<std::string>());
      if (!d.ok()) {
        errs.push_back(api::Invalid(apath.Child(field), v, d.status().message()));
        return std::nullopt;
      }
      return d.value();
    };
    if (auto h = read("usageHalfLifeTime")) {
      if (*h < Duration::zero()) {
        errs.push_back(api::Invalid(apath.Child("usageHalfLifeTime"), api::Field(a, "usageHalfLifeTime"),
                                    "must be greater than or equal to 0"));
      }
      ac.usage_half_life_time = *h;
    }
    if (auto i = read("usageSamplingInterval")) {
      if (*i == Duration::zero()) *i = std::chrono::minutes(5);
      if (*i < Duration::zero()) {
        errs.push_back(api::Invalid(apath.Child("usageSamplingInterval"), api::Field(a, "usageSamplingInterval"),
                                    "must be greater than 0"));
      } else if (*i < kMinUsageSamplingInterval) {
        // Each LocalQueue of a usage-based ClusterQueue is reconciled once per interval.
        errs.push_back(api::Invalid(apath.Child("usageSamplingInterval"), api::Field(a, "usageSamplingInterval"),
                                    "must be at least 1s (berth's limit: every LocalQueue is sampled once per "
                                    "interval)"));
      }
      ac.usage_sampling_interval = *i;
    }
    const api::Object& weights = api::Field(a, "resourceWeights");
    if (weights.is_object()) {
      for (auto it = weights.begin(); it != weights.end(); ++it) {
        const api::FieldPath wpath = apath.Child("resourceWeights").Key(it.key());
        if (!it.value().is_number()) {
          errs.push_back(api::Invalid(wpath, it.value(), "must be a number"));
        } else if (!std::isfinite(it.value().get<double>())) {
          // YAML's .nan and .inf (and 1e400) have no JSON form: Kueue's loader refuses them.
          errs.push_back(api::Invalid(wpath, it.value(), "must be a finite number"));
        } else if (it.value().get<double>() < 0) {
          errs.push_back(api::Invalid(wpath, it.value(), "must be greater than or equal to 0"));
        } else {
          ac.resource_weights[it.key()] = it.value().get<double>();
        }
      }
    }
  }

  // objectRetentionPolicies.workloads (Kueue's defaults: nil, nothing deleted).
  if (const api::Object& w = api::NestedField(obj, {"objectRetentionPolicies", "workloads"}); w.is_object()) {
    const api::FieldPath wpath = api::FieldPath("objectRetentionPolicies").Child("workloads");
    if (const api::Object& v = api::Field(w, "afterFinished"); v.is_string()) {
      auto d = ParseGoDuration(v.get<std::string>());
      if (!d.ok()) {
        errs.push_back(api::Invalid(wpath.Child("afterFinished"), v, d.status().message()));
      } else if (*d < Duration::zero()) {
        errs.push_back(api::Invalid(wpath.Child("afterFinished"), v, "must be greater than or equal to 0"));
      } else {
        cfg.workload_retention_after_finished = *d;
      }
    }
    if (w.contains("afterDeactivatedByKueue")) {
      cfg.ignored.push_back("objectRetentionPolicies.workloads.afterDeactivatedByKueue (not applied by berth)");
    }
  }

  if (!errs.empty()) {
    std::string joined;
    for (const auto& e : errs) joined += (joined.empty() ? "" : ", ") + e.Error();
    return fail(errs.size() == 1 ? joined : "[" + joined + "]");
  }

  // What was read but is not applied.
  static const std::vector<std::string> kApplied = {
      "apiVersion",   "kind",        "manageJobsWithoutQueueName", "waitForPodsReady",
      "integrations", "fairSharing", "admissionFairSharing",       "objectRetentionPolicies"};
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (std::find(kApplied.begin(), kApplied.end(), it.key()) == kApplied.end()) {
      cfg.ignored.push_back(it.key() + " (not applied by berth)");
    }
  }
  for (const char* key : {"externalFrameworks", "labelKeysToCopy", "podOptions"}) {
    if (api::Field(obj, "integrations").is_object() && api::Field(obj, "integrations").contains(key)) {
      cfg.ignored.push_back(fmt::format("integrations.{} (not applied by berth)", key));
    }
  }
  return cfg;
}

}  // namespace berth::controllers::kueue
