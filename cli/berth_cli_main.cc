// berth-cli: a test driver with only the client commands of cli/commands.h
// (the `berth` binary registers the same commands next to `server`).
#include <CLI/CLI.hpp>

#include <csignal>

#include "cli/commands.h"

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"berth client commands"};
  app.require_subcommand(1);
  int exit_code = 0;
  berth::cli::AddClientCommands(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
