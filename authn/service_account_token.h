// ServiceAccount tokens: signed JWTs (JWS compact form, ES256) with the claims of
// upstream's bound tokens (pkg/serviceaccount/claims.go, jwt.go):
//   iss   the issuer (kube-apiserver's --service-account-issuer; berth's default
//         kDefaultServiceAccountIssuer)
//   sub   system:serviceaccount:<namespace>:<name>
//   aud   the audiences asked for (default: the API server's --api-audiences, which
//         default to the issuer)
//   iat, nbf  when issued; exp  iat + expirationSeconds (NumericDate seconds)
//   jti   a random UUID (the credential id)
//   kubernetes.io  {namespace, serviceaccount{name,uid}, pod{name,uid}?,
//                   secret{name,uid}?, node{name,uid}?}  (privateClaims)
// Signing and verification use libjwt (Debian's libjwt-dev, OpenSSL). Verification
// accepts only ES256 (a token whose header says "none" or an HMAC algorithm is refused
// before libjwt looks at the key) and then checks what claims.go's Validate and
// jwt.go's validator check without the store: the issuer, one audience in common with
// the API server's, and exp/nbf against `now` with go-jose's leeway
// (kTokenLeeway). The live checks (the ServiceAccount and the bound objects still
// exist with the uids in the token) are the API server's
// (apiserver/service_account_token.h).
//
// Errors: kInvalid from Sign for claims it cannot encode; kUnauthorized from Verify
// with upstream's reasons ("service account token has expired", "service account token
// is not valid yet", "token audiences ... is invalid for the target audiences ...",
// "invalid signature"). The reason is for logs; clients only ever see 401.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "authn/user_info.h"
#include "core/clock.h"
#include "core/status.h"

namespace berth::authn {

// kube-apiserver's usual issuer (what kubeadm and most distributions pass as
// --service-account-issuer).
inline constexpr char kDefaultServiceAccountIssuer[] = "https://kubernetes.default.svc.cluster.local";

// Clock skew tolerated on exp and nbf: go-jose's jwt.DefaultLeeway, 1 minute, which
// claims.go's Validate uses through jwt.Claims.Validate.
inline constexpr std::chrono::seconds kTokenLeeway{60};

// A name and uid (claims.go `ref`).
struct ObjectRef {
  std::string name;
  std::string uid;
  bool empty() const { return name.empty() && uid.empty(); }
};

struct ServiceAccountClaims {
  std::string issuer;
  std::string subject;  // system:serviceaccount:<ns>:<name>
  std::vector<std::string> audiences;
  Time issued_at;
  Time not_before;
  Time expiry;
  std::string id;  // jti
  std::string ns;
  ObjectRef service_account;
  ObjectRef pod;     // empty when not bound to a pod
  ObjectRef secret;  // empty when not bound to a Secret
  ObjectRef node;    // the pod's node, or the Node the token is bound to
};

// "system:serviceaccount:<ns>:<name>" (serviceaccount.MakeUsername).
std::string ServiceAccountUsername(std::string_view ns, std::string_view name);

// The JWS compact form of `claims` signed with `private_key_pem` (PKCS#8 EC P-256).
StatusOr<std::string> SignServiceAccountToken(const ServiceAccountClaims& claims, std::string_view private_key_pem);

// True when `token` has the shape of a JWS (three base64url segments) whose payload
// names `issuer`: upstream's jwtTokenAuthenticator hands only such tokens to a
// validator and leaves the others to the next authenticator.
bool LooksLikeServiceAccountToken(std::string_view token, std::string_view issuer);

// The claims of a token signed with `public_key_pem`, checked against `issuer`,
// `audiences` (at least one in common) and `now` (exp and nbf, kTokenLeeway).
StatusOr<ServiceAccountClaims> VerifyServiceAccountToken(std::string_view token, std::string_view public_key_pem,
                                                         std::string_view issuer,
                                                         const std::vector<std::string>& audiences, Time now);

}  // namespace berth::authn
