#include "store/store.h"

#include <string>
#include <utility>

namespace berth::store {
namespace {

std::string Quoted(const ObjectKey& key) {
  return key.resource.String() + " \"" + key.name + "\"";
}

}  // namespace

ObjectKey KeyOf(const api::GroupResource& resource, const api::Object& obj) {
  return ObjectKey{resource, api::Namespace(obj), api::Name(obj)};
}

const char* EventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

Status NotFound(const ObjectKey& key) { return NotFoundError(Quoted(key) + " not found"); }

Status AlreadyExists(const ObjectKey& key) {
  return AlreadyExistsError(Quoted(key) + " already exists");
}

Status ConflictModified(const ObjectKey& key) {
  return ConflictError("Operation cannot be fulfilled on " + Quoted(key) +
                       ": the object has been modified; please apply your changes to the latest "
                       "version and try again");
}

Status ConflictPrecondition(const ObjectKey& key, const char* what, const std::string& wanted,
                            const std::string& actual) {
  return ConflictError("Operation cannot be fulfilled on " + Quoted(key) + ": Precondition failed: " +
                       what + " in precondition: " + wanted + ", " + what +
                       " in object meta: " + actual);
}

Status TooOldResourceVersion(int64_t requested, int64_t oldest) {
  return GoneError("too old resource version: " + std::to_string(requested) + " (" +
                   std::to_string(oldest) + ")");
}

const std::string& ContinueExpiredMessage() {
  static const std::string kMessage =
      "The provided continue parameter is too old to display a consistent list result. You can "
      "start a new list without the continue parameter, or use the continue token in this "
      "response to retrieve the remainder of the results. Continuing with the provided token "
      "results in an inconsistent list - objects that were created, modified, or deleted between "
      "the time the first chunk was returned and now may show up in the list.";
  return kMessage;
}

namespace {

// The value form of a shared result: a deep copy the caller owns.
StatusOr<api::Object> Copy(StatusOr<ObjectPtr> shared) {
  if (!shared.ok()) return shared.status();
  return **shared;
}

}  // namespace

StatusOr<api::Object> Store::Get(const ObjectKey& key) { return Copy(GetShared(key)); }

StatusOr<api::Object> Store::Create(const api::GroupResource& resource, api::Object obj) {
  return Copy(CreateShared(resource, std::move(obj)));
}

StatusOr<api::Object> Store::Update(const api::GroupResource& resource, api::Object obj,
                                    const UpdateOptions& options) {
  return Copy(UpdateShared(resource, std::move(obj), options));
}

StatusOr<DeleteResult> Store::Delete(const ObjectKey& key, const DeleteOptions& options) {
  BERTH_ASSIGN_OR_RETURN(SharedDeleteResult shared, DeleteShared(key, options));
  return DeleteResult{*shared.object, shared.removed};
}

StatusOr<api::Object> Store::GuaranteedUpdate(const ObjectKey& key, const UpdateFn& fn,
                                              const UpdateOptions& options) {
  return Copy(GuaranteedUpdateShared(key, fn, options));
}

StatusOr<ObjectPtr> Store::GuaranteedUpdateShared(const ObjectKey& key, const UpdateFn& fn,
                                                  const UpdateOptions& options) {
  const std::string modified = ConflictModified(key).message();
  while (true) {
    BERTH_ASSIGN_OR_RETURN(ObjectPtr current, GetShared(key));
    if (options.uid && *options.uid != api::Uid(*current)) {
      return ConflictPrecondition(key, "UID", *options.uid, api::Uid(*current));
    }
    BERTH_ASSIGN_OR_RETURN(api::Object desired, fn(*current));
    if (!desired.is_object()) return BadRequestError("the updated object is not a JSON object");
    // Pin the write to the key and to the revision fn saw.
    api::Object& meta = desired["metadata"];
    if (!meta.is_object()) meta = api::Object::object();
    meta["name"] = key.name;
    if (key.ns.empty()) {
      meta.erase("namespace");
    } else {
      meta["namespace"] = key.ns;
    }
    meta["resourceVersion"] = api::ResourceVersion(*current);
    StatusOr<ObjectPtr> updated = UpdateShared(key.resource, std::move(desired), options);
    // Only a concurrent write is worth another round; everything else is final.
    if (updated.ok() || updated.status().message() != modified) return updated;
  }
}

}  // namespace berth::store
