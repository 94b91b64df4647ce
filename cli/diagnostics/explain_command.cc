#include "cli/diagnostics/explain_command.h"

#include <iostream>
#include <string>
#include <vector>

#include "cli/diagnostics/explain.h"
#include "cli/errors.h"
#include "cli/rest_mapper.h"
#include "client/http_client.h"
#include "client/kubeconfig.h"

namespace berth::cli::diagnostics {
namespace {

struct ExplainFlags {
  std::vector<std::string> args;
  std::string kubeconfig;
  std::string context;
  std::string ns;
  std::string output = "text";
};

Status RunExplain(const ExplainFlags& f) {
  std::string kind, name;
  if (f.args.size() == 1 && f.args[0].find('/') != std::string::npos) {
    kind = f.args[0].substr(0, f.args[0].find('/'));
    name = f.args[0].substr(f.args[0].find('/') + 1);
  } else if (f.args.size() == 2) {
    kind = f.args[0];
    name = f.args[1];
  }
  if (kind.empty() || name.empty()) return ClientError("you must specify one resource as KIND/NAME or KIND NAME");
  if (f.output != "text" && f.output != "json") {
    return ClientError("unable to match a printer suitable for the output format \"" + f.output +
                       "\", allowed formats are: json,text");
  }
  auto config = client::LoadKubeconfig({f.kubeconfig, f.context});
  if (!config.ok()) return ClientError(config.status().message());
  client::HttpClient http(std::move(config).value());
  std::string ns = f.ns.empty() ? http.config().ns : f.ns;
  if (ns.empty()) ns = "default";
  BERTH_ASSIGN_OR_RETURN(RestMapper mapper, Discover(http));
  auto resource = mapper.ResourceFor(kind);
  if (!resource.ok()) return ClientError(resource.status().message());
  auto report = diagnostics::Explain(http, resource->GroupResource(), ns, name, RealClock::Get());
  if (!report.ok()) {
    return report.status().code() == Code::kBadRequest ? ClientError(report.status().message()) : report.status();
  }
  if (f.output == "json") {
    std::cout << report->ToJson().dump(2) << "\n";
  } else {
    std::cout << report->ToText();
  }
  return Status::Ok();
}

}  // namespace

void AddExplainCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<ExplainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Why is a job not running: admission (Kueue) or placement (kube-scheduler), with evidence and fixes");
  cmd->add_option("target", f->args, "KIND/NAME or KIND NAME (trainjob, pytorchjob, jobset, job, workload, pod)")
      ->required();
  cmd->add_option("--kubeconfig", f->kubeconfig, "Path to the kubeconfig file to use");
  cmd->add_option("--context", f->context, "The name of the kubeconfig context to use");
  cmd->add_option("-n,--namespace", f->ns, "If present, the namespace scope for this request");
  cmd->add_option("-o,--output", f->output, "Output format: text (default) or json");
  cmd->callback([f, exit_code] {
    Status s = RunExplain(*f);
    if (!s.ok()) {
      std::cout.flush();
      std::cerr << ErrorText(s);
      *exit_code = 1;
    }
  });
}

}  // namespace berth::cli::diagnostics
