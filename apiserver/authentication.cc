#include "apiserver/authentication.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/authorization.h"
#include "apiserver/request_info.h"

namespace berth::apiserver {
namespace {

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoringCase(s.substr(0, prefix.size()), prefix);
}

void AddGroup(authn::UserInfo* user, const std::string& group) {
  if (std::find(user->groups.begin(), user->groups.end(), group) == user->groups.end()) user->groups.push_back(group);
}

Status Unauthorized() { return Status(Code::kUnauthorized, "Unauthorized"); }

std::string_view RequestPath(const HttpRequest& request) {
  std::string_view path(request.target);
  return path.substr(0, path.find('?'));
}

}  // namespace

std::string BearerToken(const HttpRequest& request) {
  std::string_view header = request.Header("Authorization");
  // strings.SplitN(auth, " ", 3): the scheme, the token, and anything after a
  // second space is ignored.
  const std::size_t space = header.find(' ');
  if (space == std::string_view::npos || !EqualsIgnoringCase(header.substr(0, space), "bearer")) return "";
  std::string_view token = header.substr(space + 1);
  token = token.substr(0, token.find(' '));
  return std::string(token);
}

void AddImplicitGroups(authn::UserInfo* user) {
  if (user->name == authn::kAnonymous) {
    AddGroup(user, authn::kAllUnauthenticated);
    return;
  }
  if (auto sa = authn::SplitServiceAccountUsername(user->name)) {
    AddGroup(user, authn::kServiceAccountsGroup);
    AddGroup(user, std::string(authn::kServiceAccountsGroup) + ":" + std::string(sa->first));
  }
  AddGroup(user, authn::kAllAuthenticated);
}

StatusOr<authn::UserInfo> AuthenticateRequest(const HttpRequest& request, const AuthenticationOptions& options) {
  if (request.in_process || !options.enabled) {
    authn::UserInfo user;
    user.name = request.in_process ? kLoopbackUser : kUnsecuredUser;
    user.groups = {authn::kSystemPrivilegedGroup, authn::kAllAuthenticated};
    return user;
  }
  bool had_credential = false;
  if (const auto& cert = request.client_certificate) {
    had_credential = true;
    if (cert->verified && !cert->common_name.empty()) {
      authn::UserInfo user;
      user.name = cert->common_name;
      user.groups = cert->organizations;
      AddGroup(&user, authn::kAllAuthenticated);
      return user;
    }
  }
  const std::string token = BearerToken(request);
  if (!token.empty()) {
    had_credential = true;
    if (options.token_file != nullptr) {
      if (auto user = options.token_file->Authenticate(token)) {
        AddGroup(&*user, authn::kAllAuthenticated);
        return *std::move(user);
      }
    }
    if (options.service_account_tokens) {
      if (auto sa = options.service_account_tokens(token); sa.has_value() && sa->ok()) {
        AddGroup(&sa->value(), authn::kAllAuthenticated);
        return *std::move(*sa);
      }
    }
  }
  if (had_credential) return Unauthorized();
  const std::string_view path = RequestPath(request);
  for (const std::string& allowed : options.anonymous_paths) {
    if (path == allowed) {
      authn::UserInfo user;
      user.name = authn::kAnonymous;
      user.groups = {authn::kAllUnauthenticated};
      return user;
    }
  }
  return Unauthorized();
}

bool HasImpersonationHeaders(const HttpRequest& request) {
  return std::any_of(request.headers.begin(), request.headers.end(),
                     [](const auto& h) { return StartsWithIgnoreCase(h.first, "Impersonate-"); });
}

StatusOr<authn::UserInfo> Impersonate(const HttpRequest& request, const authn::UserInfo& requester,
                                      const AuthorizeFn& authorize) {
  // buildImpersonationRequests (impersonation.go): the user (the first
  // Impersonate-User value; an empty one is none), every group, every extra value,
  // then the uid (the first Impersonate-Uid); each is authorized in that order
  // and the first refusal is the answer.
  constexpr std::string_view kExtraPrefix = "Impersonate-Extra-";
  std::optional<std::string> user, uid;
  std::vector<std::string> groups;
  std::vector<std::pair<std::string, std::string>> extras;  // key, value
  for (const auto& [name, value] : request.headers) {
    if (EqualsIgnoringCase(name, "Impersonate-User")) {
      if (!user) user = value;
    } else if (EqualsIgnoringCase(name, "Impersonate-Group")) {
      groups.push_back(value);
    } else if (EqualsIgnoringCase(name, "Impersonate-Uid")) {
      if (!uid) uid = value;
    } else if (StartsWithIgnoreCase(name, kExtraPrefix)) {
      // The key is the rest of the header name, lower-cased and %-unescaped
      // (unescapeExtraKey).
      std::string key(name.substr(kExtraPrefix.size()));
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      extras.emplace_back(UrlDecode(key, false), value);
    }
  }
  if (user && user->empty()) user.reset();
  if (uid && uid->empty()) uid.reset();
  if (!user) {
    // The requests, as Go's %v prints a []v1.ObjectReference {Kind Namespace Name UID
    // APIVersion ResourceVersion FieldPath}.
    std::string refs;
    auto ref = [&](std::string_view kind, std::string_view name, std::string_view api_version,
                   std::string_view field_path) {
      refs += (refs.empty() ? "{" : " {") + std::string(kind) + "  " + std::string(name) + "  " +
              std::string(api_version) + "  " + std::string(field_path) + "}";
    };
    for (const std::string& g : groups) ref("Group", g, "", "");
    for (const auto& [key, value] : extras) ref("UserExtra", value, "authentication.k8s.io/v1", key);
    if (uid) ref("UID", *uid, "authentication.k8s.io/v1", "");
    return BadRequestError("requested [" + refs + "] without impersonating a user");
  }
  authn::UserInfo as;
  std::vector<rbac::RequestAttributes> steps;
  auto step = [&](std::string group, std::string resource, std::string subresource, std::string ns, std::string name) {
    rbac::RequestAttributes a;
    a.user = requester;
    a.verb = "impersonate";
    a.api_group = std::move(group);
    a.resource = std::move(resource);
    a.subresource = std::move(subresource);
    a.ns = std::move(ns);
    a.name = std::move(name);
    steps.push_back(std::move(a));
  };
  as.name = *user;
  if (auto sa = authn::SplitServiceAccountUsername(*user)) {
    step("", "serviceaccounts", "", std::string(sa->first), std::string(sa->second));
  } else {
    step("", "users", "", "", *user);
  }
  for (const std::string& g : groups) {
    as.groups.push_back(g);
    step("", "groups", "", "", g);
  }
  for (const auto& [key, value] : extras) {
    as.extra[key].push_back(value);
    step("authentication.k8s.io", "userextras", key, "", value);
  }
  if (uid) {
    as.uid = *uid;
    step("authentication.k8s.io", "uids", "", "", *uid);
  }
  for (const rbac::RequestAttributes& a : steps) {
    rbac::Decision d = authorize(a);
    if (!d.allowed) {
      return ForbiddenError(ForbiddenStatusMessage(a, d.reason));
    }
  }
  AddImplicitGroups(&as);
  return as;
}

}  // namespace berth::apiserver
