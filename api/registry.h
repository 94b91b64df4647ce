// Registry: every kind berth serves, built from the resource definitions compiled into the
// binary (resources/**/*.yaml, embedded by cmake/embed_resources.cmake) or, in tests, from
// given documents.
//
// Files: resources/definitions/*.yaml are maps from an OpenAPI definition name to a schema
// (shared by $ref, see api/schema.h); every other file is one CRD document
// (api/resource_definition.h). Every version's schema is compiled once when the Registry is
// built.
//
// Order (deterministic, and the order discovery lists kinds in): the core group "" first,
// then the other built-in groups by name, then the custom groups by name; within a group,
// by plural. Name resolution walks this order, so when two groups use the same name the
// earlier one wins, as kubectl picks the first group discovery lists.
//
// Name resolution (Resolve) follows kubectl's RESTMapper on user-typed resource names,
// case-insensitively:
//   "cq"                               short name
//   "clusterqueue", "ClusterQueue"     singular (the lower-case kind)
//   "clusterqueues"                    plural
//   "clusterqueues.kueue.x-k8s.io"     plural (or singular/short name) + group
//   "clusterqueues.v1beta2.kueue.x-k8s.io"  + version (must be served)
// Short names are expanded first (kubectl's shortcut expander), then plural/singular.
// Unknown names: kNotFound `the server doesn't have a resource type "foo"`.
//
// Errors from Build/FromFiles name the file: duplicate group+plural, duplicate kind in a
// group, a definition name that is not unique, a schema that does not compile.
//
// Thread-safety: immutable after construction; any number of threads may read it.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/resource_definition.h"
#include "api/schema.h"
#include "core/status.h"

namespace berth::api {

// One file compiled into the binary: its path relative to the source tree
// ("resources/kueue.x-k8s.io/clusterqueues.yaml") and its bytes.
struct EmbeddedFile {
  std::string_view path;
  std::string_view contents;
};

// The resource files compiled into the binary (resources/**/*.yaml except
// resources/testdata), sorted by path. Generated at build time.
std::span<const EmbeddedFile> EmbeddedResourceFiles();

// A user-typed resource name resolved to a kind and a version.
struct ResourceMatch {
  const ResourceDefinition* definition = nullptr;
  std::string version;  // as typed, else the preferred version
};

class Registry {
 public:
  // Builds from parsed definitions and the shared schema definitions; compiles every
  // version's schema (and every shared definition).
  static StatusOr<Registry> Build(std::vector<ResourceDefinition> definitions,
                                  SchemaDefinitions schemas);
  // Decodes YAML files (paths containing "/definitions/" are schema maps, the others one
  // CRD each) and builds.
  static StatusOr<Registry> FromFiles(std::span<const EmbeddedFile> files);
  // The registry of the embedded resource files, built on first use. A broken embedded
  // file is a build defect: aborts with the error.
  static const Registry& Default();

  Registry(Registry&&) noexcept;
  Registry& operator=(Registry&&) noexcept;
  ~Registry();

  // Every definition, in the order described above.
  const std::vector<const ResourceDefinition*>& Definitions() const { return ordered_; }
  // Group names in discovery order ("" first).
  std::vector<std::string> Groups() const;

  // nullptr when absent.
  const ResourceDefinition* Find(const GroupResource& resource) const;
  // The definition whose storage holds `def`'s objects (berth.io/stored-as,
  // api/resource_definition.h): `def` itself unless it is a view of another.
  const ResourceDefinition& StorageDefinition(const ResourceDefinition& def) const;
  const ResourceDefinition* FindByGroupKind(std::string_view group, std::string_view kind) const;
  // Every definition whose kind equals `kind` case-insensitively, in registry order.
  std::vector<const ResourceDefinition*> FindByKind(std::string_view kind) const;

  // The definition serving `api_version` ("kueue.x-k8s.io/v1beta2", "v1") and `kind`.
  // kNotFound `no matches for kind "Foo" in version "x/v1"` (kubectl's RESTMapper wording)
  // when no definition has the kind in that group or does not serve that version.
  StatusOr<const ResourceDefinition*> ForKind(std::string_view api_version,
                                              std::string_view kind) const;

  // kubectl-style resolution of a user-typed resource name (see header comment).
  StatusOr<ResourceMatch> Resolve(std::string_view name) const;

  // The compiled schema of one served or stored version; nullptr when unknown.
  const Schema* SchemaFor(const GroupVersionKind& gvk) const;

  const SchemaDefinitions& schema_definitions() const;

 private:
  Registry();
  std::vector<std::unique_ptr<ResourceDefinition>> definitions_;
  std::vector<const ResourceDefinition*> ordered_;
  std::unique_ptr<SchemaCompiler> compiler_;
};

}  // namespace berth::api
