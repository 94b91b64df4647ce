// The client commands of the `berth` binary, for people without kubectl:
//
//   berth apply -f FILE|DIR|- [-n NS]
//   berth get KIND [NAME...] [-n NS | -A] [-o wide|yaml|json|name] [-l SEL]
//             [--field-selector SEL] [--show-labels] [--no-headers] [-w]
//   berth describe KIND [NAME...] [-n NS | -A]
//   berth delete (KIND NAME... | KIND/NAME | -f FILE) [-n NS] [--ignore-not-found] [--wait=false]
//   berth logs POD [-c CONTAINER] [-f] [--tail N] [--timestamps] [--previous] [-n NS]
//   berth wait (--for=condition=C[=V] | --for=delete) KIND/NAME [--timeout=30s] [-n NS]
//
// Each command also takes --kubeconfig and --context and reads the same
// kubeconfig as kubectl (client/kubeconfig.h: the flag, else $KUBECONFIG,
// else ~/.kube/config; `berth server` writes DATA_DIR/kubeconfig). Kinds are
// resolved from the server's discovery (cli/rest_mapper.h); `get` prints the
// server's Tables (cli/table_printer.h). Output and error texts are kubectl
// 1.32's (cli/errors.h); a failed command exits 1.
//
// Semantics that differ from kubectl, on purpose:
//   - apply is server-side apply (PATCH application/apply-patch+yaml,
//     fieldManager=berth, force=true) preceded by a GET that decides between
//     "created" and, by comparing resourceVersions, "configured" / "unchanged";
//   - describe uses the generic describer for every kind (kubectl has
//     special describers for Pods, Nodes, Namespaces, ...).
//
// Thread-safety: the commands run on the calling thread; not reentrant.
#pragma once

#include <CLI/CLI.hpp>

namespace berth::cli {

// Registers apply, get, describe, delete, logs and wait on app. A command
// that fails writes kubectl's error text to stderr and sets *exit_code to 1
// (it is left unchanged on success).
void AddClientCommands(CLI::App& app, int* exit_code);

}  // namespace berth::cli
