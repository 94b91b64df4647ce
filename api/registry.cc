#include "api/registry.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "api/yaml_codec.h"

namespace berth::api {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// Discovery order: core group, other built-in groups, custom groups; then group, plural.
auto OrderKey(const ResourceDefinition& d) {
  int rank = d.group.empty() ? 0 : (d.builtin ? 1 : 2);
  return std::make_tuple(rank, d.group, d.names.plural);
}

bool HasName(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

Registry::Registry() = default;
Registry::Registry(Registry&&) noexcept = default;
Registry& Registry::operator=(Registry&&) noexcept = default;
Registry::~Registry() = default;

StatusOr<Registry> Registry::Build(std::vector<ResourceDefinition> definitions,
                                   SchemaDefinitions schemas) {
  Registry r;
  r.compiler_ = std::make_unique<SchemaCompiler>(std::move(schemas));
  BERTH_RETURN_IF_ERROR(r.compiler_->CompileAllDefinitions("resources/definitions"));

  std::map<std::pair<std::string, std::string>, std::string> by_resource, by_kind;
  std::map<std::string, std::string> by_name;
  for (auto& def : definitions) {
    auto dup = [&](auto& index, auto key, const std::string& what) -> Status {
      auto [it, inserted] = index.emplace(key, def.source);
      if (inserted) return Status::Ok();
      return InvalidError(def.source + ": " + what + " is already defined by " + it->second);
    };
    BERTH_RETURN_IF_ERROR(dup(by_resource, std::make_pair(def.group, def.names.plural),
                              "resource \"" + def.Resource().String() + "\""));
    BERTH_RETURN_IF_ERROR(dup(by_kind, std::make_pair(def.group, def.names.kind),
                              "kind \"" + def.QualifiedKind() + "\""));
    BERTH_RETURN_IF_ERROR(dup(by_name, def.name, "definition \"" + def.name + "\""));
    for (size_t i = 0; i < def.versions.size(); ++i) {
      auto& v = def.versions[i];
      BERTH_ASSIGN_OR_RETURN(
          v.compiled, r.compiler_->Compile(v.schema, def.source + ": spec.versions[" +
                                                         std::to_string(i) +
                                                         "].schema.openAPIV3Schema"));
    }
    r.definitions_.push_back(std::make_unique<ResourceDefinition>(std::move(def)));
  }
  for (const auto& d : r.definitions_) r.ordered_.push_back(d.get());
  for (const auto& d : r.definitions_) {
    if (d->stored_as.resource.empty()) continue;
    const ResourceDefinition* target = r.Find(d->stored_as);
    if (target == nullptr || target == d.get() || !target->stored_as.resource.empty() ||
        target->names.kind != d->names.kind || target->scope != d->scope) {
      return InvalidError(d->source + ": " + std::string(kStoredAsAnnotation) + " \"" + d->stored_as.String() +
                          "\" must name another stored definition of kind " + d->names.kind + " with the same scope");
    }
  }
  std::sort(r.ordered_.begin(), r.ordered_.end(),
            [](const ResourceDefinition* a, const ResourceDefinition* b) {
              return OrderKey(*a) < OrderKey(*b);
            });
  return r;
}

StatusOr<Registry> Registry::FromFiles(std::span<const EmbeddedFile> files) {
  std::vector<ResourceDefinition> definitions;
  SchemaDefinitions schemas;
  std::map<std::string, std::string, std::less<>> schema_source;
  for (const EmbeddedFile& f : files) {
    BERTH_ASSIGN_OR_RETURN(Object doc, ParseYaml(f.contents, f.path));
    if (f.path.find("/definitions/") != std::string_view::npos) {
      if (!doc.is_object()) {
        return InvalidError(std::string(f.path) + ": must be a map from definition names to schemas");
      }
      for (auto it = doc.begin(); it != doc.end(); ++it) {
        auto [prev, inserted] = schema_source.emplace(it.key(), std::string(f.path));
        if (!inserted) {
          return InvalidError(std::string(f.path) + ": definition \"" + it.key() +
                              "\" is already defined by " + prev->second);
        }
        schemas.emplace(it.key(), it.value());
      }
      continue;
    }
    BERTH_ASSIGN_OR_RETURN(ResourceDefinition def, ParseResourceDefinition(doc, f.path));
    definitions.push_back(std::move(def));
  }
  return Build(std::move(definitions), std::move(schemas));
}

const Registry& Registry::Default() {
  static const Registry* registry = [] {
    StatusOr<Registry> r = FromFiles(EmbeddedResourceFiles());
    BERTH_CHECK_MSG(r.ok(), "embedded resource definitions: " + r.status().ToString());
    return new Registry(std::move(r).value());
  }();
  return *registry;
}

std::vector<std::string> Registry::Groups() const {
  std::vector<std::string> out;
  for (const auto* d : ordered_) {
    if (out.empty() || out.back() != d->group) out.push_back(d->group);
  }
  return out;
}

const ResourceDefinition* Registry::Find(const GroupResource& resource) const {
  for (const auto* d : ordered_) {
    if (d->group == resource.group && d->names.plural == resource.resource) return d;
  }
  return nullptr;
}

const ResourceDefinition& Registry::StorageDefinition(const ResourceDefinition& def) const {
  if (def.stored_as.resource.empty()) return def;
  return *Find(def.stored_as);  // checked by Build
}

const ResourceDefinition* Registry::FindByGroupKind(std::string_view group, std::string_view kind) const {
  for (const auto* d : ordered_) {
    if (d->group == group && d->names.kind == kind) return d;
  }
  return nullptr;
}

std::vector<const ResourceDefinition*> Registry::FindByKind(std::string_view kind) const {
  std::vector<const ResourceDefinition*> out;
  std::string lower = Lower(kind);
  for (const auto* d : ordered_) {
    if (Lower(d->names.kind) == lower) out.push_back(d);
  }
  return out;
}

StatusOr<const ResourceDefinition*> Registry::ForKind(std::string_view api_version,
                                                      std::string_view kind) const {
  std::string group, version;
  SplitApiVersion(api_version, &group, &version);
  const ResourceDefinition* d = FindByGroupKind(group, kind);
  if (d != nullptr) {
    const DefinitionVersion* v = d->FindVersion(version);
    if (v != nullptr && v->served) return d;
  }
  return NotFoundError("no matches for kind \"" + std::string(kind) + "\" in version \"" +
                       std::string(api_version) + "\"");
}

StatusOr<ResourceMatch> Registry::Resolve(std::string_view name) const {
  const std::string text = Lower(name);
  // Candidate readings of "resource[.version].group", most specific first
  // (kubectl's schema.ParseResourceArg).
  struct Reading {
    std::string resource, version, group;
    bool has_group;
  };
  std::vector<Reading> readings;
  auto dot = text.find('.');
  if (dot == std::string::npos) {
    readings.push_back({text, "", "", false});
  } else {
    std::string resource = text.substr(0, dot), rest = text.substr(dot + 1);
    auto dot2 = rest.find('.');
    if (dot2 != std::string::npos) {
      readings.push_back({resource, rest.substr(0, dot2), rest.substr(dot2 + 1), true});
    }
    readings.push_back({resource, "", rest, true});
  }
  for (const Reading& r : readings) {
    auto in_scope = [&](const ResourceDefinition* d) {
      if (r.has_group && d->group != r.group) return false;
      if (!r.version.empty()) {
        const DefinitionVersion* v = d->FindVersion(r.version);
        if (v == nullptr || !v->served) return false;
      }
      return true;
    };
    auto match = [&](const ResourceDefinition* d) -> ResourceMatch {
      return {d, r.version.empty() ? d->PreferredVersion().name : r.version};
    };
    // Short names first (kubectl's shortcut expander), then plural and singular.
    for (const auto* d : ordered_) {
      if (in_scope(d) && HasName(d->names.short_names, r.resource)) return match(d);
    }
    for (const auto* d : ordered_) {
      if (in_scope(d) && (d->names.plural == r.resource || d->names.singular == r.resource)) {
        return match(d);
      }
    }
  }
  return NotFoundError("the server doesn't have a resource type \"" + std::string(name) + "\"");
}

const Schema* Registry::SchemaFor(const GroupVersionKind& gvk) const {
  const ResourceDefinition* d = FindByGroupKind(gvk.group, gvk.kind);
  if (d == nullptr) return nullptr;
  const DefinitionVersion* v = d->FindVersion(gvk.version);
  return v == nullptr ? nullptr : &v->compiled;
}

const SchemaDefinitions& Registry::schema_definitions() const { return compiler_->definitions(); }

}  // namespace berth::api
