#include "apiserver/authorization.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "apiserver/status_response.h"

namespace berth::apiserver {
namespace {

const api::GroupResource kClusterRoleBindings{"rbac.authorization.k8s.io", "clusterrolebindings"};
const api::GroupResource kRoleBindings{"rbac.authorization.k8s.io", "rolebindings"};
const api::GroupResource kClusterRoles{"rbac.authorization.k8s.io", "clusterroles"};
const api::GroupResource kRoles{"rbac.authorization.k8s.io", "roles"};

}  // namespace

std::vector<std::shared_ptr<const api::Object>> StorePolicySource::ListAll(const api::GroupResource& resource,
                                                                           std::string_view ns) const {
  store::ListOptions options;
  options.ns = std::string(ns);
  auto list = store_.List(resource, options);
  if (!list.ok()) return {};
  return std::move(list->items);
}

std::vector<std::shared_ptr<const api::Object>> StorePolicySource::ClusterRoleBindings() const {
  return ListAll(kClusterRoleBindings, "");
}

std::vector<std::shared_ptr<const api::Object>> StorePolicySource::RoleBindings(std::string_view ns) const {
  if (ns.empty()) return {};
  return ListAll(kRoleBindings, ns);
}

std::shared_ptr<const api::Object> StorePolicySource::ClusterRole(std::string_view name) const {
  auto role = store_.GetShared({kClusterRoles, "", std::string(name)});
  return role.ok() ? *role : nullptr;
}

std::shared_ptr<const api::Object> StorePolicySource::Role(std::string_view ns, std::string_view name) const {
  auto role = store_.GetShared({kRoles, std::string(ns), std::string(name)});
  return role.ok() ? *role : nullptr;
}

rbac::RequestAttributes RequestAttributesFor(const authn::UserInfo& user, const HttpRequest& request,
                                             const RequestInfo& info) {
  rbac::RequestAttributes a;
  a.user = user;
  a.resource_request = info.is_resource_request;
  if (info.is_resource_request) {
    a.verb = info.verb;
    a.api_group = info.api_group;
    a.api_version = info.api_version;
    a.resource = info.resource;
    a.subresource = info.subresource;
    a.ns = info.namespace_;
    a.name = info.name;
  } else {
    a.verb = request.method;
    std::transform(a.verb.begin(), a.verb.end(), a.verb.begin(), [](unsigned char c) { return std::tolower(c); });
  }
  a.path = info.path;
  return a;
}

rbac::Decision Authorize(const rbac::Authorizer* authorizer, const rbac::RequestAttributes& attributes) {
  if (authn::IsSystemMaster(attributes.user)) return {true, ""};
  if (authorizer == nullptr) return {true, ""};
  return authorizer->Authorize(attributes);
}

std::string ForbiddenStatusMessage(const rbac::RequestAttributes& a, const std::string& reason) {
  std::string message;
  if (!a.resource_request || a.resource.empty()) {
    message = "forbidden: ";
  } else {
    message = api::GroupResource{a.api_group, a.resource}.String();
    if (!a.name.empty()) message += " \"" + a.name + "\"";
    message += " is forbidden: ";
  }
  message += rbac::ForbiddenMessage(a);
  if (!reason.empty()) message += ": " + reason;
  return message;
}

HttpResponse ForbiddenResponse(const rbac::RequestAttributes& a, const std::string& reason) {
  StatusDetails details;
  if (a.resource_request) {
    details.name = a.name;
    details.group = a.api_group;
    details.kind = a.resource;
  }
  return StatusResponse(ForbiddenError(ForbiddenStatusMessage(a, reason)), details);
}

}  // namespace berth::apiserver
