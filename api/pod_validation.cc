#include "api/pod_validation.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/limits.h"
#include "api/metadata_validation.h"
#include "api/unstructured.h"
#include "core/quantity.h"

namespace berth::api {
namespace {

// SetDefaults_PodSpec's terminationGracePeriodSeconds, the bound of a sleep hook when the
// spec has none.
constexpr int64_t kDefaultGracePeriodSeconds = 30;
// ValidatePodSpec's bound of activeDeadlineSeconds (math.MaxInt32) and its message.
constexpr int64_t kMaxActiveDeadlineSeconds = 2147483647;
constexpr char kActiveDeadlineErrorMsg[] = "must be between 1 and 2147483647, inclusive";

// ValidateDNS1123Label: one Invalid per message of IsDNS1123Label.
void ValidateDNS1123LabelField(const std::string& value, const FieldPath& path, FieldErrorList* errs) {
  for (std::string& msg : IsDNS1123Label(value)) errs->push_back(Invalid(path, value, std::move(msg)));
}

// helper.IsNativeResource: no domain, or a kubernetes.io/ one.
bool IsNativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos || name.find("kubernetes.io/") != std::string_view::npos;
}

bool IsHugePageResourceName(std::string_view name) { return name.starts_with("hugepages-"); }

// helper.IsExtendedResourceName: not native, not "requests."-prefixed, and a qualified
// name once prefixed with "requests." (its quota name).
bool IsExtendedResourceName(std::string_view name) {
  if (IsNativeResource(name) || name.starts_with("requests.")) return false;
  return IsQualifiedName("requests." + std::string(name)).empty();
}

// helper.IsOvercommitAllowed.
bool IsOvercommitAllowed(std::string_view name) { return IsNativeResource(name) && !IsHugePageResourceName(name); }

std::optional<Quantity> QuantityOf(const Object& v) {
  StatusOr<Quantity> q = v.is_string()           ? Quantity::Parse(v.get_ref<const std::string&>())
                         : v.is_number_integer() ? Quantity::Parse(v.dump())
                                                 : StatusOr<Quantity>(InvalidError("not a quantity"));
  if (!q.ok()) return std::nullopt;  // the schema reports it
  return *q;
}

// ValidateResourceQuantityValue: non-negative; integer for integer resources (the
// extended ones, among the names a container may use).
void ValidateQuantityValue(std::string_view name, const Quantity& q, const FieldPath& path, FieldErrorList* errs) {
  if (q.milli() < 0) errs->push_back(Invalid(path, q.String(), "must be greater than or equal to 0"));
  if (IsExtendedResourceName(name) && q.milli() % 1000 != 0) {
    errs->push_back(Invalid(path, q.String(), "must be an integer"));
  }
}

// ValidateResourceRequirements: limits, then requests against them.
void ValidateResources(const Object& resources, const FieldPath& path, FieldErrorList* errs) {
  const FieldPath lim_path = path.Child("limits");
  const FieldPath req_path = path.Child("requests");
  const Object& limits = ObjectAt(resources, "limits");
  const Object& requests = ObjectAt(resources, "requests");
  for (const auto& [name, value] : limits.items()) {
    if (auto q = QuantityOf(value)) ValidateQuantityValue(name, *q, lim_path.Key(name), errs);
  }
  for (const auto& [name, value] : requests.items()) {
    const std::optional<Quantity> q = QuantityOf(value);
    if (!q) continue;
    ValidateQuantityValue(name, *q, req_path.Key(name), errs);
    auto limit_value = limits.find(name);
    if (limit_value != limits.end()) {
      const std::optional<Quantity> limit = QuantityOf(*limit_value);
      if (!limit) continue;
      if (*q != *limit && !IsOvercommitAllowed(name)) {
        errs->push_back(Invalid(req_path, q->String(), "must be equal to " + name + " limit of " + limit->String()));
      } else if (*q > *limit) {
        errs->push_back(
            Invalid(req_path, q->String(), "must be less than or equal to " + name + " limit of " + limit->String()));
      }
    } else if (!IsOvercommitAllowed(name)) {
      errs->push_back(Required(lim_path, "Limit must be set for non overcommitable resources"));
    }
  }
}

// ValidateEnv with IsRelaxedEnvVarName.
void ValidateEnv(const Object& env, const FieldPath& path, FieldErrorList* errs) {
  for (size_t i = 0; i < env.size(); ++i) {
    const FieldPath name_path = path.Index(i).Child("name");
    const Object& name = Field(env[i], "name");
    if (!name.is_null() && !name.is_string()) continue;  // the schema reports it
    const std::string value = AsString(name);
    if (value.empty()) {
      errs->push_back(Required(name_path));
      continue;
    }
    for (unsigned char c : value) {
      if (c < 0x20 || c > 0x7E || c == '=') {
        errs->push_back(Invalid(name_path, value,
                                "a valid environment variable name must consist only of printable ASCII "
                                "characters other than '='"));
        break;
      }
    }
  }
}

// validateLocalDescendingPath: relative, and no ".." element (split at '/', as
// filepath.ToSlash then strings.Split on a Linux API server).
void ValidateLocalDescendingPath(std::string_view target, const FieldPath& path, FieldErrorList* errs) {
  if (target.starts_with('/')) errs->push_back(Invalid(path, std::string(target), "must be a relative path"));
  size_t start = 0;
  while (start <= target.size()) {
    size_t end = target.find('/', start);
    if (end == std::string_view::npos) end = target.size();
    if (target.substr(start, end - start) == "..") {
      errs->push_back(Invalid(path, std::string(target), "must not contain '..'"));
      break;  // one error however many ".." elements
    }
    start = end + 1;
  }
}

// validateVolumeMounts' subPath and subPathExpr checks. Upstream reports the paths of both
// at `path` (the volumeMounts list, without the mount's index: fldPath.Child("subPath")),
// and the mutual exclusion at the mount's index.
void ValidateVolumeMountPaths(const Object& mounts, const FieldPath& path, FieldErrorList* errs) {
  for (size_t i = 0; i < mounts.size(); ++i) {
    const Object& sub_path = Field(mounts[i], "subPath");
    const Object& sub_path_expr = Field(mounts[i], "subPathExpr");
    const std::string sub = sub_path.is_string() ? sub_path.get<std::string>() : "";
    const std::string expr = sub_path_expr.is_string() ? sub_path_expr.get<std::string>() : "";
    if (!sub.empty()) ValidateLocalDescendingPath(sub, path.Child("subPath"), errs);
    if (!expr.empty()) {
      if (!sub.empty()) {
        errs->push_back(
            Invalid(path.Index(i).Child("subPathExpr"), expr, "subPathExpr and subPath are mutually exclusive"));
      }
      ValidateLocalDescendingPath(expr, path.Child("subPathExpr"), errs);
    }
  }
}

constexpr const char* kFileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive";

// ValidateLocalNonReservedPath: validateLocalDescendingPath, and not starting with ".."
// (the kubelet's atomic writer keeps "..data" and its timestamped directories there)
// unless "../" already said it.
void ValidateLocalNonReservedPath(std::string_view target, const FieldPath& path, FieldErrorList* errs) {
  ValidateLocalDescendingPath(target, path, errs);
  if (target.starts_with("..") && !target.starts_with("../")) {
    errs->push_back(Invalid(path, std::string(target), "must not start with '..'"));
  }
}

// A file mode (defaultMode, items[].mode): 0 to 0777.
void ValidateFileMode(const Object& mode, const FieldPath& path, FieldErrorList* errs) {
  if (mode.is_number_integer() && (mode.get<int64_t>() > 0777 || mode.get<int64_t>() < 0)) {
    errs->push_back(Invalid(path, mode, kFileModeErrorMsg));
  }
}

// A string field that is present and empty, or absent when the schema does not require it.
bool EmptyString(const Object& v) { return v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()); }

// validateKeyToPath.
void ValidateKeyToPath(const Object& item, const FieldPath& path, FieldErrorList* errs) {
  if (EmptyString(Field(item, "key"))) errs->push_back(Required(path.Child("key")));
  const std::string target = StringAt(item, "path");
  if (target.empty()) errs->push_back(Required(path.Child("path")));
  ValidateLocalNonReservedPath(target, path.Child("path"), errs);
  ValidateFileMode(Field(item, "mode"), path.Child("mode"), errs);
}

// validateDownwardAPIVolumeFile; upstream reports an item at the source's path, without
// the item's index.
void ValidateDownwardApiFile(const Object& file, const FieldPath& path, FieldErrorList* errs) {
  const std::string target = StringAt(file, "path");
  if (target.empty()) errs->push_back(Required(path.Child("path")));
  ValidateLocalNonReservedPath(target, path.Child("path"), errs);
  const bool field_ref = Field(file, "fieldRef").is_object();
  if (field_ref && Field(file, "resourceFieldRef").is_object()) {
    errs->push_back(Invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"));
  } else if (!field_ref && !Field(file, "resourceFieldRef").is_object()) {
    errs->push_back(Required(path, "one of fieldRef and resourceFieldRef is required"));
  }
  ValidateFileMode(Field(file, "mode"), path.Child("mode"), errs);
}

// validateProjectionSources.
void ValidateProjection(const Object& projected, const FieldPath& path, FieldErrorList* errs) {
  ValidateFileMode(Field(projected, "defaultMode"), path.Child("defaultMode"), errs);
  std::set<std::string> all_paths;
  const Object& sources = ArrayAt(projected, "sources");
  for (size_t i = 0; i < sources.size(); ++i) {
    const FieldPath src_path = path.Child("sources").Index(i);
    int count = 0;
    for (const char* kind : {"secret", "configMap"}) {
      const Object& source = Field(sources[i], kind);
      if (!source.is_object()) continue;
      ++count;
      const FieldPath proj_path = src_path.Child(kind);
      if (EmptyString(Field(source, "name"))) errs->push_back(Required(proj_path.Child("name")));
      const Object& items = ArrayAt(source, "items");
      for (size_t j = 0; j < items.size(); ++j) {
        ValidateKeyToPath(items[j], proj_path.Child("items").Index(j), errs);
        const std::string target = StringAt(items[j], "path");
        if (!target.empty() && !all_paths.insert(target).second) {
          errs->push_back(Invalid(path, StringAt(source, "name"), "conflicting duplicate paths"));
        }
      }
    }
    if (const Object& source = Field(sources[i], "downwardAPI"); source.is_object()) {
      ++count;
      for (const Object& file : ArrayAt(source, "items")) {
        ValidateDownwardApiFile(file, src_path.Child("downwardAPI"), errs);
        const std::string target = StringAt(file, "path");
        if (!target.empty() && !all_paths.insert(target).second) {
          errs->push_back(Invalid(path, target, "conflicting duplicate paths"));
        }
      }
    }
    if (const Object& source = Field(sources[i], "serviceAccountToken"); source.is_object()) {
      ++count;
      const FieldPath proj_path = src_path.Child("serviceAccountToken");
      const Object& seconds = Field(source, "expirationSeconds");
      // Absent: the API's default, 3600.
      if (seconds.is_number_integer() && seconds.get<int64_t>() < 10 * 60) {
        errs->push_back(
            Invalid(proj_path.Child("expirationSeconds"), seconds, "may not specify a duration less than 10 minutes"));
      }
      if (seconds.is_number_integer() && seconds.get<int64_t>() > (int64_t{1} << 32)) {
        errs->push_back(Invalid(proj_path.Child("expirationSeconds"), seconds,
                                "may not specify a duration larger than 2^32 seconds"));
      }
      const std::string target = StringAt(source, "path");
      if (target.empty()) {
        errs->push_back(Required(path.Child("path")));  // upstream's path, not the source's
      } else {
        ValidateLocalNonReservedPath(target, path.Child("path"), errs);
      }
    }
    if (Field(sources[i], "clusterTrustBundle").is_object()) ++count;
    if (count > 1) errs->push_back(Forbidden(src_path, "may not specify more than 1 volume type"));
  }
}

// validateHostPathVolumeSource.
void ValidateHostPath(const Object& host_path, const FieldPath& path, FieldErrorList* errs) {
  const std::string target = StringAt(host_path, "path");
  if (target.empty()) {
    errs->push_back(Required(path.Child("path")));
    return;
  }
  // validatePathNoBacksteps.
  size_t start = 0;
  while (start <= target.size()) {
    size_t end = target.find('/', start);
    if (end == std::string::npos) end = target.size();
    if (std::string_view(target).substr(start, end - start) == "..") {
      errs->push_back(Invalid(path.Child("path"), target, "must not contain '..'"));
      break;
    }
    start = end + 1;
  }
  const Object& type = Field(host_path, "type");
  static const std::vector<std::string> kTypes = {
      "", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"};
  if (type.is_string() && std::find(kTypes.begin(), kTypes.end(), type.get<std::string>()) == kTypes.end()) {
    errs->push_back(NotSupported(path.Child("type"), type, kTypes));
  }
}

// validateVolumeSource for one volume at `path`: exactly one source; the rules of the
// sources the node agent implements.
void ValidateVolumeSource(const Object& volume, const FieldPath& path, FieldErrorList* errs) {
  int count = 0;
  for (const char* kind : kVolumeSourceFields) {
    const Object& source = Field(volume, kind);
    if (source.is_null()) continue;
    if (count++ > 0) {
      // Upstream's field names in this message (cephFS, and downwardAPI misspelled).
      const std::string_view name = std::string_view(kind) == "cephfs"        ? "cephFS"
                                    : std::string_view(kind) == "downwardAPI" ? "downwarAPI"
                                                                              : kind;
      errs->push_back(Forbidden(path.Child(name), "may not specify more than 1 volume type"));
      continue;
    }
    const FieldPath source_path = path.Child(kind);
    const std::string_view k = kind;
    if (k == "hostPath") {
      ValidateHostPath(source, source_path, errs);
    } else if (k == "emptyDir") {
      // validateEmptyDirVolumeSource: a negative sizeLimit is refused.
      const Object& size = Field(source, "sizeLimit");
      if (!size.is_null()) {
        StatusOr<Quantity> q = Quantity::Parse(size.is_string() ? size.get<std::string>() : size.dump());
        if (q.ok() && q->milli() < 0) {
          errs->push_back(Forbidden(source_path.Child("sizeLimit"), "SizeLimit field must be a valid resource quantity"));
        }
      }
    } else if (k == "secret" || k == "configMap") {
      const char* name_field = k == "secret" ? "secretName" : "name";
      if (EmptyString(Field(source, name_field))) errs->push_back(Required(source_path.Child(name_field)));
      ValidateFileMode(Field(source, "defaultMode"), source_path.Child("defaultMode"), errs);
      const Object& items = ArrayAt(source, "items");
      for (size_t j = 0; j < items.size(); ++j) ValidateKeyToPath(items[j], source_path.Child("items").Index(j), errs);
    } else if (k == "downwardAPI") {
      ValidateFileMode(Field(source, "defaultMode"), source_path.Child("defaultMode"), errs);
      for (const Object& file : ArrayAt(source, "items")) ValidateDownwardApiFile(file, source_path, errs);
    } else if (k == "projected") {
      ValidateProjection(source, source_path, errs);
    }
  }
  if (count == 0) errs->push_back(Required(path, "must specify a volume type"));
}

// ValidateVolumeMounts: name Required and naming a volume (one that validated), mountPath
// Required and unique in the container; subPath and subPathExpr as above.
void ValidateVolumeMounts(const Object& mounts, const std::set<std::string>& volumes, const FieldPath& path,
                          FieldErrorList* errs) {
  std::set<std::string> mount_points;
  for (size_t i = 0; i < mounts.size(); ++i) {
    const FieldPath idx = path.Index(i);
    const std::string name = StringAt(mounts[i], "name");
    if (name.empty()) errs->push_back(Required(idx.Child("name")));
    if (volumes.count(name) == 0) errs->push_back(NotFound(idx.Child("name"), name));
    const std::string mount_path = StringAt(mounts[i], "mountPath");
    if (mount_path.empty()) errs->push_back(Required(idx.Child("mountPath")));
    if (!mount_points.insert(mount_path).second) {
      errs->push_back(Invalid(idx.Child("mountPath"), mount_path, "must be unique"));
    }
  }
  ValidateVolumeMountPaths(mounts, path, errs);
}

// Container lifecycle hooks and probes, as kubernetes/kubernetes
// pkg/apis/core/validation/validation.go (1.32) validates them: validateContainers,
// validateInitContainers, validateLifecycle, validateHandler, validateProbe,
// validateSleepAction, validateHTTPGetAction, ValidatePortNumOrName.

// An integer field's value; nullopt when absent or of another type (the schema's error).
// A value past int64 reads as its largest value.
std::optional<int64_t> IntValue(const Object& v) {
  if (v.is_number_unsigned()) return static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), INT64_MAX));
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

// IsValidPortName (k8s.io/apimachinery/pkg/util/validation): an IANA_SVC_NAME.
std::vector<std::string> IsValidPortName(std::string_view port) {
  std::vector<std::string> errs;
  if (port.size() > 15) errs.push_back(MaxLenError(15));
  const bool charset = !port.empty() && std::all_of(port.begin(), port.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
  if (!charset) errs.push_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  if (std::none_of(port.begin(), port.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
    errs.push_back("must contain at least one letter (a-z)");
  }
  if (port.find("--") != std::string_view::npos) errs.push_back("must not contain consecutive hyphens");
  if (!port.empty() && (port.front() == '-' || port.back() == '-')) {
    errs.push_back("must not begin or end with a hyphen");
  }
  return errs;
}

// ValidatePortNumOrName: a number in 1..65535 (IsValidPortNum; absent reads as Go's zero
// value, 0) or, when `names` allows it, a port name. Another type is the decoder's error.
void ValidatePortNumOrName(const Object& port, bool names, const FieldPath& path, FieldErrorList* errs) {
  if (port.is_string()) {
    if (!names) return;
    for (std::string& msg : IsValidPortName(port.get_ref<const std::string&>())) {
      errs->push_back(Invalid(path, port, std::move(msg)));
    }
    return;
  }
  const std::optional<int64_t> n = port.is_null() ? 0 : IntValue(port);
  if (n && (*n < 1 || *n > 65535)) errs->push_back(Invalid(path, *n, "must be between 1 and 65535, inclusive"));
}

// validateHTTPGetAction. path and scheme are defaulted upstream ("/" and HTTP) before
// validation, so only a scheme that is set is checked.
void ValidateHttpGet(const Object& http, const FieldPath& path, FieldErrorList* errs) {
  ValidatePortNumOrName(Field(http, "port"), true, path.Child("port"), errs);
  const std::string scheme = StringAt(http, "scheme");
  if (!scheme.empty() && scheme != "HTTP" && scheme != "HTTPS") {
    errs->push_back(NotSupported(path.Child("scheme"), scheme, {"HTTP", "HTTPS"}));
  }
  for (const Object& header : ArrayAt(http, "httpHeaders")) {
    const std::string name = StringAt(header, "name");
    const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    });
    if (!ok) {  // IsHTTPHeaderName; reported without the header's index, as upstream
      errs->push_back(Invalid(path.Child("httpHeaders"), name,
                              RegexError("a valid HTTP header must consist of alphanumeric characters or '-'",
                                         "[-A-Za-z0-9]+", {"X-Header-Name"})));
    }
  }
}

// validateSleepAction with the PodLifecycleSleepActionAllowZero gate off (alpha in 1.32),
// reported at the sleep action's path, as upstream.
void ValidateSleep(const Object& sleep, int64_t grace, const FieldPath& path, FieldErrorList* errs) {
  const Object& value = Field(sleep, "seconds");
  const std::optional<int64_t> seconds = value.is_null() ? 0 : IntValue(value);
  if (seconds && (*seconds <= 0 || *seconds > grace)) {
    errs->push_back(Invalid(path, *seconds,
                            "must be greater than 0 and less than terminationGracePeriodSeconds (" +
                                std::to_string(grace) +
                                "). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep."));
  }
}

// Whose handler: a probe's (ProbeHandler: exec, httpGet, tcpSocket, grpc) or a lifecycle
// hook's (LifecycleHandler: exec, httpGet, tcpSocket, sleep).
enum class HandlerKind { kProbe, kLifecycle };

// validateHandler: exactly one handler type ("must specify a handler type"; each one after
// the first, in upstream's order, "may not specify more than 1 handler type"), and the rules
// of that one. `grace` bounds a sleep.
void ValidateHandler(const Object& handler, HandlerKind kind, int64_t grace, const FieldPath& path,
                     FieldErrorList* errs) {
  int count = 0;
  for (std::string_view type : {"exec", "httpGet", "tcpSocket", "grpc", "sleep"}) {
    if (type == (kind == HandlerKind::kProbe ? "sleep" : "grpc")) continue;
    const Object& action = Field(handler, type);
    if (action.is_null()) continue;
    const FieldPath action_path = path.Child(type);
    if (count++ > 0) {
      errs->push_back(Forbidden(action_path, "may not specify more than 1 handler type"));
    } else if (type == "exec") {
      if (ArrayAt(action, "command").empty()) errs->push_back(Required(action_path.Child("command")));
    } else if (type == "httpGet") {
      ValidateHttpGet(action, action_path, errs);
    } else if (type == "tcpSocket" || type == "grpc") {
      ValidatePortNumOrName(Field(action, "port"), type == "tcpSocket", action_path.Child("port"), errs);
    } else {
      ValidateSleep(action, grace, action_path, errs);
    }
  }
  if (count == 0) errs->push_back(Required(path, "must specify a handler type"));
}

enum class ProbeKind { kLiveness, kReadiness, kStartup };

// validateProbe and validateLivenessProbe / validateReadinessProbe / validateStartupProbe.
// Upstream defaults a probe's zero timeoutSeconds, periodSeconds, successThreshold and
// failureThreshold before validation, so an absent or 0 successThreshold is 1.
void ValidateProbe(const Object& probe, ProbeKind kind, const FieldPath& path, FieldErrorList* errs) {
  if (probe.is_null()) return;
  ValidateHandler(probe, HandlerKind::kProbe, 0, path, errs);
  for (const char* name :
       {"initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"}) {
    const std::optional<int64_t> v = IntValue(Field(probe, name));
    if (v && *v < 0) errs->push_back(Invalid(path.Child(name), *v, "must be greater than or equal to 0"));
  }
  const FieldPath grace_path = path.Child("terminationGracePeriodSeconds");
  const Object& grace = Field(probe, "terminationGracePeriodSeconds");
  if (const std::optional<int64_t> g = IntValue(grace); g && *g <= 0) {
    errs->push_back(Invalid(grace_path, *g, "must be greater than 0"));
  }
  if (kind == ProbeKind::kReadiness) {
    if (!grace.is_null()) errs->push_back(Invalid(grace_path, grace, "must not be set for readinessProbes"));
    return;
  }
  const int64_t success = IntValue(Field(probe, "successThreshold")).value_or(0);
  if (success != 0 && success != 1) errs->push_back(Invalid(path.Child("successThreshold"), success, "must be 1"));
}

// validateContainers' and validateInitContainers' lifecycle and probe rules: a container's
// and a sidecar's (an init container with restartPolicy Always) are validated with the
// pod's grace period; any other init container may have none of them.
void ValidateHooksAndProbes(const Object& c, bool init, int64_t grace, const FieldPath& path, FieldErrorList* errs) {
  static constexpr const char* kProbes[] = {"livenessProbe", "readinessProbe", "startupProbe"};
  if (init && StringAt(c, "restartPolicy") != "Always") {
    for (const char* field : {"lifecycle", kProbes[0], kProbes[1], kProbes[2]}) {
      if (!Field(c, field).is_null()) {
        errs->push_back(
            Forbidden(path.Child(field), "may not be set for init containers without restartPolicy=Always"));
      }
    }
    return;
  }
  // validateLifecycle: each hook that is set.
  for (const char* hook : {"postStart", "preStop"}) {
    const Object& handler = Field(Field(c, "lifecycle"), hook);
    if (!handler.is_null()) {
      ValidateHandler(handler, HandlerKind::kLifecycle, grace, path.Child("lifecycle").Child(hook), errs);
    }
  }
  ValidateProbe(Field(c, kProbes[0]), ProbeKind::kLiveness, path.Child(kProbes[0]), errs);
  ValidateProbe(Field(c, kProbes[1]), ProbeKind::kReadiness, path.Child(kProbes[1]), errs);
  ValidateProbe(Field(c, kProbes[2]), ProbeKind::kStartup, path.Child(kProbes[2]), errs);
}

// IsValidUserID / IsValidGroupID (k8s.io/apimachinery/pkg/util/validation): an id in
// [0, kMaxPodId]; a value of another type is the schema's error.
void ValidateId(const Object& id, const FieldPath& path, FieldErrorList* errs) {
  if (id.is_number_integer() && (id.get<int64_t>() < 0 || id.get<int64_t>() > kMaxPodId)) {
    errs->push_back(Invalid(path, id, kIdRangeErrorMsg));
  }
}

// ValidateSecurityContext (container) and ValidatePodSecurityContext (pod): the ids.
void ValidateSecurityContextIds(const Object& sc, bool pod_level, const FieldPath& path, FieldErrorList* errs) {
  if (!sc.is_object()) return;
  ValidateId(Field(sc, "runAsUser"), path.Child("runAsUser"), errs);
  ValidateId(Field(sc, "runAsGroup"), path.Child("runAsGroup"), errs);
  if (!pod_level) return;
  ValidateId(Field(sc, "fsGroup"), path.Child("fsGroup"), errs);
  const Object& groups = ArrayAt(sc, "supplementalGroups");
  for (size_t i = 0; i < groups.size(); ++i) ValidateId(groups[i], path.Child("supplementalGroups").Index(i), errs);
}

// validateContainerCommon (the parts above); with `others`, the name must not be one of
// them.
void ValidateContainer(const Object& c, const FieldPath& path, const std::set<std::string>& volumes,
                       const std::set<std::string>* others, FieldErrorList* errs) {
  const FieldPath name_path = path.Child("name");
  const Object& name = Field(c, "name");
  const std::string value = AsString(name);
  if (value.empty()) {
    if (name.is_null() || name.is_string()) errs->push_back(Required(name_path));
  } else {
    ValidateDNS1123LabelField(value, name_path, errs);
  }
  ValidateEnv(ArrayAt(c, "env"), path.Child("env"), errs);
  ValidateVolumeMounts(ArrayAt(c, "volumeMounts"), volumes, path.Child("volumeMounts"), errs);
  ValidateResources(ObjectAt(c, "resources"), path.Child("resources"), errs);
  ValidateSecurityContextIds(Field(c, "securityContext"), false, path.Child("securityContext"), errs);
  if (others != nullptr && others->count(value) != 0) errs->push_back(Duplicate(name_path, value));
}

// Go's semantic equality for JSON values: null, absent, {} and [] are equal; numbers by value.
bool SemanticallyEqual(const Object& a, const Object& b) {
  auto empty = [](const Object& v) { return v.is_null() || ((v.is_object() || v.is_array()) && v.empty()); };
  if (empty(a) || empty(b)) return empty(a) && empty(b);
  if (a.is_object() && b.is_object()) {
    for (const auto& [k, v] : a.items()) {
      auto it = b.find(k);
      if (!SemanticallyEqual(v, it == b.end() ? Object() : *it)) return false;
    }
    for (const auto& [k, v] : b.items()) {
      if (!a.contains(k) && !empty(v)) return false;
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!SemanticallyEqual(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

// The paths under `path` where `now` and `before` differ, at most `max` of them; below
// kDiffDepth levels a difference is reported at the level reached.
void SpecChanges(const Object& now, const Object& before, const std::string& path, size_t max,
                 std::vector<std::string>* out, int depth = 0) {
  constexpr int kDiffDepth = 8;
  if (out->size() >= max || SemanticallyEqual(now, before)) return;
  if (depth < kDiffDepth && now.is_object() && before.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : now.items()) keys.insert(k);
    for (const auto& [k, v] : before.items()) keys.insert(k);
    for (const std::string& k : keys) {
      SpecChanges(now.contains(k) ? now[k] : Object(), before.contains(k) ? before[k] : Object(), path + "." + k, max,
                  out, depth + 1);
    }
    return;
  }
  if (depth < kDiffDepth && now.is_array() && before.is_array() && now.size() == before.size()) {
    for (size_t i = 0; i < now.size(); ++i) {
      SpecChanges(now[i], before[i], path + "[" + std::to_string(i) + "]", max, out, depth + 1);
    }
    return;
  }
  out->push_back(path);
}

}  // namespace

FieldErrorList ValidatePodSpecUpdate(const Object& spec, const Object& old_spec) {
  if (!spec.is_object() || !old_spec.is_object()) return {};
  // The new spec with every field that may change taken from the old one.
  Object munged = spec;
  auto take_old = [&](const char* key) {
    if (old_spec.contains(key)) {
      munged[key] = old_spec[key];
    } else {
      munged.erase(key);
    }
  };
  for (const char* list : {"containers", "initContainers"}) {
    const Object& old_list = Field(old_spec, list);
    Object* new_list = munged.contains(list) ? &munged[list] : nullptr;
    if (new_list == nullptr || !new_list->is_array() || !old_list.is_array() || new_list->size() != old_list.size()) {
      continue;
    }
    for (size_t i = 0; i < old_list.size(); ++i) {
      if (!(*new_list)[i].is_object() || !old_list[i].is_object()) continue;
      if (old_list[i].contains("image")) {
        (*new_list)[i]["image"] = old_list[i]["image"];
      } else {
        (*new_list)[i].erase("image");
      }
    }
  }
  const Object& deadline = Field(spec, "activeDeadlineSeconds");
  const Object& old_deadline = Field(old_spec, "activeDeadlineSeconds");
  if (deadline.is_number_integer() && deadline.get<int64_t>() > 0 &&
      (old_deadline.is_null() || (old_deadline.is_number_integer() && deadline <= old_deadline))) {
    take_old("activeDeadlineSeconds");
  }
  const Object& tolerations = Field(spec, "tolerations");
  const Object& old_tolerations = Field(old_spec, "tolerations");
  auto contains_all = [](const Object& big, const Object& small) {
    if (small.is_null()) return true;
    if (!big.is_array() || !small.is_array()) return false;
    return std::all_of(small.begin(), small.end(), [&](const Object& t) {
      return std::any_of(big.begin(), big.end(), [&](const Object& u) { return SemanticallyEqual(t, u); });
    });
  };
  if (contains_all(tolerations, old_tolerations)) take_old("tolerations");
  const Object& grace = Field(spec, "terminationGracePeriodSeconds");
  const Object& old_grace = Field(old_spec, "terminationGracePeriodSeconds");
  if (old_grace.is_number_integer() && old_grace.get<int64_t>() < 0 && grace == 1) {
    take_old("terminationGracePeriodSeconds");
  }
  const Object& gates = Field(spec, "schedulingGates");
  const Object& old_gates = Field(old_spec, "schedulingGates");
  if (contains_all(old_gates, gates)) take_old("schedulingGates");
  if (old_gates.is_array() && !old_gates.empty()) {
    take_old("nodeSelector");
    take_old("affinity");
  }
  if (StringAt(old_spec, "nodeName").empty()) take_old("nodeName");

  if (SemanticallyEqual(munged, old_spec)) return {};
  std::vector<std::string> changed;
  SpecChanges(munged, old_spec, "spec", kMaxReportedSpecChanges, &changed);
  std::string detail =
      "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
      "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
      "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"
      "changed:";
  for (const std::string& path : changed) detail += " " + path;
  return {Forbidden(FieldPath("spec"), detail)};
}

FieldErrorList ValidatePodSpec(const Object& spec, const FieldPath& path) {
  FieldErrorList errs;
  // No spec at all: validateContainers' Required (the schema's Required covers a spec
  // without containers); a spec of another type is the schema's type error.
  if (spec.is_null()) errs.push_back(Required(path.Child("containers")));
  if (!spec.is_object()) return errs;

  // ValidateVolumes. Two volumes, two containers or two init containers of one name are
  // the schema's Duplicate errors (their lists are x-kubernetes-list-type map keyed by
  // name), so only the duplicates no list-map sees are reported here.
  const Object& volumes = ArrayAt(spec, "volumes");
  if (volumes.size() > kMaxPodVolumes) {
    errs.push_back(
        TooMany(path.Child("volumes"), static_cast<long long>(volumes.size()), static_cast<long long>(kMaxPodVolumes)));
  }
  std::set<std::string> volume_names;  // the volumes that validated, which mounts may name
  for (size_t i = 0; i < volumes.size(); ++i) {
    const FieldPath name_path = path.Child("volumes").Index(i).Child("name");
    FieldErrorList el;
    ValidateVolumeSource(volumes[i], path.Child("volumes").Index(i), &el);
    const Object& name = Field(volumes[i], "name");
    if (name.is_null() || (name.is_string() && name.get_ref<const std::string&>().empty())) {
      el.push_back(Required(name_path));
    } else if (name.is_string()) {
      ValidateDNS1123LabelField(name.get<std::string>(), name_path, &el);
    }
    if (el.empty()) volume_names.insert(AsString(name));
    errs.insert(errs.end(), el.begin(), el.end());
  }

  // validateContainers: at least one (an absent list is the schema's Required).
  const Object& containers = ArrayAt(spec, "containers");
  if (containers.empty() && Field(spec, "containers").is_array()) {
    errs.push_back(Required(path.Child("containers")));
  }
  // The sleep hooks' bound: terminationGracePeriodSeconds, which upstream defaults to 30.
  const int64_t grace = IntValue(Field(spec, "terminationGracePeriodSeconds")).value_or(kDefaultGracePeriodSeconds);
  for (size_t i = 0; i < containers.size(); ++i) {
    const FieldPath c_path = path.Child("containers").Index(i);
    ValidateContainer(containers[i], c_path, volume_names, nullptr, &errs);
    ValidateHooksAndProbes(containers[i], false, grace, c_path, &errs);
    if (!Field(containers[i], "restartPolicy").is_null()) {
      errs.push_back(Forbidden(c_path.Child("restartPolicy"), "may not be set for non-init containers"));
    }
  }
  // validateInitContainers: an init container may not take a regular container's name.
  std::set<std::string> regular;
  for (const Object& c : containers) regular.insert(AsString(Field(c, "name")));
  const Object& init = ArrayAt(spec, "initContainers");
  for (size_t i = 0; i < init.size(); ++i) {
    const FieldPath c_path = path.Child("initContainers").Index(i);
    ValidateContainer(init[i], c_path, volume_names, &regular, &errs);
    // validateInitContainerRestartPolicy: Always (a sidecar) is the only policy.
    const Object& restart = Field(init[i], "restartPolicy");
    if (restart.is_string() && restart.get_ref<const std::string&>() != "Always") {
      errs.push_back(NotSupported(c_path.Child("restartPolicy"), restart, {"Always"}));
    }
    ValidateHooksAndProbes(init[i], true, grace, c_path, &errs);
  }
  ValidateSecurityContextIds(Field(spec, "securityContext"), true, path.Child("securityContext"), &errs);
  // activeDeadlineSeconds in [1, math.MaxInt32] (validation.InclusiveRangeError).
  const std::optional<int64_t> deadline = IntValue(Field(spec, "activeDeadlineSeconds"));
  if (deadline && (*deadline < 1 || *deadline > kMaxActiveDeadlineSeconds)) {
    errs.push_back(Invalid(path.Child("activeDeadlineSeconds"), *deadline, kActiveDeadlineErrorMsg));
  }
  return errs;
}

FieldErrorList RefuseWhatBerthCannotRun(const Object& spec, const FieldPath& path) {
  FieldErrorList errs;
  const Object& init = ArrayAt(spec, "initContainers");
  for (size_t i = 0; i < init.size(); ++i) {
    if (StringAt(init[i], "restartPolicy") == "Always") {
      errs.push_back(Forbidden(path.Child("initContainers").Index(i).Child("restartPolicy"), kSidecarRefusal));
    }
  }
  return errs;
}

FieldErrorList ValidatePodTemplateSpec(const Object& pod_template, const FieldPath& template_path) {
  const Object& meta = ObjectAt(pod_template, "metadata");
  FieldErrorList errs = ValidateLabels(ObjectAt(meta, "labels"), template_path.Child("labels"));
  for (FieldError& e : ValidateAnnotations(ObjectAt(meta, "annotations"), template_path.Child("annotations"))) {
    errs.push_back(std::move(e));
  }
  const Object& spec = Field(pod_template, "spec");
  const FieldPath path = template_path.Child("spec");
  for (FieldError& e : ValidatePodSpec(spec, path)) errs.push_back(std::move(e));
  for (FieldError& e : RefuseWhatBerthCannotRun(spec, path)) errs.push_back(std::move(e));
  if (!ArrayAt(spec, "ephemeralContainers").empty()) {
    errs.push_back(Forbidden(path.Child("ephemeralContainers"), "ephemeral containers not allowed in pod template"));
  }
  return errs;
}

}  // namespace berth::api
