#include "client/kubeconfig.h"
#include "core/base64.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

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
  EXPECT_EQ(ParseKubeconfig(kConfig, "nope").status().message(), "context was not found for specified context: nope");
  EXPECT_EQ(ParseKubeconfig("apiVersion: v1\nkind: Config\n").status().message(),
            "invalid configuration: no configuration has been provided");
  std::string ftp = kConfig;
  ftp.replace(ftp.find("http://127"), 4, "ftp");
  Status s = ParseKubeconfig(ftp).status();
  EXPECT_EQ(s.code(), Code::kBadRequest);
  EXPECT_EQ(s.message(),
            "unsupported scheme \"ftp\" in server \"ftp://127.0.0.1:6443\": only http:// and https:// are supported");
  EXPECT_EQ(ParseServerUrl("https://localhost")->port, 443);
  EXPECT_EQ(ParseServerUrl("https://localhost")->scheme, "https");
  EXPECT_EQ(ParseServerUrl("http://h:99999").status().code(), Code::kBadRequest);
  EXPECT_EQ(ParseServerUrl("http://localhost")->port, 80);
  EXPECT_EQ(ParseKubeconfig("clusters: [").status().code(), Code::kBadRequest);
}

// Found by fuzz/kubeconfig_fuzzer (corpus: fuzz/corpus/kubeconfig/wrong-type-*): a string
// field of another type threw nlohmann's type_error out of ParseKubeconfig.
TEST(KubeconfigTest, FieldsOfAnotherTypeAreErrorsNotExceptions) {
  struct Case {
    std::string from, to, message;
  };
  const Case cases[] = {
      {"current-context: berth", "current-context: 5",
       "json: cannot unmarshal number into Go struct field Config.current-context of type string"},
      {"- name: berth\n  cluster:", "- name: [berth]\n  cluster:",
       "json: cannot unmarshal array into Go struct field NamedCluster.clusters.name of type string"},
      {"- name: berth\n  context:", "- name: true\n  context:",
       "json: cannot unmarshal bool into Go struct field NamedContext.contexts.name of type string"},
      {"- name: admin", "- name: {a: b}",
       "json: cannot unmarshal object into Go struct field NamedAuthInfo.users.name of type string"},
      {"cluster: berth\n", "cluster: 1.5\n",
       "json: cannot unmarshal number into Go struct field Context.contexts.context.cluster of type string"},
      {"user: admin\n", "user: [admin]\n",
       "json: cannot unmarshal array into Go struct field Context.contexts.context.user of type string"},
      {"server: http://127.0.0.1:6443", "server: 6443",
       "json: cannot unmarshal number into Go struct field Cluster.clusters.cluster.server of type string"},
      {"token: s3cret", "token: 12",
       "json: cannot unmarshal number into Go struct field AuthInfo.users.user.token of type string"},
      {"token: s3cret", "tokenFile: false",
       "json: cannot unmarshal bool into Go struct field AuthInfo.users.user.tokenFile of type string"},
  };
  for (const Case& c : cases) {
    std::string config = kConfig;
    ASSERT_NE(config.find(c.from), std::string::npos) << c.from;
    config.replace(config.find(c.from), c.from.size(), c.to);
    Status s = ParseKubeconfig(config).status();
    EXPECT_EQ(s.code(), Code::kBadRequest) << c.to;
    EXPECT_EQ(s.message(), c.message) << c.to;
  }
  std::string with_namespace = kConfig;
  with_namespace.replace(with_namespace.find("namespace: team-a"), 17, "namespace: 7");
  EXPECT_EQ(ParseKubeconfig(with_namespace, "team-a").status().message(),
            "json: cannot unmarshal number into Go struct field Context.contexts.context.namespace of type string");
  // null is unset, as Go leaves a string field.
  std::string with_null = kConfig;
  with_null.replace(with_null.find("token: s3cret"), 13, "token: null");
  StatusOr<RestConfig> cfg = ParseKubeconfig(with_null);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->bearer_token, "");
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
  ScopedEnv env("KUBECONFIG",
                (dir / "missing.yaml").string() + ":" + (dir / "a.yaml").string() + ":" + (dir / "b.yaml").string());
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

// Stand-ins: the kubeconfig loader passes PEM text through unparsed.
constexpr char kCaPem[] = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n";
constexpr char kCertPem[] = "-----BEGIN CERTIFICATE-----\nCLIENT\n-----END CERTIFICATE-----\n";
constexpr char kKeyPem[] = "-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n";

std::string TlsConfig(const std::string& cluster_fields, const std::string& user_fields) {
  return "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "clusters:\n- name: k\n  cluster:\n    server: https://berth.example:6443\n" +
         cluster_fields +
         "contexts:\n- name: c\n  context:\n    cluster: k\n    user: u\n"
         "users:\n- name: u\n  user:\n" +
         user_fields;
}

TEST(KubeconfigTest, TlsFieldsFromData) {
  StatusOr<RestConfig> cfg = ParseKubeconfig(
      TlsConfig("    certificate-authority-data: " + berth::Base64Encode(kCaPem) + "\n    tls-server-name: berth-apiserver\n",
                "    client-certificate-data: " + berth::Base64Encode(kCertPem) +
                    "\n    client-key-data: " + berth::Base64Encode(kKeyPem) + "\n"));
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->url.scheme, "https");
  EXPECT_EQ(cfg->url.host, "berth.example");
  EXPECT_EQ(cfg->url.port, 6443);
  EXPECT_EQ(cfg->certificate_authority_pem, kCaPem);
  EXPECT_EQ(cfg->client_certificate_pem, kCertPem);
  EXPECT_EQ(cfg->client_key_pem, kKeyPem);
  EXPECT_EQ(cfg->tls_server_name, "berth-apiserver");
  EXPECT_FALSE(cfg->insecure_skip_tls_verify);
  EXPECT_EQ(cfg->bearer_token, "");
}

TEST(KubeconfigTest, TlsFilesAreRelativeToTheKubeconfigFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / ("kubeconfig_tls_" + std::to_string(getpid()));
  fs::create_directories(dir / "pki");
  auto write = [](const fs::path& p, const std::string& text) { std::ofstream(p) << text; };
  write(dir / "pki" / "ca.crt", kCaPem);
  write(dir / "pki" / "alice.crt", kCertPem);
  write(dir / "alice.key", kKeyPem);
  write(dir / "token", "t0ken\n");
  write(dir / "config", TlsConfig("    certificate-authority: pki/ca.crt\n",
                                  "    client-certificate: pki/alice.crt\n    client-key: " +
                                      (dir / "alice.key").string() + "\n    tokenFile: token\n"));
  // Run from another directory: the paths follow the file, not the process.
  StatusOr<RestConfig> cfg = LoadKubeconfig({(dir / "config").string(), ""});
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->certificate_authority_pem, kCaPem);
  EXPECT_EQ(cfg->client_certificate_pem, kCertPem);
  EXPECT_EQ(cfg->client_key_pem, kKeyPem);
  EXPECT_EQ(cfg->bearer_token, "t0ken");

  // Data wins over the file beside it.
  write(dir / "config2", TlsConfig("    certificate-authority: missing.crt\n    certificate-authority-data: " +
                                       berth::Base64Encode("DATA") + "\n",
                                   "    token: abc\n"));
  cfg = LoadKubeconfig({(dir / "config2").string(), ""});
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->certificate_authority_pem, "DATA");
  EXPECT_EQ(cfg->bearer_token, "abc");

  // A missing file is an error naming it.
  write(dir / "config3", TlsConfig("    certificate-authority: nope.crt\n", ""));
  Status s = LoadKubeconfig({(dir / "config3").string(), ""}).status();
  EXPECT_EQ(s.code(), Code::kBadRequest);
  EXPECT_EQ(s.message(), "unable to read certificate-authority " + (dir / "nope.crt").string() +
                             " for cluster \"k\" due to open " + (dir / "nope.crt").string() +
                             ": no such file or directory");
  fs::remove_all(dir);
}

TEST(KubeconfigTest, TlsFieldErrors) {
  EXPECT_EQ(ParseKubeconfig(TlsConfig("    certificate-authority-data: '***'\n", "")).status().message(),
            "illegal base64 data in certificate-authority-data of cluster \"k\"");
  EXPECT_EQ(ParseKubeconfig(TlsConfig("    insecure-skip-tls-verify: \"yes\"\n", "")).status().message(),
            "json: cannot unmarshal string into Go struct field Cluster.clusters.cluster.insecure-skip-tls-verify of "
            "type bool");
  EXPECT_EQ(ParseKubeconfig(TlsConfig("    insecure-skip-tls-verify: true\n    certificate-authority-data: " +
                                          berth::Base64Encode(kCaPem) + "\n",
                                      ""))
                .status()
                .message(),
            "specifying a root certificates file with the insecure flag is not allowed");
  StatusOr<RestConfig> insecure = ParseKubeconfig(TlsConfig("    insecure-skip-tls-verify: true\n", ""));
  ASSERT_TRUE(insecure.ok()) << insecure.status();
  EXPECT_TRUE(insecure->insecure_skip_tls_verify);
  EXPECT_EQ(ParseKubeconfig(TlsConfig("", "    client-certificate-data: " + berth::Base64Encode(kCertPem) + "\n"))
                .status()
                .message(),
            "client-key-data or client-key must be specified for u to use the clientCert authentication method.");
  EXPECT_EQ(ParseKubeconfig(TlsConfig("", "    client-key-data: " + berth::Base64Encode(kKeyPem) + "\n")).status().message(),
            "client-cert-data or client-cert must be specified for u to use the clientCert authentication method.");
}

}  // namespace
}  // namespace berth::client
