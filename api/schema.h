// Schema: a compiled structural OpenAPI v3 schema, as the apiextensions-apiserver
// uses a CustomResourceDefinition's openAPIV3Schema: validate (kube-openapi), default
// (structural defaulting), prune (structural pruning) and list unknown fields
// (fieldValidation=Strict/Warn).
//
// Input shape: an OpenAPI v3 schema as JSON (nlohmann::json), as written under
// spec.versions[].schema.openAPIV3Schema of a CRD file in resources/. A node may be
// `{"$ref": "#/components/schemas/<name>"}` (siblings such as description allowed): the
// name is looked up in SchemaDefinitions (the maps in resources/definitions/*.yaml). Refs
// are resolved once, at compile time; every definition is compiled once per
// SchemaCompiler and shared by all schemas that refer to it. A ref cycle is an error.
//
// Keywords (everything else is ignored, e.g. description, example, x-kubernetes-validations
// which berth does not evaluate — see api/strategy.h):
//   type (object|array|string|integer|number|boolean), properties, required,
//   additionalProperties (schema or bool), items, enum, default, nullable, minimum,
//   maximum, exclusiveMinimum, exclusiveMaximum, minLength, maxLength (in characters,
//   i.e. Unicode code points, as Go's utf8.RuneCountInString), pattern (ECMAScript regex,
//   unanchored search as Go's regexp.MatchString), format (int32/int64/float/double
//   range checks; date-time, date, duration, uuid, byte, ipv4, ipv6, cidr, hostname
//   string checks; other formats are accepted), minItems, maxItems, minProperties,
//   maxProperties, anyOf/oneOf/allOf, x-kubernetes-int-or-string,
//   x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource,
//   x-kubernetes-list-type (atomic|set|map) with x-kubernetes-list-map-keys,
//   x-kubernetes-map-type, berth's x-berth-builtin-allows-duplicates (see
//   ValidateOptions::builtin_kind), berth's x-berth-empty-is-default (an enum that also
//   takes "": upstream's Go defaulting replaces it before validation, as a pod's
//   restartPolicy or a container's imagePullPolicy; or upstream accepts it, as a
//   toleration's operator and effect), and berth's x-berth-quantity (the value must parse as a
//   resource.Quantity, core/quantity.h) with optional x-berth-quantity-minimum ("0").
//
// Validation messages are kube-openapi's, converted to field errors as the
// apiextensions-apiserver does (kubeOpenAPIResultToFieldErrors), with "in body":
//   spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"
//   spec.numNodes: Invalid value: -1: spec.numNodes in body should be greater than or equal to 1
//   spec.queueingStrategy: Unsupported value: "Foo": supported values: "StrictFIFO", "BestEffortFIFO"
//   spec.clusterQueue: Required value
//   spec.name: Too long: may not be more than 63 bytes
//   spec.items: Too many: 9: must have at most 8 items
//   spec.name: Invalid value: "A": spec.name in body should match '^[a-z]+$'
//   spec.name: Invalid value: "": spec.name in body should be at least 1 chars long
//   spec.list[1]: Duplicate value: {"name":"x"}          (list-type map; set: the item)
//   spec.x: Invalid value: 3000000000: Checked value must be of type integer with format int32 in spec.x
//           (kube-openapi reports this one at the root with an empty value; berth names the field)
// Paths: children joined by '.', list items "[i]"; keys of additionalProperties maps are
// written as kube-openapi writes them for CRDs ("spec.nodeLabels.zone", MapKeyStyle::kDotted)
// or as native Kubernetes validation writes them ("metadata.labels[zone]",
// MapKeyStyle::kBracket; berth uses it for built-in kinds).
// Order: deterministic. For an object: min/maxProperties (which, as upstream, stop the
// object's validation), additional properties by key, declared properties by name,
// required in the order listed. For a value: type (a type mismatch stops that value's
// checks), allOf/anyOf/oneOf, string, format, number, items then minItems/maxItems,
// list-type duplicates, enum, quantity, object.
//
// Thread-safety: a compiled Schema is immutable; Validate/UnknownFields may run
// concurrently from any thread; Default/Prune mutate only their argument.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_errors.h"
#include "api/object.h"
#include "core/status.h"

namespace berth::api {

// The error of a quantity field whose amount berth cannot hold (core/quantity.h: int64
// milli-units, about 9.2e15 units: 8 PiB of memory).
inline constexpr std::string_view kQuantityRangeMessage =
    "must be between -9223372036854775807m and 9223372036854775807m (berth holds quantities as int64 milli-units)";

// Definition name ("io.k8s.api.core.v1.PodTemplateSpec") -> OpenAPI v3 schema JSON.
using SchemaDefinitions = std::map<std::string, nlohmann::json, std::less<>>;

// How keys of additionalProperties maps appear in field paths (see header comment).
enum class MapKeyStyle { kDotted, kBracket };

struct ValidateOptions {
  MapKeyStyle map_keys = MapKeyStyle::kDotted;
  // The value is a built-in kind's, decoded as kube-apiserver decodes it into Go types
  // rather than validated as a CRD's. Integer fields decode as Go's encoding/json decodes
  // them into an int32/int64 struct field: a JSON number with a fraction or an exponent (1.5, 1e3, 2.0)
  // is refused. Without it, as kube-openapi validates a CRD (isFloatInt), a whole float
  // (1e3) passes an integer field and only a fraction (1.5) is refused. Either way the
  // error is the type mismatch at the field:
  //   spec.parallelism: Invalid value: "number": spec.parallelism in body must be of type integer: "number"
  // (kube-apiserver answers a built-in kind's with a 400 decode error instead: `Job in
  // version "v1" cannot be handled as a Job: json: cannot unmarshal number 1.5 into Go
  // struct field JobSpec.spec.parallelism of type int32`; the JSON parser berth uses keeps
  // no number literal to quote.) A quantity field (x-berth-quantity) then also takes any
  // JSON number (`cpu: 0.5`), as resource.Quantity's UnmarshalJSON does; a CRD's
  // int-or-string quantity takes integers only, as kube-openapi validates it. And a
  // list-type map marked x-berth-builtin-allows-duplicates (a container's env and ports, a
  // pod's imagePullSecrets and hostAliases) takes two items of one key, as Go decoding
  // does (kube-apiserver only warns, pkg/api/pod/warnings.go); a CRD's does not.
  bool builtin_kind = false;
};

namespace schema_internal {
struct Node;  // defined in schema.cc
}

// A compiled schema. Cheap to copy (shares its immutable nodes).
class Schema {
 public:
  Schema() = default;  // the empty schema: accepts and preserves anything

  // Validates `value` (usually a whole object; the root path is empty, so a root schema's
  // properties are reported as "spec.x"). Returns every error, in the order above; empty
  // when valid. Metadata (the root "metadata") is validated by metadata_validation.h, not
  // here, beyond what the schema itself declares.
  FieldErrorList Validate(const nlohmann::json& value, const ValidateOptions& options = {}) const;

  // Structural defaulting (apiextensions defaulting.Default): for every object, each
  // declared property that is absent (or null while not nullable) and has a `default`
  // receives a copy of it; then every present property, additionalProperties value and
  // array item is defaulted recursively (so defaults nest, and defaults inside an object or
  // array item apply only where that object or item exists). Finally null values of
  // non-nullable properties without a default are removed
  // (PruneNonNullableNullsWithoutDefaults).
  void Default(nlohmann::json* value) const;

  // Replaces each whole float (1000.0, from 1e3) in a field whose only type is integer by
  // the integer, as the apiserver stores a CRD's float64 1000 (encoding/json writes it as
  // 1000), so readers of integer fields (api/unstructured.h IntAt) see it. Run after
  // Validate; other values are left as they are. A float in a quantity field (x-berth-
  // quantity; only built-in kinds accept one, see ValidateOptions::builtin_kind) becomes the
  // quantity's canonical string (0.5 → "500m"), as resource.Quantity's JSON decoding and
  // encoding store it.
  void NormalizeIntegers(nlohmann::json* value) const;

  // Structural pruning (apiextensions pruning.Prune): drops every field the schema does not
  // declare, except under x-kubernetes-preserve-unknown-fields, additionalProperties
  // (schema: pruned by that schema; true: kept as is) and, when `resource_root`, the root's
  // apiVersion/kind/metadata. The root's metadata and an embedded resource's metadata are
  // pruned to the ObjectMeta fields. Returns the pruned paths in traversal order
  // ("spec.foo", "spec.list[0].bar", "metadata.bogus").
  std::vector<std::string> Prune(nlohmann::json* value, bool resource_root = true) const;

  // The paths Prune would drop, without changing `value`: the unknown fields reported for
  // fieldValidation=Strict (`unknown field "spec.foo"`) and Warn.
  std::vector<std::string> UnknownFields(const nlohmann::json& value, bool resource_root = true) const;

  bool empty() const { return root_ == nullptr; }

 private:
  friend class SchemaCompiler;
  explicit Schema(std::shared_ptr<const schema_internal::Node> root) : root_(std::move(root)) {}
  std::shared_ptr<const schema_internal::Node> root_;
};

// Compiles schemas against one set of shared definitions. Each definition is compiled at
// most once (on first use) and shared between the schemas compiled by this compiler.
// Not thread-safe (compile everything at load time, then share the Schemas).
class SchemaCompiler {
 public:
  explicit SchemaCompiler(SchemaDefinitions definitions);
  ~SchemaCompiler();
  SchemaCompiler(SchemaCompiler&&) noexcept;
  SchemaCompiler& operator=(SchemaCompiler&&) noexcept;

  // Errors (kInvalid, message naming `context` and the JSON path inside the schema, e.g.
  // `resources/batch/jobs.yaml: spec.versions[0].schema.openAPIV3Schema.properties.spec:
  // $ref "#/components/schemas/Foo" not found`): unknown ref, ref cycle, a ref that is not
  // "#/components/schemas/<name>", an unknown type, an invalid pattern, a keyword with a
  // value of the wrong JSON type, list-type map without list-map-keys, a default that
  // cannot be parsed.
  StatusOr<Schema> Compile(const nlohmann::json& schema, std::string_view context);

  // Compiles every definition (so that an unused broken definition is still reported).
  Status CompileAllDefinitions(std::string_view context);

  const SchemaDefinitions& definitions() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::api
