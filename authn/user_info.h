// UserInfo: who made a request, as an authenticator established it.
//
// The shape of Kubernetes' user.Info (staging/src/k8s.io/apiserver/pkg/
// authentication/user/user.go): a name, an optional uid, groups and extra
// attributes. The well-known names below are kube-apiserver's.
//
// Thread-safety: a plain value.
#pragma once
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace berth::authn {

struct UserInfo {
  std::string name;                 // "alice", "system:node:node-0", "system:serviceaccount:ns:sa"
  std::string uid;                  // "" when the authenticator has none
  std::vector<std::string> groups;  // in the order the authenticator gave them
  std::map<std::string, std::vector<std::string>> extra;
};

// Groups and users kube-apiserver defines (user.go).
inline constexpr char kSystemPrivilegedGroup[] = "system:masters";
inline constexpr char kNodesGroup[] = "system:nodes";
inline constexpr char kAllUnauthenticated[] = "system:unauthenticated";
inline constexpr char kAllAuthenticated[] = "system:authenticated";
inline constexpr char kAnonymous[] = "system:anonymous";
inline constexpr char kServiceAccountsGroup[] = "system:serviceaccounts";
inline constexpr char kNodeUserPrefix[] = "system:node:";
inline constexpr char kServiceAccountUserPrefix[] = "system:serviceaccount:";

// The namespace and name of a ServiceAccount's user name
// ("system:serviceaccount:<namespace>:<name>", split at the first colon after the prefix);
// nothing for any other name. Upstream: serviceaccount.SplitUsername.
inline std::optional<std::pair<std::string_view, std::string_view>> SplitServiceAccountUsername(std::string_view name) {
  constexpr std::string_view prefix = kServiceAccountUserPrefix;
  if (!name.starts_with(prefix)) return std::nullopt;
  name.remove_prefix(prefix.size());
  const std::size_t colon = name.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return std::make_pair(name.substr(0, colon), name.substr(colon + 1));
}

// Whether `user` is in system:masters: kube-apiserver authorizes its every request
// (authorizerfactory's privileged group) and API Priority and Fairness exempts it.
inline bool IsSystemMaster(const UserInfo& user) {
  return std::find(user.groups.begin(), user.groups.end(), kSystemPrivilegedGroup) != user.groups.end();
}

}  // namespace berth::authn
