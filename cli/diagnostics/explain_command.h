// `berth explain KIND/NAME [-n NS] [-o text|json]` (also `KIND NAME`): why a
// job, Workload or Pod is not running, as cli/diagnostics/explain.h walks it,
// over the HTTP client against the kubeconfig's server (the same flags and
// kubeconfig resolution as the other client commands: --kubeconfig,
// --context, -n; the namespace defaults to the context's, then "default").
//
// The kind is resolved from the server's discovery as `berth get` resolves it
// (cli/rest_mapper.h: short names, singular, plural, "<plural>.<group>"),
// then must be one explain covers (trainjob, pytorchjob, jobset, job,
// workload, pod). Errors print as kubectl prints them (cli/errors.h) and set
// the exit code to 1.
#pragma once

#include <CLI/CLI.hpp>

namespace berth::cli::diagnostics {

void AddExplainCommand(CLI::App& app, int* exit_code);

}  // namespace berth::cli::diagnostics
