#include "api/rbac_strategies.h"

#include "api/metadata_validation.h"
#include "api/selectors.h"
#include "api/unstructured.h"

namespace berth::api {
namespace {

constexpr char kRbacGroup[] = "rbac.authorization.k8s.io";

bool NonEmptyList(const Object& obj, const char* name) {
  const Object& v = Field(obj, name);
  return v.is_array() && !v.empty();
}

// Go's %#v of a []string: []string{"a", "b"}.
std::string GoStringSlice(const Object& list) {
  std::string out = "[]string{";
  bool first = true;
  if (list.is_array()) {
    for (const auto& v : list) {
      if (!first) out += ", ";
      out += GoQuote(v.is_string() ? v.get<std::string>() : v.dump());
      first = false;
    }
  }
  return out + "}";
}

// field.Invalid with a value upstream prints with %#v.
FieldError InvalidGoValue(const FieldPath& path, const Object& value, const std::string& go_text,
                          const std::string& detail) {
  FieldError e = Invalid(path, value, go_text + ": " + detail);
  e.value_omitted = true;
  return e;
}

void Append(FieldErrorList* to, FieldErrorList from) {
  for (auto& e : from) to->push_back(std::move(e));
}

// validatePolicyRule.
FieldErrorList ValidatePolicyRule(const Object& rule, bool namespaced, const FieldPath& path) {
  FieldErrorList errs;
  if (!NonEmptyList(rule, "verbs")) {
    errs.push_back(Required(path.Child("verbs"), "verbs must contain at least one value"));
  }
  if (NonEmptyList(rule, "nonResourceURLs")) {
    const Object& urls = Field(rule, "nonResourceURLs");
    if (namespaced) {
      errs.push_back(InvalidGoValue(path.Child("nonResourceURLs"), urls, GoStringSlice(urls),
                                    "namespaced rules cannot apply to non-resource URLs"));
    }
    if (NonEmptyList(rule, "apiGroups") || NonEmptyList(rule, "resources") || NonEmptyList(rule, "resourceNames")) {
      errs.push_back(InvalidGoValue(path.Child("nonResourceURLs"), urls, GoStringSlice(urls),
                                    "rules cannot apply to both regular resources and non-resource URLs"));
    }
    return errs;
  }
  if (!NonEmptyList(rule, "apiGroups")) {
    errs.push_back(Required(path.Child("apiGroups"), "resource rules must supply at least one api group"));
  }
  if (!NonEmptyList(rule, "resources")) {
    errs.push_back(Required(path.Child("resources"), "resource rules must supply at least one resource"));
  }
  if (NonEmptyList(rule, "resourceNames") && Field(rule, "resources").is_array() &&
      Field(rule, "resources").size() > 1) {
    errs.push_back(Required(path.Child("resourceNames"), "resource names cannot apply to multiple resources"));
  }
  return errs;
}

FieldErrorList ValidateRules(const Object& role, bool namespaced) {
  FieldErrorList errs;
  const Object& rules = Field(role, "rules");
  if (!rules.is_array()) return errs;
  for (size_t i = 0; i < rules.size(); ++i) {
    Append(&errs, ValidatePolicyRule(rules[i], namespaced, FieldPath("rules").Index(i)));
  }
  return errs;
}

// validateRoleBindingSubject.
FieldErrorList ValidateSubject(const Object& subject, bool namespaced, const FieldPath& path) {
  FieldErrorList errs;
  const std::string name = StringAt(subject, "name");
  const std::string kind = StringAt(subject, "kind");
  const std::string group = StringAt(subject, "apiGroup");
  if (name.empty()) errs.push_back(Required(path.Child("name")));
  if (kind == "ServiceAccount") {
    if (!name.empty()) {
      for (const auto& msg : NameIsDNSSubdomain(name, false)) errs.push_back(Invalid(path.Child("name"), name, msg));
    }
    if (!group.empty()) errs.push_back(NotSupported(path.Child("apiGroup"), group, {""}));
    if (!namespaced && StringAt(subject, "namespace").empty()) errs.push_back(Required(path.Child("namespace")));
  } else if (kind == "User" || kind == "Group") {
    if (name.empty()) {
      errs.push_back(Invalid(path.Child("name"), name,
                             kind == "User" ? "user name cannot be empty" : "group name cannot be empty"));
    }
    if (group != kRbacGroup) errs.push_back(NotSupported(path.Child("apiGroup"), group, {kRbacGroup}));
  } else {
    errs.push_back(NotSupported(path.Child("kind"), kind, {"ServiceAccount", "User", "Group"}));
  }
  return errs;
}

FieldErrorList ValidateBinding(const Object& binding, bool namespaced) {
  FieldErrorList errs;
  const Object& ref = Field(binding, "roleRef");
  const std::string group = StringAt(ref, "apiGroup");
  const std::string kind = StringAt(ref, "kind");
  const std::string name = StringAt(ref, "name");
  if (group != kRbacGroup) errs.push_back(NotSupported(FieldPath("roleRef").Child("apiGroup"), group, {kRbacGroup}));
  if (namespaced) {
    if (kind != "Role" && kind != "ClusterRole") {
      errs.push_back(NotSupported(FieldPath("roleRef").Child("kind"), kind, {"Role", "ClusterRole"}));
    }
  } else if (kind != "ClusterRole") {
    errs.push_back(NotSupported(FieldPath("roleRef").Child("kind"), kind, {"ClusterRole"}));
  }
  if (name.empty()) {
    errs.push_back(Required(FieldPath("roleRef").Child("name")));
  } else {
    for (const auto& msg : IsValidPathSegmentName(name)) {
      errs.push_back(Invalid(FieldPath("roleRef").Child("name"), name, msg));
    }
  }
  const Object& subjects = Field(binding, "subjects");
  if (subjects.is_array()) {
    for (size_t i = 0; i < subjects.size(); ++i) {
      Append(&errs, ValidateSubject(subjects[i], namespaced, FieldPath("subjects").Index(i)));
    }
  }
  return errs;
}

// SetDefaults_RoleBinding / _ClusterRoleBinding / _Subject.
void DefaultBinding(Object* binding) {
  if (!binding->is_object()) return;
  Object& ref = (*binding)["roleRef"];
  if (ref.is_null()) ref = Object::object();
  if (ref.is_object() && StringAt(ref, "apiGroup").empty()) ref["apiGroup"] = kRbacGroup;
  auto subjects = binding->find("subjects");
  if (subjects == binding->end() || !subjects->is_array()) return;
  for (auto& s : *subjects) {
    if (!s.is_object() || !StringAt(s, "apiGroup").empty()) continue;
    const std::string kind = StringAt(s, "kind");
    if (kind == "User" || kind == "Group") s["apiGroup"] = kRbacGroup;
  }
}

class RoleStrategy : public Strategy {
 public:
  explicit RoleStrategy(bool cluster) : cluster_(cluster) {}
  std::vector<std::string> ValidateName(std::string_view name, bool) const override {
    return IsValidPathSegmentName(name);
  }
  FieldErrorList ValidateCreate(const Object& obj) const override {
    return cluster_ ? ValidateClusterRole(obj) : ValidateRole(obj);
  }
  FieldErrorList ValidateUpdate(const Object& obj, const Object&) const override { return ValidateCreate(obj); }

 private:
  bool cluster_;
};

class BindingStrategy : public Strategy {
 public:
  explicit BindingStrategy(bool cluster) : cluster_(cluster) {}
  std::vector<std::string> ValidateName(std::string_view name, bool) const override {
    return IsValidPathSegmentName(name);
  }
  void Default(Object* obj) const override { DefaultBinding(obj); }
  FieldErrorList ValidateCreate(const Object& obj) const override {
    return cluster_ ? ValidateClusterRoleBinding(obj) : ValidateRoleBinding(obj);
  }
  FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const override {
    FieldErrorList errs = ValidateCreate(obj);
    Append(&errs, ValidateBindingUpdate(obj, old));
    return errs;
  }

 private:
  bool cluster_;
};

}  // namespace

std::vector<std::string> IsValidPathSegmentName(std::string_view name) {
  for (const char* illegal : {".", ".."}) {
    if (name == illegal) return {std::string("may not be '") + illegal + "'"};
  }
  std::vector<std::string> errs;
  for (const char* illegal : {"/", "%"}) {
    if (name.find(illegal) != std::string_view::npos) errs.push_back(std::string("may not contain '") + illegal + "'");
  }
  return errs;
}

FieldErrorList ValidateRole(const Object& role) { return ValidateRules(role, true); }

FieldErrorList ValidateClusterRole(const Object& role) {
  FieldErrorList errs = ValidateRules(role, false);
  const Object& aggregation = Field(role, "aggregationRule");
  if (aggregation.is_object()) {
    const Object& selectors = Field(aggregation, "clusterRoleSelectors");
    FieldPath path = FieldPath("aggregationRule").Child("clusterRoleSelectors");
    if (!selectors.is_array() || selectors.empty()) {
      errs.push_back(Required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil"));
    } else {
      for (size_t i = 0; i < selectors.size(); ++i) Append(&errs, ValidateLabelSelector(selectors[i], path.Index(i)));
    }
  }
  return errs;
}

FieldErrorList ValidateRoleBinding(const Object& binding) { return ValidateBinding(binding, true); }
FieldErrorList ValidateClusterRoleBinding(const Object& binding) { return ValidateBinding(binding, false); }

FieldErrorList ValidateBindingUpdate(const Object& binding, const Object& old) {
  const Object& ref = Field(binding, "roleRef");
  if (ref == Field(old, "roleRef")) return {};
  std::string go = "rbac.RoleRef{APIGroup:" + GoQuote(StringAt(ref, "apiGroup")) +
                   ", Kind:" + GoQuote(StringAt(ref, "kind")) + ", Name:" + GoQuote(StringAt(ref, "name")) + "}";
  return {InvalidGoValue(FieldPath("roleRef"), ref, go, "cannot change roleRef")};
}

void RegisterRbacStrategies(StrategyRegistry* registry) {
  registry->Register(kRbacGroup, "Role", std::make_unique<RoleStrategy>(false));
  registry->Register(kRbacGroup, "ClusterRole", std::make_unique<RoleStrategy>(true));
  registry->Register(kRbacGroup, "RoleBinding", std::make_unique<BindingStrategy>(false));
  registry->Register(kRbacGroup, "ClusterRoleBinding", std::make_unique<BindingStrategy>(true));
}

}  // namespace berth::api
