// Kubeconfig loading, as client-go's clientcmd does for kubectl: which server
// to talk to, as whom, and the default namespace.
//
// Sources, in client-go's precedence:
//   1. an explicit path (kubectl's --kubeconfig), else
//   2. $KUBECONFIG: a ':'-separated list of files, merged (missing files are
//      skipped; for clusters, contexts and users the first file that defines
//      a name wins; current-context comes from the first file that sets it),
//      else
//   3. $HOME/.kube/config.
// The context is options.context when given (kubectl's --context), else
// current-context. The context names a cluster (server URL) and a user, and
// may set a namespace (default "default").
//
// Supported fields: clusters[].cluster.{server, certificate-authority,
// certificate-authority-data, insecure-skip-tls-verify, tls-server-name},
// contexts[].context.{cluster, user, namespace}, users[].user.{token,
// tokenFile, client-certificate, client-certificate-data, client-key,
// client-key-data}. The server URL is http:// or https://.
//
// Files and data, as client-go's clientcmd reads them: a `*-data` field is
// base64 of the PEM and wins over the file field beside it; a file path
// (certificate-authority, client-certificate, client-key, tokenFile) that is
// relative is resolved against the directory of the kubeconfig file that
// defined it (clientcmd's ResolveLocalPaths; for ParseKubeconfig's text, the
// process's working directory). The files are read when the config is
// resolved. token wins over tokenFile.
//
// Errors (kBadRequest, clientcmd's wording where it has one):
//   `invalid configuration: no configuration has been provided`
//   `context was not found for specified context: <name>`
//   `cluster "<name>" not found`, `no server found for cluster "<name>"`
//   `unsupported scheme "ftp" in server "<url>": only http:// and https:// are supported`
//   `unable to read certificate-authority <path> for <cluster> due to open <path>: no such file or directory`
//   (and the same for client-certificate, client-key, tokenFile)
//   `illegal base64 data in certificate-authority-data of cluster "<name>"`
//   `specifying a root certificates file with the insecure flag is not allowed`
//   `client-key-data or client-key must be specified for <user> to use the clientCert authentication method`
//   (and the converse for a key without a certificate)
//   a field of another type than the kubeconfig types give it (clientcmd decodes into
//   typed structs): `json: cannot unmarshal number into Go struct field
//   Cluster.clusters.cluster.server of type string` (null reads as unset, as in Go);
//   YAML errors from api/yaml_codec.h (with the file name), unreadable files.
//
// Thread-safety: pure functions (LoadKubeconfig reads the environment and files).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/object.h"
#include "core/status.h"

namespace berth::client {

// A parsed server URL: http[s]://host[:port][/prefix].
struct ServerUrl {
  std::string scheme;       // "http" or "https"
  std::string host;         // "127.0.0.1", "localhost", "[::1]" without brackets
  int port = 80;            // default 80 for http, 443 for https
  std::string path_prefix;  // "" or "/prefix" (no trailing slash)
};
StatusOr<ServerUrl> ParseServerUrl(std::string_view url);

// What a client needs to reach the API server.
struct RestConfig {
  std::string server;  // as written, e.g. "http://127.0.0.1:6443"
  ServerUrl url;
  std::string ns = "default";  // the context's namespace
  std::string bearer_token;    // "" = anonymous
  // TLS (https:// only). PEM text, read from the kubeconfig's data or files.
  std::string certificate_authority_pem;  // "" = the system's default roots
  std::string client_certificate_pem;     // "" = no client certificate
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;  // do not verify the server at all
  std::string tls_server_name;            // "" = the URL's host (SNI and verification)
  std::string context;                    // the names that were resolved, for messages
  std::string cluster;
  std::string user;
};

struct KubeconfigOptions {
  std::string path;     // explicit file; "" = $KUBECONFIG, then ~/.kube/config
  std::string context;  // "" = current-context
};

// Resolves already-parsed kubeconfig documents (merged in order, see above).
StatusOr<RestConfig> ResolveKubeconfig(const std::vector<api::Object>& files, std::string_view context = "");
// One kubeconfig given as YAML text.
StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, std::string_view context = "",
                                     std::string_view source_name = "kubeconfig");
// Loads from the sources above.
StatusOr<RestConfig> LoadKubeconfig(const KubeconfigOptions& options = {});

}  // namespace berth::client
