// ServiceAccount JWTs: the claims round trip, and each reason a token is refused
// (expired, not yet valid, another key, another audience or issuer, an algorithm
// other than ES256 — "none" and HS256 with the public key as the secret — and a
// payload changed after signing).
#include "authn/service_account_token.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "core/base64.h"

namespace berth::authn {
namespace {

using namespace std::chrono_literals;

struct Key {
  std::string private_pem, public_pem;
};

Key NewKey() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  BIO* priv = BIO_new(BIO_s_mem());
  BIO* pub = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(priv, key, nullptr, nullptr, 0, nullptr, nullptr);
  PEM_write_bio_PUBKEY(pub, key);
  auto text = [](BIO* b) {
    char* data = nullptr;
    long n = BIO_get_mem_data(b, &data);
    return std::string(data, n);
  };
  Key k{text(priv), text(pub)};
  BIO_free(priv);
  BIO_free(pub);
  EVP_PKEY_free(key);
  return k;
}

const Time kNow = Time(std::chrono::seconds(1'800'000'000));
const std::vector<std::string> kAudiences = {kDefaultServiceAccountIssuer};

ServiceAccountClaims Claims() {
  ServiceAccountClaims c;
  c.issuer = kDefaultServiceAccountIssuer;
  c.subject = "system:serviceaccount:team-a:default";
  c.audiences = kAudiences;
  c.issued_at = c.not_before = kNow;
  c.expiry = kNow + 3607s;
  c.id = "9f6c1c4e-0000-4000-8000-000000000001";
  c.ns = "team-a";
  c.service_account = {"default", "sa-uid"};
  c.pod = {"p", "pod-uid"};
  c.node = {"node-0", "node-uid"};
  return c;
}

class ServiceAccountTokenTest : public ::testing::Test {
 protected:
  Key key_ = NewKey();
  std::string token_ = SignServiceAccountToken(Claims(), key_.private_pem).value();

  StatusOr<ServiceAccountClaims> Verify(const std::string& token, Time now = kNow,
                                        const std::vector<std::string>& audiences = kAudiences,
                                        const std::string& pub = "") {
    return VerifyServiceAccountToken(token, pub.empty() ? key_.public_pem : pub, kDefaultServiceAccountIssuer,
                                     audiences, now);
  }
};

TEST_F(ServiceAccountTokenTest, ClaimsRoundTripWithUpstreamsShape) {
  auto c = Verify(token_);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->subject, "system:serviceaccount:team-a:default");
  EXPECT_EQ(c->ns, "team-a");
  EXPECT_EQ(c->service_account.uid, "sa-uid");
  EXPECT_EQ(c->pod.name, "p");
  EXPECT_EQ(c->pod.uid, "pod-uid");
  EXPECT_EQ(c->node.name, "node-0");
  EXPECT_EQ(c->expiry, kNow + 3607s);
  EXPECT_EQ(c->id, "9f6c1c4e-0000-4000-8000-000000000001");
  // The payload as claims.go writes it.
  const std::size_t a = token_.find('.'), b = token_.find('.', a + 1);
  auto payload = nlohmann::json::parse(*Base64Decode(token_.substr(a + 1, b - a - 1), Base64Alphabet::kUrl));
  EXPECT_EQ(payload["kubernetes.io"]["serviceaccount"], nlohmann::json::parse(R"({"name":"default","uid":"sa-uid"})"));
  EXPECT_EQ(payload["kubernetes.io"]["namespace"], "team-a");
  EXPECT_EQ(payload["iss"], kDefaultServiceAccountIssuer);
  EXPECT_EQ(payload["exp"], 1'800'003'607);
  EXPECT_TRUE(LooksLikeServiceAccountToken(token_, kDefaultServiceAccountIssuer));
  EXPECT_FALSE(LooksLikeServiceAccountToken(token_, "https://other"));
  EXPECT_FALSE(LooksLikeServiceAccountToken("static-token", kDefaultServiceAccountIssuer));
}

TEST_F(ServiceAccountTokenTest, ExpiryAndNotBeforeAllowTheLeewayOnly) {
  EXPECT_TRUE(Verify(token_, kNow + 3607s + kTokenLeeway).ok());
  auto expired = Verify(token_, kNow + 3607s + kTokenLeeway + 1s);
  EXPECT_EQ(expired.status().code(), Code::kUnauthorized);
  EXPECT_EQ(expired.status().message(), "service account token has expired");
  EXPECT_TRUE(Verify(token_, kNow - kTokenLeeway).ok());
  auto early = Verify(token_, kNow - kTokenLeeway - 1s);
  EXPECT_EQ(early.status().message(), "service account token is not valid yet");
}

TEST_F(ServiceAccountTokenTest, AnotherKeyAudienceOrIssuerIsRefused) {
  EXPECT_EQ(Verify(token_, kNow, kAudiences, NewKey().public_pem).status().code(), Code::kUnauthorized);
  auto aud = Verify(token_, kNow, {"https://vault.example"});
  EXPECT_EQ(aud.status().code(), Code::kUnauthorized);
  ServiceAccountClaims other = Claims();
  other.issuer = "https://other";
  auto iss = Verify(SignServiceAccountToken(other, key_.private_pem).value());
  EXPECT_EQ(iss.status().code(), Code::kUnauthorized);
}

TEST_F(ServiceAccountTokenTest, OnlyES256AndAnUntouchedPayloadVerify) {
  const std::size_t a = token_.find('.'), b = token_.find('.', a + 1);
  const std::string payload = token_.substr(a + 1, b - a - 1);
  // alg none, no signature.
  const std::string none = Base64Encode(R"({"alg":"none","typ":"JWT"})", Base64Alphabet::kUrl) + "." + payload + ".";
  EXPECT_EQ(Verify(none).status().code(), Code::kUnauthorized);
  // HS256 keyed with the public key PEM (the classic confusion attack).
  const std::string hs = Base64Encode(R"({"alg":"HS256","typ":"JWT"})", Base64Alphabet::kUrl) + "." + payload;
  unsigned char mac[EVP_MAX_MD_SIZE];
  size_t mac_len = sizeof mac;
  EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key_.public_pem.data(), key_.public_pem.size(),
            reinterpret_cast<const unsigned char*>(hs.data()), hs.size(), mac, sizeof mac, &mac_len);
  const std::string forged =
      hs + "." + Base64Encode(std::string(reinterpret_cast<char*>(mac), mac_len), Base64Alphabet::kUrl);
  EXPECT_EQ(Verify(forged).status().code(), Code::kUnauthorized);
  // Another namespace in the payload, the signature kept.
  ServiceAccountClaims other = Claims();
  other.ns = "team-b";
  other.subject = "system:serviceaccount:team-b:default";
  const std::string t2 = SignServiceAccountToken(other, key_.private_pem).value();
  const std::size_t a2 = t2.find('.'), b2 = t2.find('.', a2 + 1);
  const std::string spliced = token_.substr(0, a + 1) + t2.substr(a2 + 1, b2 - a2 - 1) + token_.substr(b);
  EXPECT_EQ(Verify(spliced).status().code(), Code::kUnauthorized);
}

}  // namespace
}  // namespace berth::authn
