// Fuzz target: the kubeconfig reader (client/kubeconfig.h), as `berth` and `berth agent
// --kubeconfig` read ~/.kube/config or $KUBECONFIG.
//
// Input: <context name>\n<YAML stream>. Each document of the stream is one kubeconfig
// file of a $KUBECONFIG list (ResolveKubeconfig merges them); the first document alone
// also goes through ParseKubeconfig. An empty context name means current-context.
//
// Invariants checked (a violation aborts):
//   - reading never crashes or throws (a field of the wrong type is an error, as
//     clientcmd's decoder answers); a refused kubeconfig is a 400 Status;
//   - a resolved config names an http:// or https:// server whose URL parses to what was resolved,
//     with a port in 1..65535 and a non-empty host.
#include <cstdint>
#include <string>
#include <vector>

#include "api/yaml_codec.h"
#include "client/kubeconfig.h"
#include "fuzz/fuzz_check.h"

using berth::fuzz::Check;
using berth::fuzz::CheckInputError;

namespace {

void CheckResolved(const berth::StatusOr<berth::client::RestConfig>& cfg, std::string_view input) {
  if (!cfg.ok()) return CheckInputError(cfg.status(), input);
  Check(cfg->url.scheme == "http" || cfg->url.scheme == "https",
        "resolved a server that is neither http:// nor https://: " + cfg->server, input);
  Check(!cfg->url.host.empty() && cfg->url.port >= 1 && cfg->url.port <= 65535,
        "resolved a server URL without a host or port: " + cfg->server, input);
  auto again = berth::client::ParseServerUrl(cfg->server);
  Check(again.ok() && again->host == cfg->url.host && again->port == cfg->url.port &&
            again->path_prefix == cfg->url.path_prefix,
        "the server URL parses differently a second time: " + cfg->server, input);
  Check(!cfg->ns.empty(), "resolved an empty namespace", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  berth::fuzz::Input in(data, size);
  const std::string_view input = in.text();
  const std::string context(in.Line());
  const std::string_view yaml = in.Rest();
  auto docs = berth::api::ParseYamlStream(yaml, "kubeconfig");
  if (!docs.ok()) return CheckInputError(docs.status(), input), 0;
  CheckResolved(berth::client::ResolveKubeconfig(*docs, context), input);
  if (docs->size() == 1) CheckResolved(berth::client::ParseKubeconfig(yaml, context), input);
  return 0;
}
