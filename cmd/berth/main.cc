// berth: one binary for the control plane (server), node agents (agent), the
// simulator (sim) and the client commands (apply/get/describe/...).
//
//   berth server --port N --data-dir DIR [--store=sqlite|memory] [--address A]
//     Serves the Kubernetes API on A:N (127.0.0.1 by default) over the SQLite
//     store DIR/berth.db (or memory), writes DIR/kubeconfig (plain HTTP,
//     current context set) so `KUBECONFIG=DIR/kubeconfig kubectl get cq` works
//     with nothing else, and shuts down cleanly on SIGTERM or SIGINT.
#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "core/logging.h"

#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "apiserver/api_server.h"
#include "core/clock.h"
#include "store/memory_store.h"
#include "store/sqlite_store.h"

namespace {

struct ServerFlags {
  int port = 6443;
  std::string address = "127.0.0.1";
  std::string data_dir;
  std::string store = "sqlite";
  int threads = 4;
};

// A kubeconfig with one plain-HTTP cluster, one user without credentials and
// the context "berth" selected.
std::string Kubeconfig(const std::string& address, int port) {
  const std::string server = "http://" + address + ":" + std::to_string(port);
  return "apiVersion: v1\n"
         "kind: Config\n"
         "clusters:\n"
         "- name: berth\n"
         "  cluster:\n"
         "    server: " + server + "\n"
         "users:\n"
         "- name: berth\n"
         "  user: {}\n"
         "contexts:\n"
         "- name: berth\n"
         "  context:\n"
         "    cluster: berth\n"
         "    user: berth\n"
         "    namespace: default\n"
         "current-context: berth\n"
         "preferences: {}\n";
}

// Writes `contents` to `path` atomically (temp file + rename).
bool WriteFileAtomically(const std::filesystem::path& path, const std::string& contents) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return false;
    out << contents;
    if (!out.flush()) return false;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  return !ec;
}

int RunServer(const ServerFlags& flags) {
  auto log = berth::Logger("server");
  // Block the stop signals before any thread starts, so every thread inherits
  // the mask and sigwait below is the only receiver.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  std::error_code ec;
  std::filesystem::create_directories(flags.data_dir, ec);
  if (ec) {
    std::cerr << "error: cannot create data directory " << flags.data_dir << ": " << ec.message() << "\n";
    return 1;
  }
  berth::Clock& clock = berth::RealClock::Get();
  std::unique_ptr<berth::store::Store> store;
  if (flags.store == "memory") {
    store = std::make_unique<berth::store::MemoryStore>(clock);
  } else if (flags.store == "sqlite") {
    auto opened = berth::store::SqliteStore::Open(
        (std::filesystem::path(flags.data_dir) / "berth.db").string(), clock);
    if (!opened.ok()) {
      std::cerr << "error: " << opened.status().ToString() << "\n";
      return 1;
    }
    store = std::move(opened).value();
  } else {
    std::cerr << "error: --store must be sqlite or memory\n";
    return 1;
  }
  const berth::api::Registry& registry = berth::api::Registry::Default();
  berth::api::AdmissionPipeline pipeline(registry, berth::api::StrategyRegistry::Default(),
                                         berth::api::Convert);
  berth::apiserver::ApiServerOptions options;
  options.http.address = flags.address;
  options.http.port = static_cast<uint16_t>(flags.port);
  options.http.threads = flags.threads;
  berth::apiserver::ApiServer server(registry, pipeline, *store, clock, options);
  berth::Status started = server.Start();
  if (!started.ok()) {
    std::cerr << "error: " << started.ToString() << "\n";
    return 1;
  }
  const auto kubeconfig = std::filesystem::path(flags.data_dir) / "kubeconfig";
  if (!WriteFileAtomically(kubeconfig, Kubeconfig(flags.address, server.port()))) {
    std::cerr << "error: cannot write " << kubeconfig << "\n";
    server.Stop();
    return 1;
  }
  log->info("serving the Kubernetes API on http://{}:{} (store {}, data {}); KUBECONFIG={}",
            flags.address, server.port(), flags.store, flags.data_dir, kubeconfig.string());
  int sig = 0;
  sigwait(&stop_signals, &sig);
  log->info("received signal {}, shutting down", sig);
  server.Stop();
  store.reset();  // closes the database
  log->info("stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"berth: queued, gang-admitted distributed training jobs"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error|off");

  auto* version = app.add_subcommand("version", "Print the berth version");
  version->callback([] { std::cout << "berth v0.1.0-dev (Kubernetes API v1.32 compatible)\n"; });

  int server_rc = 0;
  ServerFlags server_flags;
  auto* server = app.add_subcommand("server", "Run the API server (and, later, the controllers)");
  server->add_option("--port", server_flags.port, "TCP port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535));
  server->add_option("--address", server_flags.address, "address to listen on");
  server->add_option("--data-dir", server_flags.data_dir, "directory for the database and the kubeconfig")
      ->required();
  server->add_option("--store", server_flags.store, "object store backend")
      ->check(CLI::IsMember({"sqlite", "memory"}));
  server->add_option("--threads", server_flags.threads, "HTTP I/O threads")->check(CLI::Range(1, 64));
  server->callback([&] {
    if (!berth::SetLogLevel(log_level)) throw CLI::ValidationError("--log-level", "unknown level " + log_level);
    server_rc = RunServer(server_flags);
  });

  CLI11_PARSE(app, argc, argv);
  return server_rc;
}
