#include "apiserver/pod_log.h"

#include <charconv>
#include <limits>
#include <utility>

#include "api/unstructured.h"
#include "apiserver/pod_exec.h"
#include "apiserver/remote_command.h"
#include "apiserver/status_response.h"
#include "core/logging.h"

namespace berth::apiserver {
namespace {

// A non-negative integer query parameter; nullopt when absent.
StatusOr<std::optional<int64_t>> IntParam(const QueryParams& q, std::string_view name, int64_t min) {
  if (!q.Has(name)) return std::optional<int64_t>();
  const std::string& text = q.Get(name);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min) {
    return BadRequestError("invalid value \"" + text + "\" for " + std::string(name) +
                           (min > 0 ? ": must be greater than 0" : ": must be a non-negative integer"));
  }
  return std::optional<int64_t>(v);
}

HttpResponse Text(std::string body) {
  HttpResponse r;
  r.content_type = "text/plain";
  r.body = std::move(body);
  return r;
}

}  // namespace

struct PodLogServer::Follow {
  std::string ns, name, uid, node, container;
  client::PodLogOptions options;     // without tail/limit
  client::PodLogCursor cursor;       // after what was sent
  std::optional<int64_t> remaining;  // limitBytes left
  std::shared_ptr<ResponseStream> stream;
  // Attach: the text goes out as frames of this remote-command stream (none: not sent, when only
  // stdin was asked for), and the end is a Success status on the error stream, as the kubelet
  // ends an attach whose container exited.
  bool attach = false;
  std::optional<uint8_t> attach_stream;
  // Nothing is read before this (an attach waits kExecClientSetupDelay for the client's streams).
  std::chrono::steady_clock::time_point not_before;

  void Send(std::string text) {
    if (text.empty() || (attach && !attach_stream)) return;
    stream->Write(attach ? EncodeFrame(*attach_stream, text) : std::move(text));
  }
  void End() {
    if (attach) stream->Write(EncodeFrame(kErrorStream, ExitStatusJson(0, {})));
    stream->Close();
  }
};

PodLogServer::PodLogServer(PodLookup pods, Clock& clock, std::chrono::milliseconds poll_interval)
    : pods_(std::move(pods)), clock_(clock), poll_interval_(poll_interval) {}

PodLogServer::~PodLogServer() { Stop(); }

void PodLogServer::RegisterSource(const std::string& node_name, client::PodLogSource* source) {
  std::lock_guard<std::mutex> lock(mu_);
  sources_[node_name] = source;
}

void PodLogServer::UnregisterSource(const std::string& node_name) {
  std::lock_guard<std::mutex> lock(mu_);
  sources_.erase(node_name);
}

client::PodLogSource* PodLogServer::Source(const std::string& node) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sources_.find(node);
  return it == sources_.end() ? nullptr : it->second;
}

HandlerResult PodLogServer::Serve(const std::string& ns, const std::string& name, const QueryParams& query) {
  auto tail = IntParam(query, "tailLines", 0);
  if (!tail.ok()) return StatusResponse(tail.status());
  auto limit = IntParam(query, "limitBytes", 1);
  if (!limit.ok()) return StatusResponse(limit.status());
  auto since_seconds = IntParam(query, "sinceSeconds", 1);
  if (!since_seconds.ok()) return StatusResponse(since_seconds.status());

  client::PodLogOptions options;
  options.container = query.Get("container");
  options.previous = query.GetBool("previous");
  options.timestamps = query.GetBool("timestamps");
  if (query.Has("sinceTime")) {
    Time t;
    if (!ParseRfc3339(query.Get("sinceTime"), &t)) {
      return StatusResponse(BadRequestError("invalid value \"" + query.Get("sinceTime") + "\" for sinceTime"));
    }
    options.since_time = t;
  } else if (since_seconds.value()) {
    options.since_time = clock_.Now() - std::chrono::seconds(*since_seconds.value());
  }

  auto pod = pods_(ns, name);
  if (!pod.ok()) return StatusResponse(pod.status(), StatusDetails{name, "", "pods", ""});
  const api::Object& p = *pod.value();
  const std::string node = api::NestedString(p, {"spec", "nodeName"});
  if (node.empty()) return StatusResponse(BadRequestError("pod " + name + " does not have a host assigned"));
  client::PodLogSource* source = Source(node);
  if (source == nullptr) {
    return StatusResponse(NodeNotServedError("log", node));
  }
  // The source applies tail and limit, reading the files from their end; the
  // cursor is where the log ended, where a follower continues.
  options.tail_lines = tail.value();
  options.limit_bytes = limit.value();
  auto first = source->ReadPodLogChunk(ns, name, options, nullptr, std::numeric_limits<size_t>::max());
  if (!first.ok()) return StatusResponse(first.status());
  std::string text = std::move(first->text);
  if (limit.value() && static_cast<int64_t>(text.size()) > *limit.value()) text.resize(*limit.value());

  if (!query.GetBool("follow")) return Text(std::move(text));

  auto f = std::make_shared<Follow>();
  f->ns = ns;
  f->name = name;
  f->uid = api::Uid(p);
  f->node = node;
  f->container = first->next.container;
  f->options = options;
  f->options.container = f->container;
  f->options.tail_lines.reset();
  f->options.limit_bytes.reset();
  f->cursor = std::move(first->next);  // names the run: the reads need no pod object
  if (limit.value()) f->remaining = *limit.value() - static_cast<int64_t>(text.size());

  StreamingResponse resp;
  resp.content_type = "text/plain";
  resp.start = [this, f, first = std::move(text)](std::shared_ptr<ResponseStream> stream) {
    if (!first.empty()) stream->Write(first);
    if (f->remaining && *f->remaining <= 0) {
      stream->Close();
      return;
    }
    f->stream = std::move(stream);
    AddFollow(f);
  };
  return resp;
}

void PodLogServer::AddFollow(const std::shared_ptr<Follow>& f) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) {
    f->stream->Close();
    return;
  }
  follows_.push_back(f);
  if (!follower_.joinable()) follower_ = std::thread([this] { FollowLoop(); });
  cv_.notify_all();
}

HandlerResult PodLogServer::ServeAttach(const HttpRequest& req, const std::string& ns, const std::string& name,
                                        const QueryParams& query) {
  const bool stdout = query.GetBool("stdout");
  // With a terminal, stderr is the terminal (the kubelet drops the stream).
  const bool stderr = query.GetBool("stderr") && !query.GetBool("tty");
  if (!query.GetBool("stdin") && !stdout && !query.GetBool("stderr")) {
    return StatusResponse(BadRequestError("you must specify at least 1 of stdin, stdout, stderr"));
  }
  auto pod = pods_(ns, name);
  if (!pod.ok()) return StatusResponse(pod.status(), StatusDetails{name, "", "pods", ""});
  const api::Object& p = *pod.value();
  const std::string node = api::NestedString(p, {"spec", "nodeName"});
  if (node.empty()) return StatusResponse(BadRequestError("pod " + name + " does not have a host assigned"));
  client::PodLogSource* source = Source(node);
  if (source == nullptr) {
    return StatusResponse(NodeNotServedError("attach", node));
  }
  // Where the container's output ends now: the attach sends what it writes from here on.
  client::PodLogOptions options;
  options.container = query.Get("container");
  options.tail_lines = 0;
  auto first = source->ReadPodLogChunk(ns, name, options, nullptr, 0);
  if (!first.ok()) return StatusResponse(first.status());
  const std::string container = first->next.container;
  bool running = false;
  for (const api::Object& cs : api::ArrayAt(api::ObjectAt(p, "status"), "containerStatuses")) {
    if (api::StringAt(cs, "name") == container) running = api::ObjectAt(cs, "state").contains("running");
  }
  // The kubelet attaches to running containers only (pkg/kubelet/kubelet_pods.go GetAttach
  // looks among the runtime's running pods).
  if (!running || first->run_ended) return StatusResponse(InternalError("container not found (\"" + container + "\")"));
  const std::string protocol =
      IsWebSocketUpgrade(req) ? NegotiateStreamProtocol(req.Header("Sec-WebSocket-Protocol")) : std::string();
  if (protocol.empty()) {
    if (IsWebSocketUpgrade(req)) {
      return StatusResponse(BadRequestError("requested protocol(s) are not supported: [" +
                                            std::string(req.Header("Sec-WebSocket-Protocol")) + "]; supports [" +
                                            kStreamProtocolV5 + " " + kStreamProtocolV4 + "]"));
    }
    return StatusResponse(BadRequestError("berth serves attach over WebSocket only (" +
                                          std::string(kStreamProtocolV5) + ", " + kStreamProtocolV4 +
                                          "), not SPDY; upgrade request required"));
  }

  auto f = std::make_shared<Follow>();
  f->ns = ns;
  f->name = name;
  f->uid = api::Uid(p);
  f->node = node;
  f->container = container;
  f->options.container = container;
  f->cursor = std::move(first->next);
  // The log holds both streams in order; they go out on stdout, or on stderr when only it was asked for.
  f->attach = true;
  if (stdout || stderr) f->attach_stream = stdout ? kStdoutStream : kStderrStream;
  WebSocketUpgrade upgrade;
  upgrade.protocol = protocol;
  upgrade.start = [this, f](std::shared_ptr<WebSocketSession> ws) {
    f->stream = ws;
    f->not_before = std::chrono::steady_clock::now() + kExecClientSetupDelay;
    AddFollow(f);
    // Input frames are read and dropped: berth connects no container stdin (as a runtime attaching to a
    // container created without `stdin: true`).
    return WebSocketReceiver([](std::string) { return true; });
  };
  return upgrade;
}

bool PodLogServer::Finished(const Follow& f) {
  auto pod = pods_(f.ns, f.name);
  if (!pod.ok()) return true;
  const api::Object& p = *pod.value();
  if (api::Uid(p) != f.uid) return true;
  const api::Object& status = api::ObjectAt(p, "status");
  const std::string phase = api::StringAt(status, "phase");
  if (phase == "Succeeded" || phase == "Failed") return true;
  if (api::StringAt(api::ObjectAt(p, "spec"), "restartPolicy", "Always") == "Always") return false;
  for (const api::Object& cs : api::ArrayAt(status, "containerStatuses")) {
    if (api::StringAt(cs, "name") != f.container) continue;
    return api::ObjectAt(cs, "state").contains("terminated");
  }
  return false;
}

void PodLogServer::FollowLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  bool more = false;  // a follower has more to read now: no wait
  while (!stopping_) {
    if (!more) cv_.wait_for(lock, poll_interval_, [this] { return stopping_; });
    if (stopping_) break;
    more = false;
    std::vector<std::shared_ptr<Follow>> follows = follows_;
    lock.unlock();
    std::vector<std::shared_ptr<Follow>> ended;
    for (const auto& f : follows) {
      if (f->stream->Done()) {
        ended.push_back(f);
        continue;
      }
      if (std::chrono::steady_clock::now() < f->not_before) continue;
      // Decide "finished" before reading, so output written just before the
      // container ended is still sent.
      const bool finished = Finished(*f);
      bool drained = true;  // nothing left to read of what was written
      bool run_ended = false;
      client::PodLogSource* source = Source(f->node);
      if (source != nullptr) {
        auto chunk = source->ReadPodLogChunk(f->ns, f->name, f->options, &f->cursor, kFollowChunkBytes);
        if (chunk.ok()) {
          std::string delta = std::move(chunk->text);
          f->cursor = std::move(chunk->next);
          drained = chunk->at_end;
          run_ended = chunk->run_ended;
          if (f->remaining && static_cast<int64_t>(delta.size()) >= *f->remaining) {
            delta.resize(*f->remaining);
            *f->remaining = 0;
          } else if (f->remaining) {
            *f->remaining -= static_cast<int64_t>(delta.size());
          }
          f->Send(std::move(delta));
        }
      }
      if (!drained) more = true;
      // The run the follower reads has ended (a restarted container is a new
      // run: `kubectl logs -f` ends with its container, as the kubelet's
      // follow does), or the pod can write no more and all was sent.
      if (run_ended || (finished && drained) || source == nullptr || (f->remaining && *f->remaining <= 0)) {
        f->End();
        ended.push_back(f);
      }
    }
    lock.lock();
    std::erase_if(follows_, [&](const std::shared_ptr<Follow>& f) {
      return std::find(ended.begin(), ended.end(), f) != ended.end();
    });
  }
  for (const auto& f : follows_) f->stream->Close();
  follows_.clear();
}

void PodLogServer::Stop() {
  std::thread follower;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && !follower_.joinable()) return;
    stopping_ = true;
    follower.swap(follower_);
  }
  cv_.notify_all();
  if (follower.joinable()) follower.join();
}

}  // namespace berth::apiserver
