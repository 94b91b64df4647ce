// `berth lint [-f FILE|DIR ...] [--live] [-o text|json] [-n NS]`: checks
// manifests and/or the server's objects for the seeds' traps
// (cli/diagnostics/lint.h lists the rules).
//
//   -f FILE|DIR|-   manifests, as `apply -f` reads them (cli/manifest.h);
//                   repeatable
//   --live          also read the server's objects (kubeconfig as for the
//                   other client commands: --kubeconfig, --context,
//                   $KUBECONFIG); manifest objects override live objects of
//                   the same identity
//   -o text|json    text (default) or a JSON array of findings
//   -n NS           namespace for namespaced manifests that have none
//                   (default "default")
//
// Exit code: 1 when a finding has severity error, or when the input cannot
// be read (kubectl's `error: ...` text on stderr, e.g. a missing path or a
// YAML error, `error: no objects passed to lint` when -f yields no object,
// as kubectl apply's "no objects passed to apply", or the server's error for
// --live); 0 otherwise.
//
// Thread-safety: runs on the calling thread.
#pragma once

#include <CLI/CLI.hpp>

namespace berth::cli::diagnostics {

// Registers `lint` on app; sets *exit_code to 1 as above (unchanged otherwise).
void AddLintCommand(CLI::App& app, int* exit_code);

}  // namespace berth::cli::diagnostics
