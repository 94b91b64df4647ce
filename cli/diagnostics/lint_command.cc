#include "cli/diagnostics/lint_command.h"

#include <iostream>
#include <memory>

#include "cli/diagnostics/lint.h"
#include "cli/diagnostics/lint_input.h"
#include "cli/errors.h"
#include "cli/manifest.h"
#include "client/http_client.h"
#include "client/kubeconfig.h"

namespace berth::cli::diagnostics {

namespace {

struct LintFlags {
  std::vector<std::string> files;
  bool live = false;
  std::string output = "text";
  std::string ns;
  std::string kubeconfig;
  std::string context;
};

StatusOr<std::vector<diagnostics::Finding>> RunLint(const LintFlags& f) {
  if (f.files.empty() && !f.live) return ClientError("must specify -f FILE|DIR or --live");
  if (f.output != "text" && f.output != "json") {
    return ClientError("unable to match a printer suitable for the output format \"" + f.output +
                       "\", allowed formats are: json,text");
  }
  std::vector<ManifestObject> manifests;
  if (!f.files.empty()) {
    BERTH_ASSIGN_OR_RETURN(manifests, ReadManifests(f.files, std::cin));
    // kubectl apply -f on an empty directory: "error: no objects passed to apply".
    if (manifests.empty()) return ClientError("no objects passed to lint");
  }
  diagnostics::ObjectsByResource live;
  std::string ns = f.ns;
  if (f.live) {
    auto config = client::LoadKubeconfig({f.kubeconfig, f.context});
    if (!config.ok()) return ClientError(config.status().message());
    if (ns.empty()) ns = config->ns;
    client::HttpClient http(std::move(*config));
    BERTH_ASSIGN_OR_RETURN(live, diagnostics::FetchLintObjects(http));
  }
  if (ns.empty()) ns = "default";
  BERTH_ASSIGN_OR_RETURN(diagnostics::LintInput input, diagnostics::BuildLintInput(std::move(live), manifests, ns));
  return diagnostics::Lint(input.view, input.provenance);
}

}  // namespace

void AddLintCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<LintFlags>();
  CLI::App* cmd = app.add_subcommand(
      "lint", "Check manifests and/or the server's objects for Kueue/PriorityClass traps that waste GPUs");
  cmd->add_option("-f,--filename", flags->files, "Files or directories of manifests to check ('-' for stdin)");
  cmd->add_flag("--live", flags->live, "Also check the objects on the server (files override them)");
  cmd->add_option("-o,--output", flags->output, "Output format: text or json");
  cmd->add_option("-n,--namespace", flags->ns, "Namespace of namespaced manifests that have none");
  cmd->add_option("--kubeconfig", flags->kubeconfig, "Path to the kubeconfig file to use");
  cmd->add_option("--context", flags->context, "The name of the kubeconfig context to use");
  cmd->callback([flags, exit_code] {
    auto findings = RunLint(*flags);
    if (!findings.ok()) {
      std::cout.flush();
      std::cerr << ErrorText(findings.status());
      *exit_code = 1;
      return;
    }
    if (flags->output == "json") {
      std::cout << diagnostics::FindingsToJson(*findings).dump(2) << "\n";
    } else {
      std::cout << diagnostics::FindingsToText(*findings);
    }
    if (diagnostics::HasErrors(*findings)) *exit_code = 1;
  });
}

}  // namespace berth::cli::diagnostics
