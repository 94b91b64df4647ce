// Certificates for berth's TLS: a certificate authority, the certificates it
// issues (the API server's serving certificate, users' and nodes' client
// certificates), the server's PKI directory, as kubeadm lays it out, and a
// node agent's streaming server PKI.
//
// Keys are ECDSA P-256 (kubeadm's EncryptionAlgorithmECDSAP256; client-go's
// keyutil.MakeEllipticPrivateKeyPEM writes the same curve). Certificates and
// keys are PEM text: "CERTIFICATE" blocks and PKCS#8 "PRIVATE KEY" blocks,
// which kubectl, client-go and Python's ssl module read.
//
// Times: every function takes `now` from its caller (the injected clock,
// core/clock.h); nothing here reads the system clock.
//
// Upstream: cmd/kubeadm/app/util/pkiutil/pki_helpers.go (NewCertificateAuthority,
// NewCertAndKey, NewSignedCert) and cmd/kubeadm/app/constants/constants.go for
// the validities; staging/src/k8s.io/client-go/util/cert/cert.go for the CA's
// shape.
//
// Errors: kInvalid for input that is not a certificate or key ("pki: no
// certificate in PEM input", with OpenSSL's reason), kInternal when OpenSSL
// fails to build one, and from the LoadOrCreate* functions the file errors
// of core/file.h, each naming the file.
//
// Thread-safety: plain functions; OpenSSL 3 is thread-safe for them.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace berth::pki {

using TimePoint = std::chrono::system_clock::time_point;

// A CA certificate is valid for ten years. Upstream: kubeadm's
// CACertificateValidityPeriod (time.Hour * 24 * 365 * 10,
// cmd/kubeadm/app/constants/constants.go).
inline constexpr std::chrono::hours kCaValidity{24 * 365 * 10};
// A leaf certificate (serving, client) is valid for one year. Upstream:
// kubeadm's CertificateValidityPeriod (time.Hour * 24 * 365).
inline constexpr std::chrono::hours kCertificateValidity{24 * 365};
// Certificates start this long before `now`, so a peer whose clock runs
// behind accepts a fresh one. Upstream: kubeadm's CertificateBackdate (5 min).
inline constexpr std::chrono::minutes kCertificateBackdate{5};
// LoadOrCreateServerPki re-issues the serving certificate when it expires
// within this long. Upstream: kubeadm's `certs check-expiration` warns and
// `certs renew` is advised 30 days ahead (the kubelet's certificate manager
// rotates at 70-90 % of the lifetime, about 36-110 days for one year).
inline constexpr std::chrono::hours kServingRenewBefore{24 * 30};

struct CertificateAndKey {
  std::string certificate_pem;
  std::string private_key_pem;
};

// A self-signed CA: subject CN = common_name, basicConstraints CA:TRUE
// (critical), keyUsage keyCertSign, cRLSign, digitalSignature (critical), a
// subjectKeyIdentifier; valid from now - kCertificateBackdate to now + validity.
StatusOr<CertificateAndKey> CreateCertificateAuthority(std::string_view common_name, TimePoint now,
                                                       std::chrono::hours validity = kCaValidity);

struct CertificateRequest {
  std::string common_name;                 // user name, or the server's name
  std::vector<std::string> organizations;  // subject O: a client's groups
  std::vector<std::string> dns_names;      // subjectAltName DNS entries
  std::vector<std::string> ip_addresses;   // subjectAltName IP entries ("127.0.0.1", "::1")
  bool server_auth = false;                // extendedKeyUsage serverAuth
  bool client_auth = false;                // extendedKeyUsage clientAuth
  std::chrono::hours validity = kCertificateValidity;
};

// A leaf certificate signed by `ca`: a random 128-bit serial, keyUsage
// digitalSignature + keyEncipherment (critical), basicConstraints CA:FALSE,
// authorityKeyIdentifier, the SANs and extended key usages requested; valid
// from now - kCertificateBackdate to now + request.validity. Errors: kInvalid
// for a bad CA certificate or key, or an IP address that does not parse.
StatusOr<CertificateAndKey> IssueCertificate(const CertificateAndKey& ca, const CertificateRequest& request,
                                             TimePoint now);

struct CertificateInfo {
  std::string common_name;
  std::vector<std::string> organizations;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;  // canonical text ("127.0.0.1", "::1")
  bool is_ca = false;
  bool server_auth = false;
  bool client_auth = false;
  TimePoint not_before;
  TimePoint not_after;
};

// The first certificate of `pem`. Errors: kInvalid when there is none.
StatusOr<CertificateInfo> ParseCertificate(std::string_view pem);
// One DER-encoded certificate (what a TLS handshake carries). Errors: kInvalid.
StatusOr<CertificateInfo> ParseCertificateDer(std::string_view der);

// Go's crypto/x509 wording for an OpenSSL verification result (an X509_V_ERR_*
// code, <openssl/x509_vfy.h>), as kube-apiserver's x509 authenticator and
// client-go print it: "x509: certificate signed by unknown authority",
// "x509: certificate has expired or is not yet valid", "x509: certificate
// specifies an incompatible key usage"; any other code as "x509: " and
// OpenSSL's text.
std::string VerifyErrorText(long openssl_verify_error);

// A service-account signing key: an ECDSA P-256 key (tokens are ES256; kubeadm's sa.key
// is RSA 2048 and its tokens RS256, which kube-apiserver also accepts) as a PKCS#8
// "PRIVATE KEY" PEM, and its public half as a "PUBLIC KEY" PEM.
struct SigningKey {
  std::string private_key_pem;
  std::string public_key_pem;
};

// A new signing key. Errors: kInternal.
StatusOr<SigningKey> CreateSigningKey();
// The public half of a private key PEM. Errors: kInvalid.
StatusOr<std::string> PublicKeyPem(std::string_view private_key_pem);

// A PKI directory's CA and the serving certificate it signs, kept across
// starts (kubeadm's /etc/kubernetes/pki; the kubelet's self-signed serving
// pair in /var/lib/kubelet/pki, which client-go's
// cert.GenerateSelfSignedCertKey also makes as a CA and a certificate it signs).
struct ServingPkiFiles {
  std::string ca_stem;                // DIR/<ca_stem>.crt and .key
  std::string ca_common_name;         // subject CN of a CA created here
  std::string serving_stem;           // DIR/<serving_stem>.crt and .key
  std::string serving_common_name;    // subject CN of a serving certificate issued here
};
struct ServingPki {
  CertificateAndKey ca;
  CertificateAndKey serving;
};

// Loads the CA and serving certificate `files` names in `dir`, creating what
// is missing: a CA when its .crt and .key are both absent (one without the
// other is an error: an existing CA is never replaced), a serving certificate
// (server_auth) for `dns_names` and `ip_addresses` when its files are absent,
// were not issued by the CA, do not cover every requested name, or expire
// within kServingRenewBefore of `now`. A second call with the same names
// returns the same bytes. Keys are written with mode 0600, certificates 0644,
// each atomically (core/file.h); DIR is created (0700) when missing. Errors
// name the file.
StatusOr<ServingPki> LoadOrCreateServingPki(const std::string& dir, const ServingPkiFiles& files,
                                            std::vector<std::string> dns_names, std::vector<std::string> ip_addresses,
                                            TimePoint now);

// The API server's PKI directory (kubeadm's /etc/kubernetes/pki layout):
//   DIR/ca.crt, DIR/ca.key               the cluster CA ("berth-ca")
//   DIR/apiserver.crt, DIR/apiserver.key the serving certificate (CN "berth-apiserver")
//   DIR/sa.key, DIR/sa.pub               the ServiceAccount token signing key (kubeadm's
//                                        names), created when sa.key is absent; sa.pub is
//                                        rewritten from sa.key
// Keys are written with mode 0600, certificates 0644, each atomically
// (core/file.h); DIR is created (0700) when missing.
struct ServerPki {
  CertificateAndKey ca;
  CertificateAndKey serving;
  SigningKey service_account;
  std::string dir;
};

inline constexpr char kCaCommonName[] = "berth-ca";
inline constexpr char kApiserverCommonName[] = "berth-apiserver";
// The user name (client certificate CN) of the API server when it calls a
// node's streaming server (apiserver/node_streaming_server.h): kubeadm's
// apiserver-kubelet-client certificate, CN "kube-apiserver-kubelet-client"
// (cmd/kubeadm/app/constants/constants.go APIServerKubeletClientCertCommonName),
// which kube-apiserver presents with --kubelet-client-certificate. A node's
// streaming server serves this CN only, signed by the cluster CA.
inline constexpr char kKubeletClientCommonName[] = "kube-apiserver-kubelet-client";
// The annotation on a Node carrying the PEM of the CA that signed that node's
// streaming server certificate; the API server trusts that CA, for that node
// only, when it dials the node (the certificate's DNS name is the node name).
// Only the node itself (the node authorizer, apiserver/node_authorization.h)
// or an admin may write its Node, which makes the annotation a sound trust anchor.
// Upstream: the kubelet's serving certificate is signed by the cluster CA
// (serverTLSBootstrap) or self-signed and then not verified by kube-apiserver
// (--kubelet-certificate-authority unset); berth pins each node's own CA.
inline constexpr char kKubeletServingCaAnnotation[] = "berth.dev/kubelet-serving-ca";

// The API server's PKI in `dir`: LoadOrCreateServingPki with ca.crt/ca.key
// (kCaCommonName) and apiserver.crt/apiserver.key (kApiserverCommonName), and
// the service-account signing key sa.key/sa.pub (created when sa.key is absent).
StatusOr<ServerPki> LoadOrCreateServerPki(const std::string& dir, std::vector<std::string> dns_names,
                                          std::vector<std::string> ip_addresses, TimePoint now);

// A node agent's streaming server PKI in `dir` (<data dir>/pki):
// kubelet-ca.crt/.key, a CA of the node's own (CN "<node>-ca"), and
// kubelet.crt/.key, the serving certificate it signs (CN "system:node:<node>",
// as the kubelet's serving certificate; SANs DNS = `node_name` and IP =
// `ip_addresses`). LoadOrCreateServingPki's rules and errors.
StatusOr<ServingPki> LoadOrCreateKubeletServingPki(const std::string& dir, const std::string& node_name,
                                                   std::vector<std::string> ip_addresses, TimePoint now);

}  // namespace berth::pki
