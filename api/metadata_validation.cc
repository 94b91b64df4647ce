#include "api/metadata_validation.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace berth::api {

namespace {

constexpr std::string_view kDNS1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDNS1123LabelErrMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character";
constexpr std::string_view kDNS1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDNS1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view kDNS1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDNS1035LabelErrMsg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character";
constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view kIsNegativeErrorMsg = "must be greater than or equal to 0";

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?  (first_ok decides the first character's class)
bool MatchesLabel(std::string_view s, bool (*first_ok)(char)) {
  if (s.empty() || !first_ok(s.front()) || !IsLowerAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}
bool MatchesDNS1123Label(std::string_view s) { return MatchesLabel(s, IsLowerAlnum); }
bool MatchesDNS1035Label(std::string_view s) {
  return MatchesLabel(s, [](char c) { return c >= 'a' && c <= 'z'; });
}
bool MatchesDNS1123Subdomain(std::string_view s) {
  while (true) {
    auto dot = s.find('.');
    if (!MatchesDNS1123Label(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

std::vector<std::string> PrefixEach(std::vector<std::string> msgs, std::string_view prefix) {
  for (auto& m : msgs) m = std::string(prefix) + m;
  return msgs;
}

// apimachinery's maskTrailingDash: a generateName prefix may end in '-'.
std::string MaskTrailingDash(std::string_view name) {
  std::string s(name);
  if (s.size() > 1 && s.back() == '-') s.back() = 'a';
  return s;
}

}  // namespace

std::string MaxLenError(int length) {
  return "must be no more than " + std::to_string(length) + " characters";
}

std::string RegexError(std::string_view msg, std::string_view fmt,
                       const std::vector<std::string_view>& examples) {
  std::string out(msg);
  if (examples.empty()) {
    return out + " (regex used for validation is '" + std::string(fmt) + "')";
  }
  out += " (e.g. ";
  for (std::size_t i = 0; i < examples.size(); ++i) {
    if (i > 0) out += " or ";
    out += "'" + std::string(examples[i]) + "', ";
  }
  out += "regex used for validation is '" + std::string(fmt) + "')";
  return out;
}

std::string EmptyError() { return "must be non-empty"; }

std::vector<std::string> IsDNS1123Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123LabelMaxLength) errs.push_back(MaxLenError(kDNS1123LabelMaxLength));
  if (!MatchesDNS1123Label(value)) {
    if (MatchesDNS1123Subdomain(value)) {
      errs.push_back("must not contain dots");
    } else {
      errs.push_back(RegexError(kDNS1123LabelErrMsg, kDNS1123LabelFmt, {"my-name", "123-abc"}));
    }
  }
  return errs;
}

std::vector<std::string> IsDNS1123Subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1123SubdomainMaxLength) {
    errs.push_back(MaxLenError(kDNS1123SubdomainMaxLength));
  }
  if (!MatchesDNS1123Subdomain(value)) {
    errs.push_back(RegexError(kDNS1123SubdomainErrMsg, kDNS1123SubdomainFmt, {"example.com"}));
  }
  return errs;
}

std::vector<std::string> IsDNS1035Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDNS1035LabelMaxLength) errs.push_back(MaxLenError(kDNS1035LabelMaxLength));
  if (!MatchesDNS1035Label(value)) {
    errs.push_back(RegexError(kDNS1035LabelErrMsg, kDNS1035LabelFmt, {"my-name", "abc-123"}));
  }
  return errs;
}

FieldErrorList IsDomainPrefixedPath(const FieldPath& path, std::string_view value) {
  if (value.empty()) return {Required(path)};
  const size_t slash = value.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == value.size()) {
    return {Invalid(path, std::string(value), "must be a domain-prefixed path (such as \"acme.io/foo\")")};
  }
  FieldErrorList errs;
  const std::string host(value.substr(0, slash));
  for (std::string& msg : IsDNS1123Subdomain(host)) errs.push_back(Invalid(path, host, std::move(msg)));
  const std::string_view http_path = value.substr(slash + 1);
  constexpr std::string_view kHttpPathPunctuation = "/-._~%!$&'()*+,;=:";
  const bool valid = std::all_of(http_path.begin(), http_path.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || kHttpPathPunctuation.find(c) != std::string_view::npos;
  });
  if (!valid) {
    errs.push_back(Invalid(path, std::string(http_path),
                           RegexError("Invalid path", "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+", {})));
  }
  return errs;
}

std::vector<std::string> IsQualifiedName(std::string_view value) {
  std::vector<std::string> errs;
  std::string_view name;
  auto slash = value.find('/');
  if (slash == std::string_view::npos) {
    name = value;
  } else if (value.find('/', slash + 1) != std::string_view::npos) {
    errs.push_back("a qualified name " +
                   RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                              {"MyName", "my.name", "123-abc"}) +
                   " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    return errs;
  } else {
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part " + EmptyError());
    } else {
      auto msgs = IsDNS1123Subdomain(prefix);
      for (auto& m : PrefixEach(std::move(msgs), "prefix part ")) errs.push_back(std::move(m));
    }
  }
  if (name.empty()) {
    errs.push_back("name part " + EmptyError());
  } else if (name.size() > kQualifiedNameMaxLength) {
    errs.push_back("name part " + MaxLenError(kQualifiedNameMaxLength));
  }
  if (!MatchesQualifiedNamePart(name)) {
    errs.push_back("name part " + RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                             {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> IsValidLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kLabelValueMaxLength) errs.push_back(MaxLenError(kLabelValueMaxLength));
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    errs.push_back(RegexError(kLabelValueErrMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

std::vector<std::string> NameIsDNSSubdomain(std::string_view name, bool prefix) {
  return IsDNS1123Subdomain(prefix ? MaskTrailingDash(name) : std::string(name));
}

std::vector<std::string> NameIsDNSLabel(std::string_view name, bool prefix) {
  return IsDNS1123Label(prefix ? MaskTrailingDash(name) : std::string(name));
}

std::vector<std::string> NameIsDNS1035Label(std::string_view name, bool prefix) {
  return IsDNS1035Label(prefix ? MaskTrailingDash(name) : std::string(name));
}

FieldErrorList ValidateLabels(const Object& labels, const FieldPath& path) {
  FieldErrorList errs;
  if (!labels.is_object()) return errs;
  for (const auto& [key, value] : labels.items()) {
    for (auto& msg : IsQualifiedName(key)) errs.push_back(Invalid(path, key, std::move(msg)));
    if (!value.is_string()) {
      errs.push_back(TypeInvalid(path.Key(key), value, "must be of type string"));
      continue;
    }
    const auto& v = value.get_ref<const std::string&>();
    for (auto& msg : IsValidLabelValue(v)) errs.push_back(Invalid(path, v, std::move(msg)));
  }
  return errs;
}

FieldErrorList ValidateAnnotations(const Object& annotations, const FieldPath& path) {
  FieldErrorList errs;
  if (!annotations.is_object()) return errs;
  long long total = 0;
  for (const auto& [key, value] : annotations.items()) {
    std::string lower = key;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (auto& msg : IsQualifiedName(lower)) errs.push_back(Invalid(path, key, std::move(msg)));
    total += static_cast<long long>(key.size());
    if (value.is_string()) {
      total += static_cast<long long>(value.get_ref<const std::string&>().size());
    } else {
      errs.push_back(TypeInvalid(path.Key(key), value, "must be of type string"));
    }
  }
  if (total > kTotalAnnotationSizeLimitBytes) {
    errs.push_back(TooLong(path, kTotalAnnotationSizeLimitBytes));
  }
  return errs;
}

FieldErrorList ValidateFinalizers(const Object& finalizers, const FieldPath& path) {
  FieldErrorList errs;
  if (!finalizers.is_array()) return errs;
  bool orphan = false;
  bool foreground = false;
  for (std::size_t i = 0; i < finalizers.size(); ++i) {
    const auto& f = finalizers[i];
    if (!f.is_string()) {
      errs.push_back(TypeInvalid(path.Index(i), f, "must be of type string"));
      continue;
    }
    const auto& name = f.get_ref<const std::string&>();
    for (auto& msg : IsQualifiedName(name)) errs.push_back(Invalid(path, name, std::move(msg)));
    orphan = orphan || name == "orphan";
    foreground = foreground || name == "foregroundDeletion";
  }
  if (orphan && foreground) {
    errs.push_back(Invalid(path, finalizers,
                           "finalizer orphan and foregroundDeletion cannot be both set"));
  }
  return errs;
}

FieldErrorList ValidateObjectMeta(const Object& obj, bool namespaced,
                                  const NameValidator& name_validator, const FieldPath& path) {
  static const Object kEmpty = Object::object();
  const Object* meta = &kEmpty;
  if (auto it = obj.find("metadata"); it != obj.end() && it->is_object()) meta = &*it;
  auto str = [&](const char* key) -> std::string {
    auto it = meta->find(key);
    return it != meta->end() && it->is_string() ? it->get<std::string>() : std::string();
  };

  FieldErrorList errs;
  std::string generate_name = str("generateName");
  if (!generate_name.empty()) {
    for (auto& msg : name_validator(generate_name, true)) {
      errs.push_back(Invalid(path.Child("generateName"), generate_name, std::move(msg)));
    }
  }
  std::string name = str("name");
  if (name.empty()) {
    errs.push_back(Required(path.Child("name"), "name or generateName is required"));
  } else {
    for (auto& msg : name_validator(name, false)) {
      errs.push_back(Invalid(path.Child("name"), name, std::move(msg)));
    }
  }
  std::string ns = str("namespace");
  if (namespaced) {
    if (ns.empty()) {
      errs.push_back(Required(path.Child("namespace")));
    } else {
      for (auto& msg : NameIsDNSLabel(ns, false)) {
        errs.push_back(Invalid(path.Child("namespace"), ns, std::move(msg)));
      }
    }
  } else if (!ns.empty()) {
    errs.push_back(Forbidden(path.Child("namespace"), "not allowed on this type"));
  }
  if (auto it = meta->find("generation"); it != meta->end() && it->is_number() && *it < 0) {
    errs.push_back(Invalid(path.Child("generation"), *it, std::string(kIsNegativeErrorMsg)));
  }
  auto append = [&errs](FieldErrorList more) {
    for (auto& e : more) errs.push_back(std::move(e));
  };
  if (auto it = meta->find("labels"); it != meta->end()) {
    append(ValidateLabels(*it, path.Child("labels")));
  }
  if (auto it = meta->find("annotations"); it != meta->end()) {
    append(ValidateAnnotations(*it, path.Child("annotations")));
  }
  if (auto it = meta->find("finalizers"); it != meta->end()) {
    append(ValidateFinalizers(*it, path.Child("finalizers")));
  }
  return errs;
}

namespace {

// Go's name for a JSON value in "cannot unmarshal <it> into ...": a non-integer number
// bound for an integer carries its text.
std::string GoJsonType(const Object& v, bool integer_wanted) {
  if (v.is_number()) return integer_wanted && v.is_number_float() ? "number " + v.dump() : "number";
  if (v.is_boolean()) return "bool";
  return v.type_name();  // string, object, array
}

Status Unmarshal(const Object& v, std::string_view go_struct, std::string_view field, std::string_view go_type) {
  return InvalidError("json: cannot unmarshal " + GoJsonType(v, go_type == "int64") + " into Go struct field " +
                      std::string(go_struct) + ".metadata." + std::string(field) + " of type " + std::string(go_type));
}

enum class MetaType { kString, kInt64, kStringMap, kStringList, kOwnerReferences, kObjectList };

}  // namespace

Status CheckObjectMetaTypes(const Object& meta) {
  static const std::vector<std::pair<std::string_view, MetaType>> kFields = {
      {"name", MetaType::kString},
      {"generateName", MetaType::kString},
      {"namespace", MetaType::kString},
      {"selfLink", MetaType::kString},
      {"uid", MetaType::kString},
      {"resourceVersion", MetaType::kString},
      {"creationTimestamp", MetaType::kString},
      {"deletionTimestamp", MetaType::kString},
      {"generation", MetaType::kInt64},
      {"deletionGracePeriodSeconds", MetaType::kInt64},
      {"labels", MetaType::kStringMap},
      {"annotations", MetaType::kStringMap},
      {"finalizers", MetaType::kStringList},
      {"ownerReferences", MetaType::kOwnerReferences},
      {"managedFields", MetaType::kObjectList},
  };
  for (const auto& [field, type] : kFields) {
    auto it = meta.find(std::string(field));
    if (it == meta.end() || it->is_null()) continue;
    const Object& v = *it;
    switch (type) {
      case MetaType::kString:
        if (!v.is_string()) return Unmarshal(v, "ObjectMeta", field, "string");
        break;
      case MetaType::kInt64:
        if (!v.is_number_integer()) return Unmarshal(v, "ObjectMeta", field, "int64");
        break;
      case MetaType::kStringMap:
        if (!v.is_object()) return Unmarshal(v, "ObjectMeta", field, "map[string]string");
        for (const auto& [key, value] : v.items()) {
          if (!value.is_string() && !value.is_null()) return Unmarshal(value, "ObjectMeta", field, "string");
        }
        break;
      case MetaType::kStringList:
        if (!v.is_array()) return Unmarshal(v, "ObjectMeta", field, "[]string");
        for (const Object& item : v) {
          if (!item.is_string() && !item.is_null()) return Unmarshal(item, "ObjectMeta", field, "string");
        }
        break;
      case MetaType::kOwnerReferences:
        if (!v.is_array()) return Unmarshal(v, "ObjectMeta", field, "[]v1.OwnerReference");
        for (const Object& ref : v) {
          if (ref.is_null()) continue;
          if (!ref.is_object()) return Unmarshal(ref, "ObjectMeta", field, "v1.OwnerReference");
          for (const auto& [key, value] : ref.items()) {
            if (value.is_null()) continue;
            const bool flag = key == "controller" || key == "blockOwnerDeletion";
            const bool text = key == "apiVersion" || key == "kind" || key == "name" || key == "uid";
            if (flag && !value.is_boolean()) {
              return Unmarshal(value, "OwnerReference", std::string(field) + "." + key, "bool");
            }
            if (text && !value.is_string()) {
              return Unmarshal(value, "OwnerReference", std::string(field) + "." + key, "string");
            }
          }
        }
        break;
      case MetaType::kObjectList:
        if (!v.is_array()) return Unmarshal(v, "ObjectMeta", field, "[]v1.ManagedFieldsEntry");
        for (const Object& item : v) {
          if (!item.is_object() && !item.is_null()) {
            return Unmarshal(item, "ObjectMeta", field, "v1.ManagedFieldsEntry");
          }
        }
        break;
    }
  }
  return Status::Ok();
}

}  // namespace berth::api
