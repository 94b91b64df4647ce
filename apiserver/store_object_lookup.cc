#include "apiserver/store_object_lookup.h"

#include <string>

namespace berth::apiserver {

StatusOr<std::vector<std::shared_ptr<const api::Object>>> StoreObjectLookup::List(const api::GroupResource& resource,
                                                                                  std::string_view ns) const {
  store::ListOptions options;
  options.ns = std::string(ns);
  BERTH_ASSIGN_OR_RETURN(store::ListResult result, store_.List(resource, options));
  return std::move(result.items);
}

}  // namespace berth::apiserver
