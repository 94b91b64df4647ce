// ServiceAccount tokens in the API server: the TokenRequest API that issues them and the
// authenticator that accepts them.
//
// TokenRequest (pkg/registry/core/serviceaccount/storage/token.go, validation in
// pkg/apis/authentication/validation ValidateTokenRequest):
//   POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token with an
//   authentication.k8s.io/v1 TokenRequest (JSON, YAML or the protobuf `kubectl create
//   token` sends). spec.expirationSeconds defaults to 3600 and must lie in
//   [kMinTokenExpirationSeconds, kMaxTokenExpirationSeconds] (422
//   `TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid
//   value: 60: may not specify a duration less than 10 minutes`); it is then cut to
//   max_expiration when that is set (--service-account-max-token-expiration; none by
//   default, as upstream). spec.audiences default to the API audiences. The
//   ServiceAccount must exist (404 `serviceaccounts "x" not found`). spec.boundObjectRef
//   {kind, apiVersion, name, uid} may name a Pod (its spec.serviceAccountName must be
//   this account: 400 `cannot bind token for serviceaccount "x" to pod running with
//   different serviceaccount name.`; the pod's node goes into the claims), a Secret or a
//   Node of the core group (400 `cannot bind token to object of type /v1, Kind=X`
//   otherwise); the object must exist (404) and a uid given must be its uid (409
//   `Operation cannot be fulfilled on Pod "p": the UID in the bound object reference
//   (u) does not match the UID in record. The object might have been deleted and then
//   recreated`). The answer is 201 with the request, metadata {name, namespace,
//   creationTimestamp} and status {token, expirationTimestamp}. Authorization is the
//   request's own: verb create on serviceaccounts/token.
//
// Authentication (pkg/serviceaccount/jwt.go and claims.go Validate, the "legacy"
// getter being the store): a bearer token that is a JWS naming this issuer is verified
// (authn/service_account_token.h: ES256 with sa.pub, issuer, audiences, exp/nbf with the
// leeway, on the injected clock), then against live objects: the ServiceAccount exists
// with the uid in the token and is not deleted; a bound Pod or Secret exists with the
// uid in the token; a Node-bound token's Node exists with its uid; an object whose
// deletionTimestamp lies more than kTokenLeeway in the past counts as deleted, as
// upstream's invalidIfDeletedBefore. The user is system:serviceaccount:<ns>:<name>
// with uid the ServiceAccount's, groups system:serviceaccounts and
// system:serviceaccounts:<ns>, and the extra authentication.kubernetes.io/pod-name,
// pod-uid, node-name, node-uid and credential-id ("JTI=<jti>"). Any failure is 401;
// the reason is logged at debug level (never the token).
//
// Thread-safety: const methods over a thread-safe store; any number of threads.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "authn/service_account_token.h"
#include "authn/user_info.h"
#include "core/clock.h"
#include "core/status.h"
#include "store/store.h"

namespace berth::apiserver {

// ValidateTokenRequest's bounds: at least 10 minutes, at most 2^32 seconds.
inline constexpr int64_t kMinTokenExpirationSeconds = 600;
inline constexpr int64_t kMaxTokenExpirationSeconds = int64_t{1} << 32;
// SetDefaults_TokenRequestSpec: one hour.
inline constexpr int64_t kDefaultTokenExpirationSeconds = 3600;

struct ServiceAccountTokenOptions {
  // --service-account-issuer.
  std::string issuer = authn::kDefaultServiceAccountIssuer;
  // --api-audiences; empty: the issuer alone (kube-apiserver's default).
  std::vector<std::string> api_audiences;
  // sa.key and sa.pub (pki/certificates.h); empty: no tokens are issued (the token
  // subresource answers 404) and none are accepted.
  std::string signing_key_pem;
  std::string public_key_pem;
  // --service-account-max-token-expiration; zero: no cut (upstream's default).
  std::chrono::seconds max_expiration{0};

  bool enabled() const { return !signing_key_pem.empty() && !public_key_pem.empty(); }
  std::vector<std::string> Audiences() const;
};

class ServiceAccountTokens {
 public:
  ServiceAccountTokens(ServiceAccountTokenOptions options, store::Store& store, Clock& clock)
      : options_(std::move(options)), store_(store), clock_(clock) {}

  bool enabled() const { return options_.enabled(); }

  // The TokenRequest answer (the 201 body) for `request` to ServiceAccount ns/name, or
  // the errors above.
  StatusOr<nlohmann::json> CreateToken(const std::string& ns, const std::string& name,
                                       const nlohmann::json& request) const;

  // nullopt when `token` is not one of this issuer's JWTs (the next authenticator, or
  // 401); else the user, or kUnauthorized with the reason.
  std::optional<StatusOr<authn::UserInfo>> Authenticate(std::string_view token) const;

 private:
  const ServiceAccountTokenOptions options_;
  store::Store& store_;
  Clock& clock_;
};

}  // namespace berth::apiserver
