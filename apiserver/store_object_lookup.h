// StoreObjectLookup: the api::ObjectLookup the API server passes with every
// write, so strategies' admission plugins (api/strategy.h Admit,
// ValidateAdmission; e.g. the Priority plugin) read the stored objects as
// kube-apiserver's plugins read their informer listers. Reads go straight to
// the store (its List is ordered by namespace then name), so a plugin always
// sees every acknowledged write: there is no cache to lag behind.
//
// Thread-safety: as the store's List (any number of threads).
#pragma once

#include "api/admission_attributes.h"
#include "store/store.h"

namespace berth::apiserver {

class StoreObjectLookup : public api::ObjectLookup {
 public:
  explicit StoreObjectLookup(store::Store& store) : store_(store) {}

  StatusOr<std::vector<std::shared_ptr<const api::Object>>> List(const api::GroupResource& resource,
                                                                 std::string_view ns) const override;

 private:
  store::Store& store_;
};

}  // namespace berth::apiserver
