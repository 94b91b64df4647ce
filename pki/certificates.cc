#include "pki/certificates.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <optional>
#include <sys/stat.h>

#include "core/file.h"

namespace berth::pki {

namespace {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using Pkey = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using Bignum = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using Extension = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using GeneralNames = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;

// Certificates and keys berth reads are small; a PKI file larger than this is
// not one of them.
constexpr size_t kMaxPemBytes = 1 << 20;

// OpenSSL's reason for the last failure (its error queue emptied).
std::string SslReason() {
  unsigned long last = 0;
  while (unsigned long e = ERR_get_error()) last = e;
  if (last == 0) return "unknown error";
  const char* reason = ERR_reason_error_string(last);
  return reason ? reason : "error " + std::to_string(last);
}

Bio MemBio(std::string_view text) { return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))); }

StatusOr<Cert> ReadCert(std::string_view pem) {
  Bio bio = MemBio(pem);
  Cert cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return InvalidError("pki: no certificate in PEM input: " + SslReason());
  return cert;
}

StatusOr<Pkey> ReadKey(std::string_view pem) {
  Bio bio = MemBio(pem);
  Pkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return InvalidError("pki: no private key in PEM input: " + SslReason());
  return key;
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

StatusOr<CertificateAndKey> ToPem(X509* cert, EVP_PKEY* key) {
  Bio c(BIO_new(BIO_s_mem())), k(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(c.get(), cert) != 1 ||
      PEM_write_bio_PrivateKey(k.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return InternalError("pki: encoding PEM: " + SslReason());
  }
  return CertificateAndKey{BioText(c.get()), BioText(k.get())};
}

StatusOr<Pkey> NewKey() {
  Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return InternalError("pki: generating an ECDSA P-256 key: " + SslReason());
  return key;
}

// "127.0.0.1" / "::1" in canonical text, or "" when `ip` is not an address.
std::string CanonicalIp(const std::string& ip) {
  unsigned char buf[16];
  char out[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET, ip.c_str(), buf) == 1) return inet_ntop(AF_INET, buf, out, sizeof out) ? out : "";
  if (inet_pton(AF_INET6, ip.c_str(), buf) == 1) return inet_ntop(AF_INET6, buf, out, sizeof out) ? out : "";
  return "";
}

TimePoint FromAsn1(const ASN1_TIME* t) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(t, &tm) != 1) return TimePoint{};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

Status SetValidity(X509* cert, TimePoint now, std::chrono::hours validity) {
  const time_t from = std::chrono::system_clock::to_time_t(now - kCertificateBackdate);
  const time_t to = std::chrono::system_clock::to_time_t(now + validity);
  if (!ASN1_TIME_set(X509_getm_notBefore(cert), from) || !ASN1_TIME_set(X509_getm_notAfter(cert), to)) {
    return InternalError("pki: setting the validity: " + SslReason());
  }
  return Status::Ok();
}

// A random positive 128-bit serial number (RFC 5280 4.1.2.2 allows at most
// 20 octets; kubeadm's NewSignedCert draws 63 random bits).
Status SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return InternalError("pki: random serial: " + SslReason());
  bytes[0] &= 0x7f;
  bytes[0] |= 0x40;  // never zero, always 16 octets
  Bignum bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert))) {
    return InternalError("pki: setting the serial: " + SslReason());
  }
  return Status::Ok();
}

Status SetSubject(X509* cert, const std::string& common_name, const std::vector<std::string>& organizations) {
  X509_NAME* name = X509_get_subject_name(cert);
  for (const auto& o : organizations) {
    if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(o.data()),
                                    static_cast<int>(o.size()), -1, 0)) {
      return InvalidError("pki: organization \"" + o + "\": " + SslReason());
    }
  }
  if (!common_name.empty() &&
      !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(common_name.data()),
                                  static_cast<int>(common_name.size()), -1, 0)) {
    return InvalidError("pki: common name \"" + common_name + "\": " + SslReason());
  }
  return Status::Ok();
}

// Adds the extension `nid` with OpenSSL's configuration syntax ("critical,CA:TRUE").
Status AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Extension ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return InternalError(std::string("pki: extension ") + OBJ_nid2sn(nid) + ": " + SslReason());
  }
  return Status::Ok();
}

Status AddSubjectAltNames(X509* cert, const CertificateRequest& request) {
  if (request.dns_names.empty() && request.ip_addresses.empty()) return Status::Ok();
  GeneralNames names(sk_GENERAL_NAME_new_null());
  for (const auto& dns : request.dns_names) {
    GENERAL_NAME* gen = GENERAL_NAME_new();
    ASN1_IA5STRING* ia5 = ASN1_IA5STRING_new();
    ASN1_STRING_set(ia5, dns.data(), static_cast<int>(dns.size()));
    GENERAL_NAME_set0_value(gen, GEN_DNS, ia5);
    sk_GENERAL_NAME_push(names.get(), gen);
  }
  for (const auto& ip : request.ip_addresses) {
    ASN1_OCTET_STRING* octets = a2i_IPADDRESS(ip.c_str());
    if (!octets) {
      ERR_clear_error();
      return InvalidError("pki: \"" + ip + "\" is not an IP address");
    }
    GENERAL_NAME* gen = GENERAL_NAME_new();
    GENERAL_NAME_set0_value(gen, GEN_IPADD, octets);
    sk_GENERAL_NAME_push(names.get(), gen);
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return InternalError("pki: subjectAltName: " + SslReason());
  }
  return Status::Ok();
}

std::string NameEntry(const X509_NAME_ENTRY* entry) {
  unsigned char* utf8 = nullptr;
  int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
  if (n < 0) return "";
  std::string out(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

CertificateInfo Describe(X509* cert) {
  CertificateInfo info;
  const X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = 0; i < X509_NAME_entry_count(subject); ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    const int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid == NID_commonName) info.common_name = NameEntry(entry);
    if (nid == NID_organizationName) info.organizations.push_back(NameEntry(entry));
  }
  GeneralNames names(static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* gen = sk_GENERAL_NAME_value(names.get(), i);
    if (gen->type == GEN_DNS) {
      const ASN1_STRING* s = gen->d.dNSName;
      info.dns_names.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), ASN1_STRING_length(s));
    } else if (gen->type == GEN_IPADD) {
      const ASN1_STRING* s = gen->d.iPAddress;
      char out[INET6_ADDRSTRLEN];
      const int len = ASN1_STRING_length(s);
      const int family = len == 4 ? AF_INET : len == 16 ? AF_INET6 : 0;
      if (family && inet_ntop(family, ASN1_STRING_get0_data(s), out, sizeof out)) info.ip_addresses.push_back(out);
    }
  }
  const uint32_t flags = X509_get_extension_flags(cert);
  info.is_ca = (flags & EXFLAG_CA) != 0;
  if (flags & EXFLAG_XKUSAGE) {
    const uint32_t xku = X509_get_extended_key_usage(cert);
    info.server_auth = (xku & XKU_SSL_SERVER) != 0;
    info.client_auth = (xku & XKU_SSL_CLIENT) != 0;
  }
  info.not_before = FromAsn1(X509_get0_notBefore(cert));
  info.not_after = FromAsn1(X509_get0_notAfter(cert));
  ERR_clear_error();
  return info;
}

// Reads DIR/name: its contents, or nullopt when it does not exist.
StatusOr<std::optional<std::string>> ReadOptional(const std::string& path) {
  StatusOr<std::string> text = ReadFileBounded(path, kMaxPemBytes);
  if (text.ok()) return std::optional<std::string>(std::move(*text));
  if (text.status().code() == Code::kNotFound) return std::optional<std::string>();
  return text.status();
}

// Whether `serving` is usable: issued by `ca`, matching its key, covering
// every requested name and valid for more than kServingRenewBefore.
bool ServingUsable(const CertificateAndKey& serving, X509* ca, const std::vector<std::string>& dns_names,
                   const std::vector<std::string>& ips, TimePoint now) {
  StatusOr<Cert> cert = ReadCert(serving.certificate_pem);
  StatusOr<Pkey> key = ReadKey(serving.private_key_pem);
  if (!cert.ok() || !key.ok()) return false;
  EVP_PKEY* ca_key = X509_get0_pubkey(ca);
  const bool ok = ca_key && X509_verify(cert->get(), ca_key) == 1 && X509_check_private_key(cert->get(), key->get());
  ERR_clear_error();
  if (!ok) return false;
  CertificateInfo info = Describe(cert->get());
  for (const auto& d : dns_names) {
    if (std::find(info.dns_names.begin(), info.dns_names.end(), d) == info.dns_names.end()) return false;
  }
  for (const auto& ip : ips) {
    if (std::find(info.ip_addresses.begin(), info.ip_addresses.end(), CanonicalIp(ip)) == info.ip_addresses.end())
      return false;
  }
  return info.not_before <= now && info.not_after - now > kServingRenewBefore;
}

Status WritePair(const std::string& cert_path, const std::string& key_path, const CertificateAndKey& pair) {
  // The key first: a crash between the two leaves a key without its
  // certificate, which the next start replaces.
  Status s = WriteFileAtomically(key_path, pair.private_key_pem, 0600);
  if (!s.ok()) return s;
  return WriteFileAtomically(cert_path, pair.certificate_pem, 0644);
}

}  // namespace

StatusOr<std::string> PublicKeyPem(std::string_view private_key_pem) {
  BERTH_ASSIGN_OR_RETURN(Pkey key, ReadKey(private_key_pem));
  Bio out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PUBKEY(out.get(), key.get()) != 1) return InternalError("pki: encoding PEM: " + SslReason());
  return BioText(out.get());
}

StatusOr<SigningKey> CreateSigningKey() {
  BERTH_ASSIGN_OR_RETURN(Pkey key, NewKey());
  Bio k(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(k.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return InternalError("pki: encoding PEM: " + SslReason());
  }
  SigningKey out;
  out.private_key_pem = BioText(k.get());
  BERTH_ASSIGN_OR_RETURN(out.public_key_pem, PublicKeyPem(out.private_key_pem));
  return out;
}

StatusOr<CertificateAndKey> CreateCertificateAuthority(std::string_view common_name, TimePoint now,
                                                       std::chrono::hours validity) {
  BERTH_ASSIGN_OR_RETURN(Pkey key, NewKey());
  Cert cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1 || X509_set_pubkey(cert.get(), key.get()) != 1) {
    return InternalError("pki: creating a certificate: " + SslReason());
  }
  BERTH_RETURN_IF_ERROR(SetRandomSerial(cert.get()));
  BERTH_RETURN_IF_ERROR(SetSubject(cert.get(), std::string(common_name), {}));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  BERTH_RETURN_IF_ERROR(SetValidity(cert.get(), now, validity));
  BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE"));
  BERTH_RETURN_IF_ERROR(
      AddExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"));
  BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return InternalError("pki: signing: " + SslReason());
  return ToPem(cert.get(), key.get());
}

StatusOr<CertificateAndKey> IssueCertificate(const CertificateAndKey& ca, const CertificateRequest& request,
                                             TimePoint now) {
  BERTH_ASSIGN_OR_RETURN(Cert ca_cert, ReadCert(ca.certificate_pem));
  BERTH_ASSIGN_OR_RETURN(Pkey ca_key, ReadKey(ca.private_key_pem));
  if (X509_check_private_key(ca_cert.get(), ca_key.get()) != 1) {
    return InvalidError("pki: the CA's private key does not match its certificate: " + SslReason());
  }
  BERTH_ASSIGN_OR_RETURN(Pkey key, NewKey());
  Cert cert(X509_new());
  if (!cert || X509_set_version(cert.get(), 2) != 1 || X509_set_pubkey(cert.get(), key.get()) != 1) {
    return InternalError("pki: creating a certificate: " + SslReason());
  }
  BERTH_RETURN_IF_ERROR(SetRandomSerial(cert.get()));
  BERTH_RETURN_IF_ERROR(SetSubject(cert.get(), request.common_name, request.organizations));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  BERTH_RETURN_IF_ERROR(SetValidity(cert.get(), now, request.validity));
  BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE"));
  BERTH_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment"));
  std::string eku;
  if (request.server_auth) eku = "serverAuth";
  if (request.client_auth) eku += eku.empty() ? "clientAuth" : ",clientAuth";
  if (!eku.empty()) BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), ca_cert.get(), NID_ext_key_usage, eku.c_str()));
  BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always"));
  BERTH_RETURN_IF_ERROR(AddSubjectAltNames(cert.get(), request));
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) return InternalError("pki: signing: " + SslReason());
  return ToPem(cert.get(), key.get());
}

StatusOr<CertificateInfo> ParseCertificate(std::string_view pem) {
  BERTH_ASSIGN_OR_RETURN(Cert cert, ReadCert(pem));
  return Describe(cert.get());
}

std::string VerifyErrorText(long error) {
  switch (error) {
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "x509: certificate signed by unknown authority";
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "x509: certificate has expired or is not yet valid";
    case X509_V_ERR_INVALID_PURPOSE:
      return "x509: certificate specifies an incompatible key usage";
    default:
      return std::string("x509: ") + X509_verify_cert_error_string(error);
  }
}

StatusOr<CertificateInfo> ParseCertificateDer(std::string_view der) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  Cert cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  if (!cert) return InvalidError("pki: not a DER certificate: " + SslReason());
  return Describe(cert.get());
}

StatusOr<ServingPki> LoadOrCreateServingPki(const std::string& dir, const ServingPkiFiles& files,
                                            std::vector<std::string> dns_names, std::vector<std::string> ip_addresses,
                                            TimePoint now) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return InternalError("mkdir " + dir + ": " + std::strerror(errno));
  }
  ServingPki pki;
  const std::string ca_crt = dir + "/" + files.ca_stem + ".crt", ca_key = dir + "/" + files.ca_stem + ".key";
  const std::string srv_crt = dir + "/" + files.serving_stem + ".crt";
  const std::string srv_key = dir + "/" + files.serving_stem + ".key";

  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> ca_cert_text, ReadOptional(ca_crt));
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> ca_key_text, ReadOptional(ca_key));
  if (!ca_cert_text) {
    // No CA certificate: nobody can trust a CA yet, so a key left alone by an
    // interrupted first start is replaced.
    BERTH_ASSIGN_OR_RETURN(pki.ca, CreateCertificateAuthority(files.ca_common_name, now));
    Status s = WritePair(ca_crt, ca_key, pki.ca);
    if (!s.ok()) return s;
  } else {
    if (!ca_key_text) {
      return NotFoundError(ca_key + ": the CA key is missing next to " + ca_crt +
                           " (berth never replaces an existing CA)");
    }
    pki.ca = {std::move(*ca_cert_text), std::move(*ca_key_text)};
    StatusOr<Cert> cert = ReadCert(pki.ca.certificate_pem);
    if (!cert.ok()) return cert.status().WithContext(ca_crt);
    StatusOr<Pkey> key = ReadKey(pki.ca.private_key_pem);
    if (!key.ok()) return key.status().WithContext(ca_key);
    if (X509_check_private_key(cert->get(), key->get()) != 1) {
      return InvalidError(ca_key + ": does not match the certificate in " + ca_crt + ": " + SslReason());
    }
  }

  BERTH_ASSIGN_OR_RETURN(Cert ca_cert, ReadCert(pki.ca.certificate_pem));
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> srv_cert_text, ReadOptional(srv_crt));
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> srv_key_text, ReadOptional(srv_key));
  if (srv_cert_text && srv_key_text) pki.serving = {std::move(*srv_cert_text), std::move(*srv_key_text)};
  if (!ServingUsable(pki.serving, ca_cert.get(), dns_names, ip_addresses, now)) {
    CertificateRequest request;
    request.common_name = files.serving_common_name;
    request.dns_names = std::move(dns_names);
    request.ip_addresses = std::move(ip_addresses);
    request.server_auth = true;
    BERTH_ASSIGN_OR_RETURN(pki.serving, IssueCertificate(pki.ca, request, now));
    Status s = WritePair(srv_crt, srv_key, pki.serving);
    if (!s.ok()) return s;
  }
  return pki;
}

StatusOr<ServerPki> LoadOrCreateServerPki(const std::string& dir, std::vector<std::string> dns_names,
                                          std::vector<std::string> ip_addresses, TimePoint now) {
  BERTH_ASSIGN_OR_RETURN(ServingPki serving,
                         LoadOrCreateServingPki(dir, {"ca", kCaCommonName, "apiserver", kApiserverCommonName},
                                                std::move(dns_names), std::move(ip_addresses), now));
  ServerPki pki;
  pki.dir = dir;
  pki.ca = std::move(serving.ca);
  pki.serving = std::move(serving.serving);
  const std::string sa_key = dir + "/sa.key", sa_pub = dir + "/sa.pub";
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> sa_key_text, ReadOptional(sa_key));
  if (!sa_key_text) {
    BERTH_ASSIGN_OR_RETURN(pki.service_account, CreateSigningKey());
    BERTH_RETURN_IF_ERROR(WriteFileAtomically(sa_key, pki.service_account.private_key_pem, 0600));
  } else {
    pki.service_account.private_key_pem = std::move(*sa_key_text);
    StatusOr<std::string> pub = PublicKeyPem(pki.service_account.private_key_pem);
    if (!pub.ok()) return pub.status().WithContext(sa_key);
    pki.service_account.public_key_pem = std::move(*pub);
  }
  BERTH_RETURN_IF_ERROR(WriteFileAtomically(sa_pub, pki.service_account.public_key_pem, 0644));
  return pki;
}

StatusOr<ServingPki> LoadOrCreateKubeletServingPki(const std::string& dir, const std::string& node_name,
                                                   std::vector<std::string> ip_addresses, TimePoint now) {
  return LoadOrCreateServingPki(dir, {"kubelet-ca", node_name + "-ca", "kubelet", "system:node:" + node_name},
                                {node_name}, std::move(ip_addresses), now);
}

}  // namespace berth::pki
