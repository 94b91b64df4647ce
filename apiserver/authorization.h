// Request authorization: kube-apiserver's authorization filter
// (staging/src/k8s.io/apiserver/pkg/endpoints/filters/authorization.go) over
// the union kube-apiserver builds for --authorization-mode=RBAC: members of
// system:masters are always allowed (authorizerfactory.NewPrivilegedGroups),
// then RBAC (rbac/authorizer.h) decides. Without an RBAC authorizer every
// request is allowed (--authorization-mode=AlwaysAllow).
//
// The RBAC objects are read from the store as they are at each request
// (StorePolicySource). An aggregated ClusterRole (admin, edit, view) grants
// the rules stored in it, which the clusterrole-aggregation controller
// (controllers/rbac) writes, as upstream.
//
// Thread-safety: StorePolicySource is safe from any number of threads (the
// store is); the functions are pure.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/http_server.h"
#include "apiserver/request_info.h"
#include "authn/user_info.h"
#include "core/status.h"
#include "rbac/authorizer.h"
#include "store/store.h"

namespace berth::apiserver {

class StorePolicySource final : public rbac::PolicySource {
 public:
  explicit StorePolicySource(store::Store& store) : store_(store) {}
  std::vector<std::shared_ptr<const api::Object>> ClusterRoleBindings() const override;
  std::vector<std::shared_ptr<const api::Object>> RoleBindings(std::string_view ns) const override;
  std::shared_ptr<const api::Object> ClusterRole(std::string_view name) const override;
  std::shared_ptr<const api::Object> Role(std::string_view ns, std::string_view name) const override;

 private:
  std::vector<std::shared_ptr<const api::Object>> ListAll(const api::GroupResource& resource,
                                                          std::string_view ns) const;
  store::Store& store_;
};

// The attributes of an HTTP request made by `user`.
rbac::RequestAttributes RequestAttributesFor(const authn::UserInfo& user, const HttpRequest& request,
                                             const RequestInfo& info);

// The union described above; `authorizer` null = allow every request.
rbac::Decision Authorize(const rbac::Authorizer* authorizer, const rbac::RequestAttributes& attributes);

// The 403 for a denied request, as responsewriters.Forbidden writes it:
// `pods "canary" is forbidden: User "alice" cannot delete resource "pods" in
// API group "" in the namespace "team-b"`, details {name, group, kind:
// resource}; "forbidden: User ... cannot get path "/metrics"" for a
// non-resource request. A non-empty reason is appended after ": ".
HttpResponse ForbiddenResponse(const rbac::RequestAttributes& attributes, const std::string& reason);
// The message alone (also used by impersonation).
std::string ForbiddenStatusMessage(const rbac::RequestAttributes& attributes, const std::string& reason);

}  // namespace berth::apiserver
