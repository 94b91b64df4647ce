#include "agent/service_account_token.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "api/unstructured.h"
#include "core/file.h"

namespace berth::agent {
namespace {

const client::GroupVersionResource kServiceAccounts{"", "v1", "serviceaccounts"};

}  // namespace

StatusOr<PodToken> RequestPodToken(client::Client& client, const api::Object& pod,
                                   const std::vector<std::string>& audiences, int64_t expiration_seconds) {
  std::string sa_name = api::NestedString(pod, {"spec", "serviceAccountName"});
  if (sa_name.empty()) sa_name = "default";
  api::Object spec = {{"expirationSeconds", expiration_seconds},
                      {"boundObjectRef",
                       {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", api::Name(pod)}, {"uid", api::Uid(pod)}}}};
  if (!audiences.empty()) spec["audiences"] = audiences;
  api::Object request = {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", spec}};
  // POST .../serviceaccounts/<name>/token (client-go's CreateToken): client::Client has no
  // subresource create, so the subresource path is given as the resource of the ref.
  client::GroupVersionResource token_resource = kServiceAccounts;
  token_resource.resource += "/" + sa_name + "/token";
  StatusOr<api::Object> issued = client.Create(token_resource.Namespace(api::Namespace(pod)), request);
  if (!issued.ok()) return issued.status();
  PodToken out;
  out.token = api::NestedString(*issued, {"status", "token"});
  if (out.token.empty()) return Status(Code::kInternal, "the TokenRequest answer carries no token");
  out.expiration_seconds = expiration_seconds;
  if (const api::Object& granted = api::NestedField(*issued, {"spec", "expirationSeconds"});
      granted.is_number_integer()) {
    out.expiration_seconds = granted.get<int64_t>();
  }
  return out;
}

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
  StatusOr<PodToken> issued = RequestPodToken(client_, pod, {}, kPodTokenExpirationSeconds);
  if (!issued.ok()) return issued.status();
  const std::string& token = issued->token;
  const std::string dir = pod_dir + "/" + kServiceAccountDir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status(Code::kInternal, "mkdir " + dir + ": " + ec.message());
  BERTH_RETURN_IF_ERROR(WriteFileAtomically(dir + "/token", token, 0600));
  BERTH_RETURN_IF_ERROR(WriteFileAtomically(dir + "/ca.crt", endpoint_.ca_pem, 0644));
  BERTH_RETURN_IF_ERROR(WriteFileAtomically(dir + "/namespace", ns, 0644));
  // The files belong to whoever owns the directory (the pod's user in a sandbox).
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && st.st_uid != ::geteuid()) {
    for (const char* f : {"/token", "/ca.crt", "/namespace"}) {
      if (::chown((dir + f).c_str(), st.st_uid, st.st_gid) != 0) {
        return Status(Code::kInternal, "chown " + dir + f + ": " + std::strerror(errno));
      }
    }
  }
  // requiresRefresh: 80 % of the lifetime the server granted.
  state.refresh_at = now + std::chrono::seconds(issued->expiration_seconds * 8 / 10);
  return Status::Ok();
}

}  // namespace berth::agent
