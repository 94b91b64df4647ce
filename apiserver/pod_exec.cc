#include "apiserver/pod_exec.h"

#include <cerrno>
#include <optional>
#include <poll.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "api/unstructured.h"
#include "apiserver/remote_command.h"
#include "apiserver/status_response.h"

namespace berth::apiserver {
// One exec session: the bridge between the command's descriptors and the
// WebSocket, on its own thread (Run). Receive runs on the connection's I/O
// thread and hands input over under mu_, waking the thread through an
// eventfd.
class PodExecServer::Session : public StreamSession {
 public:
  Session(PodExecServer* server, std::string key, std::unique_ptr<client::ExecProcess> process,
          client::ExecOptions options, bool stdout, bool stderr, bool v5)
      : StreamSession(server->sessions_, std::move(key)),
        process_(std::move(process)),
        options_(std::move(options)),
        stdout_(stdout),
        stderr_(stderr),
        v5_(v5) {}
  ~Session() override {
    process_.reset();  // kills the group if it still runs
  }

 private:
  bool Receive(std::string message) override {
    StatusOr<Frame> frame = DecodeFrame(message);
    if (!frame.ok()) return true;
    std::lock_guard<std::mutex> lock(mu_);
    last_input_ = std::chrono::steady_clock::now();
    bool paused = false;
    if (frame->stream == kStdinStream && options_.stdin && !stdin_eof_) {
      stdin_buffer_ += frame->data;
      paused = reading_paused_ = stdin_buffer_.size() > kMaxExecStdinBufferBytes;
    } else if (frame->stream == kResizeStream) {
      if (auto size = DecodeTerminalSize(frame->data); size.ok()) resize_ = *size;
    } else if (frame->stream == kCloseStream && v5_ && !frame->data.empty() && frame->data[0] == kStdinStream) {
      stdin_eof_ = true;
    }
    Wake();
    return !paused;
  }

  // Writes buffered stdin to the process; applies resize and end of input.
  void FeedInput(int in) {
    std::optional<TerminalSize> resize;
    bool resume = false, eof = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      resize = std::exchange(resize_, std::nullopt);
      if (in >= 0 && !stdin_closed_) {
        while (!stdin_buffer_.empty()) {
          const ssize_t n = write(in, stdin_buffer_.data(), stdin_buffer_.size());
          if (n > 0) {
            stdin_buffer_.erase(0, n);
          } else if (n < 0 && errno == EINTR) {
            continue;
          } else {
            if (n < 0 && errno != EAGAIN) stdin_buffer_.clear();  // the reader is gone (EPIPE)
            break;
          }
        }
      } else {
        stdin_buffer_.clear();
      }
      if (reading_paused_ && stdin_buffer_.size() <= kMaxExecStdinBufferBytes / 2) {
        reading_paused_ = false;
        resume = true;
      }
      eof = stdin_eof_ && stdin_buffer_.empty() && !stdin_closed_;
      if (eof) stdin_closed_ = true;
    }
    if (resize) process_->Resize(resize->width, resize->height);
    if (eof && in >= 0) process_->CloseStdin();
    if (resume) ws_->ResumeReading();
  }

  bool PendingInput() {
    std::lock_guard<std::mutex> lock(mu_);
    return !stdin_buffer_.empty() && !stdin_closed_;
  }

  // Reads one chunk of `fd` and sends it on `stream`; false at its end.
  bool Pump(int fd, uint8_t stream, bool send) {
    std::string buf(kExecReadChunkBytes, '\0');
    const ssize_t n = read(fd, buf.data(), buf.size());
    if (n > 0) {
      buf.resize(n);
      if (send) ws_->Write(EncodeFrame(stream, buf));
      last_output_ = std::chrono::steady_clock::now();
      return true;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    return false;  // EOF; EIO on a pty master whose slave side is closed
  }

  void Run() override {
    // Output waits for the client to have made its streams (kExecClientSetupDelay); it stays in
    // the pipes meanwhile, and input is forwarded as soon as it comes.
    std::this_thread::sleep_for(kExecClientSetupDelay);
    const int out = process_->stdout_fd(), err = process_->stderr_fd(), in = process_->stdin_fd();
    bool out_open = out >= 0, err_open = err >= 0, disconnected = false, idle = false;
    last_output_ = std::chrono::steady_clock::now();
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_input_ = last_output_;
    }
    while (out_open || err_open) {
      if (ws_->Done() || Stopping()) {
        disconnected = true;
        break;
      }
      const bool room = ws_->queued_bytes() < kMaxExecOutputQueueBytes;
      std::vector<pollfd> fds = {{wake_fd(), POLLIN, 0}};
      if (out_open && room) fds.push_back({out, POLLIN, 0});
      if (err_open && room) fds.push_back({err, POLLIN, 0});
      if (in >= 0 && in != out && PendingInput()) fds.push_back({in, POLLOUT, 0});
      // Without room the queue is looked at again shortly; otherwise the idle
      // deadline is checked once a second.
      poll(fds.data(), fds.size(), room ? 1000 : 20);
      DrainWake();
      FeedInput(in);
      for (const pollfd& p : fds) {
        if (p.fd == wake_fd() || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        if (p.fd == out) out_open = Pump(out, kStdoutStream, stdout_);
        if (p.fd == err) err_open = Pump(err, kStderrStream, stderr_);
      }
      // The command exited: its group is killed (agent/exec.h), so the
      // output ends once what it wrote has been read.
      (void)process_->TryWait();
      std::chrono::steady_clock::time_point last_input;
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_input = last_input_;
      }
      if (std::chrono::steady_clock::now() - std::max(last_input, last_output_) > kExecIdleTimeout) {
        idle = true;
        break;
      }
    }
    if (disconnected || idle) process_->Kill();
    const int code = process_->Wait();
    if (disconnected) ws_->Close();
    if (!disconnected) {
      ws_->Write(EncodeFrame(kErrorStream,
                             idle ? ErrorStatusJson(TimeoutError("exec session idle for " +
                                                                 std::to_string(kExecIdleTimeout.count() / 1000) +
                                                                 "s: the command was killed"))
                                  : ExitStatusJson(code, options_.command)));
      ws_->Close();
    }
    process_.reset();
  }

  std::unique_ptr<client::ExecProcess> process_;
  const client::ExecOptions options_;
  const bool stdout_, stderr_, v5_;
  std::chrono::steady_clock::time_point last_output_;  // the session thread's

  std::mutex mu_;
  std::string stdin_buffer_;                          // guarded by mu_
  bool stdin_eof_ = false;                            // guarded by mu_
  bool stdin_closed_ = false;                         // guarded by mu_
  bool reading_paused_ = false;                       // guarded by mu_
  std::optional<TerminalSize> resize_;                // guarded by mu_
  std::chrono::steady_clock::time_point last_input_;  // guarded by mu_
};

PodExecServer::PodExecServer(PodLookup pods) : pods_(std::move(pods)) {}

PodExecServer::~PodExecServer() { Stop(); }

void PodExecServer::RegisterExecutor(const std::string& node_name, client::ContainerExecutor* executor) {
  std::lock_guard<std::mutex> lock(mu_);
  executors_[node_name] = executor;
}

void PodExecServer::UnregisterExecutor(const std::string& node_name) {
  std::lock_guard<std::mutex> lock(mu_);
  executors_.erase(node_name);
}

client::ContainerExecutor* PodExecServer::ExecutorFor(const std::string& node_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = executors_.find(node_name);
  return it == executors_.end() ? nullptr : it->second;
}

std::size_t PodExecServer::open_sessions() const { return sessions_.open(); }

void PodExecServer::Stop() { sessions_.Stop(); }

HandlerResult PodExecServer::Serve(const HttpRequest& req, const std::string& ns, const std::string& name,
                                   const QueryParams& query, bool unbounded) {
  client::ExecOptions options;
  options.command = query.GetAll("command");
  options.container = query.Get("container");
  options.stdin = query.GetBool("stdin");
  options.tty = query.GetBool("tty");
  const bool stdout = query.GetBool("stdout");
  // With a terminal, stderr is the terminal (the kubelet drops the stream).
  const bool stderr = query.GetBool("stderr") && !options.tty;
  if (!options.stdin && !stdout && !query.GetBool("stderr")) {
    return StatusResponse(BadRequestError("you must specify at least 1 of stdin, stdout, stderr"));
  }
  if (options.command.empty()) return StatusResponse(BadRequestError("you must specify at least 1 command"));

  auto pod = pods_(ns, name);
  if (!pod.ok()) return StatusResponse(pod.status(), StatusDetails{name, "", "pods", ""});
  const std::string node = api::NestedString(*pod.value(), {"spec", "nodeName"});
  if (node.empty()) return StatusResponse(BadRequestError("pod " + name + " does not have a host assigned"));
  client::ContainerExecutor* executor = ExecutorFor(node);
  if (executor == nullptr) {
    return StatusResponse(NodeNotServedError("exec", node));
  }

  std::string protocol;
  if (IsWebSocketUpgrade(req)) {
    protocol = NegotiateStreamProtocol(req.Header("Sec-WebSocket-Protocol"));
  }
  // The pod's and the container's errors are HTTP answers (what kube-apiserver
  // and the kubelet answer before upgrading); a request berth will not
  // upgrade gets them first, then why it is not upgraded.
  client::ExecOptions check = options;
  check.validate_only = true;
  auto checked = executor->StartExec(ns, name, check);
  if (!checked.ok()) return StatusResponse(checked.status());
  if (protocol.empty()) {
    if (IsWebSocketUpgrade(req)) {
      return StatusResponse(BadRequestError("requested protocol(s) are not supported: [" +
                                            std::string(req.Header("Sec-WebSocket-Protocol")) + "]; supports [" +
                                            kStreamProtocolV5 + " " + kStreamProtocolV4 + "]"));
    }
    if (!sessions_.HasRoom(ns + "/" + name, unbounded)) return sessions_.TooMany("exec");
    return StatusResponse(BadRequestError("berth serves exec over WebSocket only (" + std::string(kStreamProtocolV5) +
                                          ", " + kStreamProtocolV4 + "), not SPDY; upgrade request required"));
  }

  const std::string key = ns + "/" + name;
  if (!sessions_.Acquire(key, unbounded)) return sessions_.TooMany("exec");
  auto process = executor->StartExec(ns, name, options);
  if (!process.ok() || *process == nullptr) {
    sessions_.Release(key);
    // The command could not start (executable not found): as the kubelet,
    // the session opens and the error stream says why.
    const std::string status = ErrorStatusJson(process.ok() ? InternalError("no process") : process.status());
    WebSocketUpgrade failed;
    failed.protocol = protocol;
    failed.start = [status](std::shared_ptr<WebSocketSession> ws) {
      ws->Write(EncodeFrame(kErrorStream, status));
      ws->Close();
      return WebSocketReceiver();
    };
    return failed;
  }
  auto session = std::make_shared<Session>(this, key, std::move(process).value(), options, stdout, stderr,
                                           protocol == kStreamProtocolV5);
  WebSocketUpgrade upgrade;
  upgrade.protocol = protocol;
  upgrade.start = [session](std::shared_ptr<WebSocketSession> ws) { return session->Start(std::move(ws)); };
  return upgrade;
}

}  // namespace berth::apiserver
