// A test double for the node agent's tests: the FakeClient plus the TokenRequest
// subresource (agent/service_account_token.h).
//
// Thread-safety: as the FakeClient; `requests` is not guarded.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "client/testing/fake_client.h"

namespace berth::agent::testing_support {

// FakeClient plus the token subresource (a Create whose resource is
// serviceaccounts/<name>/token): each TokenRequest is recorded and answered
// with "token-<n>" for the expirationSeconds asked.
class TokenClient final : public client::Client {
 public:
  explicit TokenClient(Clock& clock) : fake_(clock) {}
  StatusOr<api::Object> Get(const client::ResourceRef& r, const std::string& n, const client::GetOptions& o) override {
    return fake_.Get(r, n, o);
  }
  StatusOr<client::ObjectList> List(const client::ResourceRef& r, const client::ListOptions& o) override {
    return fake_.List(r, o);
  }
  StatusOr<api::Object> Create(const client::ResourceRef& r, const api::Object& obj,
                               const client::CreateOptions& o) override {
    if (!r.gvr.resource.ends_with("/token")) return fake_.Create(r, obj, o);
    requests.push_back({r.ns + "/" + r.gvr.resource, obj});
    api::Object out = obj;
    out["status"] = {{"token", "token-" + std::to_string(requests.size())}};
    return out;
  }
  StatusOr<api::Object> Update(const client::ResourceRef& r, const api::Object& obj,
                               const client::UpdateOptions& o) override {
    return fake_.Update(r, obj, o);
  }
  StatusOr<api::Object> UpdateStatus(const client::ResourceRef& r, const api::Object& obj,
                                     const client::UpdateOptions& o) override {
    return fake_.UpdateStatus(r, obj, o);
  }
  StatusOr<api::Object> Patch(const client::ResourceRef& r, const std::string& n, client::PatchType t,
                              std::string_view p, const client::PatchOptions& o) override {
    return fake_.Patch(r, n, t, p, o);
  }
  Status Bind(const client::ResourceRef& r, const std::string& p, const std::string& n,
              const client::CreateOptions& o) override {
    return fake_.Bind(r, p, n, o);
  }
  Status Delete(const client::ResourceRef& r, const std::string& n, const client::DeleteOptions& o) override {
    return fake_.Delete(r, n, o);
  }
  StatusOr<std::unique_ptr<client::WatchStream>> Watch(const client::ResourceRef& r,
                                                       const client::WatchOptions& o) override {
    return fake_.Watch(r, o);
  }

  client::testing::FakeClient fake_;
  std::vector<std::pair<std::string, api::Object>> requests;
};

}  // namespace berth::agent::testing_support
