#include "apiserver/pod_portforward.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "api/unstructured.h"
#include "apiserver/spdy.h"
#include "apiserver/status_response.h"

namespace berth::apiserver {
namespace {

using Clock = std::chrono::steady_clock;

// A port in 1..65535, or 0.
uint16_t ParsePort(std::string_view text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > 65535) return 0;
  return static_cast<uint16_t>(value);
}

// Whether the comma-separated Sec-WebSocket-Protocol list offers `protocol`.
bool Offers(std::string_view list, std::string_view protocol) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == protocol) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

// One port-forward session: the SPDY session and the pod connections, on
// its own thread (Run). Receive runs on the connection's I/O thread and
// hands the bytes over under mu_, waking the thread through an eventfd;
// everything else is the session thread's.
class PodPortForwardServer::Session : public StreamSession {
 public:
  Session(PodPortForwardServer* server, std::string key, std::string ns, std::string name, std::string uid,
          client::ContainerExecutor* executor)
      : StreamSession(server->sessions_, std::move(key)),
        server_(server),
        ns_(std::move(ns)),
        name_(std::move(name)),
        uid_(std::move(uid)),
        executor_(executor),
        spdy_({.max_streams = kMaxPortForwardStreams}) {}
  ~Session() override {
    for (auto& [id, pair] : pairs_) {
      if (pair.fd >= 0) close(pair.fd);
    }
  }

 private:
  // One forwarded connection: the streams of one requestid.
  struct Pair {
    uint32_t error_stream = 0;
    uint32_t data_stream = 0;
    std::string port_header;
    int fd = -1;
    bool started = false;      // connected (or failed)
    bool client_fin = false;   // the client ended its data
    bool shut_write = false;   // the pod socket's write side is shut
    bool done = false;         // the pod side ended: both streams finished
    std::string to_pod;        // data received, not yet written
    Clock::time_point opened;
  };

  bool Receive(std::string message) override {
    std::lock_guard<std::mutex> lock(mu_);
    last_input_ = Clock::now();
    inbound_ += message;
    const bool paused = reading_paused_ = inbound_.size() > kMaxPortForwardInboundBytes;
    Wake();
    return !paused;
  }

  std::size_t BufferedToPods() const {
    std::size_t n = 0;
    for (const auto& [id, pair] : pairs_) n += pair.to_pod.size();
    return n;
  }

  // Writes `message` to the pair's error stream and ends both streams.
  void EndPair(Pair& pair, const std::string& message) {
    if (!message.empty() && pair.error_stream != 0) spdy_.SendData(pair.error_stream, message, false);
    if (pair.error_stream != 0) spdy_.SendData(pair.error_stream, "", true);
    if (pair.data_stream != 0) spdy_.SendData(pair.data_stream, "", true);
    if (pair.fd >= 0) close(pair.fd);
    pair.fd = -1;
    pair.started = pair.done = true;
    pair.to_pod.clear();
  }

  void StartPair(Pair& pair) {
    pair.started = true;
    const uint16_t port = ParsePort(pair.port_header);
    if (port == 0) {
      EndPair(pair, pair.port_header.empty()
                        ? "the \"port\" header is required"
                        : "\"port\" header \"" + pair.port_header + "\" is invalid: must be an integer in 1-65535");
      return;
    }
    auto fd = executor_->ConnectPort(ns_, name_, port);
    if (!fd.ok()) {
      // The kubelet's httpstream.go portForward wording around the runtime's dial error.
      EndPair(pair, "error forwarding port " + std::to_string(port) + " to pod " + ns_ + "/" + name_ + ", uid " + uid_ +
                        ": " + std::string(fd.status().message()));
      return;
    }
    pair.fd = *fd;
    const int fl = fcntl(pair.fd, F_GETFL);
    if (fl < 0 || fcntl(pair.fd, F_SETFL, fl | O_NONBLOCK) < 0) {
      EndPair(pair, "error forwarding port " + std::to_string(port) + ": " + std::strerror(errno));
    }
  }

  Pair* PairOfStream(uint32_t stream, std::string* request_id) {
    for (auto& [id, pair] : pairs_) {
      if (pair.error_stream == stream || pair.data_stream == stream) {
        if (request_id != nullptr) *request_id = id;
        return &pair;
      }
    }
    return nullptr;
  }

  void OnEvent(spdy::ServerSession::Event& ev) {
    using Kind = spdy::ServerSession::Event::Kind;
    switch (ev.kind) {
      case Kind::kOpened: {
        const std::string type(spdy::HeaderValue(ev.headers, "streamtype"));
        const std::string request_id(spdy::HeaderValue(ev.headers, "requestid"));
        if ((type != "error" && type != "data") || request_id.empty()) {
          // The kubelet rejects a stream without a valid streamType or requestID.
          spdy_.Reset(ev.stream, spdy::kProtocolError);
          return;
        }
        Pair& pair = pairs_[request_id];
        uint32_t& slot = type == "error" ? pair.error_stream : pair.data_stream;
        if (slot != 0 || pair.started) {
          spdy_.Reset(ev.stream, spdy::kProtocolError);  // a second stream of this type
          return;
        }
        if (pair.error_stream == 0 && pair.data_stream == 0) pair.opened = Clock::now();
        slot = ev.stream;
        if (type == "data") pair.port_header = std::string(spdy::HeaderValue(ev.headers, "port"));
        spdy_.Reply(ev.stream, {}, false);
        if (pair.error_stream != 0 && pair.data_stream != 0) StartPair(pair);
        return;
      }
      case Kind::kData: {
        Pair* pair = PairOfStream(ev.stream, nullptr);
        if (pair == nullptr || ev.stream != pair->data_stream || pair->done) {
          spdy_.Consumed(ev.stream, ev.data.size());
          return;
        }
        pair->to_pod += ev.data;
        return;
      }
      case Kind::kFinished: {
        Pair* pair = PairOfStream(ev.stream, nullptr);
        if (pair != nullptr && ev.stream == pair->data_stream) pair->client_fin = true;
        return;
      }
      case Kind::kReset: {
        std::string id;
        Pair* pair = PairOfStream(ev.stream, &id);
        if (pair == nullptr) return;
        if (ev.stream == pair->data_stream) {
          // kubectl resets the data stream once it has the pod's end: the forward is over.
          if (pair->fd >= 0) close(pair->fd);
          pair->fd = -1;
          pair->data_stream = 0;
          if (!pair->done && pair->error_stream != 0) spdy_.SendData(pair->error_stream, "", true);
          pair->done = true;
        } else {
          pair->error_stream = 0;
        }
        return;
      }
    }
  }

  // Writes buffered client data to the pod sockets; shuts a socket's write side once the
  // client's data has ended.
  void FeedPods() {
    for (auto& [id, pair] : pairs_) {
      if (pair.fd < 0) continue;
      while (!pair.to_pod.empty()) {
        const ssize_t n = send(pair.fd, pair.to_pod.data(), pair.to_pod.size(), MSG_NOSIGNAL);
        if (n > 0) {
          pair.to_pod.erase(0, n);
          spdy_.Consumed(pair.data_stream, n);
        } else if (n < 0 && errno == EINTR) {
          continue;
        } else {
          if (n < 0 && errno != EAGAIN) pair.to_pod.clear();  // the pod closed its side
          break;
        }
      }
      if (pair.client_fin && pair.to_pod.empty() && !pair.shut_write) {
        shutdown(pair.fd, SHUT_WR);
        pair.shut_write = true;
      }
    }
  }

  // Reads one chunk of the pair's socket into its data stream; at its end
  // finishes both streams.
  void Pump(Pair& pair) {
    std::string buf(kPortForwardReadChunkBytes, '\0');
    const ssize_t n = recv(pair.fd, buf.data(), buf.size(), 0);
    if (n > 0) {
      buf.resize(n);
      spdy_.SendData(pair.data_stream, buf, false);
      last_output_ = Clock::now();
      return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    EndPair(pair, "");
  }

  bool PodGone() {
    auto pod = server_->pods_(ns_, name_);
    return !pod.ok() || api::Uid(*pod.value()) != uid_;
  }

  void Run() override {
    last_output_ = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_input_ = last_output_;
    }
    Clock::time_point next_pod_check = Clock::now() + kPortForwardPodCheckPeriod;
    bool disconnected = false;
    while (true) {
      if (ws_->Done() || Stopping()) {
        disconnected = ws_->Done();
        break;
      }
      // Client bytes go into the SPDY session while the pods' buffers have room.
      std::string bytes;
      bool resume = false;
      Clock::time_point last_input;
      if (BufferedToPods() < kMaxPortForwardInboundBytes) {
        std::lock_guard<std::mutex> lock(mu_);
        bytes.swap(inbound_);
        if (reading_paused_) {
          reading_paused_ = false;
          resume = true;
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_input = last_input_;
      }
      if (!bytes.empty()) {
        std::vector<spdy::ServerSession::Event> events;
        const Status received = spdy_.Receive(bytes, &events);
        for (auto& ev : events) OnEvent(ev);
        if (!received.ok()) break;  // GOAWAY queued
        if (spdy_.goaway_received()) break;
      }
      if (resume) ws_->ResumeReading();
      FeedPods();
      // Pairs whose second stream did not come in time.
      const Clock::time_point now = Clock::now();
      for (auto& [id, pair] : pairs_) {
        if (!pair.started && now - pair.opened > kPortForwardStreamCreationTimeout) {
          if (pair.data_stream != 0) spdy_.Reset(pair.data_stream, spdy::kRefusedStream);
          pair.data_stream = 0;
          EndPair(pair, "timed out waiting for streams (request " + id + ")");
        }
      }
      std::erase_if(pairs_, [this](const auto& p) {
        const Pair& pair = p.second;
        return pair.done && !spdy_.IsOpen(pair.error_stream) && !spdy_.IsOpen(pair.data_stream);
      });
      if (spdy_.output_pending()) ws_->Write(spdy_.TakeOutput());
      if (now >= next_pod_check) {
        next_pod_check = now + kPortForwardPodCheckPeriod;
        if (PodGone()) break;
      }
      if (now - std::max(last_input, last_output_) > kPortForwardIdleTimeout) break;

      const bool room = ws_->queued_bytes() < kMaxPortForwardOutputQueueBytes;
      std::vector<pollfd> fds = {{wake_fd(), POLLIN, 0}};
      for (auto& [id, pair] : pairs_) {
        if (pair.fd < 0) continue;
        short events = room ? POLLIN : 0;
        if (!pair.to_pod.empty()) events |= POLLOUT;
        if (events != 0) fds.push_back({pair.fd, events, 0});
      }
      poll(fds.data(), fds.size(), room ? 250 : 20);
      DrainWake();
      for (const pollfd& p : fds) {
        if (p.fd == wake_fd() || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        for (auto& [id, pair] : pairs_) {
          if (pair.fd == p.fd) {
            Pump(pair);
            break;
          }
        }
      }
      if (spdy_.output_pending()) ws_->Write(spdy_.TakeOutput());
    }
    if (!disconnected) {
      spdy_.GoAway(spdy::kGoAwayOk);
      ws_->Write(spdy_.TakeOutput());
    }
    ws_->Close();
    for (auto& [id, pair] : pairs_) {
      if (pair.fd >= 0) close(pair.fd);
      pair.fd = -1;
    }
  }

  PodPortForwardServer* const server_;
  const std::string key_, ns_, name_, uid_;
  client::ContainerExecutor* const executor_;
  spdy::ServerSession spdy_;                 // the session thread's
  std::map<std::string, Pair> pairs_;        // by requestid; the session thread's
  Clock::time_point last_output_;  // the session thread's

  std::mutex mu_;
  std::string inbound_;              // guarded by mu_
  bool reading_paused_ = false;      // guarded by mu_
  Clock::time_point last_input_;     // guarded by mu_
};

PodPortForwardServer::PodPortForwardServer(
    PodLookup pods, std::function<client::ContainerExecutor*(const std::string& node)> executor_for)
    : pods_(std::move(pods)), executor_for_(std::move(executor_for)) {}

PodPortForwardServer::~PodPortForwardServer() { Stop(); }

std::size_t PodPortForwardServer::open_sessions() const { return sessions_.open(); }

void PodPortForwardServer::Stop() { sessions_.Stop(); }

HandlerResult PodPortForwardServer::Serve(const HttpRequest& req, const std::string& ns, const std::string& name,
                                          const QueryParams& query, bool unbounded) {
  // corev1.PodPortForwardOptions.ports: optional for SPDY (the ports are the streams' headers),
  // each in 1..65535 when given.
  const std::vector<std::string> ports = query.GetAll("ports");
  for (std::size_t i = 0; i < ports.size(); ++i) {
    if (ParsePort(ports[i]) == 0) {
      return StatusResponse(BadRequestError("ports[" + std::to_string(i) + "]: Invalid value: \"" + ports[i] +
                                            "\": must be an integer between 1 and 65535, inclusive"));
    }
  }
  auto pod = pods_(ns, name);
  if (!pod.ok()) return StatusResponse(pod.status(), StatusDetails{name, "", "pods", ""});
  const std::string node = api::NestedString(*pod.value(), {"spec", "nodeName"});
  if (node.empty()) return StatusResponse(BadRequestError("pod " + name + " does not have a host assigned"));
  client::ContainerExecutor* executor = executor_for_ ? executor_for_(node) : nullptr;
  if (executor == nullptr) {
    return StatusResponse(NodeNotServedError("port-forward", node));
  }
  if (!IsWebSocketUpgrade(req)) {
    if (!sessions_.HasRoom(ns + "/" + name, unbounded)) return sessions_.TooMany("port-forward");
    return StatusResponse(BadRequestError("berth serves port-forward over WebSocket only (" +
                                          std::string(kPortForwardTunnelProtocol) +
                                          "), not SPDY; upgrade request required"));
  }
  if (!Offers(req.Header("Sec-WebSocket-Protocol"), kPortForwardTunnelProtocol)) {
    // kube-apiserver's TunnelingHandler.
    return StatusResponse(BadRequestError("unable to upgrade: no tunneling spdy protocols provided"));
  }
  const std::string key = ns + "/" + name;
  if (!sessions_.Acquire(key, unbounded)) return sessions_.TooMany("port-forward");
  auto session = std::make_shared<Session>(this, key, ns, name, api::Uid(*pod.value()), executor);
  WebSocketUpgrade upgrade;
  upgrade.protocol = kPortForwardTunnelProtocol;
  upgrade.start = [session](std::shared_ptr<WebSocketSession> ws) { return session->Start(std::move(ws)); };
  return upgrade;
}

}  // namespace berth::apiserver
