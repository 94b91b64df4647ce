#include "agent/prober.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cerrno>
#include <chrono>
#include <poll.h>
#include <unistd.h>

#include "api/unstructured.h"

namespace berth::agent {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr char kUserAgent[] = "kube-probe/1.32";
// The kubelet reads at most this much of an HTTP probe's body (maxRespBodyLength).
constexpr size_t kMaxHttpBody = 10 * 1024;

// Each probe type's spec field and event name.
struct ProbeTypeNames {
  const char* field;
  const char* name;
};
ProbeTypeNames NamesOf(ProbeType type) {
  switch (type) {
    case ProbeType::kStartup:
      return {"startupProbe", "Startup"};
    case ProbeType::kReadiness:
      return {"readinessProbe", "Readiness"};
    case ProbeType::kLiveness:
      return {"livenessProbe", "Liveness"};
  }
  return {"", ""};
}

const char* FieldOf(ProbeType type) { return NamesOf(type).field; }

int64_t IntOr(const api::Object& probe, const char* field, int64_t fallback) {
  const api::Object& v = api::Field(probe, field);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

// A port: a number, or the name of one of the container's ports.
StatusOr<int> ResolvePort(const api::Object& container, const api::Object& port, const std::string& where) {
  if (port.is_number_integer()) {
    const int64_t p = port.get<int64_t>();
    if (p < 1 || p > 65535) return InvalidError(where + ".port: must be between 1 and 65535, inclusive");
    return static_cast<int>(p);
  }
  if (port.is_string()) {
    const std::string name = port.get<std::string>();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos && name.size() <= 5) {
      return ResolvePort(container, api::Object(std::stoll(name)), where);
    }
    for (const api::Object& p : api::ArrayAt(container, "ports")) {
      if (api::StringAt(p, "name") == name && api::Field(p, "containerPort").is_number_integer()) {
        return ResolvePort(container, api::Field(p, "containerPort"), where);
      }
    }
    return InvalidError(where + ".port: no container port named \"" + name + "\"");
  }
  return InvalidError(where + ".port: Required value");
}

std::string HostPort(const std::string& host, int port) {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// Go's net error text for a failed dial.
std::string DialError(const std::string& address, const boost::system::error_code& ec) {
  if (ec == asio::error::connection_refused) return "dial tcp " + address + ": connect: connection refused";
  if (ec == asio::error::timed_out || ec == asio::error::operation_aborted)
    return "dial tcp " + address + ": i/o timeout";
  std::string text = ec.message();
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return "dial tcp " + address + ": " + text;
}

}  // namespace

const char* ProbeTypeName(ProbeType type) { return NamesOf(type).name; }

StatusOr<std::optional<ProbeSpec>> ContainerProbe(const api::Object& container, ProbeType type) {
  const api::Object& probe = api::Field(container, FieldOf(type));
  if (!probe.is_object()) return std::optional<ProbeSpec>();
  const std::string where = FieldOf(type);
  ProbeSpec spec;
  auto handler = [&]() -> Status {
    if (const api::Object& exec = api::Field(probe, "exec"); exec.is_object()) {
      spec.handler = ProbeSpec::Handler::kExec;
      for (const api::Object& arg : api::ArrayAt(exec, "command")) {
        if (arg.is_string()) spec.command.push_back(arg.get<std::string>());
      }
      if (spec.command.empty()) return InvalidError(where + ".exec.command: Required value");
    } else if (const api::Object& get = api::Field(probe, "httpGet"); get.is_object()) {
      spec.handler = ProbeSpec::Handler::kHttpGet;
      spec.scheme = api::StringAt(get, "scheme").empty() ? "HTTP" : api::StringAt(get, "scheme");
      if (spec.scheme != "HTTP" && spec.scheme != "HTTPS") {
        return InvalidError(where + ".httpGet.scheme: Unsupported value: \"" + spec.scheme + "\"");
      }
      spec.host = api::StringAt(get, "host");
      if (!api::StringAt(get, "path").empty()) spec.path = api::StringAt(get, "path");
      if (spec.path.front() != '/') spec.path = "/" + spec.path;
      BERTH_ASSIGN_OR_RETURN(spec.port, ResolvePort(container, api::Field(get, "port"), where + ".httpGet"));
      for (const api::Object& h : api::ArrayAt(get, "httpHeaders")) {
        spec.headers.emplace_back(api::StringAt(h, "name"), api::StringAt(h, "value"));
      }
    } else if (const api::Object& sock = api::Field(probe, "tcpSocket"); sock.is_object()) {
      spec.handler = ProbeSpec::Handler::kTcpSocket;
      spec.host = api::StringAt(sock, "host");
      BERTH_ASSIGN_OR_RETURN(spec.port, ResolvePort(container, api::Field(sock, "port"), where + ".tcpSocket"));
    } else if (api::Field(probe, "grpc").is_object()) {
      return InvalidError(where + ".grpc: grpc probes are not supported by berth");
    } else {
      return InvalidError(where + ": must specify a handler type");
    }
    return Status::Ok();
  };
  // A probe that cannot run (a port out of range, a named port the container does not
  // have, no handler) errors at every period, as the kubelet's prober does: its results
  // are thrown away, so a readiness probe keeps the container not Ready (it was taken for
  // no probe, and the pod went Ready) and liveness never kills it.
  if (Status s = handler(); !s.ok()) {
    spec.handler = ProbeSpec::Handler::kInvalid;
    spec.error = s.message();
  }
  spec.initial_delay_seconds = std::max<int64_t>(0, IntOr(probe, "initialDelaySeconds", 0));
  spec.timeout_seconds = std::max<int64_t>(1, IntOr(probe, "timeoutSeconds", 1));
  spec.period_seconds = std::max<int64_t>(1, IntOr(probe, "periodSeconds", 10));
  spec.success_threshold = std::max<int64_t>(1, IntOr(probe, "successThreshold", 1));
  spec.failure_threshold = std::max<int64_t>(1, IntOr(probe, "failureThreshold", 3));
  if (const api::Object& g = api::Field(probe, "terminationGracePeriodSeconds"); g.is_number_integer()) {
    spec.termination_grace_period_seconds = std::max<int64_t>(0, g.get<int64_t>());
  }
  return std::optional<ProbeSpec>(std::move(spec));
}

ProbeOutcome RunTcpProbe(const ProbeSpec& spec, const std::string& pod_ip) {
  const std::string host = spec.host.empty() ? pod_ip : spec.host;
  const std::string address = HostPort(host, spec.port);
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  tcp::socket socket(ioc);
  boost::system::error_code result = asio::error::timed_out;
  resolver.async_resolve(
      host, std::to_string(spec.port), [&](boost::system::error_code ec, tcp::resolver::results_type r) {
        if (ec) {
          result = ec;
          return;
        }
        asio::async_connect(socket, r, [&](boost::system::error_code ec2, const tcp::endpoint&) { result = ec2; });
      });
  ioc.run_for(std::chrono::seconds(spec.timeout_seconds));
  if (!result) return {ProbeResult::kSuccess, ""};
  return {ProbeResult::kFailure, DialError(address, result)};
}

namespace {

// One GET over `stream` (a beast::tcp_stream or an ssl_stream over one), run on `ioc`.
template <typename Stream>
struct HttpExchange {
  Stream& stream;
  http::request<http::empty_body> request;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  boost::system::error_code error = asio::error::timed_out;
  bool connected = false;
  bool done = false;

  void Send() {
    http::async_write(stream, request, [this](boost::system::error_code ec, size_t) {
      if (ec) {
        error = ec;
        return;
      }
      parser.body_limit(kMaxHttpBody);
      http::async_read_header(stream, buffer, parser, [this](boost::system::error_code ec2, size_t) {
        error = ec2;
        done = !ec2;
      });
    });
  }
};

}  // namespace

ProbeOutcome RunHttpProbe(const ProbeSpec& spec, const std::string& pod_ip) {
  const std::string host = spec.host.empty() ? pod_ip : spec.host;
  const std::string address = HostPort(host, spec.port);
  const std::string url = (spec.scheme == "HTTPS" ? "https://" : "http://") + address + spec.path;
  asio::io_context ioc;
  tcp::resolver resolver(ioc);
  http::request<http::empty_body> request{http::verb::get, spec.path, 11};
  request.set(http::field::host, address);
  request.set(http::field::user_agent, kUserAgent);
  request.set(http::field::accept, "*/*");
  request.set(http::field::connection, "close");
  for (const auto& [name, value] : spec.headers) request.set(name, value);

  const bool tls = spec.scheme == "HTTPS";
  asio::ssl::context ssl(asio::ssl::context::tls_client);
  ssl.set_verify_mode(asio::ssl::verify_none);  // the kubelet's InsecureSkipVerify
  beast::ssl_stream<beast::tcp_stream> tls_stream(ioc, ssl);
  beast::tcp_stream plain_stream(ioc);
  beast::tcp_stream& tcp_layer = tls ? beast::get_lowest_layer(tls_stream) : plain_stream;
  HttpExchange<beast::tcp_stream> plain{plain_stream, request, {}, {}};
  HttpExchange<beast::ssl_stream<beast::tcp_stream>> secure{tls_stream, request, {}, {}};
  boost::system::error_code dial = asio::error::timed_out;
  resolver.async_resolve(
      host, std::to_string(spec.port), [&](boost::system::error_code ec, tcp::resolver::results_type r) {
        if (ec) {
          dial = ec;
          return;
        }
        tcp_layer.async_connect(r, [&](boost::system::error_code ec2, const tcp::endpoint&) {
          dial = ec2;
          if (ec2) return;
          if (!tls) {
            plain.connected = true;
            plain.Send();
            return;
          }
          tls_stream.async_handshake(asio::ssl::stream_base::client, [&](boost::system::error_code ec3) {
            if (ec3) {
              secure.error = ec3;
              return;
            }
            secure.connected = true;
            secure.Send();
          });
        });
      });
  ioc.run_for(std::chrono::seconds(spec.timeout_seconds));
  if (dial && dial != asio::error::timed_out)
    return {ProbeResult::kFailure, "Get \"" + url + "\": " + DialError(address, dial)};
  const bool done = tls ? secure.done : plain.done;
  if (!done) {
    const boost::system::error_code error = tls ? secure.error : plain.error;
    if (dial == asio::error::timed_out || error == asio::error::timed_out) {
      return {ProbeResult::kFailure,
              "Get \"" + url + "\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"};
    }
    return {ProbeResult::kFailure, "Get \"" + url + "\": " + error.message()};
  }
  const unsigned status = tls ? secure.parser.get().result_int() : plain.parser.get().result_int();
  if (status >= 200 && status < 400) return {ProbeResult::kSuccess, ""};
  return {ProbeResult::kFailure, "HTTP probe failed with statuscode: " + std::to_string(status)};
}

ProbeOutcome RunExecProbe(client::ExecProcess& process, const std::vector<std::string>& command, Duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string out;
  std::string err;
  std::vector<pollfd> fds;
  for (int fd : {process.stdout_fd(), process.stderr_fd()}) {
    if (fd >= 0) fds.push_back({fd, POLLIN, 0});
  }
  std::optional<int> exit_code;
  while (true) {
    const bool streams_open = std::any_of(fds.begin(), fds.end(), [](const pollfd& p) { return p.fd >= 0; });
    if (!streams_open) {
      exit_code = process.TryWait();
      if (exit_code) break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      process.Kill();
      process.Wait();
      std::string joined;
      for (const std::string& a : command) joined += (joined.empty() ? "" : " ") + a;
      return {ProbeResult::kFailure, "command \"" + joined + "\" timed out"};
    }
    if (!streams_open) {
      ::usleep(static_cast<useconds_t>(std::min<int64_t>(left.count(), 10) * 1000));
      continue;
    }
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(left.count(), 100))) < 0 && errno != EINTR) {
      break;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        std::string& into = i == 0 ? out : err;
        if (out.size() + err.size() < kMaxProbeOutput) {
          into.append(buf, std::min<size_t>(static_cast<size_t>(n), kMaxProbeOutput - out.size() - err.size()));
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        fds[i].fd = -1;
      }
    }
  }
  if (!exit_code) exit_code = process.Wait();
  if (*exit_code == 0) return {ProbeResult::kSuccess, out + err};
  return {ProbeResult::kFailure, out + err};
}

ProbeState::ProbeState(ProbeType type, ProbeSpec spec, Time started_at)
    : type_(type),
      spec_(std::move(spec)),
      due_(started_at + std::chrono::seconds(spec_.initial_delay_seconds)),
      result_(type == ProbeType::kReadiness  ? ProbeResult::kFailure
              : type == ProbeType::kLiveness ? ProbeResult::kSuccess
                                             : ProbeResult::kUnknown) {}

bool ProbeState::Record(const ProbeOutcome& outcome) {
  if (outcome.result == ProbeResult::kUnknown) return false;
  if (outcome.result == last_) {
    ++run_;
  } else {
    last_ = outcome.result;
    run_ = 1;
  }
  const int64_t needed = last_ == ProbeResult::kSuccess ? spec_.success_threshold : spec_.failure_threshold;
  if (run_ < needed || result_ == last_) return false;
  result_ = last_;
  if (type_ != ProbeType::kReadiness && result_ == ProbeResult::kFailure) run_ = 0;  // on hold until a new run
  return true;
}

ProbeRunner::ProbeRunner(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

ProbeRunner::~ProbeRunner() { Stop(); }

void ProbeRunner::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ProbeRunner::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
    tasks_.clear();
  }
  cv_.notify_all();
  for (std::thread& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void ProbeRunner::Work() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (stop_) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace berth::agent
