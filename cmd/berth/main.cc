// berth: one binary for the control plane (server), node agents (agent), the
// simulator (sim) and the client commands (apply/get/describe/...).
#include <CLI/CLI.hpp>

#include <iostream>

#include "core/logging.h"

int main(int argc, char** argv) {
  CLI::App app{"berth: queued, gang-admitted distributed training jobs"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error|off");

  auto* version = app.add_subcommand("version", "Print the berth version");
  version->callback([] { std::cout << "berth v0.1.0-dev (Kubernetes API v1.32 compatible)\n"; });

  CLI11_PARSE(app, argc, argv);
  return 0;
}
