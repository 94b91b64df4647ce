// AdmissionPipeline: the one function every write goes through (API server handlers,
// controllers writing in-process, tests, the resource test data), turning a decoded
// request body into the object to store, or into the error a Kubernetes API server would
// return for it.
//
// Steps (upstream: the CRD handler's decoding, rest.BeforeCreate/BeforeUpdate, the
// customResourceStrategy and the admission webhooks):
//   1. resolve apiVersion+kind to a served version of a definition (api/registry.h);
//      absent kind/apiVersion → kBadRequest `Object 'Kind' is missing in '<body>'`
//      (`Object 'apiVersion' is missing in ...`);
//      unknown → kNotFound `no matches for kind "Foo" in version "x/v1"`
//   2. unknown fields, in the request's version: fieldValidation=Strict → kBadRequest
//      `<Kind> in version "<v>" cannot be handled as a <Kind>: strict decoding error:
//      unknown field "spec.foo", unknown field "spec.bar"`; Warn → the same
//      `unknown field "spec.foo"` strings are returned as warnings; Ignore → silent.
//      Then the unknown fields are pruned.
//   3. schema defaulting in the request's version
//   4. conversion to the storage version (the conversion hook), then pruning and
//      defaulting with the storage version's schema (silently)
//   5. with a lookup, create/update: the strategy's Admit (mutating admission plugins,
//      e.g. Priority on Pods; its error, usually 403 Forbidden, is returned as is)
//   6. generic prepare (see api/strategy.h) then the strategy's PrepareFor*
//   7. strategy Default (create and update)
//   8. validation, every error collected: metadata (api/metadata_validation.h, with the
//      strategy's name rule; on update name/namespace/uid must not change), schema
//      (storage version; map keys as `[key]` for built-in kinds, `.key` for CRDs),
//      strategy Validate*; on update an error the stored object has as well (its schema
//      errors, and the strategy's ValidateUpdate/ValidateStatusUpdate of it against
//      itself) is dropped: ratcheting, as kube-apiserver's CRD validation ratcheting
//      (KEP-4008) and its PodValidationOptions do for rules that tightened. Upstream drops
//      the errors of values unchanged at their path; berth drops identical errors, so a
//      value that stays invalid in the same way may also change. So an object stored
//      before a rule tightened keeps taking updates (its status, a finalizer's removal,
//      Kueue's unsuspend) and no update adds an error;
//      any error → kInvalid with one cause per error and the message
//      `<Kind>.<group> "<name>" is invalid: <err>` (several: `[<err1>, <err2>]`).
//   9. with a lookup, create/update: the strategy's ValidateAdmission (validating
//      admission plugins, e.g. one globalDefault PriorityClass)
// On create, step 6 assigns metadata.uid (a new one, replacing any the client sent, as
// upstream's FillObjectMetaSystemFields before admission) so strategies can read it; the
// store keeps it (store/object_meta.h StampCreate).
// Not done here (the API server / store does it): creationTimestamp, resourceVersion,
// generateName, namespace existence, resourceVersion preconditions.
//
// Thread-safety: Admit is const and may run concurrently; the pipeline keeps references
// to the Registry and StrategyRegistry, which must outlive it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/admission_attributes.h"
#include "api/conversion.h"
#include "api/object.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "core/status.h"

namespace berth::api {

// The fieldValidation query parameter. The API server's default (parameter absent) is Warn.
enum class FieldValidation { kIgnore, kWarn, kStrict };
// "Ignore" | "Warn" | "Strict" | "" (→ Warn); anything else kBadRequest
// `fieldValidation: Unsupported value: "foo": supported values: "", "Ignore", "Strict", "Warn"`.
StatusOr<FieldValidation> ParseFieldValidation(std::string_view value);

// The conversion hook: returns `obj` converted to `target_api_version`
// ("kueue.x-k8s.io/v1beta2"). The default is api/conversion.h's Convert (Kueue's
// v1beta1<->v1beta2 rules, strategy None for everything else).
using ConversionFunc = std::function<StatusOr<Object>(const Registry& registry, const Object& obj,
                                                      std::string_view target_api_version)>;
// Conversion strategy None of a CRD: only apiVersion changes.
StatusOr<Object> NoneConversion(const Registry& registry, const Object& obj,
                                std::string_view target_api_version);

struct WriteRequest {
  Operation operation = Operation::kCreate;
  Object object;                  // the request body, decoded (JSON or YAML)
  const Object* old = nullptr;    // the stored object (storage version); required for updates
  FieldValidation field_validation = FieldValidation::kWarn;
  // The cluster state the strategies' admission plugins read (Strategy::Admit,
  // ValidateAdmission); nullptr skips them (offline admission of a manifest).
  const ObjectLookup* lookup = nullptr;
};

struct AdmittedWrite {
  Object object;                          // in the storage version, ready to store
  // The definition whose storage holds the object: the request's kind, or the kind a view
  // is stored as (berth.io/stored-as; an events.k8s.io/v1 Event admits as a core Event).
  const ResourceDefinition* definition = nullptr;
  std::vector<std::string> warnings;      // for the Warning: 299 header
};

class AdmissionPipeline {
 public:
  AdmissionPipeline(const Registry& registry, const StrategyRegistry& strategies,
                    ConversionFunc convert = Convert);

  StatusOr<AdmittedWrite> Admit(WriteRequest request) const;

  const Registry& registry() const { return registry_; }

 private:
  const Registry& registry_;
  const StrategyRegistry& strategies_;
  ConversionFunc convert_;
};

}  // namespace berth::api
