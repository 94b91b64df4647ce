#include "agent/service_account_token.h"

#include <filesystem>

#include "api/unstructured.h"
#include "core/file.h"

namespace berth::agent {
namespace {

const client::GroupVersionResource kServiceAccounts{"", "v1", "serviceaccounts"};

}  // namespace

std::vector<EnvVar> KubernetesServiceEnv(const ApiServerEndpoint& e) {
  if (e.host.empty()) return {};
  const std::string port = std::to_string(e.port);
  const std::string url = "tcp://" + e.host + ":" + port;
  const std::string prefix = "KUBERNETES_PORT_" + port + "_TCP";
  return {{"KUBERNETES_SERVICE_HOST", e.host},
          {"KUBERNETES_SERVICE_PORT", port},
          {"KUBERNETES_SERVICE_PORT_HTTPS", port},
          {"KUBERNETES_PORT", url},
          {prefix, url},
          {prefix + "_PROTO", "tcp"},
          {prefix + "_PORT", port},
          {prefix + "_ADDR", e.host}};
}

bool ShouldAutomountToken(const api::Object& pod, const api::Object* sa) {
  const api::Object& own = api::NestedField(pod, {"spec", "automountServiceAccountToken"});
  if (own.is_boolean()) return own.get<bool>();
  if (sa != nullptr) {
    const api::Object& theirs = api::Field(*sa, "automountServiceAccountToken");
    if (theirs.is_boolean()) return theirs.get<bool>();
  }
  return true;
}

Status PodTokenManager::Ensure(const api::Object& pod, const std::string& pod_dir) {
  if (endpoint_.host.empty()) return Status::Ok();
  const std::string uid = api::NestedString(pod, {"metadata", "uid"});
  const Time now = clock_.Now();
  auto it = state_.find(uid);
  if (it != state_.end() && (!it->second.automount || now < it->second.refresh_at)) return Status::Ok();
  const std::string ns = api::Namespace(pod);
  std::string sa_name = api::NestedString(pod, {"spec", "serviceAccountName"});
  if (sa_name.empty()) sa_name = "default";
  State& state = state_[uid];
  state.refresh_at = now + kTokenRetryInterval;  // unless the request below succeeds
  if (!api::NestedField(pod, {"spec", "automountServiceAccountToken"}).is_boolean()) {
    StatusOr<api::Object> sa = client_.Get(kServiceAccounts.Namespace(ns), sa_name);
    if (!sa.ok()) return sa.status();
    state.automount = ShouldAutomountToken(pod, &*sa);
  } else {
    state.automount = ShouldAutomountToken(pod, nullptr);
  }
  if (!state.automount) return Status::Ok();
  api::Object request = {
      {"apiVersion", "authentication.k8s.io/v1"},
      {"kind", "TokenRequest"},
      {"spec",
       {{"expirationSeconds", kPodTokenExpirationSeconds},
        {"boundObjectRef", {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", api::Name(pod)}, {"uid", uid}}}}}};
  // POST .../serviceaccounts/<name>/token (client-go's CreateToken): client::Client has no
  // subresource create, so the subresource path is given as the resource of the ref.
  client::GroupVersionResource token_resource = kServiceAccounts;
  token_resource.resource += "/" + sa_name + "/token";
  StatusOr<api::Object> issued = client_.Create(token_resource.Namespace(ns), request);
  if (!issued.ok()) return issued.status();
  const std::string token = api::NestedString(*issued, {"status", "token"});
  if (token.empty()) return Status(Code::kInternal, "the TokenRequest answer carries no token");
  const std::string dir = pod_dir + "/" + kServiceAccountDir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Code::kInternal, "mkdir " + dir + ": " + ec.message());
  BERTH_RETURN_IF_ERROR(WriteFileAtomically(dir + "/token", token, 0600));
  BERTH_RETURN_IF_ERROR(WriteFileAtomically(dir + "/ca.crt", endpoint_.ca_pem, 0644));
  BERTH_RETURN_IF_ERROR(WriteFileAtomically(dir + "/namespace", ns, 0644));
  // requiresRefresh: 80 % of the lifetime the server granted.
  int64_t seconds = kPodTokenExpirationSeconds;
  if (const api::Object& granted = api::NestedField(*issued, {"spec", "expirationSeconds"});
      granted.is_number_integer()) {
    seconds = granted.get<int64_t>();
  }
  state.refresh_at = now + std::chrono::seconds(seconds * 8 / 10);
  return Status::Ok();
}

}  // namespace berth::agent
