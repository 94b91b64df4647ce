#include "apiserver/in_process_client.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

namespace berth::apiserver {

namespace {

using SteadyTime = std::chrono::steady_clock::time_point;

bool Success(int status) { return status >= 200 && status < 300; }

// The server side of one in-process streamed response: chunks go straight to
// the client's sink on the writer's thread.
class InProcessStream final : public ResponseStreamBase, public std::enable_shared_from_this<InProcessStream> {
 public:
  InProcessStream(std::shared_ptr<client::BodySink> sink, std::shared_ptr<std::atomic<size_t>> counter)
      : sink_(std::move(sink)), counter_(std::move(counter)) {
    (*counter_)++;
  }

  bool Write(std::string chunk) override {
    if (chunk.empty()) return !Done();  // as HTTP: an empty chunk carries nothing
    return Deliver([&] { return sink_->OnBytes(chunk); });
  }

  bool TakesWatchEvents() const override { return sink_->TakesWatchEvents(); }
  bool WriteWatchEvent(std::string_view type, std::shared_ptr<const api::Object> object) override {
    std::optional<client::WatchEventType> parsed = client::ParseWatchEventType(type);
    if (!parsed) return false;  // not a watch event type: the pump writes only those
    return Deliver([&] { return sink_->OnWatchEvent(*parsed, std::move(object)); });
  }

  void Close() override { Finish(); }

  // Ends the stream once: OnDone callbacks (the producer unsubscribes), then
  // the sink's end, after any delivery in progress.
  void Finish() {
    if (!End()) return;
    (*counter_)--;  // the server side is over
    std::lock_guard<std::mutex> deliver(deliver_mu_);
    sink_->OnEnd(Status::Ok());
  }

 private:
  // Runs one delivery to the sink (one at a time, never after the end was
  // delivered); a sink that refuses it ends the stream.
  template <typename Fn>
  bool Deliver(Fn&& deliver) {
    bool more;
    {
      std::lock_guard<std::mutex> lock(deliver_mu_);
      if (Done()) return false;
      more = deliver();
    }
    if (!more) {
      Finish();
      return false;
    }
    return true;
  }

  const std::shared_ptr<client::BodySink> sink_;
  const std::shared_ptr<std::atomic<size_t>> counter_;
  std::mutex deliver_mu_;
};

// The client's handle: cancelling ends the server-side response.
class InProcessBodyStream final : public client::BodyStream {
 public:
  explicit InProcessBodyStream(std::shared_ptr<InProcessStream> stream) : stream_(std::move(stream)) {}
  ~InProcessBodyStream() override { Cancel(); }
  void Cancel() override { stream_->Close(); }

 private:
  std::shared_ptr<InProcessStream> stream_;
};

// A body delivered whole before Stream returned: nothing left to cancel.
class EndedBodyStream final : public client::BodyStream {
 public:
  void Cancel() override {}
};

// StreamingResponse::timeout for every in-process stream of the process: one
// thread, started with the first timed stream, that ends streams whose
// deadline passed. Never destroyed (streams may be timed until exit).
class Deadlines {
 public:
  static Deadlines& Get() {
    static Deadlines* deadlines = new Deadlines();
    return *deadlines;
  }

  void Add(SteadyTime at, std::weak_ptr<InProcessStream> stream) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
      due_.emplace(at, std::move(stream));
    }
    cv_.notify_one();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      if (due_.empty()) {
        cv_.wait(l);
        continue;
      }
      SteadyTime next = due_.begin()->first;
      if (std::chrono::steady_clock::now() < next) {
        cv_.wait_until(l, next);
        continue;
      }
      std::shared_ptr<InProcessStream> stream = due_.begin()->second.lock();
      due_.erase(due_.begin());
      if (!stream) continue;
      l.unlock();
      stream->Finish();
      stream.reset();
      l.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<SteadyTime, std::weak_ptr<InProcessStream>> due_;
  std::thread thread_;
};

// Collects a streamed body whole (Do of a streamed answer).
class CollectingSink final : public client::BodySink {
 public:
  bool OnBytes(std::string_view bytes) override {
    std::lock_guard<std::mutex> l(mu_);
    body_.append(bytes);
    return true;
  }
  void OnEnd(Status) override {
    std::lock_guard<std::mutex> l(mu_);
    ended_ = true;
    cv_.notify_all();
  }
  std::string Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return ended_; });
    return std::move(body_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::string body_;
  bool ended_ = false;
};

// Starts a streamed response into `sink`; the returned handle ends it.
std::shared_ptr<InProcessStream> Start(StreamingResponse& response, std::shared_ptr<client::BodySink> sink,
                                       const std::shared_ptr<std::atomic<size_t>>& counter) {
  auto stream = std::make_shared<InProcessStream>(std::move(sink), counter);
  if (response.timeout.count() > 0) {
    Deadlines::Get().Add(std::chrono::steady_clock::now() + response.timeout, stream);
  }
  if (response.start) {
    response.start(stream);
  } else {
    stream->Close();
  }
  return stream;
}

}  // namespace

InProcessTransport::InProcessTransport(ApiServer& server, InProcessClientOptions options)
    : server_(server), options_(std::move(options)), open_(std::make_shared<std::atomic<size_t>>(0)) {}

InProcessTransport::~InProcessTransport() = default;

size_t InProcessTransport::open_streams() const { return open_->load(); }

HttpRequest InProcessTransport::ToHttp(const client::RawRequest& request) const {
  HttpRequest out;
  out.method = request.method;
  out.target = request.target;
  out.headers = client::RequestHeaders(request);
  if (std::none_of(out.headers.begin(), out.headers.end(),
                   [](const auto& h) { return EqualsIgnoringCase(h.first, "User-Agent"); })) {
    out.headers.emplace_back("User-Agent", options_.user_agent);
  }
  out.body = request.body;
  out.object = request.object;
  out.remote = options_.remote;
  out.in_process = true;
  out.take_objects = request.take_objects;
  return out;
}

StatusOr<client::RawResponse> InProcessTransport::Do(const client::RawRequest& request) {
  ImmediateResult result = AwaitResult(server_.Handle(ToHttp(request)));
  client::RawResponse out;
  if (auto* whole = std::get_if<HttpResponse>(&result)) {
    out.status = whole->status;
    out.content_type = std::move(whole->content_type);
    out.body = std::move(whole->body);
    out.objects = std::move(whole->objects);
    return out;
  }
  auto& streamed = std::get<StreamingResponse>(result);
  out.status = streamed.status;
  out.content_type = streamed.content_type;
  auto sink = std::make_shared<CollectingSink>();
  Start(streamed, sink, open_);
  out.body = sink->Wait();
  return out;
}

StatusOr<client::StreamStart> InProcessTransport::Stream(const client::RawRequest& request,
                                                         std::shared_ptr<client::BodySink> sink) {
  ImmediateResult result = AwaitResult(server_.Handle(ToHttp(request)));
  client::StreamStart out;
  if (auto* whole = std::get_if<HttpResponse>(&result)) {
    out.response.status = whole->status;
    out.response.content_type = std::move(whole->content_type);
    if (!Success(whole->status)) {
      out.response.body = std::move(whole->body);
      return out;
    }
    // A whole 2xx answer to a streamed request: its body is the stream.
    if (!whole->body.empty()) sink->OnBytes(whole->body);
    sink->OnEnd(Status::Ok());
    out.stream = std::make_unique<EndedBodyStream>();
    return out;
  }
  auto& streamed = std::get<StreamingResponse>(result);
  out.response.status = streamed.status;
  out.response.content_type = streamed.content_type;
  if (!Success(streamed.status)) {
    // An error answer is read whole, as over HTTP.
    auto collector = std::make_shared<CollectingSink>();
    Start(streamed, collector, open_);
    out.response.body = collector->Wait();
    return out;
  }
  out.stream = std::make_unique<InProcessBodyStream>(Start(streamed, std::move(sink), open_));
  return out;
}

std::unique_ptr<client::RestClient> NewInProcessClient(ApiServer& server, InProcessClientOptions options) {
  return std::make_unique<client::RestClient>(std::make_unique<InProcessTransport>(server, std::move(options)));
}

}  // namespace berth::apiserver
