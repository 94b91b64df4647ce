// ResourceDefinition: one served kind, parsed from a CustomResourceDefinition document
// (apiextensions.k8s.io/v1) in resources/<folder>/<plural>.yaml.
//
// Input shape (the real CRD format, see docs/contributing.md and the conventions):
//   metadata.name                    "<plural>.<group>" ("<plural>" for the core group "")
//   metadata.annotations["berth.io/builtin"] == "true"  → a built-in kind, served under
//                                    /api/v1 or /apis/<group>/<version> like a cluster's
//                                    own types (not listed as a CRD)
//   metadata.annotations["berth.io/allow-create-on-update"] == "true"  → a PUT of an absent
//                                    object creates it (201), as the upstream strategy's
//                                    AllowCreateOnUpdate() true does (Role, ClusterRole,
//                                    RoleBinding, ClusterRoleBinding, Lease, Event, Service;
//                                    custom resources never)
//   metadata.annotations["berth.io/stored-as"] = "<plural>[.<group>]"  → a built-in kind
//                                    whose objects are another definition's, stored once
//                                    and served here as a view in this group (converted by
//                                    api/conversion.h), as kube-apiserver serves
//                                    events.k8s.io/v1 Event from the core Event storage
//                                    (pkg/registry/core/event/storage, one internal type);
//                                    the Registry checks the target exists with the same kind
//   spec.group, spec.scope (Namespaced|Cluster)
//   spec.names {plural, singular, kind, listKind, shortNames, categories}
//   spec.versions[] {name, served, storage, deprecated, deprecationWarning,
//                    schema.openAPIV3Schema, subresources.status, additionalPrinterColumns[]
//                    {name, type, format, description, priority, jsonPath}}
// Defaults as the apiserver applies them: singular = lower-case kind, listKind = kind +
// "List", printer column priority 0.
//
// Checks (ParseResourceDefinition; each error names the source file and the field, e.g.
// `resources/kueue.x-k8s.io/clusterqueues.yaml: spec.versions: must have exactly one
// version marked as storage version, found 2`): apiVersion/kind are a v1 CRD; group,
// plural, kind present; plural/singular/shortNames/categories are lower-case DNS labels;
// kind is UpperCamelCase; metadata.name matches plural and group; scope valid; at least
// one version, names unique and DNS-1035 labels, at least one served, exactly one
// storage; every version has an openAPIV3Schema of type object; printer columns have a
// name, a type in {integer, number, string, boolean, date}, a jsonPath starting with '.';
// shortNames unique within the definition.
//
// Thread-safety: plain values, immutable after the Registry is built.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "api/schema.h"
#include "core/status.h"

namespace berth::api {

inline constexpr std::string_view kBuiltinAnnotation = "berth.io/builtin";
inline constexpr std::string_view kAllowCreateOnUpdateAnnotation = "berth.io/allow-create-on-update";
inline constexpr std::string_view kStoredAsAnnotation = "berth.io/stored-as";

enum class ResourceScope { kNamespaced, kCluster };

// additionalPrinterColumns entry (server-side tables, kubectl get).
struct PrinterColumn {
  std::string name;         // "Pending Workloads" (kubectl upper-cases it for the header)
  std::string type;         // integer | number | string | boolean | date
  std::string format;       // "" unless given (e.g. "int32", "date-time")
  std::string description;
  int32_t priority = 0;     // > 0: shown only with -o wide
  std::string json_path;    // ".status.pendingWorkloads"

  bool operator==(const PrinterColumn&) const = default;
};

struct ResourceNames {
  std::string plural;                    // "clusterqueues"
  std::string singular;                  // "clusterqueue"
  std::string kind;                      // "ClusterQueue"
  std::string list_kind;                 // "ClusterQueueList"
  std::vector<std::string> short_names;  // {"cq"}
  std::vector<std::string> categories;   // {"all"}
};

// One entry of spec.versions.
struct DefinitionVersion {
  std::string name;                      // "v1beta2"
  bool served = false;
  bool storage = false;
  bool deprecated = false;
  std::string deprecation_warning;       // "" when not given
  nlohmann::json schema;                 // openAPIV3Schema as written ($refs unresolved)
  bool status_subresource = false;
  std::vector<PrinterColumn> printer_columns;
  // The compiled schema; filled in by the Registry (empty in a freshly parsed definition).
  Schema compiled;
};

struct ResourceDefinition {
  std::string source;                    // file the definition came from, for messages
  std::string name;                      // metadata.name
  std::string group;                     // "" for the core group
  ResourceNames names;
  ResourceScope scope = ResourceScope::kNamespaced;
  bool builtin = false;
  bool allow_create_on_update = false;  // kAllowCreateOnUpdateAnnotation
  // The definition whose objects these are (berth.io/stored-as); empty resource: its own.
  GroupResource stored_as;
  std::vector<DefinitionVersion> versions;  // as written

  bool namespaced() const { return scope == ResourceScope::kNamespaced; }
  GroupResource Resource() const { return {group, names.plural}; }
  // Where its objects are kept: stored_as, else Resource().
  GroupResource StorageResource() const { return stored_as.resource.empty() ? Resource() : stored_as; }
  GroupVersionKind Gvk(std::string_view version) const {
    return {group, std::string(version), names.kind};
  }
  // "ClusterQueue.kueue.x-k8s.io", or "Pod" for the core group: the qualified kind in
  // apimachinery's Invalid messages.
  std::string QualifiedKind() const;

  // nullptr when the definition has no such version.
  const DefinitionVersion* FindVersion(std::string_view version) const;
  // The one storage version (a parsed definition always has exactly one).
  const DefinitionVersion& StorageVersion() const;
  // Served versions, most preferred first (kube-aware version order, as discovery lists
  // CRD versions); the first is the preferred version.
  std::vector<const DefinitionVersion*> ServedVersions() const;
  const DefinitionVersion& PreferredVersion() const;
};

// Parses and checks one CRD document (already decoded from YAML). `source` names the file
// in error messages. Errors are kInvalid.
StatusOr<ResourceDefinition> ParseResourceDefinition(const Object& crd, std::string_view source);

// apimachinery's version.CompareKubeAwareVersionStrings: < 0 when `a` sorts before `b`
// (is preferred). GA before beta before alpha, higher major then higher minor first
// ("v2" < "v1" < "v1beta2" < "v1beta1" < "v1alpha1"), then non-Kubernetes-style names in
// lexical order.
int CompareKubeAwareVersions(std::string_view a, std::string_view b);

}  // namespace berth::api
