#include "client/kubeconfig.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace berth::client {
namespace {

constexpr char kConfig[] = R"(apiVersion: v1
kind: Config
current-context: berth
clusters:
- name: berth
  cluster:
    server: http://127.0.0.1:6443
- name: remote
  cluster:
    server: http://[::1]:8080/prefix/
contexts:
- name: berth
  context:
    cluster: berth
    user: admin
- name: team-a
  context:
    cluster: remote
    user: nobody
    namespace: team-a
users:
- name: admin
  user:
    token: s3cret
)";

TEST(KubeconfigTest, CurrentContextClusterUserAndDefaultNamespace) {
  StatusOr<RestConfig> cfg = ParseKubeconfig(kConfig);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->context, "berth");
  EXPECT_EQ(cfg->server, "http://127.0.0.1:6443");
  EXPECT_EQ(cfg->url.host, "127.0.0.1");
  EXPECT_EQ(cfg->url.port, 6443);
  EXPECT_EQ(cfg->url.path_prefix, "");
  EXPECT_EQ(cfg->ns, "default");
  EXPECT_EQ(cfg->bearer_token, "s3cret");
}

TEST(KubeconfigTest, ExplicitContextWithNamespaceIpv6AndPrefix) {
  StatusOr<RestConfig> cfg = ParseKubeconfig(kConfig, "team-a");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->ns, "team-a");
  EXPECT_EQ(cfg->url.host, "::1");
  EXPECT_EQ(cfg->url.port, 8080);
  EXPECT_EQ(cfg->url.path_prefix, "/prefix");
  EXPECT_EQ(cfg->bearer_token, "");  // user "nobody" is not defined: anonymous
}

TEST(KubeconfigTest, Errors) {
  EXPECT_EQ(ParseKubeconfig(kConfig, "nope").status().message(),
            "context was not found for specified context: nope");
  EXPECT_EQ(ParseKubeconfig("apiVersion: v1\nkind: Config\n").status().message(),
            "invalid configuration: no configuration has been provided");
  std::string https = kConfig;
  https.replace(https.find("http://127"), 4, "https");
  Status s = ParseKubeconfig(https).status();
  EXPECT_EQ(s.code(), Code::kBadRequest);
  EXPECT_EQ(s.message(), "unsupported scheme \"https\" in server \"https://127.0.0.1:6443\": only http:// is supported");
  EXPECT_EQ(ParseServerUrl("http://h:99999").status().code(), Code::kBadRequest);
  EXPECT_EQ(ParseServerUrl("http://localhost")->port, 80);
  EXPECT_EQ(ParseKubeconfig("clusters: [").status().code(), Code::kBadRequest);
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(KubeconfigTest, KubeconfigEnvListIsMergedFirstDefinitionWins) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("berth-kubeconfig-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream(dir / "a.yaml") << "current-context: second\n"
                                     "clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:1111\n";
    std::ofstream(dir / "b.yaml") << "current-context: ignored\n"
                                     "clusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:2222\n"
                                     "contexts:\n- name: second\n  context:\n    cluster: c\n    namespace: ns-b\n";
  }
  ScopedEnv env("KUBECONFIG", (dir / "missing.yaml").string() + ":" + (dir / "a.yaml").string() + ":" +
                                  (dir / "b.yaml").string());
  StatusOr<RestConfig> cfg = LoadKubeconfig();
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->context, "second");
  EXPECT_EQ(cfg->url.port, 1111);  // a.yaml defined cluster "c" first
  EXPECT_EQ(cfg->ns, "ns-b");
  // An explicit path wins over $KUBECONFIG, and must exist.
  KubeconfigOptions explicit_path{(dir / "b.yaml").string(), "second"};
  cfg = LoadKubeconfig(explicit_path);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->url.port, 2222);
  EXPECT_EQ(LoadKubeconfig({(dir / "missing.yaml").string(), ""}).status().code(), Code::kNotFound);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace berth::client
