#include "api/admission_pipeline.h"

#include <algorithm>
#include <utility>

#include "api/field_errors.h"
#include "api/metadata_validation.h"
#include "api/unstructured.h"
#include "core/ids.h"

namespace berth::api {

StatusOr<FieldValidation> ParseFieldValidation(std::string_view value) {
  if (value.empty() || value == "Warn") return FieldValidation::kWarn;
  if (value == "Ignore") return FieldValidation::kIgnore;
  if (value == "Strict") return FieldValidation::kStrict;
  return BadRequestError(
      NotSupported(FieldPath("fieldValidation"), std::string(value), {"", "Ignore", "Strict", "Warn"})
          .Error());
}

StatusOr<Object> NoneConversion(const Registry& registry, const Object& obj,
                                std::string_view target_api_version) {
  Object out = obj;
  out["apiVersion"] = std::string(target_api_version);
  return out;
}

AdmissionPipeline::AdmissionPipeline(const Registry& registry, const StrategyRegistry& strategies,
                                     ConversionFunc convert)
    : registry_(registry), strategies_(strategies), convert_(std::move(convert)) {}

namespace {

// Ratcheting: drops from `errs` each error the stored object has too (`had`).
void DropErrorsItHad(const FieldErrorList& had, FieldErrorList* errs) {
  std::erase_if(*errs, [&](const FieldError& e) { return std::ranges::find(had, e) != had.end(); });
}

// Sets obj.metadata[key] to old.metadata[key], or removes it when old has none.
void CarryMeta(Object* obj, const Object& old, const char* key) {
  const Object& old_meta = Field(old, "metadata");
  Object& meta = (*obj)["metadata"];
  if (!meta.is_object()) meta = Object::object();
  auto it = old_meta.is_object() ? old_meta.find(key) : old_meta.end();
  if (old_meta.is_object() && it != old_meta.end()) {
    meta[key] = *it;
  } else {
    meta.erase(key);
  }
}

// Whether `obj` and `old` differ outside the fields whose change does not bump
// metadata.generation (metadata, and status where it has its own subresource), compared
// in place: no copy of either object.
bool GenerationRelevantChange(const Object& obj, const Object& old, bool status_subresource) {
  if (!obj.is_object() || !old.is_object()) return obj != old;
  auto relevant = [status_subresource](const std::string& key) {
    return key != "metadata" && !(status_subresource && key == "status");
  };
  std::size_t compared = 0;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!relevant(it.key())) continue;
    auto other = old.find(it.key());
    if (other == old.end() || *other != it.value()) return true;
    ++compared;
  }
  // Every relevant key of obj is in old with the same value: old differs only by keys obj lacks.
  std::size_t old_relevant = 0;
  for (auto it = old.begin(); it != old.end(); ++it) old_relevant += relevant(it.key()) ? 1 : 0;
  return old_relevant != compared;
}

std::string JoinUnknown(const std::vector<std::string>& paths) {
  std::string out;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (i > 0) out += ", ";
    out += "unknown field \"" + paths[i] + "\"";
  }
  return out;
}

void ValidateMetaUpdate(const Object& obj, const Object& old, FieldErrorList* errs) {
  const FieldPath meta("metadata");
  for (const char* key : {"name", "namespace", "uid"}) {
    const Object& now = Field(Field(obj, "metadata"), key);
    const Object& before = Field(Field(old, "metadata"), key);
    if (now != before) {
      errs->push_back(Invalid(meta.Child(key), now.is_null() ? Object("") : now, "field is immutable"));
    }
  }
}

}  // namespace

StatusOr<AdmittedWrite> AdmissionPipeline::Admit(WriteRequest request) const {
  Object& obj = request.object;
  if (!obj.is_object()) {
    return BadRequestError("the object provided is not a JSON object: " + obj.dump());
  }
  const Object& api_version_field = Field(obj, "apiVersion");
  const Object& kind_field = Field(obj, "kind");
  if (!kind_field.is_string() || kind_field.get_ref<const std::string&>().empty()) {
    return BadRequestError("Object 'Kind' is missing in '" + obj.dump() + "'");
  }
  if (!api_version_field.is_string() || api_version_field.get_ref<const std::string&>().empty()) {
    return BadRequestError("Object 'apiVersion' is missing in '" + obj.dump() + "'");
  }
  const std::string api_version = api_version_field.get<std::string>();
  const std::string kind = kind_field.get<std::string>();

  // 1. Resolve.
  BERTH_ASSIGN_OR_RETURN(const ResourceDefinition* def, registry_.ForKind(api_version, kind));
  std::string group, version;
  SplitApiVersion(api_version, &group, &version);
  const DefinitionVersion& request_version = *def->FindVersion(version);
  // A kind served as a view of another's storage (berth.io/stored-as) is converted to,
  // admitted and validated as that kind, as kube-apiserver handles events.k8s.io/v1 Event
  // as the internal core Event.
  const ResourceDefinition& storage_def = registry_.StorageDefinition(*def);
  const DefinitionVersion& storage_version = storage_def.StorageVersion();
  const Strategy* strategy = strategies_.Find(storage_def.group, storage_def.names.kind);
  const bool updating = request.operation != Operation::kCreate;
  if (updating && request.old == nullptr) {
    return InternalError("an update of " + def->QualifiedKind() + " needs the stored object");
  }
  if (request.operation == Operation::kUpdateStatus && !storage_version.status_subresource) {
    return NotFoundError("the server could not find the requested resource");
  }

  AdmittedWrite out;
  out.definition = &storage_def;

  // 2. Unknown fields, in the request's version.
  std::vector<std::string> unknown = request_version.compiled.Prune(&obj);
  if (!unknown.empty()) {
    if (request.field_validation == FieldValidation::kStrict) {
      return BadRequestError(kind + " in version \"" + version + "\" cannot be handled as a " + kind +
                             ": strict decoding error: " + JoinUnknown(unknown));
    }
    if (request.field_validation == FieldValidation::kWarn) {
      for (const auto& path : unknown) out.warnings.push_back("unknown field \"" + path + "\"");
    }
  }

  // 3. Schema defaulting in the request's version.
  request_version.compiled.Default(&obj);

  // 4. Conversion to the storage version.
  const std::string storage_api_version = storage_def.Gvk(storage_version.name).ApiVersion();
  if (api_version != storage_api_version) {
    BERTH_ASSIGN_OR_RETURN(obj, convert_(registry_, obj, storage_api_version));
    storage_version.compiled.Prune(&obj);
    storage_version.compiled.Default(&obj);
  }

  // 5. Mutating admission plugins.
  const bool plugins = strategy != nullptr && request.lookup != nullptr &&
                       request.operation != Operation::kUpdateStatus;
  if (plugins) {
    BERTH_RETURN_IF_ERROR(strategy->Admit(AdmissionAttributes{request.operation, request.old, *request.lookup}, &obj));
  }

  // 6. Generic prepare, then the kind's.
  const bool status_subresource = storage_version.status_subresource;
  switch (request.operation) {
    case Operation::kCreate: {
      Object& meta = obj["metadata"];
      if (!meta.is_object()) meta = Object::object();
      // The uid exists before the kind's prepare, as upstream's create handler calls
      // FillObjectMetaSystemFields before admission (a Job's generated selector names
      // it); a uid the client sent is replaced. The store keeps it.
      meta["uid"] = NewUid();
      meta["generation"] = 1;
      meta.erase("deletionTimestamp");
      meta.erase("deletionGracePeriodSeconds");
      if (status_subresource) obj.erase("status");
      if (strategy) strategy->PrepareForCreate(&obj);
      break;
    }
    case Operation::kUpdate: {
      const Object& old = *request.old;
      if (status_subresource) {
        if (old.contains("status")) {
          obj["status"] = old["status"];
        } else {
          obj.erase("status");
        }
      }
      if (Field(Field(obj, "metadata"), "uid").is_null()) CarryMeta(&obj, old, "uid");
      for (const char* key : {"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"}) {
        CarryMeta(&obj, old, key);
      }
      int64_t generation = Generation(old);
      if (GenerationRelevantChange(obj, old, status_subresource)) {
        ++generation;
      }
      obj["metadata"]["generation"] = generation;
      if (strategy) strategy->PrepareForUpdate(&obj, old);
      break;
    }
    case Operation::kUpdateStatus: {
      const Object& old = *request.old;
      Object next = old;
      if (obj.contains("status")) {
        next["status"] = obj["status"];
      } else {
        next.erase("status");
      }
      // Keep the caller's resourceVersion: the store checks it as a precondition.
      const Object& rv = Field(Field(obj, "metadata"), "resourceVersion");
      if (rv.is_string() && next["metadata"].is_object()) next["metadata"]["resourceVersion"] = rv;
      obj = std::move(next);
      if (strategy) strategy->PrepareForStatusUpdate(&obj, old);
      break;
    }
  }

  // 7. Webhook-style defaulting.
  if (strategy && request.operation != Operation::kUpdateStatus) strategy->Default(&obj);

  // 8. Validation.
  FieldErrorList errs;
  NameValidator names = strategy ? NameValidator([strategy](std::string_view name, bool prefix) {
    return strategy->ValidateName(name, prefix);
  })
                                 : NameValidator(NameIsDNSSubdomain);
  for (auto& e : ValidateObjectMeta(obj, def->namespaced(), names)) errs.push_back(std::move(e));
  if (updating) ValidateMetaUpdate(obj, *request.old, &errs);
  ValidateOptions options;
  options.map_keys = def->builtin ? MapKeyStyle::kBracket : MapKeyStyle::kDotted;
  options.builtin_kind = def->builtin;
  FieldErrorList schema_errs = storage_version.compiled.Validate(obj, options);
  if (updating && !schema_errs.empty()) {
    // Ratcheting (KEP-4008, on by default since 1.30): an error the stored object has as
    // well is not the update's, so an object stored before its schema tightened stays
    // updatable (its status above all) and an update fixes or keeps it, never worsens it.
    DropErrorsItHad(storage_version.compiled.Validate(*request.old, options), &schema_errs);
  }
  for (auto& e : schema_errs) errs.push_back(std::move(e));
  storage_version.compiled.NormalizeIntegers(&obj);  // the strategy reads integers
  if (strategy) {
    FieldErrorList more;
    switch (request.operation) {
      case Operation::kCreate: more = strategy->ValidateCreate(obj); break;
      case Operation::kUpdate: more = strategy->ValidateUpdate(obj, *request.old); break;
      case Operation::kUpdateStatus: more = strategy->ValidateStatusUpdate(obj, *request.old); break;
    }
    if (updating && !more.empty()) {
      // The same ratcheting for the kind's rules: the stored object validated against
      // itself (no change, so no immutability error) has the errors it already had.
      const Object& stored = *request.old;
      DropErrorsItHad(request.operation == Operation::kUpdate ? strategy->ValidateUpdate(stored, stored)
                                                              : strategy->ValidateStatusUpdate(stored, stored),
                      &more);
    }
    if (request.operation != Operation::kUpdateStatus) {
      for (auto& e : strategy->ValidateRequestVersion(obj, request.old, api_version)) more.push_back(std::move(e));
    }
    for (auto& e : more) errs.push_back(std::move(e));
  }
  if (!errs.empty()) return InvalidStatus(def->QualifiedKind(), Name(obj), errs);

  // 9. Validating admission plugins.
  if (plugins) {
    BERTH_RETURN_IF_ERROR(
        strategy->ValidateAdmission(AdmissionAttributes{request.operation, request.old, *request.lookup}, obj));
  }

  out.object = std::move(obj);
  return out;
}

}  // namespace berth::api
