// Strategy: the kind-specific rules of a write that a schema cannot express — what
// upstream implements as a built-in type's REST strategy, as CEL rules
// (x-kubernetes-validations, which berth does not evaluate) or as admission webhooks
// (Kueue's, JobSet's, Trainer's defaulting and validating webhooks).
//
// The generic part every kind gets is done by the admission pipeline
// (api/admission_pipeline.h), as apiextensions' customResourceStrategy and
// rest.BeforeCreate/BeforeUpdate do:
//   create         metadata.generation = 1; status dropped if the kind has a status
//                  subresource; deletionTimestamp/deletionGracePeriodSeconds cleared
//   update         uid, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds
//                  kept from the old object; with a status subresource the old status is
//                  kept; generation + 1 when anything but metadata (and status) changed
//   status update  everything but status kept from the old object
// A Strategy adds to that. All objects a strategy sees are in the kind's storage version,
// already schema-defaulted and pruned.
//
// Hooks, in the order the pipeline calls them:
//   PrepareForCreate / PrepareForUpdate / PrepareForStatusUpdate   reset or carry over fields
//                  (e.g. Pod status reset on create)
//   Default        webhook defaulting (e.g. Kueue adds the resource-in-use finalizer)
//   ValidateName   the kind's metadata.name rule (default: DNS-1123 subdomain)
//   ValidateCreate / ValidateUpdate / ValidateStatusUpdate   cross-field rules and
//                  immutability, with the upstream messages and paths
//                  (`spec.clusterQueue: Invalid value: "b": field is immutable`,
//                  `spec.value: Forbidden: may not be changed in an update.`).
// and, around them, the two admission-plugin hooks that may read other stored objects
// through an ObjectLookup (api/admission_attributes.h; upstream: kube-apiserver's
// built-in admission plugins with their listers, e.g. Priority):
//   Admit              mutating admission, on create and update, after schema
//                      defaulting and conversion and before PrepareFor* (upstream runs
//                      mutating admission before the registry's BeforeCreate/BeforeUpdate)
//   ValidateAdmission  validating admission, on create and update, once every
//                      validation above passed
// Both run only when the write carries a lookup (WriteRequest.lookup): the API server
// always passes one; offline admission of a manifest (tests of schemas, resource test
// data) has no cluster state to read and skips them. Neither runs on status updates
// (upstream's plugins ignore subresources). Their errors are returned unchanged, usually
// AdmissionForbidden's 403.
// Validation returns field errors (api/field_errors.h); the pipeline reports them all
// together with the schema's errors as one Invalid status.
//
// Registration is explicit (no static initialisers, which a static library may drop):
// each area exposes `void Register<Area>Strategies(StrategyRegistry*)` and adds one call
// to InstallDefaultStrategies (strategy.cc).
//
// Thread-safety: strategies must be stateless (const methods, no mutable state); a built
// StrategyRegistry is immutable and may be shared by any number of threads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/admission_attributes.h"
#include "api/field_errors.h"
#include "api/metadata_validation.h"
#include "api/object.h"

namespace berth::api {

class Strategy {
 public:
  virtual ~Strategy() = default;

  virtual void PrepareForCreate(Object* obj) const {}
  virtual void PrepareForUpdate(Object* obj, const Object& old) const {}
  virtual void PrepareForStatusUpdate(Object* obj, const Object& old) const {}

  // Runs on create and update (not on status updates), after schema defaulting.
  virtual void Default(Object* obj) const {}

  // metadata.name (and, with prefix, generateName) rule of the kind; the default is the
  // custom-resource rule (DNS-1123 subdomain). Namespaces, for example, use NameIsDNSLabel.
  virtual std::vector<std::string> ValidateName(std::string_view name, bool prefix) const {
    return NameIsDNSSubdomain(name, prefix);
  }

  virtual FieldErrorList ValidateCreate(const Object& obj) const { return {}; }
  virtual FieldErrorList ValidateUpdate(const Object& obj, const Object& old) const { return {}; }
  // The rules that depend on the version the client wrote in (`request_api_version`, e.g.
  // "events.k8s.io/v1" for an Event stored as core/v1), on create and update after the
  // others; `old` is nullptr on create. The object is in the storage version.
  virtual FieldErrorList ValidateRequestVersion(const Object& obj, const Object* old,
                                                std::string_view request_api_version) const {
    return {};
  }
  virtual FieldErrorList ValidateStatusUpdate(const Object& obj, const Object& old) const {
    return {};
  }

  // Admission plugins (see above).
  virtual Status Admit(const AdmissionAttributes& attrs, Object* obj) const { return Status::Ok(); }
  virtual Status ValidateAdmission(const AdmissionAttributes& attrs, const Object& obj) const {
    return Status::Ok();
  }
};

// Strategies keyed by group and kind ("kueue.x-k8s.io", "ClusterQueue").
class StrategyRegistry {
 public:
  StrategyRegistry() = default;
  StrategyRegistry(StrategyRegistry&&) = default;
  StrategyRegistry& operator=(StrategyRegistry&&) = default;

  // Registering twice for one group+kind is a programming error (BERTH_CHECK).
  void Register(std::string group, std::string kind, std::unique_ptr<Strategy> strategy);
  // The strategy of a kind, or nullptr (the kind has only the generic behaviour).
  const Strategy* Find(std::string_view group, std::string_view kind) const;

  // Every strategy berth ships (InstallDefaultStrategies), built on first use.
  static const StrategyRegistry& Default();

 private:
  // Keyed by "<group>/<kind>".
  std::map<std::string, std::unique_ptr<Strategy>, std::less<>> strategies_;
};

struct KueueJobWebhookOptions;  // api/kueue_job_webhook.h

// Registers every area's strategies; one line per area (strategy.cc). The job kinds'
// create applies Kueue's job webhook as `kueue` says (integrations.frameworks,
// manageJobsWithoutQueueName; api/kueue_job_webhook.h); Default() uses its defaults.
void InstallDefaultStrategies(StrategyRegistry* registry);
void InstallDefaultStrategies(StrategyRegistry* registry, const KueueJobWebhookOptions& kueue);

}  // namespace berth::api
