// The pod's ServiceAccount token files and service environment (kubelet token manager,
// projected kube-api-access volume, envvars for the `kubernetes` Service), over a client
// that answers TokenRequests like the API server's token subresource.
#include "agent/service_account_token.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/testing/token_client.h"
#include "api/unstructured.h"

namespace berth::agent {
namespace {

using namespace std::chrono_literals;
using testing_support::TokenClient;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class PodTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("berth-token-" + std::to_string(getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(
        client_.Create(client::GroupVersionResource{"", "v1", "serviceaccounts"}.Namespace("team-a"), Sa("default"), {})
            .ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static api::Object Sa(const std::string& name, std::optional<bool> automount = std::nullopt) {
    api::Object sa = {
        {"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", name}, {"namespace", "team-a"}}}};
    if (automount) sa["automountServiceAccountToken"] = *automount;
    return sa;
  }
  static api::Object Pod(const std::string& sa, std::optional<bool> automount = std::nullopt) {
    api::Object pod = {{"apiVersion", "v1"},
                       {"kind", "Pod"},
                       {"metadata", {{"name", "p"}, {"namespace", "team-a"}, {"uid", "uid-1"}}},
                       {"spec", {{"serviceAccountName", sa}}}};
    if (automount) pod["spec"]["automountServiceAccountToken"] = *automount;
    return pod;
  }
  std::string File(const std::string& name) { return (dir_ / kServiceAccountDir / name).string(); }

  FakeClock clock_{Time(std::chrono::seconds(1'800'000'000))};
  TokenClient client_{clock_};
  std::filesystem::path dir_;
  PodTokenManager tokens_{client_, clock_, ApiServerEndpoint{"10.0.0.1", 6443, "CA PEM"}};
};

TEST_F(PodTokenTest, WritesABoundTokenAndRefreshesItAtEightyPercent) {
  const api::Object pod = Pod("default");
  ASSERT_TRUE(tokens_.Ensure(pod, dir_.string()).ok());
  ASSERT_EQ(client_.requests.size(), 1u);
  EXPECT_EQ(client_.requests[0].first, "team-a/serviceaccounts/default/token");
  EXPECT_EQ(client_.requests[0].second["spec"], nlohmann::json::parse(R"({"expirationSeconds":3607,
    "boundObjectRef":{"apiVersion":"v1","kind":"Pod","name":"p","uid":"uid-1"}})"));
  EXPECT_EQ(Slurp(File("token")), "token-1");
  EXPECT_EQ(Slurp(File("ca.crt")), "CA PEM");
  EXPECT_EQ(Slurp(File("namespace")), "team-a");
  struct stat st {};
  ASSERT_EQ(stat(File("token").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // 80 % of 3607 s is 2885 s.
  clock_.Advance(2884s);
  ASSERT_TRUE(tokens_.Ensure(pod, dir_.string()).ok());
  EXPECT_EQ(client_.requests.size(), 1u);
  clock_.Advance(1s);
  ASSERT_TRUE(tokens_.Ensure(pod, dir_.string()).ok());
  EXPECT_EQ(client_.requests.size(), 2u);
  EXPECT_EQ(Slurp(File("token")), "token-2");
}

TEST_F(PodTokenTest, AutomountFollowsThePodThenItsServiceAccount) {
  ASSERT_TRUE(
      client_
          .Create(client::GroupVersionResource{"", "v1", "serviceaccounts"}.Namespace("team-a"), Sa("quiet", false), {})
          .ok());
  ASSERT_TRUE(tokens_.Ensure(Pod("quiet"), dir_.string()).ok());
  ASSERT_TRUE(tokens_.Ensure(Pod("default", false), dir_.string()).ok());
  EXPECT_TRUE(client_.requests.empty());
  EXPECT_FALSE(std::filesystem::exists(File("token")));
  tokens_.Forget("uid-1");
  ASSERT_TRUE(tokens_.Ensure(Pod("quiet", true), dir_.string()).ok());  // the pod's own field wins
  EXPECT_EQ(client_.requests.size(), 1u);
}

TEST(KubernetesServiceEnvTest, TheKubeletsVariablesForTheKubernetesService) {
  std::vector<EnvVar> env = KubernetesServiceEnv({"10.0.0.1", 6443, ""});
  std::vector<EnvVar> want = {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                              {"KUBERNETES_SERVICE_PORT", "6443"},
                              {"KUBERNETES_SERVICE_PORT_HTTPS", "6443"},
                              {"KUBERNETES_PORT", "tcp://10.0.0.1:6443"},
                              {"KUBERNETES_PORT_6443_TCP", "tcp://10.0.0.1:6443"},
                              {"KUBERNETES_PORT_6443_TCP_PROTO", "tcp"},
                              {"KUBERNETES_PORT_6443_TCP_PORT", "6443"},
                              {"KUBERNETES_PORT_6443_TCP_ADDR", "10.0.0.1"}};
  EXPECT_EQ(env, want);
  EXPECT_TRUE(KubernetesServiceEnv({}).empty());
}

}  // namespace
}  // namespace berth::agent
