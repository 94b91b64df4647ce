// Request authentication and impersonation: who is making this request, and
// as whom does it act.
//
// As kube-apiserver's authentication filter
// (staging/src/k8s.io/apiserver/pkg/endpoints/filters/authentication.go) over
// a union of authenticators (pkg/kubeapiserver/authenticator/config.go), in
// this order:
//   1. x509 client certificate: a certificate the TLS listener verified
//      against the client CA (http_server.h ClientCertificate) is the user
//      CN in the groups O (request/x509/x509.go CommonNameUserConversion). A
//      certificate that did not verify is an error, and the next
//      authenticator is tried.
//   2. bearer token (`Authorization: Bearer <token>`, scheme case-insensitive,
//      request/bearertoken/bearertoken.go): the token file (authn/token_file.h),
//      then ServiceAccount JWTs (service_account_token.h), which come with their
//      own groups. A token nobody knows is an error ("invalid bearer token").
// The first success wins and gets the group system:authenticated added
// (group.AuthenticatedGroupAdder). When every authenticator that had a
// credential failed, the answer is 401 Unauthorized. A request with no
// credential at all is the anonymous user (system:anonymous in
// system:unauthenticated) only on the paths listed in anonymous_paths, as
// Kubernetes 1.32's structured authentication configuration
// `anonymous.conditions` (AnonymousAuthConfigurableEndpoints) restricts it;
// anywhere else it is 401.
//
// A request of the in-process client (HttpRequest::in_process) is the user
// system:apiserver in system:masters, kube-apiserver's loopback identity.
//
// With authentication off (a development server on loopback), every request
// is the user "system:unsecured" in system:masters and system:authenticated:
// kube-apiserver's former insecure port, which skipped authentication and
// authorization the same way.
//
// Impersonation (filters/impersonation.go): the headers Impersonate-User,
// Impersonate-Group (repeated), Impersonate-Uid and Impersonate-Extra-<key>
// make the request act as that user, when the requester may `impersonate`
// each of them: users, groups and serviceaccounts in the core group ("" ),
// uids and userextras/<key> in authentication.k8s.io, checked in upstream's
// order: the user (the first Impersonate-User), each group, each extra value,
// the uid (the first Impersonate-Uid); the first refusal is the answer. Groups,
// extra and a uid need a user (400 `requested [{Group  team-a    }] without
// impersonating a user`, the requests as Go prints []v1.ObjectReference); the impersonated user gets
// system:authenticated unless it is system:anonymous (then system:unauthenticated); a ServiceAccount user
// ("system:serviceaccount:ns:name") gets system:serviceaccounts and
// system:serviceaccounts:ns.
//
// Thread-safety: the functions are pure given their arguments.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/http_server.h"
#include "authn/token_file.h"
#include "authn/user_info.h"
#include "core/status.h"
#include "rbac/authorizer.h"

namespace berth::apiserver {

inline constexpr char kUnsecuredUser[] = "system:unsecured";
inline constexpr char kLoopbackUser[] = "system:apiserver";

struct AuthenticationOptions {
  bool enabled = false;
  // Static bearer tokens (--token-auth-file); null = none.
  std::shared_ptr<const authn::TokenFile> token_file;
  // ServiceAccount JWTs: nullopt for a token that is not one; empty = none.
  std::function<std::optional<StatusOr<authn::UserInfo>>(std::string_view token)> service_account_tokens;
  // Where a request without credentials is the anonymous user; a path matches
  // exactly (kube's conditions list exact paths). The paths system:public-info-viewer
  // grants: "/version/" is the version route too (go-restful matches it).
  std::vector<std::string> anonymous_paths = {"/healthz", "/livez", "/readyz", "/version", "/version/"};
};

// The requester, or kUnauthorized "Unauthorized".
StatusOr<authn::UserInfo> AuthenticateRequest(const HttpRequest& request, const AuthenticationOptions& options);

// The bearer token of an Authorization header, or "" when there is none.
std::string BearerToken(const HttpRequest& request);

// True when the request carries any Impersonate-* header.
bool HasImpersonationHeaders(const HttpRequest& request);

// The user the request acts as. `authorize` answers whether the requester may
// do one impersonation step (verb "impersonate"). Errors: kForbidden with
// upstream's message (`users "bob" is forbidden: User "alice" cannot
// impersonate resource "users" in API group "" at the cluster scope`), or
// kBadRequest for groups, extra or a uid without a user.
using AuthorizeFn = std::function<rbac::Decision(const rbac::RequestAttributes&)>;
StatusOr<authn::UserInfo> Impersonate(const HttpRequest& request, const authn::UserInfo& requester,
                                      const AuthorizeFn& authorize);

// The groups a user gets from its kind: system:authenticated, and for
// ServiceAccount users system:serviceaccounts and system:serviceaccounts:<ns>,
// appended when missing.
void AddImplicitGroups(authn::UserInfo* user);

}  // namespace berth::apiserver
