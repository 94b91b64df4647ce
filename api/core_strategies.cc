#include "api/core_strategies.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/limits.h"
#include "api/pod_validation.h"
#include "api/priority_admission.h"
#include "api/service_account_admission.h"
#include "api/unstructured.h"
#include "core/base64.h"

namespace berth::api {

namespace {

class NamespaceStrategy : public Strategy {
 public:
  void PrepareForCreate(Object* obj) const override {
    (*obj)["status"] = Object{{"phase", "Active"}};
    // As upstream's namespaceStrategy: the "kubernetes" finalizer is appended
    // when missing; finalizers the user listed are kept. A value of the wrong
    // type is left for schema validation to reject (upstream's decoder would).
    Object& spec = (*obj)["spec"];
    if (spec.is_null()) spec = Object::object();
    if (!spec.is_object()) return;
    auto finalizers = spec.find("finalizers");
    if (finalizers == spec.end() || finalizers->is_null()) {
      spec["finalizers"] = Object::array({"kubernetes"});
    } else if (finalizers->is_array()) {
      bool has = false;
      for (const auto& f : *finalizers) has = has || f == "kubernetes";
      if (!has) finalizers->push_back("kubernetes");
    }
  }
  void PrepareForUpdate(Object* obj, const Object& old) const override {
    auto spec = old.find("spec");
    if (spec != old.end() && spec->is_object() && spec->contains("finalizers")) {
      (*obj)["spec"]["finalizers"] = (*spec)["finalizers"];
    } else if (obj->contains("spec") && (*obj)["spec"].is_object()) {
      (*obj)["spec"].erase("finalizers");
    }
  }
  std::vector<std::string> ValidateName(std::string_view name, bool prefix) const override {
    return NameIsDNSLabel(name, prefix);
  }
};

class PodStrategy : public Strategy {
 public:
  void PrepareForCreate(Object* obj) const override { (*obj)["status"] = Object{{"phase", "Pending"}}; }
  Status Admit(const AdmissionAttributes& attrs, Object* obj) const override {
    BERTH_RETURN_IF_ERROR(AdmitPodServiceAccount(attrs, obj));
    return AdmitPodPriority(attrs, obj);
  }
  // ValidatePod's ValidatePodSpec (api/pod_validation.h); on update, ValidatePodUpdate's
  // rule that only a few spec fields may change (ValidatePodSpecUpdate).
  FieldErrorList ValidateCreate(const Object& obj) const override {
    FieldErrorList errs = ValidatePodSpec(Field(obj, "spec"), FieldPath("spec"));
    // ValidatePodCreate: ephemeral containers come only through the ephemeralcontainers
    // subresource (which berth does not serve); a pod bound at creation cannot wait for gates.
    const Object& spec = Field(obj, "spec");
    if (!ArrayAt(spec, "ephemeralContainers").empty()) {
      errs.push_back(Forbidden(FieldPath("spec").Child("ephemeralContainers"), "cannot be set on create"));
    }
    for (FieldError& e : RefuseWhatBerthCannotRun(spec, FieldPath("spec"))) errs.push_back(std::move(e));
    if (!AsString(Field(spec, "nodeName")).empty() && !ArrayAt(spec, "schedulingGates").empty()) {
      errs.push_back(
          Forbidden(FieldPath("spec").Child("nodeName"), "cannot be set until all schedulingGates have been cleared"));
    }
    return errs;
  }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs = ValidatePodSpec(Field(obj, "spec"), FieldPath("spec"));
    for (FieldError& e : ValidatePodSpecUpdate(Field(obj, "spec"), Field(old, "spec"))) errs.push_back(std::move(e));
    return errs;
  }
  // ValidatePodStatusUpdate's ValidateContainerStateTransition and
  // ValidateInitContainerStateTransition: a container the stored status shows terminated may
  // not be shown otherwise unless it may run again (pod restartPolicy Always, OnFailure after
  // a non-zero exit, or a restartable init container).
  FieldErrorList ValidateStatusUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs;
    const Object& spec = Field(old, "spec");
    const std::string policy = AsString(Field(spec, "restartPolicy"));
    if (policy.empty() || policy == "Always") return errs;
    auto check = [&](const char* list, bool init) {
      const FieldPath path = FieldPath("status").Child(list);
      const Object& before = Field(Field(old, "status"), list);
      const Object& now = Field(Field(obj, "status"), list);
      if (!before.is_array() || !now.is_array()) return;
      for (size_t i = 0; i < before.size(); ++i) {
        const Object& terminated = Field(Field(before[i], "state"), "terminated");
        if (!terminated.is_object()) continue;
        const Object& exit_code = Field(terminated, "exitCode");
        if (policy == "OnFailure" && !(exit_code.is_number_integer() && exit_code.get<int64_t>() == 0)) continue;
        const std::string name = AsString(Field(before[i], "name"));
        if (init && IsRestartableInitContainer(spec, name)) continue;
        for (const Object& status : now) {
          if (AsString(Field(status, "name")) == name && !Field(Field(status, "state"), "terminated").is_object()) {
            errs.push_back(Forbidden(path.Index(i).Child("state"), "may not be transitioned to non-terminated state"));
          }
        }
      }
    };
    check("containerStatuses", false);
    check("initContainerStatuses", true);
    return errs;
  }

 private:
  static bool IsRestartableInitContainer(const Object& spec, const std::string& name) {
    const Object& inits = Field(spec, "initContainers");
    if (!inits.is_array()) return false;
    for (const Object& c : inits) {
      if (AsString(Field(c, "name")) == name) return AsString(Field(c, "restartPolicy")) == "Always";
    }
    return false;
  }
};

// validation.IsConfigMapKey: at most 253 bytes of [-._a-zA-Z0-9], not "." or "..", not
// starting with "..".
std::vector<std::string> IsConfigMapKey(std::string_view key) {
  std::vector<std::string> errs;
  if (key.size() > static_cast<size_t>(kDNS1123SubdomainMaxLength)) {
    errs.push_back(MaxLenError(kDNS1123SubdomainMaxLength));
  }
  const bool chars_ok = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
           c == '_';
  });
  if (!chars_ok) {
    errs.push_back(RegexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
                              "[-._a-zA-Z0-9]+", {"key.name", "KEY_NAME", "key-name"}));
  }
  if (key == ".") {
    errs.push_back("must not be '.'");
  } else if (key == "..") {
    errs.push_back("must not be '..'");
  } else if (key.starts_with("..")) {
    errs.push_back("must not start with '..'");
  }
  return errs;
}

// The bytes a base64 value decodes to (binaryData is []byte upstream; its size is the
// decoded one). Text that is not base64 is the schema's error ("format: byte").
size_t DecodedBase64Size(const std::string& s) {
  size_t pad = 0;
  for (size_t i = s.size(); i > 0 && s[i - 1] == '='; --i) ++pad;
  return s.size() / 4 * 3 - std::min<size_t>(pad, 2);
}

// ValidateConfigMap (pkg/apis/core/validation/validation.go): keys, a data key also in
// binaryData, and the total size of the values (api/limits.h kMaxConfigMapDataBytes).
FieldErrorList ValidateConfigMap(const Object& cm) {
  FieldErrorList errs;
  const Object& data = ObjectAt(cm, "data");
  const Object& binary = ObjectAt(cm, "binaryData");
  size_t total = 0;
  for (const auto& [key, value] : data.items()) {
    for (std::string& msg : IsConfigMapKey(key))
      errs.push_back(Invalid(FieldPath("data").Key(key), key, std::move(msg)));
    if (binary.contains(key)) {
      errs.push_back(Invalid(FieldPath("data").Key(key), key, "duplicate of key present in binaryData"));
    }
    if (value.is_string()) total += value.get_ref<const std::string&>().size();
  }
  for (const auto& [key, value] : binary.items()) {
    for (std::string& msg : IsConfigMapKey(key)) {
      errs.push_back(Invalid(FieldPath("binaryData").Key(key), key, std::move(msg)));
    }
    if (value.is_string()) total += DecodedBase64Size(value.get_ref<const std::string&>());
  }
  // "" is the whole object: kubectl prints ": Too long: ...".
  if (total > kMaxConfigMapDataBytes) errs.push_back(TooLong(FieldPath(""), kMaxConfigMapDataBytes));
  return errs;
}

class ConfigMapStrategy : public Strategy {
 public:
  FieldErrorList ValidateCreate(const Object& obj) const override { return ValidateConfigMap(obj); }
  // ValidateConfigMapUpdate: an immutable ConfigMap keeps immutable, data and binaryData.
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs;
    if (BoolAt(old, "immutable", false)) {
      constexpr std::string_view kDetail = "field is immutable when `immutable` is set";
      if (!BoolAt(obj, "immutable", false)) errs.push_back(Forbidden(FieldPath("immutable"), std::string(kDetail)));
      for (std::string_view f : {"data", "binaryData"}) {
        if (Field(obj, f) != Field(old, f)) errs.push_back(Forbidden(FieldPath(f), std::string(kDetail)));
      }
    }
    for (FieldError& e : ValidateConfigMap(obj)) errs.push_back(std::move(e));
    return errs;
  }
};

// The offset Go's base64.StdEncoding reports for text that is not base64 (CorruptInputError):
// the first byte outside the alphabet or padding out of place, else the start of the last,
// incomplete quantum. nullopt when the text decodes.
std::optional<size_t> Base64ErrorOffset(std::string_view s) {
  if (Base64Decode(s).has_value()) return std::nullopt;
  size_t pad_at = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '=') {
      if (pad_at == std::string_view::npos) pad_at = i;
      continue;
    }
    const bool alnum =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    if (!alnum || pad_at != std::string_view::npos) return pad_at != std::string_view::npos ? pad_at : i;
  }
  if (pad_at != std::string_view::npos) return pad_at;
  return s.size() - s.size() % 4;
}

constexpr char kSecretRedacted[] = "<secret contents redacted>";

// ValidateSecret (pkg/apis/core/validation/validation.go) over the stored (base64) form.
FieldErrorList ValidateSecret(const Object& secret) {
  FieldErrorList errs;
  const FieldPath data_path("data");
  const Object& data = ObjectAt(secret, "data");
  size_t total = 0;
  for (const auto& [key, value] : data.items()) {
    for (std::string& msg : IsConfigMapKey(key)) errs.push_back(Invalid(data_path.Key(key), key, std::move(msg)));
    if (!value.is_string()) continue;
    const std::string& text = value.get_ref<const std::string&>();
    if (auto offset = Base64ErrorOffset(text)) {
      errs.push_back(
          Invalid(data_path.Key(key), kSecretRedacted, "illegal base64 data at input byte " + std::to_string(*offset)));
    } else {
      total += DecodedBase64Size(text);
    }
  }
  if (total > kMaxSecretDataBytes) errs.push_back(TooLong(data_path, kMaxSecretDataBytes));
  const std::string type = StringAt(secret, "type");
  auto require = [&](std::string_view key) {
    if (!data.contains(std::string(key))) errs.push_back(Required(data_path.Key(key)));
  };
  if (type == "kubernetes.io/service-account-token") {
    if (NestedString(secret, {"metadata", "annotations", "kubernetes.io/service-account.name"}).empty()) {
      errs.push_back(Required(FieldPath("metadata").Child("annotations").Key("kubernetes.io/service-account.name")));
    }
  } else if (type == "kubernetes.io/dockercfg") {
    require(".dockercfg");
  } else if (type == "kubernetes.io/dockerconfigjson") {
    require(".dockerconfigjson");
  } else if (type == "kubernetes.io/basic-auth") {
    if (!data.contains("username") && !data.contains("password")) {
      require("username");
      require("password");
    }
  } else if (type == "kubernetes.io/ssh-auth") {
    const Object& key = Field(data, "ssh-privatekey");
    if (!key.is_string() || key.get_ref<const std::string&>().empty())
      errs.push_back(Required(data_path.Key("ssh-privatekey")));
  } else if (type == "kubernetes.io/tls") {
    require("tls.crt");
    require("tls.key");
  }
  return errs;
}

class SecretStrategy : public Strategy {
 public:
  // SetDefaults_Secret, and the v1 conversion of stringData into data.
  void Default(Object* obj) const override {
    const Object& type = Field(*obj, "type");
    if (!type.is_string() || type.get_ref<const std::string&>().empty()) (*obj)["type"] = "Opaque";
    auto string_data = obj->find("stringData");
    if (string_data == obj->end()) return;
    if (string_data->is_object() && !string_data->empty()) {
      Object& data = (*obj)["data"];
      if (!data.is_object()) data = Object::object();
      for (const auto& [key, value] : string_data->items()) {
        if (value.is_string()) data[key] = Base64Encode(value.get_ref<const std::string&>());
      }
    }
    obj->erase("stringData");
  }
  FieldErrorList ValidateCreate(const Object& obj) const override { return ValidateSecret(obj); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs;
    if (Field(obj, "type") != Field(old, "type")) {
      errs.push_back(Invalid(FieldPath("type"), Field(obj, "type"), "field is immutable"));
    }
    if (BoolAt(old, "immutable", false)) {
      constexpr std::string_view kDetail = "field is immutable when `immutable` is set";
      if (!BoolAt(obj, "immutable", false)) errs.push_back(Forbidden(FieldPath("immutable"), std::string(kDetail)));
      if (Field(obj, "data") != Field(old, "data")) errs.push_back(Forbidden(FieldPath("data"), std::string(kDetail)));
    }
    for (FieldError& e : ValidateSecret(obj)) errs.push_back(std::move(e));
    return errs;
  }
};

}  // namespace

// Event (core/v1, also written through events.k8s.io/v1; kubernetes 1.32
// pkg/apis/core/validation/events.go): legacyValidateEvent on every create and update,
// and on create through events.k8s.io/v1 the strict rules (eventTime required, type
// Normal or Warning, the deprecated core fields unset, series count >= 2 with a
// lastObservedTime); an update through events.k8s.io/v1 keeps every field but the series
// and metadata. Errors name the core fields, as upstream validates the internal Event.
class EventStrategy : public Strategy {
 public:
  static constexpr size_t kReportingInstanceLengthLimit = 128;
  static constexpr size_t kActionLengthLimit = 128;
  static constexpr size_t kReasonLengthLimit = 128;
  static constexpr size_t kNoteLengthLimit = 1024;
  static constexpr std::string_view kEventsV1 = "events.k8s.io/v1";

  FieldErrorList ValidateCreate(const Object& obj) const override { return LegacyValidate(obj); }
  FieldErrorList ValidateUpdate(const Object& obj, const Object&) const override { return LegacyValidate(obj); }

  FieldErrorList ValidateRequestVersion(const Object& obj, const Object* old,
                                        std::string_view request_api_version) const override {
    FieldErrorList errs;
    if (request_api_version != kEventsV1) return errs;
    if (old == nullptr || Field(obj, "series") != Field(*old, "series")) ValidateSeries(obj, &errs);
    if (old != nullptr) {
      for (std::string_view f : {"involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp",
                                 "count", "type", "eventTime", "action", "related", "reportingComponent",
                                 "reportingInstance"}) {
        if (Field(obj, f) != Field(*old, f)) {
          errs.push_back(Invalid(FieldPath(f == "reportingComponent" ? "reportingController" : f), Field(obj, f),
                                 "field is immutable"));
        }
      }
      return errs;
    }
    if (!Set(obj, "eventTime")) errs.push_back(Required(FieldPath("eventTime")));
    const std::string type = StringAt(obj, "type");
    if (type != "Normal" && type != "Warning") errs.push_back(Invalid(FieldPath("type"), "", "has invalid value: " + type));
    if (Set(obj, "firstTimestamp")) errs.push_back(Invalid(FieldPath("firstTimestamp"), "", "needs to be unset"));
    if (Set(obj, "lastTimestamp")) errs.push_back(Invalid(FieldPath("lastTimestamp"), "", "needs to be unset"));
    if (Field(obj, "count").is_number() && Field(obj, "count").get<double>() != 0) {
      errs.push_back(Invalid(FieldPath("count"), "", "needs to be unset"));
    }
    const Object& source = Field(obj, "source");
    if (!StringAt(source, "component").empty() || !StringAt(source, "host").empty()) {
      errs.push_back(Invalid(FieldPath("source"), "", "needs to be unset"));
    }
    return errs;
  }

 private:
  // A timestamp field that is set (a non-empty string; the zero time counts as unset).
  static bool Set(const Object& obj, std::string_view field) {
    const Object& v = Field(obj, field);
    return v.is_string() && !v.get_ref<const std::string&>().empty() &&
           v.get_ref<const std::string&>().rfind("0001-01-01T00:00:00", 0) != 0;
  }

  static void ValidateSeries(const Object& obj, FieldErrorList* errs) {
    const Object& series = Field(obj, "series");
    if (!series.is_object()) return;
    const Object& count = Field(series, "count");
    if (!count.is_number_integer() || count.get<int64_t>() < 2) {
      errs->push_back(Invalid(FieldPath("series.count"), "", "should be at least 2"));
    }
    if (!Set(series, "lastObservedTime")) errs->push_back(Required(FieldPath("series.lastObservedTime")));
  }

  static FieldErrorList LegacyValidate(const Object& obj) {
    FieldErrorList errs;
    const std::string ns = Namespace(obj);
    const std::string involved_ns = NestedString(obj, {"involvedObject", "namespace"});
    const FieldPath involved_path = FieldPath("involvedObject").Child("namespace");
    if (!Set(obj, "eventTime")) {
      // An "old" Event: its namespace and the involved object's agree.
      if (involved_ns.empty() ? (!ns.empty() && ns != "default") : ns != involved_ns) {
        errs.push_back(Invalid(involved_path, involved_ns, "does not match event.namespace"));
      }
      return errs;
    }
    if (involved_ns.empty() && ns != "default" && ns != "kube-system") {
      errs.push_back(Invalid(involved_path, involved_ns, "does not match event.namespace"));
    }
    const std::string controller = StringAt(obj, "reportingComponent");
    if (controller.empty()) errs.push_back(Required(FieldPath("reportingController")));
    for (const std::string& msg : IsQualifiedName(controller)) {
      errs.push_back(Invalid(FieldPath("reportingController"), controller, msg));
    }
    auto bounded = [&](std::string_view field, std::string_view path, size_t limit, bool required) {
      const std::string v = StringAt(obj, std::string(field));
      if (required && v.empty()) errs.push_back(Required(FieldPath(path)));
      if (v.size() > limit) {
        errs.push_back(Invalid(FieldPath(path), "", "can have at most " + std::to_string(limit) + " characters"));
      }
    };
    bounded("reportingInstance", "reportingInstance", kReportingInstanceLengthLimit, true);
    bounded("action", "action", kActionLengthLimit, true);
    bounded("reason", "reason", kReasonLengthLimit, true);
    bounded("message", "message", kNoteLengthLimit, false);
    return errs;
  }
};

void RegisterCoreStrategies(StrategyRegistry* registry) {
  registry->Register("", "Event", std::make_unique<EventStrategy>());
  registry->Register("", "Namespace", std::make_unique<NamespaceStrategy>());
  registry->Register("", "Pod", std::make_unique<PodStrategy>());
  registry->Register("", "ConfigMap", std::make_unique<ConfigMapStrategy>());
  registry->Register("", "Secret", std::make_unique<SecretStrategy>());
}

}  // namespace berth::api
