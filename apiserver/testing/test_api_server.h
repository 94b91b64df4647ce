// The API server the apiserver tests drive: an ApiServer over a MemoryStore on
// a FakeClock, with the default registry, strategies and conversions, and
// requests built as kubectl sends them.
//
// The server is neither started nor given its system namespaces: a test calls
// server.Start() to listen (and run the garbage collector when its options
// enable it) and server.EnsureSystemNamespaces() for default, kube-system, ...
//
// Header-only; test code only (Respond uses GoogleTest). Thread-safety: that of ApiServer.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "api/admission_pipeline.h"
#include "api/conversion.h"
#include "api/registry.h"
#include "api/strategy.h"
#include "apiserver/api_server.h"
#include "authn/token_file.h"
#include "core/clock.h"
#include "store/memory_store.h"

namespace berth::apiserver::testing {

// ApiServerOptions with the garbage collector off (no background thread).
inline ApiServerOptions WithoutGarbageCollector() {
  ApiServerOptions o;
  o.garbage_collector = false;
  return o;
}

// WithoutGarbageCollector with authentication by the bearer tokens of
// `token_file` (kube-apiserver's --token-auth-file CSV) and RBAC on.
inline ApiServerOptions SecuredWithTokens(std::string_view token_file) {
  ApiServerOptions o = WithoutGarbageCollector();
  o.authentication.enabled = true;
  auto tokens = authn::TokenFile::Parse(token_file);
  EXPECT_TRUE(tokens.ok()) << tokens.status().ToString();
  if (tokens.ok()) o.authentication.token_file = std::make_shared<const authn::TokenFile>(std::move(tokens).value());
  o.rbac_authorization = true;
  return o;
}

struct TestApiServer {
  explicit TestApiServer(ApiServerOptions options = WithoutGarbageCollector(),
                         const store::StoreOptions& store_options = {})
      : store(clock, store_options),
        pipeline(api::Registry::Default(), api::StrategyRegistry::Default(), api::Convert),
        server(api::Registry::Default(), pipeline, store, clock, std::move(options)) {}

  FakeClock clock;
  store::MemoryStore store;
  api::AdmissionPipeline pipeline;
  ApiServer server;
};

// A request with `body` and, when the body is not empty, its Content-Type.
inline HttpRequest Request(std::string method, std::string target, std::string body = "",
                           std::string_view content_type = "application/json") {
  HttpRequest req;
  req.method = std::move(method);
  req.target = std::move(target);
  req.body = std::move(body);
  if (!req.body.empty()) req.headers.emplace_back("Content-Type", content_type);
  return req;
}

// The whole answer to a request (Request's arguments); a streamed answer (a watch) fails
// the test and reads as an empty HttpResponse.
inline HttpResponse Respond(ApiServer& server, std::string method, std::string target, std::string body = "",
                            std::string_view content_type = "application/json") {
  const std::string what = method + " " + target;
  HandlerResult r = server.Handle(Request(std::move(method), std::move(target), std::move(body), content_type));
  EXPECT_TRUE(std::holds_alternative<HttpResponse>(r)) << what;
  return std::holds_alternative<HttpResponse>(r) ? std::get<HttpResponse>(r) : HttpResponse{};
}

}  // namespace berth::apiserver::testing
