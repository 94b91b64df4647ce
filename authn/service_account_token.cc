#include "authn/service_account_token.h"

#include <algorithm>
#include <cstdlib>
#include <jwt.h>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/base64.h"

namespace berth::authn {
namespace {

using nlohmann::json;

struct JwtFree {
  void operator()(jwt_t* j) const { jwt_free(j); }
};
using Jwt = std::unique_ptr<jwt_t, JwtFree>;
struct CharFree {
  void operator()(char* p) const { std::free(p); }
};
using CString = std::unique_ptr<char, CharFree>;

Status Unauthorized(std::string reason) { return Status(Code::kUnauthorized, std::move(reason)); }

int64_t Seconds(Time t) { return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count(); }
Time FromSeconds(int64_t s) { return Time(std::chrono::seconds(s)); }

json RefJson(const ObjectRef& ref) { return json{{"name", ref.name}, {"uid", ref.uid}}; }
ObjectRef RefFrom(const json& j) {
  ObjectRef ref;
  if (!j.is_object()) return ref;
  if (auto n = j.find("name"); n != j.end() && n->is_string()) ref.name = n->get<std::string>();
  if (auto u = j.find("uid"); u != j.end() && u->is_string()) ref.uid = u->get<std::string>();
  return ref;
}

// The JSON of segment `index` (0 header, 1 payload) of a compact JWS, or null.
json Segment(std::string_view token, int index) {
  std::size_t start = 0;
  for (int i = 0; i < index; ++i) {
    start = token.find('.', start);
    if (start == std::string_view::npos) return nullptr;
    ++start;
  }
  const std::size_t end = token.find('.', start);
  if (end == std::string_view::npos) return nullptr;
  auto bytes = Base64Decode(token.substr(start, end - start), Base64Alphabet::kUrl);
  if (!bytes) return nullptr;
  json j = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : json(nullptr);
}

std::string StringClaim(const json& claims, const char* key) {
  auto it = claims.find(key);
  return it != claims.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string ServiceAccountUsername(std::string_view ns, std::string_view name) {
  return std::string(kServiceAccountUserPrefix) + std::string(ns) + ":" + std::string(name);
}

StatusOr<std::string> SignServiceAccountToken(const ServiceAccountClaims& c, std::string_view private_key_pem) {
  json k8s = {{"namespace", c.ns}, {"serviceaccount", RefJson(c.service_account)}};
  if (!c.pod.empty()) k8s["pod"] = RefJson(c.pod);
  if (!c.secret.empty()) k8s["secret"] = RefJson(c.secret);
  if (!c.node.empty()) k8s["node"] = RefJson(c.node);
  json payload = {{"iss", c.issuer},
                  {"sub", c.subject},
                  {"aud", c.audiences},
                  {"iat", Seconds(c.issued_at)},
                  {"nbf", Seconds(c.not_before)},
                  {"exp", Seconds(c.expiry)},
                  {"jti", c.id},
                  {"kubernetes.io", std::move(k8s)}};
  jwt_t* raw = nullptr;
  if (jwt_new(&raw) != 0) return Status(Code::kInternal, "jwt: allocating a token");
  Jwt jwt(raw);
  if (jwt_add_grants_json(jwt.get(), payload.dump().c_str()) != 0) {
    return Status(Code::kInvalid, "jwt: the claims cannot be encoded");
  }
  const std::string key(private_key_pem);
  if (jwt_set_alg(jwt.get(), JWT_ALG_ES256, reinterpret_cast<const unsigned char*>(key.data()),
                  static_cast<int>(key.size())) != 0) {
    return Status(Code::kInternal, "jwt: setting ES256");
  }
  CString out(jwt_encode_str(jwt.get()));
  if (!out) return Status(Code::kInternal, "jwt: signing the token (is the key an EC P-256 private key?)");
  return std::string(out.get());
}

bool LooksLikeServiceAccountToken(std::string_view token, std::string_view issuer) {
  if (std::count(token.begin(), token.end(), '.') != 2) return false;
  const json payload = Segment(token, 1);
  return payload.is_object() && StringClaim(payload, "iss") == issuer;
}

StatusOr<ServiceAccountClaims> VerifyServiceAccountToken(std::string_view token, std::string_view public_key_pem,
                                                         std::string_view issuer,
                                                         const std::vector<std::string>& audiences, Time now) {
  // The algorithm is checked before libjwt sees the key: with "none" it would not
  // verify at all, and with HS256 it would take the public key as the HMAC secret.
  const json header = Segment(token, 0);
  if (!header.is_object() || StringClaim(header, "alg") != "ES256") return Unauthorized("invalid signature");
  jwt_t* raw = nullptr;
  const std::string text(token), key(public_key_pem);
  if (jwt_decode(&raw, text.c_str(), reinterpret_cast<const unsigned char*>(key.data()),
                 static_cast<int>(key.size())) != 0 ||
      raw == nullptr) {
    if (raw != nullptr) jwt_free(raw);
    return Unauthorized("invalid signature");
  }
  Jwt jwt(raw);
  if (jwt_get_alg(jwt.get()) != JWT_ALG_ES256) return Unauthorized("invalid signature");
  CString grants(jwt_get_grants_json(jwt.get(), nullptr));
  if (!grants) return Unauthorized("invalid claims");
  const json claims = json::parse(grants.get(), nullptr, /*allow_exceptions=*/false);
  if (!claims.is_object()) return Unauthorized("invalid claims");

  ServiceAccountClaims c;
  c.issuer = StringClaim(claims, "iss");
  c.subject = StringClaim(claims, "sub");
  c.id = StringClaim(claims, "jti");
  // go-jose writes one audience as a string, several as a list.
  if (auto aud = claims.find("aud"); aud != claims.end()) {
    if (aud->is_string()) c.audiences.push_back(aud->get<std::string>());
    if (aud->is_array()) {
      for (const json& a : *aud) {
        if (a.is_string()) c.audiences.push_back(a.get<std::string>());
      }
    }
  }
  auto time_claim = [&](const char* key, Time* out) {
    auto it = claims.find(key);
    if (it == claims.end() || !it->is_number()) return false;
    *out = FromSeconds(it->get<int64_t>());
    return true;
  };
  const bool has_exp = time_claim("exp", &c.expiry);
  time_claim("iat", &c.issued_at);
  const bool has_nbf = time_claim("nbf", &c.not_before);
  const json& k8s = claims.contains("kubernetes.io") ? claims["kubernetes.io"] : json(nullptr);
  if (k8s.is_object()) {
    c.ns = StringClaim(k8s, "namespace");
    if (k8s.contains("serviceaccount")) c.service_account = RefFrom(k8s["serviceaccount"]);
    if (k8s.contains("pod")) c.pod = RefFrom(k8s["pod"]);
    if (k8s.contains("secret")) c.secret = RefFrom(k8s["secret"]);
    if (k8s.contains("node")) c.node = RefFrom(k8s["node"]);
  }

  if (c.issuer != issuer) return Unauthorized("token issuer is not accepted");
  if (has_exp && now > c.expiry + kTokenLeeway) return Unauthorized("service account token has expired");
  if (has_nbf && now + kTokenLeeway < c.not_before) return Unauthorized("service account token is not valid yet");
  if (!has_exp) return Unauthorized("service account token has no expiry");
  const bool audience_ok = std::any_of(c.audiences.begin(), c.audiences.end(), [&](const std::string& a) {
    return std::find(audiences.begin(), audiences.end(), a) != audiences.end();
  });
  if (!audience_ok) return Unauthorized("token audiences is invalid for the target audiences");
  // claims.go: the namespace and service account are required, and the subject must be
  // the account's username.
  if (c.ns.empty() || c.service_account.name.empty() || c.service_account.uid.empty() ||
      c.subject != ServiceAccountUsername(c.ns, c.service_account.name)) {
    return Unauthorized("service account token claims are incomplete");
  }
  return c;
}

}  // namespace berth::authn
