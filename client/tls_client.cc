#include "client/tls_client.h"

#include <boost/asio/ip/address.hpp>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "pki/certificates.h"

namespace berth::client {

namespace asio = boost::asio;
namespace ssl = asio::ssl;

Status SetUpTlsClientContext(ssl::context& ctx, const RestConfig& config) {
  SSL_CTX* native = ctx.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  boost::system::error_code ec;
  if (!config.certificate_authority_pem.empty()) {
    X509_STORE* store = SSL_CTX_get_cert_store(native);
    BIO* bio = BIO_new_mem_buf(config.certificate_authority_pem.data(),
                               static_cast<int>(config.certificate_authority_pem.size()));
    int count = 0;
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store, cert);
      X509_free(cert);
      ++count;
    }
    BIO_free(bio);
    ERR_clear_error();
    if (count == 0) {
      return BadRequestError("unable to load root certificates: unable to parse bytes as PEM block (server " +
                             config.server + ")");
    }
  } else {
    ctx.set_default_verify_paths(ec);
  }
  if (!config.client_certificate_pem.empty()) {
    ctx.use_certificate_chain(asio::buffer(config.client_certificate_pem), ec);
    if (!ec) ctx.use_private_key(asio::buffer(config.client_key_pem), ssl::context::pem, ec);
    if (ec || SSL_CTX_check_private_key(native) != 1) {
      ERR_clear_error();
      return BadRequestError("tls: failed to load the client certificate and key of user \"" + config.user +
                             "\": " + (ec ? ec.message() : std::string("private key does not match public key")));
    }
  }
  ctx.set_verify_mode(config.insecure_skip_tls_verify ? ssl::verify_none : ssl::verify_peer);
  return Status::Ok();
}

void SetTlsServerName(SSL* ssl, const std::string& name, bool verify) {
  boost::system::error_code ec;
  const bool is_ip = (asio::ip::make_address(name, ec), !ec);
  if (!is_ip) SSL_set_tlsext_host_name(ssl, name.c_str());
  if (!verify) return;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (is_ip) {
    X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
  } else {
    X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  }
}

std::string TlsVerifyErrorText(long openssl_verify_error, const std::string& name) {
  if (openssl_verify_error == X509_V_ERR_HOSTNAME_MISMATCH || openssl_verify_error == X509_V_ERR_IP_ADDRESS_MISMATCH) {
    return "x509: certificate is not valid for " + name;
  }
  return pki::VerifyErrorText(openssl_verify_error);
}

}  // namespace berth::client
