// What an admission step knows about the write it admits besides the object
// itself: the operation, the stored object (updates) and read access to the
// other stored objects. Upstream this is admission.Attributes plus the
// informer listers kube-apiserver's built-in admission plugins read from
// (the Priority plugin lists PriorityClasses; NamespaceLifecycle reads
// Namespaces).
//
// ObjectLookup is the one way a strategy (api/strategy.h) reads other
// objects: the API server passes one backed by its store with every write
// (apiserver/api_server.cc), so the rules stay in api/ and never depend on a
// store, a client or the network.
//
// Thread-safety: an ObjectLookup must allow concurrent calls (one write may
// run on each API server thread). Objects are shared and immutable.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "core/status.h"

namespace berth::api {

enum class Operation {
  kCreate,
  kUpdate,        // PUT/PATCH of the main resource
  kUpdateStatus,  // PUT/PATCH of the status subresource
};

// Read access to stored objects, always in their storage version.
class ObjectLookup {
 public:
  virtual ~ObjectLookup() = default;

  // Every stored object of `resource` in namespace `ns` ("" for a
  // cluster-scoped resource, or for every namespace), ordered by namespace
  // then name. Errors: the store's (kUnavailable, kInternal).
  virtual StatusOr<std::vector<std::shared_ptr<const Object>>> List(const GroupResource& resource,
                                                                    std::string_view ns) const = 0;
};

// A lookup over a fixed set of objects (tests, benchmarks, offline checks
// that want a given cluster state): List returns the objects added under that
// resource, ordered as above.
class StaticObjectLookup : public ObjectLookup {
 public:
  void Add(GroupResource resource, Object obj);
  StatusOr<std::vector<std::shared_ptr<const Object>>> List(const GroupResource& resource,
                                                            std::string_view ns) const override;

 private:
  std::vector<std::pair<GroupResource, std::shared_ptr<const Object>>> objects_;
};

// What the admission hooks of a Strategy receive.
struct AdmissionAttributes {
  Operation operation = Operation::kCreate;
  const Object* old = nullptr;  // the stored object on updates, else nullptr
  const ObjectLookup& lookup;
};

// The error of an admission plugin that refuses a write, as upstream's
// admission.NewForbidden: kForbidden `<resource> "<name>" is forbidden:
// <reason>` (`pods "w0" is forbidden: no PriorityClass with name x was
// found`); an object without a name yet (generateName) is "Unknown".
Status AdmissionForbidden(const GroupResource& resource, std::string_view name, std::string_view reason);

}  // namespace berth::api
