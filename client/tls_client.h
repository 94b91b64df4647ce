// The TLS client side of berth's connections to HTTPS servers, as client-go's
// transport sets it up (k8s.io/client-go/transport/transport.go TLSConfigFor,
// Go's crypto/tls client defaults): TLS 1.2 at least; the server verified
// against a CA bundle (the system's roots when none is given) unless told not
// to; the server name sent as SNI (not for an IP address, as Go omits it) and
// checked against the certificate's subjectAltNames; a client certificate
// presented when there is one.
//
// Used by the HTTP transport (client/http_client.h) and by the API server's
// connections to node agents (apiserver/node_proxy.h). This header includes
// Boost.Asio's ssl: include it from .cc files only.
//
// Thread-safety: the functions are reentrant; an ssl::context is set up once
// and then shared read-only by the connections made from it.
#pragma once

#include <string>

// Boost 1.74's Asio needs <utility> before its headers with GCC 12.
#include <utility>

#include <boost/asio/ssl/context.hpp>

#include "client/kubeconfig.h"
#include "core/status.h"

namespace berth::client {

// Sets up `ctx` (a fresh ssl::context::tls_client) for the server and client
// identity in `config`: certificate_authority_pem (or the system's roots),
// client_certificate_pem/client_key_pem, insecure_skip_tls_verify.
// Errors (kBadRequest, client-go's wording): "unable to load root
// certificates: unable to parse bytes as PEM block (server URL)"; "tls: failed
// to load the client certificate and key of user "u": ...".
Status SetUpTlsClientContext(boost::asio::ssl::context& ctx, const RestConfig& config);

// Before the handshake of `ssl`: SNI with `name` unless it is an IP address,
// and (when `verify`) the name or IP to check the certificate's
// subjectAltNames against (no partial wildcards).
void SetTlsServerName(SSL* ssl, const std::string& name, bool verify);

// Go's crypto/x509 wording for a failed verification (net/http reports it as
// "tls: failed to verify certificate: x509: ..."), e.g. "x509: certificate is
// not valid for node-1", "x509: certificate signed by unknown authority".
std::string TlsVerifyErrorText(long openssl_verify_error, const std::string& name);

}  // namespace berth::client
