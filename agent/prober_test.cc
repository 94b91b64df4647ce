// agent/prober.h: the probe spec as the API defaults it, the kubelet's thresholds, and the
// tcpSocket and httpGet handlers against real sockets of this host.
#include "agent/prober.h"

#include <arpa/inet.h>
#include <atomic>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace berth::agent {
namespace {

api::Object Container(const std::string& json) { return api::Object::parse(json); }

TEST(ProberTest, ASpecTakesTheApiDefaultsAndResolvesNamedPorts) {
  const api::Object c = Container(R"({"name": "main", "ports": [{"name": "http", "containerPort": 8080}],
      "readinessProbe": {"httpGet": {"port": "http", "path": "healthz",
                                     "httpHeaders": [{"name": "X-A", "value": "b"}]}},
      "livenessProbe": {"tcpSocket": {"port": 9000}, "periodSeconds": 2, "failureThreshold": 1,
                        "terminationGracePeriodSeconds": 5},
      "startupProbe": {"exec": {"command": ["cat", "/tmp/ok"]}, "initialDelaySeconds": 3}})");
  StatusOr<std::optional<ProbeSpec>> readiness = ContainerProbe(c, ProbeType::kReadiness);
  ASSERT_TRUE(readiness.ok() && readiness->has_value()) << readiness.status().ToString();
  EXPECT_EQ((*readiness)->handler, ProbeSpec::Handler::kHttpGet);
  EXPECT_EQ((*readiness)->port, 8080);
  EXPECT_EQ((*readiness)->path, "/healthz");
  EXPECT_EQ((*readiness)->scheme, "HTTP");
  EXPECT_EQ((*readiness)->headers, (std::vector<std::pair<std::string, std::string>>{{"X-A", "b"}}));
  EXPECT_EQ((*readiness)->initial_delay_seconds, 0);
  EXPECT_EQ((*readiness)->timeout_seconds, 1);
  EXPECT_EQ((*readiness)->period_seconds, 10);
  EXPECT_EQ((*readiness)->success_threshold, 1);
  EXPECT_EQ((*readiness)->failure_threshold, 3);
  EXPECT_EQ((*readiness)->termination_grace_period_seconds, std::nullopt);

  StatusOr<std::optional<ProbeSpec>> liveness = ContainerProbe(c, ProbeType::kLiveness);
  ASSERT_TRUE(liveness.ok() && liveness->has_value());
  EXPECT_EQ((*liveness)->handler, ProbeSpec::Handler::kTcpSocket);
  EXPECT_EQ((*liveness)->port, 9000);
  EXPECT_EQ((*liveness)->period_seconds, 2);
  EXPECT_EQ((*liveness)->failure_threshold, 1);
  EXPECT_EQ((*liveness)->termination_grace_period_seconds, 5);

  StatusOr<std::optional<ProbeSpec>> startup = ContainerProbe(c, ProbeType::kStartup);
  ASSERT_TRUE(startup.ok() && startup->has_value());
  EXPECT_EQ((*startup)->command, (std::vector<std::string>{"cat", "/tmp/ok"}));
  EXPECT_EQ((*startup)->initial_delay_seconds, 3);

  StatusOr<std::optional<ProbeSpec>> none = ContainerProbe(Container(R"({"name": "main"})"), ProbeType::kLiveness);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(ProberTest, ASpecThatCannotRunErrorsSayingWhichFieldAndWhy) {
  auto error = [](const std::string& probe) {
    StatusOr<std::optional<ProbeSpec>> s =
        ContainerProbe(Container(R"({"name": "main", "livenessProbe": )" + probe + "}"), ProbeType::kLiveness);
    // A probe that cannot run is a kInvalid spec that errors at every period (the kubelet's
    // prober throws such results away: never Ready, never killed).
    if (!s.ok() || !s->has_value()) return std::string("not a spec");
    return (*s)->handler == ProbeSpec::Handler::kInvalid ? (*s)->error : std::string("runs");
  };
  EXPECT_EQ(error(R"({"httpGet": {"port": "metrics"}})"),
            "livenessProbe.httpGet.port: no container port named \"metrics\"");
  EXPECT_EQ(error(R"({"tcpSocket": {"port": 70000}})"),
            "livenessProbe.tcpSocket.port: must be between 1 and 65535, inclusive");
  EXPECT_EQ(error(R"({"grpc": {"port": 9000}})"), "livenessProbe.grpc: grpc probes are not supported by berth");
  EXPECT_EQ(error(R"({"periodSeconds": 3})"), "livenessProbe: must specify a handler type");
  EXPECT_EQ(error(R"({"exec": {}})"), "livenessProbe.exec.command: Required value");
  EXPECT_EQ(error(R"({"httpGet": {"port": 80, "scheme": "FTP"}})"),
            "livenessProbe.httpGet.scheme: Unsupported value: \"FTP\"");
}

ProbeSpec Spec(int64_t success, int64_t failure) {
  ProbeSpec s;
  s.success_threshold = success;
  s.failure_threshold = failure;
  s.period_seconds = 5;
  s.initial_delay_seconds = 2;
  return s;
}
const ProbeOutcome kOk{ProbeResult::kSuccess, ""};
const ProbeOutcome kBad{ProbeResult::kFailure, "no"};
const ProbeOutcome kErr{ProbeResult::kUnknown, "exec failed"};

TEST(ProberTest, AResultChangesOnlyAfterItsThresholdOfRunsInARow) {
  const Time start = Time() + std::chrono::seconds(100);
  ProbeState readiness(ProbeType::kReadiness, Spec(2, 3), start);
  EXPECT_EQ(readiness.result(), ProbeResult::kFailure) << "not ready until a probe says so";
  EXPECT_EQ(readiness.due(), start + std::chrono::seconds(2));
  readiness.Dispatched();
  EXPECT_EQ(readiness.due(), start + std::chrono::seconds(7));
  EXPECT_FALSE(readiness.Record(kOk));
  EXPECT_FALSE(readiness.Record(kErr)) << "an error changes nothing";
  EXPECT_TRUE(readiness.Record(kOk));
  EXPECT_EQ(readiness.result(), ProbeResult::kSuccess);
  EXPECT_FALSE(readiness.Record(kBad));
  EXPECT_FALSE(readiness.Record(kBad));
  EXPECT_FALSE(readiness.Record(kOk)) << "the run of failures is broken";
  EXPECT_FALSE(readiness.Record(kBad));
  EXPECT_FALSE(readiness.Record(kBad));
  EXPECT_TRUE(readiness.Record(kBad));
  EXPECT_EQ(readiness.result(), ProbeResult::kFailure);

  ProbeState liveness(ProbeType::kLiveness, Spec(1, 2), start);
  EXPECT_EQ(liveness.result(), ProbeResult::kSuccess) << "alive until a probe says otherwise";
  EXPECT_FALSE(liveness.Record(kBad));
  EXPECT_TRUE(liveness.Record(kBad));
  EXPECT_EQ(liveness.result(), ProbeResult::kFailure);

  ProbeState startup(ProbeType::kStartup, Spec(1, 3), start);
  EXPECT_EQ(startup.result(), ProbeResult::kUnknown);
  EXPECT_FALSE(startup.done());
  EXPECT_TRUE(startup.Record(kOk));
  EXPECT_TRUE(startup.done());
}

// A listening socket on 127.0.0.1 and an ephemeral port.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd, 16);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~Listener() { close(fd); }
};

int ClosedPort() {
  Listener l;
  return l.port;  // closed when l goes
}

TEST(ProberTest, TcpSocketSucceedsWhenSomethingListensAndSaysConnectionRefusedOtherwise) {
  Listener l;
  ProbeSpec spec;
  spec.handler = ProbeSpec::Handler::kTcpSocket;
  spec.port = l.port;
  EXPECT_EQ(RunTcpProbe(spec, "127.0.0.1").result, ProbeResult::kSuccess);
  spec.port = ClosedPort();
  ProbeOutcome refused = RunTcpProbe(spec, "127.0.0.1");
  EXPECT_EQ(refused.result, ProbeResult::kFailure);
  EXPECT_EQ(refused.output, "dial tcp 127.0.0.1:" + std::to_string(spec.port) + ": connect: connection refused");
}

// Answers each connection with `response` (after reading the request), or never answers.
struct HttpServer {
  Listener listener;
  std::string response;
  std::atomic<bool> stop{false};
  std::string last_request;
  std::thread thread;
  explicit HttpServer(std::string r) : response(std::move(r)) {
    thread = std::thread([this] {
      while (!stop) {
        int c = accept(listener.fd, nullptr, nullptr);
        if (c < 0) return;
        char buf[4096];
        ssize_t n = read(c, buf, sizeof buf);
        if (n > 0) last_request.assign(buf, static_cast<size_t>(n));
        if (!response.empty()) (void)!write(c, response.data(), response.size());
        if (response.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1500));
        close(c);
      }
    });
  }
  ~HttpServer() {
    stop = true;
    shutdown(listener.fd, SHUT_RDWR);
    thread.join();
  }
};

TEST(ProberTest, HttpGetSucceedsBelow400AndReportsTheStatusCodeOrTheDialError) {
  ProbeSpec spec;
  spec.handler = ProbeSpec::Handler::kHttpGet;
  spec.path = "/healthz";
  spec.headers = {{"X-Probe", "yes"}};
  {
    HttpServer ok("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
    spec.port = ok.listener.port;
    EXPECT_EQ(RunHttpProbe(spec, "127.0.0.1").result, ProbeResult::kSuccess);
    EXPECT_TRUE(ok.last_request.starts_with("GET /healthz HTTP/1.1\r\n")) << ok.last_request;
    EXPECT_NE(ok.last_request.find("User-Agent: kube-probe/1.32\r\n"), std::string::npos) << ok.last_request;
    EXPECT_NE(ok.last_request.find("X-Probe: yes\r\n"), std::string::npos) << ok.last_request;
  }
  {
    HttpServer redirect("HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n");
    spec.port = redirect.listener.port;
    EXPECT_EQ(RunHttpProbe(spec, "127.0.0.1").result, ProbeResult::kSuccess);
  }
  {
    HttpServer failing("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 2\r\n\r\nno");
    spec.port = failing.listener.port;
    ProbeOutcome o = RunHttpProbe(spec, "127.0.0.1");
    EXPECT_EQ(o.result, ProbeResult::kFailure);
    EXPECT_EQ(o.output, "HTTP probe failed with statuscode: 500");
  }
  {
    HttpServer silent("");
    spec.port = silent.listener.port;
    ProbeOutcome o = RunHttpProbe(spec, "127.0.0.1");
    EXPECT_EQ(o.result, ProbeResult::kFailure);
    EXPECT_EQ(o.output, "Get \"http://127.0.0.1:" + std::to_string(spec.port) +
                            "/healthz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)");
  }
  spec.port = ClosedPort();
  ProbeOutcome refused = RunHttpProbe(spec, "127.0.0.1");
  EXPECT_EQ(refused.result, ProbeResult::kFailure);
  EXPECT_EQ(refused.output, "Get \"http://127.0.0.1:" + std::to_string(spec.port) + "/healthz\": dial tcp 127.0.0.1:" +
                                std::to_string(spec.port) + ": connect: connection refused");
}

}  // namespace
}  // namespace berth::agent
