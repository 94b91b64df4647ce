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
// Supported fields: clusters[].cluster.server, contexts[].context.{cluster,
// user, namespace}, users[].user.{token, tokenFile}. The server URL must be
// http:// this session (berth serves plain HTTP on 127.0.0.1); https://
// (TLS with OpenSSL: certificate-authority-data, client certificates,
// insecure-skip-tls-verify) is refused with kBadRequest and may come later.
//
// Errors (kBadRequest, clientcmd's wording where it has one):
//   `invalid configuration: no configuration has been provided`
//   `context was not found for specified context: <name>`
//   `cluster "<name>" not found`, `no server found for cluster "<name>"`
//   `unsupported scheme "https" in server "<url>": only http:// is supported`
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

// A parsed server URL: http://host[:port][/prefix].
struct ServerUrl {
  std::string scheme;       // "http"
  std::string host;         // "127.0.0.1", "localhost", "[::1]" without brackets
  int port = 80;
  std::string path_prefix;  // "" or "/prefix" (no trailing slash)
};
StatusOr<ServerUrl> ParseServerUrl(std::string_view url);

// What a client needs to reach the API server.
struct RestConfig {
  std::string server;  // as written, e.g. "http://127.0.0.1:6443"
  ServerUrl url;
  std::string ns = "default";  // the context's namespace
  std::string bearer_token;    // "" = anonymous
  std::string context;         // the names that were resolved, for messages
  std::string cluster;
  std::string user;
};

struct KubeconfigOptions {
  std::string path;     // explicit file; "" = $KUBECONFIG, then ~/.kube/config
  std::string context;  // "" = current-context
};

// Resolves already-parsed kubeconfig documents (merged in order, see above).
StatusOr<RestConfig> ResolveKubeconfig(const std::vector<api::Object>& files,
                                       std::string_view context = "");
// One kubeconfig given as YAML text.
StatusOr<RestConfig> ParseKubeconfig(std::string_view yaml, std::string_view context = "",
                                     std::string_view source_name = "kubeconfig");
// Loads from the sources above.
StatusOr<RestConfig> LoadKubeconfig(const KubeconfigOptions& options = {});

}  // namespace berth::client
