// HttpServer over TLS (HttpServerOptions::tls) with the HTTP client
// (client/http_client.h) and the real kubectl: server verification, client
// certificates as the server judges them, streams, keep-alive and the
// handshake deadline.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>

#include "apiserver/http_server.h"
#include "apiserver/testing/raw_socket.h"
#include "client/http_client.h"
#include "core/base64.h"
#include "pki/certificates.h"

namespace berth::apiserver {
namespace {

using berth::Base64Encode;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

const pki::TimePoint Now() { return std::chrono::system_clock::now(); }

pki::CertificateAndKey Issue(const pki::CertificateAndKey& ca, pki::CertificateRequest req) {
  auto issued = pki::IssueCertificate(ca, req, Now());
  EXPECT_TRUE(issued.ok()) << issued.status();
  return *issued;
}

pki::CertificateAndKey ClientCert(const pki::CertificateAndKey& ca, std::string cn, std::vector<std::string> orgs) {
  pki::CertificateRequest req;
  req.common_name = std::move(cn);
  req.organizations = std::move(orgs);
  req.client_auth = true;
  return Issue(ca, req);
}

// What the handler saw of a request's client certificate.
struct Seen {
  std::optional<ClientCertificate> cert;
  std::string remote;
};

class TlsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ca_ = *pki::CreateCertificateAuthority("test-ca", Now());
    other_ca_ = *pki::CreateCertificateAuthority("other-ca", Now());
    pki::CertificateRequest serving;
    serving.common_name = "berth-apiserver";
    serving.dns_names = {"localhost"};
    serving.ip_addresses = {"127.0.0.1"};
    serving.server_auth = true;
    serving_ = Issue(ca_, serving);
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  void StartServer(bool ask_client_certificates = true, HttpServerOptions options = {}) {
    options.threads = 2;
    options.tls = HttpTlsOptions{serving_.certificate_pem, serving_.private_key_pem,
                                 ask_client_certificates ? ca_.certificate_pem : ""};
    server_ = std::make_unique<HttpServer>(options, [this](const HttpRequest& req) -> HandlerResult {
      {
        std::lock_guard<std::mutex> lock(mu_);
        seen_.push_back({req.client_certificate, req.remote});
      }
      if (req.target == "/stream") {
        StreamingResponse s;
        s.start = [](std::shared_ptr<ResponseStream> stream) {
          stream->Write("{\"n\":1}\n");
          stream->Write("{\"n\":2}\n");
          stream->Write("{\"n\":3}\n");
          stream->Close();
        };
        return s;
      }
      if (req.target == "/forever") {
        StreamingResponse s;
        s.start = [](std::shared_ptr<ResponseStream> stream) { stream->Write("first\n"); };
        return s;
      }
      if (req.target == "/late") {
        // A watch whose first event comes a while after the response head.
        StreamingResponse s;
        s.start = [](std::shared_ptr<ResponseStream> stream) {
          std::thread([stream] {
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
            stream->Write("late\n");
            stream->Close();
          }).detach();
        };
        return s;
      }
      if (req.target == "/healthz") return HttpResponse{200, "text/plain", {}, "ok"};
      return HttpResponse{404, "text/plain", {}, "not found"};
    });
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s;
  }

  client::RestConfig Config(std::string ca_pem, const pki::CertificateAndKey* client_cert = nullptr) const {
    client::RestConfig cfg;
    cfg.server = "https://127.0.0.1:" + std::to_string(server_->port());
    cfg.url = *client::ParseServerUrl(cfg.server);
    cfg.certificate_authority_pem = std::move(ca_pem);
    if (client_cert) {
      cfg.client_certificate_pem = client_cert->certificate_pem;
      cfg.client_key_pem = client_cert->private_key_pem;
    }
    return cfg;
  }

  StatusOr<client::RawResponse> Get(const client::RestConfig& cfg, std::string target = "/healthz") {
    client::HttpClient c(cfg);
    client::RawRequest r;
    r.target = std::move(target);
    return c.Do(r);
  }

  Seen LastSeen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_.empty() ? Seen{} : seen_.back();
  }

  pki::CertificateAndKey ca_, other_ca_, serving_;
  std::unique_ptr<HttpServer> server_;
  std::mutex mu_;
  std::vector<Seen> seen_;
};

TEST_F(TlsServerTest, AnswersAClientThatTrustsItsCa) {
  StartServer();
  auto r = Get(Config(ca_.certificate_pem));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "ok");
  // The DNS name in the certificate works too (SNI and verification by name).
  client::RestConfig by_name = Config(ca_.certificate_pem);
  by_name.server = "https://localhost:" + std::to_string(server_->port());
  by_name.url = *client::ParseServerUrl(by_name.server);
  auto r2 = Get(by_name);
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(r2->body, "ok");
}

TEST_F(TlsServerTest, AClientWithoutTheCaIsRefusedWithGosMessage) {
  StartServer();
  const std::string url = "https://127.0.0.1:" + std::to_string(server_->port()) + "/healthz";
  auto system_roots = Get(Config(""));
  ASSERT_FALSE(system_roots.ok());
  EXPECT_EQ(system_roots.status().code(), Code::kUnavailable);
  EXPECT_EQ(system_roots.status().message(),
            "Get \"" + url + "\": tls: failed to verify certificate: x509: certificate signed by unknown authority");
  auto other = Get(Config(other_ca_.certificate_pem));
  EXPECT_THAT(other.status().message(), HasSubstr("x509: certificate signed by unknown authority"));
  // The server was never reached.
  EXPECT_TRUE(seen_.empty());
  // insecure-skip-tls-verify connects anyway.
  client::RestConfig insecure = Config("");
  insecure.insecure_skip_tls_verify = true;
  auto r = Get(insecure);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "ok");
}

TEST_F(TlsServerTest, TheServerNameIsCheckedAgainstTheCertificate) {
  StartServer();
  client::RestConfig cfg = Config(ca_.certificate_pem);
  cfg.tls_server_name = "other.example";
  auto r = Get(cfg);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr("tls: failed to verify certificate: x509: certificate is not valid for other.example"));
  cfg.tls_server_name = "localhost";
  EXPECT_TRUE(Get(cfg).ok());
}

TEST_F(TlsServerTest, AClientCertificateFromTheCaArrivesVerified) {
  StartServer();
  auto alice = ClientCert(ca_, "alice", {"team-a", "batch-users"});
  auto r = Get(Config(ca_.certificate_pem, &alice));
  ASSERT_TRUE(r.ok()) << r.status();
  Seen seen = LastSeen();
  ASSERT_TRUE(seen.cert.has_value());
  EXPECT_TRUE(seen.cert->verified) << seen.cert->error;
  EXPECT_EQ(seen.cert->error, "");
  EXPECT_EQ(seen.cert->common_name, "alice");
  EXPECT_EQ(seen.cert->organizations, (std::vector<std::string>{"team-a", "batch-users"}));
}

TEST_F(TlsServerTest, AClientCertificateFromAnotherCaArrivesUnverified) {
  StartServer();
  auto mallory = ClientCert(other_ca_, "admin", {"system:masters"});
  auto r = Get(Config(ca_.certificate_pem, &mallory));
  ASSERT_TRUE(r.ok()) << r.status();  // the handshake does not fail: the handler judges
  Seen seen = LastSeen();
  ASSERT_TRUE(seen.cert.has_value());
  EXPECT_FALSE(seen.cert->verified);
  EXPECT_EQ(seen.cert->error, "x509: certificate signed by unknown authority");
  EXPECT_EQ(seen.cert->common_name, "admin");
}

TEST_F(TlsServerTest, AServingCertificateIsNotAClientCertificate) {
  StartServer();
  // Issued by the right CA, but for serverAuth only.
  auto r = Get(Config(ca_.certificate_pem, &serving_));
  ASSERT_TRUE(r.ok()) << r.status();
  Seen seen = LastSeen();
  ASSERT_TRUE(seen.cert.has_value());
  EXPECT_FALSE(seen.cert->verified);
  EXPECT_EQ(seen.cert->error, "x509: certificate specifies an incompatible key usage");
}

TEST_F(TlsServerTest, NoClientCertificateMeansNone) {
  StartServer();
  ASSERT_TRUE(Get(Config(ca_.certificate_pem)).ok());
  EXPECT_FALSE(LastSeen().cert.has_value());
}

TEST_F(TlsServerTest, WithoutAClientCaNoCertificateIsAskedFor) {
  StartServer(/*ask_client_certificates=*/false);
  auto alice = ClientCert(ca_, "alice", {});
  ASSERT_TRUE(Get(Config(ca_.certificate_pem, &alice)).ok());
  EXPECT_FALSE(LastSeen().cert.has_value());
}

TEST_F(TlsServerTest, AChunkedStreamWorksOverTls) {
  StartServer();
  client::HttpClient c(Config(ca_.certificate_pem));
  client::RawRequest r;
  r.target = "/stream";
  std::string body;
  auto res = c.DoStream(r, [&](std::string_view piece) {
    body += piece;
    return true;
  });
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(body, "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
}

// A stream stays open until the client closes it: the reactor's readiness left from the
// request (its TLS records already read) is not the client's close. Taken for it, fresh
// watches ended at once with no event (kubectl get -w exited silently).
TEST_F(TlsServerTest, AStreamIsNotEndedByTheReadinessLeftFromItsRequest) {
  StartServer();
  for (int i = 0; i < 20; ++i) {
    client::HttpClient c(Config(ca_.certificate_pem));
    client::RawRequest r;
    r.target = "/late";
    std::string body;
    auto res = c.DoStream(r, [&](std::string_view piece) {
      body += piece;
      return true;
    });
    ASSERT_TRUE(res.ok()) << res.status();
    ASSERT_EQ(body, "late\n") << "attempt " << i;
  }
}

TEST_F(TlsServerTest, StopEndsAnOpenStream) {
  StartServer();
  client::HttpClient c(Config(ca_.certificate_pem));
  client::RawRequest r;
  r.target = "/forever";
  std::string body;
  std::thread stopper;
  auto res = c.DoStream(r, [&](std::string_view piece) {
    body += piece;
    if (!stopper.joinable()) stopper = std::thread([this] { server_->Stop(); });
    return true;
  });
  if (stopper.joinable()) stopper.join();
  ASSERT_TRUE(res.ok()) << res.status();  // the stream ended, not a transport error
  EXPECT_EQ(body, "first\n");
  EXPECT_EQ(server_->Stats().open_connections, 0u);
}

TEST_F(TlsServerTest, KeepAliveReusesTheConnectionUntilTheIdleTimeout) {
  HttpServerOptions options;
  options.idle_timeout = milliseconds(300);
  StartServer(true, options);
  client::HttpClient c(Config(ca_.certificate_pem));
  client::RawRequest r;
  r.target = "/healthz";
  ASSERT_TRUE(c.Do(r).ok());
  ASSERT_TRUE(c.Do(r).ok());
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSERT_EQ(seen_.size(), 2u);
    EXPECT_EQ(seen_[0].remote, seen_[1].remote);  // one connection, one handshake
  }
  // The idle connection is closed by the server; the client notices and
  // connects again.
  for (int i = 0; i < 500 && server_->Stats().open_connections > 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(server_->Stats().open_connections, 0u);
  EXPECT_GE(server_->Stats().connections_timed_out, 1u);
  auto again = c.Do(r);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->body, "ok");
}

TEST_F(TlsServerTest, PlainHttpOnTheTlsPortGetsGosAnswer) {
  StartServer();
  int fd = testing::Connect(server_->port());
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  bool closed = false;
  EXPECT_EQ(testing::Receive(fd, std::chrono::seconds(10), &closed),
            "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n");
  EXPECT_TRUE(closed);
  close(fd);
  EXPECT_TRUE(seen_.empty());
}

TEST_F(TlsServerTest, AHandshakeThatNeverStartsIsCutOffAtTheHeaderTimeout) {
  HttpServerOptions options;
  options.read_header_timeout = milliseconds(200);
  StartServer(true, options);
  int fd = testing::Connect(server_->port());
  const std::string half_hello = "\x16\x03\x01";  // a TLS record header, cut short
  ASSERT_EQ(send(fd, half_hello.data(), half_hello.size(), MSG_NOSIGNAL), 3);
  bool closed = false;
  EXPECT_EQ(testing::Receive(fd, std::chrono::seconds(10), &closed), "");
  EXPECT_TRUE(closed);
  close(fd);
  EXPECT_GE(server_->Stats().connections_timed_out, 1u);
}

TEST_F(TlsServerTest, BadTlsOptionsFailStart) {
  HttpServerOptions options;
  options.tls = HttpTlsOptions{"not a certificate", serving_.private_key_pem, ""};
  EXPECT_EQ(HttpServer(options, nullptr).Start().code(), Code::kInvalid);
  options.tls = HttpTlsOptions{serving_.certificate_pem, ca_.private_key_pem, ""};
  Status mismatch = HttpServer(options, nullptr).Start();
  EXPECT_EQ(mismatch.code(), Code::kInvalid);
  EXPECT_THAT(mismatch.message(), HasSubstr("private_key_pem"));
  options.tls = HttpTlsOptions{serving_.certificate_pem, serving_.private_key_pem, "no PEM here"};
  EXPECT_EQ(HttpServer(options, nullptr).Start().code(), Code::kInvalid);
}

// The real kubectl accepts berth's CA, serving certificate and client
// certificate from a kubeconfig's *-data fields.
TEST_F(TlsServerTest, KubectlTalksToTheTlsServerWithAClientCertificate) {
  const char* kubectl = "/usr/bin/kubectl";
  if (access(kubectl, X_OK) != 0) GTEST_SKIP() << "kubectl is not installed";
  StartServer();
  auto user = ClientCert(ca_, "kubectl-user", {"team-a"});
  const std::string dir = ::testing::TempDir() + "kubectl_tls_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string kubeconfig = dir + "/config";
  {
    std::ofstream f(kubeconfig);
    f << "apiVersion: v1\nkind: Config\ncurrent-context: berth\n"
      << "clusters:\n- name: berth\n  cluster:\n    server: https://127.0.0.1:" << server_->port()
      << "\n    certificate-authority-data: " << Base64Encode(ca_.certificate_pem) << "\n"
      << "contexts:\n- name: berth\n  context:\n    cluster: berth\n    user: u\n"
      << "users:\n- name: u\n  user:\n    client-certificate-data: " << Base64Encode(user.certificate_pem)
      << "\n    client-key-data: " << Base64Encode(user.private_key_pem) << "\n";
  }
  const std::string cmd = std::string(kubectl) + " --kubeconfig " + kubeconfig + " get --raw /healthz 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = pclose(p);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(out, "ok");
  Seen seen = LastSeen();
  ASSERT_TRUE(seen.cert.has_value());
  EXPECT_TRUE(seen.cert->verified) << seen.cert->error;
  EXPECT_EQ(seen.cert->common_name, "kubectl-user");
  EXPECT_EQ(seen.cert->organizations, std::vector<std::string>{"team-a"});
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace berth::apiserver
