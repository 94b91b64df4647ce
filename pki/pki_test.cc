#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "pki/certificates.h"

namespace berth::pki {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fixed instant: pki reads no clock.
const TimePoint kNow = std::chrono::system_clock::from_time_t(1'900'000'000);  // 2030-03-17

X509* Read(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

// OpenSSL's chain verification of `leaf` against `ca` at `at`: X509_V_OK or the error.
int Verify(const std::string& leaf_pem, const std::string& ca_pem, TimePoint at, int purpose = 0) {
  X509* leaf = Read(leaf_pem);
  X509* ca = Read(ca_pem);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_VERIFY_PARAM* param = X509_STORE_CTX_get0_param(ctx);
  X509_VERIFY_PARAM_set_time(param, std::chrono::system_clock::to_time_t(at));
  if (purpose) X509_VERIFY_PARAM_set_purpose(param, purpose);
  const int rc = X509_verify_cert(ctx);
  const int err = rc == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(ca);
  X509_free(leaf);
  return err;
}

std::string TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "pki_test.XXXXXX").string();
  EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

mode_t Mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

TEST(PkiTest, CertificateAuthorityShape) {
  auto ca = CreateCertificateAuthority("test-ca", kNow);
  ASSERT_TRUE(ca.ok()) << ca.status();
  EXPECT_THAT(ca->certificate_pem, HasSubstr("-----BEGIN CERTIFICATE-----"));
  EXPECT_THAT(ca->private_key_pem, HasSubstr("-----BEGIN PRIVATE KEY-----"));
  auto info = ParseCertificate(ca->certificate_pem);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->common_name, "test-ca");
  EXPECT_TRUE(info->is_ca);
  EXPECT_EQ(info->not_before, kNow - std::chrono::minutes(5));
  EXPECT_EQ(info->not_after, kNow + std::chrono::hours(24 * 365 * 10));

  X509* x = Read(ca->certificate_pem);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(X509_get_key_usage(x), static_cast<uint32_t>(KU_KEY_CERT_SIGN | KU_CRL_SIGN | KU_DIGITAL_SIGNATURE));
  EXPECT_NE(X509_get0_subject_key_id(x), nullptr);
  EXPECT_EQ(X509_get_ext_by_NID(x, NID_basic_constraints, -1) >= 0, true);
  EXPECT_EQ(X509_EXTENSION_get_critical(X509_get_ext(x, X509_get_ext_by_NID(x, NID_basic_constraints, -1))), 1);
  EXPECT_EQ(X509_EXTENSION_get_critical(X509_get_ext(x, X509_get_ext_by_NID(x, NID_key_usage, -1))), 1);
  EVP_PKEY* key = X509_get0_pubkey(x);
  EXPECT_EQ(EVP_PKEY_get_base_id(key), EVP_PKEY_EC);
  char curve[64] = {};
  size_t len = 0;
  EVP_PKEY_get_utf8_string_param(key, "group", curve, sizeof curve, &len);
  EXPECT_STREQ(curve, "prime256v1");
  X509_free(x);
}

TEST(PkiTest, ChainVerifiesAgainstItsCaOnly) {
  auto ca = CreateCertificateAuthority("ca-1", kNow);
  auto other = CreateCertificateAuthority("ca-2", kNow);
  ASSERT_TRUE(ca.ok() && other.ok());
  CertificateRequest req;
  req.common_name = "alice";
  req.client_auth = true;
  auto leaf = IssueCertificate(*ca, req, kNow);
  ASSERT_TRUE(leaf.ok()) << leaf.status();
  EXPECT_EQ(Verify(leaf->certificate_pem, ca->certificate_pem, kNow, X509_PURPOSE_SSL_CLIENT), X509_V_OK);
  EXPECT_EQ(Verify(leaf->certificate_pem, other->certificate_pem, kNow), X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
  // Valid from 5 minutes before `now` (clock skew) to a year after.
  EXPECT_EQ(Verify(leaf->certificate_pem, ca->certificate_pem, kNow - std::chrono::minutes(4)), X509_V_OK);
  EXPECT_EQ(Verify(leaf->certificate_pem, ca->certificate_pem, kNow - std::chrono::minutes(6)),
            X509_V_ERR_CERT_NOT_YET_VALID);
  EXPECT_EQ(Verify(leaf->certificate_pem, ca->certificate_pem, kNow + std::chrono::hours(24 * 366)),
            X509_V_ERR_CERT_HAS_EXPIRED);
  // A client certificate is not a serving certificate.
  EXPECT_EQ(Verify(leaf->certificate_pem, ca->certificate_pem, kNow, X509_PURPOSE_SSL_SERVER),
            X509_V_ERR_INVALID_PURPOSE);
}

TEST(PkiTest, FieldsRoundTripThroughParseCertificate) {
  auto ca = CreateCertificateAuthority("ca", kNow);
  ASSERT_TRUE(ca.ok());
  CertificateRequest req;
  req.common_name = "bob";
  req.organizations = {"team-a", "system:authenticated"};
  req.dns_names = {"localhost", "berth.example"};
  req.ip_addresses = {"127.0.0.1", "0:0:0:0:0:0:0:1"};
  req.server_auth = true;
  req.client_auth = true;
  req.validity = std::chrono::hours(48);
  auto leaf = IssueCertificate(*ca, req, kNow);
  ASSERT_TRUE(leaf.ok()) << leaf.status();
  auto info = ParseCertificate(leaf->certificate_pem);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->common_name, "bob");
  EXPECT_THAT(info->organizations, ElementsAre("team-a", "system:authenticated"));
  EXPECT_THAT(info->dns_names, ElementsAre("localhost", "berth.example"));
  EXPECT_THAT(info->ip_addresses, ElementsAre("127.0.0.1", "::1"));
  EXPECT_TRUE(info->server_auth);
  EXPECT_TRUE(info->client_auth);
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->not_before, kNow - std::chrono::minutes(5));
  EXPECT_EQ(info->not_after, kNow + std::chrono::hours(48));

  X509* x = Read(leaf->certificate_pem);
  unsigned char* der = nullptr;
  const int der_len = i2d_X509(x, &der);
  auto from_der = ParseCertificateDer(std::string_view(reinterpret_cast<char*>(der), der_len));
  OPENSSL_free(der);
  X509_free(x);
  ASSERT_TRUE(from_der.ok()) << from_der.status();
  EXPECT_EQ(from_der->common_name, "bob");
  EXPECT_THAT(from_der->organizations, ElementsAre("team-a", "system:authenticated"));
  EXPECT_EQ(ParseCertificateDer("\x30\x03junk").status().code(), Code::kInvalid);

  req.server_auth = false;
  auto client = IssueCertificate(*ca, req, kNow);
  ASSERT_TRUE(client.ok());
  auto client_info = ParseCertificate(client->certificate_pem);
  EXPECT_FALSE(client_info->server_auth);
  EXPECT_TRUE(client_info->client_auth);
}

TEST(PkiTest, SerialsAreRandom) {
  auto ca = CreateCertificateAuthority("ca", kNow);
  CertificateRequest req;
  req.common_name = "x";
  auto a = IssueCertificate(*ca, req, kNow);
  auto b = IssueCertificate(*ca, req, kNow);
  X509* xa = Read(a->certificate_pem);
  X509* xb = Read(b->certificate_pem);
  EXPECT_NE(ASN1_INTEGER_cmp(X509_get0_serialNumber(xa), X509_get0_serialNumber(xb)), 0);
  EXPECT_EQ(X509_get0_serialNumber(xa)->length, 16);
  X509_free(xa);
  X509_free(xb);
}

TEST(PkiTest, MalformedInputIsAnError) {
  EXPECT_EQ(ParseCertificate("").status().code(), Code::kInvalid);
  EXPECT_EQ(ParseCertificate("-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n").status().code(),
            Code::kInvalid);
  auto ca = CreateCertificateAuthority("ca", kNow);
  std::string truncated = ca->certificate_pem.substr(0, ca->certificate_pem.size() / 2);
  EXPECT_FALSE(ParseCertificate(truncated).ok());
  CertificateRequest req;
  req.common_name = "x";
  EXPECT_FALSE(IssueCertificate({"garbage", ca->private_key_pem}, req, kNow).ok());
  EXPECT_FALSE(IssueCertificate({ca->certificate_pem, "garbage"}, req, kNow).ok());
  auto other = CreateCertificateAuthority("other", kNow);
  auto mismatched = IssueCertificate({ca->certificate_pem, other->private_key_pem}, req, kNow);
  EXPECT_THAT(mismatched.status().message(), HasSubstr("does not match"));
  req.ip_addresses = {"not-an-ip"};
  auto bad_ip = IssueCertificate(*ca, req, kNow);
  EXPECT_EQ(bad_ip.status().code(), Code::kInvalid);
  EXPECT_THAT(bad_ip.status().message(), HasSubstr("not-an-ip"));
}

TEST(PkiTest, LoadOrCreateServerPkiIsIdempotent) {
  const std::string dir = TempDir() + "/pki";
  auto first = LoadOrCreateServerPki(dir, {"localhost"}, {"127.0.0.1"}, kNow);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->dir, dir);
  EXPECT_EQ(Slurp(dir + "/ca.crt"), first->ca.certificate_pem);
  EXPECT_EQ(Slurp(dir + "/ca.key"), first->ca.private_key_pem);
  EXPECT_EQ(Slurp(dir + "/apiserver.crt"), first->serving.certificate_pem);
  EXPECT_EQ(Slurp(dir + "/apiserver.key"), first->serving.private_key_pem);
  EXPECT_EQ(Mode(dir + "/ca.key"), 0600u);
  EXPECT_EQ(Mode(dir + "/apiserver.key"), 0600u);
  EXPECT_EQ(Mode(dir), 0700u);
  EXPECT_EQ(Verify(first->serving.certificate_pem, first->ca.certificate_pem, kNow, X509_PURPOSE_SSL_SERVER),
            X509_V_OK);
  auto info = ParseCertificate(first->serving.certificate_pem);
  EXPECT_EQ(info->common_name, kApiserverCommonName);
  EXPECT_THAT(info->dns_names, ElementsAre("localhost"));
  EXPECT_THAT(info->ip_addresses, ElementsAre("127.0.0.1"));

  auto second = LoadOrCreateServerPki(dir, {"localhost"}, {"127.0.0.1"}, kNow + std::chrono::hours(1));
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->ca.certificate_pem, first->ca.certificate_pem);
  EXPECT_EQ(second->ca.private_key_pem, first->ca.private_key_pem);
  EXPECT_EQ(second->serving.certificate_pem, first->serving.certificate_pem);
  EXPECT_EQ(second->serving.private_key_pem, first->serving.private_key_pem);
  // The ServiceAccount signing key (kubeadm's sa.key, sa.pub) is kept too.
  EXPECT_EQ(Slurp(dir + "/sa.key"), first->service_account.private_key_pem);
  EXPECT_EQ(Slurp(dir + "/sa.pub"), first->service_account.public_key_pem);
  EXPECT_EQ(Mode(dir + "/sa.key"), 0600u);
  EXPECT_THAT(first->service_account.public_key_pem, HasSubstr("BEGIN PUBLIC KEY"));
  EXPECT_EQ(second->service_account.private_key_pem, first->service_account.private_key_pem);
  EXPECT_EQ(second->service_account.public_key_pem, first->service_account.public_key_pem);
  // A subset of the names is covered too.
  auto subset = LoadOrCreateServerPki(dir, {}, {"127.0.0.1"}, kNow);
  EXPECT_EQ(subset->serving.certificate_pem, first->serving.certificate_pem);
}

TEST(PkiTest, LoadOrCreateServerPkiReissuesForNewNamesAndExpiry) {
  const std::string dir = TempDir();
  auto first = LoadOrCreateServerPki(dir, {"localhost"}, {"127.0.0.1"}, kNow);
  ASSERT_TRUE(first.ok()) << first.status();

  auto more = LoadOrCreateServerPki(dir, {"localhost"}, {"127.0.0.1", "10.0.0.5"}, kNow);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_EQ(more->ca.certificate_pem, first->ca.certificate_pem);
  EXPECT_NE(more->serving.certificate_pem, first->serving.certificate_pem);
  EXPECT_THAT(ParseCertificate(more->serving.certificate_pem)->ip_addresses, ElementsAre("127.0.0.1", "10.0.0.5"));
  EXPECT_EQ(Slurp(dir + "/apiserver.crt"), more->serving.certificate_pem);
  EXPECT_EQ(Verify(more->serving.certificate_pem, first->ca.certificate_pem, kNow), X509_V_OK);

  // 29 days before the serving certificate expires: re-issued; the CA stays.
  const TimePoint late = kNow + std::chrono::hours(24 * (365 - 29));
  auto renewed = LoadOrCreateServerPki(dir, {"localhost"}, {"127.0.0.1", "10.0.0.5"}, late);
  ASSERT_TRUE(renewed.ok());
  EXPECT_NE(renewed->serving.certificate_pem, more->serving.certificate_pem);
  EXPECT_EQ(renewed->ca.certificate_pem, first->ca.certificate_pem);
  EXPECT_EQ(ParseCertificate(renewed->serving.certificate_pem)->not_after, late + kCertificateValidity);
}

TEST(PkiTest, LoadOrCreateServerPkiNeverReplacesTheCa) {
  const std::string dir = TempDir();
  ASSERT_TRUE(LoadOrCreateServerPki(dir, {}, {"127.0.0.1"}, kNow).ok());
  const std::string ca = Slurp(dir + "/ca.crt");
  ASSERT_EQ(unlink((dir + "/ca.key").c_str()), 0);
  auto missing_key = LoadOrCreateServerPki(dir, {}, {"127.0.0.1"}, kNow);
  EXPECT_FALSE(missing_key.ok());
  EXPECT_THAT(missing_key.status().message(), HasSubstr(dir + "/ca.key"));
  EXPECT_EQ(Slurp(dir + "/ca.crt"), ca);

  ASSERT_TRUE(WriteFileAtomically(dir + "/ca.key", "not a key", 0600).ok());
  auto bad_key = LoadOrCreateServerPki(dir, {}, {"127.0.0.1"}, kNow);
  EXPECT_EQ(bad_key.status().code(), Code::kInvalid);
  EXPECT_THAT(bad_key.status().message(), HasSubstr(dir + "/ca.key"));

  ASSERT_TRUE(WriteFileAtomically(dir + "/ca.crt", "-----BEGIN CERTIFICATE-----\nAAAA\n", 0644).ok());
  auto bad_cert = LoadOrCreateServerPki(dir, {}, {"127.0.0.1"}, kNow);
  EXPECT_EQ(bad_cert.status().code(), Code::kInvalid);
  EXPECT_THAT(bad_cert.status().message(), HasSubstr(dir + "/ca.crt"));
}

TEST(PkiTest, LoadOrCreateServerPkiReplacesAGarbledServingCertificate) {
  const std::string dir = TempDir();
  auto first = LoadOrCreateServerPki(dir, {}, {"127.0.0.1"}, kNow);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/apiserver.crt", "garbage", 0644).ok());
  auto again = LoadOrCreateServerPki(dir, {}, {"127.0.0.1"}, kNow);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(Verify(again->serving.certificate_pem, first->ca.certificate_pem, kNow), X509_V_OK);
  // A serving certificate from another CA is replaced by one from this CA.
  auto foreign_ca = CreateCertificateAuthority("foreign", kNow);
  CertificateRequest req;
  req.common_name = "x";
  req.ip_addresses = {"127.0.0.1"};
  auto foreign = IssueCertificate(*foreign_ca, req, kNow);
  ASSERT_TRUE(WriteFileAtomically(dir + "/apiserver.crt", foreign->certificate_pem, 0644).ok());
  ASSERT_TRUE(WriteFileAtomically(dir + "/apiserver.key", foreign->private_key_pem, 0600).ok());
  auto third = LoadOrCreateServerPki(dir, {}, {"127.0.0.1"}, kNow);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(Verify(third->serving.certificate_pem, first->ca.certificate_pem, kNow), X509_V_OK);
}

// A node agent's PKI: its own CA and a serving certificate for the node name and
// its address, kept across starts; re-issued (the CA kept) when the address changes.
TEST(PkiTest, LoadOrCreateKubeletServingPkiKeepsItsCaAndFollowsTheAddress) {
  const std::string dir = TempDir() + "/pki";
  auto first = LoadOrCreateKubeletServingPki(dir, "worker-1", {"10.0.0.7"}, kNow);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(Slurp(dir + "/kubelet-ca.crt"), first->ca.certificate_pem);
  EXPECT_EQ(Slurp(dir + "/kubelet-ca.key"), first->ca.private_key_pem);
  EXPECT_EQ(Slurp(dir + "/kubelet.crt"), first->serving.certificate_pem);
  EXPECT_EQ(Slurp(dir + "/kubelet.key"), first->serving.private_key_pem);
  EXPECT_EQ(Mode(dir + "/kubelet-ca.key"), 0600u);
  EXPECT_EQ(Mode(dir + "/kubelet.key"), 0600u);
  EXPECT_EQ(Mode(dir + "/kubelet.crt"), 0644u);
  EXPECT_FALSE(std::filesystem::exists(dir + "/ca.crt"));  // never the cluster CA's file names
  auto ca = ParseCertificate(first->ca.certificate_pem);
  EXPECT_EQ(ca->common_name, "worker-1-ca");
  EXPECT_TRUE(ca->is_ca);
  auto serving = ParseCertificate(first->serving.certificate_pem);
  EXPECT_EQ(serving->common_name, "system:node:worker-1");
  EXPECT_THAT(serving->dns_names, ElementsAre("worker-1"));
  EXPECT_THAT(serving->ip_addresses, ElementsAre("10.0.0.7"));
  EXPECT_TRUE(serving->server_auth);
  EXPECT_EQ(Verify(first->serving.certificate_pem, first->ca.certificate_pem, kNow, X509_PURPOSE_SSL_SERVER),
            X509_V_OK);

  auto again = LoadOrCreateKubeletServingPki(dir, "worker-1", {"10.0.0.7"}, kNow + std::chrono::hours(1));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->ca.certificate_pem, first->ca.certificate_pem);
  EXPECT_EQ(again->ca.private_key_pem, first->ca.private_key_pem);
  EXPECT_EQ(again->serving.certificate_pem, first->serving.certificate_pem);
  EXPECT_EQ(again->serving.private_key_pem, first->serving.private_key_pem);

  auto moved = LoadOrCreateKubeletServingPki(dir, "worker-1", {"10.0.0.8"}, kNow);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->ca.certificate_pem, first->ca.certificate_pem);
  EXPECT_NE(moved->serving.certificate_pem, first->serving.certificate_pem);
  EXPECT_THAT(ParseCertificate(moved->serving.certificate_pem)->ip_addresses, ElementsAre("10.0.0.8"));
  EXPECT_EQ(Slurp(dir + "/kubelet.crt"), moved->serving.certificate_pem);
  EXPECT_EQ(Verify(moved->serving.certificate_pem, first->ca.certificate_pem, kNow), X509_V_OK);
}

}  // namespace
}  // namespace berth::pki
