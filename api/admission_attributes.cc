#include "api/admission_attributes.h"

#include <algorithm>
#include <string>

namespace berth::api {

void StaticObjectLookup::Add(GroupResource resource, Object obj) {
  objects_.emplace_back(std::move(resource), std::make_shared<const Object>(std::move(obj)));
}

StatusOr<std::vector<std::shared_ptr<const Object>>> StaticObjectLookup::List(const GroupResource& resource,
                                                                              std::string_view ns) const {
  std::vector<std::shared_ptr<const Object>> out;
  for (const auto& [gr, obj] : objects_) {
    if (gr == resource && (ns.empty() || Namespace(*obj) == ns)) out.push_back(obj);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(Namespace(*a), Name(*a)) < std::tie(Namespace(*b), Name(*b));
  });
  return out;
}

Status AdmissionForbidden(const GroupResource& resource, std::string_view name, std::string_view reason) {
  std::string message = resource.String();
  message += " \"";
  message += name.empty() ? std::string_view("Unknown") : name;
  message += "\" is forbidden: ";
  message += reason;
  return ForbiddenError(std::move(message));
}

}  // namespace berth::api
