// A pod's ServiceAccount token, CA and namespace on disk, and the environment that
// points the pod at the API server: what the kubelet provides through the projected
// `kube-api-access-*` volume the ServiceAccount admission plugin adds
// (plugin/pkg/admission/serviceaccount/admission.go) and its service environment for
// the `kubernetes` Service (pkg/kubelet/envvars/envvars.go).
//
// Files, under <pod dir>/var/run/secrets/kubernetes.io/serviceaccount/ (the mount path
// upstream, below the pod directory since berth's pods have no mount namespace yet):
//   token      a TokenRequest for the pod's ServiceAccount bound to the pod, with
//              expirationSeconds kPodTokenExpirationSeconds, mode 0600, owned by the
//              owner of the directory (agent/volumes.h gives the directory to the
//              pod's user when the sandbox is on); rewritten atomically, containers
//              are never restarted for it
//   ca.crt     the CA that signs the API server's certificate
//   namespace  the pod's namespace
// The token is refreshed once 80 % of its lifetime has passed, as the kubelet's token
// manager (pkg/kubelet/token/token_manager.go requiresRefresh), on the injected clock.
// Automount (shouldAutomount): the pod's spec.automountServiceAccountToken when set,
// else its ServiceAccount's, else true.
//
// A token request that fails (the ServiceAccount not created yet, a server that does
// not serve tokens) is retried after kTokenRetryInterval; containers start without
// waiting for it (the kubelet instead holds the pod in ContainerCreating until the
// volume mounts), so a pod that needs the token at once should retry reading it.
//
// Thread-safety: PodTokenManager is not thread-safe (the agent's loop thread owns it).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/container_env.h"
#include "api/object.h"
#include "client/client.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::agent {

// The kubelet's projected token lifetime (the admission plugin's
// DefaultServiceAccountTokenExpirationSeconds is 3607: an hour plus 7 s, so such
// tokens are recognisable).
inline constexpr int64_t kPodTokenExpirationSeconds = 3607;
// Wait before asking again for a token whose request failed.
inline constexpr std::chrono::seconds kTokenRetryInterval{1};

// "var/run/secrets/kubernetes.io/serviceaccount", relative to the pod directory.
inline constexpr char kServiceAccountDir[] = "var/run/secrets/kubernetes.io/serviceaccount";

// How pods reach the API server.
struct ApiServerEndpoint {
  std::string host;  // "" = pods get neither the environment nor token files
  int port = 0;
  std::string ca_pem;
};

// KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT, KUBERNETES_SERVICE_PORT_HTTPS,
// KUBERNETES_PORT, KUBERNETES_PORT_<port>_TCP(_PROTO, _PORT, _ADDR) for `endpoint`, as
// the kubelet writes them for the `kubernetes` Service (whose port is named https).
std::vector<EnvVar> KubernetesServiceEnv(const ApiServerEndpoint& endpoint);

// shouldAutomount: the pod's field, else the ServiceAccount's (nullptr: unknown), else true.
bool ShouldAutomountToken(const api::Object& pod, const api::Object* service_account);

// A token issued for a pod (TokenRequest status.token, spec.expirationSeconds granted).
struct PodToken {
  std::string token;
  int64_t expiration_seconds = 0;
};
// POST serviceaccounts/<the pod's ServiceAccount, "default" when unset>/token in the pod's
// namespace, bound to the pod, for `audiences` (empty: the API server's) and
// `expiration_seconds`. Errors: the client's; kInternal when the answer carries no token.
StatusOr<PodToken> RequestPodToken(client::Client& client, const api::Object& pod,
                                   const std::vector<std::string>& audiences, int64_t expiration_seconds);

class PodTokenManager {
 public:
  PodTokenManager(client::Client& client, Clock& clock, ApiServerEndpoint endpoint)
      : client_(client), clock_(clock), endpoint_(std::move(endpoint)) {}

  // Writes or refreshes the files of `pod` in `pod_dir` when due (see above). Errors
  // are the token request's; a pod that does not automount, or no endpoint, is Ok.
  Status Ensure(const api::Object& pod, const std::string& pod_dir);
  // Forgets a pod that is gone.
  void Forget(const std::string& uid) { state_.erase(uid); }

 private:
  struct State {
    Time refresh_at;  // 80 % of the lifetime of the token on disk
    bool automount = true;
  };
  client::Client& client_;
  Clock& clock_;
  const ApiServerEndpoint endpoint_;
  std::map<std::string, State> state_;  // by pod uid
};

}  // namespace berth::agent
