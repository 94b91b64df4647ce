#include "api/resource_definition.h"

#include <algorithm>
#include <optional>
#include <set>

#include "api/field_errors.h"
#include "api/metadata_validation.h"

namespace berth::api {

std::string ResourceDefinition::QualifiedKind() const {
  return group.empty() ? names.kind : names.kind + "." + group;
}

const DefinitionVersion* ResourceDefinition::FindVersion(std::string_view version) const {
  for (const auto& v : versions) {
    if (v.name == version) return &v;
  }
  return nullptr;
}

const DefinitionVersion& ResourceDefinition::StorageVersion() const {
  for (const auto& v : versions) {
    if (v.storage) return v;
  }
  BERTH_CHECK_MSG(false, "definition " + name + " has no storage version");
  return versions.front();
}

std::vector<const DefinitionVersion*> ResourceDefinition::ServedVersions() const {
  std::vector<const DefinitionVersion*> out;
  for (const auto& v : versions) {
    if (v.served) out.push_back(&v);
  }
  std::sort(out.begin(), out.end(), [](const DefinitionVersion* a, const DefinitionVersion* b) {
    return CompareKubeAwareVersions(a->name, b->name) < 0;
  });
  return out;
}

const DefinitionVersion& ResourceDefinition::PreferredVersion() const {
  auto served = ServedVersions();
  BERTH_CHECK_MSG(!served.empty(), "definition " + name + " serves no version");
  return *served.front();
}

namespace {

struct KubeVersion {
  int major = 0;
  int stage = 0;  // 2 GA, 1 beta, 0 alpha
  int minor = 0;
};

// ^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$, numbers of at most 9 digits.
std::optional<KubeVersion> ParseKubeVersion(std::string_view v) {
  auto number = [&v](int* out) {
    size_t n = 0;
    while (n < v.size() && v[n] >= '0' && v[n] <= '9') ++n;
    if (n == 0 || n > 9 || v[0] == '0') return false;
    *out = std::stoi(std::string(v.substr(0, n)));
    v.remove_prefix(n);
    return true;
  };
  if (!v.starts_with('v')) return std::nullopt;
  v.remove_prefix(1);
  KubeVersion k;
  if (!number(&k.major)) return std::nullopt;
  if (v.empty()) {
    k.stage = 2;
    return k;
  }
  for (std::string_view stage : {"alpha", "beta"}) {
    if (!v.starts_with(stage)) continue;
    k.stage = stage == "beta" ? 1 : 0;
    v.remove_prefix(stage.size());
    if (!number(&k.minor) || !v.empty()) return std::nullopt;
    return k;
  }
  return std::nullopt;
}

}  // namespace

int CompareKubeAwareVersions(std::string_view a, std::string_view b) {
  auto ka = ParseKubeVersion(a), kb = ParseKubeVersion(b);
  if (ka && kb) {
    if (ka->stage != kb->stage) return ka->stage > kb->stage ? -1 : 1;
    if (ka->major != kb->major) return ka->major > kb->major ? -1 : 1;
    if (ka->minor != kb->minor) return ka->minor > kb->minor ? -1 : 1;
    return 0;
  }
  if (ka) return -1;
  if (kb) return 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

namespace {

// Reads one optional string field; a non-string is an error.
std::string String(const Object& obj, const char* key, const FieldPath& path, FieldErrorList* errs) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "";
  if (!it->is_string()) {
    errs->push_back(Invalid(path.Child(key), *it, "must be a string"));
    return "";
  }
  return it->get<std::string>();
}

bool Bool(const Object& obj, const char* key, const FieldPath& path, FieldErrorList* errs) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return false;
  if (!it->is_boolean()) {
    errs->push_back(Invalid(path.Child(key), *it, "must be a boolean"));
    return false;
  }
  return it->get<bool>();
}

const Object& Map(const Object& obj, const char* key, const FieldPath& path, FieldErrorList* errs) {
  static const Object kEmpty = Object::object();
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return kEmpty;
  if (!it->is_object()) {
    errs->push_back(Invalid(path.Child(key), *it, "must be a map"));
    return kEmpty;
  }
  return *it;
}

std::vector<std::string> StringList(const Object& obj, const char* key, const FieldPath& path,
                                    FieldErrorList* errs) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return out;
  if (!it->is_array()) {
    errs->push_back(Invalid(path.Child(key), *it, "must be a list of strings"));
    return out;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_string()) {
      errs->push_back(Invalid(path.Child(key).Index(i), (*it)[i], "must be a string"));
      continue;
    }
    out.push_back((*it)[i].get<std::string>());
  }
  return out;
}

void CheckDNS1035(std::string_view value, const FieldPath& path, FieldErrorList* errs) {
  for (const auto& msg : IsDNS1035Label(value)) errs->push_back(Invalid(path, value, msg));
}

ResourceNames ParseNames(const Object& spec, const FieldPath& path, FieldErrorList* errs) {
  ResourceNames n;
  const Object& names = Map(spec, "names", path, errs);
  FieldPath p = path.Child("names");
  n.plural = String(names, "plural", p, errs);
  n.singular = String(names, "singular", p, errs);
  n.kind = String(names, "kind", p, errs);
  n.list_kind = String(names, "listKind", p, errs);
  n.short_names = StringList(names, "shortNames", p, errs);
  n.categories = StringList(names, "categories", p, errs);
  if (n.plural.empty()) {
    errs->push_back(Required(p.Child("plural")));
  } else {
    CheckDNS1035(n.plural, p.Child("plural"), errs);
  }
  if (n.kind.empty()) {
    errs->push_back(Required(p.Child("kind")));
  } else {
    std::string lower = n.kind;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    CheckDNS1035(lower, p.Child("kind"), errs);
    if (!(n.kind[0] >= 'A' && n.kind[0] <= 'Z')) {
      errs->push_back(Invalid(p.Child("kind"), n.kind, "must start with an upper-case letter"));
    }
    if (n.singular.empty()) n.singular = lower;
    if (n.list_kind.empty()) n.list_kind = n.kind + "List";
  }
  if (!n.singular.empty()) CheckDNS1035(n.singular, p.Child("singular"), errs);
  std::set<std::string> seen;
  for (size_t i = 0; i < n.short_names.size(); ++i) {
    CheckDNS1035(n.short_names[i], p.Child("shortNames").Index(i), errs);
    if (!seen.insert(n.short_names[i]).second) {
      errs->push_back(Duplicate(p.Child("shortNames").Index(i), n.short_names[i]));
    }
  }
  for (size_t i = 0; i < n.categories.size(); ++i) {
    CheckDNS1035(n.categories[i], p.Child("categories").Index(i), errs);
  }
  return n;
}

std::vector<PrinterColumn> ParseColumns(const Object& version, const FieldPath& path,
                                        FieldErrorList* errs) {
  std::vector<PrinterColumn> out;
  auto it = version.find("additionalPrinterColumns");
  if (it == version.end() || it->is_null()) return out;
  FieldPath p = path.Child("additionalPrinterColumns");
  if (!it->is_array()) {
    errs->push_back(Invalid(p, *it, "must be a list"));
    return out;
  }
  static const std::vector<std::string> kTypes = {"integer", "number", "string", "boolean", "date"};
  // apiextensions' printer column formats, plus "name" which built-in tables use for the
  // object's name column.
  static const std::vector<std::string> kFormats = {"int32", "int64",     "float",    "double", "byte",
                                                    "date",  "date-time", "password", "name"};
  for (size_t i = 0; i < it->size(); ++i) {
    FieldPath cp = p.Index(i);
    const Object& c = (*it)[i];
    if (!c.is_object()) {
      errs->push_back(Invalid(cp, c, "must be a map"));
      continue;
    }
    PrinterColumn col;
    col.name = String(c, "name", cp, errs);
    col.type = String(c, "type", cp, errs);
    col.format = String(c, "format", cp, errs);
    col.description = String(c, "description", cp, errs);
    col.json_path = String(c, "jsonPath", cp, errs);
    if (auto pr = c.find("priority"); pr != c.end() && !pr->is_null()) {
      if (!pr->is_number_integer() || pr->get<int64_t>() < 0 || pr->get<int64_t>() > INT32_MAX) {
        errs->push_back(Invalid(cp.Child("priority"), *pr, "must be a non-negative int32"));
      } else {
        col.priority = static_cast<int32_t>(pr->get<int64_t>());
      }
    }
    if (col.name.empty()) errs->push_back(Required(cp.Child("name")));
    if (col.type.empty()) {
      errs->push_back(Required(cp.Child("type")));
    } else if (std::find(kTypes.begin(), kTypes.end(), col.type) == kTypes.end()) {
      errs->push_back(NotSupported(cp.Child("type"), col.type, kTypes));
    }
    if (!col.format.empty() && std::find(kFormats.begin(), kFormats.end(), col.format) == kFormats.end()) {
      errs->push_back(NotSupported(cp.Child("format"), col.format, kFormats));
    }
    if (col.json_path.empty()) {
      errs->push_back(Required(cp.Child("jsonPath")));
    } else if (col.json_path[0] != '.') {
      errs->push_back(Invalid(cp.Child("jsonPath"), col.json_path, "must be a simple json path starting with ."));
    }
    out.push_back(std::move(col));
  }
  return out;
}

DefinitionVersion ParseVersion(const Object& v, const FieldPath& p, FieldErrorList* errs) {
  DefinitionVersion out;
  out.name = String(v, "name", p, errs);
  if (out.name.empty()) {
    errs->push_back(Required(p.Child("name")));
  } else {
    CheckDNS1035(out.name, p.Child("name"), errs);
  }
  out.served = Bool(v, "served", p, errs);
  out.storage = Bool(v, "storage", p, errs);
  out.deprecated = Bool(v, "deprecated", p, errs);
  out.deprecation_warning = String(v, "deprecationWarning", p, errs);
  if (!out.deprecation_warning.empty() && !out.deprecated) {
    errs->push_back(Invalid(p.Child("deprecationWarning"), out.deprecation_warning,
                            "can only be set for deprecated versions"));
  }
  const Object& schema = Map(v, "schema", p, errs);
  auto root = schema.find("openAPIV3Schema");
  FieldPath sp = p.Child("schema").Child("openAPIV3Schema");
  if (root == schema.end() || root->is_null()) {
    errs->push_back(Required(sp));
  } else if (!root->is_object()) {
    errs->push_back(Invalid(sp, *root, "must be a map"));
  } else {
    auto type = root->find("type");
    if (type == root->end() || *type != "object") {
      errs->push_back(Invalid(sp.Child("type"), type == root->end() ? Object("") : *type,
                              "must be object at the root"));
    }
    out.schema = *root;
  }
  const Object& sub = Map(v, "subresources", p, errs);
  if (auto st = sub.find("status"); st != sub.end()) {
    if (!st->is_object()) {
      errs->push_back(Invalid(p.Child("subresources").Child("status"), *st, "must be a map"));
    }
    out.status_subresource = true;
  }
  out.printer_columns = ParseColumns(v, p, errs);
  return out;
}

}  // namespace

StatusOr<ResourceDefinition> ParseResourceDefinition(const Object& crd, std::string_view source) {
  FieldErrorList errs;
  ResourceDefinition def;
  def.source = std::string(source);
  if (!crd.is_object()) {
    return InvalidError(std::string(source) + ": a CustomResourceDefinition must be a map");
  }
  const FieldPath root;
  std::string api_version = String(crd, "apiVersion", root, &errs);
  std::string kind = String(crd, "kind", root, &errs);
  if (api_version != "apiextensions.k8s.io/v1") {
    errs.push_back(NotSupported(root.Child("apiVersion"), api_version, {"apiextensions.k8s.io/v1"}));
  }
  if (kind != "CustomResourceDefinition") {
    errs.push_back(NotSupported(root.Child("kind"), kind, {"CustomResourceDefinition"}));
  }
  FieldPath mp("metadata");
  const Object& meta = Map(crd, "metadata", root, &errs);
  def.name = String(meta, "name", mp, &errs);
  const Object& annotations = Map(meta, "annotations", mp, &errs);
  if (auto b = annotations.find(kBuiltinAnnotation); b != annotations.end()) {
    def.builtin = b->is_string() && b->get<std::string>() == "true";
  }
  if (auto b = annotations.find(kAllowCreateOnUpdateAnnotation); b != annotations.end()) {
    def.allow_create_on_update = b->is_string() && b->get<std::string>() == "true";
  }
  if (auto a = annotations.find(kStoredAsAnnotation); a != annotations.end()) {
    const std::string value = a->is_string() ? a->get<std::string>() : "";
    const auto dot = value.find('.');
    def.stored_as = {dot == std::string::npos ? "" : value.substr(dot + 1), value.substr(0, dot)};
    if (value.empty() || !def.builtin) {
      errs.push_back(Invalid(mp.Child("annotations").Key(std::string(kStoredAsAnnotation)), value,
                             "must name another built-in resource as <plural>[.<group>] on a built-in kind"));
    }
  }

  FieldPath sp("spec");
  const Object& spec = Map(crd, "spec", root, &errs);
  def.group = String(spec, "group", sp, &errs);
  if (def.group.empty()) {
    if (!def.builtin) errs.push_back(Required(sp.Child("group")));
  } else {
    for (const auto& msg : IsDNS1123Subdomain(def.group)) {
      errs.push_back(Invalid(sp.Child("group"), def.group, msg));
    }
    if (!def.builtin && def.group.find('.') == std::string::npos) {
      errs.push_back(Invalid(sp.Child("group"), def.group, "should be a domain with at least one dot"));
    }
  }
  def.names = ParseNames(spec, sp, &errs);
  std::string expected_name = def.group.empty() ? def.names.plural : def.names.plural + "." + def.group;
  if (def.name.empty()) {
    errs.push_back(Required(mp.Child("name")));
  } else if (!def.names.plural.empty() && def.name != expected_name) {
    errs.push_back(Invalid(mp.Child("name"), def.name, "must be spec.names.plural+\".\"+spec.group"));
  }
  std::string scope = String(spec, "scope", sp, &errs);
  if (scope == "Namespaced") {
    def.scope = ResourceScope::kNamespaced;
  } else if (scope == "Cluster") {
    def.scope = ResourceScope::kCluster;
  } else if (scope.empty()) {
    errs.push_back(Required(sp.Child("scope")));
  } else {
    errs.push_back(NotSupported(sp.Child("scope"), scope, {"Cluster", "Namespaced"}));
  }

  FieldPath vp = sp.Child("versions");
  auto versions = spec.find("versions");
  if (versions == spec.end() || !versions->is_array() || versions->empty()) {
    errs.push_back(Invalid(vp, versions == spec.end() ? Object::array() : *versions,
                           "must have at least one version"));
  } else {
    std::set<std::string> names;
    int storage = 0, served = 0;
    for (size_t i = 0; i < versions->size(); ++i) {
      const Object& v = (*versions)[i];
      if (!v.is_object()) {
        errs.push_back(Invalid(vp.Index(i), v, "must be a map"));
        continue;
      }
      DefinitionVersion dv = ParseVersion(v, vp.Index(i), &errs);
      if (!dv.name.empty() && !names.insert(dv.name).second) {
        errs.push_back(Duplicate(vp.Index(i).Child("name"), dv.name));
      }
      storage += dv.storage ? 1 : 0;
      served += dv.served ? 1 : 0;
      def.versions.push_back(std::move(dv));
    }
    if (storage != 1) {
      errs.push_back(Invalid(vp, *versions,
                             "must have exactly one version marked as storage version, found " +
                                 std::to_string(storage)));
    }
    if (served == 0) errs.push_back(Invalid(vp, *versions, "must have at least one version served"));
  }

  if (!errs.empty()) {
    std::string msg = std::string(source) + ": ";
    for (size_t i = 0; i < errs.size(); ++i) {
      if (i > 0) msg += "; ";
      // Whole-list values are long and add nothing: name the field and the rule.
      const FieldError& e = errs[i];
      if (e.field == "spec.versions" && e.type == FieldErrorType::kInvalid) {
        msg += e.field + ": " + e.detail;
      } else {
        msg += e.Error();
      }
    }
    return InvalidError(msg);
  }
  return def;
}

}  // namespace berth::api
